// Every serde option that would make the JSON less than the value is refused, at once, each
// with its reason.
use toolprism::prelude::*;

#[verbatim]
#[serde(untagged)]
enum Either {
    #[serde(skip)]
    Left(u32),
    #[serde(other)]
    Right,
}

#[verbatim]
#[derive(Serialize)]
struct Secretive<'a> {
    #[serde(skip_serializing)]
    token: String,
    #[serde(with = "renamed")]
    moved: u32,
    #[serde(flatten)]
    rest: std::collections::BTreeMap<String, u32>,
    #[serde(rename(serialize = "a", deserialize = "b"))]
    split: u32,
    #[cfg_attr(all(), serde(skip))]
    hidden: u32,
    borrowed: &'a str,
}

fn main() {}
