//! Dense retrieval for the `memory` service: the [`Embedder`] trait (a model that turns texts
//! into vectors), [`CachedEmbedder`] (vectors cached on disk by a hash of (model, text)), and
//! cosine ranking with ties broken by position ([`rank`]).
//!
//! The model call is behind the trait; `bureau-agents` implements it over an OpenAI-compatible
//! `/embeddings` endpoint (`bureau run --context rag:<granularity>:<k> --embeddings
//! openai:<model>`). The run wraps it in a [`CachedEmbedder`] over `<run>/embedding-cache/`, so
//! a rerun embeds nothing it embedded before.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// What one [`Embedder::embed`] produced: one vector per text, in the order of the texts, and
/// what it cost.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Embedded {
    pub vectors: Vec<Vec<f32>>,
    /// HTTP requests made to the embeddings API (0 when every vector came from a cache).
    pub requests: u64,
    /// Input tokens the API reported for those requests.
    pub tokens: u64,
}

/// A model that embeds texts. Implementations call an API (with their own retries) and
/// return one vector per text, in order; `Err` is an API failure after those retries.
pub trait Embedder: Send + Sync + std::fmt::Debug {
    /// `provider:model`, recorded with the run and part of every cache key.
    fn model(&self) -> String;
    /// The vectors of `texts`, in order.
    fn embed(&self, texts: &[String]) -> Result<Embedded, String>;
}

/// Hash of (model, text): the cache key of one vector.
pub fn embedding_hash(model: &str, text: &str) -> String {
    let mut h = blake3::Hasher::new();
    for part in [model, text] {
        h.update(&(part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    h.finalize().to_hex().to_string()
}

#[derive(Serialize, Deserialize)]
struct CacheEntry {
    model: String,
    embedding: Vec<f32>,
}

/// An [`Embedder`] whose vectors are cached in a directory, one file `<hash>.json` per (model,
/// text). Only the texts missing from the cache are sent to the inner embedder (in one call).
/// A cache that cannot be written costs only a call next time.
#[derive(Debug)]
pub struct CachedEmbedder<E> {
    inner: E,
    dir: PathBuf,
}

impl<E: Embedder> CachedEmbedder<E> {
    pub fn new(inner: E, dir: impl Into<PathBuf>) -> CachedEmbedder<E> {
        CachedEmbedder {
            inner,
            dir: dir.into(),
        }
    }

    pub fn inner(&self) -> &E {
        &self.inner
    }

    fn lookup(&self, model: &str, path: &Path) -> Option<Vec<f32>> {
        let bytes = std::fs::read(path).ok()?;
        let entry: CacheEntry = serde_json::from_slice(&bytes).ok()?;
        (entry.model == model && !entry.embedding.is_empty()).then_some(entry.embedding)
    }

    fn store(&self, model: &str, path: &Path, embedding: &[f32]) {
        let entry = CacheEntry {
            model: model.to_string(),
            embedding: embedding.to_vec(),
        };
        if std::fs::create_dir_all(&self.dir).is_ok()
            && let Ok(json) = serde_json::to_vec(&entry)
        {
            // A name of its own per write: trials of a run embed concurrently.
            static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let tmp = path.with_extension(format!("json.{}-{n}.tmp", std::process::id()));
            if std::fs::write(&tmp, json).is_ok() && std::fs::rename(&tmp, path).is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
        }
    }
}

impl<E: Embedder> Embedder for CachedEmbedder<E> {
    fn model(&self) -> String {
        self.inner.model()
    }

    fn embed(&self, texts: &[String]) -> Result<Embedded, String> {
        let model = self.inner.model();
        let paths: Vec<PathBuf> = texts
            .iter()
            .map(|t| self.dir.join(format!("{}.json", embedding_hash(&model, t))))
            .collect();
        let mut vectors: Vec<Option<Vec<f32>>> =
            paths.iter().map(|p| self.lookup(&model, p)).collect();
        // Each missing text once, in first-seen order.
        let mut missing: Vec<usize> = Vec::new();
        for (i, v) in vectors.iter().enumerate() {
            if v.is_none() && !missing.iter().any(|&j| texts[j] == texts[i]) {
                missing.push(i);
            }
        }
        let mut out = Embedded::default();
        if !missing.is_empty() {
            let asked: Vec<String> = missing.iter().map(|&i| texts[i].clone()).collect();
            let got = self.inner.embed(&asked)?;
            if got.vectors.len() != asked.len() {
                return Err(format!(
                    "{model} returned {} vectors for {} texts",
                    got.vectors.len(),
                    asked.len()
                ));
            }
            out.requests = got.requests;
            out.tokens = got.tokens;
            for (&i, v) in missing.iter().zip(got.vectors) {
                self.store(&model, &paths[i], &v);
                for (j, slot) in vectors.iter_mut().enumerate() {
                    if slot.is_none() && texts[j] == texts[i] {
                        *slot = Some(v.clone());
                    }
                }
            }
        }
        out.vectors = vectors.into_iter().map(Option::unwrap_or_default).collect();
        Ok(out)
    }
}

/// Cosine similarity of two vectors (in f64); 0 when either is all zeros or their lengths
/// differ.
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    if a.len() != b.len() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0.0f64, 0.0f64, 0.0f64);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (f64::from(*x), f64::from(*y));
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        return 0.0;
    }
    dot / (na.sqrt() * nb.sqrt())
}

/// The best `k` of `units` for `query`: (score, position) by cosine similarity, highest first,
/// ties (equal scores after rounding to 4 decimals, the precision reported) broken by position,
/// earlier first.
pub fn rank(query: &[f32], units: &[Vec<f32>], k: usize) -> Vec<(f64, usize)> {
    let mut scored: Vec<(f64, usize)> = units
        .iter()
        .enumerate()
        .map(|(i, u)| (round4(cosine(query, u)), i))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.truncate(k);
    scored
}

/// `x` rounded to 4 decimals (the precision scores are reported with).
pub fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn cosine_ranks_highest_first_and_ties_by_position() {
        let units = vec![
            vec![1.0, 0.0, 0.0],
            vec![0.0, 1.0, 0.0],
            vec![0.0, 2.0, 0.0], // same direction as unit 1: a tie, later position
            vec![0.7, 0.7, 0.0],
            vec![0.0, 0.0, 0.0], // no direction: score 0
        ];
        let q = [0.0, 1.0, 0.0];
        let r = rank(&q, &units, 10);
        let order: Vec<usize> = r.iter().map(|x| x.1).collect();
        assert_eq!(order, [1, 2, 3, 0, 4]);
        assert_eq!(r[0].0, 1.0);
        assert_eq!(r[0].0, r[1].0);
        assert_eq!(r[2].0, round4(std::f64::consts::FRAC_1_SQRT_2));
        assert_eq!(r[4].0, 0.0);
        // k cuts the list; a query of the wrong dimension scores 0 everywhere, in order.
        assert_eq!(rank(&q, &units, 2).len(), 2);
        let wrong: Vec<usize> = rank(&[1.0], &units, 3).iter().map(|x| x.1).collect();
        assert_eq!(wrong, [0, 1, 2]);
        // Scores that differ only past the 4th decimal are a tie, broken by position.
        let near = vec![vec![1.0, 0.000_01], vec![1.0, 0.0]];
        let order: Vec<usize> = rank(&[1.0, 0.0], &near, 2).iter().map(|x| x.1).collect();
        assert_eq!(order, [0, 1]);
    }

    /// Embeds a text as [len, number of 'a's] and counts what it was asked.
    #[derive(Debug, Default)]
    struct Counting {
        asked: Mutex<Vec<Vec<String>>>,
    }

    impl Embedder for Counting {
        fn model(&self) -> String {
            "fake:counting".into()
        }
        fn embed(&self, texts: &[String]) -> Result<Embedded, String> {
            self.asked.lock().unwrap().push(texts.to_vec());
            Ok(Embedded {
                vectors: texts
                    .iter()
                    .map(|t| vec![t.len() as f32, t.matches('a').count() as f32])
                    .collect(),
                requests: 1,
                tokens: texts.len() as u64,
            })
        }
    }

    #[test]
    fn the_cache_sends_only_missing_texts_once_and_survives_a_new_embedder() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("embedding-cache");
        let texts: Vec<String> = ["banana", "kiwi", "banana"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let c = CachedEmbedder::new(Counting::default(), &dir);
        let first = c.embed(&texts).unwrap();
        assert_eq!(
            first.vectors,
            vec![vec![6.0, 3.0], vec![4.0, 0.0], vec![6.0, 3.0]]
        );
        assert_eq!((first.requests, first.tokens), (1, 2));
        assert_eq!(
            c.inner().asked.lock().unwrap().clone(),
            vec![vec!["banana", "kiwi"]]
        );
        // A new embedder over the same directory (a rerun): nothing is asked.
        let again = CachedEmbedder::new(Counting::default(), &dir);
        let second = again.embed(&texts).unwrap();
        assert_eq!(second.vectors, first.vectors);
        assert_eq!((second.requests, second.tokens), (0, 0));
        assert!(again.inner().asked.lock().unwrap().is_empty());
        // Only the new text is asked for.
        let more = vec!["kiwi".to_string(), "papaya".to_string()];
        let third = again.embed(&more).unwrap();
        assert_eq!(third.vectors[1], vec![6.0, 3.0]);
        assert_eq!(
            again.inner().asked.lock().unwrap().clone(),
            vec![vec!["papaya"]]
        );
        // One file per (model, text); another model does not read them.
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 3);
        assert_ne!(
            embedding_hash("fake:counting", "kiwi"),
            embedding_hash("fake:other", "kiwi")
        );
    }
}
