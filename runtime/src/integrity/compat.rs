//! What a change to a tool's definition does to those who rely on it: the programs and hosts
//! that call it, and the model that reads it. Each change found is one [`Rule`]; a rule is
//! breaking or compatible, for callers or for the model.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::lock::Lock;
use crate::schema::inline_refs;

/// Whether a change can break someone who relied on the definition before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Something that worked before may not now.
    Breaking,
    /// Everything that worked before still does.
    Compatible,
}

/// Who a change matters to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Audience {
    /// Programs and hosts that call the tool, or read its value.
    Callers,
    /// The model, which reads the tool's name, title and descriptions.
    Model,
}

/// A kind of change, and what it means. The rules are those of `docs/integrity.md`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Rule {
    /// The tool is gone (or renamed).
    ToolRemoved,
    /// A new tool.
    ToolAdded,
    /// A new input field that is required: calls made as before are refused.
    InputRequiredAdded,
    /// An input field that was optional is required.
    InputMadeRequired,
    /// An input field that was required is optional.
    InputMadeOptional,
    /// A new optional input field.
    InputAdded,
    /// An input field is gone: calls that send it may be refused.
    InputRemoved,
    /// An input accepts less than before: fewer types or values, tighter bounds.
    InputNarrowed,
    /// An input accepts more than before.
    InputWidened,
    /// An output field is gone, or may now be missing.
    OutputRemoved,
    /// An output field (or the value) has another type, other values or looser bounds.
    OutputRetyped,
    /// A new output field, or one that is now always there, or tighter bounds.
    OutputAdded,
    /// A hint says the tool is less safe: no longer read-only or idempotent, now
    /// destructive or open-world (or no longer says otherwise).
    HintLessSafe,
    /// A hint says the tool is safer.
    HintSafer,
    /// A title or description changed.
    Described,
    /// A change to a schema these rules do not classify (`anyOf`, `$ref` cycles, keywords
    /// other than those named here): held breaking, to be safe.
    Unclassified,
}

impl Rule {
    /// Whether a change of this kind can break those it matters to.
    pub fn severity(self) -> Severity {
        match self {
            Self::ToolRemoved
            | Self::InputRequiredAdded
            | Self::InputMadeRequired
            | Self::InputRemoved
            | Self::InputNarrowed
            | Self::OutputRemoved
            | Self::OutputRetyped
            | Self::HintLessSafe
            | Self::Unclassified => Severity::Breaking,
            Self::ToolAdded
            | Self::InputMadeOptional
            | Self::InputAdded
            | Self::InputWidened
            | Self::OutputAdded
            | Self::HintSafer
            | Self::Described => Severity::Compatible,
        }
    }

    /// Who the change matters to.
    pub fn audience(self) -> Audience {
        match self {
            Self::Described => Audience::Model,
            _ => Audience::Callers,
        }
    }

    /// What the change is, in words.
    pub fn describe(self) -> &'static str {
        match self {
            Self::ToolRemoved => "the tool was removed",
            Self::ToolAdded => "a new tool",
            Self::InputRequiredAdded => "a new required input field",
            Self::InputMadeRequired => "an optional input field became required",
            Self::InputMadeOptional => "a required input field became optional",
            Self::InputAdded => "a new optional input field",
            Self::InputRemoved => "an input field was removed",
            Self::InputNarrowed => "an input accepts less than before",
            Self::InputWidened => "an input accepts more than before",
            Self::OutputRemoved => "an output field was removed or may be missing",
            Self::OutputRetyped => "an output field changed its type or values",
            Self::OutputAdded => "a new output field, or a narrower output",
            Self::HintLessSafe => "a hint says the tool is less safe",
            Self::HintSafer => "a hint says the tool is safer",
            Self::Described => "a title or description changed",
            Self::Unclassified => "a schema change these rules do not classify",
        }
    }
}

/// One change between a locked definition and the current one.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    /// The tool.
    pub tool: String,
    /// Where in its definition, as a JSON Pointer (`/input_schema/properties/path`).
    pub path: String,
    /// What kind of change.
    pub rule: Rule,
    /// What was there (`None`: nothing).
    pub before: Option<Value>,
    /// What is there now (`None`: nothing).
    pub after: Option<Value>,
}

impl Change {
    /// Whether it can break someone ([`Rule::severity`]).
    pub fn severity(&self) -> Severity {
        self.rule.severity()
    }
}

/// The changes from `locked` to `now`, tool by tool in name order, each classified. Two locks
/// with the same fingerprints have none.
///
/// ```
/// use toolprism::integrity::{Lock, Rule, Severity, compare};
/// use toolprism::prelude::*;
///
/// mod before {
///     use toolprism::prelude::*;
///     /// Reads a file.
///     #[tool(read_only)]
///     pub fn read(#[arg] path: String) -> String { path }
/// }
///
/// mod after {
///     use toolprism::prelude::*;
///     /// Reads a file.
///     #[tool(read_only)]
///     pub fn read(#[arg] path: String, #[arg] encoding: String) -> String { path + &encoding }
/// }
///
/// let locked = Lock::of(&Registry::builder().tool(before::Read).build().unwrap().snapshot());
/// let now = Lock::of(&Registry::builder().tool(after::Read).build().unwrap().snapshot());
/// let changes = compare(&locked, &now);
/// assert_eq!(changes[0].rule, Rule::InputRequiredAdded);
/// assert_eq!(changes[0].path, "/input_schema/properties/encoding");
/// assert_eq!(changes[0].severity(), Severity::Breaking);
/// ```
pub fn compare(locked: &Lock, now: &Lock) -> Vec<Change> {
    let mut changes = Vec::new();
    for (name, before) in &locked.tools {
        match now.tools.get(name) {
            None => changes.push(Change {
                tool: name.clone(),
                path: String::new(),
                rule: Rule::ToolRemoved,
                before: Some(before.definition.clone()),
                after: None,
            }),
            Some(after) if after.fingerprint != before.fingerprint => {
                let mut found = Found {
                    tool: name,
                    changes: &mut changes,
                };
                definitions(&mut found, &before.definition, &after.definition);
            }
            Some(_) => {}
        }
    }
    for (name, after) in &now.tools {
        if !locked.tools.contains_key(name) {
            changes.push(Change {
                tool: name.clone(),
                path: String::new(),
                rule: Rule::ToolAdded,
                before: None,
                after: Some(after.definition.clone()),
            });
        }
    }
    changes
}

/// The changes between two definitions of the tool `tool`, each as
/// [`ToolDef::definition_json`](crate::ToolDef::definition_json) gives it (an MCP client's
/// pinned and listed definitions, say), classified as [`compare`] classifies them.
pub fn compare_definitions(tool: &str, before: &Value, after: &Value) -> Vec<Change> {
    let mut changes = Vec::new();
    let mut found = Found {
        tool,
        changes: &mut changes,
    };
    definitions(&mut found, before, after);
    changes
}

/// Where the changes of one tool go.
struct Found<'a> {
    tool: &'a str,
    changes: &'a mut Vec<Change>,
}

impl Found<'_> {
    fn push(&mut self, path: &str, rule: Rule, before: Option<&Value>, after: Option<&Value>) {
        self.changes.push(Change {
            tool: self.tool.to_owned(),
            path: path.to_owned(),
            rule,
            before: before.cloned(),
            after: after.cloned(),
        });
    }
}

/// Which way a schema is read: what a tool accepts, or what it returns.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Input,
    Output,
}

fn definitions(found: &mut Found<'_>, before: &Value, after: &Value) {
    for key in ["title", "description"] {
        if before.get(key) != after.get(key) {
            found.push(
                &format!("/{key}"),
                Rule::Described,
                before.get(key),
                after.get(key),
            );
        }
    }
    for (key, side) in [
        ("input_schema", Side::Input),
        ("output_schema", Side::Output),
    ] {
        let (Some(was), Some(is)) = (before.get(key), after.get(key)) else {
            continue;
        };
        let path = format!("/{key}");
        match (inlined(was), inlined(is)) {
            (Some(was), Some(is)) => schema(found, side, &path, &was, &is),
            // A recursive schema is not walked: any change to it is unclassified.
            _ if was != is => found.push(&path, Rule::Unclassified, Some(was), Some(is)),
            _ => {}
        }
    }
    hints(found, before.get("hints"), after.get("hints"));
}

/// A schema with its `$ref`s inlined and its table of definitions dropped (nothing refers
/// to it any more); `None` for one that cannot be inlined (a recursive type).
fn inlined(schema: &Value) -> Option<Value> {
    let mut inlined = inline_refs(schema, false, 100_000).ok()?;
    if let Value::Object(object) = &mut inlined {
        object.remove("$defs");
        object.remove("definitions");
    }
    Some(inlined)
}

/// Keys that say what a schema means to a reader, not what it accepts.
const DESCRIBING: [&str; 5] = ["title", "description", "examples", "default", "$comment"];

/// Keys these rules read. Others are compared whole, and a difference is unclassified.
const READ: [&str; 5] = ["type", "properties", "required", "items", "enum"];

/// Bounds: for each, whether a larger value accepts more.
const BOUNDS: [(&str, bool); 8] = [
    ("minimum", false),
    ("exclusiveMinimum", false),
    ("maximum", true),
    ("exclusiveMaximum", true),
    ("minLength", false),
    ("maxLength", true),
    ("minItems", false),
    ("maxItems", true),
];

fn schema(found: &mut Found<'_>, side: Side, path: &str, before: &Value, after: &Value) {
    if before == after {
        return;
    }
    // `true` accepts anything, as `{}` does.
    let anything = Value::Object(Map::new());
    let before = if *before == Value::Bool(true) {
        &anything
    } else {
        before
    };
    let after = if *after == Value::Bool(true) {
        &anything
    } else {
        after
    };
    let (Some(was), Some(is)) = (before.as_object(), after.as_object()) else {
        // `true`/`false` schemas, or something that is not a schema.
        found.push(path, unclassified_or(side), Some(before), Some(after));
        return;
    };
    for key in DESCRIBING {
        if was.get(key) != is.get(key) {
            found.push(
                &format!("{path}/{key}"),
                Rule::Described,
                was.get(key),
                is.get(key),
            );
        }
    }
    types(found, side, path, was, is);
    values(found, side, path, was, is);
    bounds(found, side, path, was, is);
    properties(found, side, path, was, is);
    if let (Some(was_items), Some(is_items)) = (was.get("items"), is.get("items")) {
        schema(found, side, &format!("{path}/items"), was_items, is_items);
    } else if was.get("items") != is.get("items") {
        found.push(
            &format!("{path}/items"),
            unclassified_or(side),
            was.get("items"),
            is.get("items"),
        );
    }
    let rest = |object: &Map<String, Value>| -> Map<String, Value> {
        object
            .iter()
            .filter(|(key, _)| {
                !DESCRIBING.contains(&key.as_str())
                    && !READ.contains(&key.as_str())
                    && !BOUNDS.iter().any(|(bound, _)| bound == key)
            })
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect()
    };
    let (was_rest, is_rest) = (rest(was), rest(is));
    if was_rest != is_rest {
        found.push(
            path,
            Rule::Unclassified,
            Some(&Value::Object(was_rest)),
            Some(&Value::Object(is_rest)),
        );
    }
}

/// For an output, any change the rules do not read is a retyping; for an input, it is
/// unclassified.
fn unclassified_or(side: Side) -> Rule {
    match side {
        Side::Input => Rule::Unclassified,
        Side::Output => Rule::OutputRetyped,
    }
}

/// The JSON types a schema allows; `None` for any.
fn type_set(schema: &Map<String, Value>) -> Option<BTreeSet<String>> {
    let mut set: BTreeSet<String> = match schema.get("type")? {
        Value::String(one) => BTreeSet::from([one.clone()]),
        Value::Array(many) => many
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => return None,
    };
    // An integer is a number.
    if set.contains("number") {
        set.remove("integer");
    }
    Some(set)
}

/// Whether a type set (`None`: any) allows all that another does.
fn covers(wide: Option<&BTreeSet<String>>, narrow: Option<&BTreeSet<String>>) -> bool {
    match (wide, narrow) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(wide), Some(narrow)) => narrow
            .iter()
            .all(|kind| wide.contains(kind) || (kind == "integer" && wide.contains("number"))),
    }
}

fn types(
    found: &mut Found<'_>,
    side: Side,
    path: &str,
    was: &Map<String, Value>,
    is: &Map<String, Value>,
) {
    if was.get("type") == is.get("type") {
        return;
    }
    let (before, after) = (type_set(was), type_set(is));
    let (before, after) = (before.as_ref(), after.as_ref());
    let rule = match side {
        Side::Input if covers(after, before) => Rule::InputWidened,
        Side::Input => Rule::InputNarrowed,
        Side::Output if covers(before, after) && before != after => Rule::OutputAdded,
        Side::Output => Rule::OutputRetyped,
    };
    found.push(
        &format!("{path}/type"),
        rule,
        was.get("type"),
        is.get("type"),
    );
}

fn values(
    found: &mut Found<'_>,
    side: Side,
    path: &str,
    was: &Map<String, Value>,
    is: &Map<String, Value>,
) {
    if was.get("enum") == is.get("enum") {
        return;
    }
    let listed =
        |schema: &Map<String, Value>| schema.get("enum").and_then(Value::as_array).cloned();
    let (before, after) = (listed(was), listed(is));
    // `None`: any value.
    let within = |small: &Option<Vec<Value>>, large: &Option<Vec<Value>>| match (small, large) {
        (_, None) => true,
        (None, Some(_)) => false,
        (Some(small), Some(large)) => small.iter().all(|value| large.contains(value)),
    };
    let rule = match side {
        Side::Input if within(&before, &after) => Rule::InputWidened,
        Side::Input => Rule::InputNarrowed,
        Side::Output if within(&after, &before) => Rule::OutputAdded,
        Side::Output => Rule::OutputRetyped,
    };
    found.push(
        &format!("{path}/enum"),
        rule,
        was.get("enum"),
        is.get("enum"),
    );
}

fn bounds(
    found: &mut Found<'_>,
    side: Side,
    path: &str,
    was: &Map<String, Value>,
    is: &Map<String, Value>,
) {
    for (key, larger_accepts_more) in BOUNDS {
        let (before, after) = (was.get(key), is.get(key));
        if before == after {
            continue;
        }
        // A bound added accepts less; one removed, more.
        let looser = match (
            before.and_then(Value::as_f64),
            after.and_then(Value::as_f64),
        ) {
            (Some(before), Some(after)) => (after > before) == larger_accepts_more,
            (Some(_), None) => true,
            _ => false,
        };
        let rule = match (side, looser) {
            (Side::Input, true) => Rule::InputWidened,
            (Side::Input, false) => Rule::InputNarrowed,
            (Side::Output, true) => Rule::OutputRetyped,
            (Side::Output, false) => Rule::OutputAdded,
        };
        found.push(&format!("{path}/{key}"), rule, before, after);
    }
}

fn properties(
    found: &mut Found<'_>,
    side: Side,
    path: &str,
    was: &Map<String, Value>,
    is: &Map<String, Value>,
) {
    let empty = Map::new();
    let listed = |schema: &Map<String, Value>| -> BTreeSet<String> {
        schema
            .get("required")
            .and_then(Value::as_array)
            .map(|names| {
                names
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let (was_props, is_props) = (
        was.get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty),
        is.get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty),
    );
    let (was_required, is_required) = (listed(was), listed(is));
    for (name, before) in was_props {
        let at = format!("{path}/properties/{}", pointer_escape(name));
        let Some(after) = is_props.get(name) else {
            let rule = match side {
                Side::Input => Rule::InputRemoved,
                Side::Output => Rule::OutputRemoved,
            };
            found.push(&at, rule, Some(before), None);
            continue;
        };
        let (required_before, required_after) =
            (was_required.contains(name), is_required.contains(name));
        let rule = match (side, required_before, required_after) {
            (_, true, true) | (_, false, false) => None,
            (Side::Input, false, true) => Some(Rule::InputMadeRequired),
            (Side::Input, true, false) => Some(Rule::InputMadeOptional),
            (Side::Output, true, false) => Some(Rule::OutputRemoved),
            (Side::Output, false, true) => Some(Rule::OutputAdded),
        };
        if let Some(rule) = rule {
            found.push(
                &format!("{path}/required"),
                rule,
                was.get("required"),
                is.get("required"),
            );
        }
        schema(found, side, &at, before, after);
    }
    for (name, after) in is_props {
        if was_props.contains_key(name) {
            continue;
        }
        let at = format!("{path}/properties/{}", pointer_escape(name));
        let rule = match side {
            Side::Input if is_required.contains(name) => Rule::InputRequiredAdded,
            Side::Input => Rule::InputAdded,
            Side::Output => Rule::OutputAdded,
        };
        found.push(&at, rule, None, Some(after));
    }
}

fn hints(found: &mut Found<'_>, before: Option<&Value>, after: Option<&Value>) {
    // For each hint: the value that is the safe one.
    for (hint, safe) in [
        ("read_only", true),
        ("destructive", false),
        ("idempotent", true),
        ("open_world", false),
    ] {
        let was = before.and_then(|hints| hints.get(hint));
        let is = after.and_then(|hints| hints.get(hint));
        if was == is {
            continue;
        }
        let was_safe = was.and_then(Value::as_bool) == Some(safe);
        let is_safe = is.and_then(Value::as_bool) == Some(safe);
        let rule = match (was_safe, is_safe) {
            (true, false) => Rule::HintLessSafe,
            (false, true) => Rule::HintSafer,
            // From unsaid to the unsafe value, or back: what a host may assume is the same.
            _ => continue,
        };
        found.push(&format!("/hints/{hint}"), rule, was, is);
    }
}

/// A JSON Pointer token: `~` and `/` escaped.
fn pointer_escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}
