//! Values between the program and the host, losslessly: what `JSON.stringify` would turn into
//! `null` or drop (`NaN`, `undefined`, functions, `BigInt`, cycles, a `Map`) is an error naming
//! where it is, and an integer JavaScript cannot hold exactly never reaches a program.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::hash::{BuildHasherDefault, Hasher};

use rquickjs::object::ObjectKeysIter;
use rquickjs::{Atom, Ctx, Object, Type, Value};
use serde_json::{Map, Number};
use toolprism::depth::MAX_DEPTH;

/// The largest integer a JavaScript number holds exactly (`Number.MAX_SAFE_INTEGER`).
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// [`MAX_SAFE_INTEGER`] as a float (exact: it has 53 bits).
const MAX_SAFE_FLOAT: f64 = 9_007_199_254_740_991.0;

/// Why a JavaScript value is not JSON, and where.
#[derive(Debug)]
pub(crate) enum NotJson {
    /// Not representable: the message names the path and what was there.
    Value(String),
    /// Larger than the byte limit.
    TooLarge,
    /// The engine failed (out of memory, interrupted) while reading the value.
    Engine(rquickjs::Error),
}

/// Why reading stopped, before the path is known: the path of a refused value is put
/// together as the refusal travels out (each level adds its step), so a value that reads
/// cleanly never builds one.
enum Stopped {
    Refused {
        what: String,
        /// Innermost first.
        steps: Vec<Step>,
    },
    TooLarge,
    Engine(rquickjs::Error),
}

/// One step of a path: an array index or an object key.
enum Step {
    Index(usize),
    Key(String),
}

impl From<rquickjs::Error> for Stopped {
    fn from(error: rquickjs::Error) -> Self {
        Self::Engine(error)
    }
}

impl Stopped {
    fn refused(what: impl Into<String>) -> Self {
        Self::Refused {
            what: what.into(),
            steps: Vec::new(),
        }
    }

    /// The same stop, one level further out: behind `step`.
    fn behind(mut self, step: Step) -> Self {
        if let Self::Refused { steps, .. } = &mut self {
            steps.push(step);
        }
        self
    }

    fn into_not_json(self, root: &str) -> NotJson {
        match self {
            Self::Refused { what, steps } => {
                NotJson::Value(format!("`{}` is {what}", path(root, steps.iter().rev())))
            }
            Self::TooLarge => NotJson::TooLarge,
            Self::Engine(error) => NotJson::Engine(error),
        }
    }
}

/// `root.key[0]["odd key"]`, as a program would write the path.
fn path<'a>(root: &str, steps: impl Iterator<Item = &'a Step>) -> String {
    let mut path = root.to_owned();
    for step in steps {
        match step {
            Step::Index(index) => {
                let _ = write!(path, "[{index}]");
            }
            Step::Key(key) => push_key(&mut path, key),
        }
    }
    path
}

/// What reading a run's values keeps from one value to the next.
///
/// - `Object.prototype`, what a plain object's prototype is: looked up once per run, as a
///   program cannot change what it is.
/// - The names of the keys read so far, by atom: most calls pass the same few keys.
/// - One list of keys of each length up to [`HELD_KEY_LISTS`]. QuickJS's allocator serves
///   small blocks from 4 KB arenas, one size class each, and frees an arena as soon as its
///   last block goes. Reading an object allocates and frees the list of its keys, most often
///   the only block of its size class in a quiet run: every call made a 4 KB arena, wrote each
///   of its blocks' headers, and freed it (a sixteenth of a nested call's instructions). A
///   list of each length held for the run keeps those arenas.
///
/// - The list of objects being read (for cycles), empty between reads, so that reading an
///   object does not allocate one.
///
/// [`Reading::clear`] lets go of all of it, which must happen before the runtime goes.
pub(crate) struct Reading<'js> {
    object_prototype: RefCell<Option<Object<'js>>>,
    names: RefCell<HashMap<Atom<'js>, String, BuildHasherDefault<AtomHasher>>>,
    key_lists: RefCell<Vec<Option<ObjectKeysIter<'js, Atom<'js>>>>>,
    ancestors: RefCell<Vec<Value<'js>>>,
}

/// Hashes an atom, a number the engine hands out, by one multiplication. A map of at most
/// [`MAX_KEPT_NAMES`] entries needs no defence against chosen keys, and `SipHash` cost more
/// than the rest of finding a key's name.
#[derive(Default)]
pub(crate) struct AtomHasher(u64);

impl Hasher for AtomHasher {
    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.write_u64(u64::from(*byte));
        }
    }

    fn write_u32(&mut self, atom: u32) {
        self.write_u64(u64::from(atom));
    }

    fn write_u64(&mut self, number: u64) {
        // Fibonacci hashing: the table reads the top bits too, which this spreads the atom over.
        self.0 = (self.0.rotate_left(5) ^ number).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Key lists of up to this many keys are held (one per length).
const HELD_KEY_LISTS: usize = 16;

/// Names longer than this are read each time, not kept.
const MAX_KEPT_NAME_BYTES: usize = 64;

/// At most this many names are kept.
const MAX_KEPT_NAMES: usize = 256;

impl<'js> Reading<'js> {
    pub(crate) fn new(ctx: &Ctx<'js>) -> rquickjs::Result<Self> {
        let object_prototype = ctx
            .globals()
            .get::<_, Object<'js>>("Object")?
            .get("prototype")?;
        Ok(Self {
            object_prototype: RefCell::new(Some(object_prototype)),
            names: RefCell::default(),
            key_lists: RefCell::default(),
            ancestors: RefCell::default(),
        })
    }

    /// Reads a program's value as JSON, refusing anything JSON cannot hold as it is.
    pub(crate) fn to_json(
        &self,
        value: &Value<'js>,
        root: &str,
        max_bytes: usize,
    ) -> Result<serde_json::Value, NotJson> {
        let object_prototype = self
            .object_prototype
            .borrow()
            .clone()
            .ok_or_else(|| NotJson::Value(format!("`{root}` was read after the run ended")))?;
        // Taken, not borrowed: a getter the reading runs may read a value of its own.
        let ancestors = std::mem::take(&mut *self.ancestors.borrow_mut());
        let mut reader = Reader {
            reading: self,
            object_prototype,
            ancestors,
            budget: max_bytes,
        };
        let read = reader.read(value);
        let mut ancestors = reader.ancestors;
        ancestors.clear();
        *self.ancestors.borrow_mut() = ancestors;
        read.map_err(|stopped| stopped.into_not_json(root))
    }

    /// Lets go of every value held.
    pub(crate) fn clear(&self) {
        self.key_lists.borrow_mut().clear();
        self.names.borrow_mut().clear();
        self.ancestors.borrow_mut().clear();
        self.object_prototype.borrow_mut().take();
    }

    /// A key's name, kept when short. Read as a string, whole: the atom's own text would stop
    /// at a NUL and take a lone surrogate for UTF-8.
    fn name_of(&self, atom: &Atom<'js>) -> Result<String, Stopped> {
        if let Some(name) = self.names.borrow().get(atom) {
            return Ok(name.clone());
        }
        let name = atom
            .to_js_string()?
            .to_string()
            .map_err(|error| match error {
                rquickjs::Error::Utf8(_) => Stopped::refused(
                    "an object with a key that is not valid Unicode (a lone surrogate)",
                ),
                other => Stopped::Engine(other),
            })?;
        let mut names = self.names.borrow_mut();
        if name.len() <= MAX_KEPT_NAME_BYTES && names.len() < MAX_KEPT_NAMES {
            names.insert(atom.clone(), name.clone());
        }
        Ok(name)
    }

    /// Holds a list of `count` keys, read to its end, if none of its length is held yet.
    fn hold(&self, count: usize, keys: ObjectKeysIter<'js, Atom<'js>>) {
        let mut lists = self.key_lists.borrow_mut();
        if !(1..=HELD_KEY_LISTS).contains(&count) {
            return;
        }
        if lists.len() < HELD_KEY_LISTS {
            lists.resize_with(HELD_KEY_LISTS, || None);
        }
        let slot = &mut lists[count - 1];
        if slot.is_none() {
            *slot = Some(keys);
        }
    }
}

struct Reader<'r, 'js> {
    reading: &'r Reading<'js>,
    object_prototype: Object<'js>,
    /// The objects and arrays being read, outermost first: meeting one again is a cycle.
    ancestors: Vec<Value<'js>>,
    budget: usize,
}

impl<'js> Reader<'_, 'js> {
    fn read(&mut self, value: &Value<'js>) -> Result<serde_json::Value, Stopped> {
        let json = match value.type_of() {
            Type::Null => serde_json::Value::Null,
            Type::Bool => serde_json::Value::Bool(value.as_bool().unwrap_or_default()),
            Type::Int => serde_json::Value::from(value.as_int().unwrap_or_default()),
            Type::Float => self.number(value.as_float().unwrap_or(f64::NAN))?,
            Type::String => {
                let text = value
                    .as_string()
                    .map(rquickjs::String::to_string)
                    .transpose()
                    .map_err(|_| {
                        Stopped::refused("a string that is not valid Unicode (a lone surrogate)")
                    })?
                    .unwrap_or_default();
                self.spend(text.len() + 2)?;
                serde_json::Value::String(text)
            }
            Type::Array => self.array(value)?,
            Type::Object => self.object(value)?,
            Type::Undefined | Type::Uninitialized => {
                return Err(Stopped::refused(
                    "`undefined` (JSON has no undefined: use null, or leave the property out)",
                ));
            }
            Type::BigInt => {
                return Err(Stopped::refused(
                    "a BigInt (convert it with Number() or String())",
                ));
            }
            Type::Symbol => return Err(Stopped::refused("a Symbol")),
            Type::Function | Type::Constructor => return Err(Stopped::refused("a function")),
            Type::Promise => return Err(Stopped::refused("a Promise (await it)")),
            Type::Proxy => return Err(Stopped::refused("a Proxy")),
            Type::Exception => return Err(Stopped::refused("an Error object (use its message)")),
            Type::Module | Type::Unknown => {
                return Err(Stopped::refused("a value that is not data"));
            }
        };
        Ok(json)
    }

    fn number(&mut self, number: f64) -> Result<serde_json::Value, Stopped> {
        if !number.is_finite() {
            let shown = match number {
                f64::INFINITY => "Infinity",
                f64::NEG_INFINITY => "-Infinity",
                _ => "NaN",
            };
            return Err(Stopped::refused(format!(
                "{shown} (JSON numbers are finite)"
            )));
        }
        self.spend(24)?;
        #[expect(
            clippy::cast_possible_truncation,
            reason = "only integral values within ±2^53 are cast"
        )]
        if number.fract() == 0.0 && number.abs() <= MAX_SAFE_FLOAT {
            return Ok(serde_json::Value::from(number as i64));
        }
        Ok(Number::from_f64(number).map_or(serde_json::Value::Null, serde_json::Value::Number))
    }

    fn array(&mut self, value: &Value<'js>) -> Result<serde_json::Value, Stopped> {
        let array = value
            .as_array()
            .cloned()
            .ok_or_else(|| Stopped::refused("an array"))?;
        self.enter(value)?;
        let mut items = Vec::with_capacity(array.len().min(1024));
        for index in 0..array.len() {
            self.spend(1)?;
            let item: Value<'js> = array.get(index)?;
            items.push(
                self.read(&item)
                    .map_err(|stopped| stopped.behind(Step::Index(index)))?,
            );
        }
        self.spend(2)?;
        self.ancestors.pop();
        Ok(serde_json::Value::Array(items))
    }

    fn object(&mut self, value: &Value<'js>) -> Result<serde_json::Value, Stopped> {
        let object = value
            .as_object()
            .cloned()
            .ok_or_else(|| Stopped::refused("an object"))?;
        match object.get_prototype() {
            None => {}
            Some(prototype) if prototype == self.object_prototype => {}
            Some(_) => {
                let class = class_name(&object);
                return Err(Stopped::refused(format!(
                    "a {class} object (only plain objects and arrays are JSON)"
                )));
            }
        }
        self.enter(value)?;
        let mut map = Map::new();
        let mut keys = object.keys::<Atom<'js>>();
        let count = keys.len();
        if count == 0
            && let Some(Err(error)) = keys.next()
        {
            return Err(error.into());
        }
        // Read to the last key, not past it: past it the list is let go of, and it may be held.
        for _ in 0..count {
            let Some(atom) = keys.next().transpose()? else {
                break;
            };
            let key = self.reading.name_of(&atom)?;
            let item: Value<'js> = object.get(atom)?;
            self.spend(key.len() + 4)?;
            match self.read(&item) {
                Ok(item) => map.insert(key, item),
                Err(stopped) => return Err(stopped.behind(Step::Key(key))),
            };
        }
        self.reading.hold(count, keys);
        self.spend(2)?;
        self.ancestors.pop();
        Ok(serde_json::Value::Object(map))
    }

    /// Enters an object or array: refuses a cycle and nesting past [`MAX_DEPTH`].
    fn enter(&mut self, value: &Value<'js>) -> Result<(), Stopped> {
        if self.ancestors.iter().any(|ancestor| ancestor == value) {
            return Err(Stopped::refused("a cycle (the value contains itself)"));
        }
        if self.ancestors.len() >= MAX_DEPTH {
            return Err(Stopped::refused(format!(
                "nesting deeper than {MAX_DEPTH} levels"
            )));
        }
        self.ancestors.push(value.clone());
        Ok(())
    }

    fn spend(&mut self, bytes: usize) -> Result<(), Stopped> {
        self.budget = self.budget.checked_sub(bytes).ok_or(Stopped::TooLarge)?;
        Ok(())
    }
}

/// `.name` or `["odd key"]`, as a program would write the path.
fn push_key(path: &mut String, key: &str) {
    let identifier = key
        .chars()
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_' || first == '$')
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    if identifier {
        path.push('.');
        path.push_str(key);
    } else {
        path.push('[');
        path.push_str(&serde_json::Value::String(key.to_owned()).to_string());
        path.push(']');
    }
}

/// The constructor's name of a non-plain object, for the message (`Date`, `Map`…).
fn class_name(object: &Object<'_>) -> String {
    object
        .get::<_, Object<'_>>("constructor")
        .and_then(|constructor| constructor.get::<_, String>("name"))
        .ok()
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "class".to_owned())
}

/// Gives a JSON value to a program. An integer beyond ±(2^53 − 1) would silently change as a
/// JavaScript number, so it is refused, naming where it is.
pub(crate) fn to_js<'js>(
    ctx: &Ctx<'js>,
    value: &serde_json::Value,
) -> Result<Result<Value<'js>, String>, rquickjs::Error> {
    // Most tool values are a number, a string or a flag: made here, with no JSON text between.
    match value {
        serde_json::Value::Null => return Ok(Ok(Value::new_null(ctx.clone()))),
        serde_json::Value::Bool(flag) => return Ok(Ok(Value::new_bool(ctx.clone(), *flag))),
        serde_json::Value::String(text) => {
            return rquickjs::String::from_str(ctx.clone(), text).map(|text| Ok(text.into()));
        }
        serde_json::Value::Number(number) => {
            if let Some(integer) = number.as_i64().and_then(|n| i32::try_from(n).ok()) {
                return Ok(Ok(Value::new_int(ctx.clone(), integer)));
            }
            // A float is a JavaScript number as it is; a larger integer is checked below.
            if number.is_f64()
                && let Some(float) = number.as_f64()
            {
                return Ok(Ok(Value::new_float(ctx.clone(), float)));
            }
        }
        serde_json::Value::Array(_) | serde_json::Value::Object(_) => {}
    }
    if let Err(steps) = check_safe_integers(value) {
        return Ok(Err(format!(
            "`{}` is an integer JavaScript cannot hold exactly (beyond ±2^53 − 1)",
            path("value", steps.iter().rev())
        )));
    }
    // JSON.parse keeps every key as an own property (`__proto__` included), which setting
    // properties one by one would not.
    let text = serde_json::to_string(value).unwrap_or_else(|_| "null".to_owned());
    ctx.json_parse(text).map(Ok)
}

/// Refuses an integer beyond ±(2^53 − 1), giving the steps to it, innermost first.
fn check_safe_integers(value: &serde_json::Value) -> Result<(), Vec<Step>> {
    match value {
        serde_json::Value::Number(number) => {
            let safe = number
                .as_u64()
                .map(|n| n <= MAX_SAFE_INTEGER)
                .or_else(|| {
                    number
                        .as_i64()
                        .map(|n| n.unsigned_abs() <= MAX_SAFE_INTEGER)
                })
                .unwrap_or(true);
            if safe { Ok(()) } else { Err(Vec::new()) }
        }
        serde_json::Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                check_safe_integers(item).map_err(|mut steps| {
                    steps.push(Step::Index(index));
                    steps
                })?;
            }
            Ok(())
        }
        serde_json::Value::Object(map) => {
            for (key, item) in map {
                check_safe_integers(item).map_err(|mut steps| {
                    steps.push(Step::Key(key.clone()));
                    steps
                })?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}
