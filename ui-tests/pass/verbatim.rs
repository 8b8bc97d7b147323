// Every shape `#[verbatim]` takes compiles, is `Verbatim`, and serializes as serde's derive does.
use std::collections::BTreeMap;

use toolprism::prelude::*;
use toolprism::value::{NotNull, Verbatim};

#[verbatim]
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Page<T> {
    items: Vec<T>,
    next_cursor: Option<String>,
    #[serde(rename = "count", alias = "n", default)]
    total: u64,
}

#[verbatim]
#[derive(JsonSchema)]
struct Id(u64);

#[verbatim]
#[derive(JsonSchema)]
struct Pair(String, f64);

// A newtype of something that can be `null`: `Verbatim`, not `NotNull`.
#[verbatim]
#[derive(JsonSchema)]
struct MaybeId(Option<u64>);

#[verbatim]
#[derive(JsonSchema)]
struct Nothing;

#[verbatim]
#[derive(JsonSchema, Clone, Debug, PartialEq)]
#[serde(tag = "kind", content = "data")]
enum Event {
    Started,
    Progress { done: u32, of: u32 },
    Named(String),
}

#[verbatim]
#[derive(JsonSchema)]
struct Everything {
    id: Option<Id>,
    pair: Pair,
    nothing: Nothing,
    events: Vec<Event>,
    by_name: BTreeMap<String, (u8, char)>,
    boxed: Box<Option<i32>>,
}

fn is_verbatim<T: Verbatim>() {}
fn is_not_null<T: NotNull>() {}

/// Lists events.
#[tool(render = render_events)]
fn events(#[arg] count: u32) -> Page<Event> {
    Page { items: vec![Event::Progress { done: count, of: 10 }], next_cursor: None, total: 1 }
}

fn render_events(_args: &EventsArgs, page: &Page<Event>) -> String {
    format!("{} events", page.items.len())
}

fn main() {
    is_verbatim::<Page<Event>>();
    is_not_null::<Page<Id>>();
    is_not_null::<Id>();
    is_verbatim::<Option<Id>>();
    is_verbatim::<Nothing>();
    is_verbatim::<MaybeId>();
    is_verbatim::<Everything>();
    let json = serde_json::to_value(Event::Progress { done: 1, of: 2 }).unwrap();
    assert_eq!(json, serde_json::json!({"kind": "Progress", "data": {"done": 1, "of": 2}}));
    let _ = Registry::builder().tool(Events).build().unwrap();
}
