//! The tool session: the agent's handle on the world during one turn, and the trajectory
//! recorder it writes to.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use bureau_core::log::Actor;
use bureau_core::task::Limits;
use bureau_core::tool::{ToolOutcome, ToolSpec};
use bureau_core::trajectory::{Step, StepKind};
use bureau_world::World;
use serde_json::Value;

/// Lock a mutex even if a panicking thread poisoned it: the run loop turns that panic into an
/// `error` trial, so the data is never trusted after it, only read for the record.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The trajectory of one trial attempt: every step in order, optionally streamed to a
/// `trajectory.jsonl` file as it happens (so a crashed attempt keeps what it did).
///
/// Cloning gives another handle on the same trajectory.
#[derive(Clone, Default)]
pub struct Recorder {
    inner: Arc<Mutex<RecorderInner>>,
}

#[derive(Default)]
struct RecorderInner {
    steps: Vec<Step>,
    sink: Option<BufWriter<File>>,
    sink_error: Option<String>,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("steps", &lock(&self.inner).steps.len())
            .finish()
    }
}

impl Recorder {
    /// A recorder that keeps the steps in memory only.
    pub fn new() -> Recorder {
        Recorder::default()
    }

    /// A recorder that also appends each step as one JSON line to `path` (created or
    /// truncated), flushed after every step.
    pub fn to_file(path: &Path) -> std::io::Result<Recorder> {
        let file = File::create(path)?;
        let rec = Recorder::new();
        lock(&rec.inner).sink = Some(BufWriter::new(file));
        Ok(rec)
    }

    /// Append a step.
    pub fn record(&self, step: Step) {
        let mut inner = lock(&self.inner);
        if let Some(sink) = inner.sink.as_mut() {
            let written = serde_json::to_writer(&mut *sink, &step)
                .map_err(|e| e.to_string())
                .and_then(|()| sink.write_all(b"\n").map_err(|e| e.to_string()))
                .and_then(|()| sink.flush().map_err(|e| e.to_string()));
            if let Err(e) = written
                && inner.sink_error.is_none()
            {
                inner.sink_error = Some(e);
            }
        }
        inner.steps.push(step);
    }

    /// Every step so far, in order.
    pub fn steps(&self) -> Vec<Step> {
        lock(&self.inner).steps.clone()
    }

    pub fn len(&self) -> usize {
        lock(&self.inner).steps.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The first error writing the trajectory file, if any (a harness failure: the file on
    /// disk is incomplete).
    pub fn sink_error(&self) -> Option<String> {
        lock(&self.inner).sink_error.clone()
    }
}

/// A turn's limits on the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TurnLimits {
    /// Tool calls allowed in the turn.
    pub max_steps: u32,
    /// Wall-clock time allowed for the turn, checked at every tool call.
    pub wall: Duration,
}

impl From<&Limits> for TurnLimits {
    fn from(l: &Limits) -> Self {
        TurnLimits {
            max_steps: l.max_steps,
            wall: Duration::from_secs(l.wall_seconds),
        }
    }
}

/// A limit ended the turn: the session refuses every further tool call of the turn.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{limit} limit reached: {detail}")]
pub struct LimitReached {
    /// `max_steps` or `wall_seconds`.
    pub limit: String,
    pub detail: String,
}

#[derive(Debug, Default)]
struct SessionState {
    calls: u32,
    stopped: Option<LimitReached>,
    /// A world tool call that did not return by the end of the turn: it still holds the world.
    stalled: Option<String>,
}

/// How long past the end of the turn a world tool call may still run before it is abandoned:
/// a tenth of the turn, between 1 and 10 seconds.
pub fn stall_grace(wall: Duration) -> Duration {
    (wall / 10).clamp(Duration::from_secs(1), Duration::from_secs(10))
}

/// The agent's handle on the world during one turn.
///
/// It shares the world (`Arc<Mutex<World>>`, so an MCP server can serve the same world) and
/// the trajectory [`Recorder`]. Each [`ToolSession::call`] runs the tool as the agent,
/// records a `tool_call` step and counts against the turn's [`TurnLimits`]. The session is
/// `Send + Sync`: calls from several threads are serialised, and the trajectory order is the
/// order in which they changed the world.
#[derive(Debug)]
pub struct ToolSession {
    world: Arc<Mutex<World>>,
    recorder: Recorder,
    turn: u32,
    limits: TurnLimits,
    started: Instant,
    state: Arc<Mutex<SessionState>>,
}

impl ToolSession {
    /// A session for turn `turn` (1-based); its wall clock starts now.
    pub fn new(
        world: Arc<Mutex<World>>,
        recorder: Recorder,
        turn: u32,
        limits: TurnLimits,
    ) -> ToolSession {
        ToolSession {
            world,
            recorder,
            turn,
            limits,
            started: Instant::now(),
            state: Arc::new(Mutex::new(SessionState::default())),
        }
    }

    /// Another handle on this same session: the same world, trajectory, turn, clock, call
    /// count and limit state. An agent that serves the session to another component that
    /// needs to own it (an MCP endpoint takes an `Arc<ToolSession>`) hands it a share.
    pub fn share(&self) -> ToolSession {
        ToolSession {
            world: self.world.clone(),
            recorder: self.recorder.clone(),
            turn: self.turn,
            limits: self.limits,
            started: self.started,
            state: self.state.clone(),
        }
    }

    /// The world this session acts on (an MCP endpoint checks that a session it is handed
    /// belongs to its own trial's world).
    pub fn world(&self) -> &Arc<Mutex<World>> {
        &self.world
    }

    /// The turn this session serves.
    pub fn turn(&self) -> u32 {
        self.turn
    }

    pub fn limits(&self) -> TurnLimits {
        self.limits
    }

    /// Tool calls made so far in this turn.
    pub fn calls_made(&self) -> u32 {
        lock(&self.state).calls
    }

    /// The limit that ended the turn, if one did.
    pub fn limit_reached(&self) -> Option<LimitReached> {
        lock(&self.state).stopped.clone()
    }

    /// Why the turn cannot go on at all: a world tool call blocked past the turn's wall-clock
    /// limit (plus [`stall_grace`]) and was abandoned while it still holds the world. The run
    /// loop must then end the trial as `error` without touching the world again.
    pub fn stalled(&self) -> Option<String> {
        lock(&self.state).stalled.clone()
    }

    /// Wall-clock time left in the turn (zero once it is over). An agent that waits on
    /// something slow (a model API) should give up by then.
    pub fn time_left(&self) -> Duration {
        self.limits.wall.saturating_sub(self.started.elapsed())
    }

    /// Every tool the agent can call: those of the task's apps.
    pub fn tool_specs(&self) -> Vec<ToolSpec> {
        lock(&self.world).offered_tool_specs()
    }

    /// Call a world tool as the agent. A tool error (bad arguments, impossible action) is an
    /// `Ok(ToolOutcome::Error)`; `Err` means a limit ended the turn and the call was not made.
    /// The first refused call records a `limit_reached` step; later ones record nothing.
    ///
    /// The tool runs on its own thread, and the session waits for it until the end of the turn
    /// plus [`stall_grace`]: Bureau's own code blocking (on a file, a lock, a service) cannot
    /// hold the turn past `wall_seconds`. A call abandoned that way ends the turn with a
    /// `wall_seconds` limit step naming the tool, and [`ToolSession::stalled`] says why.
    pub fn call(&self, tool: &str, args: Value) -> Result<ToolOutcome, LimitReached> {
        self.step_bounded(tool, args, |args| {
            let world = self.world.clone();
            let name = tool.to_string();
            let args = args.clone();
            move || lock(&world).call_tool(Actor::Agent, &name, &args)
        })
    }

    /// Call a tool the agent provides itself beside the world's (such as the `llm` agent's
    /// `shell_run`), which acts on the trial's workspace directory: `run` gets the arguments
    /// and the [`Workspace`] (its path, and how to enter it when it is an overlay replica).
    /// It counts against the turn's limits and is recorded as a
    /// `tool_call` step exactly like a world tool call; the world is held for the call, so
    /// the trajectory order stays the order in which calls changed the world. `Err` means a
    /// limit ended the turn and `run` was not called.
    pub fn call_with_workspace(
        &self,
        tool: &str,
        args: Value,
        run: impl FnOnce(&Value, &Workspace<'_>) -> ToolOutcome,
    ) -> Result<ToolOutcome, LimitReached> {
        self.step(tool, args, |args| {
            let world = lock(&self.world);
            let ws = Workspace {
                path: world.workspace(),
                entry: world.workspace_entry(),
            };
            run(args, &ws)
        })
    }

    /// Answer a tool call the agent made but that cannot reach the world, such as one whose
    /// arguments are not JSON: it counts as a step against the turn's limits like any call and
    /// is recorded as a `tool_call` step with the error outcome `message`; the world is not
    /// touched. `Err` means a limit ended the turn first.
    pub fn reject(
        &self,
        tool: &str,
        args: Value,
        message: impl Into<String>,
    ) -> Result<ToolOutcome, LimitReached> {
        let message = message.into();
        self.step(tool, args, |_| ToolOutcome::Error { message })
    }

    /// End the turn from the agent's side because of a limit the agent enforces itself (tokens,
    /// cost, ...): records a `limit_reached` step (unless a limit already ended the turn) and
    /// refuses every further call of the turn. Returns the limit in force.
    pub fn stop(&self, limit: impl Into<String>, detail: impl Into<String>) -> LimitReached {
        let mut state = lock(&self.state);
        if let Some(stopped) = &state.stopped {
            return stopped.clone();
        }
        let reached = LimitReached {
            limit: limit.into(),
            detail: detail.into(),
        };
        self.recorder.record(Step {
            turn: self.turn,
            kind: StepKind::LimitReached {
                limit: reached.limit.clone(),
                detail: reached.detail.clone(),
            },
        });
        state.stopped = Some(reached.clone());
        reached
    }

    /// Record a step of this turn that is neither a tool call nor a limit (a model call, ...).
    pub fn record(&self, kind: StepKind) {
        self.recorder.record(Step {
            turn: self.turn,
            kind,
        });
    }

    fn step(
        &self,
        tool: &str,
        args: Value,
        run: impl FnOnce(&Value) -> ToolOutcome,
    ) -> Result<ToolOutcome, LimitReached> {
        self.step_inner(tool, args, |args, _| Ok(run(args)))
    }

    /// [`Self::step`] with the call made on its own thread and waited for until the end of the
    /// turn plus [`stall_grace`].
    fn step_bounded<F>(
        &self,
        tool: &str,
        args: Value,
        make: impl FnOnce(&Value) -> F,
    ) -> Result<ToolOutcome, LimitReached>
    where
        F: FnOnce() -> ToolOutcome + Send + 'static,
    {
        self.step_inner(tool, args, |args, state| {
            let job = make(args);
            let (tx, rx) = std::sync::mpsc::sync_channel(1);
            // The caller's CPU permit (`bureau_core::cpu`) goes with the call: the tool thread
            // works for the caller, which only waits for it; it comes back with the answer, or
            // stays with an abandoned call until it ends.
            let (loan, lent) = bureau_core::cpu::lend();
            let handle = match std::thread::Builder::new()
                .name(format!("tool {tool}"))
                .spawn(move || {
                    let _ = tx.send(lent.carry(job));
                }) {
                Ok(h) => h,
                Err(e) => {
                    loan.reclaim();
                    return Ok(ToolOutcome::Error {
                        message: format!("`{tool}` could not be started: {e}"),
                    });
                }
            };
            let grace = stall_grace(self.limits.wall);
            let answer = rx.recv_timeout(self.time_left() + grace);
            loan.reclaim();
            match answer {
                Ok(outcome) => Ok(outcome),
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    // The tool panicked: carry its panic to the caller as before.
                    match handle.join() {
                        Err(payload) => std::panic::resume_unwind(payload),
                        Ok(()) => Ok(ToolOutcome::Error {
                            message: format!("`{tool}` ended without an answer"),
                        }),
                    }
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    let detail = format!(
                        "{} s per turn allowed; `{tool}` did not return within it (plus {} s of grace) and was abandoned: the trial cannot go on",
                        self.limits.wall.as_secs(),
                        grace.as_secs()
                    );
                    state.stalled = Some(format!(
                        "the tool call `{tool}` blocked past the turn's wall_seconds limit of {} s (plus {} s of grace) and was abandoned",
                        self.limits.wall.as_secs(),
                        grace.as_secs()
                    ));
                    Err(LimitReached {
                        limit: "wall_seconds".into(),
                        detail,
                    })
                }
            }
        })
    }

    fn step_inner(
        &self,
        tool: &str,
        args: Value,
        run: impl FnOnce(&Value, &mut SessionState) -> Result<ToolOutcome, LimitReached>,
    ) -> Result<ToolOutcome, LimitReached> {
        let mut state = lock(&self.state);
        if let Some(stopped) = &state.stopped {
            return Err(stopped.clone());
        }
        let reached = if state.calls >= self.limits.max_steps {
            Some(LimitReached {
                limit: "max_steps".into(),
                detail: format!(
                    "{} tool calls per turn allowed; `{tool}` was refused",
                    self.limits.max_steps
                ),
            })
        } else if self.started.elapsed() >= self.limits.wall {
            Some(LimitReached {
                limit: "wall_seconds".into(),
                detail: format!(
                    "{} s per turn allowed; `{tool}` was refused",
                    self.limits.wall.as_secs()
                ),
            })
        } else {
            None
        };
        if let Some(reached) = reached {
            self.recorder.record(Step {
                turn: self.turn,
                kind: StepKind::LimitReached {
                    limit: reached.limit.clone(),
                    detail: reached.detail.clone(),
                },
            });
            state.stopped = Some(reached.clone());
            return Err(reached);
        }
        state.calls += 1;
        // The state lock is held across the call so that concurrent calls are recorded in
        // the order they reached the world.
        let outcome = match run(&args, &mut state) {
            Ok(o) => o,
            Err(reached) => {
                self.recorder.record(Step {
                    turn: self.turn,
                    kind: StepKind::LimitReached {
                        limit: reached.limit.clone(),
                        detail: reached.detail.clone(),
                    },
                });
                state.stopped = Some(reached.clone());
                return Err(reached);
            }
        };
        self.recorder.record(Step {
            turn: self.turn,
            kind: StepKind::ToolCall {
                tool: tool.to_string(),
                args,
                // Media bytes stay out of the trajectory: the world keeps them in its blob
                // store under the digest the step records.
                outcome: outcome.without_media_data(),
            },
        });
        Ok(outcome)
    }

    /// Record text the agent said during the turn.
    pub fn say(&self, text: impl Into<String>) {
        self.recorder.record(Step {
            turn: self.turn,
            kind: StepKind::Message { text: text.into() },
        });
    }

    /// Record anything else the agent wants kept in the trajectory (model usage, raw
    /// requests, ...).
    pub fn note(&self, data: Value) {
        self.recorder.record(Step {
            turn: self.turn,
            kind: StepKind::Note { data },
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn session_and_recorder_are_thread_safe() {
        assert_send_sync::<ToolSession>();
        assert_send_sync::<Recorder>();
    }

    #[test]
    fn recorder_streams_one_json_line_per_step() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trajectory.jsonl");
        let rec = Recorder::to_file(&path).unwrap();
        rec.record(Step {
            turn: 1,
            kind: StepKind::Message {
                text: "hello".into(),
            },
        });
        rec.record(Step {
            turn: 2,
            kind: StepKind::Note {
                data: serde_json::json!({"k": 1}),
            },
        });
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        let back: Step = serde_json::from_str(lines[1]).unwrap();
        assert_eq!(back, rec.steps()[1]);
        assert!(rec.sink_error().is_none());
    }

    #[test]
    fn turn_limits_come_from_the_task() {
        let l = TurnLimits::from(&Limits {
            max_steps: 7,
            wall_seconds: 30,
        });
        assert_eq!(
            l,
            TurnLimits {
                max_steps: 7,
                wall: Duration::from_secs(30)
            }
        );
    }
}

/// The trial's workspace, for a tool that runs processes in it
/// ([`ToolSession::call_with_workspace`]).
#[derive(Debug, Clone, Copy)]
pub struct Workspace<'a> {
    /// The workspace directory as Bureau sees it (`World::workspace`).
    pub path: &'a Path,
    /// Set when the workspace is an overlay replica: a process must enter the replica's
    /// namespaces (`NsEntry::enter`) rather than use `path` as its working directory, whose
    /// `getcwd()` would name the wrong directory (docs/replica.md).
    pub entry: Option<&'a Arc<bureau_replica::NsEntry>>,
}
