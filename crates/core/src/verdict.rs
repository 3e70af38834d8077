//! The outcome of one rubric item.
//!
//! A verdict carries the item's weight, kind, red-line flag and categories so that every
//! score can be computed from `verdicts.json` alone.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// When a rubric item is evaluated: after turn `n` (1-based) or after the last turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TurnRef {
    Turn(u32),
    Final,
}

impl fmt::Display for TurnRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TurnRef::Turn(n) => write!(f, "{n}"),
            TurnRef::Final => f.write_str("final"),
        }
    }
}

impl Serialize for TurnRef {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            TurnRef::Turn(n) => s.serialize_u32(*n),
            TurnRef::Final => s.serialize_str("final"),
        }
    }
}

impl<'de> Deserialize<'de> for TurnRef {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            N(i64),
            S(String),
        }
        match Raw::deserialize(d)? {
            Raw::N(n) if n >= 1 && n <= u32::MAX as i64 => Ok(TurnRef::Turn(n as u32)),
            Raw::N(n) => Err(serde::de::Error::custom(format!(
                "turn {n} is not a turn number; turns count from 1 (or write \"final\")"
            ))),
            Raw::S(s) if s == "final" => Ok(TurnRef::Final),
            Raw::S(s) => Err(serde::de::Error::custom(format!(
                "turn `{s}` is neither a turn number nor \"final\""
            ))),
        }
    }
}

/// Foundation / process / result (Workspace-Bench's rubric kinds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RubricKind {
    Foundation,
    Process,
    Result,
}

impl RubricKind {
    pub fn as_str(&self) -> &'static str {
        match self {
            RubricKind::Foundation => "foundation",
            RubricKind::Process => "process",
            RubricKind::Result => "result",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerdictStatus {
    Passed,
    Failed,
    /// The check itself broke (Starlark error, limit hit, judge failure): never a silent fail.
    Error,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub id: String,
    pub turn: TurnRef,
    pub status: VerdictStatus,
    pub weight: f64,
    pub kind: RubricKind,
    #[serde(default)]
    pub red_line: bool,
    #[serde(default)]
    pub categories: Vec<String>,
    /// Why: the check's own detail, or the error message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// For an item decided by an LLM judge: what the judge said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<JudgeRecord>,
}

/// Workspace-Bench's error taxonomy for a failed judged item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum JudgeErrorType {
    Constraint,
    #[serde(rename = "Missing Content")]
    MissingContent,
    Reasoning,
    Process,
    Format,
}

impl JudgeErrorType {
    pub const ALL: [JudgeErrorType; 5] = [
        JudgeErrorType::Constraint,
        JudgeErrorType::MissingContent,
        JudgeErrorType::Reasoning,
        JudgeErrorType::Process,
        JudgeErrorType::Format,
    ];
    pub fn as_str(&self) -> &'static str {
        match self {
            JudgeErrorType::Constraint => "Constraint",
            JudgeErrorType::MissingContent => "Missing Content",
            JudgeErrorType::Reasoning => "Reasoning",
            JudgeErrorType::Process => "Process",
            JudgeErrorType::Format => "Format",
        }
    }
    /// Parse a judge's spelling (case and separators ignored: `missing_content`, `Missing Content`).
    pub fn parse(s: &str) -> Option<JudgeErrorType> {
        let norm: String = s
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        JudgeErrorType::ALL.into_iter().find(|t| {
            t.as_str()
                .chars()
                .filter(|c| c.is_ascii_alphanumeric())
                .collect::<String>()
                .to_ascii_lowercase()
                == norm
        })
    }
}

/// What an LLM judge answered for one item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeRecord {
    /// `provider:model` of the judge.
    pub model: String,
    /// Hash of (model, prompt): the cache key, so a re-score can show it asked the same thing.
    pub prompt_hash: String,
    /// The judge's confidence in its verdict, 0–1, when it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    #[serde(default)]
    pub evidence: String,
    /// Why the item failed, in Workspace-Bench's taxonomy (failed items only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_type: Option<JudgeErrorType>,
    /// Whether the answer came from the judge cache instead of a model call.
    #[serde(default)]
    pub cached: bool,
}

impl Verdict {
    pub fn passed(&self) -> bool {
        self.status == VerdictStatus::Passed
    }
}

/// One entry of `verdicts.json`: a verdict with what it is about — the task, the agent (its
/// name, which is also its folder under `trials/<task>/`), the epoch and the item's
/// description — so that one glob over a run's `verdicts.json` files gives a tidy table.
/// A reader that wants only the verdict reads a [`Verdict`]; the extra fields are ignored.
#[derive(Debug, Clone, Serialize)]
pub struct VerdictEntry<'a> {
    pub task: &'a str,
    pub agent: &'a str,
    pub epoch: u32,
    pub description: &'a str,
    /// Where the item's expected value comes from (`source` in task.toml), when given.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub source: &'a [String],
    #[serde(flatten)]
    pub verdict: &'a Verdict,
}

/// The entries of `verdicts.json` for `verdicts` of `task` by `agent` in `epoch`, in the
/// verdicts' order. An item the task does not list (never the case for verdicts the task's
/// checks made) gets an empty description.
pub fn verdict_entries<'a>(
    task: &'a crate::Task,
    agent: &'a str,
    epoch: u32,
    verdicts: &'a [Verdict],
) -> Vec<VerdictEntry<'a>> {
    verdicts
        .iter()
        .map(|v| {
            let item = task.rubric.iter().find(|r| r.id == v.id);
            VerdictEntry {
                task: &task.id,
                agent,
                epoch,
                description: item.map_or("", |r| r.description.as_str()),
                source: item.map_or(&[][..], |r| r.sources.as_slice()),
                verdict: v,
            }
        })
        .collect()
}
