//! A schema's plan: what the lossless snapshot checks while it builds a value, so that a value
//! it accepts needs no second walk by the validator; and what a call's arguments are checked
//! against before the validator is asked ([`Plan::accepts`]: a few comparisons where the
//! validator's walk costs several times more).
//!
//! One-sided by construction. A plan exists only for schemas made of the few keywords serde
//! derived types produce (`type`, `properties`, `required`, `additionalProperties`, `items`,
//! integer bounds, string `enum`s, an `Option`'s `anyOf` with `null`, annotations), and it
//! accepts a value only when the validator would. Anything it cannot decide exactly — a float against a bound, an enum variant, a
//! keyword outside that set anywhere in the schema — is a doubt, and a doubted value goes to
//! the validator, which has the last word and the error message.

use std::cell::Cell;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

use serde_json::{Map, Number, Value};

/// What a value at one place of the schema must be.
#[derive(Debug)]
pub(crate) enum Plan {
    /// Anything (`true`, or a schema of annotations only).
    Any,
    Check(Box<Check>),
}

/// The keywords of one subschema a plan checks.
#[derive(Debug)]
pub(crate) struct Check {
    /// The JSON types allowed, as [`Kind`] bits.
    types: u8,
    /// `null` is allowed whatever the rest says: `anyOf: [<this>, {"type": "null"}]`, the
    /// schema of an `Option`.
    nullable: bool,
    /// `enum` / `const`: the strings (and `null`) allowed.
    choices: Option<Box<[Option<Box<str>>]>>,
    minimum: Option<Bound>,
    maximum: Option<Bound>,
    items: Plan,
    min_items: u64,
    max_items: u64,
    properties: Box<[Property]>,
    /// The indexes in `properties` of the required ones, as bits.
    required: u64,
    /// For the `n`th field a struct serializes, the index in `properties` it was found at
    /// last time (`u8::MAX` before): a struct writes its fields in the same order every time,
    /// so one comparison finds each.
    field_order: Box<[AtomicU8]>,
    additional: Plan,
}

/// A property of an object, and the address of the `&'static str` a struct serialized its name
/// from when it was last found: the same field of the same struct is then found again without
/// comparing the name. Static memory never changes, so an address and a length that match are
/// the same name.
#[derive(Debug)]
struct Property {
    name: Box<str>,
    plan: Plan,
    static_name: AtomicUsize,
}

/// A bound an integer is compared with exactly, or one it is not (a fractional bound).
#[derive(Clone, Copy, Debug)]
enum Bound {
    Exact(i128),
    Inexact,
}

/// The JSON types, as bits of [`Check::types`].
#[derive(Clone, Copy)]
enum Kind {
    Null = 1,
    Boolean = 2,
    Integer = 4,
    Number = 8,
    String = 16,
    Array = 32,
    Object = 64,
}

const ALL_TYPES: u8 = 127;

/// The formats schemars writes for Rust's numbers: `jsonschema` knows none of them, so it
/// ignores them, and so does the plan.
const NUMERIC_FORMATS: &[&str] = &[
    "int8", "int16", "int32", "int64", "int", "uint8", "uint16", "uint32", "uint64", "uint",
    "float", "double",
];

/// Keywords that assert nothing about a value besides the annotations: the dialect, and the
/// definitions (which assert nothing unless referenced, and a reference means no plan).
const NOT_ASSERTING: &[&str] = &["$schema", "$defs", "definitions"];

impl Plan {
    /// The plan of `schema` (references already inlined), or `None` when some keyword in it is
    /// one the plan does not check. `schema` is within the depth limit: registration measured
    /// it before anything walks it.
    pub(crate) fn of(schema: &Value) -> Option<Self> {
        match schema {
            Value::Bool(true) => Some(Self::Any),
            Value::Bool(false) => Some(Self::Check(Box::new(Check::nothing()))),
            Value::Object(keywords) => Check::of(keywords),
            _ => None,
        }
    }
}

impl Plan {
    /// Whether the plan accepts `value`, already JSON: exactly what the snapshot would decide
    /// while it built it. `value` is within the depth limit (the walk recurses).
    pub(crate) fn accepts(&self, value: &Value) -> bool {
        let doubt = Cell::new(false);
        walk(Expect::new(self, &doubt), value);
        !doubt.get()
    }
}

/// [`Plan::accepts`], at one place of the value. A place with nothing to check (anything goes
/// there, or a doubt was raised already) is not walked.
fn walk(expect: Expect<'_>, value: &Value) {
    let Some((_, doubt)) = expect.0 else {
        return;
    };
    match value {
        Value::Null => expect.null(),
        Value::Bool(_) => expect.boolean(),
        Value::Number(number) => match (number.as_i64(), number.as_u64()) {
            (Some(small), _) => expect.integer(small.into()),
            (None, Some(large)) => expect.integer(large.into()),
            (None, None) => expect.float(),
        },
        Value::String(text) => expect.string(text),
        Value::Array(items) => {
            let expect = expect.array();
            for item in items {
                walk(expect.item(), item);
            }
            expect.end(items.len());
        }
        Value::Object(members) => {
            let mut expect = expect.object();
            for (key, member) in members {
                if doubt.get() {
                    return;
                }
                walk(expect.member(key), member);
            }
            expect.end();
        }
    }
}

impl Check {
    fn nothing() -> Self {
        Self {
            types: 0,
            ..Self::anything()
        }
    }

    fn anything() -> Self {
        Self {
            types: ALL_TYPES,
            nullable: false,
            choices: None,
            minimum: None,
            maximum: None,
            items: Plan::Any,
            min_items: 0,
            max_items: u64::MAX,
            properties: Box::new([]),
            required: 0,
            field_order: Box::new([]),
            additional: Plan::Any,
        }
    }

    fn of(keywords: &Map<String, Value>) -> Option<Plan> {
        let mut check = Self::anything();
        let mut asserts = false;
        let mut properties: Vec<Property> = Vec::new();
        let mut required: &[Value] = &[];
        let mut or_null = None;
        for (keyword, value) in keywords {
            match keyword.as_str() {
                "anyOf" => {
                    or_null = Some(other_than_null(value.as_array()?)?);
                    continue;
                }
                "type" => check.types = types(value)?,
                "enum" => check.choices = Some(choices(value.as_array()?)?),
                "const" => check.choices = Some(choices(std::slice::from_ref(value))?),
                "minimum" => check.minimum = Some(bound(value.as_number()?)),
                "maximum" => check.maximum = Some(bound(value.as_number()?)),
                "minItems" => check.min_items = value.as_u64()?,
                "maxItems" => check.max_items = value.as_u64()?,
                // The array form is draft-07's tuple: not checked here.
                "items" if value.is_object() || value.is_boolean() => {
                    check.items = Plan::of(value)?;
                }
                "properties" => {
                    for (name, subschema) in value.as_object()? {
                        properties.push(Property {
                            name: name.as_str().into(),
                            plan: Plan::of(subschema)?,
                            static_name: AtomicUsize::new(0),
                        });
                    }
                }
                "required" => required = value.as_array()?,
                "additionalProperties" => check.additional = Plan::of(value)?,
                "format" if NUMERIC_FORMATS.contains(&value.as_str()?) => continue,
                annotation
                    if super::ANNOTATIONS.contains(&annotation)
                        || NOT_ASSERTING.contains(&annotation)
                        || annotation.starts_with("x-") =>
                {
                    continue;
                }
                _ => return None,
            }
            asserts = true;
        }
        if let Some(branch) = or_null {
            // Alongside annotations only: anything else would be a conjunction to check.
            if asserts {
                return None;
            }
            return Some(match Plan::of(branch)? {
                Plan::Any => Plan::Any,
                Plan::Check(mut check) => {
                    check.nullable = true;
                    Plan::Check(check)
                }
            });
        }
        // One bit per property, for `required`.
        if properties.len() > 64 {
            return None;
        }
        for name in required {
            let at = properties
                .iter()
                .position(|property| Some(&*property.name) == name.as_str())?;
            check.required |= 1 << at;
        }
        check.field_order = properties.iter().map(|_| AtomicU8::new(u8::MAX)).collect();
        check.properties = properties.into_boxed_slice();
        Some(if asserts {
            Plan::Check(Box::new(check))
        } else {
            Plan::Any
        })
    }
}

impl Check {
    /// The property the `nth` field a struct serializes, named `key`, is (`None`: an
    /// additional one). Static memory never changes, so a property whose remembered address
    /// and length match `key`'s has its name.
    fn field_at(&self, nth: usize, key: &'static str) -> Option<usize> {
        let address = key.as_ptr().addr();
        let named_by_key = |property: &Property| {
            property.static_name.load(Ordering::Relaxed) == address
                && property.name.len() == key.len()
        };
        let slot = self.field_order.get(nth);
        if let Some(slot) = slot {
            let guess = usize::from(slot.load(Ordering::Relaxed));
            if self.properties.get(guess).is_some_and(named_by_key) {
                return Some(guess);
            }
        }
        let at = self.properties.iter().position(named_by_key).or_else(|| {
            let at = self
                .properties
                .iter()
                .position(|property| *property.name == *key)?;
            self.properties[at]
                .static_name
                .store(address, Ordering::Relaxed);
            Some(at)
        })?;
        // At most 64 properties (`required` is a `u64`): the index fits.
        if let (Some(slot), Ok(at)) = (slot, u8::try_from(at)) {
            slot.store(at, Ordering::Relaxed);
        }
        Some(at)
    }
}

/// The branch of `[branch, {"type": "null"}]` (either order) that is not the null one.
fn other_than_null(branches: &[Value]) -> Option<&Value> {
    let is_null = |branch: &Value| {
        branch.as_object().is_some_and(|keywords| {
            keywords.len() == 1 && keywords.get("type") == Some(&Value::from("null"))
        })
    };
    match branches {
        [branch, null] if is_null(null) => Some(branch),
        [null, branch] if is_null(null) => Some(branch),
        _ => None,
    }
}

fn types(value: &Value) -> Option<u8> {
    let kind = |name: &Value| {
        Some(match name.as_str()? {
            "null" => Kind::Null,
            "boolean" => Kind::Boolean,
            "integer" => Kind::Integer,
            "number" => Kind::Number,
            "string" => Kind::String,
            "array" => Kind::Array,
            "object" => Kind::Object,
            _ => return None,
        } as u8)
    };
    match value {
        Value::Array(names) => names
            .iter()
            .try_fold(0, |types, name| Some(types | kind(name)?)),
        name => kind(name),
    }
}

/// An `enum` of strings and `null`s; anything else is not checked here.
fn choices(values: &[Value]) -> Option<Box<[Option<Box<str>>]>> {
    values
        .iter()
        .map(|value| match value {
            Value::Null => Some(None),
            Value::String(text) => Some(Some(text.as_str().into())),
            _ => None,
        })
        .collect()
}

fn bound(number: &Number) -> Bound {
    match (number.as_i64(), number.as_u64()) {
        (Some(small), _) => Bound::Exact(small.into()),
        (None, Some(large)) => Bound::Exact(large.into()),
        (None, None) => Bound::Inexact,
    }
}

/// What the value being serialized at one place must be: a check and the flag a failed (or
/// undecidable) check raises, or nothing to check.
#[derive(Clone, Copy)]
pub(crate) struct Expect<'p>(Option<(&'p Check, &'p Cell<bool>)>);

impl<'p> Expect<'p> {
    /// Nothing to check.
    pub(crate) const NOTHING: Expect<'static> = Expect(None);

    /// `plan`'s checks, raising `doubt` on the first that fails. Once it is raised, nothing
    /// more is checked: the validator will see the value anyway.
    pub(crate) fn new(plan: &'p Plan, doubt: &'p Cell<bool>) -> Self {
        match plan {
            Plan::Check(check) if !doubt.get() => Self(Some((check, doubt))),
            _ => Self(None),
        }
    }

    fn is(self, kind: Kind) -> Option<(&'p Check, &'p Cell<bool>)> {
        let (check, doubt) = self.0?;
        if check.types & kind as u8 == 0 {
            doubt.set(true);
            return None;
        }
        Some((check, doubt))
    }

    pub(crate) fn null(self) {
        if self.0.is_some_and(|(check, _)| check.nullable) {
            return;
        }
        if let Some((check, doubt)) = self.is(Kind::Null)
            && check
                .choices
                .as_ref()
                .is_some_and(|choices| !choices.contains(&None))
        {
            doubt.set(true);
        }
    }

    pub(crate) fn boolean(self) {
        self.unlisted(Kind::Boolean);
    }

    /// [`is`](Self::is), for a kind no `enum` the plan checks lists (only strings and `null`).
    fn unlisted(self, kind: Kind) -> Option<(&'p Check, &'p Cell<bool>)> {
        let (check, doubt) = self.is(kind)?;
        if check.choices.is_some() {
            doubt.set(true);
            return None;
        }
        Some((check, doubt))
    }

    pub(crate) fn string(self, text: &str) {
        if let Some((check, doubt)) = self.is(Kind::String)
            && let Some(choices) = &check.choices
            && !choices.iter().any(|choice| choice.as_deref() == Some(text))
        {
            doubt.set(true);
        }
    }

    /// An integer (`i64`, `u64` and what fits in them).
    pub(crate) fn integer(self, value: i128) {
        let Some((check, doubt)) = self.0 else {
            return;
        };
        let within = |bound: Option<Bound>, holds: fn(i128, i128) -> bool| match bound {
            None => true,
            Some(Bound::Exact(bound)) => holds(value, bound),
            Some(Bound::Inexact) => false,
        };
        let typed = check.types & (Kind::Integer as u8 | Kind::Number as u8) != 0;
        if !typed
            || check.choices.is_some()
            || !within(check.minimum, |value, bound| value >= bound)
            || !within(check.maximum, |value, bound| value <= bound)
        {
            doubt.set(true);
        }
    }

    /// A float: accepted where any number is, without bounds (an integral float against
    /// `"integer"`, or against a bound, is the validator's to judge).
    pub(crate) fn float(self) {
        if let Some((check, doubt)) = self.is(Kind::Number)
            && (check.choices.is_some() || check.minimum.is_some() || check.maximum.is_some())
        {
            doubt.set(true);
        }
    }

    /// An enum variant written as `{"Variant": …}` or `"Variant"`: their schemas are
    /// `oneOf`s, which the plan does not check; a plan that met one anyway doubts.
    pub(crate) fn variant(self) {
        self.doubt();
    }

    /// A value the plan does not check (a raw JSON text): the validator judges it.
    pub(crate) fn doubt(self) {
        if let Some((_, doubt)) = self.0 {
            doubt.set(true);
        }
    }

    pub(crate) fn array(self) -> ExpectItems<'p> {
        ExpectItems(self.unlisted(Kind::Array))
    }

    pub(crate) fn object(self) -> ExpectMembers<'p> {
        ExpectMembers {
            expect: self.unlisted(Kind::Object),
            seen: 0,
            members: 0,
        }
    }
}

/// What the elements of an array must be.
#[derive(Clone, Copy)]
pub(crate) struct ExpectItems<'p>(Option<(&'p Check, &'p Cell<bool>)>);

impl<'p> ExpectItems<'p> {
    pub(crate) const NOTHING: ExpectItems<'static> = ExpectItems(None);

    pub(crate) fn item(self) -> Expect<'p> {
        match self.0 {
            Some((check, doubt)) => Expect::new(&check.items, doubt),
            None => Expect::NOTHING,
        }
    }

    pub(crate) fn end(self, len: usize) {
        if let Some((check, doubt)) = self.0 {
            let len = len as u64;
            if len < check.min_items || len > check.max_items {
                doubt.set(true);
            }
        }
    }
}

/// What the members of an object must be, and which required ones were seen.
pub(crate) struct ExpectMembers<'p> {
    expect: Option<(&'p Check, &'p Cell<bool>)>,
    seen: u64,
    /// How many members (or fields) were met so far.
    members: usize,
}

impl<'p> ExpectMembers<'p> {
    pub(crate) const NOTHING: ExpectMembers<'static> = ExpectMembers {
        expect: None,
        seen: 0,
        members: 0,
    };

    /// A member whose name a map serialized (or a walk met): looked for first where a map
    /// whose keys are all properties, in their order, has it.
    pub(crate) fn member(&mut self, key: &str) -> Expect<'p> {
        let Some((check, doubt)) = self.expect else {
            return Expect::NOTHING;
        };
        let nth = self.members;
        self.members += 1;
        let named = |property: &Property| *property.name == *key;
        let at = if check.properties.get(nth).is_some_and(named) {
            Some(nth)
        } else {
            check.properties.iter().position(named)
        };
        self.found(check, doubt, at)
    }

    /// A field a struct serialized: its name is static, and found by address after the first
    /// time — where the same struct's field in this position was found, most often.
    pub(crate) fn field(&mut self, key: &'static str) -> Expect<'p> {
        let Some((check, doubt)) = self.expect else {
            return Expect::NOTHING;
        };
        let nth = self.members;
        self.members += 1;
        let at = check.field_at(nth, key);
        self.found(check, doubt, at)
    }

    fn found(&mut self, check: &'p Check, doubt: &'p Cell<bool>, at: Option<usize>) -> Expect<'p> {
        match at {
            Some(at) => {
                self.seen |= 1 << at;
                Expect::new(&check.properties[at].plan, doubt)
            }
            None => Expect::new(&check.additional, doubt),
        }
    }

    pub(crate) fn end(self) {
        if let Some((check, doubt)) = self.expect
            && check.required & !self.seen != 0
        {
            doubt.set(true);
        }
    }
}
