//! The cost of validating against a schema, bounded before the schema is accepted.
//!
//! Validation applies subschemas to instance nodes. Most applicators keep to the node they are
//! on (`$ref`, `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`, `dependentSchemas`);
//! the others move to a child (`properties`, `items`, `prefixItems`, `additionalProperties`,
//! …). A schema of a kilobyte whose references fan out (`anyOf` over the same definition twice,
//! forty levels down) applies 2⁴⁰ subschemas to one node: it registers in milliseconds, then
//! every call runs until memory runs out.
//!
//! This module counts, for each instance depth up to [`MAX_DEPTH`], how many subschema
//! applications can land on one instance node: the number of paths through the schema that
//! reach it, taken for the worst property name or array index at every step. The count is an
//! upper bound on what any validator does (one that stops early does less), so a schema whose
//! count stays within [`MAX_EVALUATIONS`] can never cost more than that per instance node,
//! whatever a model sends. A cycle of references that never moves to a child — which would
//! apply subschemas forever — has no bound and is refused.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use crate::depth::MAX_DEPTH;

use super::refs::{escape, resolve};

/// The most subschema applications one instance node may receive, for any schema accepted at
/// registration. Validating a value therefore applies at most this many subschemas per node of
/// the value (each applying its own keywords, which are linear in the node's size).
pub const MAX_EVALUATIONS: u64 = 10_000;

/// The most steps the analysis itself may take, so that registration stays quick whatever the
/// schema.
const MAX_ANALYSIS_STEPS: u64 = 20_000_000;

/// Why a schema's validation cost is not acceptable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum CostError {
    /// Subschema applications per instance node exceed [`MAX_EVALUATIONS`].
    TooCostly { evaluations: u64, depth: usize },
    /// A cycle of in-place references, through the schema object at this pointer.
    Cycle { at: String },
    /// The schema is too intricate to analyse within the step budget.
    TooIntricate,
}

/// Which instance children an applicator moves to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Label<'a> {
    /// The member of an object under this name.
    Member(&'a str),
    /// Any member of an object.
    AnyMember,
    /// The element of an array at this index.
    Element(usize),
    /// Any element of an array.
    AnyElement,
    /// A property name (validated as a string).
    Key,
}

impl Label<'_> {
    /// The kind of instance child: object member, array element, or property name.
    fn kind(self) -> u8 {
        match self {
            Label::Member(_) | Label::AnyMember => 0,
            Label::Element(_) | Label::AnyElement => 1,
            Label::Key => 2,
        }
    }

    fn is_any(self) -> bool {
        matches!(self, Label::AnyMember | Label::AnyElement | Label::Key)
    }
}

/// The schema as a graph: subschemas are nodes, applicators are edges.
struct Graph<'a> {
    /// Where each node is, for messages.
    pointers: Vec<String>,
    /// In-place edges, with a weight (2 where `unevaluated*` makes a node evaluate its
    /// in-place subschemas a second time).
    in_place: Vec<Vec<(usize, u64)>>,
    /// Edges to a child, per subschema: to, which children.
    child: Vec<Vec<(usize, Label<'a>)>>,
    /// A topological order of the in-place edges.
    order: Vec<usize>,
    /// Each node's position in `order`.
    rank: Vec<usize>,
    scratch: RefCell<Scratch>,
}

/// How many applications of which subschemas: `(node, count)`, sorted by node, counts above 0.
type Counts = Vec<(usize, u64)>;

/// The most distinct instance paths followed separately at one depth; past it, they are merged
/// into one elementwise maximum, which still bounds each of them.
const MAX_FRONTIER: usize = 10_000;

/// The most subschema applications one instance node can receive, if it is bounded.
///
/// Instance paths are followed as classes: every property name and array index a schema names
/// is its own class, and one class stands for all the others. Each class carries how many
/// times each subschema applies at its end; classes that end alike are merged.
pub(crate) fn evaluations_per_node(root: &Value) -> Result<u64, CostError> {
    let mut graph = Graph::build(root);
    graph.sort()?;
    let mut steps = 0_u64;
    let start = graph.close(vec![(0, 1)], &mut steps)?;
    let mut worst = total(&start);
    within_bound(worst, 0)?;
    let mut frontier = vec![start];
    for depth in 1..=MAX_DEPTH {
        let mut next = graph.children(&frontier, &mut steps)?;
        if next.len() > MAX_FRONTIER {
            next = vec![elementwise_max(&next)];
        }
        for counts in &next {
            let evaluations = total(counts);
            within_bound(evaluations, depth)?;
            worst = worst.max(evaluations);
        }
        // Nothing moves further down, or every further level repeats this one.
        if next.is_empty() || next == frontier {
            break;
        }
        frontier = next;
    }
    Ok(worst)
}

fn within_bound(evaluations: u64, depth: usize) -> Result<(), CostError> {
    if evaluations > MAX_EVALUATIONS {
        return Err(CostError::TooCostly { evaluations, depth });
    }
    Ok(())
}

fn total(counts: &Counts) -> u64 {
    counts
        .iter()
        .fold(0, |sum, &(_, count)| sum.saturating_add(count))
}

/// One set of counts at least as high as each of `all`.
fn elementwise_max(all: &[Counts]) -> Counts {
    let mut merged: BTreeMap<usize, u64> = BTreeMap::new();
    for counts in all {
        for &(node, count) in counts {
            let slot = merged.entry(node).or_insert(0);
            *slot = (*slot).max(count);
        }
    }
    merged.into_iter().collect()
}

impl<'a> Graph<'a> {
    /// Finds every subschema reachable from the root (through references too) and its edges.
    fn build(root: &'a Value) -> Self {
        let mut builder = Builder {
            graph: Graph {
                pointers: Vec::new(),
                in_place: Vec::new(),
                child: Vec::new(),
                order: Vec::new(),
                rank: Vec::new(),
                scratch: RefCell::new(Scratch {
                    values: Vec::new(),
                    seen: Vec::new(),
                    reached: Vec::new(),
                    pending: Vec::new(),
                }),
            },
            nodes: Vec::new(),
            index: HashMap::new(),
        };
        builder.add(root, String::new());
        let mut at = 0;
        while at < builder.nodes.len() {
            builder.expand(root, at);
            at += 1;
        }
        builder.graph
    }

    /// Orders the nodes so that every in-place edge points forward; a cycle has no order.
    fn sort(&mut self) -> Result<(), CostError> {
        let count = self.pointers.len();
        let mut incoming = vec![0_usize; count];
        for edges in &self.in_place {
            for &(to, _) in edges {
                incoming[to] += 1;
            }
        }
        let mut ready: Vec<usize> = (0..count).filter(|&node| incoming[node] == 0).collect();
        while let Some(node) = ready.pop() {
            self.order.push(node);
            for &(to, _) in &self.in_place[node] {
                incoming[to] -= 1;
                if incoming[to] == 0 {
                    ready.push(to);
                }
            }
        }
        if self.order.len() < count {
            let stuck = (0..count).find(|&node| incoming[node] > 0).unwrap_or(0);
            return Err(CostError::Cycle {
                at: self.pointers[stuck].clone(),
            });
        }
        self.scratch = RefCell::new(Scratch {
            values: vec![0; count],
            seen: vec![false; count],
            reached: Vec::new(),
            pending: Vec::new(),
        });
        self.rank = vec![0; count];
        for (position, &node) in self.order.iter().enumerate() {
            self.rank[node] = position;
        }
        Ok(())
    }

    /// The applications the children of instance nodes with these `frontier` counts receive,
    /// one set of counts per class of child, deduplicated.
    fn children(&self, frontier: &[Counts], steps: &mut u64) -> Result<Vec<Counts>, CostError> {
        let mut next = Vec::new();
        for counts in frontier {
            // Seeds for any child of a kind, and for each named child.
            let mut any: [Counts; 3] = [Vec::new(), Vec::new(), Vec::new()];
            let mut named: BTreeMap<Label<'a>, Counts> = BTreeMap::new();
            for &(node, count) in counts {
                for &(to, label) in &self.child[node] {
                    if label.is_any() {
                        any[usize::from(label.kind())].push((to, count));
                    } else {
                        named.entry(label).or_default().push((to, count));
                    }
                }
            }
            for (kind, seeds) in any.iter().enumerate() {
                // A child no subschema names: only what applies to every child.
                if !seeds.is_empty() {
                    next.push(self.close(seeds.clone(), steps)?);
                }
                for (label, own) in &named {
                    if usize::from(label.kind()) == kind {
                        let mut all = seeds.clone();
                        all.extend_from_slice(own);
                        next.push(self.close(all, steps)?);
                    }
                }
            }
        }
        next.sort_unstable();
        next.dedup();
        Ok(next)
    }

    /// `seeds` with everything in-place edges lead to from them, touching only what they
    /// reach.
    fn close(&self, seeds: Counts, steps: &mut u64) -> Result<Counts, CostError> {
        let mut scratch = self.scratch.borrow_mut();
        let Scratch {
            values,
            seen,
            reached,
            pending,
        } = &mut *scratch;
        for (node, count) in seeds {
            values[node] = values[node].saturating_add(count);
            pending.push(node);
        }
        while let Some(node) = pending.pop() {
            if seen[node] {
                continue;
            }
            seen[node] = true;
            reached.push(node);
            pending.extend(self.in_place[node].iter().map(|&(to, _)| to));
        }
        *steps += reached.len() as u64 + 1;
        reached.sort_unstable_by_key(|&node| self.rank[node]);
        for &node in reached.iter() {
            let value = values[node];
            for &(to, weight) in &self.in_place[node] {
                values[to] = values[to].saturating_add(value.saturating_mul(weight));
            }
        }
        let mut counts: Counts = Vec::with_capacity(reached.len());
        for &node in reached.iter() {
            if values[node] > 0 {
                counts.push((node, values[node]));
            }
            values[node] = 0;
            seen[node] = false;
        }
        reached.clear();
        counts.sort_unstable();
        if *steps > MAX_ANALYSIS_STEPS {
            return Err(CostError::TooIntricate);
        }
        Ok(counts)
    }
}

/// Buffers `close` reuses: one slot per subschema, reset after each use.
struct Scratch {
    values: Vec<u64>,
    seen: Vec<bool>,
    reached: Vec<usize>,
    pending: Vec<usize>,
}

/// Discovers the graph, one subschema at a time.
struct Builder<'a> {
    graph: Graph<'a>,
    nodes: Vec<&'a Value>,
    index: HashMap<*const Value, usize>,
}

impl<'a> Builder<'a> {
    /// The node for `schema`, added (at `pointer`) if it is new.
    fn add(&mut self, schema: &'a Value, pointer: String) -> usize {
        if let Some(&node) = self.index.get(&std::ptr::from_ref(schema)) {
            return node;
        }
        let node = self.nodes.len();
        self.nodes.push(schema);
        self.index.insert(std::ptr::from_ref(schema), node);
        self.graph.pointers.push(pointer);
        self.graph.in_place.push(Vec::new());
        self.graph.child.push(Vec::new());
        node
    }

    fn in_place(&mut self, from: usize, schema: &'a Value, pointer: String, weight: u64) {
        let to = self.add(schema, pointer);
        self.graph.in_place[from].push((to, weight));
    }

    fn child(&mut self, from: usize, schema: &'a Value, pointer: String, label: Label<'a>) {
        let to = self.add(schema, pointer);
        self.graph.child[from].push((to, label));
    }

    /// Adds the edges of node `at`.
    fn expand(&mut self, root: &'a Value, at: usize) {
        let Value::Object(map) = self.nodes[at] else {
            return;
        };
        let weight =
            if map.contains_key("unevaluatedProperties") || map.contains_key("unevaluatedItems") {
                2
            } else {
                1
            };
        let here = self.graph.pointers[at].clone();
        for (key, value) in map {
            let path = |suffix: &str| format!("{here}/{}{suffix}", escape(key));
            let members = || value.as_array().into_iter().flatten().enumerate();
            let named = || value.as_object().into_iter().flatten();
            match key.as_str() {
                "$ref" => {
                    let reference = value.as_str().unwrap_or_default();
                    if let Some(target) = resolve(root, reference) {
                        let pointer = reference.trim_start_matches('#').to_owned();
                        self.in_place(at, target, pointer, weight);
                    }
                }
                "allOf" | "anyOf" | "oneOf" => {
                    for (i, member) in members() {
                        self.in_place(at, member, path(&format!("/{i}")), weight);
                    }
                }
                "not" | "if" | "then" | "else" => self.in_place(at, value, path(""), weight),
                "dependentSchemas" | "dependencies" => {
                    for (name, member) in named() {
                        if member.is_object() || member.is_boolean() {
                            self.in_place(at, member, path(&format!("/{}", escape(name))), weight);
                        }
                    }
                }
                "properties" => {
                    for (name, member) in named() {
                        let pointer = path(&format!("/{}", escape(name)));
                        self.child(at, member, pointer, Label::Member(name));
                    }
                }
                "patternProperties" => {
                    for (name, member) in named() {
                        let pointer = path(&format!("/{}", escape(name)));
                        self.child(at, member, pointer, Label::AnyMember);
                    }
                }
                "additionalProperties" | "unevaluatedProperties" => {
                    self.child(at, value, path(""), Label::AnyMember);
                }
                "propertyNames" => self.child(at, value, path(""), Label::Key),
                "items" | "prefixItems" if value.is_array() => {
                    for (i, member) in members() {
                        self.child(at, member, path(&format!("/{i}")), Label::Element(i));
                    }
                }
                "items" | "additionalItems" | "contains" | "unevaluatedItems" => {
                    self.child(at, value, path(""), Label::AnyElement);
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn fan_out(levels: usize, applicator: &str) -> Value {
        let mut defs = serde_json::Map::new();
        for level in 0..levels {
            let next = format!("#/$defs/L{}", level + 1);
            defs.insert(
                format!("L{level}"),
                json!({applicator: [{"$ref": next}, {"$ref": next}]}),
            );
        }
        defs.insert(format!("L{levels}"), json!({"type": "string"}));
        json!({"$ref": "#/$defs/L0", "$defs": defs})
    }

    #[test]
    fn fan_out_through_references_is_counted_and_refused() {
        // Ten doublings: 4,094 applications on the root (1 + 3 × 1,023 + 1,024), within the bound.
        assert_eq!(evaluations_per_node(&fan_out(10, "anyOf")), Ok(4_094));
        for applicator in ["allOf", "anyOf", "oneOf"] {
            assert!(matches!(
                evaluations_per_node(&fan_out(30, applicator)),
                Err(CostError::TooCostly { depth: 0, .. })
            ));
        }
    }

    #[test]
    fn recursive_types_are_bounded_per_node() {
        let tree = json!({"$ref": "#/$defs/Node", "$defs": {"Node": {
            "type": "object",
            "properties": {"left": {"$ref": "#/$defs/Node"}, "right": {"$ref": "#/$defs/Node"}, "value": {"type": "integer"}}
        }}});
        assert!(evaluations_per_node(&tree).unwrap() < 10);
        let json_value = json!({"$defs": {"V": {"anyOf": [
            {"type": ["null", "boolean", "number", "string"]},
            {"type": "array", "items": {"$ref": "#/$defs/V"}},
            {"type": "object", "additionalProperties": {"$ref": "#/$defs/V"}}
        ]}}, "$ref": "#/$defs/V"});
        assert!(evaluations_per_node(&json_value).unwrap() < 20);
    }

    #[test]
    fn many_named_properties_are_counted_apart() {
        // Each property's subtree applies only under its own name: 2,000 of them cost no more
        // than one.
        let mut properties = serde_json::Map::new();
        for index in 0..2_000 {
            properties.insert(
                format!("p{index}"),
                json!({"type": "object", "properties": {
                    "next": {"allOf": [{"type": "string"}, {"maxLength": 3}]},
                    "tag": {"type": "string"}
                }}),
            );
        }
        let wide = json!({"type": "object", "properties": properties});
        assert_eq!(evaluations_per_node(&wide), Ok(3));
    }

    #[test]
    fn fan_out_that_grows_with_the_instance_is_refused() {
        // Each array level doubles: 2^depth applications on a deep enough element.
        let doubling = json!({"$ref": "#/$defs/T", "$defs": {"T": {"allOf": [
            {"items": {"$ref": "#/$defs/T"}},
            {"items": {"$ref": "#/$defs/T"}}
        ]}}});
        assert!(matches!(
            evaluations_per_node(&doubling),
            Err(CostError::TooCostly { .. })
        ));
    }

    #[test]
    fn a_reference_cycle_that_never_descends_is_refused() {
        let cycle =
            json!({"$ref": "#/$defs/A", "$defs": {"A": {"allOf": [{"$ref": "#/$defs/A"}]}}});
        assert_eq!(
            evaluations_per_node(&cycle),
            Err(CostError::Cycle {
                at: "/$defs/A".into()
            })
        );
    }
}
