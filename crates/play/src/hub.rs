//! The state the web app and the run loop share, and [`HumanAgent`], the agent that hands
//! each turn's [`ToolSession`] to the web app and waits for the person to end the day.

use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use bureau_agents::{Agent, AgentError, ToolSession, TurnInput, TurnOutput};
use bureau_core::task::Task;
use bureau_core::tool::{ToolOutcome, ToolSpec};
use serde::Serialize;
use serde_json::Value;

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// What the page says about the task (never its checks, rubric or solution).
#[derive(Debug, Clone, Serialize, Default)]
pub struct TaskInfo {
    pub id: String,
    pub title: String,
    pub turns: usize,
    pub user_name: String,
    pub user_email: String,
    #[serde(skip)]
    pub timezone: Option<chrono_tz::Tz>,
}

/// The turn in progress, as the page shows it.
#[derive(Debug, Clone, Serialize)]
pub struct TurnView {
    pub index: u32,
    pub total: usize,
    /// What the agent is told: the office time line and the prompt, or a feedback message.
    pub prompt: String,
    pub office_time: String,
    /// The office date, `YYYY-MM-DD` (the calendar's default day).
    pub date: String,
    pub round: u32,
    pub last: bool,
}

/// One call the person made, with its full outcome (media bytes included, for the page).
#[derive(Debug, Clone)]
pub struct Called {
    pub seq: u64,
    pub turn: u32,
    pub tool: String,
    pub args: Value,
    pub outcome: ToolOutcome,
}

/// Where the play is.
#[derive(Debug, Clone, PartialEq)]
pub enum Phase {
    /// The world is being built (or the run loop is between turns).
    Waiting,
    /// A turn is open: the person acts.
    Turn,
    /// The trial is written: the final page.
    Finished,
    /// The run failed or was interrupted; the message says why.
    Failed(String),
}

/// The score page, read back from the trial's `result.json` and `verdicts.json`.
#[derive(Debug, Clone, Serialize)]
pub struct FinalView {
    pub status: String,
    pub strict: bool,
    pub weighted: Option<f64>,
    pub items_passed: u64,
    pub items_total: u64,
    pub error: Option<String>,
    pub verdicts: Vec<Value>,
    pub trial_dir: String,
    pub run_dir: String,
    pub tool_calls: u64,
    pub wall_seconds: f64,
}

#[derive(Debug)]
pub struct HubState {
    pub task: TaskInfo,
    pub phase: Phase,
    pub session: Option<ToolSession>,
    pub turn: Option<TurnView>,
    /// The person asked to end the turn, with an optional note.
    pub end: Option<String>,
    /// Tool calls running now: a turn ends only when none is.
    pub in_flight: u32,
    /// The last call of each tool (what the service pages show).
    pub results: BTreeMap<String, Called>,
    /// The last call of all.
    pub last: Option<Called>,
    /// Every call of the trial so far, in order, without results (the home page's list).
    pub history: Vec<Value>,
    /// A message for the next page (a form that was refused, ...).
    pub notice: Option<String>,
    pub seq: u64,
    pub specs: Vec<ToolSpec>,
    pub final_view: Option<FinalView>,
    /// The person clicked "Close" (or the server was told to stop).
    pub closed: bool,
}

/// The shared state and its change signal.
#[derive(Debug)]
pub struct Hub {
    pub state: Mutex<HubState>,
    pub changed: Condvar,
}

impl Hub {
    pub fn new() -> Hub {
        Hub {
            state: Mutex::new(HubState {
                task: TaskInfo::default(),
                phase: Phase::Waiting,
                session: None,
                turn: None,
                end: None,
                in_flight: 0,
                results: BTreeMap::new(),
                last: None,
                history: Vec::new(),
                notice: None,
                seq: 0,
                specs: Vec::new(),
                final_view: None,
                closed: false,
            }),
            changed: Condvar::new(),
        }
    }

    pub fn lock(&self) -> MutexGuard<'_, HubState> {
        lock(&self.state)
    }

    pub fn notify(&self) {
        self.changed.notify_all();
    }

    /// Call `tool` through the open turn's session, as the agent. `Err` when no turn is open
    /// (or it is ending) — nothing was called; a limit that refuses the call is an `Ok` error
    /// outcome, recorded like any other.
    pub fn call(&self, tool: &str, args: Value) -> Result<ToolOutcome, String> {
        let session = {
            let mut s = self.lock();
            if s.phase != Phase::Turn || s.end.is_some() {
                return Err("no turn is open: wait for the next turn to begin".into());
            }
            let Some(session) = s.session.as_ref().map(ToolSession::share) else {
                return Err("no turn is open: wait for the next turn to begin".into());
            };
            s.in_flight += 1;
            session
        };
        let outcome = match session.call(tool, args.clone()) {
            Ok(o) => o,
            Err(limit) => ToolOutcome::Error {
                message: format!("{limit} — end your day to go on"),
            },
        };
        let mut s = self.lock();
        s.in_flight = s.in_flight.saturating_sub(1);
        s.seq += 1;
        let called = Called {
            seq: s.seq,
            turn: session.turn(),
            tool: tool.to_string(),
            args,
            outcome: outcome.clone(),
        };
        let error = match &called.outcome {
            ToolOutcome::Error { message } => Some(message.clone()),
            ToolOutcome::Ok { .. } => None,
        };
        s.history.push(serde_json::json!({
            "seq": called.seq,
            "turn": called.turn,
            "tool": called.tool,
            "args": serde_json::to_string(&called.args).unwrap_or_default(),
            "error": error,
        }));
        s.results.insert(tool.to_string(), called.clone());
        s.last = Some(called);
        drop(s);
        self.notify();
        Ok(outcome)
    }

    /// Ask the open turn to end (the person clicked "End my day" / "Finish the task").
    /// `which` (turn, round), when the form says which turn it ends, must be the open one: a
    /// second click, or a page left open while its turn ran out, never ends the next turn.
    pub fn end_turn(&self, note: String, which: Option<(u32, u32)>) -> Result<(), String> {
        let mut s = self.lock();
        if s.phase != Phase::Turn {
            return Err("no turn is open".into());
        }
        if let (Some((turn, round)), Some(open)) = (which, s.turn.as_ref())
            && (turn, round) != (open.index, open.round)
        {
            return Err(format!(
                "that page was of turn {turn}, which is over: this is turn {} — nothing was ended",
                open.index
            ));
        }
        s.end.get_or_insert(note);
        drop(s);
        self.notify();
        Ok(())
    }

    /// The person closed the play (or the server stops).
    pub fn close(&self) {
        self.lock().closed = true;
        self.notify();
    }
}

impl Default for Hub {
    fn default() -> Self {
        Hub::new()
    }
}

/// How often a waiting turn looks at the clock and for a signal.
const POLL: Duration = Duration::from_millis(200);

/// A person at the keyboard, as an agent: `human:<name>`.
///
/// Each turn it publishes the turn and its [`ToolSession`] to the web app, then waits until
/// the person ends the day, the turn's wall-clock limit runs out, the play is closed, or a
/// signal stops the run. Everything the person does goes through the session.
pub struct HumanAgent {
    pub(crate) hub: Arc<Hub>,
    pub(crate) name: String,
    pub(crate) timezone: chrono_tz::Tz,
    pub(crate) turns: usize,
}

impl HumanAgent {
    pub fn new(hub: Arc<Hub>, name: &str) -> HumanAgent {
        HumanAgent {
            hub,
            name: name.to_string(),
            timezone: chrono_tz::UTC,
            turns: 0,
        }
    }
}

impl Agent for HumanAgent {
    fn name(&self) -> String {
        format!("human:{}", self.name)
    }

    fn start_trial(&mut self, task: &Task) -> Result<(), AgentError> {
        self.timezone = task.timezone;
        self.turns = task.turns.len();
        let mut s = self.hub.lock();
        s.task = TaskInfo {
            id: task.id.clone(),
            title: task.title.clone(),
            turns: task.turns.len(),
            user_name: task.user.name.clone(),
            user_email: task.user.email.clone(),
            timezone: Some(task.timezone),
        };
        s.results.clear();
        s.last = None;
        s.history.clear();
        s.phase = Phase::Waiting;
        drop(s);
        self.hub.notify();
        Ok(())
    }

    fn run_turn(
        &mut self,
        turn: &TurnInput,
        tools: &ToolSession,
    ) -> Result<TurnOutput, AgentError> {
        let local = turn.time.with_timezone(&self.timezone);
        let view = TurnView {
            index: turn.index,
            total: self.turns,
            prompt: turn.text(self.timezone),
            office_time: bureau_core::time::office_time(&turn.time, self.timezone),
            date: local.format("%Y-%m-%d").to_string(),
            round: turn.round,
            last: turn.index as usize >= self.turns,
        };
        {
            let mut s = self.hub.lock();
            s.specs = tools.tool_specs();
            s.session = Some(tools.share());
            s.turn = Some(view);
            s.end = None;
            s.phase = Phase::Turn;
        }
        self.hub.notify();
        let mut s = self.hub.lock();
        let outcome = loop {
            if s.end.is_some() && s.in_flight == 0 {
                break Ok(s.end.take().filter(|n| !n.trim().is_empty()));
            }
            if let Some(signal) = bureau_core::interrupt::requested() {
                break Err(AgentError::Failed(format!(
                    "interrupted by {} while the person was working",
                    bureau_core::interrupt::name(signal)
                )));
            }
            if s.closed {
                break Err(AgentError::Failed(
                    "the play was closed before the turn ended".into(),
                ));
            }
            if tools.time_left().is_zero() && s.in_flight == 0 {
                break Ok(s.end.take().filter(|n| !n.trim().is_empty()));
            }
            let wait = POLL.min(tools.time_left().max(Duration::from_millis(10)));
            s = self
                .hub
                .changed
                .wait_timeout(s, wait)
                .map(|(g, _)| g)
                .unwrap_or_else(|p| p.into_inner().0);
        };
        s.session = None;
        s.end = None;
        s.phase = Phase::Waiting;
        drop(s);
        self.hub.notify();
        outcome.map(|note| TurnOutput {
            final_message: note,
        })
    }

    fn definition(&self) -> Option<Value> {
        Some(serde_json::json!({"kind": "human", "name": self.name}))
    }
}
