//! Answering a tool's questions on the terminal: a form is filled in field by field, the roots
//! are the working directory, and sampling is refused (the command line has no model). `call`
//! attaches [`TerminalAnswerer`] when standard input is a terminal; otherwise a tool that asks
//! fails with `INPUT_UNAVAILABLE`.

use std::fmt::Write as _;
use std::io::{BufRead, Read as _, Write};

use serde_json::{Map, Value, json};
use toolprism::BoxFuture;
use toolprism::ask::{Answerer, AskError, InputKind, InputRequest};

use crate::visible::visible;

/// The longest line read for one field, in bytes.
pub const MAX_ANSWER_BYTES: u64 = 64 * 1024;
/// How many times a field is asked again after an answer that does not parse.
const ATTEMPTS: usize = 5;

/// Answers on the process's terminal. The progress bar, if any, is hidden while it asks.
#[derive(Clone, Debug, Default)]
pub struct TerminalAnswerer {
    bar: Option<indicatif::ProgressBar>,
}

impl TerminalAnswerer {
    /// An answerer that hides `bar` while it asks.
    pub fn new(bar: Option<indicatif::ProgressBar>) -> Self {
        Self { bar }
    }
}

impl Answerer for TerminalAnswerer {
    fn can_answer(&self, kind: InputKind) -> bool {
        matches!(kind, InputKind::Elicitation | InputKind::Roots)
    }

    fn answer<'a>(
        &'a self,
        _key: &'a str,
        request: &'a InputRequest,
    ) -> BoxFuture<'a, Result<Value, AskError>> {
        Box::pin(async move {
            match request.kind() {
                InputKind::Elicitation => {
                    let params = request.params().clone();
                    let bar = self.bar.clone();
                    // Reading the terminal blocks: off the runtime's workers.
                    tokio::task::spawn_blocking(move || {
                        // The bar is hidden, not suspended: suspending holds its lock, and a
                        // progress report would then wait for the person to answer.
                        if let Some(bar) = &bar {
                            bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
                        }
                        let stdin = std::io::stdin();
                        let answered = fill_in(&params, &mut stdin.lock(), &mut std::io::stderr());
                        if let Some(bar) = &bar {
                            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
                        }
                        answered
                    })
                    .await
                    .map_err(|error| AskError::Failed(error.to_string()))?
                    .map_err(|error| AskError::Failed(error.to_string()))
                }
                InputKind::Roots => {
                    let here = std::env::current_dir()
                        .map_err(|error| AskError::Failed(error.to_string()))?;
                    Ok(json!({"roots": [{
                        "uri": file_uri(&here.to_string_lossy()),
                        "name": "working directory",
                    }]}))
                }
                _ => Err(AskError::Unavailable(
                    "the command line has no model to ask for a completion".into(),
                )),
            }
        })
    }
}

/// A `file://` URI of an absolute path, bytes outside RFC 3986's unreserved set and `/`
/// percent-encoded.
fn file_uri(path: &str) -> String {
    let mut uri = String::from("file://");
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            uri.push(char::from(byte));
        } else {
            let _ = write!(uri, "%{byte:02X}");
        }
    }
    uri
}

/// Asks for the form `params` describes (`message`, `requestedSchema`) on `output`, reading
/// answers from `input`; the MCP `ElicitResult` of what was answered. End of input is a
/// cancel.
pub fn fill_in(
    params: &Value,
    input: &mut impl BufRead,
    output: &mut impl Write,
) -> std::io::Result<Value> {
    let message = params.get("message").and_then(Value::as_str).unwrap_or("");
    writeln!(output, "\n{}", visible(message))?;
    if params.get("mode").and_then(Value::as_str) == Some("url") {
        return consent_to_url(params, input, output);
    }
    writeln!(
        output,
        "Enter fills it in, `n` declines, end of input (Ctrl-D) cancels."
    )?;
    match read_line(input)? {
        None => return Ok(json!({"action": "cancel"})),
        Some(line) if line.eq_ignore_ascii_case("n") => return Ok(json!({"action": "decline"})),
        Some(_) => {}
    }
    let schema = params.get("requestedSchema").unwrap_or(&Value::Null);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let empty = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let mut content = Map::new();
    for (name, property) in properties {
        let is_required = required.contains(&name.as_str());
        match ask_field(name, property, is_required, input, output)? {
            Field::Answered(value) => {
                content.insert(name.clone(), value);
            }
            Field::Skipped => {}
            Field::Ended => return Ok(json!({"action": "cancel"})),
        }
    }
    Ok(json!({"action": "accept", "content": content}))
}

/// A URL-mode request: the address shown, and whether the person agrees to go there.
fn consent_to_url(
    params: &Value,
    input: &mut impl BufRead,
    output: &mut impl Write,
) -> std::io::Result<Value> {
    let url = params.get("url").and_then(Value::as_str).unwrap_or("");
    writeln!(output, "It asks you to open {}", visible(url))?;
    writeln!(
        output,
        "`y` agrees (open it yourself), Enter or `n` declines, end of input cancels."
    )?;
    Ok(match read_line(input)? {
        None => json!({"action": "cancel"}),
        Some(line) if line.eq_ignore_ascii_case("y") => json!({"action": "accept"}),
        Some(_) => json!({"action": "decline"}),
    })
}

/// What came of asking one field.
enum Field {
    Answered(Value),
    Skipped,
    Ended,
}

fn ask_field(
    name: &str,
    property: &Value,
    required: bool,
    input: &mut impl BufRead,
    output: &mut impl Write,
) -> std::io::Result<Field> {
    let label = property
        .get("title")
        .and_then(Value::as_str)
        .unwrap_or(name);
    let choices = choices_of(property);
    let mut prompt = visible(label).into_owned();
    if let Some(description) = property.get("description").and_then(Value::as_str) {
        let _ = write!(prompt, " ({})", visible(description));
    }
    for (index, (_, title)) in choices.iter().enumerate() {
        let _ = write!(prompt, "\n  {}. {}", index + 1, visible(title));
    }
    if let Some(default) = property.get("default") {
        let _ = write!(prompt, " [{}]", visible(&default.to_string()));
    } else if !required {
        prompt.push_str(" [optional]");
    }
    for _ in 0..ATTEMPTS {
        write!(output, "{prompt}: ")?;
        output.flush()?;
        let Some(line) = read_line(input)? else {
            return Ok(Field::Ended);
        };
        if line.is_empty() {
            if let Some(default) = property.get("default") {
                return Ok(Field::Answered(default.clone()));
            }
            if !required {
                return Ok(Field::Skipped);
            }
            writeln!(output, "  an answer is required")?;
            continue;
        }
        match parse(&line, property, &choices) {
            Ok(value) => return Ok(Field::Answered(value)),
            Err(why) => writeln!(output, "  {why}")?,
        }
    }
    Ok(Field::Ended)
}

/// A property's choices, as (value, title): `enum` (titled by `enumNames` if given), `oneOf`
/// of `const`s, or the same in an array's `items`.
fn choices_of(property: &Value) -> Vec<(Value, String)> {
    let source = match property.get("type").and_then(Value::as_str) {
        Some("array") => property.get("items").unwrap_or(&Value::Null),
        _ => property,
    };
    if let Some(values) = source.get("enum").and_then(Value::as_array) {
        let names = source.get("enumNames").and_then(Value::as_array);
        return values
            .iter()
            .enumerate()
            .map(|(index, value)| {
                let title = names
                    .and_then(|names| names.get(index))
                    .and_then(Value::as_str)
                    .map_or_else(|| plain(value), str::to_owned);
                (value.clone(), title)
            })
            .collect();
    }
    let branches = source
        .get("oneOf")
        .or_else(|| source.get("anyOf"))
        .and_then(Value::as_array);
    branches
        .into_iter()
        .flatten()
        .filter_map(|branch| {
            let value = branch.get("const")?.clone();
            let title = branch
                .get("title")
                .and_then(Value::as_str)
                .map_or_else(|| plain(&value), str::to_owned);
            Some((value, title))
        })
        .collect()
}

/// A value as a person types it: a string without its quotes.
fn plain(value: &Value) -> String {
    value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_owned)
}

/// A typed line as the property's value; why not, if it is not one.
fn parse(line: &str, property: &Value, choices: &[(Value, String)]) -> Result<Value, String> {
    let pick = |word: &str| -> Result<Value, String> {
        if let Ok(number) = word.parse::<usize>()
            && let Some((value, _)) = number.checked_sub(1).and_then(|index| choices.get(index))
        {
            return Ok(value.clone());
        }
        choices
            .iter()
            .find(|(value, title)| plain(value) == word || title == word)
            .map(|(value, _)| value.clone())
            .ok_or_else(|| format!("`{}` is none of the choices", visible(word)))
    };
    match property.get("type").and_then(Value::as_str) {
        Some("array") => line
            .split(',')
            .map(|word| pick(word.trim()))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        _ if !choices.is_empty() => pick(line),
        Some("boolean") => match line.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Ok(Value::Bool(true)),
            "n" | "no" | "false" => Ok(Value::Bool(false)),
            _ => Err("answer yes or no".into()),
        },
        Some("integer") => line
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| "a whole number, please".into()),
        Some("number") => line
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| "a number, please".into()),
        _ => Ok(Value::String(line.to_owned())),
    }
}

/// One line, its end trimmed, at most [`MAX_ANSWER_BYTES`]; `None` at the end of input.
fn read_line(input: &mut impl BufRead) -> std::io::Result<Option<String>> {
    let mut bytes = Vec::new();
    let read = input
        .by_ref()
        .take(MAX_ANSWER_BYTES)
        .read_until(b'\n', &mut bytes)?;
    if read == 0 {
        return Ok(None);
    }
    if bytes.last() != Some(&b'\n') && read as u64 == MAX_ANSWER_BYTES {
        // The rest of an overlong line is not taken as the next answer.
        let mut rest = Vec::new();
        input.read_until(b'\n', &mut rest)?;
    }
    let line = String::from_utf8_lossy(&bytes);
    Ok(Some(line.trim_end_matches(['\n', '\r']).to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(params: &Value, typed: &str) -> (Value, String) {
        let mut shown = Vec::new();
        let result = fill_in(params, &mut typed.as_bytes(), &mut shown).unwrap();
        (result, String::from_utf8(shown).unwrap())
    }

    fn form() -> Value {
        json!({
            "message": "Ship it?",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "parcels": {"type": "integer", "description": "How many"},
                    "express": {"type": "boolean", "default": false},
                    "colour": {"type": "string", "oneOf": [
                        {"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}]},
                    "note": {"type": "string"},
                    "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}},
                },
                "required": ["parcels", "colour"],
            },
        })
    }

    #[test]
    fn a_form_is_filled_in_field_by_field() {
        // Fields come in name order: colour, express, note, parcels, tags.
        let (result, shown) = answer(&form(), "\nGreen\n\n\nthree\n3\na, c\n");
        assert_eq!(
            result,
            json!({"action": "accept", "content": {
                "colour": "g", "express": false, "parcels": 3, "tags": ["a", "c"]}})
        );
        assert!(
            shown.contains("Ship it?") && shown.contains("2. Green"),
            "{shown}"
        );
        assert!(shown.contains("a whole number, please"), "{shown}");
    }

    #[test]
    fn n_declines_and_the_end_of_input_cancels() {
        assert_eq!(answer(&form(), "n\n").0, json!({"action": "decline"}));
        assert_eq!(answer(&form(), "").0, json!({"action": "cancel"}));
        assert_eq!(answer(&form(), "\n2\n").0, json!({"action": "cancel"}));
    }

    #[test]
    fn a_required_field_is_asked_again_and_given_up_on() {
        let (result, shown) = answer(&form(), "\n\n\n\n\n\n\n");
        assert_eq!(result, json!({"action": "cancel"}));
        assert_eq!(shown.matches("an answer is required").count(), ATTEMPTS);
    }

    #[test]
    fn an_overlong_line_is_cut_and_its_rest_not_taken_as_the_next_answer() {
        let schema = json!({"message": "", "requestedSchema": {"type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}});
        let long = "x".repeat(usize::try_from(MAX_ANSWER_BYTES).unwrap() + 10);
        let (result, _) = answer(&schema, &format!("\n{long}\nsecond\n"));
        let a = result["content"]["a"].as_str().unwrap();
        assert_eq!(a.len() as u64, MAX_ANSWER_BYTES);
        assert_eq!(result["content"]["b"], "second");
    }

    #[test]
    fn a_url_is_shown_and_only_a_yes_agrees_to_it() {
        let params =
            json!({"mode": "url", "message": "Sign in", "url": "https://example.com/\u{1b}[2J"});
        let (result, shown) = answer(&params, "y\n");
        assert_eq!(result, json!({"action": "accept"}));
        assert!(shown.contains("https://example.com/\\u{1b}[2J"), "{shown}");
        assert_eq!(answer(&params, "\n").0, json!({"action": "decline"}));
        assert_eq!(answer(&params, "").0, json!({"action": "cancel"}));
    }

    #[test]
    fn a_root_uri_encodes_what_a_path_may_hold() {
        assert_eq!(
            file_uri("/home/ada/my project"),
            "file:///home/ada/my%20project"
        );
    }
}
