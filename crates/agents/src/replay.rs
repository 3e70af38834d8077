//! The `replay:<path>` agent: re-issues the steps of a recorded `trajectory.jsonl` turn by
//! turn — its tool calls (through the real tools, so outcomes are recomputed) and its
//! messages. Prompts, limit records and notes are not replayed: the run loop and the session
//! make their own.
//!
//! `<path>` is a `trajectory.jsonl` file or a trial directory holding one. Replaying the
//! trajectory of a trial on the same task reproduces its world and its verdicts.
//!
//! A task's reference solution replays too: `<path>` may be a `solution/` directory (its
//! `<turn>.jsonl` files) or one `<turn>.jsonl` file of it, whose lines are the oracle's
//! `{"tool": ..., "args": ...}` calls (a file not named by a turn number is turn 1).
//!
//! A trajectory with feedback rounds (`feedback` steps) is replayed round by round: the
//! actions after a turn's r-th `feedback` step are re-issued in feedback round r of that turn
//! (when the replay run gives one).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bureau_core::task::Task;
use bureau_core::trajectory::{Step, StepKind};
use serde_json::Value;

use crate::{Agent, AgentError, ToolSession, TurnInput, TurnOutput};

#[derive(Debug, Clone, PartialEq)]
enum Action {
    Call { tool: String, args: Value },
    Say(String),
}

#[derive(Debug, Clone)]
pub struct ReplayAgent {
    path: PathBuf,
    turns: BTreeMap<u32, Vec<Action>>,
    /// Actions of feedback rounds, by (turn, round ≥ 1).
    rounds: BTreeMap<(u32, u32), Vec<Action>>,
}

impl ReplayAgent {
    /// Read the recorded trajectory at `path` (a file, or a directory with `trajectory.jsonl`),
    /// or a solution (a `solution/` directory of `<turn>.jsonl` files, or one such file).
    pub fn load(path: &Path) -> Result<ReplayAgent, AgentError> {
        if path.is_dir() && !path.join("trajectory.jsonl").is_file() {
            return Self::load_solution_dir(path);
        }
        let file = if path.is_dir() {
            path.join("trajectory.jsonl")
        } else {
            path.to_path_buf()
        };
        let shown = file.display().to_string();
        let text = std::fs::read_to_string(&file).map_err(|e| AgentError::Replay {
            path: shown.clone(),
            line: 0,
            message: format!("cannot read the trajectory: {e}"),
            hint: "give `replay:<path>` the trajectory.jsonl of a trial, or its trial directory"
                .into(),
        })?;
        if is_solution(&text) {
            let turn = turn_of(&file).unwrap_or(1);
            let calls = solution_calls(&text, &shown)?;
            return Ok(ReplayAgent {
                path: file,
                turns: BTreeMap::from([(turn, calls)]),
                rounds: BTreeMap::new(),
            });
        }
        let mut turns: BTreeMap<u32, Vec<Action>> = BTreeMap::new();
        let mut rounds: BTreeMap<(u32, u32), Vec<Action>> = BTreeMap::new();
        let mut round_of: BTreeMap<u32, u32> = BTreeMap::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let step: Step = serde_json::from_str(line).map_err(|e| AgentError::Replay {
                path: shown.clone(),
                line: i + 1,
                message: format!("not a trajectory step: {e}"),
                hint: "each line is one step as Bureau writes it in trajectory.jsonl".into(),
            })?;
            let action = match step.kind {
                StepKind::ToolCall { tool, args, .. } => Action::Call { tool, args },
                StepKind::Message { text } => Action::Say(text),
                StepKind::Feedback { round, .. } => {
                    round_of.insert(step.turn, round);
                    continue;
                }
                StepKind::Prompt { .. }
                | StepKind::LimitReached { .. }
                | StepKind::Note { .. }
                | StepKind::ModelCall(_) => {
                    continue;
                }
            };
            match round_of.get(&step.turn).copied().unwrap_or(0) {
                0 => turns.entry(step.turn).or_default().push(action),
                r => rounds.entry((step.turn, r)).or_default().push(action),
            }
        }
        Ok(ReplayAgent {
            path: file,
            turns,
            rounds,
        })
    }

    /// A `solution/` directory: `<turn>.jsonl` files of `{"tool","args"}` lines.
    fn load_solution_dir(dir: &Path) -> Result<ReplayAgent, AgentError> {
        let shown = dir.display().to_string();
        let entries = std::fs::read_dir(dir).map_err(|e| AgentError::Replay {
            path: shown.clone(),
            line: 0,
            message: format!("cannot list the directory: {e}"),
            hint: "give `replay:<path>` a trajectory.jsonl, a trial directory, or a solution/ directory".into(),
        })?;
        let mut turns: BTreeMap<u32, Vec<Action>> = BTreeMap::new();
        for entry in entries.flatten() {
            let file = entry.path();
            if let Some(turn) = turn_of(&file) {
                turns.insert(turn, read_solution_file(&file)?);
            }
        }
        if turns.is_empty() {
            return Err(AgentError::Replay {
                path: shown,
                line: 0,
                message: "holds neither a trajectory.jsonl nor <turn>.jsonl solution files".into(),
                hint: "give `replay:<path>` a trajectory.jsonl, a trial directory, or a solution/ directory".into(),
            });
        }
        Ok(ReplayAgent {
            path: dir.to_path_buf(),
            turns,
            rounds: BTreeMap::new(),
        })
    }

    /// The trajectory file being replayed.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Number of tool calls recorded for `turn`.
    pub fn calls_in_turn(&self, turn: u32) -> usize {
        self.turns
            .get(&turn)
            .map(|a| {
                a.iter()
                    .filter(|a| matches!(a, Action::Call { .. }))
                    .count()
            })
            .unwrap_or(0)
    }
}

/// The turn a solution file is for: `<n>.jsonl` with n ≥ 1.
fn turn_of(file: &Path) -> Option<u32> {
    if file.extension()? != "jsonl" {
        return None;
    }
    file.file_stem()?.to_str()?.parse().ok().filter(|n| *n >= 1)
}

/// Whether `text` is in the solution format: its first non-empty line is an object with a
/// `tool` and no trajectory `type`.
fn is_solution(text: &str) -> bool {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .and_then(|first| serde_json::from_str::<Value>(first).ok())
        .is_some_and(|v| v.get("tool").is_some_and(Value::is_string) && v.get("type").is_none())
}

/// The tool calls of the solution file `file`, one `{"tool": name, "args": {...}}` per line.
fn read_solution_file(file: &Path) -> Result<Vec<Action>, AgentError> {
    let shown = file.display().to_string();
    let text = std::fs::read_to_string(file).map_err(|e| AgentError::Replay {
        path: shown.clone(),
        line: 0,
        message: format!("cannot read the solution file: {e}"),
        hint: "make it readable".into(),
    })?;
    solution_calls(&text, &shown)
}

/// The tool calls of a solution file's `text` (`shown` names it in errors).
fn solution_calls(text: &str, shown: &str) -> Result<Vec<Action>, AgentError> {
    let mut calls = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let call: bureau_core::tool::ToolCall =
            serde_json::from_str(line).map_err(|e| AgentError::Replay {
                path: shown.to_string(),
                line: i + 1,
                message: format!("not a solution call: {e}"),
                hint:
                    "each line is {\"tool\": \"<name>\", \"args\": {...}} as in a task's solution/"
                        .into(),
            })?;
        calls.push(Action::Call {
            tool: call.tool,
            args: call.args,
        });
    }
    Ok(calls)
}

impl Agent for ReplayAgent {
    fn name(&self) -> String {
        format!("replay:{}", self.path.display())
    }

    /// What is replayed: the file's path (the name, sanitised into a folder name, may no
    /// longer spell it).
    fn definition(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({"kind": "replay", "path": self.path.display().to_string()}))
    }

    fn start_trial(&mut self, _task: &Task) -> Result<(), AgentError> {
        Ok(())
    }

    fn run_turn(
        &mut self,
        turn: &TurnInput,
        tools: &ToolSession,
    ) -> Result<TurnOutput, AgentError> {
        let actions = match turn.round {
            0 => self.turns.get(&turn.index),
            r => self.rounds.get(&(turn.index, r)),
        };
        for action in actions.map(|a| a.as_slice()).unwrap_or(&[]) {
            match action {
                Action::Call { tool, args } => {
                    if tools.call(tool, args.clone()).is_err() {
                        break;
                    }
                }
                Action::Say(text) => tools.say(text.clone()),
            }
        }
        Ok(TurnOutput::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_tool_calls_and_messages_by_turn() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("trajectory.jsonl");
        std::fs::write(
            &p,
            concat!(
                r#"{"turn":1,"type":"prompt","time":"2026-03-02T09:00:00+00:00","text":"hi"}"#, "\n",
                r#"{"turn":1,"type":"tool_call","tool":"files_read","args":{"path":"a.txt"},"outcome":"ok","value":{}}"#, "\n",
                r#"{"turn":1,"type":"message","text":"done"}"#, "\n",
                "\n",
                r#"{"turn":2,"type":"limit_reached","limit":"max_steps","detail":"x"}"#, "\n",
                r#"{"turn":2,"type":"tool_call","tool":"files_write","args":{"path":"b","content":"c"},"outcome":"error","message":"no"}"#, "\n",
            ),
        )
        .unwrap();
        // A trial directory works as well as the file.
        let agent = ReplayAgent::load(dir.path()).unwrap();
        assert_eq!(agent.calls_in_turn(1), 1);
        assert_eq!(agent.calls_in_turn(2), 1);
        assert_eq!(agent.calls_in_turn(3), 0);
        assert_eq!(agent.turns[&1][1], Action::Say("done".into()));
        assert_eq!(agent.path(), p.as_path());
    }

    #[test]
    fn a_solution_directory_or_file_replays_as_tool_calls() {
        let dir = tempfile::tempdir().unwrap();
        let sol = dir.path().join("solution");
        std::fs::create_dir(&sol).unwrap();
        std::fs::write(
            sol.join("1.jsonl"),
            concat!(
                r#"{"tool":"files_write","args":{"path":"memo.md","content":"x"}}"#,
                "\n",
                r#"{"tool":"mail_send","args":{"to":["bob@corp.test"],"subject":"s","body":"b"}}"#,
                "\n",
            ),
        )
        .unwrap();
        std::fs::write(
            sol.join("2.jsonl"),
            r#"{"tool":"files_read","args":{"path":"memo.md"}}"#,
        )
        .unwrap();
        std::fs::write(sol.join("notes.txt"), "not a turn").unwrap();
        let agent = ReplayAgent::load(&sol).unwrap();
        assert_eq!((agent.calls_in_turn(1), agent.calls_in_turn(2)), (2, 1));
        let one = ReplayAgent::load(&sol.join("2.jsonl")).unwrap();
        assert_eq!((one.calls_in_turn(1), one.calls_in_turn(2)), (0, 1));
        assert_eq!(
            one.turns[&2][0],
            Action::Call {
                tool: "files_read".into(),
                args: serde_json::json!({"path": "memo.md"})
            }
        );
        std::fs::write(
            sol.join("1.jsonl"),
            "{\"tool\":\"files_read\",\"args\":{}}\n{\"tool\":3}\n",
        )
        .unwrap();
        let err = ReplayAgent::load(&sol).unwrap_err().to_string();
        assert!(err.contains("1.jsonl:2: not a solution call"), "{err}");
    }

    #[test]
    fn a_bad_line_is_reported_with_its_number() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        std::fs::write(
            &p,
            "{\"turn\":1,\"type\":\"message\",\"text\":\"a\"}\nnot json\n",
        )
        .unwrap();
        let err = ReplayAgent::load(&p).unwrap_err().to_string();
        assert!(err.contains("t.jsonl:2: not a trajectory step"), "{err}");
    }
}
