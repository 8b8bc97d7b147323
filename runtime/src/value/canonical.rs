//! One text per JSON value: object keys sorted, no whitespace. Two values that are equal as
//! JSON (`{"a":1,"b":2}` and `{"b":2,"a":1}`) have the same text, whatever order a map keeps
//! (`serde_json`'s `preserve_order` may be on anywhere in a build), so a hash of it names the
//! value.

use serde_json::Value;

use crate::depth::{TooDeep, check_depth};

/// The canonical text of `value`: object keys sorted by their UTF-8 bytes, no whitespace,
/// strings and numbers as `serde_json` writes them. A value nesting deeper than
/// [`MAX_DEPTH`](crate::depth::MAX_DEPTH) is refused before any recursion.
///
/// ```
/// use serde_json::json;
/// use toolprism::value::canonical_json;
///
/// let a = canonical_json(&json!({"b": [1, {"d": null, "c": "x"}], "a": true})).unwrap();
/// assert_eq!(a, r#"{"a":true,"b":[1,{"c":"x","d":null}]}"#);
/// ```
pub fn canonical_json(value: &Value) -> Result<String, TooDeep> {
    check_depth(value)?;
    let mut text = String::new();
    write(value, &mut text);
    Ok(text)
}

/// Writes `value` (already within the depth limit) in canonical form.
fn write(value: &Value, text: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|(a, _), (b, _)| a.as_bytes().cmp(b.as_bytes()));
            text.push('{');
            for (at, (key, item)) in entries.into_iter().enumerate() {
                if at > 0 {
                    text.push(',');
                }
                text.push_str(&Value::String(key.clone()).to_string());
                text.push(':');
                write(item, text);
            }
            text.push('}');
        }
        Value::Array(items) => {
            text.push('[');
            for (at, item) in items.iter().enumerate() {
                if at > 0 {
                    text.push(',');
                }
                write(item, text);
            }
            text.push(']');
        }
        scalar => text.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, json};

    use super::*;

    #[test]
    fn key_order_does_not_change_the_text() {
        let mut forward = Map::new();
        let mut backward = Map::new();
        for key in ["z", "é", "a", "A", "10", "9"] {
            forward.insert(key.to_owned(), json!(key));
        }
        for key in ["9", "10", "A", "a", "é", "z"] {
            backward.insert(key.to_owned(), json!(key));
        }
        let (forward, backward) = (Value::Object(forward), Value::Object(backward));
        assert_eq!(
            canonical_json(&forward).unwrap(),
            canonical_json(&backward).unwrap()
        );
        assert_eq!(
            canonical_json(&json!({"\"q": "\u{1}"})).unwrap(),
            r#"{"\"q":"\u0001"}"#
        );
    }

    #[test]
    fn too_deep_is_refused_before_writing() {
        let mut deep = json!(0);
        for _ in 0..=crate::depth::MAX_DEPTH {
            deep = json!({ "a": deep });
        }
        assert!(canonical_json(&deep).is_err());
    }
}
