//! The models a run makes besides its agents: the LLM judge, the user writing feedback
//! (`--feedback-model`), the colleagues (`--colleagues`) and the embeddings model
//! (`--embeddings`).

use std::path::{Path, PathBuf};

use bureau_agents::AgentCatalog;
use bureau_agents::llm::LlmJudge;
use bureau_check::{CachedJudge, Judge};
use bureau_world::embed::{CachedEmbedder, Embedder};

use crate::manifest::{JudgeManifest, RetrievalManifest};
use crate::{RunConfig, RunError, rundir};

/// The models that play people in a run: the user writing feedback (`--feedback-model`) and
/// the colleagues (`--colleagues`). Both absent by default (template feedback, deterministic
/// colleagues).
#[derive(Default)]
pub struct People {
    pub feedback_writer: Option<JudgeEntry>,
    pub colleagues: Option<ColleaguesEntry>,
    /// Not a person, but made here with the same catalog: the embeddings model of
    /// `--embeddings` (dense retrieval for `memory_search`).
    pub embeddings: Option<EmbeddingsEntry>,
}

/// The embeddings model of a run: shared by every trial, its vectors cached in
/// `<out>/embedding-cache/`.
pub struct EmbeddingsEntry {
    pub manifest: RetrievalManifest,
    pub embedder: std::sync::Arc<dyn Embedder>,
}

impl EmbeddingsEntry {
    /// The embeddings model `spec` names (see [`AgentCatalog::make_embedder`]), caching in
    /// `<out>/embedding-cache/`.
    pub fn make(
        catalog: &AgentCatalog,
        spec: &str,
        out: &Path,
    ) -> Result<EmbeddingsEntry, RunError> {
        let client = catalog.make_embedder(spec)?;
        let manifest = RetrievalManifest {
            method: "embeddings".into(),
            model: Some(client.model()),
            spec: Some(spec.to_string()),
            definition: serde_json::to_value(client.definition()).ok(),
        };
        Ok(EmbeddingsEntry {
            manifest,
            embedder: std::sync::Arc::new(CachedEmbedder::new(
                client,
                out.join(rundir::EMBEDDING_CACHE),
            )),
        })
    }
}

/// A model spec's error, said about the option that gave it (the catalog speaks of `--judge`).
fn named(option: &str, e: RunError) -> RunError {
    RunError::Config(format!(
        "{option}: {}",
        e.to_string().replacen("--judge ", "", 1)
    ))
}

/// The model playing the colleagues: shared by every trial (each trial gets its own
/// [`LlmColleagues`] with its own conversations), its replies cached in `<out>/colleague-cache/`.
pub struct ColleaguesEntry {
    pub manifest: JudgeManifest,
    pub model: std::sync::Arc<dyn Judge>,
}

impl People {
    /// The models `config` names, made with `catalog` (its agents file and environment).
    pub fn make(catalog: &AgentCatalog, config: &RunConfig) -> Result<People, RunError> {
        if !(0.0..=1.0).contains(&config.feedback.threshold) {
            return Err(RunError::Config(format!(
                "--feedback-threshold {} is not a score — give a weighted score from 0 to 1, e.g. 0.6",
                config.feedback.threshold
            )));
        }
        let feedback_writer = match &config.feedback_model {
            Some(_) if !config.feedback.enabled() => {
                return Err(RunError::Config(
                    "--feedback-model needs feedback rounds — add --feedback <n> (n ≥ 1)".into(),
                ));
            }
            Some(spec) => Some(
                JudgeEntry::make_in(catalog, spec, config.out.join(rundir::FEEDBACK_CACHE))
                    .map_err(|e| named("--feedback-model", e))?,
            ),
            None => None,
        };
        let colleagues = match config.colleagues.as_deref() {
            None | Some("deterministic") => None,
            Some(spec) => {
                let entry =
                    JudgeEntry::make_in(catalog, spec, config.out.join(rundir::COLLEAGUE_CACHE))
                        .map_err(|e| named("--colleagues", e))?;
                Some(ColleaguesEntry {
                    manifest: entry.manifest(),
                    model: std::sync::Arc::new(entry.judge),
                })
            }
        };
        let embeddings = match config.embeddings.as_deref() {
            None | Some("bm25") => None,
            Some(spec) => Some(EmbeddingsEntry::make(catalog, spec, &config.out)?),
        };
        Ok(People {
            feedback_writer,
            colleagues,
            embeddings,
        })
    }
}

/// The run's judge: the model as configured, its answers cached in the run directory.
pub struct JudgeEntry {
    pub spec: String,
    pub definition: serde_json::Value,
    pub judge: CachedJudge<LlmJudge>,
}

impl JudgeEntry {
    /// The judge `spec` names (see [`AgentCatalog::make_judge`]), caching in `<out>/judge-cache`.
    pub fn make(catalog: &AgentCatalog, spec: &str, out: &Path) -> Result<JudgeEntry, RunError> {
        JudgeEntry::make_in(catalog, spec, out.join(rundir::JUDGE_CACHE))
    }

    /// A temperature-0 model `spec` names (`provider:model`, `llm:provider:model` or a named
    /// `llm` agent), its answers cached in `cache`.
    pub fn make_in(
        catalog: &AgentCatalog,
        spec: &str,
        cache: PathBuf,
    ) -> Result<JudgeEntry, RunError> {
        let judge = catalog.make_judge(spec)?;
        let definition = serde_json::to_value(judge.definition()).unwrap_or_default();
        Ok(JudgeEntry {
            spec: spec.to_string(),
            definition,
            judge: CachedJudge::new(judge, cache),
        })
    }

    pub(crate) fn manifest(&self) -> JudgeManifest {
        JudgeManifest {
            spec: self.spec.clone(),
            model: self.judge.model(),
            definition: self.definition.clone(),
        }
    }
}
