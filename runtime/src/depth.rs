//! Nesting depth: the one limit on how deep arguments, values, metadata and schemas may nest,
//! checked without recursion, and the disposal of values that are deeper.
//!
//! A `serde_json::Value` built in memory can be nested arbitrarily deep, and everything that
//! walks one recursively — validation, deserialization, `Clone`, `PartialEq`, even `Drop` —
//! overflows the stack somewhere past a few thousand levels, which aborts the process. So a
//! value that comes from outside is measured here, by a loop, before anything recursive
//! touches it; one that is too deep is refused and taken apart by a loop too.

use std::fmt::Write as _;

use serde_json::Value;

use crate::text::truncate;

/// The deepest nesting of arrays and objects accepted anywhere: in a call's arguments, a tool's
/// value, presentation metadata, a session log event's JSON and a JSON Schema.
///
/// A scalar has depth 0, `[]` and `{}` depth 1, `[[1]]` depth 2. Text parsed by `serde_json`
/// is already cut off at 127 levels; this limit is lower so that a value at the limit still
/// fits, with room to spare, inside the event that logs it.
pub const MAX_DEPTH: usize = 64;

/// Longest JSON Pointer quoted in a depth error.
const MAX_QUOTED_POINTER: usize = 200;

/// A value or schema that nests deeper than [`MAX_DEPTH`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("deeper than {MAX_DEPTH} levels of arrays and objects (at `{at}`)")]
pub struct TooDeep {
    /// JSON Pointer to the first array or object past the limit, cut to a readable length.
    pub at: String,
}

/// What a walk of a value found besides its depth: hints that let the pipeline skip work.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Shape {
    /// A float with no fractional part (`1.0`) is somewhere in the value.
    pub(crate) integral_float: bool,
    /// A `null` is somewhere below the root.
    pub(crate) null: bool,
    /// How many nodes (arrays, objects and scalars) the value has.
    pub(crate) nodes: usize,
    /// How many arrays and objects nest, one inside the other, at most (0 for a scalar).
    pub(crate) depth: usize,
}

/// Whether `serde_json` refused a text for nesting past its own parser's limit (128 levels),
/// which this crate reports as a value nesting past [`MAX_DEPTH`].
pub(crate) fn is_past_parser_depth(error: &serde_json::Error) -> bool {
    error.to_string().starts_with("recursion limit exceeded")
}

/// Checks that `value` nests at most [`MAX_DEPTH`] levels, with a loop.
///
/// ```
/// use serde_json::{json, Value};
/// use toolprism::depth::{MAX_DEPTH, check_depth};
///
/// assert!(check_depth(&json!({"a": [1, 2, {"b": null}]})).is_ok());
/// let mut deep = json!(1);
/// for _ in 0..=MAX_DEPTH {
///     deep = Value::Array(vec![deep]);
/// }
/// let error = check_depth(&deep).unwrap_err();
/// assert!(error.at.starts_with("/0/0/0"));
/// ```
pub fn check_depth(value: &Value) -> Result<(), TooDeep> {
    inspect(value).map(|_| ())
}

/// One walk of `value`: its depth against [`MAX_DEPTH`], and its [`Shape`]. No recursion; the
/// walk's first frames are on the thread's stack, and only a value that nests deeper than
/// those allocates.
pub(crate) fn inspect(value: &Value) -> Result<Shape, TooDeep> {
    match flat_shape(value) {
        Some(shape) => Ok(shape),
        None => walk(value),
    }
}

/// [`inspect`] of any value, by a loop over its open arrays and objects.
fn walk(value: &Value) -> Result<Shape, TooDeep> {
    let mut shape = Shape::default();
    // One frame per open array or object.
    let mut frames = Frames::default();
    let mut next = Some(value);
    loop {
        if let Some(value) = next.take() {
            shape.nodes += 1;
            let children = match value {
                Value::Array(items) => Children::Array(items.iter()),
                Value::Object(map) => Children::Object(map.iter()),
                Value::Number(number) => {
                    shape.integral_float |= is_integral_float(number);
                    Children::None
                }
                Value::Null => {
                    shape.null |= frames.open > 0;
                    Children::None
                }
                Value::Bool(_) | Value::String(_) => Children::None,
            };
            if !matches!(children, Children::None) {
                if frames.open == MAX_DEPTH {
                    return Err(too_deep(frames.iter()));
                }
                frames.push(Frame {
                    children,
                    at: Segment::Start,
                });
                shape.depth = shape.depth.max(frames.open);
            }
        }
        let Some(top) = frames.top() else {
            return Ok(shape);
        };
        match top.next_child() {
            Some(child) => next = Some(child),
            None => frames.pop(),
        }
    }
}

/// The shape of a scalar, or of an array or object of scalars (most arguments), found without
/// setting up the walk's frames; `None` when a child is an array or object.
fn flat_shape(value: &Value) -> Option<Shape> {
    let mut shape = Shape {
        nodes: 1,
        ..Shape::default()
    };
    let mut count = |child: &Value| {
        shape.nodes += 1;
        match child {
            Value::Array(_) | Value::Object(_) => return false,
            Value::Null => shape.null = true,
            Value::Number(number) => shape.integral_float |= is_integral_float(number),
            Value::Bool(_) | Value::String(_) => {}
        }
        true
    };
    let flat = match value {
        Value::Array(items) => items.iter().all(&mut count),
        Value::Object(map) => map.values().all(&mut count),
        Value::Number(number) => {
            shape.integral_float = is_integral_float(number);
            true
        }
        Value::Null | Value::Bool(_) | Value::String(_) => true,
    };
    let depth = usize::from(matches!(value, Value::Array(_) | Value::Object(_)));
    flat.then_some(Shape { depth, ..shape })
}

/// A float with no fractional part (`1.0`), which a schema's `integer` accepts.
fn is_integral_float(number: &serde_json::Number) -> bool {
    !number.is_i64()
        && !number.is_u64()
        && number.as_f64().is_some_and(|float| float.fract() == 0.0)
}

/// How many open frames of a walk live on the thread's stack: setting up all [`MAX_DEPTH`] of
/// them cost more than walking a small value.
const NEAR_FRAMES: usize = 8;

/// The open frames of a walk, outermost first.
#[derive(Default)]
struct Frames<'a> {
    near: [Frame<'a>; NEAR_FRAMES],
    far: Vec<Frame<'a>>,
    open: usize,
}

impl<'a> Frames<'a> {
    fn push(&mut self, frame: Frame<'a>) {
        match self.near.get_mut(self.open) {
            Some(slot) => *slot = frame,
            None => self.far.push(frame),
        }
        self.open += 1;
    }

    fn top(&mut self) -> Option<&mut Frame<'a>> {
        let at = self.open.checked_sub(1)?;
        match at.checked_sub(NEAR_FRAMES) {
            None => self.near.get_mut(at),
            Some(far) => self.far.get_mut(far),
        }
    }

    fn pop(&mut self) {
        self.open -= 1;
        if self.open >= NEAR_FRAMES {
            self.far.pop();
        }
    }

    fn iter(&self) -> impl Iterator<Item = &Frame<'a>> {
        self.near[..self.open.min(NEAR_FRAMES)]
            .iter()
            .chain(&self.far)
    }
}

/// One open array or object on the walk, and which child is being visited.
struct Frame<'a> {
    children: Children<'a>,
    at: Segment<'a>,
}

enum Children<'a> {
    None,
    Array(std::slice::Iter<'a, Value>),
    Object(serde_json::map::Iter<'a>),
}

#[derive(Clone, Copy)]
enum Segment<'a> {
    Start,
    Index(usize),
    Key(&'a str),
}

impl Default for Frame<'_> {
    fn default() -> Self {
        Frame {
            children: Children::None,
            at: Segment::Start,
        }
    }
}

impl<'a> Frame<'a> {
    fn next_child(&mut self) -> Option<&'a Value> {
        match &mut self.children {
            Children::None => None,
            Children::Array(items) => {
                let item = items.next()?;
                self.at = Segment::Index(match self.at {
                    Segment::Index(index) => index + 1,
                    _ => 0,
                });
                Some(item)
            }
            Children::Object(entries) => {
                let (key, value) = entries.next()?;
                self.at = Segment::Key(key);
                Some(value)
            }
        }
    }
}

/// The error for an array or object that would open below `frames`.
fn too_deep<'a, 'b: 'a>(frames: impl Iterator<Item = &'a Frame<'b>>) -> TooDeep {
    let mut at = String::new();
    for frame in frames {
        match frame.at {
            Segment::Start => {}
            Segment::Index(index) => {
                let _ = write!(at, "/{index}");
            }
            Segment::Key(key) => {
                at.push('/');
                at.push_str(
                    &truncate(key, MAX_QUOTED_POINTER)
                        .replace('~', "~0")
                        .replace('/', "~1"),
                );
            }
        }
        if at.len() > MAX_QUOTED_POINTER {
            break;
        }
    }
    TooDeep {
        at: truncate(&at, MAX_QUOTED_POINTER),
    }
}

/// Drops `value` with a loop instead of recursion, so that a value of any depth can be
/// disposed of on any thread (`Drop` of a `Value` recurses, and overflows the stack somewhere
/// past a few thousand levels).
///
/// ```
/// use serde_json::{json, Value};
/// use toolprism::depth::dispose;
///
/// let mut deep = json!(null);
/// for _ in 0..100_000 {
///     deep = Value::Array(vec![deep]);
/// }
/// dispose(deep);
/// ```
pub fn dispose(value: Value) {
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        match value {
            Value::Array(items) => pending.extend(items),
            Value::Object(map) => pending.extend(map.into_iter().map(|(_, value)| value)),
            _ => {}
        }
    }
}

/// Drops `value` normally when it is within the limit (the common case, and the cheapest),
/// and with a loop when it is not.
pub(crate) fn dispose_checked(value: Value) {
    if check_depth(&value).is_err() {
        dispose(value);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn flat_values_have_the_shape_the_walk_finds() {
        for value in [
            json!({"a": 1, "b": null, "c": 1.0, "d": "x", "e": true}),
            json!([1, 2.5, -3.0]),
            json!({}),
            json!([]),
            json!(null),
            json!(3.0),
            json!("text"),
        ] {
            assert_eq!(flat_shape(&value), Some(walk(&value).unwrap()), "{value}");
        }
        assert_eq!(flat_shape(&json!({"a": 1, "b": {"c": null}})), None);
        assert_eq!(flat_shape(&json!([1, []])), None);
        let nested = json!({"a": 1.0, "b": {"c": null}});
        assert_eq!(
            inspect(&nested),
            Ok(Shape {
                integral_float: true,
                null: true,
                nodes: 4,
                depth: 2,
            })
        );
    }

    fn nested(levels: usize) -> Value {
        let mut value = json!("leaf");
        for _ in 0..levels {
            value = Value::Array(vec![json!(0), value]);
        }
        value
    }

    #[test]
    fn the_limit_is_exact() {
        assert!(check_depth(&nested(MAX_DEPTH)).is_ok());
        assert_eq!(
            inspect(&nested(MAX_DEPTH)).map(|shape| shape.depth),
            Ok(MAX_DEPTH)
        );
        let error = check_depth(&nested(MAX_DEPTH + 1)).unwrap_err();
        assert_eq!(error.at, "/1".repeat(MAX_DEPTH));
        // Empty containers count too.
        let mut empty = json!([]);
        for _ in 1..MAX_DEPTH {
            empty = Value::Array(vec![empty]);
        }
        assert!(check_depth(&empty).is_ok());
        assert!(check_depth(&Value::Array(vec![empty])).is_err());
    }

    #[test]
    fn objects_are_measured_and_pointed_at() {
        let mut value = json!({});
        for _ in 0..=MAX_DEPTH {
            let mut map = serde_json::Map::new();
            map.insert("k".into(), value);
            value = Value::Object(map);
        }
        let error = check_depth(&value).unwrap_err();
        assert!(error.at.starts_with("/k/k/k"), "{}", error.at);
        assert!(error.at.len() <= MAX_QUOTED_POINTER + "…".len());
    }

    #[test]
    fn a_million_levels_are_measured_and_disposed_of_without_recursion() {
        let deep = nested(1_000_000);
        assert!(check_depth(&deep).is_err());
        dispose(deep);
    }

    #[test]
    fn the_shape_is_reported() {
        let shape = inspect(&json!({"a": [1, 2.0], "b": 1.5})).unwrap();
        assert!(shape.integral_float && !shape.null);
        let shape = inspect(&json!({"a": null, "b": 2.5})).unwrap();
        assert!(!shape.integral_float && shape.null);
        assert!(!inspect(&json!(null)).unwrap().null);
    }
}
