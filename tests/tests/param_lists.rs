//! The struct of a parameter list, and a struct written with `#[tool_args]`, are read and
//! described by the runtime's shared code, not by a derive: each must read every input, and
//! describe itself, exactly as the derive it stands for (`#[derive(Deserialize, JsonSchema)]`
//! with `#[serde(deny_unknown_fields)]`), doc comments and all.

use proptest::prelude::*;
use serde_json::{Value, json};
use toolprism::prelude::*;

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
pub struct Place {
    x: i32,
}

/// Picks.
#[tool]
pub fn pick(
    #[arg(description = "# The count\n\nHow many.")] count: u32,
    #[arg(description = "A name.")] name: Option<String>,
    r#type: Vec<bool>,
    place: Option<Place>,
) -> u32 {
    let _ = (name, r#type, place);
    count
}

/// One parameter: a tuple of one.
#[tool]
pub fn single(#[arg] only: i64) -> i64 {
    only
}

/// No parameter: an empty struct.
#[tool]
pub fn nothing() -> u8 {
    0
}

// A tool declared by another crate's `macro_rules!`, its types named through `$crate`.
toolprism_tests::text_tool!(shout);

/// Thirteen parameters: more than the shared code's tuples, so the struct is derived.
#[tool]
#[allow(clippy::too_many_arguments, clippy::many_single_char_names)]
pub fn many(
    a: u8,
    b: u8,
    c: u8,
    d: u8,
    e: u8,
    f: u8,
    g: u8,
    h: u8,
    i: u8,
    j: u8,
    k: u8,
    l: u8,
    #[serde(default)] m: u8,
) -> u8 {
    a + b + c + d + e + f + g + h + i + j + k + l + m
}

mod derived {
    use super::Place;
    use toolprism::prelude::*;

    /// The arguments of the `pick` tool, one field per parameter.
    #[derive(Debug, PartialEq, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub(crate) struct PickArgs {
        #[doc = "# The count\n\nHow many."]
        pub(crate) count: u32,
        #[doc = "A name."]
        pub(crate) name: Option<String>,
        pub(crate) r#type: Vec<bool>,
        pub(crate) place: Option<Place>,
    }

    /// The arguments of the `nothing` tool, one field per parameter.
    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub(crate) struct NothingArgs {}

    /// The arguments of the `single` tool, one field per parameter.
    #[derive(Debug, PartialEq, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub(crate) struct SingleArgs {
        pub(crate) only: i64,
    }
}

type Fields = (u32, Option<String>, Vec<bool>, Option<Place>);

fn shared(args: PickArgs) -> Fields {
    (args.count, args.name, args.r#type, args.place)
}

fn derived(args: derived::PickArgs) -> Fields {
    (args.count, args.name, args.r#type, args.place)
}

/// Both structs read from `text`, from JSON text and from a `Value`: the fields, or the error's
/// message.
fn read_both(text: &str) -> [(Result<Fields, String>, Result<Fields, String>); 2] {
    let from_text = (
        serde_json::from_str::<PickArgs>(text)
            .map(shared)
            .map_err(|error| error.to_string()),
        serde_json::from_str::<derived::PickArgs>(text)
            .map(derived)
            .map_err(|error| error.to_string()),
    );
    let value: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    let from_value = (
        serde_json::from_value::<PickArgs>(value.clone())
            .map(shared)
            .map_err(|error| error.to_string()),
        serde_json::from_value::<derived::PickArgs>(value)
            .map(derived)
            .map_err(|error| error.to_string()),
    );
    [from_text, from_value]
}

#[test]
fn the_schemas_are_the_derives() {
    assert_eq!(
        serde_json::to_value(schemars::schema_for!(PickArgs)).unwrap(),
        serde_json::to_value(schemars::schema_for!(derived::PickArgs)).unwrap()
    );
    assert_eq!(
        serde_json::to_value(schemars::schema_for!(SingleArgs)).unwrap(),
        serde_json::to_value(schemars::schema_for!(derived::SingleArgs)).unwrap()
    );
    assert_eq!(
        serde_json::to_value(schemars::schema_for!(NothingArgs)).unwrap(),
        serde_json::to_value(schemars::schema_for!(derived::NothingArgs)).unwrap()
    );
    let schema = serde_json::to_value(schemars::schema_for!(PickArgs)).unwrap();
    assert_eq!(schema["properties"]["count"]["title"], "The count");
    assert_eq!(schema["properties"]["count"]["description"], "How many.");
    assert_eq!(schema["required"], json!(["count", "type"]));
    assert_eq!(schema["additionalProperties"], json!(false));
}

#[test]
fn chosen_inputs_read_as_the_derive_reads_them() {
    for text in [
        r#"{"count": 1, "type": [true]}"#,
        r#"{"count": 1, "type": [], "name": "a", "place": {"x": -2}}"#,
        r#"{"count": 1, "type": [], "name": null}"#,
        r#"{"count": 1}"#,
        r#"{"type": []}"#,
        r#"{"count": 1, "count": 2, "type": []}"#,
        r#"{"count": 1, "type": [], "other": 0}"#,
        r#"{"count": -1, "type": []}"#,
        r#"{"count": 1, "type": [], "place": {"y": 0}}"#,
        "[1, null, [false]]",
        r#"[1, "a", [false], {"x": 3}]"#,
        r#"[1, "a", [false], {"x": 3}, 5]"#,
        "[]",
        "7",
        r#""count""#,
        "null",
        "{}",
    ] {
        for (shared, derived) in read_both(text) {
            assert_eq!(shared, derived, "{text}");
        }
    }
    for text in ["{}", r#"{"a": 1}"#, "[]", "[1]", "null"] {
        assert_eq!(
            serde_json::from_str::<NothingArgs>(text)
                .map(|_| ())
                .map_err(|error| error.to_string()),
            serde_json::from_str::<derived::NothingArgs>(text)
                .map(|_| ())
                .map_err(|error| error.to_string()),
            "{text}"
        );
    }
    assert_eq!(
        serde_json::from_str::<SingleArgs>(r#"{"only": 3}"#)
            .unwrap()
            .only,
        3
    );
    assert_eq!(
        serde_json::from_str::<SingleArgs>("[]")
            .map(|args| args.only)
            .map_err(|error| error.to_string()),
        serde_json::from_str::<derived::SingleArgs>("[]")
            .map(|args| args.only)
            .map_err(|error| error.to_string()),
    );
}

#[test]
fn a_list_the_shared_code_does_not_read_is_derived() {
    let schema = serde_json::to_value(schemars::schema_for!(ManyArgs)).unwrap();
    assert_eq!(schema["required"].as_array().unwrap().len(), 12);
    assert_eq!(schema["additionalProperties"], json!(false));
    let args: ManyArgs = serde_json::from_value(json!({
        "a": 1, "b": 1, "c": 1, "d": 1, "e": 1, "f": 1, "g": 1, "h": 1, "i": 1, "j": 1, "k": 1, "l": 1
    }))
    .unwrap();
    assert_eq!((args.a, args.m), (1, 0));
    let unknown = serde_json::from_value::<ManyArgs>(json!({"z": 1}))
        .err()
        .unwrap();
    assert!(
        unknown.to_string().starts_with("unknown field `z`"),
        "{unknown}"
    );
}

#[test]
fn crate_in_another_crates_macro_names_that_crate() {
    let registry = Registry::builder().tool(Shout).build().unwrap();
    let call = ToolCall::new("c", "shout", json!({"text": "ab", "times": 2}));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let outcome = runtime.block_on(registry.dispatch(call, Surface::Direct));
    assert_eq!(outcome.value().unwrap(), &json!("abab"));
    let args: ShoutArgs = serde_json::from_value(json!({"text": "x", "times": 1})).unwrap();
    assert_eq!(args.text, "x");
}

/// # Search
///
/// What to look for, and where.
#[tool_args]
#[derive(Debug, PartialEq)]
pub struct SearchArgs {
    /// # The query
    ///
    /// Words to look for.
    pub query: String,
    /// How many results; ten if left out.
    pub limit: Option<u32>,
    pub r#type: Vec<bool>,
    #[doc = " Where,\n  as a block.  "]
    #[doc(hidden)]
    pub place: Option<Place>,
}

mod derived_search {
    use super::Place;
    use toolprism::prelude::*;

    /// # Search
    ///
    /// What to look for, and where.
    #[derive(Debug, PartialEq, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub(crate) struct SearchArgs {
        /// # The query
        ///
        /// Words to look for.
        pub(crate) query: String,
        /// How many results; ten if left out.
        pub(crate) limit: Option<u32>,
        pub(crate) r#type: Vec<bool>,
        #[doc = " Where,\n  as a block.  "]
        #[doc(hidden)]
        pub(crate) place: Option<Place>,
    }
}

/// Searches.
#[tool]
fn search(args: SearchArgs) -> String {
    format!("{} ×{}", args.query, args.limit.unwrap_or(10))
}

type SearchFields = (String, Option<u32>, Vec<bool>, Option<Place>);

/// Both structs read from `text`, from JSON text and from a `Value`: the fields, or the error's
/// message.
fn read_both_tool_args(
    text: &str,
) -> [(Result<SearchFields, String>, Result<SearchFields, String>); 2] {
    let mine = |args: SearchArgs| (args.query, args.limit, args.r#type, args.place);
    let derived =
        |args: derived_search::SearchArgs| (args.query, args.limit, args.r#type, args.place);
    let value: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    [
        (
            serde_json::from_str::<SearchArgs>(text)
                .map(mine)
                .map_err(|error| error.to_string()),
            serde_json::from_str::<derived_search::SearchArgs>(text)
                .map(derived)
                .map_err(|error| error.to_string()),
        ),
        (
            serde_json::from_value::<SearchArgs>(value.clone())
                .map(mine)
                .map_err(|error| error.to_string()),
            serde_json::from_value::<derived_search::SearchArgs>(value)
                .map(derived)
                .map_err(|error| error.to_string()),
        ),
    ]
}

#[test]
fn a_tool_args_schema_is_the_derives() {
    let mine = serde_json::to_value(schemars::schema_for!(SearchArgs)).unwrap();
    let derived = serde_json::to_value(schemars::schema_for!(derived_search::SearchArgs)).unwrap();
    assert_eq!(mine, derived);
    assert_eq!(mine["title"], "Search");
    assert_eq!(mine["description"], "What to look for, and where.");
    assert_eq!(mine["properties"]["query"]["title"], "The query");
    assert_eq!(
        mine["properties"]["query"]["description"],
        "Words to look for."
    );
    assert_eq!(mine["required"], json!(["query", "type"]));
    assert_eq!(mine["additionalProperties"], json!(false));
}

#[test]
fn chosen_inputs_read_as_the_derive_reads_them_with_tool_args() {
    for text in [
        r#"{"query": "a", "type": [true]}"#,
        r#"{"query": "a", "type": [], "limit": 3, "place": {"x": -2}}"#,
        r#"{"query": "a", "type": [], "limit": null}"#,
        r#"{"query": "a"}"#,
        r#"{"type": []}"#,
        r#"{"query": "a", "query": "b", "type": []}"#,
        r#"{"query": "a", "type": [], "other": 0}"#,
        r#"{"query": "a", "type": [], "limit": -1}"#,
        r#"{"query": "a", "type": [], "place": {"y": 0}}"#,
        r#"["a", null, [false]]"#,
        r#"["a", 2, [false], {"x": 3}, 5]"#,
        "[]",
        "7",
        "null",
        "{}",
    ] {
        for (mine, derived) in read_both_tool_args(text) {
            assert_eq!(mine, derived, "{text}");
        }
    }
}

#[test]
fn a_tool_takes_a_tool_args_struct_and_refuses_what_it_does_not_have() {
    let registry = Registry::builder().tool(Search).build().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let call = ToolCall::new("c1", "search", json!({"query": "rust", "type": []}));
    let outcome = runtime.block_on(registry.dispatch(call, Surface::Direct));
    assert_eq!(outcome.value().unwrap(), &json!("rust ×10"));
    let call = ToolCall::new(
        "c2",
        "search",
        json!({"query": "rust", "type": [], "limits": 3}),
    );
    let outcome = runtime.block_on(registry.dispatch(call, Surface::Direct));
    let error = outcome.error().unwrap();
    assert!(error.message.contains("limits"), "{}", error.message);
    let schema = registry
        .snapshot()
        .definition("search")
        .unwrap()
        .input_schema()
        .clone();
    assert_eq!(
        schema["properties"]["limit"]["description"],
        "How many results; ten if left out."
    );
}

/// A JSON value of one of the kinds the fields take or refuse.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|number| number.to_string()),
        any::<u32>().prop_map(|number| number.to_string()),
        "[a-z]{0,3}".prop_map(|text| format!("{text:?}")),
        Just("null".to_owned()),
        Just("true".to_owned()),
        proptest::collection::vec(any::<bool>(), 0..3).prop_map(|bools| format!("{bools:?}")),
        any::<i32>().prop_map(|x| format!(r#"{{"x": {x}}}"#)),
    ]
}

/// An object of `keys` (which may repeat, be unknown or be missing); an array; or a scalar.
fn input(keys: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::collection::vec((proptest::sample::select(keys), value()), 0..6).prop_map(
            |entries| {
                let entries: Vec<String> = entries
                    .into_iter()
                    .map(|(key, value)| format!("{key:?}: {value}"))
                    .collect();
                format!("{{{}}}", entries.join(", "))
            }
        ),
        proptest::collection::vec(value(), 0..6)
            .prop_map(|items| format!("[{}]", items.join(", "))),
        value(),
    ]
}

proptest! {
    #[test]
    fn any_input_reads_as_the_derive_reads_it(
        text in input(&["count", "name", "type", "place", "other", "r#type"])
    ) {
        for (shared, derived) in read_both(&text) {
            prop_assert_eq!(shared, derived, "{}", text);
        }
    }

    #[test]
    fn any_input_reads_as_the_derive_reads_it_with_tool_args(
        text in input(&["query", "limit", "type", "place", "other"])
    ) {
        for (mine, derived) in read_both_tool_args(&text) {
            prop_assert_eq!(mine, derived, "{}", text);
        }
    }
}
