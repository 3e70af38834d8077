//! The tool session and the built-in agents against a real world.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bureau_agents::{Recorder, ToolSession, TurnInput, TurnLimits, make_agent};
use bureau_core::Task;
use bureau_core::tool::ToolOutcome;
use bureau_core::trajectory::StepKind;
use bureau_world::World;
use serde_json::json;

/// A one-turn task whose solution writes a file, makes a bad call, then writes another file.
fn write_task(dir: &Path, max_steps: u32) -> Task {
    std::fs::create_dir_all(dir.join("world/files")).unwrap();
    std::fs::create_dir_all(dir.join("solution")).unwrap();
    std::fs::write(dir.join("world/files/readme.txt"), "hello\n").unwrap();
    std::fs::write(
        dir.join("task.toml"),
        format!(
            r#"id = "session-task"
title = "Session"
persona = "tester"
category = "files"
difficulty = "easy"
apps = ["files"]

[user]
name = "Ada"
email = "ada@corp.test"

[limits]
max_steps = {max_steps}

[[turn]]
at = "2026-03-02T09:00:00"
prompt = "Write a.txt and b.txt."

[[rubric]]
id = "a"
description = "a.txt exists"
kind = "result"
file_exists = "a.txt"
"#
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("solution/1.jsonl"),
        concat!(
            r#"{"tool":"files_write","args":{"path":"a.txt","content":"A"}}"#,
            "\n",
            r#"{"tool":"files_read","args":{"path":"missing.txt"}}"#,
            "\n",
            r#"{"tool":"files_write","args":{"path":"b.txt","content":"B"}}"#,
            "\n",
        ),
    )
    .unwrap();
    Task::load(dir).unwrap()
}

fn world_for(task: &Task, root: &Path) -> Arc<Mutex<World>> {
    let mut w = World::build(task, root).unwrap();
    w.begin_turn(&task.turns[0]).unwrap();
    Arc::new(Mutex::new(w))
}

fn input(task: &Task) -> TurnInput {
    let t = &task.turns[0];
    TurnInput {
        index: 1,
        prompt: t.prompt.clone(),
        time: t.at,
        round: 0,
    }
}

fn limit_steps(rec: &Recorder) -> Vec<String> {
    rec.steps()
        .iter()
        .filter_map(|s| match &s.kind {
            StepKind::LimitReached { limit, .. } => Some(limit.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn calls_are_recorded_and_the_step_limit_refuses_once() {
    let tmp = tempfile::tempdir().unwrap();
    let task = write_task(&tmp.path().join("task"), 2);
    let world = world_for(&task, &tmp.path().join("world"));
    let rec = Recorder::new();
    let s = ToolSession::new(
        world.clone(),
        rec.clone(),
        1,
        TurnLimits::from(&task.limits),
    );

    let ok = s
        .call("files_write", json!({"path": "x.txt", "content": "x"}))
        .unwrap();
    assert!(!ok.is_error(), "{ok:?}");
    // A tool error is an outcome, not a refusal; it counts as a step.
    let err = s.call("files_read", json!({"path": "nope.txt"})).unwrap();
    assert!(matches!(err, ToolOutcome::Error { .. }));
    let refused = s
        .call("files_write", json!({"path": "y.txt", "content": "y"}))
        .unwrap_err();
    assert_eq!(refused.limit, "max_steps");
    assert!(s.call("files_list", json!({})).is_err());

    assert_eq!(s.calls_made(), 2);
    assert_eq!(
        limit_steps(&rec),
        vec!["max_steps".to_string()],
        "the limit is recorded once"
    );
    assert!(
        !world.lock().unwrap().files().exists("y.txt"),
        "a refused call never reaches the world"
    );
    s.say("done");
    let steps = rec.steps();
    assert_eq!(steps.len(), 4);
    assert!(steps.iter().all(|st| st.turn == 1));
    assert!(matches!(&steps[3].kind, StepKind::Message { text } if text == "done"));
}

#[test]
fn rejected_calls_count_as_steps_and_an_agents_own_limit_stops_the_turn_once() {
    let tmp = tempfile::tempdir().unwrap();
    let task = write_task(&tmp.path().join("task"), 3);
    let world = world_for(&task, &tmp.path().join("world"));
    let rec = Recorder::new();
    let s = ToolSession::new(
        world.clone(),
        rec.clone(),
        1,
        TurnLimits::from(&task.limits),
    );

    let out = s
        .reject(
            "files_write",
            json!("{\"path\": "),
            "the arguments are not valid JSON",
        )
        .unwrap();
    assert_eq!(
        out,
        ToolOutcome::Error {
            message: "the arguments are not valid JSON".into()
        }
    );
    assert_eq!(s.calls_made(), 1);
    assert!(
        world
            .lock()
            .unwrap()
            .log()
            .iter()
            .all(|e| e.actor != bureau_core::log::Actor::Agent)
    );
    s.record(StepKind::Note {
        data: json!({"k": 1}),
    });

    let first = s.stop("max_cost_usd", "$5 spent of $5 allowed");
    assert_eq!(first.limit, "max_cost_usd");
    // A second stop and every later call report the first limit and record nothing.
    assert_eq!(s.stop("max_input_tokens", "x").limit, "max_cost_usd");
    assert_eq!(s.call("files_list", json!({})).unwrap_err(), first);
    assert_eq!(s.reject("files_list", json!(""), "x").unwrap_err(), first);
    assert_eq!(s.limit_reached(), Some(first));
    assert_eq!(limit_steps(&rec), vec!["max_cost_usd".to_string()]);
    let steps = rec.steps();
    assert_eq!(steps.len(), 3);
    assert_eq!(steps[0].as_tool_call().unwrap().1, &json!("{\"path\": "));
    assert!(matches!(steps[1].kind, StepKind::Note { .. }));
}

#[test]
fn the_wall_clock_limit_refuses_calls_after_the_deadline() {
    let tmp = tempfile::tempdir().unwrap();
    let task = write_task(&tmp.path().join("task"), 10);
    let world = world_for(&task, &tmp.path().join("world"));
    let rec = Recorder::new();
    let s = ToolSession::new(
        world,
        rec.clone(),
        1,
        TurnLimits {
            max_steps: 10,
            wall: Duration::ZERO,
        },
    );
    assert_eq!(s.time_left(), Duration::ZERO);
    let refused = s.call("files_list", json!({})).unwrap_err();
    assert_eq!(refused.limit, "wall_seconds");
    assert_eq!(s.limit_reached(), Some(refused));
    assert_eq!(limit_steps(&rec), vec!["wall_seconds".to_string()]);
}

#[test]
fn concurrent_calls_are_serialised_and_counted_exactly() {
    let tmp = tempfile::tempdir().unwrap();
    let task = write_task(&tmp.path().join("task"), 25);
    let world = world_for(&task, &tmp.path().join("world"));
    let rec = Recorder::new();
    let s = ToolSession::new(
        world.clone(),
        rec.clone(),
        1,
        TurnLimits::from(&task.limits),
    );
    std::thread::scope(|scope| {
        for t in 0..4 {
            let s = &s;
            scope.spawn(move || {
                for i in 0..10 {
                    let _ = s.call(
                        "files_write",
                        json!({"path": format!("t{t}/f{i}.txt"), "content": "x"}),
                    );
                }
            });
        }
    });
    let calls = rec
        .steps()
        .iter()
        .filter(|st| st.as_tool_call().is_some())
        .count();
    assert_eq!(calls, 25);
    assert_eq!(limit_steps(&rec).len(), 1);
    let w = world.lock().unwrap();
    let written = w
        .files()
        .all_files()
        .iter()
        .filter(|f| f.path.starts_with('t'))
        .count();
    assert_eq!(
        written, 25,
        "every recorded call reached the world, no other did"
    );
}

#[test]
fn the_oracle_replays_the_solution_and_a_tool_error_is_not_an_agent_error() {
    let tmp = tempfile::tempdir().unwrap();
    let task = write_task(&tmp.path().join("task"), 10);
    let world = world_for(&task, &tmp.path().join("world"));
    let rec = Recorder::new();
    let s = ToolSession::new(
        world.clone(),
        rec.clone(),
        1,
        TurnLimits::from(&task.limits),
    );
    let mut oracle = make_agent("oracle").unwrap();
    oracle.start_trial(&task).unwrap();
    let out = oracle.run_turn(&input(&task), &s).unwrap();
    assert_eq!(out.final_message, None);
    let outcomes: Vec<bool> = rec
        .steps()
        .iter()
        .filter_map(|st| st.as_tool_call())
        .map(|(_, _, o)| o.is_error())
        .collect();
    assert_eq!(
        outcomes,
        vec![false, true, false],
        "the failing call is recorded and the oracle goes on"
    );
    let w = world.lock().unwrap();
    assert!(w.files().exists("a.txt") && w.files().exists("b.txt"));
}

#[test]
fn the_oracle_stops_when_the_turn_limit_is_reached() {
    let tmp = tempfile::tempdir().unwrap();
    let task = write_task(&tmp.path().join("task"), 1);
    let world = world_for(&task, &tmp.path().join("world"));
    let rec = Recorder::new();
    let s = ToolSession::new(
        world.clone(),
        rec.clone(),
        1,
        TurnLimits::from(&task.limits),
    );
    let mut oracle = make_agent("oracle").unwrap();
    oracle.start_trial(&task).unwrap();
    oracle.run_turn(&input(&task), &s).unwrap();
    assert_eq!(rec.steps().len(), 2, "one call, then one limit record");
    assert!(!world.lock().unwrap().files().exists("b.txt"));
}

#[test]
fn null_does_nothing_and_replay_reissues_recorded_calls() {
    let tmp = tempfile::tempdir().unwrap();
    let task = write_task(&tmp.path().join("task"), 10);

    let world = world_for(&task, &tmp.path().join("w1"));
    let rec = Recorder::new();
    let s = ToolSession::new(
        world.clone(),
        rec.clone(),
        1,
        TurnLimits::from(&task.limits),
    );
    let mut null = make_agent("null").unwrap();
    null.start_trial(&task).unwrap();
    null.run_turn(&input(&task), &s).unwrap();
    assert!(rec.is_empty());

    // Record the oracle to a file, then replay it into a fresh world.
    let traj = tmp.path().join("trajectory.jsonl");
    let rec = Recorder::to_file(&traj).unwrap();
    let world = world_for(&task, &tmp.path().join("w2"));
    let s = ToolSession::new(world, rec.clone(), 1, TurnLimits::from(&task.limits));
    let mut oracle = make_agent("oracle").unwrap();
    oracle.start_trial(&task).unwrap();
    oracle.run_turn(&input(&task), &s).unwrap();
    s.say("all written");

    let spec = format!("replay:{}", traj.display());
    let mut replay = make_agent(&spec).unwrap();
    assert_eq!(replay.name(), spec);
    replay.start_trial(&task).unwrap();
    let world = world_for(&task, &tmp.path().join("w3"));
    let rec2 = Recorder::new();
    let s = ToolSession::new(
        world.clone(),
        rec2.clone(),
        1,
        TurnLimits::from(&task.limits),
    );
    replay.run_turn(&input(&task), &s).unwrap();
    assert_eq!(
        rec2.steps(),
        rec.steps(),
        "the replayed trajectory is the recorded one"
    );
    assert!(world.lock().unwrap().files().exists("b.txt"));
}
