//! The `memory` service: retrieval over a task's dialogue history (OdysseyBench's RAG
//! setting), by BM25 (the default) or by embeddings.
//!
//! A [`MemoryIndex`] is built per trial, in memory, from the task's `history.json` at one
//! [`Granularity`]: each unit (a session, an utterance, a session summary or a summary chunk)
//! is one document of a `tantivy` index, tokenised with its English stemming analyser. A search
//! ranks units by BM25 (tantivy's defaults, k1 = 1.2, b = 0.75) and breaks ties by the unit's
//! place in the history (older first), so the same query always gives the same list.
//!
//! With an [`Embedder`] ([`MemoryIndex::build_embedded`], `--embeddings`), every unit is
//! embedded when the index is built and the query when it is searched; units are ranked by
//! cosine similarity (see [`crate::embed::rank`]), ties again by place in the history. An
//! embeddings API failure (after the embedder's retries) is kept ([`MemoryIndex::failure`]):
//! the search is a tool error and the run loop ends the trial as `error`, not `failed`.
//!
//! The service is not a task app: the run setting `--context rag:<granularity>:<k>` installs it
//! ([`crate::World::set_memory`]) when the task has a history, and only then is `memory_search`
//! offered. It is read-only and holds no world state (snapshots do not include it).

use std::fmt;
use std::sync::{Arc, Mutex};

use bureau_core::history::{Granularity, History, Role};
use bureau_core::time::WorldTime;
use chrono_tz::Tz;
use serde::Serialize;
use tantivy::collector::TopDocs;
use tantivy::query::QueryParser;
use tantivy::schema::{
    Field, IndexRecordOption, NumericOptions, Schema, TextFieldIndexing, TextOptions, Value,
};
use tantivy::{Index, IndexReader, TantivyDocument};

use crate::embed::{self, Embedder};

/// One retrievable unit of the history.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemoryUnit {
    /// `s1` (session, summary), `s1#3` (utterance 3), `s1#1-6` (chunk of utterances 1–6).
    pub unit: String,
    pub session: String,
    /// When the unit starts (the session's start, the utterance's time, the chunk's first
    /// utterance), in the task's time zone.
    pub at: String,
    /// The speaker, for utterances.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
    pub text: String,
}

/// One search result: a unit with its rank and score.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemoryHit {
    pub rank: usize,
    /// BM25, or the cosine similarity under embeddings; rounded to 4 decimals.
    pub score: f64,
    #[serde(flatten)]
    pub unit: MemoryUnit,
}

/// Why an index could not be built or searched.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("the history cannot be searched at this granularity: {0}")]
    Unsupported(String),
    #[error("the memory index failed: {0}")]
    Index(#[from] tantivy::TantivyError),
    #[error("the embeddings model failed: {0}")]
    Embeddings(String),
}

/// What the embeddings of one index cost: requests to the API and the input tokens it
/// reported (vectors read from a cache cost nothing).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct EmbeddingUsage {
    pub requests: u64,
    pub tokens: u64,
}

/// How units are ranked.
enum Ranker {
    Bm25 {
        reader: IndexReader,
        parser: QueryParser,
        ord: Field,
    },
    Dense {
        embedder: Arc<dyn Embedder>,
        /// One per unit; empty for a unit without text (it scores 0).
        vectors: Vec<Vec<f32>>,
    },
}

/// A searchable history at one granularity, with the setting's top-k.
pub struct MemoryIndex {
    granularity: Granularity,
    k: u32,
    units: Vec<MemoryUnit>,
    ranker: Ranker,
    usage: Mutex<EmbeddingUsage>,
    failure: Mutex<Option<String>>,
}

impl fmt::Debug for MemoryIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryIndex")
            .field("granularity", &self.granularity)
            .field("k", &self.k)
            .field("units", &self.units.len())
            .field("retrieval", &self.retrieval())
            .finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn show(t: WorldTime, tz: Tz) -> String {
    t.with_timezone(&tz).to_rfc3339()
}

/// The units of `history` at `granularity`, in history order.
pub fn units(
    history: &History,
    granularity: Granularity,
    tz: Tz,
) -> Result<Vec<MemoryUnit>, MemoryError> {
    history
        .supports(granularity)
        .map_err(MemoryError::Unsupported)?;
    let mut out = Vec::new();
    for s in &history.sessions {
        match granularity {
            Granularity::Session => out.push(MemoryUnit {
                unit: s.id.clone(),
                session: s.id.clone(),
                at: show(s.started_at, tz),
                role: None,
                text: s
                    .utterances
                    .iter()
                    .map(|u| format!("{}: {}", u.role.label(), u.text.trim()))
                    .collect::<Vec<_>>()
                    .join("\n"),
            }),
            Granularity::Utterance => {
                for (i, u) in s.utterances.iter().enumerate() {
                    out.push(MemoryUnit {
                        unit: format!("{}#{}", s.id, i + 1),
                        session: s.id.clone(),
                        at: show(u.at, tz),
                        role: Some(u.role),
                        text: u.text.trim().to_string(),
                    });
                }
            }
            Granularity::Summary => out.push(MemoryUnit {
                unit: s.id.clone(),
                session: s.id.clone(),
                at: show(s.started_at, tz),
                role: None,
                text: s.summary.clone().unwrap_or_default().trim().to_string(),
            }),
            Granularity::Chunk => {
                for c in &s.chunks {
                    let at = s
                        .utterances
                        .get(c.from.saturating_sub(1))
                        .map_or(s.started_at, |u| u.at);
                    out.push(MemoryUnit {
                        unit: format!("{}#{}-{}", s.id, c.from, c.to),
                        session: s.id.clone(),
                        at: show(at, tz),
                        role: None,
                        text: c.summary.trim().to_string(),
                    });
                }
            }
        }
    }
    Ok(out)
}

impl MemoryIndex {
    /// Index `history` at `granularity` (in memory); searches return at most `k` units.
    pub fn build(
        history: &History,
        granularity: Granularity,
        k: u32,
        tz: Tz,
    ) -> Result<MemoryIndex, MemoryError> {
        let units = units(history, granularity, tz)?;
        let mut schema = Schema::builder();
        let text_options = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer("en_stem")
                .set_index_option(IndexRecordOption::WithFreqsAndPositions),
        );
        let text = schema.add_text_field("text", text_options);
        let ord = schema.add_u64_field("ord", NumericOptions::default().set_stored());
        let index = Index::create_in_ram(schema.build());
        // One thread, one commit: one segment, so statistics and doc ids do not depend on
        // thread scheduling.
        let mut writer = index.writer_with_num_threads::<TantivyDocument>(1, 15_000_000)?;
        for (i, u) in units.iter().enumerate() {
            let mut doc = TantivyDocument::default();
            doc.add_text(text, &u.text);
            doc.add_u64(ord, i as u64);
            writer.add_document(doc)?;
        }
        writer.commit()?;
        writer.wait_merging_threads()?;
        let reader = index.reader()?;
        let parser = QueryParser::for_index(&index, vec![text]);
        Ok(MemoryIndex {
            granularity,
            k,
            units,
            ranker: Ranker::Bm25 {
                reader,
                parser,
                ord,
            },
            usage: Mutex::new(EmbeddingUsage::default()),
            failure: Mutex::new(None),
        })
    }

    /// Index `history` at `granularity` by embeddings: every unit with text is embedded now
    /// (one [`Embedder::embed`] call; the embedder batches and caches), the query at each
    /// search. Fails when the embedder fails or returns the wrong number of vectors.
    pub fn build_embedded(
        history: &History,
        granularity: Granularity,
        k: u32,
        tz: Tz,
        embedder: Arc<dyn Embedder>,
    ) -> Result<MemoryIndex, MemoryError> {
        let units = units(history, granularity, tz)?;
        let texts: Vec<String> = units
            .iter()
            .filter(|u| !u.text.trim().is_empty())
            .map(|u| u.text.clone())
            .collect();
        let mut usage = EmbeddingUsage::default();
        let mut got = if texts.is_empty() {
            Vec::new()
        } else {
            let e = embedder
                .embed(&texts)
                .map_err(|e| MemoryError::Embeddings(format!("{}: {e}", embedder.model())))?;
            usage.requests += e.requests;
            usage.tokens += e.tokens;
            e.vectors
        };
        if got.len() != texts.len() {
            return Err(MemoryError::Embeddings(format!(
                "{} returned {} vectors for {} units",
                embedder.model(),
                got.len(),
                texts.len()
            )));
        }
        got.reverse();
        let vectors = units
            .iter()
            .map(|u| {
                if u.text.trim().is_empty() {
                    Vec::new()
                } else {
                    got.pop().unwrap_or_default()
                }
            })
            .collect();
        Ok(MemoryIndex {
            granularity,
            k,
            units,
            ranker: Ranker::Dense { embedder, vectors },
            usage: Mutex::new(usage),
            failure: Mutex::new(None),
        })
    }

    /// How units are ranked: `bm25`, or `embeddings <provider:model>`.
    pub fn retrieval(&self) -> String {
        match &self.ranker {
            Ranker::Bm25 { .. } => "bm25".into(),
            Ranker::Dense { embedder, .. } => format!("embeddings {}", embedder.model()),
        }
    }

    /// Embedding requests and tokens spent by this index so far (building and searching).
    pub fn embedding_usage(&self) -> EmbeddingUsage {
        *lock(&self.usage)
    }

    /// Why a search could not be served, when the embeddings model failed after its retries.
    pub fn failure(&self) -> Option<String> {
        lock(&self.failure).clone()
    }

    pub fn granularity(&self) -> Granularity {
        self.granularity
    }
    /// The setting's top-k: the default and the most a search returns.
    pub fn k(&self) -> u32 {
        self.k
    }
    /// Every unit, in history order.
    pub fn units(&self) -> &[MemoryUnit] {
        &self.units
    }

    /// The best `k` units for `query` (at most the setting's k), ties by history order.
    ///
    /// BM25: query words are combined with OR; query syntax errors are ignored (lenient);
    /// units that match no word are never returned. Embeddings: cosine similarity between the
    /// query's vector and each unit's; units with no similarity (cosine ≤ 0) are not returned.
    pub fn search(&self, query: &str, k: usize) -> Result<Vec<MemoryHit>, MemoryError> {
        let k = k.min(self.k as usize);
        if k == 0 || self.units.is_empty() {
            return Ok(Vec::new());
        }
        let scored: Vec<(f64, usize)> = match &self.ranker {
            Ranker::Bm25 {
                reader,
                parser,
                ord,
            } => {
                let (q, _ignored) = parser.parse_query_lenient(query);
                let searcher = reader.searcher();
                let found =
                    searcher.search(&q, &TopDocs::with_limit(self.units.len()).order_by_score())?;
                let mut scored: Vec<(f32, usize)> = Vec::new();
                for (score, addr) in found {
                    let doc: TantivyDocument = searcher.doc(addr)?;
                    if let Some(i) = doc.get_first(*ord).and_then(|v| v.as_u64()) {
                        scored.push((score, i as usize));
                    }
                }
                scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                scored
                    .into_iter()
                    .take(k)
                    .map(|(s, i)| (embed::round4(f64::from(s)), i))
                    .collect()
            }
            Ranker::Dense { embedder, vectors } => {
                if let Some(why) = self.failure() {
                    return Err(MemoryError::Embeddings(why));
                }
                let q = match embedder.embed(&[query.to_string()]) {
                    Ok(q) => q,
                    Err(e) => {
                        let why = format!("{}: {e}", embedder.model());
                        *lock(&self.failure) = Some(why.clone());
                        return Err(MemoryError::Embeddings(why));
                    }
                };
                {
                    let mut u = lock(&self.usage);
                    u.requests += q.requests;
                    u.tokens += q.tokens;
                }
                let Some(qv) = q.vectors.first() else {
                    let why = format!("{} returned no vector for the query", embedder.model());
                    *lock(&self.failure) = Some(why.clone());
                    return Err(MemoryError::Embeddings(why));
                };
                embed::rank(qv, vectors, k)
                    .into_iter()
                    .filter(|(s, _)| *s > 0.0)
                    .collect()
            }
        };
        Ok(scored
            .into_iter()
            .enumerate()
            .filter_map(|(rank, (score, i))| {
                self.units.get(i).map(|u| MemoryHit {
                    rank: rank + 1,
                    score,
                    unit: u.clone(),
                })
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    const TZ: Tz = chrono_tz::Europe::London;

    fn history() -> History {
        let src = r#"{"sessions": [
  {"id": "d1", "started_at": "2026-03-02T09:00:00", "summary": "Planning the offsite: the budget cap is 4,000 pounds.",
   "chunks": [{"from": 1, "to": 2, "summary": "Offsite budget capped at 4,000 pounds."},
              {"from": 3, "to": 3, "summary": "Chitchat about the weather."}],
   "utterances": [
     {"role": "user", "at": "2026-03-02T09:00:00", "text": "For the offsite, keep the budget under 4,000 pounds."},
     {"role": "assistant", "at": "2026-03-02T09:01:00", "text": "Understood, a budget cap of 4,000."},
     {"role": "user", "at": "2026-03-02T09:05:00", "text": "Lovely weather today."}
   ]},
  {"id": "d2", "started_at": "2026-03-04T14:00:00", "summary": "Venue preference: the Harbour Room, not the Loft.",
   "chunks": [{"from": 1, "to": 2, "summary": "User prefers the Harbour Room venue over the Loft."}],
   "utterances": [
     {"role": "user", "at": "2026-03-04T14:00:00", "text": "I prefer the Harbour Room as the venue; the Loft is too noisy."},
     {"role": "assistant", "at": "2026-03-04T14:02:00", "text": "Noted: Harbour Room preferred."}
   ]}
]}"#;
        History::parse(Path::new("history.json"), src, TZ, None).unwrap()
    }

    fn top(g: Granularity, q: &str, k: usize) -> Vec<String> {
        let idx = MemoryIndex::build(&history(), g, 5, TZ).unwrap();
        idx.search(q, k)
            .unwrap()
            .into_iter()
            .map(|h| h.unit.unit)
            .collect()
    }

    #[test]
    fn bm25_ranks_the_unit_holding_the_detail_first_at_every_granularity() {
        // BM25 length normalisation: the shorter utterance with the same word ranks first.
        assert_eq!(top(Granularity::Utterance, "budget", 5), ["d1#2", "d1#1"]);
        assert_eq!(
            top(Granularity::Utterance, "offsite budget", 5),
            ["d1#1", "d1#2"]
        );
        assert_eq!(top(Granularity::Utterance, "venue preferred", 1), ["d2#1"]);
        assert_eq!(top(Granularity::Session, "venue", 5), ["d2"]);
        assert_eq!(top(Granularity::Session, "budget weather", 5), ["d1"]);
        assert_eq!(top(Granularity::Summary, "budget", 5), ["d1"]);
        assert_eq!(top(Granularity::Chunk, "weather", 5), ["d1#3-3"]);
        assert_eq!(top(Granularity::Chunk, "venue", 5), ["d2#1-2"]);
        // Stemming: "preferences" finds "prefers" and "preferred".
        assert_eq!(top(Granularity::Chunk, "preferences", 5), ["d2#1-2"]);
    }

    #[test]
    fn hits_carry_session_time_role_and_are_capped_at_the_settings_k() {
        let idx = MemoryIndex::build(&history(), Granularity::Utterance, 2, TZ).unwrap();
        let hits = idx.search("harbour room loft", 10).unwrap();
        assert_eq!(hits.len(), 2);
        assert_eq!(hits[0].rank, 1);
        assert_eq!(hits[0].unit.session, "d2");
        assert_eq!(hits[0].unit.at, "2026-03-04T14:00:00+00:00");
        assert_eq!(hits[0].unit.role, Some(Role::User));
        assert!(hits[0].score >= hits[1].score);
        assert!(idx.search("nothing matches zebra", 2).unwrap().is_empty());
        // Query syntax never fails.
        assert!(idx.search("budget AND (\"", 2).is_ok());
    }

    #[test]
    fn ties_break_by_history_order_and_searches_repeat_exactly() {
        // Two identical units score the same: the older comes first.
        let src = r#"{"sessions": [
  {"id": "a", "started_at": "2026-03-02T09:00:00", "utterances": [{"role": "user", "at": "2026-03-02T09:00:00", "text": "the code is blue"}]},
  {"id": "b", "started_at": "2026-03-03T09:00:00", "utterances": [{"role": "user", "at": "2026-03-03T09:00:00", "text": "the code is blue"}]}
]}"#;
        let h = History::parse(Path::new("h.json"), src, TZ, None).unwrap();
        for _ in 0..3 {
            let idx = MemoryIndex::build(&h, Granularity::Utterance, 5, TZ).unwrap();
            let hits = idx.search("blue code", 5).unwrap();
            assert_eq!(hits.len(), 2);
            assert_eq!(hits[0].score, hits[1].score);
            assert_eq!(hits[0].unit.unit, "a#1");
            assert_eq!(hits[1].unit.unit, "b#1");
        }
    }

    /// Embeds a text as counts of a few topic words; fails from the `fail_after`-th call on.
    #[derive(Debug)]
    struct Topics {
        calls: std::sync::atomic::AtomicUsize,
        fail_after: usize,
    }

    impl Embedder for Topics {
        fn model(&self) -> String {
            "fake:topics".into()
        }
        fn embed(&self, texts: &[String]) -> Result<embed::Embedded, String> {
            let n = self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            if n >= self.fail_after {
                return Err("503 after 2 retries".into());
            }
            let topics = ["budget", "venue", "weather", "harbour"];
            Ok(embed::Embedded {
                vectors: texts
                    .iter()
                    .map(|t| {
                        let t = t.to_lowercase();
                        topics.iter().map(|w| t.matches(w).count() as f32).collect()
                    })
                    .collect(),
                requests: 1,
                tokens: texts
                    .iter()
                    .map(|t| t.split_whitespace().count() as u64)
                    .sum(),
            })
        }
    }

    fn topics(fail_after: usize) -> Arc<Topics> {
        Arc::new(Topics {
            calls: Default::default(),
            fail_after,
        })
    }

    #[test]
    fn embeddings_rank_by_cosine_with_ties_by_history_order_and_count_their_tokens() {
        let idx = MemoryIndex::build_embedded(&history(), Granularity::Utterance, 5, TZ, topics(9))
            .unwrap();
        assert_eq!(idx.retrieval(), "embeddings fake:topics");
        let built = idx.embedding_usage();
        assert_eq!(built.requests, 1);
        assert_eq!(built.tokens, 35);
        let hits = idx.search("which venue?", 5).unwrap();
        let order: Vec<&str> = hits.iter().map(|h| h.unit.unit.as_str()).collect();
        // d2#1 mentions venue and harbour (cosine 0.7071); d2#2 harbour only (0): not returned.
        assert_eq!(order, ["d2#1"]);
        assert_eq!(
            hits[0].score,
            embed::round4(std::f64::consts::FRAC_1_SQRT_2)
        );
        // Both budget utterances are [1, 0, 0, 0]: a tie, the older first.
        let hits = idx.search("budget", 5).unwrap();
        let order: Vec<&str> = hits.iter().map(|h| h.unit.unit.as_str()).collect();
        assert_eq!(order, ["d1#1", "d1#2"]);
        assert_eq!((hits[0].score, hits[1].score), (1.0, 1.0));
        assert_eq!(idx.embedding_usage().requests, 3);
        assert_eq!(idx.failure(), None);
    }

    #[test]
    fn an_embeddings_failure_is_kept_and_fails_every_later_search() {
        let e = MemoryIndex::build_embedded(&history(), Granularity::Session, 5, TZ, topics(0))
            .unwrap_err();
        assert!(e.to_string().contains("503 after 2 retries"), "{e}");
        let model = topics(1);
        let idx =
            MemoryIndex::build_embedded(&history(), Granularity::Session, 5, TZ, model.clone())
                .unwrap();
        let e = idx.search("venue", 5).unwrap_err();
        assert!(e.to_string().contains("fake:topics: 503"), "{e}");
        assert!(idx.failure().unwrap().contains("503 after 2 retries"));
        assert!(idx.search("budget", 5).is_err());
        // No further call once failed.
        assert_eq!(model.calls.load(std::sync::atomic::Ordering::SeqCst), 2);
    }

    #[test]
    fn summary_granularities_need_shipped_summaries() {
        let src = r#"{"sessions": [{"id": "a", "started_at": "2026-03-02T09:00:00", "utterances": [{"role": "user", "at": "2026-03-02T09:00:00", "text": "x"}]}]}"#;
        let h = History::parse(Path::new("h.json"), src, TZ, None).unwrap();
        let e = MemoryIndex::build(&h, Granularity::Chunk, 5, TZ).unwrap_err();
        assert!(e.to_string().contains("no summary chunks"), "{e}");
        assert!(MemoryIndex::build(&h, Granularity::Session, 5, TZ).is_ok());
    }
}
