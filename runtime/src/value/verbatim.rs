//! Value types whose JSON is all of them: `render` and `presentation_meta` can borrow the value
//! a body returned instead of deserializing it back from its JSON, and still see nothing else.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::hash::{BuildHasher, Hash};

use serde::Serialize;
use serde::de::DeserializeOwned;

/// A value type that deserializes from its own JSON into a value equal to it, field for field:
/// its `Serialize` skips nothing and changes nothing, its `Deserialize` reads back exactly that.
///
/// `render` and `presentation_meta` must see only what programs get — the value's JSON — so
/// the pipeline normally deserializes the frozen value back into the type for them. For a
/// `Verbatim` type that copy would equal the value the body returned, so they borrow that one
/// instead: the same guarantee, without deserializing and dropping a second copy (for a
/// 50-line read result, a tenth of a call).
///
/// Put [`#[verbatim]`](crate::verbatim) on a struct or an enum to implement it: the attribute
/// derives `Serialize` and `Deserialize` itself (so they are serde's, not a hand-written pair
/// that could disagree), refuses every serde attribute that skips, converts or reshapes a field,
/// and requires every field's type to be `Verbatim` too. The standard types that round-trip
/// through JSON exactly implement it: booleans, integers, floats, `char`, `String`, `Box`,
/// `Vec`, `VecDeque`, sets, maps with string keys, tuples of up to four, and `Option<T>` for a
/// `T` that is never `null` ([`NotNull`]). Implementing it by hand asserts all of this for the
/// type; nothing checks it then.
///
/// ```
/// use toolprism::prelude::*;
///
/// #[verbatim]
/// #[derive(JsonSchema)]
/// struct Line { number: u32, text: String }
///
/// fn is_verbatim<T: toolprism::value::Verbatim>() {}
/// is_verbatim::<Vec<Line>>();
/// is_verbatim::<Option<Line>>();
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not known to be all of its JSON",
    label = "not `Verbatim`",
    note = "put `#[toolprism::verbatim]` on the type (in place of deriving `Serialize` and `Deserialize`)"
)]
pub trait Verbatim: Serialize + DeserializeOwned + Send + 'static {}

/// A [`Verbatim`] type whose JSON is never `null`, so that `Option` of it tells `Some` from
/// `None` after a round trip (`Some(None)` and `Some(())` serialize as `null`, which reads back
/// as `None`). `#[verbatim]` implements it for structs with fields and for enums.
#[diagnostic::on_unimplemented(
    message = "`{Self}` can serialize as `null`: `Option<{Self}>` would read `Some` of it back as `None`",
    label = "can be `null`"
)]
pub trait NotNull: Verbatim {}

macro_rules! verbatim_not_null {
    ($($ty:ty),* $(,)?) => {
        $(impl Verbatim for $ty {} impl NotNull for $ty {})*
    };
}

verbatim_not_null!(
    bool,
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    f32,
    f64,
    char,
    String,
    Box<str>,
);

impl Verbatim for () {}

impl<T: Verbatim + NotNull> Verbatim for Option<T> {}

impl<T: Verbatim> Verbatim for Box<T> {}
impl<T: NotNull> NotNull for Box<T> {}

impl<T: Verbatim> Verbatim for Vec<T> {}
impl<T: Verbatim> NotNull for Vec<T> {}

impl<T: Verbatim> Verbatim for VecDeque<T> {}
impl<T: Verbatim> NotNull for VecDeque<T> {}

impl<T: Verbatim + Ord> Verbatim for BTreeSet<T> {}
impl<T: Verbatim + Ord> NotNull for BTreeSet<T> {}

impl<T: Verbatim + Eq + Hash, S: BuildHasher + Default + Send + 'static> Verbatim
    for HashSet<T, S>
{
}
impl<T: Verbatim + Eq + Hash, S: BuildHasher + Default + Send + 'static> NotNull for HashSet<T, S> {}

impl<V: Verbatim> Verbatim for BTreeMap<String, V> {}
impl<V: Verbatim> NotNull for BTreeMap<String, V> {}

impl<V: Verbatim, S: BuildHasher + Default + Send + 'static> Verbatim for HashMap<String, V, S> {}
impl<V: Verbatim, S: BuildHasher + Default + Send + 'static> NotNull for HashMap<String, V, S> {}

macro_rules! verbatim_tuples {
    ($(($($name:ident),+)),* $(,)?) => {
        $(
            impl<$($name: Verbatim),+> Verbatim for ($($name,)+) {}
            impl<$($name: Verbatim),+> NotNull for ($($name,)+) {}
        )*
    };
}

verbatim_tuples!((A, B), (A, B, C), (A, B, C, D));
