// A field whose type is not `Verbatim` is reported on that type; an `Option` of something that
// can be `null` (itself or a newtype of one) is reported as such.
use toolprism::prelude::*;

#[derive(Serialize, Deserialize)]
struct Plain {
    text: String,
}

#[verbatim]
struct MaybeId(Option<u32>);

#[verbatim]
struct Holder {
    plain: Plain,
    maybe: Option<Option<u32>>,
    maybe_id: Option<MaybeId>,
}

fn main() {}
