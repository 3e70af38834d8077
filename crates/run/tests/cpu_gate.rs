//! The CPU gate (`bureau_core::cpu`) never serialises waiting: trials whose agent spends its
//! turn waiting (a harness, a person, a model) are all inside a turn at once, even behind a
//! gate of one permit. The only test of this binary: it sets the gate's permits through the
//! environment before anything else runs.

mod common;

use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use bureau_agents::{Agent, AgentError, ToolSession, TurnInput, TurnOutput, make_agent};
use bureau_core::Task;
use bureau_core::result::TrialStatus;
use bureau_run::{RunConfig, run_with};
use common::*;

const TRIALS: usize = 6;

/// Who is inside a first turn now, the most at once, and whether someone gave up waiting.
#[derive(Default)]
struct Meeting {
    state: Mutex<Present>,
    changed: Condvar,
}

#[derive(Default)]
struct Present {
    inside: usize,
    most: usize,
    gave_up: bool,
}

/// An agent whose first turn waits (without computing) until every trial of the run is inside
/// its first turn too, then plays the oracle's solution. Like a harness agent, it spends its
/// turn waiting on something outside the run.
struct Waits {
    meeting: Arc<Meeting>,
    oracle: Box<dyn Agent>,
}

impl Agent for Waits {
    fn name(&self) -> String {
        "waits".into()
    }
    fn start_trial(&mut self, task: &Task) -> Result<(), AgentError> {
        // The run turned the gate on, with the one permit asked for.
        assert_eq!(bureau_core::cpu::permits(), 1);
        self.oracle.start_trial(task)
    }
    fn run_turn(
        &mut self,
        turn: &TurnInput,
        tools: &ToolSession,
    ) -> Result<TurnOutput, AgentError> {
        if turn.index == 1 {
            let m = &self.meeting;
            let mut p = m.state.lock().unwrap_or_else(|p| p.into_inner());
            p.inside += 1;
            p.most = p.most.max(p.inside);
            m.changed.notify_all();
            // Behind a gate that held the permit through the turn, the others could not come
            // in: the first to give up tells the rest, so the test fails in one wait.
            let (mut p, waited) = m
                .changed
                .wait_timeout_while(p, Duration::from_secs(20), |p| {
                    p.most < TRIALS && !p.gave_up
                })
                .unwrap_or_else(|p| p.into_inner());
            p.inside -= 1;
            if waited.timed_out() || p.most < TRIALS {
                p.gave_up = true;
                m.changed.notify_all();
                return Err(AgentError::Failed(format!(
                    "at most {} of {TRIALS} trials were inside a turn at once",
                    p.most
                )));
            }
        }
        self.oracle.run_turn(turn, tools)
    }
}

#[test]
fn trials_waiting_in_their_turn_all_wait_at_once_behind_a_gate_of_one_permit() {
    // SAFETY: set before this binary's only test starts any thread of the run.
    unsafe { std::env::set_var("BUREAU_CPU_PERMITS", "1") };
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("memo");
    write_memo_task(&task, "memo");
    let out = tmp.path().join("run");
    let mut config = RunConfig::new(
        vec![task.display().to_string()],
        vec!["waits".into()],
        out.clone(),
    );
    config.quiet = true;
    config.epochs = TRIALS as u32;
    config.concurrency = TRIALS;
    // One attempt: a trial that gave up is not played again.
    config.retries = 0;
    let meeting = Arc::new(Meeting::default());
    let factory = |spec: &str| -> Result<Box<dyn Agent>, AgentError> {
        assert_eq!(spec, "waits");
        Ok(Box::new(Waits {
            meeting: meeting.clone(),
            oracle: make_agent("oracle")?,
        }))
    };
    let outcome = run_with(&config, &factory).unwrap();
    let most = meeting.state.lock().unwrap().most;
    assert_eq!(most, TRIALS, "trials inside a turn at once");
    assert_eq!((outcome.ran, outcome.passed), (TRIALS, TRIALS));
    for epoch in 1..=TRIALS as u32 {
        let r: bureau_core::result::TrialResult = serde_json::from_str(&read(
            &bureau_run::trial_dir(Path::new(&out), "memo", "waits", epoch).join("result.json"),
        ))
        .unwrap();
        assert_eq!(
            r.status,
            TrialStatus::Passed,
            "epoch {epoch}: {:?}",
            r.error
        );
    }
}
