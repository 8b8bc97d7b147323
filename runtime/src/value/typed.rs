//! A JSON value as a Rust type, and where in the value it did not fit.
//!
//! `serde_json`'s own deserializer for `&Value` says what is wrong but not where, and tracking
//! the path with a wrapper (`serde_path_to_error`) compiles every type's `Deserialize` a second
//! time, for the error path alone. This deserializer behaves as `serde_json`'s does (the same
//! values accepted, the same messages), and builds the path only when an error travels out:
//! one instantiation per type, nothing spent on the way in.

use std::fmt::{self, Display};

use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, EnumAccess, Expected, MapAccess,
    SeqAccess, Unexpected, VariantAccess, Visitor,
};
use serde::forward_to_deserialize_any;
use serde_json::{Map, Number, Value};

use super::RAW_VALUE_TOKEN;

/// How much of a map key a path echoes.
const MAX_ECHOED_KEY: usize = 80;

/// `value` as a `T`.
pub(crate) fn from_json<T: DeserializeOwned>(value: &Value) -> Result<T, TypedError> {
    T::deserialize(Typed(value))
}

/// Why a value is not a `T`, and where. Boxed, so that a `Result` is no larger than its value.
#[derive(Debug)]
pub(crate) struct TypedError(Box<Parts>);

#[derive(Debug)]
struct Parts {
    message: String,
    /// Path segments, innermost first (pushed while the error travelled out).
    segments: Vec<String>,
}

impl Display for TypedError {
    /// `at `/lines/2`: invalid type: …`, or `at `(root)`: …`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("at `")?;
        if self.0.segments.is_empty() {
            f.write_str("(root)")?;
        }
        for segment in self.0.segments.iter().rev() {
            write!(f, "/{segment}")?;
        }
        write!(f, "`: {}", self.0.message)
    }
}

impl TypedError {
    fn within(mut self, segment: impl Display) -> Self {
        self.0.segments.push(segment.to_string());
        self
    }

    fn within_key(self, key: &str) -> Self {
        let key = crate::text::truncate(key, MAX_ECHOED_KEY)
            .replace('~', "~0")
            .replace('/', "~1");
        self.within(key)
    }

    #[cold]
    fn from_json(error: serde_json::Error) -> Self {
        de::Error::custom(error)
    }
}

impl std::error::Error for TypedError {}

impl de::Error for TypedError {
    #[cold]
    fn custom<T: Display>(message: T) -> Self {
        Self(Box::new(Parts {
            message: message.to_string(),
            segments: Vec::new(),
        }))
    }

    // `serde_json`'s words for these ("null", its float formatting), so that messages match.
    #[cold]
    fn invalid_type(unexpected: Unexpected<'_>, expected: &dyn Expected) -> Self {
        Self::from_json(de::Error::invalid_type(unexpected, expected))
    }

    #[cold]
    fn invalid_value(unexpected: Unexpected<'_>, expected: &dyn Expected) -> Self {
        Self::from_json(de::Error::invalid_value(unexpected, expected))
    }
}

/// What `serde_json` calls each kind of value in a message.
fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => Unexpected::Unsigned(u),
            (None, Some(i), _) => Unexpected::Signed(i),
            (None, None, Some(f)) => Unexpected::Float(f),
            (None, None, None) => Unexpected::Other("number"),
        },
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

#[cold]
fn invalid_type(value: &Value, expected: &dyn Expected) -> TypedError {
    de::Error::invalid_type(unexpected(value), expected)
}

/// Methods that take a number, whichever the visitor asks for (as `serde_json` does).
macro_rules! numbers {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TypedError> {
            match self.0 {
                Value::Number(n) => visit_number(n, visitor),
                other => Err(invalid_type(other, &visitor)),
            }
        }
    )*};
}

/// Methods that take one kind of value, refusing the others as `serde_json` does.
macro_rules! only {
    ($visitor:ident; $($($method:ident),+: $kind:pat => $visit:expr;)*) => {$($(
        fn $method<V: Visitor<'de>>(self, $visitor: V) -> Result<V::Value, TypedError> {
            match self.0 {
                $kind => $visit,
                other => Err(invalid_type(other, &$visitor)),
            }
        }
    )+)*};
}

/// A value being deserialized: what `serde_json` does for `&Value`, method by method.
#[derive(Clone, Copy)]
struct Typed<'de>(&'de Value);

impl<'de> Deserializer<'de> for Typed<'de> {
    type Error = TypedError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TypedError> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => visit_number(n, visitor),
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(items) => visit_array(items, visitor),
            Value::Object(members) => visit_object(members, visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TypedError> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, TypedError> {
        let (variant, value) = match self.0 {
            Value::Object(members) => {
                let mut members = members.iter();
                match (members.next(), members.next()) {
                    (Some((variant, value)), None) => (variant, Some(value)),
                    _ => {
                        return Err(de::Error::invalid_value(
                            Unexpected::Map,
                            &"map with a single key",
                        ));
                    }
                }
            }
            Value::String(variant) => (variant, None),
            other => return Err(invalid_type(other, &"string or map")),
        };
        visitor.visit_enum(Variant { variant, value })
    }

    /// A `RawValue` (`serde_json`'s `raw_value` feature) is the value's JSON text, as
    /// `serde_json` gives it.
    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, TypedError> {
        if name == RAW_VALUE_TOKEN {
            return self
                .0
                .deserialize_newtype_struct(name, visitor)
                .map_err(de::Error::custom);
        }
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TypedError> {
        visitor.visit_unit()
    }

    numbers! {
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
        deserialize_f32 deserialize_f64
    }

    only! {
        visitor;
        deserialize_bool: Value::Bool(b) => visitor.visit_bool(*b);
        deserialize_char, deserialize_str, deserialize_string, deserialize_identifier:
            Value::String(s) => visitor.visit_borrowed_str(s);
        deserialize_unit: Value::Null => visitor.visit_unit();
        deserialize_seq: Value::Array(items) => visit_array(items, visitor);
        deserialize_map: Value::Object(members) => visit_object(members, visitor);
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TypedError> {
        match self.0 {
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(items) => visit_array(items, visitor),
            other => Err(invalid_type(other, &visitor)),
        }
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TypedError> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, TypedError> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, TypedError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, TypedError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, TypedError> {
        match self.0 {
            Value::Array(items) => visit_array(items, visitor),
            Value::Object(members) => visit_object(members, visitor),
            other => Err(invalid_type(other, &visitor)),
        }
    }
}

/// A number as the visitor's `u64`, `i64` or `f64`; one the `f64` would not carry exactly
/// (`serde_json`'s `arbitrary_precision`) as `serde_json` hands it over.
fn visit_number<'de, V: Visitor<'de>>(n: &'de Number, visitor: V) -> Result<V::Value, TypedError> {
    if let Some(u) = n.as_u64() {
        return visitor.visit_u64(u);
    }
    if let Some(i) = n.as_i64() {
        return visitor.visit_i64(i);
    }
    match n.as_f64() {
        Some(f) if Number::from_f64(f).as_ref() == Some(n) => visitor.visit_f64(f),
        _ => n.deserialize_any(visitor).map_err(TypedError::from_json),
    }
}

fn visit_array<'de, V: Visitor<'de>>(
    items: &'de [Value],
    visitor: V,
) -> Result<V::Value, TypedError> {
    let mut seq = Items {
        items: items.iter(),
        at: 0,
    };
    let value = visitor.visit_seq(&mut seq)?;
    if seq.items.len() == 0 {
        Ok(value)
    } else {
        Err(de::Error::invalid_length(
            items.len(),
            &"fewer elements in array",
        ))
    }
}

fn visit_object<'de, V: Visitor<'de>>(
    members: &'de Map<String, Value>,
    visitor: V,
) -> Result<V::Value, TypedError> {
    let mut map = Members {
        members: members.iter(),
        value: None,
    };
    let value = visitor.visit_map(&mut map)?;
    if map.members.len() == 0 {
        Ok(value)
    } else {
        Err(de::Error::invalid_length(
            members.len(),
            &"fewer elements in map",
        ))
    }
}

/// The elements of an array, and the index of the next one.
struct Items<'de> {
    items: std::slice::Iter<'de, Value>,
    at: usize,
}

impl<'de> SeqAccess<'de> for Items<'de> {
    type Error = TypedError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, TypedError> {
        let Some(item) = self.items.next() else {
            return Ok(None);
        };
        let at = self.at;
        self.at += 1;
        seed.deserialize(Typed(item))
            .map(Some)
            .map_err(|error| error.within(at))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

/// The members of an object, and the value of the key last handed out with its name.
struct Members<'de> {
    members: serde_json::map::Iter<'de>,
    value: Option<(&'de str, &'de Value)>,
}

impl<'de> MapAccess<'de> for Members<'de> {
    type Error = TypedError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, TypedError> {
        let Some((key, value)) = self.members.next() else {
            return Ok(None);
        };
        self.value = Some((key, value));
        seed.deserialize(Key(key))
            .map(Some)
            .map_err(|error| error.within_key(key))
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<T::Value, TypedError> {
        match self.value.take() {
            Some((key, value)) => seed
                .deserialize(Typed(value))
                .map_err(|error| error.within_key(key)),
            None => Err(de::Error::custom("value is missing")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.members.len())
    }
}

/// A map key: a string, or the number or boolean it spells, as `serde_json` reads keys.
struct Key<'de>(&'de str);

impl<'de> Key<'de> {
    /// The key as JSON of its own (a number), read by `serde_json` as a number.
    fn numeric<V: Visitor<'de>>(
        self,
        visitor: V,
        read: impl FnOnce(&mut JsonReader<'de>, V) -> serde_json::Result<V::Value>,
    ) -> Result<V::Value, TypedError> {
        let spelled = |key: &str| {
            key.starts_with(|c: char| c.is_ascii_digit() || c == '-')
                && !key.ends_with(|c: char| c.is_ascii_whitespace())
        };
        if !spelled(self.0) {
            return Err(not_numeric());
        }
        let mut json = serde_json::Deserializer::from_str(self.0);
        let value = read(&mut json, visitor).map_err(TypedError::from_json)?;
        json.end().map_err(|_| not_numeric())?;
        Ok(value)
    }
}

type JsonReader<'k> = serde_json::Deserializer<serde_json::de::StrRead<'k>>;

#[cold]
fn not_numeric() -> TypedError {
    de::Error::custom("invalid value: expected key to be a number in quotes")
}

macro_rules! numeric_key {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TypedError> {
            self.numeric(visitor, |json, visitor| json.$method(visitor))
        }
    )*};
}

impl<'de> Deserializer<'de> for Key<'de> {
    type Error = TypedError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TypedError> {
        visitor.visit_borrowed_str(self.0)
    }

    numeric_key! {
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
        deserialize_f32 deserialize_f64
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TypedError> {
        match self.0 {
            "true" => visitor.visit_bool(true),
            "false" => visitor.visit_bool(false),
            other => Err(de::Error::invalid_type(Unexpected::Str(other), &visitor)),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TypedError> {
        // Map keys are never null.
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, TypedError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, TypedError> {
        de::value::BorrowedStrDeserializer::<TypedError>::new(self.0)
            .deserialize_enum(name, variants, visitor)
    }

    forward_to_deserialize_any! {
        char str string bytes byte_buf unit unit_struct seq tuple tuple_struct map struct
        identifier ignored_any
    }
}

/// An enum's variant: its name, and its content (`None` for `"Variant"`).
struct Variant<'de> {
    variant: &'de str,
    value: Option<&'de Value>,
}

impl<'de> EnumAccess<'de> for Variant<'de> {
    type Error = TypedError;
    type Variant = Self;

    fn variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<(T::Value, Self), TypedError> {
        let variant = seed.deserialize(de::value::BorrowedStrDeserializer::<TypedError>::new(
            self.variant,
        ))?;
        Ok((variant, self))
    }
}

impl<'de> VariantAccess<'de> for Variant<'de> {
    type Error = TypedError;

    fn unit_variant(self) -> Result<(), TypedError> {
        match self.value {
            Some(value) => <() as serde::Deserialize>::deserialize(Typed(value))
                .map_err(|e| e.within(self.variant)),
            None => Ok(()),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<T::Value, TypedError> {
        match self.value {
            Some(value) => seed
                .deserialize(Typed(value))
                .map_err(|e| e.within(self.variant)),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"newtype variant",
            )),
        }
    }

    fn tuple_variant<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, TypedError> {
        match self.value {
            Some(Value::Array(items)) if items.is_empty() => visitor.visit_unit(),
            Some(Value::Array(items)) => {
                visit_array(items, visitor).map_err(|e| e.within(self.variant))
            }
            Some(other) => Err(invalid_type(other, &"tuple variant")),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"tuple variant",
            )),
        }
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, TypedError> {
        match self.value {
            Some(Value::Object(members)) => {
                visit_object(members, visitor).map_err(|e| e.within(self.variant))
            }
            Some(other) => Err(invalid_type(other, &"struct variant")),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"struct variant",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::fmt::Debug;

    use proptest::prelude::*;
    use serde::Deserialize;
    use serde_json::{Value, json};

    use super::from_json;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Sample {
        name: String,
        count: Option<u32>,
        #[serde(default)]
        tags: Vec<String>,
        kind: Kind,
        #[serde(default)]
        keyed: BTreeMap<i16, bool>,
        #[serde(default)]
        any: Value,
        #[serde(default)]
        pair: Option<(u8, f64)>,
        #[serde(default)]
        unit: (),
    }

    #[derive(Debug, Deserialize, PartialEq)]
    enum Kind {
        Unit,
        Newtype(i32),
        Tuple(u8, String),
        Struct { a: u8 },
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(tag = "type", rename_all = "snake_case")]
    enum Tagged {
        Circle { radius: f32 },
        Square { side: u128 },
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(untagged)]
    enum Either {
        Number(i64),
        Text(String),
        List(Vec<Either>),
    }

    /// `from_json` decides as `serde_json::from_value` does, with the same message; it only
    /// adds where.
    fn same_as_serde_json<T: serde::de::DeserializeOwned + PartialEq + Debug>(value: &Value) {
        let ours = from_json::<T>(value);
        let theirs = serde_json::from_value::<T>(value.clone());
        match (ours, theirs) {
            (Ok(ours), Ok(theirs)) => assert_eq!(ours, theirs, "{value}"),
            (Err(ours), Err(theirs)) => {
                assert_eq!(ours.0.message, theirs.to_string(), "{value}");
            }
            (ours, theirs) => panic!("{value}: {ours:?} but serde_json says {theirs:?}"),
        }
    }

    fn sample() -> Value {
        json!({
            "name": "n",
            "count": 3,
            "tags": ["a", "b"],
            "kind": {"Tuple": [1, "x"]},
            "keyed": {"-2": true, "7": false},
            "any": {"deep": [1.5, null, {"x": u64::MAX}]},
            "pair": [255, -0.5],
            "unit": null
        })
    }

    #[test]
    fn what_serde_json_accepts_comes_out_the_same() {
        let value = sample();
        same_as_serde_json::<Sample>(&value);
        assert!(from_json::<Sample>(&value).unwrap().keyed[&-2]);
        for kind in [
            json!("Unit"),
            json!({"Unit": null}),
            json!({"Newtype": -4}),
            json!({"Struct": {"a": 1}}),
        ] {
            same_as_serde_json::<Kind>(&kind);
            assert!(from_json::<Kind>(&kind).is_ok(), "{kind}");
        }
        same_as_serde_json::<Vec<Tagged>>(&json!([
            {"type": "circle", "radius": 0.5},
            {"type": "square", "side": 18_446_744_073_709_551_615_u64}
        ]));
        same_as_serde_json::<Either>(&json!([1, "two", [3]]));
    }

    #[test]
    fn an_error_says_where_and_what_serde_json_would_say() {
        let cases = [
            (json!({"kind": "Unit"}), "at `(root)`: missing field `name`"),
            (
                json!({"name": "n", "kind": "Unit", "tags": ["a", 2]}),
                "at `/tags/1`: invalid type: integer `2`, expected a string",
            ),
            (
                json!({"name": "n", "kind": {"Tuple": [1, 2]}}),
                "at `/kind/Tuple/1`: invalid type: integer `2`, expected a string",
            ),
            (
                json!({"name": "n", "kind": {"Struct": {"a": 256}}}),
                "at `/kind/Struct/a`: invalid value: integer `256`, expected u8",
            ),
            (
                json!({"name": "n", "kind": {"Unit": null, "Newtype": 1}}),
                "at `/kind`: invalid value: map, expected map with a single key",
            ),
            (
                json!({"name": "n", "kind": "Unit", "keyed": {"x": true}}),
                "at `/keyed/x`: invalid value: expected key to be a number in quotes",
            ),
            (
                json!({"name": "n", "kind": "Unit", "pair": [1, 2, 3]}),
                "at `/pair`: invalid length 3, expected fewer elements in array",
            ),
            (
                json!({"name": "n", "kind": "Unit", "a/b~c": 1}),
                "at `/a~1b~0c`: unknown field `a/b~c`, expected one of",
            ),
        ];
        for (value, expected) in cases {
            same_as_serde_json::<Sample>(&value);
            let error = from_json::<Sample>(&value).unwrap_err().to_string();
            assert!(error.starts_with(expected), "{error}\nexpected {expected}");
        }
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (-300_i64..300).prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            prop_oneof![Just(0.5), Just(1.0), Just(-2.0), Just(1e300)].prop_map(Value::from),
            prop_oneof![
                "Unit", "Newtype", "Tuple", "Struct", "circle", "a", "", "-1", "12"
            ]
            .prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                prop::collection::btree_map(
                    prop_oneof![
                        "name", "count", "tags", "kind", "keyed", "any", "pair", "unit", "a",
                        "type", "radius", "side", "Unit", "Newtype", "Tuple", "Struct", "-7",
                        "300", "1.5"
                    ],
                    inner,
                    0..5
                )
                .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        #[test]
        fn any_json_is_decided_as_serde_json_decides_it(value in json_value()) {
            same_as_serde_json::<Sample>(&value);
            same_as_serde_json::<Kind>(&value);
            same_as_serde_json::<Tagged>(&value);
            same_as_serde_json::<Either>(&value);
            same_as_serde_json::<Vec<Option<u8>>>(&value);
            same_as_serde_json::<BTreeMap<u16, Kind>>(&value);
            same_as_serde_json::<BTreeMap<String, (i8, bool)>>(&value);
            same_as_serde_json::<Value>(&value);
            same_as_serde_json::<f32>(&value);
            same_as_serde_json::<char>(&value);
        }
    }
}
