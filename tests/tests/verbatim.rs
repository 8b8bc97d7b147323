//! `#[verbatim]` value types: `render` and `presentation_meta` borrow the value the body
//! returned, and see exactly what they would see reading its JSON back — never anything else,
//! and never a value that is not the one published.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use serde::{Deserializer, Serializer};
use serde_json::json;
use toolprism::pipeline::{ExecuteCall, Executed, Next};
use toolprism::prelude::*;
use toolprism::value::{NotNull, Verbatim, to_lossless_value};
use toolprism_tests::text;

/// Counts how often a value is read back from JSON (each test its own counter).
macro_rules! counted {
    ($name:ident, $reads:ident) => {
        static $reads: AtomicUsize = AtomicUsize::new(0);

        #[derive(Debug, Clone, PartialEq, JsonSchema)]
        #[schemars(transparent)]
        struct $name(u32);

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_u32(self.0)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                $reads.fetch_add(1, Ordering::SeqCst);
                u32::deserialize(deserializer).map($name)
            }
        }

        // Asserted by hand: it serializes all of itself and reads it back.
        impl Verbatim for $name {}
        impl NotNull for $name {}
    };
}

async fn dispatch(registry: &Registry, tool: &str) -> ToolOutcome {
    let call = ToolCall::new("c1", tool, json!({}));
    registry.dispatch(call, Surface::Direct).await
}

counted!(Borrowed, BORROWED_READS);

#[verbatim]
#[derive(JsonSchema)]
struct Total {
    total: Borrowed,
    label: String,
}

/// Reports a total.
#[tool(render = render_total, presentation_meta = total_meta)]
fn report_total() -> Total {
    Total {
        total: Borrowed(42),
        label: "answer".into(),
    }
}

fn render_total(_args: &ReportTotalArgs, value: &Total) -> String {
    format!("{}: {}", value.label, value.total.0)
}

fn total_meta(_args: &ReportTotalArgs, value: &Total) -> Json<u32> {
    Json(value.total.0)
}

#[tokio::test]
async fn render_and_meta_of_a_verbatim_value_borrow_it_instead_of_reading_it_back() {
    let registry = Registry::builder().tool(ReportTotal).build().unwrap();
    for round in 1..=3 {
        let outcome = dispatch(&registry, "report_total").await;
        assert_eq!(text(&outcome), "answer: 42", "round {round}");
        assert_eq!(outcome.meta(), Some(&json!(42)));
        assert_eq!(
            outcome.value().unwrap(),
            &json!({"total": 42, "label": "answer"})
        );
    }
    assert_eq!(BORROWED_READS.load(Ordering::SeqCst), 0);
}

counted!(Replaced, REPLACED_READS);

#[verbatim]
#[derive(JsonSchema)]
struct Count {
    count: Replaced,
}

/// Counts.
#[tool(render = render_count)]
fn count_up() -> Count {
    Count { count: Replaced(1) }
}

fn render_count(_args: &CountUpArgs, value: &Count) -> String {
    format!("count {}", value.count.0)
}

#[tokio::test]
async fn a_value_a_wrapper_put_in_place_of_the_bodys_is_read_back_never_the_kept_one() {
    let registry = Registry::builder()
        .tool(CountUp)
        .wrap(|_call: ExecuteCall, next: Next| async move {
            // The body runs (and its value is kept), then the wrapper publishes another value.
            drop(next.run().await);
            Executed::Value(json!({"count": 7}))
        })
        .build()
        .unwrap();
    let reads_before = REPLACED_READS.load(Ordering::SeqCst);
    let outcome = dispatch(&registry, "count_up").await;
    assert_eq!(outcome.value().unwrap(), &json!({"count": 7}));
    assert_eq!(text(&outcome), "count 7");
    assert_eq!(REPLACED_READS.load(Ordering::SeqCst), reads_before + 1);
}

counted!(ReadBack, READ_BACK_READS);

#[derive(Serialize, Deserialize, JsonSchema)]
struct Plain {
    value: ReadBack,
}

/// Not verbatim: read back.
#[tool(render = render_plain)]
fn read_plain() -> Plain {
    Plain { value: ReadBack(5) }
}

fn render_plain(_args: &ReadPlainArgs, value: &Plain) -> String {
    format!("plain {}", value.value.0)
}

#[tokio::test]
async fn a_value_type_that_is_not_verbatim_is_still_read_back_for_render() {
    let registry = Registry::builder().tool(ReadPlain).build().unwrap();
    let outcome = dispatch(&registry, "read_plain").await;
    assert_eq!(text(&outcome), "plain 5");
    assert_eq!(READ_BACK_READS.load(Ordering::SeqCst), 1);
}

// What `Verbatim` claims, checked on the standard impls and the derive: a value's lossless
// JSON reads back into an equal value.

#[verbatim]
#[derive(Debug, Clone, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Shape {
    Dot,
    Circle { radius: f64 },
    Label { text: String, size: Option<u8> },
}

#[verbatim]
#[derive(Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
struct Drawing {
    shapes: Vec<Shape>,
    by_name: BTreeMap<String, (i64, char)>,
    scale: Option<f32>,
    layers: Option<Box<Layer>>,
    big: u128,
    unit: (),
}

#[verbatim]
#[derive(Debug, Clone, PartialEq)]
struct Layer(String, Vec<Option<u16>>);

fn shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        Just(Shape::Dot),
        (-1e300_f64..1e300).prop_map(|radius| Shape::Circle { radius }),
        (any::<String>(), any::<Option<u8>>()).prop_map(|(text, size)| Shape::Label { text, size }),
    ]
}

fn drawing() -> impl Strategy<Value = Drawing> {
    (
        prop::collection::vec(shape(), 0..6),
        prop::collection::btree_map(any::<String>(), (any::<i64>(), any::<char>()), 0..4),
        prop::option::of(any::<f32>().prop_filter("finite", |scale| scale.is_finite())),
        prop::option::of((
            any::<String>(),
            prop::collection::vec(any::<Option<u16>>(), 0..4),
        )),
        0..=u128::from(u64::MAX),
    )
        .prop_map(|(shapes, by_name, scale, layer, big)| Drawing {
            shapes,
            by_name,
            scale,
            layers: layer.map(|(name, items)| Box::new(Layer(name, items))),
            big,
            unit: (),
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn a_verbatim_value_reads_back_from_its_json_equal_to_itself(drawing in drawing()) {
        let json = to_lossless_value(&drawing).unwrap();
        let read_back: Drawing = serde_json::from_value(json).unwrap();
        prop_assert_eq!(read_back, drawing);
    }
}
