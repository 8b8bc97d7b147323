//! Searching by meaning beside words: the host's embedding model turns each tool and each
//! query into a vector, and a tool's closeness in meaning to the query (the cosine of their
//! vectors) is blended with its BM25 score, so that "films" finds `find_movies` and "compute"
//! finds `calc_product` though they share no word.
//!
//! The model is the host's (a provider's embeddings endpoint, a local one); what it returns is
//! checked before any of it is read: one vector per text, all of one length of at most
//! [`MAX_DIMENSIONS`], every number finite.

use std::fmt;
use std::future::Future;

use super::plain_words;
use crate::BoxFuture;
use crate::tool::AdvertisedTool;

/// What closeness in meaning weighs in a tool's score, against its BM25 score (divided by the
/// best tool's, so that both run from 0 to 1). Chosen with all-MiniLM-L6-v2 on the tune set of
/// `scripts/search-benchmark`: from 0.5 to 0.8 recall@5 moved by 0.3 points, at 0.9 it fell.
pub const MEANING_WEIGHT: f64 = 0.7;
/// The longest vector an embedding model may return (the largest models' give 4,096 numbers).
pub const MAX_DIMENSIONS: usize = 8_192;

/// Why texts could not be embedded: the model's own error, or what it returned was not one
/// finite vector per text, all of one length.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct EmbedError {
    message: String,
}

impl EmbedError {
    /// An error with this message (a model's own failure, say).
    pub fn new(message: impl fmt::Display) -> Self {
        Self {
            message: message.to_string(),
        }
    }
}

/// An embedding model: a vector for each text, texts close in meaning having vectors at a small
/// angle. Any `Fn(Vec<String>) -> impl Future<Output = Result<Vec<Vec<f32>>, EmbedError>>` is
/// one.
///
/// ```
/// use toolprism::search::{EmbedError, Embedder};
///
/// // A model would be called here: a provider's embeddings endpoint, or a local one.
/// let embedder = |texts: Vec<String>| async move {
///     Ok::<_, EmbedError>(texts.iter().map(|text| vec![text.len() as f32, 1.0]).collect())
/// };
/// # fn is_embedder(_: &impl Embedder) {}
/// is_embedder(&embedder);
/// ```
pub trait Embedder: Send + Sync + 'static {
    /// The vectors of `texts`, one per text, in their order.
    fn embed(&self, texts: Vec<String>) -> BoxFuture<'_, Result<Vec<Vec<f32>>, EmbedError>>;
}

impl<F, Fut> Embedder for F
where
    F: Fn(Vec<String>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Vec<Vec<f32>>, EmbedError>> + Send + 'static,
{
    fn embed(&self, texts: Vec<String>) -> BoxFuture<'_, Result<Vec<Vec<f32>>, EmbedError>> {
        Box::pin(self(texts))
    }
}

/// What of a tool is embedded: its name's words, its title if it has one, and its description
/// (`find_movies (Find movies): Search for movies…`). Parameters are left to the words: a
/// sentence model reads a sentence best.
pub fn meaning_text(tool: &AdvertisedTool) -> String {
    let mut text = plain_words(tool.name()).join(" ");
    if let Some(title) = &tool.about().title {
        text.push_str(" (");
        text.push_str(title);
        text.push(')');
    }
    text.push_str(": ");
    text.push_str(tool.description());
    text
}

/// Vectors of one length, each scaled to length 1 (a zero vector stays zero: close to nothing),
/// one after another.
#[derive(Clone, Debug, Default)]
pub(super) struct Meanings {
    dimensions: usize,
    values: Vec<f32>,
}

impl Meanings {
    /// The model's vectors for `expected` texts, checked: one per text, all of one length from
    /// 1 to [`MAX_DIMENSIONS`], every number finite.
    pub(super) fn checked(vectors: Vec<Vec<f32>>, expected: usize) -> Result<Self, EmbedError> {
        if vectors.len() != expected {
            return Err(EmbedError::new(format!(
                "the embedding model returned {} vectors for {expected} texts",
                vectors.len()
            )));
        }
        let dimensions = vectors.first().map_or(1, Vec::len);
        if !(1..=MAX_DIMENSIONS).contains(&dimensions) {
            return Err(EmbedError::new(format!(
                "the embedding model returned vectors of {dimensions} numbers, not 1 to {MAX_DIMENSIONS}"
            )));
        }
        let mut values = Vec::with_capacity(dimensions * expected);
        for (at, vector) in vectors.iter().enumerate() {
            if vector.len() != dimensions {
                return Err(EmbedError::new(format!(
                    "the embedding model's vector {at} has {} numbers, the first {dimensions}",
                    vector.len()
                )));
            }
            values.extend(unit(vector).ok_or_else(|| {
                EmbedError::new(format!(
                    "the embedding model's vector {at} holds a number that is not finite"
                ))
            })?);
        }
        Ok(Self { dimensions, values })
    }

    /// How many numbers each vector holds.
    pub(super) fn dimensions(&self) -> usize {
        self.dimensions
    }

    /// The cosine of each vector with `query` (checked, of this length), in order.
    pub(super) fn closeness<'a>(&'a self, query: &'a [f32]) -> impl Iterator<Item = f64> + 'a {
        self.values
            .chunks_exact(self.dimensions)
            .map(move |vector| f64::from(dot(vector, query)))
    }
}

/// A vector scaled to length 1, or `None` if a number of it is not finite.
pub(super) fn unit(vector: &[f32]) -> Option<Vec<f32>> {
    if !vector.iter().all(|x| x.is_finite()) {
        return None;
    }
    let length = vector
        .iter()
        .map(|x| f64::from(*x) * f64::from(*x))
        .sum::<f64>()
        .sqrt();
    if length == 0.0 || !length.is_finite() {
        return Some(vec![0.0; vector.len()]);
    }
    #[allow(clippy::cast_possible_truncation)] // a unit vector's numbers are at most 1
    Some(
        vector
            .iter()
            .map(|x| (f64::from(*x) / length) as f32)
            .collect(),
    )
}

/// The dot product, in eight lanes the compiler keeps in vector registers.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0.0_f32; 8];
    let (a_chunks, b_chunks) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = a_chunks
        .remainder()
        .iter()
        .zip(b_chunks.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in a_chunks.zip(b_chunks) {
        for lane in 0..8 {
            lanes[lane] += x[lane] * y[lane];
        }
    }
    lanes.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use super::{MAX_DIMENSIONS, Meanings, dot, unit};

    #[test]
    fn vectors_are_checked_before_they_are_read() {
        let two = |x: f32| vec![x, 1.0];
        let problem = |vectors, expected| {
            Meanings::checked(vectors, expected)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            problem(vec![two(1.0)], 2),
            "the embedding model returned 1 vectors for 2 texts"
        );
        assert_eq!(
            problem(vec![two(1.0), vec![1.0]], 2),
            "the embedding model's vector 1 has 1 numbers, the first 2"
        );
        assert_eq!(
            problem(vec![two(f32::NAN)], 1),
            "the embedding model's vector 0 holds a number that is not finite"
        );
        assert!(problem(vec![vec![]], 1).contains("vectors of 0 numbers"));
        assert!(problem(vec![vec![0.0; MAX_DIMENSIONS + 1]], 1).contains("not 1 to 8192"));
        let meanings = Meanings::checked(vec![two(0.0), vec![0.0, 0.0], two(3.0)], 3).unwrap();
        assert_eq!(meanings.dimensions(), 2);
        let query = unit(&[0.0, 2.0]).unwrap();
        let closeness: Vec<f64> = meanings.closeness(&query).collect();
        assert_eq!(closeness[..2], [1.0, 0.0]);
        assert!((closeness[2] - 1.0 / 10.0_f64.sqrt()).abs() < 1e-6);
    }

    #[test]
    fn the_lanes_add_what_a_plain_loop_adds() {
        for length in [0_u16, 1, 7, 8, 9, 384] {
            let a: Vec<f32> = (0..length).map(|i| f32::from(i % 7) - 3.0).collect();
            let b: Vec<f32> = (0..length).map(|i| f32::from(i % 5) * 0.5).collect();
            let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!(
                (dot(&a, &b) - plain).abs() <= 1e-3 * plain.abs().max(1.0),
                "{length}"
            );
        }
    }
}
