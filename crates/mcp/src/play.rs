//! [`Play`]: a task played by hand over MCP (`bureau mcp --task <dir>`).
//!
//! The world is built, turn 1 begins, and an MCP client gets the world's tools plus three
//! play tools: `task_prompt` (the current turn's prompt and world time), `task_next_turn`
//! (score the current turn's rubric items, snapshot, begin the next turn) and `task_finish`
//! (score what is left, including the final items, and return every verdict and the trial
//! score). It is the run loop with a person — or any MCP client — deciding when a turn ends.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use bureau_agents::{Recorder, ToolSession, TurnLimits};
use bureau_check::CheckProgram;
use bureau_check::eval::{CheckLimits, evaluate};
use bureau_check::load_checks;
use bureau_check::metrics::task_trial_score;
use bureau_core::result::{TrialScore, TrialStatus};
use bureau_core::task::Task;
use bureau_core::tool::{ToolAnnotations, ToolOutcome, ToolSpec};
use bureau_core::trajectory::{Step, StepKind};
use bureau_core::verdict::{TurnRef, Verdict, VerdictStatus};
use bureau_world::World;
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::McpError;
use crate::office::{ExtraTools, NO_TURN, Office};

/// The play tools served beside the world's tools.
pub const PLAY_TOOLS: &[&str] = &["task_prompt", "task_next_turn", "task_finish"];

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// How a played task ended.
#[derive(Debug, Clone, PartialEq)]
pub struct PlayOutcome {
    /// `passed` (every item passed, no red line crossed), `failed`, or `error` when a check
    /// broke (the score is then not trustworthy).
    pub status: TrialStatus,
    pub score: TrialScore,
    /// Every item's verdict: turn by turn in rubric order, then the final items.
    pub verdicts: Vec<Verdict>,
}

/// A task being played by hand.
///
/// The files of the play are under [`Play::root`]: `world/` (the world, its workspace and
/// snapshot blobs), `trajectory.jsonl`, `snapshots/turn-<n>.json` and, once finished,
/// `verdicts.json`.
pub struct Play {
    office: Office,
    state: Arc<PlayState>,
    root: PathBuf,
    _temp: Option<TempDir>,
}

impl std::fmt::Debug for Play {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Play")
            .field("task", &self.state.task.id)
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

impl Play {
    /// Build `task`'s world under `root` (a new or empty directory; `None`: a temporary
    /// directory removed when the play is dropped) and begin turn 1.
    pub fn start(task: Task, root: Option<&Path>) -> Result<Play, McpError> {
        let program = load_checks(&task)?;
        let (root, temp) = match root {
            Some(r) => (r.to_path_buf(), None),
            None => {
                let t = tempfile::Builder::new()
                    .prefix("bureau-play-")
                    .tempdir()
                    .map_err(|e| McpError::Play(format!("creating a temporary directory: {e}")))?;
                (t.path().to_path_buf(), Some(t))
            }
        };
        if root.exists()
            && std::fs::read_dir(&root)
                .map(|mut d| d.next().is_some())
                .unwrap_or(true)
        {
            return Err(McpError::Play(format!(
                "{} is not an empty directory — give a new or empty directory for the play's world",
                root.display()
            )));
        }
        let world = World::build(&task, &root.join("world"))
            .map_err(|e| McpError::Play(format!("building the world: {e}")))?;
        let trajectory = root.join("trajectory.jsonl");
        let recorder = Recorder::to_file(&trajectory)
            .map_err(|e| McpError::Play(format!("{}: {e}", trajectory.display())))?;
        let world = Arc::new(Mutex::new(world));
        let state = Arc::new(PlayState {
            task,
            program,
            recorder,
            root: root.clone(),
            progress: Mutex::new(Progress::default()),
        });
        let office = Office::with_extra(world, state.clone());
        state
            .begin(&office, &mut lock(&state.progress), 0)
            .map_err(McpError::Play)?;
        Ok(Play {
            office,
            state,
            root,
            _temp: temp,
        })
    }

    /// Where the play's files are.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The office served: the world's tools through the current turn's session, and the play
    /// tools.
    pub fn office(&self) -> &Office {
        &self.office
    }

    /// The trajectory so far.
    pub fn recorder(&self) -> &Recorder {
        &self.state.recorder
    }

    /// The current turn (1-based), or `None` once the task is finished.
    pub fn turn(&self) -> Option<u32> {
        let p = lock(&self.state.progress);
        match p.finished {
            Some(_) => None,
            None => self.state.task.turns.get(p.index).map(|t| t.index),
        }
    }

    /// How the task ended, once `task_finish` was called.
    pub fn outcome(&self) -> Option<PlayOutcome> {
        lock(&self.state.progress).finished.clone()
    }

    /// Serve the play over stdin/stdout until the client closes stdin. Blocks.
    pub fn serve_stdio(&self) -> Result<(), McpError> {
        self.office.serve_stdio()
    }

    /// Serve the play over one byte stream pair until the reader ends.
    pub async fn serve_io<R, W>(&self, reader: R, writer: W) -> Result<(), McpError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        self.office.serve_io(reader, writer).await
    }
}

/// Why a play tool did not do what it was asked.
enum Failure {
    /// Not now (the last turn has no next turn): nothing changed.
    Refused(String),
    /// A harness failure: the play cannot go on.
    Broken(String),
}

struct PlayState {
    task: Task,
    program: Option<CheckProgram>,
    recorder: Recorder,
    root: PathBuf,
    progress: Mutex<Progress>,
}

#[derive(Default)]
struct Progress {
    /// Index of the current turn in `task.turns`.
    index: usize,
    verdicts: Vec<Verdict>,
    finished: Option<PlayOutcome>,
    /// A harness failure ended the play (a task event could not be applied, ...).
    broken: Option<String>,
}

impl PlayState {
    fn limits(&self) -> CheckLimits {
        CheckLimits::default()
    }

    /// Begin turn `index` (0-based): the clock and the turn's events, the prompt in the
    /// trajectory, a fresh session.
    fn begin(&self, office: &Office, p: &mut Progress, index: usize) -> Result<(), String> {
        let turn = self
            .task
            .turns
            .get(index)
            .ok_or_else(|| format!("the task has no turn {}", index + 1))?;
        lock(office.world())
            .begin_turn(turn)
            .map_err(|e| format!("turn {}: applying the task's events: {e}", turn.index))?;
        self.recorder.record(Step {
            turn: turn.index,
            kind: StepKind::Prompt {
                time: turn.at,
                text: turn.prompt.clone(),
            },
        });
        let session = ToolSession::new(
            office.world().clone(),
            self.recorder.clone(),
            turn.index,
            TurnLimits::from(&self.task.limits),
        );
        office
            .set_session(Some(Arc::new(session)))
            .map_err(|e| e.to_string())?;
        p.index = index;
        Ok(())
    }

    /// End the current turn: no more calls, a snapshot, its items scored.
    fn end_turn(&self, office: &Office, p: &mut Progress, why: &str) -> Result<(), String> {
        office.set_idle(format!("{NO_TURN}: {why}"));
        let n = self.task.turns[p.index].index;
        let world = lock(office.world());
        let snap = world
            .snapshot()
            .map_err(|e| format!("turn {n}: snapshot: {e}"))?;
        let dir = self.root.join("snapshots");
        write_json(&dir.join(format!("turn-{n}.json")), &snap)?;
        p.verdicts.extend(evaluate(
            &self.task,
            self.program.as_ref(),
            &world,
            &self.recorder.steps(),
            TurnRef::Turn(n),
            &self.limits(),
        ));
        Ok(())
    }

    fn prompt(&self, p: &Progress) -> Value {
        let turn = &self.task.turns[p.index];
        json!({
            "turn": turn.index,
            "turns": self.task.turns.len(),
            "time": turn.at.to_rfc3339(),
            "prompt": turn.prompt,
        })
    }

    fn next_turn(&self, office: &Office, p: &mut Progress) -> Result<Value, Failure> {
        let n = self.task.turns[p.index].index;
        if p.index + 1 >= self.task.turns.len() {
            return Err(Failure::Refused(format!(
                "turn {n} is the last turn — call task_finish to end the task and see the score"
            )));
        }
        self.end_turn(
            office,
            p,
            &format!("turn {n} is over; the next one is starting"),
        )
        .map_err(Failure::Broken)?;
        self.begin(office, p, p.index + 1)
            .map_err(Failure::Broken)?;
        let mut next = self.prompt(p);
        next["scored_items_of_previous_turn"] = json!(
            p.verdicts
                .iter()
                .filter(|v| v.turn == TurnRef::Turn(n))
                .count()
        );
        Ok(next)
    }

    fn finish(&self, office: &Office, p: &mut Progress) -> Result<PlayOutcome, String> {
        let n = self.task.turns[p.index].index;
        self.end_turn(
            office,
            p,
            "the task is finished — task_finish returned its score",
        )?;
        // Items of turns never reached: failed, never scored against a world they never saw.
        for turn in &self.task.turns[p.index + 1..] {
            for item in self
                .task
                .rubric
                .iter()
                .filter(|i| i.turn == TurnRef::Turn(turn.index))
            {
                p.verdicts.push(Verdict {
                    id: item.id.clone(),
                    turn: item.turn,
                    status: VerdictStatus::Failed,
                    weight: item.weight,
                    kind: item.kind,
                    red_line: item.red_line,
                    categories: item.categories.clone(),
                    detail: Some(format!(
                        "turn {} was not played: task_finish was called during turn {n}",
                        turn.index
                    )),
                    judge: None,
                });
            }
        }
        {
            let world = lock(office.world());
            p.verdicts.extend(evaluate(
                &self.task,
                self.program.as_ref(),
                &world,
                &self.recorder.steps(),
                TurnRef::Final,
                &self.limits(),
            ));
        }
        // A play is a person's one attempt: agent `human`, epoch 1.
        let entries = bureau_core::verdict::verdict_entries(&self.task, "human", 1, &p.verdicts);
        write_json(&self.root.join("verdicts.json"), &entries)?;
        let score = task_trial_score(&self.task, &p.verdicts);
        let status = if p.verdicts.iter().any(|v| v.status == VerdictStatus::Error) {
            TrialStatus::Error
        } else if score.strict {
            TrialStatus::Passed
        } else {
            TrialStatus::Failed
        };
        Ok(PlayOutcome {
            status,
            score,
            verdicts: p.verdicts.clone(),
        })
    }
}

fn outcome_json(o: &PlayOutcome) -> Value {
    json!({
        "status": o.status.as_str(),
        "score": o.score,
        "verdicts": o.verdicts,
    })
}

fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> Result<(), String> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    let mut bytes = serde_json::to_vec_pretty(value).map_err(|e| e.to_string())?;
    bytes.push(b'\n');
    std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))
}

fn no_args_schema() -> Value {
    json!({"type": "object", "properties": {}, "additionalProperties": false})
}

impl ExtraTools for PlayState {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![
            ToolSpec {
                name: "task_prompt".into(),
                description: "The current turn of the task: its number, the world time and the \
                              prompt (what you are asked to do now)."
                    .into(),
                input_schema: no_args_schema(),
                annotations: Some(ToolAnnotations {
                    read_only_hint: true,
                    destructive_hint: false,
                    idempotent_hint: true,
                    open_world_hint: false,
                }),
            },
            ToolSpec {
                name: "task_next_turn".into(),
                description: "End the current turn (its rubric items are scored now) and begin \
                              the next one: the world clock moves on, the task's events for it \
                              happen, and its prompt is returned."
                    .into(),
                input_schema: no_args_schema(),
                annotations: Some(ToolAnnotations {
                    read_only_hint: false,
                    destructive_hint: true,
                    idempotent_hint: false,
                    open_world_hint: false,
                }),
            },
            ToolSpec {
                name: "task_finish".into(),
                description: "End the task: score the items that are left, including the \
                              final ones, and return every verdict and the trial score. World \
                              tools stop working after this."
                    .into(),
                input_schema: no_args_schema(),
                annotations: Some(ToolAnnotations {
                    read_only_hint: false,
                    destructive_hint: true,
                    idempotent_hint: false,
                    open_world_hint: false,
                }),
            },
        ]
    }

    fn call(&self, office: &Office, tool: &str, args: &Value) -> Option<ToolOutcome> {
        if !PLAY_TOOLS.contains(&tool) {
            return None;
        }
        let error = |message: String| Some(ToolOutcome::Error { message });
        if args.as_object().is_none_or(|a| !a.is_empty()) {
            return error(format!("{tool} takes no arguments; call it with {{}}"));
        }
        let mut p = lock(&self.progress);
        if let Some(why) = &p.broken {
            return error(format!("the play ended with an error: {why}"));
        }
        if let Some(done) = &p.finished {
            return match tool {
                "task_finish" => Some(ToolOutcome::ok(outcome_json(done))),
                _ => error(
                    "the task is finished — task_finish returned its score; start \
                     `bureau mcp --task` again to play it anew"
                        .into(),
                ),
            };
        }
        let result = match tool {
            "task_prompt" => Ok(self.prompt(&p)),
            "task_next_turn" => self.next_turn(office, &mut p),
            _ => self
                .finish(office, &mut p)
                .map(|o| {
                    let value = outcome_json(&o);
                    p.finished = Some(o);
                    value
                })
                .map_err(Failure::Broken),
        };
        match result {
            Ok(value) => Some(ToolOutcome::ok(value)),
            Err(Failure::Refused(message)) => error(message),
            Err(Failure::Broken(message)) => {
                office.set_idle(format!(
                    "{NO_TURN}: the play ended with an error: {message}"
                ));
                p.broken = Some(message.clone());
                error(format!("the play ended with an error: {message}"))
            }
        }
    }
}
