//! Inlining local `$ref`s: for compiling validators without reference hops, and for provider
//! dialects that have no `$ref` at all.

use serde_json::{Map, Value};

use super::refs::resolve;

/// Why a schema's references could not all be inlined.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InlineError {
    /// A reference leads back to itself: the type is recursive and has no finite inlining.
    #[error(
        "`$ref` `{reference}` is recursive (the type contains itself), so it cannot be inlined"
    )]
    Recursive {
        /// The reference.
        reference: String,
    },
    /// A reference that is not a JSON Pointer into the same document.
    #[error("`$ref` `{reference}` does not point into this schema")]
    Unresolvable {
        /// The reference.
        reference: String,
    },
    /// Inlining would grow the schema past the node budget (shared definitions multiply).
    #[error("inlining every `$ref` would make the schema larger than {budget} nodes")]
    TooLarge {
        /// The budget.
        budget: usize,
    },
    /// Inlining would nest the schema deeper than [`MAX_DEPTH`](crate::depth::MAX_DEPTH).
    #[error(
        "inlining every `$ref` would nest the schema deeper than {} levels",
        crate::depth::MAX_DEPTH
    )]
    TooDeep,
}

/// `schema` with every local `$ref` replaced by what it points to, and the definitions
/// (`$defs`, `definitions`) dropped from the root. At most `max_nodes` nodes are built.
///
/// Keywords beside a `$ref` are kept: merged into the inlined schema when they do not clash
/// with it, else joined with it under `allOf` (as draft 2020-12 means them). Under draft-07
/// (`draft_07`), keywords beside a `$ref` are ignored, as that draft says.
///
/// ```
/// use serde_json::json;
/// use toolprism::schema::inline_refs;
///
/// let schema = json!({
///     "type": "object",
///     "properties": {"at": {"$ref": "#/$defs/Point"}},
///     "$defs": {"Point": {"type": "array", "items": {"type": "number"}}}
/// });
/// assert_eq!(
///     inline_refs(&schema, false, 1_000).unwrap(),
///     json!({"type": "object", "properties": {"at": {"type": "array", "items": {"type": "number"}}}}),
/// );
/// ```
pub fn inline_refs(schema: &Value, draft_07: bool, max_nodes: usize) -> Result<Value, InlineError> {
    let mut inliner = Inliner {
        root: schema,
        draft_07,
        stack: Vec::new(),
        nodes_left: max_nodes,
        budget: max_nodes,
    };
    let mut result = inliner.walk(schema, 0)?;
    // A `$ref` with siblings becomes an `allOf`, two levels the walk did not count.
    if crate::depth::check_depth(&result).is_err() {
        crate::depth::dispose(result);
        return Err(InlineError::TooDeep);
    }
    if let Value::Object(map) = &mut result {
        map.remove("$defs");
        map.remove("definitions");
    }
    Ok(result)
}

struct Inliner<'a> {
    root: &'a Value,
    draft_07: bool,
    stack: Vec<&'a str>,
    nodes_left: usize,
    budget: usize,
}

impl<'a> Inliner<'a> {
    fn spend(&mut self) -> Result<(), InlineError> {
        self.nodes_left = self
            .nodes_left
            .checked_sub(1)
            .ok_or(InlineError::TooLarge {
                budget: self.budget,
            })?;
        Ok(())
    }

    /// Inlines `node`, which will sit `depth` levels deep in the result.
    fn walk(&mut self, node: &'a Value, depth: usize) -> Result<Value, InlineError> {
        self.spend()?;
        match node {
            Value::Object(map) => match map.get("$ref") {
                Some(Value::String(reference)) => self.inline(reference, map, depth),
                _ => self.walk_object(map, false, depth),
            },
            Value::Array(items) => {
                let depth = Self::deeper(depth)?;
                items.iter().map(|item| self.walk(item, depth)).collect()
            }
            other => Ok(other.clone()),
        }
    }

    fn deeper(depth: usize) -> Result<usize, InlineError> {
        if depth >= crate::depth::MAX_DEPTH {
            return Err(InlineError::TooDeep);
        }
        Ok(depth + 1)
    }

    fn walk_object(
        &mut self,
        map: &'a Map<String, Value>,
        skip_ref: bool,
        depth: usize,
    ) -> Result<Value, InlineError> {
        let depth = Self::deeper(depth)?;
        let mut out = Map::new();
        for (key, value) in map {
            if skip_ref && key == "$ref" {
                continue;
            }
            let value = if super::DATA_KEYWORDS.contains(&key.as_str()) {
                // Data is copied as it is; the document it comes from is within the limit.
                value.clone()
            } else {
                self.walk(value, depth)?
            };
            out.insert(key.clone(), value);
        }
        Ok(Value::Object(out))
    }

    fn inline(
        &mut self,
        reference: &'a str,
        map: &'a Map<String, Value>,
        depth: usize,
    ) -> Result<Value, InlineError> {
        if self.stack.contains(&reference) {
            return Err(InlineError::Recursive {
                reference: reference.to_owned(),
            });
        }
        let target = resolve(self.root, reference).ok_or_else(|| InlineError::Unresolvable {
            reference: reference.to_owned(),
        })?;
        self.stack.push(reference);
        let inlined = self.walk(target, depth);
        self.stack.pop();
        let inlined = inlined?;
        let has_siblings = map.keys().any(|key| key != "$ref");
        if self.draft_07 || !has_siblings {
            return Ok(inlined);
        }
        let Value::Object(siblings) = self.walk_object(map, true, depth + 1)? else {
            return Ok(inlined);
        };
        // Annotations beside the `$ref` (a field's own description) win over the target's;
        // any other keyword both sides have must be kept as a conjunction.
        let clashes = |merged: &Map<String, Value>| {
            siblings.iter().any(|(key, value)| {
                !super::ANNOTATIONS.contains(&key.as_str())
                    && merged.get(key).is_some_and(|other| other != value)
            })
        };
        match inlined {
            Value::Object(mut merged) if !clashes(&merged) => {
                merged.extend(siblings);
                Ok(Value::Object(merged))
            }
            inlined => Ok(serde_json::json!({"allOf": [inlined, Value::Object(siblings)]})),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn recursion_is_an_error_not_a_loop() {
        let schema = json!({"$ref": "#/$defs/Tree", "$defs": {"Tree": {
            "type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}}
        }}});
        assert_eq!(
            inline_refs(&schema, false, 10_000),
            Err(InlineError::Recursive {
                reference: "#/$defs/Tree".into()
            })
        );
        assert!(matches!(
            inline_refs(&json!({"$ref": "#"}), false, 100),
            Err(InlineError::Recursive { .. })
        ));
    }

    #[test]
    fn shared_definitions_that_multiply_hit_the_budget() {
        // Each level refers to the next twice: 2^30 nodes if inlined.
        let mut defs = serde_json::Map::new();
        for level in 0..30 {
            defs.insert(
                format!("L{level}"),
                json!({"type": "array", "prefixItems": [{"$ref": format!("#/$defs/L{}", level + 1)}, {"$ref": format!("#/$defs/L{}", level + 1)}]}),
            );
        }
        defs.insert("L30".into(), json!({"type": "null"}));
        let schema = json!({"$ref": "#/$defs/L0", "$defs": defs});
        assert_eq!(
            inline_refs(&schema, false, 10_000),
            Err(InlineError::TooLarge { budget: 10_000 })
        );
    }

    #[test]
    fn siblings_of_a_ref_are_kept_and_data_is_left_alone() {
        let schema = json!({
            "properties": {
                "a": {"$ref": "#/$defs/A", "description": "An A."},
                "b": {"$ref": "#/$defs/A", "type": "string"},
                "c": {"const": {"$ref": "#/not/a/ref"}}
            },
            "$defs": {"A": {"type": "integer"}}
        });
        let inlined = inline_refs(&schema, false, 1_000).unwrap();
        assert_eq!(
            inlined["properties"]["a"],
            json!({"type": "integer", "description": "An A."})
        );
        assert_eq!(
            inlined["properties"]["b"],
            json!({"allOf": [{"type": "integer"}, {"type": "string"}]})
        );
        assert_eq!(
            inlined["properties"]["c"],
            json!({"const": {"$ref": "#/not/a/ref"}})
        );
        let draft_07 = inline_refs(&schema, true, 1_000).unwrap();
        assert_eq!(draft_07["properties"]["b"], json!({"type": "integer"}));
    }
}
