//! Feedback rounds (AgencyBench's user simulator) through the real run loop.

mod common;

use std::path::Path;

use bureau_agents::{Agent, AgentError, ToolSession, TurnInput, TurnOutput, make_agent};
use bureau_core::Task;
use bureau_core::result::{TrialResult, TrialStatus};
use bureau_core::trajectory::{Step, StepKind};
use bureau_run::{FeedbackSettings, RunConfig, RunError, run, run_with, trial_dir};
use bureau_world::trial_files::TrialFiles;
use common::*;
use serde_json::json;

fn config(task: &Path, agents: &[&str], out: &Path, rounds: u32) -> RunConfig {
    let mut c = RunConfig::new(
        vec![task.display().to_string()],
        agents.iter().map(|s| s.to_string()).collect(),
        out.to_path_buf(),
    );
    c.quiet = true;
    c.feedback = FeedbackSettings {
        rounds,
        threshold: 0.6,
    };
    c
}

fn result(out: &Path, task: &str, agent: &str) -> TrialResult {
    serde_json::from_str(&read(&trial_dir(out, task, agent, 1).join("result.json"))).unwrap()
}

fn steps(out: &Path, task: &str, agent: &str) -> Vec<Step> {
    read(&trial_dir(out, task, agent, 1).join("trajectory.jsonl"))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// One turn: write answer.txt saying "right". One item.
fn write_answer_task(dir: &Path) {
    std::fs::create_dir_all(dir.join("world/files")).unwrap();
    std::fs::create_dir_all(dir.join("solution")).unwrap();
    std::fs::write(
        dir.join("task.toml"),
        r#"id = "answer"
title = "Write the answer"
persona = "tester"
category = "files"
difficulty = "easy"
apps = ["files"]

[user]
name = "Ada Admin"
email = "ada@corp.test"

[[turn]]
at = "2026-03-02T09:00:00"
prompt = "Write answer.txt with the right answer."

[[rubric]]
id = "answer-right"
description = "answer.txt gives the right answer"
kind = "result"
file_contains = { path = "answer.txt", all = ["right"] }
"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("solution/1.jsonl"),
        r#"{"tool":"files_write","args":{"path":"answer.txt","content":"right\n"}}"#,
    )
    .unwrap();
}

/// Gets turn 1 wrong at first and fixes it after feedback; otherwise plays the oracle. It
/// keeps the feedback messages it received.
struct Corrector {
    oracle: Box<dyn Agent>,
    task: String,
}

impl Agent for Corrector {
    fn name(&self) -> String {
        "corrector".into()
    }
    fn start_trial(&mut self, task: &Task) -> Result<(), AgentError> {
        self.task = task.id.clone();
        self.oracle.start_trial(task)
    }
    fn run_turn(
        &mut self,
        turn: &TurnInput,
        tools: &ToolSession,
    ) -> Result<TurnOutput, AgentError> {
        let (path, wrong, right) = match self.task.as_str() {
            "answer" => ("answer.txt", "wrong\n", "right\n"),
            _ => (
                "memo.md",
                "The meeting moved to Monday.\n",
                "The meeting moved to Friday.\n",
            ),
        };
        match (turn.index, turn.round) {
            (1, 0) => {
                let _ = tools.call("files_write", json!({"path": path, "content": wrong}));
                if self.task != "answer" {
                    let _ = tools.call(
                        "mail_send",
                        json!({"to": ["bob@corp.test"], "subject": "The meeting moved", "body": "Monday."}),
                    );
                }
                Ok(TurnOutput {
                    final_message: Some("Done.".into()),
                })
            }
            (1, _) => {
                assert!(
                    turn.prompt.contains("(answer-right)")
                        || turn.prompt.contains("(memo-written)"),
                    "the feedback names the failed item: {}",
                    turn.prompt
                );
                let _ = tools.call("files_write", json!({"path": path, "content": right}));
                Ok(TurnOutput {
                    final_message: Some("Fixed.".into()),
                })
            }
            _ => self.oracle.run_turn(turn, tools),
        }
    }
}

fn factory(spec: &str) -> Result<Box<dyn Agent>, AgentError> {
    match spec {
        "corrector" => Ok(Box::new(Corrector {
            oracle: make_agent("oracle")?,
            task: String::new(),
        })),
        other => make_agent(other),
    }
}

#[test]
fn an_agent_fixing_its_work_after_feedback_rises_from_pass1_0_to_pass2_1() {
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("answer");
    write_answer_task(&task);
    let out = tmp.path().join("run");
    let outcome = run_with(&config(&task, &["corrector"], &out, 1), &factory).unwrap();
    assert_eq!((outcome.passed, outcome.failed), (1, 0));

    let r = result(&out, "answer", "corrector");
    assert_eq!(
        r.status,
        TrialStatus::Passed,
        "the final verdicts are after the last round"
    );
    let fb = r.feedback.as_ref().unwrap();
    assert_eq!(
        (fb.rounds, fb.threshold, fb.writer.as_str()),
        (1, 0.6, "template")
    );
    assert_eq!(fb.turns.len(), 1);
    let scores: Vec<(f64, bool, Vec<String>)> = fb.turns[0]
        .rounds
        .iter()
        .map(|r| (r.score, r.met, r.failed.clone()))
        .collect();
    assert_eq!(
        scores,
        vec![
            (0.0, false, vec!["answer-right".to_string()]),
            (1.0, true, vec![])
        ]
    );

    // The trajectory: prompt, the first try, the user's feedback, the fix.
    let steps = steps(&out, "answer", "corrector");
    let kinds: Vec<&str> = steps
        .iter()
        .map(|s| match &s.kind {
            StepKind::Prompt { .. } => "prompt",
            StepKind::ToolCall { .. } => "tool",
            StepKind::Message { .. } => "message",
            StepKind::Feedback { .. } => "feedback",
            _ => "other",
        })
        .collect();
    assert_eq!(
        kinds,
        ["prompt", "tool", "message", "feedback", "tool", "message"]
    );
    let StepKind::Feedback {
        round,
        text,
        failed,
    } = &steps[3].kind
    else {
        unreachable!()
    };
    assert_eq!(
        (*round, failed.clone()),
        (1, vec!["answer-right".to_string()])
    );
    assert!(
        text.contains("answer.txt gives the right answer (answer-right)"),
        "{text}"
    );
    assert!(
        !text.contains("file_contains"),
        "never the check itself: {text}"
    );

    // First-round verdicts and the world of round 0 are kept.
    let dir = trial_dir(&out, "answer", "corrector", 1);
    let log = json(&dir.join("feedback.json"));
    assert_eq!(log[0]["round"], 0);
    assert_eq!(log[0]["verdicts"][0]["status"], "failed");
    assert!(
        log[0]["feedback"]
            .as_str()
            .unwrap()
            .contains("answer-right")
    );
    assert_eq!(log[1]["verdicts"][0]["status"], "passed");
    assert!(log[1]["feedback"].is_null());
    let files = TrialFiles::open(&dir).unwrap();
    assert!(files.exists("snapshots/turn-1.round-0.json"));
    assert!(files.exists("snapshots/turn-1.json"));

    // summary.json: Pass@1 = 0, Pass@2 = 1, and no rise from 0.
    let summary = json(&out.join("summary.json"));
    let s = &summary["agents"]["corrector"]["feedback"];
    assert_eq!(s["pass_1"], 0.0);
    assert_eq!(s["pass_2"], 1.0);
    assert!(s["rise"].is_null());
    assert_eq!(
        (s["units"].as_u64(), s["messages"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(s["attempts_mean"], 2.0);
    let report = read(&out.join("report.md"));
    assert!(report.contains("## Feedback rounds"), "{report}");
    assert!(
        report.contains("| corrector | 1 | 1 | 0.0 | 100.0 | — | 2.00 | 1 |"),
        "{report}"
    );

    // run.json records the setting; resuming with another is refused.
    let manifest = json(&out.join("run.json"));
    assert_eq!(manifest["feedback"]["rounds"], 1);
    assert_eq!(manifest["feedback"]["threshold"], 0.6);
    let err = run_with(&config(&task, &["corrector"], &out, 2), &factory).unwrap_err();
    assert!(matches!(err, RunError::OtherRun { .. }), "{err}");
    assert!(err.to_string().contains("feedback 1 round(s)"), "{err}");
    let err = run_with(&config(&task, &["corrector"], &out, 0), &factory).unwrap_err();
    assert!(err.to_string().contains("not none"), "{err}");
    // The same setting resumes (nothing left to run).
    let again = run_with(&config(&task, &["corrector"], &out, 1), &factory).unwrap();
    assert_eq!((again.ran, again.skipped), (0, 1));

    // Replaying the trajectory with feedback reproduces the trial round by round.
    let replay_out = tmp.path().join("replay");
    let spec = format!("replay:{}", dir.display());
    run(&config(&task, &[&spec], &replay_out, 1)).unwrap();
    let agent_dir = json(&replay_out.join("run.json"))["agents"][0]["dir"]
        .as_str()
        .unwrap()
        .to_string();
    let replayed = trial_dir(&replay_out, "answer", &agent_dir, 1);
    // The same verdicts; only the agent they are labelled with differs.
    let verdicts = |p: &Path| -> Vec<bureau_core::verdict::Verdict> {
        serde_json::from_str(&read(&p.join("verdicts.json"))).unwrap()
    };
    assert_eq!(verdicts(&replayed), verdicts(&dir));
    let rr: TrialResult = serde_json::from_str(&read(&replayed.join("result.json"))).unwrap();
    assert_eq!(rr.feedback.unwrap().turns, fb.turns);
}

#[test]
fn rescoring_recomputes_every_rounds_score_from_its_stored_world() {
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("answer");
    write_answer_task(&task);
    let out = tmp.path().join("run");
    run_with(&config(&task, &["corrector"], &out, 1), &factory).unwrap();

    // Unchanged checks: the same round scores.
    let before = result(&out, "answer", "corrector").feedback.unwrap();
    bureau_run::rescore(&out, &bureau_run::RescoreOptions::default()).unwrap();
    assert_eq!(
        result(&out, "answer", "corrector").feedback.unwrap(),
        before
    );

    // A laxer check ("r" is in "wrong" too): the first try now met the threshold.
    let toml = read(&task.join("task.toml")).replace("all = [\"right\"]", "all = [\"r\"]");
    std::fs::write(task.join("task.toml"), toml).unwrap();
    bureau_run::rescore(&out, &bureau_run::RescoreOptions::default()).unwrap();
    let after = result(&out, "answer", "corrector").feedback.unwrap();
    let met: Vec<bool> = after.turns[0].rounds.iter().map(|r| r.met).collect();
    assert_eq!(met, [true, true]);
    let summary = json(&out.join("summary.json"));
    assert_eq!(summary["agents"]["corrector"]["feedback"]["pass_1"], 1.0);
}

#[test]
fn without_feedback_the_same_agent_fails_and_nothing_is_added() {
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("answer");
    write_answer_task(&task);
    let out = tmp.path().join("run");
    run_with(&config(&task, &["corrector"], &out, 0), &factory).unwrap();
    let r = result(&out, "answer", "corrector");
    assert_eq!(r.status, TrialStatus::Failed);
    assert_eq!(r.feedback, None);
    let text = read(&trial_dir(&out, "answer", "corrector", 1).join("result.json"));
    assert!(!text.contains("feedback"), "{text}");
    let dir = trial_dir(&out, "answer", "corrector", 1);
    assert!(!dir.join("feedback.json").exists());
    let files = TrialFiles::open(&dir).unwrap();
    assert!(files.exists("snapshots/turn-1.json"));
    assert!(!files.exists("snapshots/turn-1.round-0.json"));
    assert!(!read(&out.join("summary.json")).contains("\"feedback\""));
    assert!(!read(&out.join("run.json")).contains("feedback"));
    assert!(!read(&out.join("report.md")).contains("Feedback rounds"));
}

#[test]
fn multi_turn_units_oracle_and_null_under_feedback() {
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("memo");
    write_memo_task(&task, "memo");
    let out = tmp.path().join("run");
    run_with(
        &config(&task, &["corrector", "oracle", "null"], &out, 2),
        &factory,
    )
    .unwrap();

    // Turn 1 (weight 1 of 2 met → 0.5 < 0.6) gets one message; turn 2 with `final` passes.
    let c = result(&out, "memo", "corrector");
    assert_eq!(c.status, TrialStatus::Passed);
    let turns: Vec<(u32, Vec<f64>)> = c
        .feedback
        .unwrap()
        .turns
        .iter()
        .map(|t| (t.turn, t.rounds.iter().map(|r| r.score).collect()))
        .collect();
    assert_eq!(turns, vec![(1, vec![0.5, 1.0]), (2, vec![1.0])]);
    let summary = json(&out.join("summary.json"));
    let s = &summary["agents"]["corrector"]["feedback"];
    assert_eq!(
        (s["pass_1"].as_f64(), s["pass_2"].as_f64()),
        (Some(0.5), Some(1.0))
    );
    assert_eq!(s["rise"], 1.0, "(1.0 - 0.5) / 0.5");
    assert_eq!(s["pass_at"]["3"], 1.0);

    // The oracle needs no feedback: no message, Pass@1 = 1.
    let o = &summary["agents"]["oracle"]["feedback"];
    assert_eq!(
        (o["pass_1"].as_f64(), o["messages"].as_u64()),
        (Some(1.0), Some(0))
    );
    assert_eq!(o["rise"], 0.0);
    let oracle_steps = steps(&out, "memo", "oracle");
    assert!(
        !oracle_steps
            .iter()
            .any(|s| matches!(s.kind, StepKind::Feedback { .. }))
    );

    // The null agent gets every round on every turn and never improves.
    let n = &summary["agents"]["null"]["feedback"];
    assert_eq!(
        (n["pass_1"].as_f64(), n["pass_2"].as_f64()),
        (Some(0.0), Some(0.0))
    );
    assert_eq!(n["messages"], 4, "2 turns × 2 rounds");
    assert_eq!(n["attempts_mean"], 3.0);
    let null_steps = steps(&out, "memo", "null");
    let rounds: Vec<(u32, u32)> = null_steps
        .iter()
        .filter_map(|s| match &s.kind {
            StepKind::Feedback { round, .. } => Some((s.turn, *round)),
            _ => None,
        })
        .collect();
    assert_eq!(rounds, vec![(1, 1), (1, 2), (2, 1), (2, 2)]);
    assert_eq!(result(&out, "memo", "null").status, TrialStatus::Failed);
}

#[test]
fn bad_settings_are_refused_naming_the_option() {
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("answer");
    write_answer_task(&task);
    let catalog = bureau_agents::AgentCatalog::new().with_env(|_| None);
    let mut c = config(&task, &["null"], &tmp.path().join("run"), 0);
    c.feedback_model = Some("openai:gpt-4.1-mini".into());
    let err = bureau_run::People::make(&catalog, &c)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("--feedback-model needs feedback rounds"),
        "{err}"
    );
    c.feedback.rounds = 1;
    c.feedback.threshold = 60.0;
    let err = bureau_run::People::make(&catalog, &c)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("--feedback-threshold 60 is not a score"),
        "{err}"
    );
    c.feedback.threshold = 0.6;
    c.feedback_model = None;
    c.colleagues = Some("gpt-9".into());
    let err = bureau_run::People::make(&catalog, &c)
        .err()
        .unwrap()
        .to_string();
    assert!(err.starts_with("--colleagues: `gpt-9`"), "{err}");
    c.colleagues = Some("deterministic".into());
    assert!(
        bureau_run::People::make(&catalog, &c)
            .unwrap()
            .colleagues
            .is_none()
    );
}

#[test]
fn a_task_caps_rounds_and_sets_its_threshold() {
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("answer");
    write_answer_task(&task);
    let toml = read(&task.join("task.toml")).replace(
        "[[turn]]",
        "[feedback]\nrounds = 0\nthreshold = 1.0\n\n[[turn]]",
    );
    std::fs::write(task.join("task.toml"), toml).unwrap();
    let out = tmp.path().join("run");
    run_with(&config(&task, &["corrector"], &out, 3), &factory).unwrap();
    let r = result(&out, "answer", "corrector");
    assert_eq!(r.status, TrialStatus::Failed, "no round for this task");
    let fb = r.feedback.unwrap();
    assert_eq!((fb.rounds, fb.threshold), (0, 1.0));
    assert_eq!(fb.turns[0].rounds.len(), 1);

    let bad = read(&task.join("task.toml")).replace("threshold = 1.0", "threshold = 60");
    std::fs::write(task.join("task.toml"), bad).unwrap();
    let err = Task::load(&task).unwrap_err().to_string();
    assert!(
        err.contains("[feedback] threshold 60 is not a score"),
        "{err}"
    );
    assert!(err.contains("task.toml:"), "located: {err}");
}
