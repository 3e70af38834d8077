//! The agents Bureau can run, and the handle they act through.
//!
//! An [`Agent`] works one turn at a time: the run loop calls [`Agent::run_turn`] with the
//! turn's wake-up prompt and a [`ToolSession`], the agent's only handle on the world. Every
//! tool call goes through the session, which records it in the trajectory and enforces the
//! task's per-turn limits.
//!
//! Agent kinds, by the spec given on the command line ([`make_agent`]):
//!
//! * `oracle` ([`oracle::OracleAgent`]) — replays the task's `solution/` through the real tools;
//! * `null` ([`null::NullAgent`]) — does nothing (a task it passes is a broken task);
//! * `replay:<path>` ([`replay::ReplayAgent`]) — re-issues the tool calls of a recorded
//!   `trajectory.jsonl`, turn by turn;
//! * `llm` with a model, `llm:<provider>:<model>`, or a name from an agents file
//!   ([`llm::LlmAgent`]) — Bureau's own tool-calling agent over the OpenAI or Anthropic API;
//! * `claude-code`, `codex`, `openhands`, `openclaw`, `hermes` (optionally `:<model>`),
//!   `command:<template>`, or a harness agent of an agents file — third-party harnesses
//!   ([`harness::HarnessDef`]), made by the [`harness::HarnessMaker`] the catalog is given
//!   (the `bureau-harness` crate runs them).
//!
//! [`AgentCatalog`] makes agents from specs with an agents file and a default model;
//! [`make_agent`] is the catalog with neither.
//!
//! An [`AgentError`] is a harness failure: the trial becomes `error` and is retried; it never
//! counts as an agent failure. An agent's mistakes (bad tool arguments, impossible actions)
//! are tool errors, recorded in the trajectory like any other outcome.

pub mod budget;
mod catalog;
pub mod doctor;
pub mod harness;
pub mod llm;
pub mod null;
pub mod oracle;
pub mod replay;
mod session;

use bureau_core::TaskErrors;
use bureau_core::task::Task;
use bureau_core::time::WorldTime;

pub use catalog::{AgentCatalog, EnvLookup};
pub use session::{LimitReached, Recorder, ToolSession, TurnLimits, Workspace, stall_grace};

/// What the agent receives at the start of a turn.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnInput {
    /// 1-based turn number.
    pub index: u32,
    /// The wake-up prompt (loud events are announced here; silent ones are not).
    pub prompt: String,
    /// The world clock during this turn.
    pub time: WorldTime,
    /// 0 for the turn's wake-up prompt; r ≥ 1 when `prompt` is the simulated user's r-th
    /// feedback message on this turn's work (`bureau run --feedback`): the same turn goes on,
    /// in the same conversation, on the same world. Agents replaying a fixed script do
    /// nothing in a feedback round unless their script has one.
    pub round: u32,
}

impl TurnInput {
    /// The text an agent is given for this input: the wake-up prompt opened by the office's
    /// date, time and zone (`Office time: Tuesday 3 March 2026, 09:00 (Europe/Berlin,
    /// UTC+01:00)`, [`bureau_core::time::turn_preamble`]), or a feedback round's message as it
    /// is. Every agent kind that passes the prompt on (the `llm` agent, every harness) uses
    /// this, so "today" is always the world's day, never the machine's.
    pub fn text(&self, tz: chrono_tz::Tz) -> String {
        if self.round > 0 {
            self.prompt.clone()
        } else {
            format!(
                "{}{}",
                bureau_core::time::turn_preamble(&self.time, tz),
                self.prompt
            )
        }
    }
}

/// What the agent hands back at the end of a turn.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TurnOutput {
    /// The agent's closing message for the turn. The run loop records it as the turn's last
    /// `message` step, so an agent should not also [`ToolSession::say`] it.
    pub final_message: Option<String>,
}

/// A harness failure of an agent: the trial becomes `error` (and is retried), never `failed`.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The agent spec names no known kind.
    #[error("unknown agent `{spec}` — use one of: {}", AGENT_KINDS.join(", "))]
    UnknownKind { spec: String },
    /// A recorded trajectory could not be read.
    #[error("replay {path}:{line}: {message} — {hint}")]
    Replay {
        path: String,
        line: usize,
        message: String,
        hint: String,
    },
    /// Anything else that stopped the agent from working (API down, process died, ...).
    #[error("{0}")]
    Failed(String),
    /// The agent cannot be made as configured (a missing API key, a bad model name, ...).
    #[error("{0}")]
    Config(String),
    /// The agents file does not load; every problem, located.
    #[error("{0}")]
    AgentsFile(TaskErrors),
}

/// The agent specs [`make_agent`] understands, for help texts.
pub const AGENT_KINDS: &[&str] = &[
    "oracle",
    "null",
    "replay:<trajectory.jsonl or trial dir>",
    "llm (with --model)",
    "llm:<provider>:<model>",
    "claude-code, codex, openhands, openclaw, hermes (optionally :<model>)",
    "command:<template>",
    "<name from --agents-file>",
];

/// The system under test.
///
/// The trait is object-safe (agents are used as `Box<dyn Agent>`) and `Send` (trials run on
/// worker threads). A fresh agent is made for every attempt of every trial, so an agent may
/// keep per-trial state in `self`.
pub trait Agent: Send {
    /// A short stable name; it names the agent's directory in run output and its column in
    /// reports. A name that is not a safe folder name is recorded as its [`sanitize_name`].
    fn name(&self) -> String;

    /// Called once per trial, before the first turn.
    fn start_trial(&mut self, task: &Task) -> Result<(), AgentError>;

    /// Work one turn through `tools`. Return when done; a limit reached by the session ends
    /// the turn from the agent's side (its further calls are refused).
    fn run_turn(&mut self, turn: &TurnInput, tools: &ToolSession)
    -> Result<TurnOutput, AgentError>;

    /// Checked once for every agent before the first trial of a run: what the agent needs
    /// to work at all (a program installed, ...). An error refuses the run with one line
    /// naming the agent, what is missing and the fix, instead of a run of `error` trials.
    fn preflight(&self) -> Result<(), AgentError> {
        Ok(())
    }

    /// What `bureau agents check` reports: each thing the agent needs, checked (the
    /// preflight first). Agents that need nothing outside Bureau have only the preflight.
    fn diagnose(&self) -> Vec<doctor::Check> {
        vec![match self.preflight() {
            Ok(()) => doctor::Check::ok("ready", "needs nothing outside Bureau"),
            Err(e) => doctor::Check::failed("ready", e.to_string()),
        }]
    }

    /// What defines the agent, for `run.json` (model, endpoint, parameters, limits, ...);
    /// never a secret. `None` for agents that need no definition beyond their spec.
    fn definition(&self) -> Option<serde_json::Value> {
        None
    }

    /// Share `limit`, the agent's requests-per-minute budget in this process, among its
    /// trials (`bureau run --rpm`). `false`: the agent's model calls are not Bureau's to pace
    /// (no model, or a harness program calling its model itself).
    fn set_rate_limit(&mut self, limit: std::sync::Arc<budget::RateLimit>) -> bool {
        let _ = limit;
        false
    }
}

/// Make an agent from its spec (see [`AgentCatalog`]) with no agents file and no default
/// model, reading the process environment: `oracle`, `null`, `replay:<path>`,
/// `llm:<provider>:<model>`.
pub fn make_agent(spec: &str) -> Result<Box<dyn Agent>, AgentError> {
    AgentCatalog::new().make(spec)
}

/// An agent name as a directory name: letters, digits, `-`, `_`, `.`, `:`, `@` and `+` are
/// kept (so `llm:openai:gpt-4.1-mini` and `codex:gpt-5` are their own folder names), every
/// other character becomes `_`; a name made only of dots becomes `_`. A run records each
/// agent under this name, so the name in `result.json` is always the folder's.
pub fn sanitize_name(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':' | '@' | '+') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.chars().all(|c| c == '.') {
        "_".to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_make_the_named_kinds() {
        assert_eq!(make_agent("oracle").unwrap().name(), "oracle");
        assert_eq!(make_agent("null").unwrap().name(), "null");
        let err = make_agent("gpt-9").err().unwrap().to_string();
        assert!(err.contains("unknown agent `gpt-9`"), "{err}");
        assert!(err.contains("oracle, null, replay:"), "{err}");
        assert!(matches!(
            make_agent("replay:"),
            Err(AgentError::UnknownKind { .. })
        ));
        assert!(matches!(
            make_agent("replay:/does/not/exist.jsonl"),
            Err(AgentError::Replay { .. })
        ));
    }

    #[test]
    fn names_become_safe_directory_names() {
        assert_eq!(sanitize_name("oracle"), "oracle");
        assert_eq!(
            sanitize_name("replay:/tmp/a b/t.jsonl"),
            "replay:_tmp_a_b_t.jsonl"
        );
        assert_eq!(
            sanitize_name("llm:openai:gpt-4.1-mini"),
            "llm:openai:gpt-4.1-mini"
        );
        assert_eq!(sanitize_name("a\\b\n"), "a_b_");
        assert_eq!(sanitize_name(".."), "_");
        assert_eq!(sanitize_name(""), "_");
    }

    #[test]
    fn agents_are_object_safe_and_send() {
        fn is_send<T: Send>(_: &T) {}
        let a: Box<dyn Agent> = make_agent("null").unwrap();
        is_send(&a);
    }
}
