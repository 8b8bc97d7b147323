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

/// Vectors of one length, each kept as its unit vector's numbers in 8 bits (a quarter of the
/// memory a search reads, which is most of its time), one after another.
#[derive(Clone, Debug, Default)]
pub(super) struct Meanings {
    dimensions: usize,
    values: Vec<i8>,
    /// What each vector's numbers are multiplied by to give its unit vector's.
    scales: Vec<f32>,
}

/// A query's vector as [`Meanings`] keeps the tools'.
pub(super) struct QueryMeaning {
    values: Vec<i8>,
    scale: f32,
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
        let mut meanings = Self {
            dimensions,
            values: Vec::with_capacity(dimensions * expected),
            scales: Vec::with_capacity(expected),
        };
        for (at, vector) in vectors.iter().enumerate() {
            if vector.len() != dimensions {
                return Err(EmbedError::new(format!(
                    "the embedding model's vector {at} has {} numbers, the first {dimensions}",
                    vector.len()
                )));
            }
            let (values, scale) = quantized(vector).ok_or_else(|| {
                EmbedError::new(format!(
                    "the embedding model's vector {at} holds a number that is not finite"
                ))
            })?;
            meanings.values.extend(values);
            meanings.scales.push(scale);
        }
        Ok(meanings)
    }

    /// A query's vector, checked: of the tools' length, every number finite.
    pub(super) fn query(&self, vector: &[f32]) -> Result<QueryMeaning, EmbedError> {
        if vector.len() != self.dimensions {
            return Err(EmbedError::new(format!(
                "the query's vector has {} numbers, the tools' {}",
                vector.len(),
                self.dimensions
            )));
        }
        let (values, scale) = quantized(vector).ok_or_else(|| {
            EmbedError::new("the query's vector holds a number that is not finite")
        })?;
        Ok(QueryMeaning { values, scale })
    }

    /// The cosine of each vector with the query's, in order.
    pub(super) fn closeness<'a>(
        &'a self,
        query: &'a QueryMeaning,
    ) -> impl Iterator<Item = f64> + 'a {
        self.values
            .chunks_exact(self.dimensions)
            .zip(&self.scales)
            .map(move |(vector, scale)| {
                f64::from(dot(vector, &query.values)) * f64::from(*scale) * f64::from(query.scale)
            })
    }
}

/// A vector's direction in 8 bits: its numbers over the largest, times 127, rounded, and what
/// they are multiplied by to give its unit vector's (a zero vector stays zero: close to
/// nothing). Each number is off by at most half a step, 1/254 of the largest: for a model's
/// vectors, whose numbers are spread, a cosine moves in its third decimal. `None` if a number
/// is not finite.
fn quantized(vector: &[f32]) -> Option<(Vec<i8>, f32)> {
    if !vector.iter().all(|x| x.is_finite()) {
        return None;
    }
    let length = vector
        .iter()
        .map(|x| f64::from(*x) * f64::from(*x))
        .sum::<f64>()
        .sqrt();
    let largest = vector
        .iter()
        .map(|x| f64::from(x.abs()))
        .fold(0.0, f64::max);
    if largest == 0.0 {
        return Some((vec![0; vector.len()], 0.0));
    }
    // Both within -127..=127 and a unit vector's share: the casts keep every value.
    #[allow(clippy::cast_possible_truncation)]
    let values = vector
        .iter()
        .map(|x| (f64::from(*x) * 127.0 / largest).round() as i8)
        .collect();
    #[allow(clippy::cast_possible_truncation)]
    let scale = (largest / length / 127.0) as f32;
    Some((values, scale))
}

/// The dot product, in sixteen 32-bit lanes the compiler keeps in vector registers; no sum
/// overflows (127 × 127 × [`MAX_DIMENSIONS`] is below 2³¹).
fn dot(a: &[i8], b: &[i8]) -> i32 {
    let mut lanes = [0_i32; 16];
    let (a_chunks, b_chunks) = (a.chunks_exact(16), b.chunks_exact(16));
    let tail: i32 = a_chunks
        .remainder()
        .iter()
        .zip(b_chunks.remainder())
        .map(|(x, y)| i32::from(*x) * i32::from(*y))
        .sum();
    for (x, y) in a_chunks.zip(b_chunks) {
        for lane in 0..16 {
            lanes[lane] += i32::from(x[lane]) * i32::from(y[lane]);
        }
    }
    lanes.iter().sum::<i32>() + tail
}

#[cfg(test)]
mod tests {
    use super::{MAX_DIMENSIONS, Meanings, dot, quantized};

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
        let query = meanings.query(&[0.0, 2.0]).unwrap();
        let closeness: Vec<f64> = meanings.closeness(&query).collect();
        assert!((closeness[0] - 1.0).abs() < 1e-6, "{closeness:?}");
        assert!(closeness[1] == 0.0, "{closeness:?}");
        assert!(
            (closeness[2] - 1.0 / 10.0_f64.sqrt()).abs() < 1e-2,
            "{closeness:?}"
        );
        let wrong = |vector: &[f32]| meanings.query(vector).err().unwrap().to_string();
        assert_eq!(
            wrong(&[1.0]),
            "the query's vector has 1 numbers, the tools' 2"
        );
        assert_eq!(
            wrong(&[f32::INFINITY, 1.0]),
            "the query's vector holds a number that is not finite"
        );
    }

    #[test]
    fn eight_bits_keep_a_cosine_within_a_hundredth() {
        // Vectors of a model's length from a fixed sequence, each against the next.
        let mut seed = 0x2545_f491_u32;
        let mut vector = || -> Vec<f32> {
            (0..384)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 17;
                    seed ^= seed << 5;
                    f32::from(u16::try_from(seed >> 16).unwrap()) / 32_768.0 - 1.0
                })
                .collect()
        };
        for _ in 0..100 {
            let (a, b) = (vector(), vector());
            let norm = |v: &[f32]| v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
            let exact = a
                .iter()
                .zip(&b)
                .map(|(x, y)| f64::from(*x) * f64::from(*y))
                .sum::<f64>()
                / (norm(&a) * norm(&b));
            let meanings = Meanings::checked(vec![a], 1).unwrap();
            let query = meanings.query(&b).unwrap();
            let close = meanings.closeness(&query).next().unwrap();
            assert!((close - exact).abs() < 1e-2, "{close} against {exact}");
        }
        assert_eq!(quantized(&[0.0, 0.0]), Some((vec![0, 0], 0.0)));
        assert_eq!(quantized(&[-2.0, 1.0]).unwrap().0, [-127, 64]);
    }

    #[test]
    fn the_lanes_add_what_a_plain_loop_adds() {
        for length in [0_usize, 1, 15, 16, 17, 384, MAX_DIMENSIONS] {
            let a: Vec<i8> = (0..length)
                .map(|i| if i % 3 == 0 { -127 } else { 127 })
                .collect();
            let b: Vec<i8> = (0..length)
                .map(|i| if i % 3 == 0 { -127 } else { 100 })
                .collect();
            let plain: i64 = a
                .iter()
                .zip(&b)
                .map(|(x, y)| i64::from(*x) * i64::from(*y))
                .sum();
            assert_eq!(i64::from(dot(&a, &b)), plain, "{length}");
        }
    }
}
