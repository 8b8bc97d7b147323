//! Searching by meaning beside words: the host's embedding model turns each tool and each
//! query into a vector, and a tool's closeness in meaning to the query (the cosine of their
//! vectors) is blended with its BM25 score, so that "films" finds `find_movies` though they
//! share no word.
//!
//! The model is the host's (a provider's embeddings endpoint, a local one); what it returns is
//! checked before any of it is read: one vector per text, all of one length of at most
//! [`MAX_DIMENSIONS`], every number finite.

use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::time::Duration;

use futures_util::FutureExt as _;
use futures_util::future::{Either, select};

use super::text::plain_words;
use crate::BoxFuture;
use crate::tool::AdvertisedTool;

/// What closeness in meaning (a cosine, from -1 to 1) weighs in a tool's score, against its
/// BM25 score (divided by the best tool's: from 0 to 1). Chosen with all-MiniLM-L6-v2 on the
/// tune set of `scripts/search-benchmark --levers`: from 0.5 to 0.8 recall@5 stays within
/// 92.8–93.3 %, at 0.9 it falls to 92.3 %.
pub const MEANING_WEIGHT: f64 = 0.7;
/// The longest vector an embedding model may return (the largest models' give 4,096 numbers).
pub const MAX_DIMENSIONS: usize = 8_192;
/// The most texts one call of the model is given: below what providers' endpoints take in one
/// request (96 for some).
pub const EMBED_BATCH: usize = 64;
/// How long one call of the model may take, unless the host says otherwise
/// ([`ToolSearch::embed_timeout`](super::ToolSearch::embed_timeout)); past it the search is
/// by words.
pub const EMBED_TIMEOUT: Duration = Duration::from_secs(10);
/// After the tools could not be embedded, how long a snapshot's searches go by words before
/// the model is asked again (a new snapshot asks at once), unless the host says otherwise
/// ([`ToolSearch::embed_retry`](super::ToolSearch::embed_retry)).
pub const EMBED_RETRY: Duration = Duration::from_secs(60);

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
    /// The vectors of `texts`, one per text, in their order: at most [`EMBED_BATCH`] texts a
    /// call.
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

/// One vector as [`Meanings`] keeps it.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Quantized {
    values: Vec<i8>,
    scale: f32,
}

/// The model's vectors for `expected` texts, checked: one per text, all of one length from 1
/// to [`MAX_DIMENSIONS`], every number finite.
pub(super) fn checked(
    vectors: Vec<Vec<f32>>,
    expected: usize,
) -> Result<Vec<Quantized>, EmbedError> {
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
    vectors
        .iter()
        .enumerate()
        .map(|(at, vector)| {
            if vector.len() != dimensions {
                return Err(EmbedError::new(format!(
                    "the embedding model's vector {at} has {} numbers, the first {dimensions}",
                    vector.len()
                )));
            }
            quantized(vector).ok_or_else(|| {
                EmbedError::new(format!(
                    "the embedding model's vector {at} holds a number that is not finite"
                ))
            })
        })
        .collect()
}

impl Meanings {
    /// These vectors, in order, refused unless they are all of one length.
    pub(super) fn of<'a>(
        vectors: impl IntoIterator<Item = &'a Quantized>,
    ) -> Result<Self, EmbedError> {
        let mut meanings = Self::default();
        for vector in vectors {
            if meanings.scales.is_empty() {
                meanings.dimensions = vector.values.len();
            } else if vector.values.len() != meanings.dimensions {
                return Err(EmbedError::new(format!(
                    "the embedding model's vectors have {} and {} numbers",
                    meanings.dimensions,
                    vector.values.len()
                )));
            }
            meanings.values.extend_from_slice(&vector.values);
            meanings.scales.push(vector.scale);
        }
        Ok(meanings)
    }

    /// A query's vector, checked: of the tools' length, every number finite.
    pub(super) fn query(&self, vector: &[f32]) -> Result<Quantized, EmbedError> {
        if vector.len() != self.dimensions {
            return Err(EmbedError::new(format!(
                "the query's vector has {} numbers, the tools' {}",
                vector.len(),
                self.dimensions
            )));
        }
        quantized(vector)
            .ok_or_else(|| EmbedError::new("the query's vector holds a number that is not finite"))
    }

    /// The cosine of each vector with the query's, in order.
    pub(super) fn closeness<'a>(&'a self, query: &'a Quantized) -> impl Iterator<Item = f64> + 'a {
        self.values
            .chunks_exact(self.dimensions.max(1))
            .zip(&self.scales)
            .map(move |(vector, scale)| {
                f64::from(dot(vector, &query.values)) * f64::from(*scale) * f64::from(query.scale)
            })
    }
}

/// The model's vectors of `texts`, [`EMBED_BATCH`] texts a call, each call within `timeout`. A
/// model that panics fails as one that errs: the calls that share an embedding of the tools
/// (and the search) go on by words.
pub(super) async fn embed_all(
    embedder: &dyn Embedder,
    texts: Vec<String>,
    timeout: Duration,
) -> Result<Vec<Vec<f32>>, EmbedError> {
    let panicked = || EmbedError::new("the embedding model panicked");
    let mut vectors = Vec::with_capacity(texts.len());
    for batch in texts.chunks(EMBED_BATCH) {
        let call = std::panic::catch_unwind(AssertUnwindSafe(|| embedder.embed(batch.to_vec())))
            .map_err(|_| panicked())?;
        let call = AssertUnwindSafe(call).catch_unwind();
        let answer = match select(call, futures_timer::Delay::new(timeout)).await {
            Either::Left((Ok(answer), _)) => answer?,
            Either::Left((Err(_), _)) => return Err(panicked()),
            Either::Right(_) => {
                return Err(EmbedError::new(format!(
                    "the embedding model did not answer within {timeout:?}"
                )));
            }
        };
        if answer.len() != batch.len() {
            return Err(EmbedError::new(format!(
                "the embedding model returned {} vectors for {} texts",
                answer.len(),
                batch.len()
            )));
        }
        vectors.extend(answer);
    }
    Ok(vectors)
}

/// A vector's direction in 8 bits: its numbers over the largest, times 127, rounded, and what
/// they are multiplied by to give its unit vector's (a zero vector stays zero: close to
/// nothing). Each number is off by at most half a step, 1/254 of the largest: for a model's
/// vectors, whose numbers are spread, a cosine moves in its third decimal. `None` if a number
/// is not finite.
fn quantized(vector: &[f32]) -> Option<Quantized> {
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
        return Some(Quantized {
            values: vec![0; vector.len()],
            scale: 0.0,
        });
    }
    // Both within -127..=127 and a unit vector's share: the casts keep every value.
    #[allow(clippy::cast_possible_truncation)]
    let values = vector
        .iter()
        .map(|x| (f64::from(*x) * 127.0 / largest).round() as i8)
        .collect();
    #[allow(clippy::cast_possible_truncation)]
    let scale = (largest / length / 127.0) as f32;
    Some(Quantized { values, scale })
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
    use super::{MAX_DIMENSIONS, Meanings, Quantized, checked, dot, quantized};

    fn meanings(vectors: Vec<Vec<f32>>) -> Meanings {
        let count = vectors.len();
        Meanings::of(&checked(vectors, count).unwrap()).unwrap()
    }

    #[test]
    fn vectors_are_checked_before_they_are_read() {
        let two = |x: f32| vec![x, 1.0];
        let problem = |vectors, expected| checked(vectors, expected).unwrap_err().to_string();
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
        let uneven = [quantized(&[1.0]).unwrap(), quantized(&[1.0, 2.0]).unwrap()];
        assert_eq!(
            Meanings::of(&uneven).unwrap_err().to_string(),
            "the embedding model's vectors have 1 and 2 numbers"
        );
        let meanings = meanings(vec![two(0.0), vec![0.0, 0.0], two(3.0)]);
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
        // Vectors of a model's length from a fixed sequence: each against another, against
        // itself plus a little noise (a cosine near 1), and against itself with one number
        // standing out (which coarsens every other's steps).
        let mut seed = 0x2545_f491_u32;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            f32::from(u16::try_from(seed >> 16).unwrap()) / 32_768.0 - 1.0
        };
        let mut vector = || -> Vec<f32> { (0..384).map(|_| next()).collect() };
        let cosine = |a: &[f32], b: &[f32]| {
            let norm = |v: &[f32]| v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
            let dot: f64 = a
                .iter()
                .zip(b)
                .map(|(x, y)| f64::from(*x) * f64::from(*y))
                .sum();
            dot / (norm(a) * norm(b))
        };
        for round in 0..100 {
            let a = vector();
            let noise = vector();
            let b = match round % 3 {
                0 => vector(),
                1 => a.iter().zip(&noise).map(|(x, n)| x + 0.3 * n).collect(),
                _ => a
                    .iter()
                    .enumerate()
                    .map(|(at, x)| if at == 7 { 8.0 } else { *x })
                    .collect(),
            };
            let exact = cosine(&a, &b);
            let meanings = meanings(vec![a]);
            let close = meanings
                .closeness(&meanings.query(&b).unwrap())
                .next()
                .unwrap();
            assert!(
                (close - exact).abs() < 1e-2,
                "{close} against {exact} ({round})"
            );
        }
        let zero = Quantized {
            values: vec![0, 0],
            scale: 0.0,
        };
        assert_eq!(quantized(&[0.0, 0.0]), Some(zero));
        assert_eq!(quantized(&[-2.0, 1.0]).unwrap().values, [-127, 64]);
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
