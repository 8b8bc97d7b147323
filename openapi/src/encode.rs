//! Argument values as the pieces of a request, the way OpenAPI's `style` and `explode` say:
//! path segments, query pairs, header and cookie values. Everything but RFC 3986's unreserved
//! characters is percent-encoded, so a value can never add a path segment, a query pair or a
//! header line; what cannot be encoded faithfully is refused, never altered.

use std::fmt::Write as _;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::Value;

/// Everything but `A-Z a-z 0-9 - . _ ~` (RFC 3986's unreserved characters) is encoded.
const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// How a parameter's value is laid out (OpenAPI's `style`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Style {
    Simple,
    Label,
    Matrix,
    Form,
    SpaceDelimited,
    PipeDelimited,
    DeepObject,
}

impl Style {
    /// The style a document names; `None` for one OpenAPI does not define.
    pub(crate) fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "simple" => Self::Simple,
            "label" => Self::Label,
            "matrix" => Self::Matrix,
            "form" => Self::Form,
            "spaceDelimited" => Self::SpaceDelimited,
            "pipeDelimited" => Self::PipeDelimited,
            "deepObject" => Self::DeepObject,
            _ => return None,
        })
    }
}

/// A value's scalar parts as text: strings as they are, numbers and booleans as JSON writes
/// them. An array or object nested in another cannot be laid out by any style.
fn scalar(value: &Value, name: &str) -> Result<String, String> {
    match value {
        Value::String(text) => Ok(text.clone()),
        Value::Number(number) => Ok(number.to_string()),
        Value::Bool(flag) => Ok(flag.to_string()),
        Value::Null => Ok(String::new()),
        Value::Array(_) | Value::Object(_) => Err(format!(
            "the argument `{name}` nests an array or object inside another, which its parameter's style cannot encode"
        )),
    }
}

pub(crate) fn encoded(text: &str) -> String {
    utf8_percent_encode(text, UNRESERVED).to_string()
}

/// A value's parts: `[scalar]`, an array's items, or an object's keys and values in turn.
enum Parts {
    Scalar(String),
    List(Vec<String>),
    Pairs(Vec<(String, String)>),
}

fn parts(value: &Value, name: &str) -> Result<Parts, String> {
    Ok(match value {
        Value::Array(items) => Parts::List(
            items
                .iter()
                .map(|item| scalar(item, name))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => Parts::Pairs(
            map.iter()
                .map(|(key, item)| Ok((key.clone(), scalar(item, name)?)))
                .collect::<Result<_, String>>()?,
        ),
        other => Parts::Scalar(scalar(other, name)?),
    })
}

/// A path parameter's value as the text that replaces `{name}` in the path.
pub(crate) fn path_value(
    name: &str,
    value: &Value,
    style: Style,
    explode: bool,
) -> Result<String, String> {
    let parts = parts(value, name)?;
    let wire = encoded(name);
    Ok(match style {
        Style::Label => {
            let separator = if explode { "." } else { "," };
            format!(
                ".{}",
                joined(&parts, separator, if explode { "=" } else { "," })
            )
        }
        Style::Matrix => match &parts {
            Parts::Scalar(text) if text.is_empty() => format!(";{wire}"),
            Parts::Scalar(text) => format!(";{wire}={}", encoded(text)),
            Parts::List(items) if explode => items.iter().fold(String::new(), |mut out, item| {
                let _ = write!(out, ";{wire}={}", encoded(item));
                out
            }),
            Parts::Pairs(pairs) if explode => {
                pairs.iter().fold(String::new(), |mut out, (key, item)| {
                    let _ = write!(out, ";{}={}", encoded(key), encoded(item));
                    out
                })
            }
            _ => format!(";{wire}={}", joined(&parts, ",", ",")),
        },
        _ => joined(&parts, ",", if explode { "=" } else { "," }),
    })
}

/// Refuses a path whose arguments made a segment empty, `.` or `..` where its template has
/// none: that would ask for another resource than the operation's. Separators are always
/// percent-encoded, so `built` has the template's segments, one for one.
pub(crate) fn check_segments(template: &str, built: &str) -> Result<(), String> {
    for (written, made) in template.split('/').zip(built.split('/')) {
        if written != made && matches!(made, "" | "." | "..") {
            return Err(format!(
                "the path arguments make the segment `{written}` {}: that would change the request's path",
                if made.is_empty() {
                    "empty".to_owned()
                } else {
                    format!("`{made}`")
                }
            ));
        }
    }
    Ok(())
}

/// Parts joined: list items by `separator`, object pairs as key `pair` value, by `separator`.
fn joined(parts: &Parts, separator: &str, pair: &str) -> String {
    match parts {
        Parts::Scalar(text) => encoded(text),
        Parts::List(items) => items
            .iter()
            .map(|item| encoded(item))
            .collect::<Vec<_>>()
            .join(separator),
        Parts::Pairs(pairs) => pairs
            .iter()
            .map(|(key, item)| format!("{}{pair}{}", encoded(key), encoded(item)))
            .collect::<Vec<_>>()
            .join(separator),
    }
}

/// A query parameter's value as `name=value` pairs, already encoded.
pub(crate) fn query_pairs(
    name: &str,
    value: &Value,
    style: Style,
    explode: bool,
) -> Result<Vec<String>, String> {
    let wire = encoded(name);
    let parts = parts(value, name)?;
    Ok(match (style, &parts) {
        (_, Parts::Scalar(text)) => vec![format!("{wire}={}", encoded(text))],
        (Style::DeepObject, Parts::Pairs(pairs)) => pairs
            .iter()
            .map(|(key, item)| format!("{wire}%5B{}%5D={}", encoded(key), encoded(item)))
            .collect(),
        (Style::DeepObject, Parts::List(_)) => {
            return Err(format!(
                "the argument `{name}` is an array, which the deepObject style cannot encode"
            ));
        }
        (Style::Form | Style::SpaceDelimited | Style::PipeDelimited, Parts::List(items))
            if explode =>
        {
            items
                .iter()
                .map(|item| format!("{wire}={}", encoded(item)))
                .collect()
        }
        (Style::SpaceDelimited | Style::PipeDelimited, Parts::Pairs(_)) if explode => {
            return Err(format!(
                "the argument `{name}` is an object, which an exploded {style:?} style cannot encode"
            ));
        }
        (Style::Form, Parts::List(items)) if explode => items
            .iter()
            .map(|item| format!("{wire}={}", encoded(item)))
            .collect(),
        (Style::Form, Parts::Pairs(pairs)) if explode => pairs
            .iter()
            .map(|(key, item)| format!("{}={}", encoded(key), encoded(item)))
            .collect(),
        (Style::SpaceDelimited, _) => vec![format!("{wire}={}", joined(&parts, "%20", "%20"))],
        (Style::PipeDelimited, _) => vec![format!("{wire}={}", joined(&parts, "%7C", "%7C"))],
        _ => vec![format!("{wire}={}", joined(&parts, ",", ","))],
    })
}

/// A header parameter's value (style `simple`): not percent-encoded, so a value a header
/// cannot hold (a line break, a control character) is refused.
pub(crate) fn header_value(name: &str, value: &Value, explode: bool) -> Result<String, String> {
    let text = match parts(value, name)? {
        Parts::Scalar(text) => text,
        Parts::List(items) => items.join(","),
        Parts::Pairs(pairs) => pairs
            .iter()
            .map(|(key, item)| {
                if explode {
                    format!("{key}={item}")
                } else {
                    format!("{key},{item}")
                }
            })
            .collect::<Vec<_>>()
            .join(","),
    };
    if text
        .bytes()
        .any(|byte| byte.is_ascii_control() && byte != b'\t' || !byte.is_ascii())
    {
        return Err(format!(
            "the header argument `{name}` holds a control or non-ASCII character, which a header cannot carry"
        ));
    }
    Ok(text)
}

/// A cookie parameter's value as `name=value` (style `form`), the value percent-encoded.
pub(crate) fn cookie_pair(name: &str, value: &Value) -> Result<String, String> {
    let parts = parts(value, name)?;
    Ok(format!("{}={}", encoded(name), joined(&parts, ",", ",")))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn path_styles_follow_the_specification_table() {
        let array = json!([3, 4, 5]);
        let object = json!({"firstName": "Alex", "role": "admin"});
        let cases = [
            (Style::Simple, false, &array, "3,4,5"),
            (Style::Simple, true, &object, "firstName=Alex,role=admin"),
            (Style::Simple, false, &object, "firstName,Alex,role,admin"),
            (Style::Label, false, &array, ".3,4,5"),
            (Style::Label, true, &array, ".3.4.5"),
            (Style::Matrix, false, &array, ";id=3,4,5"),
            (Style::Matrix, true, &array, ";id=3;id=4;id=5"),
            (Style::Matrix, true, &object, ";firstName=Alex;role=admin"),
        ];
        for (style, explode, value, expected) in cases {
            assert_eq!(
                path_value("id", value, style, explode).unwrap(),
                expected,
                "{style:?} explode={explode}"
            );
        }
    }

    #[test]
    fn reserved_characters_cannot_reach_the_path_or_query_as_delimiters() {
        let hostile = json!("a/../b?c=d&e#f g%2F");
        assert_eq!(
            path_value("name", &hostile, Style::Simple, false).unwrap(),
            "a%2F..%2Fb%3Fc%3Dd%26e%23f%20g%252F"
        );
        assert_eq!(
            query_pairs("q", &hostile, Style::Form, true).unwrap(),
            ["q=a%2F..%2Fb%3Fc%3Dd%26e%23f%20g%252F"]
        );
        for segment in ["", ".", ".."] {
            let text = path_value("name", &json!(segment), Style::Simple, false).unwrap();
            let error = check_segments("/files/{name}", &format!("/files/{text}")).unwrap_err();
            assert!(error.contains("change the request's path"), "{error}");
        }
        // Whatever the style: a label's empty value, an array joined to `..`, two arguments
        // meeting in one segment.
        let label = path_value("name", &json!(""), Style::Label, false).unwrap();
        assert!(check_segments("/a/{name}", &format!("/a/{label}")).is_err());
        let joined = path_value("name", &json!([".", ""]), Style::Simple, false).unwrap();
        assert_eq!(joined, ".,");
        let parts = path_value("name", &json!([".."]), Style::Simple, false).unwrap();
        assert!(check_segments("/a/{name}/b", &format!("/a/{parts}/b")).is_err());
        assert!(check_segments("/a/{x}{y}", "/a/..").is_err());
        assert!(check_segments("/a/{x}.json", "/a/..json").is_ok());
        assert!(check_segments("/a/./{x}", "/a/./b").is_ok());
    }

    #[test]
    fn query_styles_follow_the_specification_table() {
        let array = json!(["blue", "black"]);
        let object = json!({"G": 200, "R": 100});
        assert_eq!(
            query_pairs("color", &array, Style::Form, true).unwrap(),
            ["color=blue", "color=black"]
        );
        assert_eq!(
            query_pairs("color", &array, Style::Form, false).unwrap(),
            ["color=blue,black"]
        );
        assert_eq!(
            query_pairs("color", &object, Style::Form, true).unwrap(),
            ["G=200", "R=100"]
        );
        assert_eq!(
            query_pairs("color", &array, Style::SpaceDelimited, false).unwrap(),
            ["color=blue%20black"]
        );
        assert_eq!(
            query_pairs("color", &array, Style::PipeDelimited, false).unwrap(),
            ["color=blue%7Cblack"]
        );
        assert_eq!(
            query_pairs("color", &object, Style::DeepObject, true).unwrap(),
            ["color%5BG%5D=200", "color%5BR%5D=100"]
        );
        assert_eq!(
            query_pairs("color", &array, Style::PipeDelimited, true).unwrap(),
            ["color=blue", "color=black"]
        );
        assert_eq!(
            path_value("color", &json!(""), Style::Matrix, false).unwrap(),
            ";color"
        );
        let nested = query_pairs("color", &json!([[1]]), Style::Form, true).unwrap_err();
        assert!(nested.contains("nests an array"), "{nested}");
    }

    #[test]
    fn headers_refuse_line_breaks_and_cookies_are_encoded() {
        let error = header_value("X-Trace", &json!("a\r\nSet-Cookie: x=1"), false).unwrap_err();
        assert!(error.contains("control"), "{error}");
        assert_eq!(header_value("X-Ids", &json!([1, 2]), false).unwrap(), "1,2");
        assert_eq!(
            cookie_pair("session", &json!("a; b=c")).unwrap(),
            "session=a%3B%20b%3Dc"
        );
    }
}
