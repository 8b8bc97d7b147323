//! Lossless snapshot of a `Serialize` value as JSON.
//!
//! It gives what `serde_json::to_value` gives, except where that would silently change the
//! data: `serde_json` turns NaN and infinities into `null`, drops a map entry when two keys
//! serialize to the same string, and may round huge integers. Here each of those is an error
//! naming where in the value it happened.

use std::fmt;

use serde::ser::{self, Serialize};
use serde_json::{Map, Number, Value};

use crate::depth::{self, MAX_DEPTH};
use crate::schema::{Expect, ExpectItems, ExpectMembers};

use super::RAW_VALUE_TOKEN;

/// Why a value could not be snapshotted as JSON without changing it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{problem} (at {})", display_path(.path))]
pub struct LosslessError {
    /// JSON Pointer to the offending place, `""` for the root.
    path: String,
    problem: String,
}

impl LosslessError {
    pub(crate) fn new(path: String, problem: String) -> Self {
        Self { path, problem }
    }

    /// JSON Pointer to where the problem is, `""` for the root.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// What is wrong there.
    pub fn problem(&self) -> &str {
        &self.problem
    }
}

fn display_path(path: &str) -> &str {
    if path.is_empty() { "the root" } else { path }
}

/// Serializes `value` into a [`Value`], refusing anything JSON cannot carry exactly.
///
/// ```
/// # use toolprism::value::to_lossless_value;
/// assert_eq!(to_lossless_value(&[1.5, 2.0]).unwrap(), serde_json::json!([1.5, 2.0]));
/// let err = to_lossless_value(&vec![1.0, f64::NAN]).unwrap_err();
/// assert_eq!(err.to_string(), "NaN cannot be represented in JSON (at /1)");
/// ```
pub fn to_lossless_value<T: ?Sized + Serialize>(value: &T) -> Result<Value, LosslessError> {
    to_checked_value(value, Expect::NOTHING)
}

/// [`to_lossless_value`], checking the value as `expect`ed on the way (which raises its flag
/// where a check fails).
pub(crate) fn to_checked_value<T: ?Sized + Serialize>(
    value: &T,
    expect: Expect<'_>,
) -> Result<Value, LosslessError> {
    // The conversion of the error is a function of its own, not a closure: shared by every
    // value type instead of copied into each.
    value
        .serialize(ValueSerializer { depth: 0, expect })
        .map_err(lossless_error)
}

fn lossless_error(error: Error) -> LosslessError {
    // Segments were pushed innermost first, while the error travelled outwards.
    let ErrorParts { problem, segments } = *error.0;
    let path = segments
        .iter()
        .rev()
        .fold(String::new(), |mut path, segment| {
            path.push('/');
            path.push_str(&segment.replace('~', "~0").replace('/', "~1"));
            path
        });
    LosslessError { path, problem }
}

/// The serializer's error: the problem, and the path to it built up on the way out. Boxed, so
/// that the `Result` every node of a value returns is no larger than the `Value` in it.
#[derive(Debug)]
struct Error(Box<ErrorParts>);

#[derive(Debug)]
struct ErrorParts {
    problem: String,
    segments: Vec<String>,
}

impl Error {
    fn new(problem: impl Into<String>) -> Self {
        Self(Box::new(ErrorParts {
            problem: problem.into(),
            segments: Vec::new(),
        }))
    }

    fn within(mut self, segment: impl fmt::Display) -> Self {
        self.0.segments.push(segment.to_string());
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.problem)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Self::new(format!("serialization failed: {msg}"))
    }
}

fn float(value: f64) -> Result<Value, Error> {
    Number::from_f64(value).map(Value::Number).ok_or_else(|| {
        Error::new(if value.is_nan() {
            "NaN cannot be represented in JSON".to_owned()
        } else {
            format!("{value} cannot be represented in JSON")
        })
    })
}

fn out_of_range(value: impl fmt::Display) -> Error {
    Error::new(format!(
        "integer {value} is outside what JSON numbers carry exactly here (i64 and u64)"
    ))
}

/// Inserts a struct field, or says which name two fields share (a rename or a flatten can make
/// them collide). One search of the map either way: a duplicate has already replaced the
/// first value, but the error means neither is published.
fn insert_field(map: &mut Map<String, Value>, key: &str, value: Value) -> Result<(), Error> {
    match map.insert(key.to_owned(), value) {
        None => Ok(()),
        Some(_) => Err(duplicate(key)),
    }
}

/// Inserts a map entry whose key was serialized, or says which key two entries share.
fn insert_entry(map: &mut Map<String, Value>, key: String, value: Value) -> Result<(), Error> {
    use serde_json::map::Entry;
    match map.entry(key) {
        Entry::Vacant(slot) => {
            slot.insert(value);
            Ok(())
        }
        Entry::Occupied(slot) => Err(duplicate(slot.key())),
    }
}

fn duplicate(key: &str) -> Error {
    Error::new(format!(
        "two entries serialize to the same key `{key}`; one would be lost"
    ))
}

/// Serializes one value that `depth` arrays and objects enclose, checking it as expected.
#[derive(Clone, Copy)]
struct ValueSerializer<'p> {
    depth: usize,
    expect: Expect<'p>,
}

impl<'p> ValueSerializer<'p> {
    fn signed(self, v: i64) -> Value {
        self.expect.integer(v.into());
        Value::from(v)
    }

    fn unsigned(self, v: u64) -> Value {
        self.expect.integer(v.into());
        Value::from(v)
    }

    fn float(self, v: f64) -> Result<Value, Error> {
        let value = float(v)?;
        self.expect.float();
        Ok(value)
    }

    /// `serde_json`'s `RawValue`: its one field is JSON text, parsed at the end; the plan
    /// leaves it to the validator. Out of line: every struct passes by here.
    #[cold]
    #[inline(never)]
    fn raw_value(self) -> MapSerializer<'p> {
        self.expect.doubt();
        let mut raw = MapSerializer::at(self.depth, ExpectMembers::NOTHING);
        raw.raw = true;
        raw
    }

    /// The depth of the children of `levels` nested containers opened here, if that stays
    /// within [`MAX_DEPTH`]: the check comes before the value's `Serialize` recurses further.
    #[inline]
    fn open(self, levels: usize) -> Result<usize, Error> {
        let depth = self.depth + levels;
        if depth > MAX_DEPTH {
            return Err(too_deep());
        }
        Ok(depth)
    }
}

#[cold]
#[inline(never)]
fn too_deep() -> Error {
    Error::new(format!(
        "the value nests deeper than {MAX_DEPTH} levels of arrays and objects"
    ))
}

impl<'p> ser::Serializer for ValueSerializer<'p> {
    type Ok = Value;
    type Error = Error;
    type SerializeSeq = SeqSerializer<'p>;
    type SerializeTuple = SeqSerializer<'p>;
    type SerializeTupleStruct = SeqSerializer<'p>;
    type SerializeTupleVariant = VariantSerializer<SeqSerializer<'p>>;
    type SerializeMap = MapSerializer<'p>;
    type SerializeStruct = MapSerializer<'p>;
    type SerializeStructVariant = VariantSerializer<MapSerializer<'p>>;

    fn serialize_bool(self, v: bool) -> Result<Value, Error> {
        self.expect.boolean();
        Ok(Value::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Value, Error> {
        Ok(self.signed(v.into()))
    }
    fn serialize_i16(self, v: i16) -> Result<Value, Error> {
        Ok(self.signed(v.into()))
    }
    fn serialize_i32(self, v: i32) -> Result<Value, Error> {
        Ok(self.signed(v.into()))
    }
    fn serialize_i64(self, v: i64) -> Result<Value, Error> {
        Ok(self.signed(v))
    }
    fn serialize_i128(self, v: i128) -> Result<Value, Error> {
        if let Ok(small) = i64::try_from(v) {
            Ok(self.signed(small))
        } else if let Ok(unsigned) = u64::try_from(v) {
            Ok(self.unsigned(unsigned))
        } else {
            Err(out_of_range(v))
        }
    }
    fn serialize_u8(self, v: u8) -> Result<Value, Error> {
        Ok(self.unsigned(v.into()))
    }
    fn serialize_u16(self, v: u16) -> Result<Value, Error> {
        Ok(self.unsigned(v.into()))
    }
    fn serialize_u32(self, v: u32) -> Result<Value, Error> {
        Ok(self.unsigned(v.into()))
    }
    fn serialize_u64(self, v: u64) -> Result<Value, Error> {
        Ok(self.unsigned(v))
    }
    fn serialize_u128(self, v: u128) -> Result<Value, Error> {
        u64::try_from(v)
            .map(|v| self.unsigned(v))
            .map_err(|_| out_of_range(v))
    }
    fn serialize_f32(self, v: f32) -> Result<Value, Error> {
        self.float(f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Result<Value, Error> {
        self.float(v)
    }
    fn serialize_char(self, v: char) -> Result<Value, Error> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<Value, Error> {
        self.expect.string(v);
        Ok(Value::String(v.to_owned()))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Value, Error> {
        let expect = self.expect.array();
        let items = v
            .iter()
            .map(|&byte| {
                expect.item().integer(byte.into());
                Value::from(byte)
            })
            .collect();
        expect.end(v.len());
        Ok(Value::Array(items))
    }
    fn serialize_none(self) -> Result<Value, Error> {
        self.expect.null();
        Ok(Value::Null)
    }
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<Value, Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Value, Error> {
        self.serialize_none()
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Value, Error> {
        self.serialize_none()
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Value, Error> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Value, Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Value, Error> {
        let depth = self.open(1)?;
        self.expect.variant();
        let inner = value
            .serialize(ValueSerializer {
                depth,
                expect: Expect::NOTHING,
            })
            .map_err(|e| e.within(variant))?;
        let mut map = Map::with_capacity(1);
        map.insert(variant.to_owned(), inner);
        Ok(Value::Object(map))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<SeqSerializer<'p>, Error> {
        Ok(SeqSerializer {
            items: Vec::with_capacity(len.unwrap_or(0)),
            depth: self.open(1)?,
            expect: self.expect.array(),
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<SeqSerializer<'p>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<SeqSerializer<'p>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<VariantSerializer<SeqSerializer<'p>>, Error> {
        self.expect.variant();
        Ok(VariantSerializer {
            variant,
            inner: SeqSerializer {
                items: Vec::with_capacity(len),
                depth: self.open(2)?,
                expect: ExpectItems::NOTHING,
            },
        })
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<MapSerializer<'p>, Error> {
        Ok(MapSerializer::at(self.open(1)?, self.expect.object()))
    }
    fn serialize_struct(self, name: &'static str, _len: usize) -> Result<MapSerializer<'p>, Error> {
        if name == RAW_VALUE_TOKEN {
            return Ok(self.raw_value());
        }
        self.serialize_map(None)
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<VariantSerializer<MapSerializer<'p>>, Error> {
        self.expect.variant();
        Ok(VariantSerializer {
            variant,
            inner: MapSerializer::at(self.open(2)?, ExpectMembers::NOTHING),
        })
    }
}

/// The elements of an array, each enclosed by `depth` arrays and objects.
struct SeqSerializer<'p> {
    items: Vec<Value>,
    depth: usize,
    expect: ExpectItems<'p>,
}

impl SeqSerializer<'_> {
    fn push<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        let index = self.items.len();
        self.items.push(
            value
                .serialize(ValueSerializer {
                    depth: self.depth,
                    expect: self.expect.item(),
                })
                .map_err(|e| e.within(index))?,
        );
        Ok(())
    }

    fn end(self) -> Value {
        self.expect.end(self.items.len());
        Value::Array(self.items)
    }
}

impl ser::SerializeSeq for SeqSerializer<'_> {
    type Ok = Value;
    type Error = Error;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> Result<Value, Error> {
        Ok(SeqSerializer::end(self))
    }
}

impl ser::SerializeTuple for SeqSerializer<'_> {
    type Ok = Value;
    type Error = Error;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> Result<Value, Error> {
        Ok(SeqSerializer::end(self))
    }
}

impl ser::SerializeTupleStruct for SeqSerializer<'_> {
    type Ok = Value;
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> Result<Value, Error> {
        Ok(SeqSerializer::end(self))
    }
}

/// The members of an object, each enclosed by `depth` arrays and objects.
struct MapSerializer<'p> {
    map: Map<String, Value>,
    next_key: Option<String>,
    depth: usize,
    expect: ExpectMembers<'p>,
    /// `serde_json`'s `RawValue`, whose one field is its JSON text (`depth` encloses the
    /// value, not its members).
    raw: bool,
}

impl<'p> MapSerializer<'p> {
    fn at(depth: usize, expect: ExpectMembers<'p>) -> Self {
        Self {
            map: Map::new(),
            next_key: None,
            depth,
            expect,
            raw: false,
        }
    }

    fn field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> Result<(), Error> {
        let value = value
            .serialize(ValueSerializer {
                depth: self.depth,
                expect: self.expect.field(key),
            })
            .map_err(|e| e.within(key))?;
        insert_field(&mut self.map, key, value)
    }

    fn end(self) -> Value {
        self.expect.end();
        Value::Object(self.map)
    }
}

impl ser::SerializeMap for MapSerializer<'_> {
    type Ok = Value;
    type Error = Error;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<(), Error> {
        self.next_key = Some(key.serialize(KeySerializer)?);
        Ok(())
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        let key = self
            .next_key
            .take()
            .ok_or_else(|| Error::new("serialize_value called before serialize_key"))?;
        let value = value
            .serialize(ValueSerializer {
                depth: self.depth,
                expect: self.expect.member(&key),
            })
            .map_err(|e| e.within(&key))?;
        insert_entry(&mut self.map, key, value)
    }
    fn end(self) -> Result<Value, Error> {
        Ok(MapSerializer::end(self))
    }
}

impl ser::SerializeStruct for MapSerializer<'_> {
    type Ok = Value;
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.field(key, value)
    }
    fn end(self) -> Result<Value, Error> {
        if self.raw {
            return self.raw_end();
        }
        Ok(MapSerializer::end(self))
    }
}

impl MapSerializer<'_> {
    /// The value of a `RawValue`'s text. Out of line: every struct ends by here.
    #[cold]
    #[inline(never)]
    fn raw_end(mut self) -> Result<Value, Error> {
        match self.map.remove(RAW_VALUE_TOKEN) {
            Some(Value::String(text)) => raw_json(&text, self.depth),
            _ => Err(Error::new("a raw JSON value without its text")),
        }
    }
}

/// The JSON text of a `RawValue` that `depth` arrays and objects enclose, as a value: refused
/// where it nests too deep or holds an integer beyond 64 bits, which parsing would round.
fn raw_json(text: &str, depth: usize) -> Result<Value, Error> {
    if let Some(integer) = wide_integer(text) {
        return Err(out_of_range(integer));
    }
    let value: Value = serde_json::from_str(text).map_err(|error| {
        if depth::is_past_parser_depth(&error) {
            too_deep()
        } else {
            Error::new(format!("a raw JSON value does not parse: {error}"))
        }
    })?;
    match depth::inspect(&value) {
        Ok(shape) if depth + shape.depth <= MAX_DEPTH => Ok(value),
        _ => {
            depth::dispose(value);
            Err(too_deep())
        }
    }
}

/// The first integer in a JSON text that neither `i64` nor `u64` holds.
fn wide_integer(text: &str) -> Option<&str> {
    let bytes = text.as_bytes();
    let (mut at, mut in_string) = (0, false);
    while at < bytes.len() {
        let byte = bytes[at];
        if in_string {
            match byte {
                b'\\' => at += 1,
                b'"' => in_string = false,
                _ => {}
            }
        } else if byte == b'"' {
            in_string = true;
        } else if byte == b'-' || byte.is_ascii_digit() {
            let start = at;
            while at < bytes.len()
                && matches!(bytes[at], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
            {
                at += 1;
            }
            let number = &text[start..at];
            let integral = !number.contains(['.', 'e', 'E']);
            if integral && number.parse::<i64>().is_err() && number.parse::<u64>().is_err() {
                return Some(number);
            }
            continue;
        }
        at += 1;
    }
    None
}

/// A tuple or struct variant: `{ "Variant": <inner> }`.
struct VariantSerializer<S> {
    variant: &'static str,
    inner: S,
}

impl<S> VariantSerializer<S> {
    fn wrap(variant: &'static str, inner: Value) -> Value {
        let mut map = Map::with_capacity(1);
        map.insert(variant.to_owned(), inner);
        Value::Object(map)
    }
}

impl ser::SerializeTupleVariant for VariantSerializer<SeqSerializer<'_>> {
    type Ok = Value;
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        let variant = self.variant;
        self.inner.push(value).map_err(|e| e.within(variant))
    }
    fn end(self) -> Result<Value, Error> {
        Ok(Self::wrap(self.variant, Value::Array(self.inner.items)))
    }
}

impl ser::SerializeStructVariant for VariantSerializer<MapSerializer<'_>> {
    type Ok = Value;
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        let variant = self.variant;
        self.inner.field(key, value).map_err(|e| e.within(variant))
    }
    fn end(self) -> Result<Value, Error> {
        Ok(Self::wrap(self.variant, Value::Object(self.inner.map)))
    }
}

/// Map keys become JSON strings. Strings, chars, bools, integers and unit variants convert
/// exactly; anything else is refused rather than guessed at.
struct KeySerializer;

fn key_error() -> Error {
    Error::new("map keys must be strings, chars, booleans, integers or unit enum variants")
}

impl ser::Serializer for KeySerializer {
    type Ok = String;
    type Error = Error;
    type SerializeSeq = ser::Impossible<String, Error>;
    type SerializeTuple = ser::Impossible<String, Error>;
    type SerializeTupleStruct = ser::Impossible<String, Error>;
    type SerializeTupleVariant = ser::Impossible<String, Error>;
    type SerializeMap = ser::Impossible<String, Error>;
    type SerializeStruct = ser::Impossible<String, Error>;
    type SerializeStructVariant = ser::Impossible<String, Error>;

    fn serialize_bool(self, v: bool) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_i8(self, v: i8) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_i16(self, v: i16) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_i32(self, v: i32) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_i64(self, v: i64) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_i128(self, v: i128) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_u8(self, v: u8) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_u16(self, v: u16) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_u32(self, v: u32) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_u64(self, v: u64) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_u128(self, v: u128) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_f32(self, _v: f32) -> Result<String, Error> {
        Err(key_error())
    }
    fn serialize_f64(self, _v: f64) -> Result<String, Error> {
        Err(key_error())
    }
    fn serialize_char(self, v: char) -> Result<String, Error> {
        Ok(v.to_string())
    }
    fn serialize_str(self, v: &str) -> Result<String, Error> {
        Ok(v.to_owned())
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<String, Error> {
        Err(key_error())
    }
    fn serialize_none(self) -> Result<String, Error> {
        Err(key_error())
    }
    fn serialize_some<T: ?Sized + Serialize>(self, _value: &T) -> Result<String, Error> {
        Err(key_error())
    }
    fn serialize_unit(self) -> Result<String, Error> {
        Err(key_error())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<String, Error> {
        Err(key_error())
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<String, Error> {
        Ok(variant.to_owned())
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<String, Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<String, Error> {
        Err(key_error())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(key_error())
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, Error> {
        Err(key_error())
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        Err(key_error())
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(key_error())
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(key_error())
    }
    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStruct, Error> {
        Err(key_error())
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(key_error())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Serialize;
    use serde_json::json;

    use super::*;

    #[derive(Serialize)]
    struct Point {
        x: f64,
        tags: Vec<String>,
    }

    #[derive(Serialize)]
    enum Shape {
        Circle { r: f32 },
        Pair(u8, f64),
        Unit,
        Wrap(i32),
    }

    #[test]
    fn agrees_with_serde_json_on_ordinary_values() {
        let point = Point {
            x: 1.5,
            tags: vec!["a".into()],
        };
        assert_eq!(
            to_lossless_value(&point),
            Ok(serde_json::to_value(&point).unwrap())
        );
        for shape in [
            Shape::Circle { r: 2.5 },
            Shape::Pair(1, -3.0),
            Shape::Unit,
            Shape::Wrap(7),
        ] {
            assert_eq!(
                to_lossless_value(&shape),
                Ok(serde_json::to_value(&shape).unwrap())
            );
        }
        let keyed: BTreeMap<u32, bool> = [(1, true), (20, false)].into();
        assert_eq!(
            to_lossless_value(&keyed),
            Ok(json!({"1": true, "20": false}))
        );
        assert_eq!(
            to_lossless_value(&(u64::MAX, i64::MIN)),
            Ok(json!([u64::MAX, i64::MIN]))
        );
        assert_eq!(to_lossless_value(&Some(())), Ok(json!(null)));
    }

    #[test]
    fn non_finite_floats_are_refused_with_their_path() {
        let point = Point {
            x: f64::INFINITY,
            tags: vec![],
        };
        let error = to_lossless_value(&point).unwrap_err();
        assert_eq!(error.path(), "/x");
        assert_eq!(error.problem(), "inf cannot be represented in JSON");

        let nested = vec![Shape::Pair(1, 2.0), Shape::Circle { r: f32::NAN }];
        let error = to_lossless_value(&nested).unwrap_err();
        assert_eq!(error.path(), "/1/Circle/r");
        assert!(error.problem().starts_with("NaN"));

        let error = to_lossless_value(&Shape::Pair(0, f64::NEG_INFINITY)).unwrap_err();
        assert_eq!(error.path(), "/Pair/1");
    }

    #[test]
    fn wide_integers_are_refused_unless_they_fit() {
        assert_eq!(
            to_lossless_value(&u128::from(u64::MAX)),
            Ok(json!(u64::MAX))
        );
        assert_eq!(to_lossless_value(&-5_i128), Ok(json!(-5)));
        let error = to_lossless_value(&(u128::from(u64::MAX) + 1)).unwrap_err();
        assert!(error.problem().contains("18446744073709551616"), "{error}");
        assert!(to_lossless_value(&i128::MIN).is_err());
    }

    #[test]
    fn colliding_keys_are_refused() {
        #[derive(Serialize)]
        struct Renamed {
            name: &'static str,
            #[serde(rename = "name")]
            label: &'static str,
        }
        struct Colliding;
        impl Serialize for Colliding {
            fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use ser::SerializeMap;
                let mut map = s.serialize_map(Some(2))?;
                map.serialize_entry(&1_u8, "one")?;
                map.serialize_entry("1", "also one")?;
                map.end()
            }
        }
        // serde_json keeps the second entry and drops the first without a word.
        assert_eq!(
            serde_json::to_value(Colliding).unwrap(),
            json!({"1": "also one"})
        );
        let error = to_lossless_value(&Colliding).unwrap_err();
        assert!(error.problem().contains("same key `1`"), "{error}");

        // Two struct fields renamed onto one name: serde_derive writes both.
        let renamed = Renamed {
            name: "first",
            label: "second",
        };
        assert_eq!(
            serde_json::to_value(&renamed).unwrap(),
            json!({"name": "second"})
        );
        let error = to_lossless_value(&renamed).unwrap_err();
        assert!(error.problem().contains("same key `name`"), "{error}");
    }

    #[test]
    fn failing_serialize_and_bad_keys_are_errors() {
        struct Failing;
        impl Serialize for Failing {
            fn serialize<S: ser::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
                Err(ser::Error::custom("lock poisoned"))
            }
        }
        let error = to_lossless_value(&vec![Failing]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "serialization failed: lock poisoned (at /0)"
        );

        let keyed: BTreeMap<Vec<u8>, u8> = [(vec![1], 1)].into();
        assert!(to_lossless_value(&keyed).is_err());
    }

    #[test]
    fn path_segments_are_escaped_as_json_pointer() {
        let map: BTreeMap<&str, f64> = [("a/b~c", f64::NAN)].into();
        assert_eq!(to_lossless_value(&map).unwrap_err().path(), "/a~1b~0c");
    }

    fn json_text_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |float| float.is_finite())
                .prop_map(Value::from),
            // Digits, signs, exponents, quotes and backslashes inside strings are text.
            "[0-9eE+.\\-]{0,30}|\"[0-9]{20,30}\\\\\"|[a-z\\\\\"0-9 ]{0,12}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                proptest::collection::btree_map("[0-9a-z\\\\\"]{0,6}", inner, 0..4)
                    .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1_000))]

        /// A raw JSON text reads as the value it was printed from, and an integer beyond 64
        /// bits anywhere in it, outside strings, is refused.
        #[test]
        fn raw_json_text_reads_back_as_its_value(value in json_text_value(), at in 0..4_usize) {
            let text = value.to_string();
            proptest::prop_assert_eq!(raw_json(&text, 0).map_err(|error| error.to_string()), Ok(value.clone()));
            let wide = match at {
                0 => format!("[{text}, 18446744073709551616]"),
                1 => format!("[-9223372036854775809, {text}]"),
                2 => format!("{{\"k\": {text}, \"wide\": 100000000000000000000000}}"),
                _ => format!("[[{text}], [123456789012345678901234567890]]"),
            };
            let error = raw_json(&wide, 0).unwrap_err().to_string();
            proptest::prop_assert!(error.contains("outside what JSON numbers"), "{}", error);
        }
    }
}
