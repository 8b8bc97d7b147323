//! One operation as a tool's plan: its parameters and JSON body merged into one argument
//! object (each argument knowing where it goes on the request), its description, and the
//! schema of what a 2xx response holds. What cannot be represented is a reason to skip the
//! operation, never a part left out.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use crate::auth::{self, Requirements};
use crate::document::{Document, Version, cut, quoted};
use crate::encode::Style;
use crate::routes::Method;
use crate::schema::Converter;

/// The longest description kept, in bytes: the summary and description together.
pub const MAX_DESCRIPTION_BYTES: usize = 4 * 1024;
/// The longest description kept of one parameter.
const MAX_PARAMETER_DESCRIPTION_BYTES: usize = 1024;
/// The most parameters an operation may have.
pub const MAX_PARAMETERS: usize = 256;
/// Argument names: what every provider accepts as a property name.
const MAX_ARGUMENT_NAME: usize = 64;

/// Where an argument goes on the request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Location {
    Path,
    Query,
    Header,
    Cookie,
    /// One property of a JSON object body.
    BodyField,
    /// The whole JSON body.
    Body,
}

impl Location {
    fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "path" => Self::Path,
            "query" => Self::Query,
            "header" => Self::Header,
            "cookie" => Self::Cookie,
            _ => return None,
        })
    }

    fn suffix(self) -> &'static str {
        match self {
            Self::Path => "path",
            Self::Query => "query",
            Self::Header => "header",
            Self::Cookie => "cookie",
            Self::BodyField | Self::Body => "body",
        }
    }
}

/// One argument: its key in the tool's arguments, its name on the wire, and how it is laid out.
#[derive(Clone, Debug)]
pub(crate) struct Argument {
    pub(crate) key: String,
    pub(crate) wire: String,
    pub(crate) location: Location,
    pub(crate) style: Style,
    pub(crate) explode: bool,
    /// The parameter is declared with `content` (`application/json`): sent as JSON text.
    pub(crate) as_json: bool,
}

/// An operation, planned.
pub(crate) struct Plan {
    pub(crate) title: Option<String>,
    pub(crate) description: String,
    pub(crate) input_schema: Value,
    pub(crate) output_schema: Value,
    pub(crate) arguments: Vec<Argument>,
    /// The body's media type, when the request has one.
    pub(crate) body_media: Option<String>,
    pub(crate) body_required: bool,
    pub(crate) security: Requirements,
    /// About how much memory its schemas take.
    pub(crate) footprint: usize,
}

/// Headers OpenAPI says a parameter may not define: the request's own.
const RESERVED_HEADERS: [&str; 3] = ["accept", "content-type", "authorization"];

/// Headers the HTTP client or the connection owns (framing, routing, cookies, proxies): a
/// model's argument setting one could smuggle a request or a credential.
const FORBIDDEN_HEADERS: [&str; 12] = [
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authorization",
    "te",
    "trailer",
    "upgrade",
    "expect",
    "cookie",
];

pub(crate) fn plan(
    document: &Document,
    method: Method,
    path: &str,
    path_item: &Value,
    operation: &Value,
) -> Result<Plan, String> {
    check_servers(document, path_item, operation)?;
    let mut converter = Converter::new(document);
    let mut arguments = Vec::new();
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut keys = BTreeSet::new();

    for parameter in parameters(document, path_item, operation)? {
        let (argument, schema, needed) = parameter_argument(&mut converter, parameter)?;
        let argument = argument.keyed(&mut keys);
        if needed {
            required.push(Value::from(argument.key.clone()));
        }
        properties.insert(argument.key.clone(), schema);
        arguments.push(argument);
    }
    check_path_template(path, &arguments)?;
    let (body_media, body_required) = body(
        document,
        &mut converter,
        operation,
        &mut keys,
        &mut arguments,
        &mut properties,
        &mut required,
    )?
    .unzip();
    let output = output_schema(document, &mut converter, operation)?;
    let defs = converter.finish()?;
    // The input and the output each carry the definitions.
    let footprint = converter.footprint() * if defs.is_empty() { 1 } else { 2 };
    let mut input = json!({
        "type": "object",
        "properties": properties,
        "additionalProperties": false,
    });
    if !required.is_empty() {
        input["required"] = Value::Array(required);
    }
    let mut output = output;
    if !defs.is_empty() {
        // Both schemas carry every definition either needs: they are checked apart.
        input["$defs"] = Value::Object(defs.clone());
        if let Value::Object(object) = &mut output {
            object.insert("$defs".to_owned(), Value::Object(defs));
        }
    }
    let (title, description) = describe(operation, method, path);
    Ok(Plan {
        title,
        description,
        input_schema: input,
        output_schema: output,
        arguments,
        body_media,
        body_required: body_required.unwrap_or(false),
        footprint,
        security: auth::requirements(document, operation)?,
    })
}

/// An operation or path item that names its own server is sent elsewhere than the base URL:
/// skipped rather than sent to the wrong place.
fn check_servers(document: &Document, path_item: &Value, operation: &Value) -> Result<(), String> {
    let own = [operation, path_item]
        .into_iter()
        .find_map(|holder| holder.pointer("/servers/0/url").and_then(Value::as_str));
    match own {
        Some(url) if Some(url) != document.server_url() => Err(format!(
            "it is served from its own server {}, not the base URL",
            quoted(url)
        )),
        _ => Ok(()),
    }
}

/// The path item's parameters, then the operation's (which replace a path item's of the same
/// name and location), each resolved.
fn parameters<'a>(
    document: &'a Document,
    path_item: &'a Value,
    operation: &'a Value,
) -> Result<Vec<&'a Value>, String> {
    let mut all: Vec<&Value> = Vec::new();
    for list in [path_item.get("parameters"), operation.get("parameters")]
        .into_iter()
        .flatten()
    {
        let Value::Array(list) = list else {
            return Err("its `parameters` is not an array".to_owned());
        };
        if all.len() + list.len() > MAX_PARAMETERS {
            return Err(format!("it has more than {MAX_PARAMETERS} parameters"));
        }
        for parameter in list {
            let parameter = document.resolve(parameter)?;
            let place = parameter.get("in").and_then(Value::as_str);
            let name = parameter.get("name").and_then(Value::as_str).unwrap_or("");
            if place == Some("header")
                && RESERVED_HEADERS.contains(&name.to_ascii_lowercase().as_str())
            {
                // OpenAPI: such a parameter is ignored; the request sets these itself.
                continue;
            }
            let identity = |p: &Value| (p.get("name").cloned(), p.get("in").cloned());
            all.retain(|earlier| identity(earlier) != identity(parameter));
            all.push(parameter);
        }
    }
    Ok(all)
}

impl Argument {
    /// The argument with a key that is a valid property name for every provider and unique
    /// among `taken`: the wire name, or, when that is taken, the name and its location
    /// (`id__query`), then a number.
    fn keyed(mut self, taken: &mut BTreeSet<String>) -> Self {
        let base = property_name(&self.wire);
        let mut key = base.clone();
        if taken.contains(&key) {
            key = format!("{}__{}", cut_ascii(&base, 55), self.location.suffix());
        }
        let stem = key.clone();
        let mut n = 2;
        while taken.contains(&key) {
            key = format!("{}_{n}", cut_ascii(&stem, 60));
            n += 1;
        }
        taken.insert(key.clone());
        self.key = key;
        self
    }
}

fn parameter_argument(
    converter: &mut Converter<'_>,
    parameter: &Value,
) -> Result<(Argument, Value, bool), String> {
    let name = parameter
        .get("name")
        .and_then(Value::as_str)
        .ok_or("a parameter has no name")?;
    let place = parameter.get("in").and_then(Value::as_str).unwrap_or("");
    let location = Location::parse(place).ok_or_else(|| {
        format!(
            "its parameter {} is in {}, which is not a parameter location",
            quoted(name),
            quoted(place)
        )
    })?;
    if location == Location::Header {
        check_header_name(name)?;
    }
    let (style, explode) = layout(parameter, name, location)?;
    let (schema, as_json) = match (parameter.get("schema"), parameter.get("content")) {
        (Some(schema), _) => (converter.convert(schema)?, false),
        (None, Some(Value::Object(content))) => {
            let (media, entry) = content
                .iter()
                .next()
                .ok_or_else(|| format!("its parameter {} has empty content", quoted(name)))?;
            if !is_json(media) {
                return Err(format!(
                    "its parameter {} is sent as {}, which is not JSON",
                    quoted(name),
                    quoted(media)
                ));
            }
            let schema = entry.get("schema").unwrap_or(&Value::Bool(true));
            (converter.convert(schema)?, true)
        }
        _ => (json!({"type": "string"}), false),
    };
    let mut schema = schema;
    if let (Value::Object(object), Some(text)) = (
        &mut schema,
        parameter.get("description").and_then(Value::as_str),
    ) {
        object
            .entry("description")
            .or_insert_with(|| Value::from(cut_bytes(text, MAX_PARAMETER_DESCRIPTION_BYTES)));
    }
    let needed = location == Location::Path
        || parameter.get("required").and_then(Value::as_bool) == Some(true);
    Ok((
        Argument {
            key: String::new(),
            wire: name.to_owned(),
            location,
            style,
            explode,
            as_json,
        },
        schema,
        needed,
    ))
}

/// A parameter's `style` (the location's default when it names none; one OpenAPI does not
/// define there is refused) and `explode` (by default, only for `form`).
fn layout(parameter: &Value, name: &str, location: Location) -> Result<(Style, bool), String> {
    let default_style = match location {
        Location::Query | Location::Cookie => Style::Form,
        _ => Style::Simple,
    };
    let style = match parameter.get("style").and_then(Value::as_str) {
        None => default_style,
        Some(style) => Style::parse(style).ok_or_else(|| {
            format!(
                "its parameter {} has the style {}",
                quoted(name),
                quoted(style)
            )
        })?,
    };
    if !style_fits(style, location) {
        return Err(format!(
            "its {} parameter {} has the style {style:?}, which OpenAPI does not define there",
            location.suffix(),
            quoted(name)
        ));
    }
    let explode = parameter
        .get("explode")
        .and_then(Value::as_bool)
        .unwrap_or(style == Style::Form);
    Ok((style, explode))
}

/// The styles OpenAPI defines for each location.
fn style_fits(style: Style, location: Location) -> bool {
    match location {
        Location::Path => matches!(style, Style::Simple | Style::Label | Style::Matrix),
        Location::Query => matches!(
            style,
            Style::Form | Style::SpaceDelimited | Style::PipeDelimited | Style::DeepObject
        ),
        Location::Header => style == Style::Simple,
        Location::Cookie => style == Style::Form,
        Location::BodyField | Location::Body => false,
    }
}

/// A header parameter's name is a header name, and not one the client owns.
fn check_header_name(name: &str) -> Result<(), String> {
    if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err() {
        return Err(format!(
            "its header parameter {} is not a header name",
            quoted(name)
        ));
    }
    if FORBIDDEN_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
        return Err(format!(
            "its header parameter {} names a header the HTTP client sets itself",
            quoted(name)
        ));
    }
    Ok(())
}

/// Every `{name}` of the path has a path parameter, and every path parameter a `{name}`.
fn check_path_template(path: &str, arguments: &[Argument]) -> Result<(), String> {
    let mut named = BTreeSet::new();
    let mut rest = path;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            return Err(format!("its path {} has an unclosed `{{`", quoted(path)));
        };
        named.insert(&rest[open + 1..open + close]);
        rest = &rest[open + close + 1..];
    }
    let declared: BTreeSet<&str> = arguments
        .iter()
        .filter(|argument| argument.location == Location::Path)
        .map(|argument| argument.wire.as_str())
        .collect();
    if let Some(missing) = named.iter().find(|name| !declared.contains(**name)) {
        return Err(format!(
            "its path names {} but no path parameter has that name",
            quoted(missing)
        ));
    }
    if let Some(extra) = declared.iter().find(|name| !named.contains(**name)) {
        return Err(format!(
            "its path parameter {} is not in its path",
            quoted(extra)
        ));
    }
    Ok(())
}

/// The request body, when the operation has one, and whether it is required: a JSON object
/// whose properties are plain becomes one argument per property (while the operation stays
/// within [`MAX_PARAMETERS`]); any other JSON body is the argument `body`.
#[allow(clippy::too_many_arguments)]
fn body(
    document: &Document,
    converter: &mut Converter<'_>,
    operation: &Value,
    keys: &mut BTreeSet<String>,
    arguments: &mut Vec<Argument>,
    properties: &mut Map<String, Value>,
    required: &mut Vec<Value>,
) -> Result<Option<(String, bool)>, String> {
    let Some(body) = operation.get("requestBody") else {
        return Ok(None);
    };
    let body = document.resolve(body)?;
    let content = body
        .get("content")
        .and_then(Value::as_object)
        .ok_or("its request body has no content")?;
    let Some((media, entry)) = content.iter().find(|(media, _)| is_json(media)) else {
        let kinds: Vec<&str> = content.keys().map(String::as_str).take(4).collect();
        return Err(format!(
            "its request body is sent as {}, not JSON",
            cut(&kinds.join(", "), 200)
        ));
    };
    let needed = body.get("required").and_then(Value::as_bool) == Some(true);
    let schema = entry.get("schema").unwrap_or(&Value::Bool(true));
    let argument = |key: &str, location| Argument {
        key: String::new(),
        wire: key.to_owned(),
        location,
        style: Style::Simple,
        explode: false,
        as_json: false,
    };
    let fits = |fields: &Value| {
        let count = fields["properties"].as_object().map_or(0, Map::len);
        arguments.len() + count <= MAX_PARAMETERS
    };
    if let Some(fields) = flat_object(document, schema)?.filter(|fields| fits(fields)) {
        let wanted: BTreeSet<&str> = fields
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let props = fields["properties"].as_object().into_iter().flatten();
        for (name, property) in props {
            let field = argument(name, Location::BodyField).keyed(keys);
            // A `readOnly` property is the server's to set: never required of the model.
            let read_only = document
                .resolve(property)
                .is_ok_and(|property| property.get("readOnly") == Some(&Value::Bool(true)));
            if needed && wanted.contains(name.as_str()) && !read_only {
                required.push(Value::from(field.key.clone()));
            }
            properties.insert(field.key.clone(), converter.convert(property)?);
            arguments.push(field);
        }
    } else {
        let whole = argument("body", Location::Body).keyed(keys);
        if needed {
            required.push(Value::from(whole.key.clone()));
        }
        let mut whole_schema = converter.convert(schema)?;
        if let (Value::Object(object), Some(text)) = (
            &mut whole_schema,
            body.get("description").and_then(Value::as_str),
        ) {
            object
                .entry("description")
                .or_insert_with(|| Value::from(cut_bytes(text, MAX_PARAMETER_DESCRIPTION_BYTES)));
        }
        properties.insert(whole.key.clone(), whole_schema);
        arguments.push(whole);
    }
    Ok(Some((media.clone(), needed)))
}

/// The body schema, when it is an object of named properties and nothing else (no
/// composition, no further properties): then each property can be an argument of its own.
fn flat_object<'a>(document: &'a Document, schema: &'a Value) -> Result<Option<&'a Value>, String> {
    // In 3.1 what stands beside a `$ref` applies too: not a plain object any more.
    if let Some(object) = schema.as_object()
        && object.contains_key("$ref")
        && document.version == Version::V3_1
        && object
            .keys()
            .any(|key| !matches!(key.as_str(), "$ref" | "description" | "summary"))
    {
        return Ok(None);
    }
    let schema = document.resolve(schema)?;
    let Some(object) = schema.as_object() else {
        return Ok(None);
    };
    let is_object = object.get("type").is_none_or(|kind| kind == "object");
    let plain = object.keys().all(|key| {
        matches!(
            key.as_str(),
            "type" | "properties" | "required" | "title" | "description" | "additionalProperties"
        ) || key.starts_with("x-")
    });
    let closed = object
        .get("additionalProperties")
        .is_none_or(|extra| extra == &Value::Bool(false));
    let named = object
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|properties| !properties.is_empty());
    Ok((is_object && plain && closed && named).then_some(schema))
}

/// What a 2xx response holds: its JSON schema; a string for text; `null` for no content;
/// the binary form otherwise. Several 2xx responses are any of theirs.
fn output_schema(
    document: &Document,
    converter: &mut Converter<'_>,
    operation: &Value,
) -> Result<Value, String> {
    let Some(Value::Object(responses)) = operation.get("responses") else {
        return Ok(Value::Bool(true));
    };
    let mut choices = Vec::new();
    for (status, response) in responses {
        if !(status.starts_with('2') && status.len() == 3) {
            continue;
        }
        let response = document.resolve(response)?;
        let Some(Value::Object(content)) = response.get("content") else {
            choices.push(json!({"type": "null"}));
            continue;
        };
        if content.is_empty() {
            choices.push(json!({"type": "null"}));
        } else if let Some((_, entry)) = content.iter().find(|(media, _)| is_json(media)) {
            choices.push(converter.convert(entry.get("schema").unwrap_or(&Value::Bool(true)))?);
        } else if content.keys().all(|media| media.starts_with("text/")) {
            choices.push(json!({"type": "string"}));
        } else {
            choices.push(crate::call::binary_schema());
        }
    }
    choices.dedup();
    Ok(match choices.len() {
        0 => Value::Bool(true),
        1 => choices.pop().unwrap_or(Value::Bool(true)),
        _ if choices.contains(&Value::Bool(true)) => Value::Bool(true),
        _ => json!({"anyOf": choices}),
    })
}

/// The tool's title (the summary) and description (the summary and the description, within
/// [`MAX_DESCRIPTION_BYTES`]), or the method and path when the document says nothing.
fn describe(operation: &Value, method: Method, path: &str) -> (Option<String>, String) {
    let text = |key: &str| {
        operation
            .get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|text| !text.is_empty())
    };
    let summary = text("summary");
    let mut description = match (summary, text("description")) {
        (Some(summary), Some(detail)) if detail.starts_with(summary) => detail.to_owned(),
        (Some(summary), Some(detail)) => format!("{summary}\n\n{detail}"),
        (Some(only), None) | (None, Some(only)) => only.to_owned(),
        (None, None) => format!("{method} {path}"),
    };
    if operation.get("deprecated") == Some(&Value::Bool(true)) {
        description.insert_str(0, "Deprecated. ");
    }
    let title = summary.map(|summary| summary.chars().take(200).collect());
    (title, cut_bytes(&description, MAX_DESCRIPTION_BYTES))
}

/// A media type JSON is sent and read as: `application/json` or any `…+json`.
pub(crate) fn is_json(media: &str) -> bool {
    let essence = media
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence == "application/json" || essence.ends_with("+json") || essence == "*/*"
}

/// A property name every provider accepts: `[A-Za-z0-9_.-]`, 1 to 64 long.
fn property_name(wire: &str) -> String {
    let mut name: String = wire
        .chars()
        .map(|ch| {
            if ch.is_ascii_alphanumeric() || matches!(ch, '_' | '.' | '-') {
                ch
            } else {
                '_'
            }
        })
        .take(MAX_ARGUMENT_NAME)
        .collect();
    if name.is_empty() {
        name.push('_');
    }
    name
}

/// `text` cut to at most `max` bytes, on a character boundary, marked when cut.
pub(crate) fn cut_bytes(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max.saturating_sub('…'.len_utf8());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// An ASCII name cut to `max` bytes.
fn cut_ascii(name: &str, max: usize) -> &str {
    &name[..name.len().min(max)]
}
