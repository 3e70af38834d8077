//! A trial's result record (`result.json`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// `passed`/`failed` are verdicts on the agent; `error` means the harness or infrastructure
/// failed and the trial is excluded from every rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrialStatus {
    Passed,
    Failed,
    Error,
}

impl TrialStatus {
    pub fn as_str(&self) -> &'static str {
        match self {
            TrialStatus::Passed => "passed",
            TrialStatus::Failed => "failed",
            TrialStatus::Error => "error",
        }
    }
}

/// The task's metadata copied into each result so that summaries need no task files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskMeta {
    pub id: String,
    pub title: String,
    pub persona: String,
    pub category: String,
    pub difficulty: String,
    pub abilities: Vec<String>,
    pub apps: Vec<String>,
    pub turns: u32,
    /// For an instance of a parametrised task: what it was rendered from and with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<VariantMeta>,
}

/// The instance of a parametrised task a trial played (`bureau rescore` renders it again from
/// `seed`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VariantMeta {
    pub base: String,
    pub seed: u64,
    pub index: u32,
    pub params: BTreeMap<String, serde_json::Value>,
}

/// Per-trial scores, all computed from the verdicts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialScore {
    /// Σ weight(passed) / Σ weight(all declared items).
    pub weighted: f64,
    /// passed items / declared items (unweighted; the basis of TCR@p).
    pub pass_rate: f64,
    /// Every item passed and no red line violated.
    pub strict: bool,
    /// TheAgentCompany: 0.5·weighted + 0.5·strict.
    pub partial: f64,
    /// AgencyBench-style 0–10 score: round(10 × weighted).
    pub agency_0_10: u32,
    /// Ids of red-line items that did not pass.
    pub red_line_violations: Vec<String>,
    /// Weighted score of the items of each turn (`"1"`, `"2"`, ..., `"final"`).
    pub per_turn: BTreeMap<String, f64>,
    pub items_total: u32,
    pub items_passed: u32,
    pub items_error: u32,
    /// The weighted score under the task's TheAgentCompany checkpoint bonus, when it
    /// declares one (`checkpoint_bonus`); `weighted` stays the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bonus: Option<BonusScore>,
}

/// A trial's score under a checkpoint bonus strategy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BonusScore {
    /// `final` or `any`.
    pub strategy: String,
    /// 1 when the bonus applies, else the default weighted score.
    pub weighted: f64,
    /// Whether the bonus applied (the final checkpoint, or any checkpoint, passed).
    pub applied: bool,
}

/// Counts of what the agent did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    pub steps: u64,
    pub tool_calls: u64,
    pub tool_errors: u64,
    pub tool_calls_by_tool: BTreeMap<String, u64>,
    /// Limits that ended a turn early, as `turn:limit`.
    pub limits_hit: Vec<String>,
    /// Model API calls (`model_call` steps) of a model-driven agent; 0 for other kinds.
    #[serde(default)]
    pub model_calls: u64,
    /// Input tokens over every model call, cached ones included.
    #[serde(default)]
    pub input_tokens: u64,
    /// Input tokens read from the provider's prompt cache (a part of `input_tokens`).
    #[serde(default)]
    pub cached_input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
    /// US dollars over every model call that had a price; absent when none had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Requests to the embeddings API of `memory_search` (`--embeddings`), building the index
    /// and embedding queries; vectors found in the run's cache cost none. Not the agent's own.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub embedding_requests: u64,
    /// Input tokens those requests used, as the API reported them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub embedding_tokens: u64,
    /// Model calls and tokens of LLM colleagues' replies (`--colleagues llm:..`) in this trial;
    /// not the agent's. Absent when none was made (replies from the run's cache cost none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub colleague_tokens: Option<ModelTokens>,
    /// Model calls and tokens of the simulated user's feedback messages (`--feedback-model`)
    /// in this trial; not the agent's. Absent when none was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback_tokens: Option<ModelTokens>,
}

/// Calls and tokens of a model that is not the agent (a colleague, the feedback writer).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelTokens {
    /// Model API calls (answers read from a cache are not calls).
    pub calls: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl ModelTokens {
    pub fn add(&mut self, other: ModelTokens) {
        self.calls += other.calls;
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
    }
    /// `Some(self)` when a call was made.
    pub fn if_any(self) -> Option<ModelTokens> {
        (self.calls > 0).then_some(self)
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One attempt of a trial (a harness error is retried; every attempt is kept).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptRecord {
    pub attempt: u32,
    pub status: TrialStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Directory of the attempt, relative to the trial directory.
    pub dir: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialResult {
    pub task: TaskMeta,
    pub agent: String,
    pub epoch: u32,
    pub status: TrialStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Absent when the trial is `error` (nothing to score).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<TrialScore>,
    pub usage: Usage,
    pub wall_seconds: f64,
    pub attempts: Vec<AttemptRecord>,
    /// Workspace-Bench dependency-graph recognition of this trial; absent when the task has
    /// no `file_deps` (issue 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depgraph: Option<DepGraphScore>,
    /// The feedback rounds of the trial, when the run had them (`bureau run --feedback <n>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<FeedbackRecord>,
}

// --- Dependency-graph recognition (issue 5, §5) ----------------------------------------------

/// Precision, recall and F1 of a predicted set against a ground-truth set.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Prf {
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
}

/// A trial's predicted file dependency graph compared with its task's `file_deps`
/// (Workspace-Bench's node and edge precision / recall / F1; see `docs/outputs.md`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DepGraphScore {
    pub nodes: Prf,
    pub edges: Prf,
    /// |V_pred|, |V_gt|, |V_pred ∩ V_gt|.
    pub predicted_nodes: u32,
    pub truth_nodes: u32,
    pub matched_nodes: u32,
    /// |E_pred|, |E_gt|, |E_pred ∩ E_gt|.
    pub predicted_edges: u32,
    pub truth_edges: u32,
    pub matched_edges: u32,
}

// ---- feedback rounds (AgencyBench's user simulator) ----

/// How the simulated user gave feedback in one trial, and the score of every round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeedbackRecord {
    /// Feedback rounds allowed per turn (the run's `--feedback`, capped by the task's
    /// `[feedback] rounds`).
    pub rounds: u32,
    /// The weighted score a turn's items must reach for the user to be satisfied.
    pub threshold: f64,
    /// `template`, or the `provider:model` that wrote the messages.
    pub writer: String,
    /// Every turn that has rubric items (the last one with the `final` items), in order.
    pub turns: Vec<TurnFeedback>,
}

/// The rounds of one turn: `rounds[0]` is the agent's first try, `rounds[r]` its work after
/// the r-th feedback message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnFeedback {
    pub turn: u32,
    pub rounds: Vec<RoundScore>,
}

/// The turn's items after one round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundScore {
    /// Weighted score of the turn's items.
    pub score: f64,
    /// Whether `score` reached the threshold.
    pub met: bool,
    /// Ids of the items that did not pass.
    #[serde(default)]
    pub failed: Vec<String>,
}

impl TurnFeedback {
    /// Whether the turn met the threshold within `k` tries (the first try and `k - 1`
    /// feedback rounds): AgencyBench's per-task Pass@k.
    pub fn met_within(&self, k: usize) -> bool {
        self.rounds.iter().take(k).any(|r| r.met)
    }
}
