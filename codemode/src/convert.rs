//! Values between the program and the host, losslessly: what `JSON.stringify` would turn into
//! `null` or drop (`NaN`, `undefined`, functions, `BigInt`, cycles, a `Map`) is an error naming
//! where it is, and an integer JavaScript cannot hold exactly never reaches a program.

use std::fmt::Write as _;

use rquickjs::{Ctx, Object, Type, Value};
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

impl From<rquickjs::Error> for NotJson {
    fn from(error: rquickjs::Error) -> Self {
        Self::Engine(error)
    }
}

/// Reads a program's value as JSON, refusing anything JSON cannot hold as it is.
pub(crate) fn to_json<'js>(
    ctx: &Ctx<'js>,
    value: &Value<'js>,
    root: &str,
    max_bytes: usize,
) -> Result<serde_json::Value, NotJson> {
    let object_prototype: Object<'js> = ctx
        .globals()
        .get::<_, Object<'js>>("Object")?
        .get("prototype")?;
    let mut reader = Reader {
        object_prototype,
        ancestors: Vec::new(),
        path: root.to_owned(),
        budget: max_bytes,
    };
    reader.read(value)
}

struct Reader<'js> {
    object_prototype: Object<'js>,
    /// The objects and arrays being read, outermost first: meeting one again is a cycle.
    ancestors: Vec<Value<'js>>,
    path: String,
    budget: usize,
}

impl<'js> Reader<'js> {
    fn read(&mut self, value: &Value<'js>) -> Result<serde_json::Value, NotJson> {
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
                        self.refuse("a string that is not valid Unicode (a lone surrogate)")
                    })?
                    .unwrap_or_default();
                self.spend(text.len() + 2)?;
                serde_json::Value::String(text)
            }
            Type::Array => self.array(value)?,
            Type::Object => self.object(value)?,
            Type::Undefined | Type::Uninitialized => {
                return Err(self.refuse(
                    "`undefined` (JSON has no undefined: use null, or leave the property out)",
                ));
            }
            Type::BigInt => {
                return Err(self.refuse("a BigInt (convert it with Number() or String())"));
            }
            Type::Symbol => return Err(self.refuse("a Symbol")),
            Type::Function | Type::Constructor => return Err(self.refuse("a function")),
            Type::Promise => return Err(self.refuse("a Promise (await it)")),
            Type::Proxy => return Err(self.refuse("a Proxy")),
            Type::Exception => return Err(self.refuse("an Error object (use its message)")),
            Type::Module | Type::Unknown => return Err(self.refuse("a value that is not data")),
        };
        Ok(json)
    }

    fn number(&mut self, number: f64) -> Result<serde_json::Value, NotJson> {
        if !number.is_finite() {
            let shown = match number {
                f64::INFINITY => "Infinity",
                f64::NEG_INFINITY => "-Infinity",
                _ => "NaN",
            };
            return Err(self.refuse(&format!("{shown} (JSON numbers are finite)")));
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

    fn array(&mut self, value: &Value<'js>) -> Result<serde_json::Value, NotJson> {
        let array = value
            .as_array()
            .cloned()
            .ok_or_else(|| self.refuse("an array"))?;
        self.enter(value)?;
        let mut items = Vec::with_capacity(array.len().min(1024));
        let length = self.path.len();
        for index in 0..array.len() {
            self.spend(1)?;
            let _ = write!(self.path, "[{index}]");
            let item: Value<'js> = array.get(index)?;
            items.push(self.read(&item)?);
            self.path.truncate(length);
        }
        self.spend(2)?;
        self.ancestors.pop();
        Ok(serde_json::Value::Array(items))
    }

    fn object(&mut self, value: &Value<'js>) -> Result<serde_json::Value, NotJson> {
        let object = value
            .as_object()
            .cloned()
            .ok_or_else(|| self.refuse("an object"))?;
        match object.get_prototype() {
            None => {}
            Some(prototype) if prototype == self.object_prototype => {}
            Some(_) => {
                let class = class_name(&object);
                return Err(self.refuse(&format!(
                    "a {class} object (only plain objects and arrays are JSON)"
                )));
            }
        }
        self.enter(value)?;
        let mut map = Map::new();
        let length = self.path.len();
        for entry in object.props::<String, Value<'js>>() {
            let (key, item) = entry?;
            self.spend(key.len() + 4)?;
            push_key(&mut self.path, &key);
            let item = self.read(&item)?;
            self.path.truncate(length);
            map.insert(key, item);
        }
        self.spend(2)?;
        self.ancestors.pop();
        Ok(serde_json::Value::Object(map))
    }

    /// Enters an object or array: refuses a cycle and nesting past [`MAX_DEPTH`].
    fn enter(&mut self, value: &Value<'js>) -> Result<(), NotJson> {
        if self.ancestors.iter().any(|ancestor| ancestor == value) {
            return Err(self.refuse("a cycle (the value contains itself)"));
        }
        if self.ancestors.len() >= MAX_DEPTH {
            return Err(self.refuse(&format!("nesting deeper than {MAX_DEPTH} levels")));
        }
        self.ancestors.push(value.clone());
        Ok(())
    }

    fn spend(&mut self, bytes: usize) -> Result<(), NotJson> {
        self.budget = self.budget.checked_sub(bytes).ok_or(NotJson::TooLarge)?;
        Ok(())
    }

    fn refuse(&self, what: &str) -> NotJson {
        NotJson::Value(format!("`{}` is {what}", self.path))
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
    let mut path = "value".to_owned();
    if let Err(()) = check_safe_integers(value, &mut path) {
        return Ok(Err(format!(
            "`{path}` is an integer JavaScript cannot hold exactly (beyond ±2^53 − 1)"
        )));
    }
    // JSON.parse keeps every key as an own property (`__proto__` included), which setting
    // properties one by one would not.
    let text = serde_json::to_string(value).unwrap_or_else(|_| "null".to_owned());
    ctx.json_parse(text).map(Ok)
}

fn check_safe_integers(value: &serde_json::Value, path: &mut String) -> Result<(), ()> {
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
            if safe { Ok(()) } else { Err(()) }
        }
        serde_json::Value::Array(items) => {
            let length = path.len();
            for (index, item) in items.iter().enumerate() {
                let _ = write!(path, "[{index}]");
                check_safe_integers(item, path)?;
                path.truncate(length);
            }
            Ok(())
        }
        serde_json::Value::Object(map) => {
            let length = path.len();
            for (key, item) in map {
                push_key(path, key);
                check_safe_integers(item, path)?;
                path.truncate(length);
            }
            Ok(())
        }
        _ => Ok(()),
    }
}
