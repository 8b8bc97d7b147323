//! A value checked against its output schema's plan while the lossless snapshot builds it.

use std::cell::Cell;

use serde_json::Value;

use crate::schema::{Expect, Plan};

use super::LosslessError;

/// One value checked against a plan, if there is one, as it is serialized.
pub(crate) struct Checked<'p> {
    plan: Option<&'p Plan>,
    doubt: Cell<bool>,
}

impl<'p> Checked<'p> {
    pub(crate) fn new(plan: Option<&'p Plan>) -> Self {
        Self {
            plan,
            doubt: Cell::new(false),
        }
    }

    /// What the serializer checks at the root.
    pub(crate) fn expect(&self) -> Expect<'_> {
        match self.plan {
            Some(plan) => Expect::new(plan, &self.doubt),
            None => Expect::NOTHING,
        }
    }

    /// The serialized value, and whether the plan accepted it (`None`: there was no plan).
    pub(crate) fn finish(
        &self,
        serialized: Result<Value, LosslessError>,
    ) -> Result<(Value, Option<bool>), LosslessError> {
        serialized.map(|json| (json, self.plan.map(|_| !self.doubt.get())))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use schemars::JsonSchema;
    use serde::Serialize;
    use serde_json::{Value, json};

    use super::Checked;
    use crate::schema::{Expect, SchemaRole, compile, input_schema_for, output_schema_for};
    use crate::value::{LosslessError, to_checked_value};

    /// Whether the plan of `schema` accepts `value` as it is serialized (`None`: no plan), and
    /// whether the validator does. The plan's walk of the serialized JSON (what arguments get)
    /// accepts whatever the snapshot accepted, and nothing the validator refuses.
    fn judged<T: Serialize>(schema: &Value, value: &T) -> (Option<bool>, bool) {
        let compiled = compile(schema, SchemaRole::Output).expect("a supported schema");
        let json = serde_json::to_value(value).unwrap();
        let valid = compiled.validator.is_valid(&json);
        let accepted = compiled.plan.as_ref().map(|plan| {
            let checked = Checked::new(Some(plan));
            let (snapshot, accepted) = checked
                .finish(to_checked_value(value, checked.expect()))
                .unwrap();
            let accepted = accepted.expect("a plan judges what it checks");
            assert_eq!(snapshot, json);
            let walked = plan.accepts(&json);
            assert!(!accepted || walked, "the walk of {json} doubted it");
            assert!(!walked || valid, "{schema} accepted {json} when walked");
            accepted
        });
        (accepted, valid)
    }

    /// Whether the plan of `schema` accepts `json` when it walks it (`None`: no plan).
    fn walked(schema: &Value, json: &Value) -> Option<bool> {
        let compiled = compile(schema, SchemaRole::Output).expect("a supported schema");
        compiled.plan.map(|plan| plan.accepts(json))
    }

    #[derive(Serialize, JsonSchema)]
    struct Line {
        number: u32,
        text: String,
    }

    #[derive(Serialize, JsonSchema)]
    enum Mode {
        Read,
        Write,
    }

    #[derive(Serialize, JsonSchema)]
    struct Read {
        path: String,
        mode: Mode,
        first: Option<Line>,
        lines: Vec<Line>,
        size: Option<u8>,
        ratio: f64,
    }

    fn read(mode: Mode) -> Read {
        Read {
            path: "src/lib.rs".into(),
            mode,
            first: Some(Line {
                number: 1,
                text: "//!".into(),
            }),
            lines: vec![Line {
                number: 2,
                text: String::new(),
            }],
            size: None,
            ratio: 0.5,
        }
    }

    #[test]
    fn a_serde_derived_value_is_accepted_while_it_is_snapshotted() {
        let schema = output_schema_for::<Read>();
        // Each twice: the second time, struct fields are found by the address of their names.
        for mode in [Mode::Read, Mode::Read, Mode::Write, Mode::Write] {
            assert_eq!(judged(&schema, &read(mode)), (Some(true), true));
        }
    }

    /// Arguments as `#[tool]` declares them: unknown fields denied, optional ones `Option`s.
    #[derive(serde::Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[expect(dead_code, reason = "only its schema is used")]
    struct EditArgs {
        path: String,
        lines: Vec<u32>,
        limit: Option<u8>,
        dry_run: bool,
    }

    #[test]
    fn derived_arguments_are_checked_by_their_plan_without_the_validator() {
        let compiled = compile(&input_schema_for::<EditArgs>(), SchemaRole::Input).unwrap();
        let plan = compiled.plan.expect("a derived argument schema has a plan");
        for args in [
            json!({"path": "a", "lines": [1, 2], "limit": 3, "dry_run": true}),
            json!({"path": "a", "lines": [], "limit": null, "dry_run": false}),
            json!({"path": "a", "lines": [], "dry_run": false}),
        ] {
            assert!(plan.accepts(&args), "{args}");
            assert!(compiled.validator.is_valid(&args), "{args}");
        }
        for args in [
            json!({"path": "a", "lines": [1], "dry_run": true, "extra": 1}),
            json!({"path": "a", "lines": [-1], "dry_run": true}),
            json!({"path": "a", "lines": [1], "limit": 256, "dry_run": true}),
            json!({"path": 1, "lines": [], "dry_run": true}),
            json!({"lines": [], "dry_run": true}),
        ] {
            assert!(!plan.accepts(&args), "{args}");
            assert!(!compiled.validator.is_valid(&args), "{args}");
        }
    }

    /// One struct's fields in one order; others below write the same names in another order,
    /// leave one out, or give one another type.
    #[derive(Serialize)]
    struct Ordered {
        count: u8,
        label: &'static str,
    }

    #[derive(Serialize)]
    struct Reordered {
        label: &'static str,
        count: u8,
    }

    #[derive(Serialize)]
    struct Sometimes {
        #[serde(skip_serializing_if = "Option::is_none")]
        count: Option<u8>,
        label: &'static str,
    }

    #[derive(Serialize)]
    struct Mistyped {
        count: &'static str,
        label: &'static str,
    }

    #[derive(Serialize)]
    struct Extra {
        count: u8,
        label: &'static str,
        more: bool,
    }

    #[test]
    fn structs_writing_their_fields_in_any_order_get_the_validators_verdict_every_time() {
        // One plan for every value, as a tool's is: where it found each field last time must
        // never decide where a field of another struct (or of the same one, left out) is.
        let schema = json!({
            "type": "object",
            "properties": {
                "count": {"type": "integer", "minimum": 0, "maximum": 9},
                "label": {"type": "string"}
            },
            "required": ["count", "label"],
            "additionalProperties": false
        });
        let compiled = compile(&schema, SchemaRole::Output).unwrap();
        let plan = compiled.plan.as_ref().expect("a plan");
        let verdict = |value: &dyn Snapshotted| {
            let checked = Checked::new(Some(plan));
            let (json, accepted) = checked.finish(value.checked(checked.expect())).unwrap();
            assert_eq!(
                accepted,
                Some(compiled.validator.is_valid(&json)),
                "{json} judged otherwise than by the validator"
            );
            accepted == Some(true)
        };
        for _ in 0..3 {
            assert!(verdict(&Ordered {
                count: 1,
                label: "a"
            }));
            assert!(verdict(&Reordered {
                label: "b",
                count: 2
            }));
            assert!(verdict(&Sometimes {
                count: Some(3),
                label: "c"
            }));
            assert!(!verdict(&Sometimes {
                count: None,
                label: "d"
            }));
            assert!(!verdict(&Ordered {
                count: 10,
                label: "e"
            }));
            assert!(!verdict(&Mistyped {
                count: "4",
                label: "f"
            }));
            assert!(!verdict(&Extra {
                count: 5,
                label: "g",
                more: true
            }));
            assert!(verdict(&Reordered {
                label: "h",
                count: 9
            }));
        }
    }

    /// Values of several types, serialized through one closure.
    trait Snapshotted {
        fn checked(&self, expect: Expect<'_>) -> Result<Value, LosslessError>;
    }

    impl<T: Serialize> Snapshotted for T {
        fn checked(&self, expect: Expect<'_>) -> Result<Value, LosslessError> {
            to_checked_value(self, expect)
        }
    }

    #[test]
    fn a_value_its_schema_refuses_is_left_to_the_validator() {
        // What a `serialize_with`, or a hand-written schema, can make of a value.
        let schema = json!({
            "type": "object",
            "properties": {
                "number": {"type": "integer", "minimum": 0, "maximum": 9},
                "text": {"type": "string", "enum": ["a", "b"]}
            },
            "required": ["number", "text"],
            "additionalProperties": false
        });
        let cases = [
            json!({"number": 10, "text": "a"}),
            json!({"number": -1, "text": "a"}),
            json!({"number": 1.5, "text": "a"}),
            json!({"number": 1, "text": "c"}),
            json!({"number": 1}),
            json!({"number": 1, "text": "a", "extra": true}),
            json!([1, "a"]),
        ];
        for value in cases {
            assert_eq!(judged(&schema, &value), (Some(false), false), "{value}");
        }
        assert_eq!(
            judged(&schema, &json!({"number": 9, "text": "b"})),
            (Some(true), true)
        );
    }

    #[test]
    fn a_keyword_outside_the_plan_anywhere_leaves_every_value_to_the_validator() {
        for schema in [
            json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "^a"}}}),
            json!({"oneOf": [{"type": "string"}, {"type": "null"}]}),
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}]}),
            json!({
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "array",
                "items": [{"type": "string"}]
            }),
            json!({"type": "object", "required": ["missing"]}),
            json!({"type": "string", "format": "email"}),
            json!({"enum": [1, 2]}),
            // Recursive: its reference stays.
            json!({"type": "object", "properties": {"next": {"$ref": "#"}}}),
        ] {
            let compiled = compile(&schema, SchemaRole::Output).unwrap();
            assert!(compiled.plan.is_none(), "{schema}");
        }
    }

    /// Schemas made of the keywords a plan checks, and a few it does not.
    fn schema() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(json!(true)),
            Just(json!(false)),
            Just(json!({})),
            Just(json!({"type": "null"})),
            Just(json!({"type": "boolean"})),
            Just(json!({"type": "integer", "format": "uint32", "minimum": 0})),
            Just(json!({"type": "integer", "minimum": -2, "maximum": 2})),
            Just(json!({"type": "integer", "maximum": 0.5})),
            Just(json!({"type": "number"})),
            Just(json!({"type": "number", "minimum": 0})),
            Just(json!({"type": ["string", "null"]})),
            Just(json!({"type": "string", "enum": ["a", "b"]})),
            Just(json!({"enum": ["a", null]})),
            Just(json!({"const": "b"})),
            Just(json!({"type": "string", "maxLength": 1})),
        ];
        leaf.prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                (inner.clone(), 0..3_u64, prop::option::of(0..3_u64)).prop_map(
                    |(items, min, max)| {
                        let mut schema = json!({"type": "array", "items": items, "minItems": min});
                        if let Some(max) = max {
                            schema["maxItems"] = max.into();
                        }
                        schema
                    }
                ),
                (
                    prop::collection::btree_map(prop_oneof!["a", "b", "c"], inner.clone(), 0..3),
                    prop::collection::vec(prop_oneof!["a", "b", "c"], 0..3),
                    prop::option::of(inner.clone()),
                    any::<bool>(),
                )
                    .prop_map(|(properties, required, additional, typed)| {
                        let required: std::collections::BTreeSet<_> = required
                            .into_iter()
                            .filter(|name| properties.contains_key(name))
                            .collect();
                        let mut schema = json!({"properties": properties, "required": required});
                        if typed {
                            schema["type"] = "object".into();
                        }
                        if let Some(additional) = additional {
                            schema["additionalProperties"] = additional;
                        }
                        schema
                    }),
                inner.prop_map(|branch| json!({
                    "anyOf": [branch, {"type": "null"}],
                    "description": "an Option"
                })),
            ]
        })
    }

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (-3_i64..4).prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            prop_oneof![Just(0.5), Just(1.0), Just(-2.0)].prop_map(Value::from),
            prop_oneof!["a", "b", "c", ""].prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                prop::collection::btree_map(prop_oneof!["a", "b", "c", "d"], inner, 0..4)
                    .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        })
    }

    /// Values shaped by `schema`, near enough to it that most pass and many fail at one place:
    /// a bound, a member, a type.
    fn value_for(schema: &Value) -> BoxedStrategy<Value> {
        let Some(keywords) = schema.as_object() else {
            return value().boxed();
        };
        if let Some(Value::Array(branches)) = keywords.get("anyOf") {
            return prop_oneof![Just(Value::Null), value_for(&branches[0])].boxed();
        }
        let shaped = match keywords.get("type").and_then(Value::as_str) {
            Some("integer" | "number") => prop_oneof![
                (-3_i64..4).prop_map(Value::from),
                prop_oneof![Just(0.5), Just(2.0)].prop_map(Value::from),
            ]
            .boxed(),
            Some("string") => prop_oneof!["a", "b", "c", ""].prop_map(Value::from).boxed(),
            Some("array") => prop::collection::vec(value_for(&keywords["items"]), 0..4)
                .prop_map(Value::from)
                .boxed(),
            _ if keywords.contains_key("properties") => {
                let members: Vec<_> = keywords["properties"]
                    .as_object()
                    .unwrap()
                    .iter()
                    .map(|(name, property)| {
                        (
                            Just(name.clone()),
                            prop::option::weighted(0.9, value_for(property)),
                        )
                    })
                    .collect();
                (members, prop::option::weighted(0.2, value()))
                    .prop_map(|(members, extra)| {
                        let mut object: serde_json::Map<String, Value> = members
                            .into_iter()
                            .filter_map(|(name, value)| Some((name, value?)))
                            .collect();
                        if let Some(extra) = extra {
                            object.insert("d".into(), extra);
                        }
                        Value::Object(object)
                    })
                    .boxed()
            }
            _ => value().boxed(),
        };
        prop_oneof![9 => shaped, 1 => value()].boxed()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3_000))]

        /// One-sided: whatever the plan accepts, the validator accepts.
        #[test]
        fn the_plan_accepts_nothing_the_validator_refuses(
            (schema, value) in schema().prop_flat_map(|schema| {
                let values = value_for(&schema);
                (Just(schema), values)
            })
        ) {
            let (accepted, valid) = judged(&schema, &value);
            prop_assert!(accepted != Some(true) || valid, "{schema} accepted {value}");
            // JSON has no enum variants to doubt: walking it decides as snapshotting it.
            prop_assert_eq!(walked(&schema, &value), accepted, "{} walking {}", schema, value);
        }
    }
}
