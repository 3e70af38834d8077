//! Items decided by an LLM judge: the prompt it sees, the verdict rules, the cache.

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use bureau_check::judge::{JUDGE_SYSTEM, judge_prompt, prompt_hash};
use bureau_check::{CachedJudge, CheckLimits, Judge, evaluate, evaluate_judged};
use bureau_core::log::Actor;
use bureau_core::task::{Evaluator, Task};
use bureau_core::trajectory::{Step, StepKind};
use bureau_core::verdict::{JudgeErrorType, TurnRef, VerdictStatus};
use bureau_world::World;
use serde_json::json;

const TASK: &str = r#"
id = "judged"
title = "Write the supplier summary"
persona = "ops"
category = "writing"
difficulty = "easy"
apps = ["files"]
timezone = "Europe/Amsterdam"
[user]
name = "Mara Lindqvist"
email = "mara@x.test"

[[turn]]
at = "2026-03-09T09:00:00"
prompt = "Summarise the supplier notes in out/summary.md."

[[rubric]]
id = "tone"
description = "Neutral tone"
kind = "result"
judge = "The summary is written in a neutral, factual tone."

[[rubric]]
id = "named"
description = "Names Kessler"
kind = "result"
judge = "The summary names Kessler Plastics as the late supplier."
judge_files = ["out/summary.md", "notes.md"]
"#;

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A judge that answers from a script and counts its calls.
struct Scripted {
    answers: Mutex<Vec<Result<String, String>>>,
    calls: AtomicUsize,
    prompts: Mutex<Vec<String>>,
}

impl Scripted {
    fn new(answers: Vec<Result<&str, &str>>) -> Scripted {
        Scripted {
            answers: Mutex::new(
                answers
                    .into_iter()
                    .rev()
                    .map(|a| a.map(String::from).map_err(String::from))
                    .collect(),
            ),
            calls: AtomicUsize::new(0),
            prompts: Mutex::new(Vec::new()),
        }
    }
}

impl Judge for &Scripted {
    fn model(&self) -> String {
        "openai:judge-model".into()
    }
    fn complete(&self, system: &str, user: &str) -> Result<String, String> {
        assert_eq!(system, JUDGE_SYSTEM);
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.prompts.lock().unwrap().push(user.to_string());
        self.answers
            .lock()
            .unwrap()
            .pop()
            .unwrap_or(Err("script exhausted".into()))
    }
}

fn world(dir: &Path) -> (Task, World, Vec<Step>) {
    world_of(dir, TASK)
}

fn world_of(dir: &Path, task_toml: &str) -> (Task, World, Vec<Step>) {
    write(&dir.join("task/task.toml"), task_toml);
    write(
        &dir.join("task/world/files/notes.md"),
        "Kessler is two weeks late.",
    );
    let task = Task::load(&dir.join("task")).unwrap();
    let mut w = World::build(&task, &dir.join("w")).unwrap();
    w.begin_turn(&task.turns[0]).unwrap();
    let args =
        json!({"path": "out/summary.md", "content": "Kessler Plastics is late by two weeks."});
    let outcome = w.call_tool(Actor::Agent, "files_write", &args);
    let steps = vec![Step {
        turn: 1,
        kind: StepKind::ToolCall {
            tool: "files_write".into(),
            args,
            outcome,
        },
    }];
    (task, w, steps)
}

#[test]
fn the_judge_sees_the_task_the_proposition_the_files_and_the_actions() {
    let d = tempfile::tempdir().unwrap();
    let (task, w, steps) = world(d.path());
    let Evaluator::Judge(spec) = &task.rubric[0].evaluator else {
        panic!("expected a judge item")
    };
    let p = judge_prompt(&task, &w, &steps, &task.rubric[0], spec);
    assert!(p.contains("Summarise the supplier notes"), "{p}");
    assert!(p.contains("neutral, factual tone"), "{p}");
    // Default files: those the agent created or changed — not the untouched notes.
    assert!(
        p.contains("## out/summary.md") && p.contains("late by two weeks"),
        "{p}"
    );
    assert!(!p.contains("## notes.md"), "{p}");
    assert!(p.contains("files_write("), "{p}");
    let Evaluator::Judge(spec) = &task.rubric[1].evaluator else {
        panic!()
    };
    let p = judge_prompt(&task, &w, &steps, &task.rubric[1], spec);
    assert!(
        p.contains("## notes.md") && p.contains("two weeks late"),
        "{p}"
    );
}

#[test]
fn verdicts_follow_the_judges_answers() {
    let d = tempfile::tempdir().unwrap();
    let (task, w, steps) = world(d.path());
    let judge = Scripted::new(vec![
        Ok(
            "{\"passed\": true, \"confidence\": 0.9, \"evidence\": \"Plain statements.\", \"error_type\": null}",
        ),
        Ok(
            "{\"passed\": false, \"confidence\": 0.8, \"evidence\": \"No supplier named.\", \"error_type\": \"Missing Content\"}",
        ),
    ]);
    let v = evaluate_judged(
        &task,
        None,
        &w,
        &steps,
        TurnRef::Final,
        &CheckLimits::default(),
        Some(&&judge),
    );
    assert_eq!(v[0].status, VerdictStatus::Passed);
    let rec = v[0].judge.as_ref().unwrap();
    assert_eq!(rec.model, "openai:judge-model");
    assert_eq!(rec.confidence, Some(0.9));
    assert!(!rec.cached);
    assert_eq!(v[1].status, VerdictStatus::Failed);
    let rec = v[1].judge.as_ref().unwrap();
    assert_eq!(rec.error_type, Some(JudgeErrorType::MissingContent));
    assert!(v[1].detail.as_deref().unwrap().contains("Missing Content"));
    // The record carries the prompt's hash.
    let prompts = judge.prompts.lock().unwrap();
    assert_eq!(
        rec.prompt_hash,
        prompt_hash("openai:judge-model", JUDGE_SYSTEM, &prompts[1])
    );
    // The verdict JSON shape with a judge record.
    let json = serde_json::to_value(&v[1]).unwrap();
    assert_eq!(json["judge"]["error_type"], "Missing Content");
}

#[test]
fn a_garbled_answer_fails_and_an_api_failure_or_no_judge_is_an_error() {
    let d = tempfile::tempdir().unwrap();
    let (task, w, steps) = world(d.path());
    let judge = Scripted::new(vec![
        Ok("Looks fine to me!"),
        Err("HTTP 500 after 4 retries"),
    ]);
    let v = evaluate_judged(
        &task,
        None,
        &w,
        &steps,
        TurnRef::Final,
        &CheckLimits::default(),
        Some(&&judge),
    );
    assert_eq!(v[0].status, VerdictStatus::Failed);
    assert!(v[0].detail.as_deref().unwrap().contains("not a verdict"));
    assert_eq!(v[1].status, VerdictStatus::Error);
    assert!(v[1].detail.as_deref().unwrap().contains("HTTP 500"));
    let v = evaluate(
        &task,
        None,
        &w,
        &steps,
        TurnRef::Final,
        &CheckLimits::default(),
    );
    assert!(v.iter().all(|v| v.status == VerdictStatus::Error));
    assert!(v[0].detail.as_deref().unwrap().contains("--judge"));
}

#[test]
fn cached_answers_are_reused_without_a_model_call() {
    let d = tempfile::tempdir().unwrap();
    let (task, w, steps) = world(d.path());
    let answers = vec![
        Ok("{\"passed\": true, \"evidence\": \"ok\"}"),
        Ok("{\"passed\": false, \"evidence\": \"no\", \"error_type\": \"Reasoning\"}"),
    ];
    let judge = Scripted::new(answers);
    let cache = d.path().join("judge-cache");
    let first = {
        let cached = CachedJudge::new(&judge, &cache);
        evaluate_judged(
            &task,
            None,
            &w,
            &steps,
            TurnRef::Final,
            &CheckLimits::default(),
            Some(&cached),
        )
    };
    assert_eq!(judge.calls.load(Ordering::SeqCst), 2);
    let second = {
        let cached = CachedJudge::new(&judge, &cache);
        evaluate_judged(
            &task,
            None,
            &w,
            &steps,
            TurnRef::Final,
            &CheckLimits::default(),
            Some(&cached),
        )
    };
    assert_eq!(
        judge.calls.load(Ordering::SeqCst),
        2,
        "the second scoring made no call"
    );
    for (a, b) in first.iter().zip(&second) {
        assert_eq!(a.status, b.status);
        assert_eq!(a.detail, b.detail);
        assert!(!a.judge.as_ref().unwrap().cached);
        assert!(b.judge.as_ref().unwrap().cached);
    }
    // A failure is not cached: the next scoring asks again.
    let failing = Scripted::new(vec![Err("timeout"), Ok("{\"passed\": true}")]);
    let cached = CachedJudge::new(&failing, d.path().join("other-cache"));
    assert!(cached.complete(JUDGE_SYSTEM, "u").is_err());
    assert_eq!(
        cached.complete(JUDGE_SYSTEM, "u").unwrap(),
        "{\"passed\": true}"
    );
    assert_eq!(failing.calls.load(Ordering::SeqCst), 2);
}

// --- Collected outputs as the judge's default files (issue 5) --------------------------------

#[test]
fn without_judge_files_the_judge_sees_the_collected_outputs_changed_ones_first() {
    let d = tempfile::tempdir().unwrap();
    let src = TASK.replace(
        "[user]",
        "[outputs]\nnames = [\"supplier-scorecard.csv\"]\n\n[user]",
    );
    write(&d.path().join("task/task.toml"), &src);
    write(
        &d.path().join("task/world/files/notes.md"),
        "Kessler is two weeks late.",
    );
    write(
        &d.path()
            .join("task/world/files/archive/Supplier_Scorecard_v3.csv"),
        "supplier,late\nKessler,2\n",
    );
    write(&d.path().join("task/world/files/other.md"), "Unrelated.");
    let task = Task::load(&d.path().join("task")).unwrap();
    let mut w = World::build(&task, &d.path().join("w")).unwrap();
    w.begin_turn(&task.turns[0]).unwrap();
    let args = json!({"path": "out/summary.md", "content": "Kessler Plastics is late."});
    let outcome = w.call_tool(Actor::Agent, "files_write", &args);
    let steps = vec![
        Step {
            turn: 1,
            kind: StepKind::ToolCall {
                tool: "files_write".into(),
                args,
                outcome,
            },
        },
        Step {
            turn: 1,
            kind: StepKind::Message {
                text: "Wrote out/summary.md from notes.md.".into(),
            },
        },
    ];
    let Evaluator::Judge(spec) = &task.rubric[0].evaluator else {
        panic!("expected a judge item")
    };
    let p = judge_prompt(&task, &w, &steps, &task.rubric[0], spec);
    let at = |needle: &str| {
        p.find(needle)
            .unwrap_or_else(|| panic!("{needle} missing: {p}"))
    };
    // Changed and expected-name files come before a file only named in the message.
    assert!(
        at("## archive/Supplier_Scorecard_v3.csv") < at("## notes.md"),
        "{p}"
    );
    assert!(at("## out/summary.md") < at("## notes.md"), "{p}");
    assert!(p.contains("two weeks late"), "{p}");
    // A file neither changed, expected nor named is not shown.
    assert!(!p.contains("## other.md"), "{p}");
}

/// A judged item with a deterministic twin: without a judge the twin's check decides (and says
/// so); with a judge the judge decides and the twin is not consulted.
#[test]
fn a_twin_decides_without_a_judge_and_only_then() {
    let d = tempfile::tempdir().unwrap();
    let twin_task = TASK.replace(
        "judge = \"The summary names Kessler Plastics as the late supplier.\"",
        "judge = \"The summary names Kessler Plastics as the late supplier.\"\ntwin = \"names_kessler\"",
    );
    write(
        &d.path().join("task/checks.star"),
        "def names_kessler(w):\n    t = w.files.text(\"out/summary.md\") if w.files.exists(\"out/summary.md\") else \"\"\n    return {\"passed\": contains(t, \"Kessler Plastics\"), \"detail\": \"summary read\"}\n",
    );
    let (task, w, steps) = world_of(d.path(), &twin_task);
    let program = bureau_check::load_checks(&task).unwrap();
    let v = evaluate(
        &task,
        program.as_ref(),
        &w,
        &steps,
        TurnRef::Final,
        &CheckLimits::default(),
    );
    // The item without a twin still needs a judge; the one with a twin is decided by it.
    assert_eq!(v[0].status, VerdictStatus::Error);
    assert_eq!(v[1].status, VerdictStatus::Passed, "{:?}", v[1].detail);
    assert_eq!(
        v[1].detail.as_deref(),
        Some("deterministic twin `names_kessler` (no judge given): summary read")
    );
    assert!(v[1].judge.is_none());

    let judge = Scripted::new(vec![
        Ok("{\"passed\": true, \"evidence\": \"neutral\"}"),
        Ok(
            "{\"passed\": false, \"evidence\": \"no supplier named\", \"error_type\": \"Missing Content\"}",
        ),
    ]);
    let v = evaluate_judged(
        &task,
        program.as_ref(),
        &w,
        &steps,
        TurnRef::Final,
        &CheckLimits::default(),
        Some(&&judge),
    );
    assert_eq!(v[1].status, VerdictStatus::Failed);
    assert!(v[1].judge.is_some());
    assert_eq!(judge.calls.load(Ordering::SeqCst), 2);
}

/// A twin must name a function of checks.star, and stands only beside a judge.
#[test]
fn a_twin_that_names_no_function_or_has_no_judge_is_a_load_error() {
    let d = tempfile::tempdir().unwrap();
    let t = TASK.replace(
        "judge_files = [\"out/summary.md\", \"notes.md\"]",
        "judge_files = [\"out/summary.md\", \"notes.md\"]\ntwin = \"nowhere\"",
    );
    write(&d.path().join("task/task.toml"), &t);
    write(
        &d.path().join("task/checks.star"),
        "def other(w):\n    return True\n",
    );
    let task = Task::load(&d.path().join("task")).unwrap();
    let e = bureau_check::load_checks(&task).err().unwrap().to_string();
    assert!(e.contains("unknown Starlark function `nowhere`"), "{e}");

    let d = tempfile::tempdir().unwrap();
    let t = TASK.replace(
        "judge = \"The summary is written in a neutral, factual tone.\"",
        "file_exists = \"out/summary.md\"\ntwin = \"tone\"",
    );
    write(&d.path().join("task/task.toml"), &t);
    let e = Task::load(&d.path().join("task"))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("`twin` without `judge`"), "{e}");
}
