//! The arguments struct of a `#[tool]` parameter list, read and described by code every tool
//! shares. The macro writes each tool's table (its field names, their descriptions) and the
//! tuple of its field types, instead of a `#[derive(Deserialize, JsonSchema)]` per tool: a
//! derive's expansion is checked again whenever an edit moves it, these few lines are not. The
//! struct reads and describes itself as the derive with `#[serde(deny_unknown_fields)]` would:
//! the same messages, the same schema.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use schemars::{_private, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, forward_to_deserialize_any};
use serde_json::{Map, Value};

/// A parameter list as the tuple of its types, `(A, B)`: read field by field into one slot each.
pub trait FieldTypes<'de>: Sized {
    /// One `Option` per field: empty until the field is read.
    type Slots;

    /// Every slot empty.
    fn empty() -> Self::Slots;

    /// Reads the value of field `index` into its slot; a second value for it is an error.
    fn read_value<A: MapAccess<'de>>(
        slots: &mut Self::Slots,
        index: usize,
        fields: &'static [&'static str],
        map: &mut A,
    ) -> Result<(), A::Error>;

    /// The fields, each read or, if missing, made from nothing (`None` for an `Option`) or
    /// reported missing.
    fn finish<E: de::Error>(slots: Self::Slots, fields: &'static [&'static str])
    -> Result<Self, E>;

    /// The fields in order from a sequence, as serde reads a struct from an array.
    fn read_seq<A: SeqAccess<'de>>(seq: &mut A, expected: &Elements) -> Result<Self, A::Error>;
}

/// A parameter list as the tuple of its types, each described by its schema.
pub trait FieldSchemas {
    /// Each field's schema, and whether it may be left out (an `Option` read by serde).
    fn schemas(generator: &mut SchemaGenerator) -> Vec<(Schema, bool)>;
}

/// The name of field `index`: the table has one per type, so the fallback is never read.
fn field(fields: &'static [&'static str], index: usize) -> &'static str {
    fields.get(index).copied().unwrap_or("")
}

/// A missing field, as serde's derive reads it: `None` for an `Option`, an error otherwise.
fn missing<'de, T: Deserialize<'de>, E: de::Error>(name: &'static str) -> Result<T, E> {
    T::deserialize(Missing(name, PhantomData))
}

struct Missing<E>(&'static str, PhantomData<E>);

impl<'de, E: de::Error> Deserializer<'de> for Missing<E> {
    type Error = E;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, E> {
        Err(E::missing_field(self.0))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        visitor.visit_none()
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier
        ignored_any
    }
}

macro_rules! field_tuples {
    ($(($($T:ident $index:tt),+))+) => {$(
        impl<'de, $($T: Deserialize<'de>),+> FieldTypes<'de> for ($($T,)+) {
            type Slots = ($(Option<$T>,)+);

            fn empty() -> Self::Slots {
                ($(None::<$T>,)+)
            }

            fn read_value<A: MapAccess<'de>>(
                slots: &mut Self::Slots,
                index: usize,
                fields: &'static [&'static str],
                map: &mut A,
            ) -> Result<(), A::Error> {
                match index {
                    $($index => {
                        if slots.$index.is_some() {
                            return Err(de::Error::duplicate_field(field(fields, $index)));
                        }
                        slots.$index = Some(map.next_value()?);
                    })+
                    _ => return Err(de::Error::custom(format_args!("no field at index {index}"))),
                }
                Ok(())
            }

            fn finish<E: de::Error>(
                slots: Self::Slots,
                fields: &'static [&'static str],
            ) -> Result<Self, E> {
                Ok(($(
                    match slots.$index {
                        Some(value) => value,
                        None => missing(field(fields, $index))?,
                    },
                )+))
            }

            fn read_seq<A: SeqAccess<'de>>(
                seq: &mut A,
                expected: &Elements,
            ) -> Result<Self, A::Error> {
                Ok(($(
                    match seq.next_element::<$T>()? {
                        Some(value) => value,
                        None => return Err(de::Error::invalid_length($index, expected)),
                    },
                )+))
            }
        }

        impl<$($T: JsonSchema),+> FieldSchemas for ($($T,)+) {
            fn schemas(generator: &mut SchemaGenerator) -> Vec<(Schema, bool)> {
                vec![$((
                    generator.subschema_for::<$T>(),
                    generator.contract().is_deserialize() && <$T as JsonSchema>::_schemars_private_is_option(),
                )),+]
            }
        }
    )+};
}

/// No parameter (a tool that takes none, or only its context): no field is known, so any key
/// is refused before a value is read.
impl<'de> FieldTypes<'de> for () {
    type Slots = ();

    fn empty() {}

    fn read_value<A: MapAccess<'de>>(
        &mut (): &mut (),
        index: usize,
        _: &'static [&'static str],
        _: &mut A,
    ) -> Result<(), A::Error> {
        Err(de::Error::custom(format_args!("no field at index {index}")))
    }

    fn finish<E: de::Error>((): (), _: &'static [&'static str]) -> Result<(), E> {
        Ok(())
    }

    fn read_seq<A: SeqAccess<'de>>(_: &mut A, _: &Elements) -> Result<(), A::Error> {
        Ok(())
    }
}

impl FieldSchemas for () {
    fn schemas(_: &mut SchemaGenerator) -> Vec<(Schema, bool)> {
        Vec::new()
    }
}

// Lists of up to 12 parameters (the macro's `SHARED_FIELDS_MAX`); a longer one, or one with
// `#[serde]`/`#[schemars]` on a parameter, is derived.

field_tuples! {
    (T0 0)
    (T0 0, T1 1)
    (T0 0, T1 1, T2 2)
    (T0 0, T1 1, T2 2, T3 3)
    (T0 0, T1 1, T2 2, T3 3, T4 4)
    (T0 0, T1 1, T2 2, T3 3, T4 4, T5 5)
    (T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6)
    (T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7)
    (T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8)
    (T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9)
    (T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10)
    (T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10, T11 11)
}

/// Reads the struct `name` with `fields` (one per type of `T`, in order): from a map, refusing
/// an unknown or repeated field, or from an array.
pub fn deserialize_params<'de, D, T>(
    deserializer: D,
    name: &'static str,
    fields: &'static [&'static str],
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: FieldTypes<'de>,
{
    deserializer.deserialize_struct(
        name,
        fields,
        Params {
            name,
            fields,
            types: PhantomData,
        },
    )
}

struct Params<T> {
    name: &'static str,
    fields: &'static [&'static str],
    types: PhantomData<T>,
}

impl<'de, T: FieldTypes<'de>> Visitor<'de> for Params<T> {
    type Value = T;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "struct {}", self.name)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<T, A::Error> {
        T::read_seq(
            &mut seq,
            &Elements {
                name: self.name,
                count: self.fields.len(),
            },
        )
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        let mut slots = T::empty();
        while let Some(index) = map.next_key_seed(FieldIndex(self.fields))? {
            T::read_value(&mut slots, index, self.fields, &mut map)?;
        }
        T::finish(slots, self.fields)
    }
}

/// What an array too short was expected to hold: "struct `AddArgs` with 2 elements".
#[derive(Debug)]
pub struct Elements {
    name: &'static str,
    count: usize,
}

impl de::Expected for Elements {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural = if self.count == 1 { "" } else { "s" };
        write!(
            formatter,
            "struct {} with {} element{plural}",
            self.name, self.count
        )
    }
}

/// A key read as the index of its field; an unknown key is an error naming the fields.
struct FieldIndex(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for FieldIndex {
    type Value = usize;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<usize, D::Error> {
        deserializer.deserialize_identifier(self)
    }
}

impl Visitor<'_> for FieldIndex {
    type Value = usize;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("field identifier")
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<usize, E> {
        match usize::try_from(value) {
            Ok(index) if index < self.0.len() => Ok(index),
            _ => Err(E::invalid_value(
                de::Unexpected::Unsigned(value),
                &format!("field index 0 <= i < {}", self.0.len()).as_str(),
            )),
        }
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<usize, E> {
        self.0
            .iter()
            .position(|name| *name == value)
            .ok_or_else(|| E::unknown_field(value, self.0))
    }

    fn visit_bytes<E: de::Error>(self, value: &[u8]) -> Result<usize, E> {
        self.0
            .iter()
            .position(|name| name.as_bytes() == value)
            .ok_or_else(|| E::unknown_field(&String::from_utf8_lossy(value), self.0))
    }
}

/// The schema of the struct: an object of `fields`, each described by its parameter's
/// description (a first line starting with `#` is its title), no other property allowed, the
/// struct's own `description` on it (and its title, when it starts with one). Put together with
/// the functions schemars's derive calls, so the two cannot drift apart.
pub fn params_schema<T: FieldSchemas>(
    generator: &mut SchemaGenerator,
    description: &'static str,
    fields: &'static [&'static str],
    descriptions: &'static [&'static str],
) -> Schema {
    let mut object = Map::new();
    object.insert("type".into(), Value::from("object"));
    object.insert("additionalProperties".into(), Value::Bool(false));
    let mut schema = Schema::from(object);
    for (index, (mut field_schema, optional)) in T::schemas(generator).into_iter().enumerate() {
        let doc = descriptions.get(index).copied().unwrap_or_default();
        let (title, field_description) = _private::get_title_and_description(doc);
        _private::insert_metadata_property_if_nonempty(&mut field_schema, "title", title);
        _private::insert_metadata_property_if_nonempty(
            &mut field_schema,
            "description",
            field_description,
        );
        _private::insert_object_property(&mut schema, field(fields, index), optional, field_schema);
    }
    // The struct's doc as the derive reads it: a leading `# heading` is the title.
    let (title, description) = _private::get_title_and_description(description);
    _private::insert_metadata_property_if_nonempty(&mut schema, "title", title);
    _private::insert_metadata_property_if_nonempty(&mut schema, "description", description);
    schema
}

/// The key under which the schema generator keeps the struct's schema apart from others of
/// the same name: its path (with the function it is declared in, if any, where the derive's
/// `module_path!()` would leave that out).
pub fn schema_id<T: ?Sized>() -> Cow<'static, str> {
    Cow::Borrowed(std::any::type_name::<T>())
}
