//! The run loop and the run directory, end to end on small tasks.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bureau_agents::{Agent, AgentError, ToolSession, TurnInput, TurnOutput, make_agent};
use bureau_core::Task;
use bureau_core::result::{TrialResult, TrialStatus};
use bureau_run::{RunConfig, RunError, run, run_with, trial_dir};
use bureau_world::trial_files::TrialFiles;
use common::*;

fn config(targets: &[&Path], agents: &[&str], out: &Path) -> RunConfig {
    let mut c = RunConfig::new(
        targets.iter().map(|p| p.display().to_string()).collect(),
        agents.iter().map(|s| s.to_string()).collect(),
        out.to_path_buf(),
    );
    c.quiet = true;
    c
}

fn result(out: &Path, task: &str, agent: &str, epoch: u32) -> TrialResult {
    serde_json::from_str(&read(
        &trial_dir(out, task, agent, epoch).join("result.json"),
    ))
    .unwrap()
}

/// An agent that wraps another and misbehaves on cue.
struct Wrapped {
    name: String,
    inner: Box<dyn Agent>,
    panic_on_turn: Option<u32>,
    fail_start: Option<Arc<AtomicBool>>,
    abort_on_task: Option<String>,
    task: String,
}

impl Wrapped {
    fn new(name: &str) -> Wrapped {
        Wrapped {
            name: name.into(),
            inner: make_agent("oracle").unwrap(),
            panic_on_turn: None,
            fail_start: None,
            abort_on_task: None,
            task: String::new(),
        }
    }
}

impl Agent for Wrapped {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn start_trial(&mut self, task: &Task) -> Result<(), AgentError> {
        self.task = task.id.clone();
        if let Some(flag) = &self.fail_start
            && !flag.swap(true, Ordering::SeqCst)
        {
            return Err(AgentError::Failed("model API unavailable (503)".into()));
        }
        self.inner.start_trial(task)
    }
    fn run_turn(
        &mut self,
        turn: &TurnInput,
        tools: &ToolSession,
    ) -> Result<TurnOutput, AgentError> {
        if self.panic_on_turn == Some(turn.index) {
            panic!("agent bug on turn {}", turn.index);
        }
        if self.abort_on_task.as_deref() == Some(self.task.as_str()) {
            let _ = tools.call(
                "files_write",
                serde_json::json!({"path": "partial.txt", "content": "x"}),
            );
            std::process::abort();
        }
        self.inner.run_turn(turn, tools)
    }
}

#[test]
fn oracle_passes_null_fails_and_the_trial_directory_holds_every_file() {
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("memo");
    write_memo_task(&task, "memo");
    let out = tmp.path().join("run");
    let outcome = run(&config(&[&task], &["oracle", "null"], &out)).unwrap();
    assert_eq!((outcome.total, outcome.ran, outcome.skipped), (2, 2, 0));
    assert_eq!((outcome.passed, outcome.failed, outcome.errored), (1, 1, 0));

    let oracle = result(&out, "memo", "oracle", 1);
    assert_eq!(oracle.status, TrialStatus::Passed);
    let score = oracle.score.as_ref().unwrap();
    assert!(score.strict && (score.weighted - 1.0).abs() < 1e-9);
    assert_eq!(oracle.usage.tool_calls, 4);
    assert_eq!(oracle.attempts.len(), 1);
    assert_eq!(oracle.attempts[0].dir, ".");

    let null = result(&out, "memo", "null", 1);
    assert_eq!(null.status, TrialStatus::Failed);
    assert_eq!(null.score.as_ref().unwrap().weighted, 0.0);
    assert_eq!(null.usage.tool_calls, 0);

    let dir = trial_dir(&out, "memo", "oracle", 1);
    let files = TrialFiles::open(&dir).unwrap();
    assert!(files.is_packed());
    for f in [
        "result.json",
        "verdicts.json",
        "trajectory.jsonl",
        "events.jsonl",
        "snapshots/turn-1.json",
        "snapshots/turn-2.json",
        "deliverables/memo.md",
        "calendar/ada@corp.test.ics",
        "world/workspace/notes/budget.txt",
    ] {
        assert!(files.exists(f), "missing {f}");
    }
    // The trees are in trial.zip: a handful of entries, whatever the trial wrote.
    let mut entries: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    entries.sort();
    assert_eq!(
        entries,
        [
            "events.jsonl",
            "outputs.json",
            "result.json",
            "trajectory.jsonl",
            "trial.zip",
            "verdicts.json"
        ]
    );
    assert!(
        !dir.join("attempts").exists(),
        "the final attempt's files moved up"
    );
    assert!(
        !files.exists("deliverables/readme.txt"),
        "unchanged seed files are not deliverables"
    );
    assert!(
        !files.exists("deliverables/notes/budget.txt"),
        "files the task added are not the agent's deliverables"
    );
    assert_eq!(
        files.read("deliverables/memo.md", 1 << 20).unwrap(),
        b"The meeting moved to Friday.\nBudget total: 12,500 EUR.\n"
    );
    let sent = files.list("mail/ada@corp.test/Sent").unwrap().len();
    assert_eq!(sent, 1);

    let verdicts = json(&dir.join("verdicts.json"));
    let ids: Vec<&str> = verdicts
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec!["memo-written", "bob-told", "budget-in-memo"]);
    let traj = read(&dir.join("trajectory.jsonl"));
    let kinds: Vec<String> = traj
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            "prompt",
            "tool_call",
            "tool_call",
            "prompt",
            "tool_call",
            "tool_call"
        ]
    );

    let run_json = json(&out.join("run.json"));
    assert_eq!(run_json["epochs"], 1);
    assert_eq!(run_json["agents"][1]["spec"], "null");
    assert_eq!(run_json["tasks"], serde_json::json!(["memo"]));
    assert!(out.join("summary.json").is_file() && out.join("report.md").is_file());
}

#[test]
fn verdicts_are_byte_identical_across_runs_and_a_replay_reproduces_them() {
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("memo");
    write_memo_task(&task, "memo");
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    run(&config(&[&task], &["oracle"], &a)).unwrap();
    run(&config(&[&task], &["oracle"], &b)).unwrap();
    let va = std::fs::read(trial_dir(&a, "memo", "oracle", 1).join("verdicts.json")).unwrap();
    let vb = std::fs::read(trial_dir(&b, "memo", "oracle", 1).join("verdicts.json")).unwrap();
    assert_eq!(va, vb);
    // The archive too: the same files give the same bytes.
    for f in ["trajectory.jsonl", "events.jsonl", "trial.zip"] {
        assert_eq!(
            std::fs::read(trial_dir(&a, "memo", "oracle", 1).join(f)).unwrap(),
            std::fs::read(trial_dir(&b, "memo", "oracle", 1).join(f)).unwrap(),
            "{f}"
        );
    }

    let traj = trial_dir(&a, "memo", "oracle", 1).join("trajectory.jsonl");
    let spec = format!("replay:{}", traj.display());
    let r = tmp.path().join("r");
    let outcome = run(&config(&[&task], &[&spec], &r)).unwrap();
    assert_eq!(outcome.passed, 1);
    let agent_dir = bureau_agents::sanitize_name(&spec);
    assert!(agent_dir.starts_with("replay:"), "{agent_dir}");
    let vr = std::fs::read(trial_dir(&r, "memo", &agent_dir, 1).join("verdicts.json")).unwrap();
    // The same verdicts, labelled with the replay agent instead of the oracle.
    let unlabelled = |bytes: &[u8], agent: &str| -> Vec<serde_json::Value> {
        let mut entries: Vec<serde_json::Value> = serde_json::from_slice(bytes).unwrap();
        for e in &mut entries {
            assert_eq!(e["agent"], agent, "{e}");
            e.as_object_mut().unwrap().remove("agent");
        }
        entries
    };
    assert_eq!(
        unlabelled(&vr, &agent_dir),
        unlabelled(&va, "oracle"),
        "replaying the oracle's trajectory gives its verdicts"
    );
    // The name in result.json is the agent's folder; the spec as given is in run.json.
    assert_eq!(result(&r, "memo", &agent_dir, 1).agent, agent_dir);
    let manifest: serde_json::Value = serde_json::from_str(&read(&r.join("run.json"))).unwrap();
    assert_eq!(manifest["agents"][0]["spec"], spec.as_str());
    assert_eq!(
        manifest["agents"][0]["definition"]["path"],
        traj.display().to_string()
    );
}

/// Issue 12: one glob over a run's verdicts.json files gives a tidy table — every entry
/// names its task, agent (its folder), epoch and the item's description.
#[test]
fn trees_built_in_a_scratch_directory_give_the_same_trial_and_leave_nothing_there() {
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("memo");
    write_memo_task(&task, "memo");
    let scratch = tmp.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    run(&config(&[&task], &["oracle", "null"], &a)).unwrap();
    let mut with_scratch = config(&[&task], &["oracle", "null"], &b);
    with_scratch.scratch = bureau_run::scratch::Scratch::Dir(scratch.clone());
    let outcome = run(&with_scratch).unwrap();
    assert_eq!((outcome.passed, outcome.failed, outcome.errored), (1, 1, 0));
    for agent in ["oracle", "null"] {
        let (ta, tb) = (
            trial_dir(&a, "memo", agent, 1),
            trial_dir(&b, "memo", agent, 1),
        );
        for f in [
            "verdicts.json",
            "trajectory.jsonl",
            "events.jsonl",
            "trial.zip",
        ] {
            assert_eq!(
                std::fs::read(ta.join(f)).unwrap(),
                std::fs::read(tb.join(f)).unwrap(),
                "{agent}: {f}"
            );
        }
        // The trial directory holds the records and the archive, no tree.
        assert!(!tb.join("world").exists() && !tb.join("snapshots").exists());
        assert!(TrialFiles::open(&tb).unwrap().is_packed());
    }
    // The run's scratch directory is gone with the run.
    assert_eq!(std::fs::read_dir(&scratch).unwrap().count(), 0);
    // A scratch directory an agent's shell could read is refused before anything runs.
    let mut bad = config(&[&task], &["oracle"], &tmp.path().join("c"));
    bad.scratch = bureau_run::scratch::Scratch::Dir("/proc".into());
    let e = run(&bad).unwrap_err().to_string();
    assert!(e.contains("confined shell can read"), "{e}");
}

#[test]
fn verdicts_json_is_self_describing() {
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("memo");
    write_memo_task(&task, "memo");
    let out = tmp.path().join("run");
    let mut c = config(&[&task], &["oracle", "null"], &out);
    c.epochs = 2;
    run(&c).unwrap();
    let loaded = bureau_core::Task::load(&task).unwrap();
    for agent in ["oracle", "null"] {
        for epoch in 1..=2u32 {
            let dir = trial_dir(&out, "memo", agent, epoch);
            let entries: Vec<serde_json::Value> =
                serde_json::from_str(&read(&dir.join("verdicts.json"))).unwrap();
            assert_eq!(entries.len(), loaded.rubric.len());
            for e in &entries {
                assert_eq!(e["task"], "memo");
                assert_eq!(e["agent"], agent);
                assert_eq!(e["epoch"], epoch);
                let item = loaded.rubric.iter().find(|r| r.id == e["id"]).unwrap();
                assert_eq!(e["description"], item.description.as_str());
                assert!(e["status"].is_string() && e["weight"].is_number(), "{e}");
            }
            // and still reads as plain verdicts (rescore, report)
            let _: Vec<bureau_core::verdict::Verdict> =
                serde_json::from_str(&read(&dir.join("verdicts.json"))).unwrap();
        }
    }
}

#[test]
fn a_panicking_agent_makes_the_trial_error_retried_and_unscored_with_earlier_turns_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("memo");
    write_memo_task(&task, "memo");
    let out = tmp.path().join("run");
    let factory = |spec: &str| -> Result<Box<dyn Agent>, AgentError> {
        let mut a = Wrapped::new(spec);
        a.panic_on_turn = Some(2);
        Ok(Box::new(a))
    };
    let outcome = run_with(&config(&[&task], &["buggy"], &out), &factory).unwrap();
    assert_eq!(outcome.errored, 1);
    let r = result(&out, "memo", "buggy", 1);
    assert_eq!(r.status, TrialStatus::Error);
    assert!(r.score.is_none(), "an errored trial is not scored");
    let reason = r.error.clone().unwrap();
    assert!(
        reason.contains("turn 2: agent panicked: agent bug on turn 2"),
        "{reason}"
    );
    let dirs: Vec<(u32, &str)> = r
        .attempts
        .iter()
        .map(|a| (a.attempt, a.dir.as_str()))
        .collect();
    assert_eq!(dirs, vec![(1, "attempts/1"), (2, ".")]);
    assert!(r.attempts.iter().all(|a| a.status == TrialStatus::Error));

    let dir = trial_dir(&out, "memo", "buggy", 1);
    assert!(
        dir.join("attempts/1/trajectory.jsonl").is_file(),
        "earlier attempts are kept"
    );
    let verdicts = json(&dir.join("verdicts.json"));
    let ids: Vec<&str> = verdicts
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        vec!["memo-written", "bob-told"],
        "turn 1 was checked right after turn 1"
    );
    let files = TrialFiles::open(&dir).unwrap();
    assert!(files.exists("snapshots/turn-1.json"));
    assert!(!files.exists("snapshots/turn-2.json"));
}

#[test]
fn a_trial_that_errors_once_is_retried_and_scored_by_its_second_attempt() {
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("memo");
    write_memo_task(&task, "memo");
    let out = tmp.path().join("run");
    let failed_once = Arc::new(AtomicBool::new(false));
    let factory = |spec: &str| -> Result<Box<dyn Agent>, AgentError> {
        let mut a = Wrapped::new(spec);
        a.fail_start = Some(failed_once.clone());
        Ok(Box::new(a))
    };
    run_with(&config(&[&task], &["shaky"], &out), &factory).unwrap();
    let r = result(&out, "memo", "shaky", 1);
    assert_eq!(r.status, TrialStatus::Passed);
    assert_eq!(r.attempts.len(), 2);
    assert_eq!(r.attempts[0].status, TrialStatus::Error);
    assert!(
        r.attempts[0]
            .error
            .as_deref()
            .unwrap()
            .contains("model API unavailable")
    );
    assert_eq!(r.attempts[1].dir, ".");

    // With no retries the same failure is final.
    let out2 = tmp.path().join("run2");
    let failed_once = Arc::new(AtomicBool::new(false));
    let factory = |spec: &str| -> Result<Box<dyn Agent>, AgentError> {
        let mut a = Wrapped::new(spec);
        a.fail_start = Some(failed_once.clone());
        Ok(Box::new(a))
    };
    let mut c = config(&[&task], &["shaky"], &out2);
    c.retries = 0;
    run_with(&c, &factory).unwrap();
    assert_eq!(result(&out2, "memo", "shaky", 1).status, TrialStatus::Error);
}

#[test]
fn a_broken_check_is_an_error_verdict_and_makes_the_trial_unscored_without_retry() {
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("memo");
    write_memo_task(&task, "memo");
    let toml = read(&task.join("task.toml"));
    std::fs::write(
        task.join("task.toml"),
        format!("{toml}\n[[rubric]]\nid = \"broken\"\ndescription = \"a check that fails to run\"\nkind = \"result\"\ncheck = \"broken\"\n"),
    )
    .unwrap();
    std::fs::write(
        task.join("checks.star"),
        "def broken(w):\n    fail(\"this check is broken\")\n",
    )
    .unwrap();
    let out = tmp.path().join("run");
    run(&config(&[&task], &["oracle"], &out)).unwrap();
    let r = result(&out, "memo", "oracle", 1);
    assert_eq!(r.status, TrialStatus::Error);
    assert!(r.score.is_none(), "an unscorable trial has no score");
    let reason = r.error.as_deref().unwrap();
    assert!(
        reason.contains("1 check(s) broke") && reason.contains("broken: "),
        "{reason}"
    );
    // Deterministic: the same world would break the same check, so there is no second attempt.
    assert_eq!(r.attempts.len(), 1);
    let verdicts = json(&trial_dir(&out, "memo", "oracle", 1).join("verdicts.json"));
    assert_eq!(verdicts[3]["status"], "error");
    assert!(
        verdicts[3]["detail"]
            .as_str()
            .unwrap()
            .contains("this check is broken"),
        "{}",
        verdicts[3]["detail"]
    );
}

#[test]
fn the_step_limit_ends_a_turn_and_shows_in_usage() {
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("memo");
    write_memo_task_with(&task, "memo", 1, MEMO_SOLUTION_1);
    let out = tmp.path().join("run");
    run(&config(&[&task], &["oracle"], &out)).unwrap();
    let r = result(&out, "memo", "oracle", 1);
    assert_eq!(r.status, TrialStatus::Failed, "the mail was never sent");
    assert_eq!(
        r.usage.limits_hit,
        vec!["1:max_steps".to_string(), "2:max_steps".to_string()]
    );
    assert_eq!(r.usage.tool_calls, 2);
}

#[test]
fn every_trial_runs_exactly_once_on_a_pool_and_a_second_invocation_skips_them_all() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = write_suite(&tmp.path().join("suite"), &["a", "b", "c"]);
    let out = tmp.path().join("run");
    let mut c = config(&[&suite], &["oracle", "null"], &out);
    c.epochs = 2;
    c.concurrency = 3;
    let first = run(&c).unwrap();
    assert_eq!(
        (first.total, first.ran, first.passed, first.failed),
        (12, 12, 6, 6)
    );
    for task in ["a", "b", "c"] {
        for agent in ["oracle", "null"] {
            for epoch in [1, 2] {
                let r = result(&out, task, agent, epoch);
                assert_eq!(
                    (
                        r.task.id.as_str(),
                        r.agent.as_str(),
                        r.epoch,
                        r.attempts.len()
                    ),
                    (task, agent, epoch, 1)
                );
            }
        }
    }
    let before = read(&trial_dir(&out, "b", "null", 2).join("result.json"));
    let second = run(&c).unwrap();
    assert_eq!((second.ran, second.skipped), (0, 12));
    assert_eq!(
        read(&trial_dir(&out, "b", "null", 2).join("result.json")),
        before
    );

    // A subset of the suite is its own run.
    let lite = format!("{}@lite", suite.display());
    let mut c = config(&[], &["oracle"], &tmp.path().join("lite"));
    c.targets = vec![lite];
    assert_eq!(run(&c).unwrap().total, 1);
}

#[test]
fn a_run_directory_is_resumed_only_by_the_same_run() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = write_suite(&tmp.path().join("suite"), &["a"]);
    let out = tmp.path().join("run");
    run(&config(&[&suite], &["oracle"], &out)).unwrap();
    let err = run(&config(&[&suite], &["null"], &out)).unwrap_err();
    assert!(matches!(err, RunError::OtherRun { .. }), "{err}");
    assert!(err.to_string().contains("choose another --out"), "{err}");
    assert!(err.to_string().contains("leaves out [\"oracle\"]"), "{err}");
    let other = write_suite(&tmp.path().join("other"), &["b"]);
    assert!(matches!(
        run(&config(&[&other], &["oracle"], &out)).unwrap_err(),
        RunError::OtherRun { .. }
    ));
}

#[test]
fn a_run_grows_by_agents_and_epochs_and_agent_order_is_not_its_identity() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = write_suite(&tmp.path().join("suite"), &["a"]);
    let out = tmp.path().join("run");
    let first = run(&config(&[&suite], &["oracle", "null"], &out)).unwrap();
    assert_eq!(first.ran, 2);
    let stamp = |agent: &str, epoch: u32| {
        std::fs::metadata(trial_dir(&out, "a", agent, epoch).join("result.json"))
            .unwrap()
            .modified()
            .unwrap()
    };
    let before = stamp("oracle", 1);
    // The same agents in another order: the same run, nothing to do.
    let again = run(&config(&[&suite], &["null", "oracle"], &out)).unwrap();
    assert_eq!((again.ran, again.skipped), (0, 2));
    // Two more epochs: four new trials, the old two kept as they were.
    let mut c = config(&[&suite], &["oracle", "null"], &out);
    c.epochs = 3;
    let grown = run(&c).unwrap();
    assert_eq!((grown.ran, grown.skipped, grown.total), (4, 2, 6));
    assert_eq!(stamp("oracle", 1), before);
    // Fewer epochs than the run has is refused.
    let err = run(&config(&[&suite], &["oracle", "null"], &out)).unwrap_err();
    assert!(err.to_string().contains("epochs can be added"), "{err}");
    let manifest = json(&out.join("run.json"));
    assert_eq!(manifest["epochs"], 3);
}

#[test]
fn an_unrelated_non_empty_out_directory_is_refused_and_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = write_suite(&tmp.path().join("suite"), &["a"]);
    let out = tmp.path().join("photos");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("holiday.jpg"), "jpeg").unwrap();
    let err = run(&config(&[&suite], &["oracle"], &out)).unwrap_err();
    assert!(matches!(err, RunError::Config(_)), "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("holiday.jpg") && msg.contains("choose another --out"),
        "{msg}"
    );
    let left: Vec<_> = std::fs::read_dir(&out).unwrap().collect();
    assert_eq!(left.len(), 1, "nothing was written into it");
    // An empty directory is fine.
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    run(&config(&[&suite], &["oracle"], &empty)).unwrap();
    // The engine files `bureau submit` writes before any shard starts are not foreign.
    let submitted = tmp.path().join("submitted");
    for dir in ["slurm", "k8s"] {
        std::fs::create_dir_all(submitted.join(dir)).unwrap();
        std::fs::write(submitted.join(dir).join("x"), "").unwrap();
    }
    run(&config(&[&suite], &["oracle"], &submitted)).unwrap();
    assert!(submitted.join("slurm/x").is_file() && submitted.join("run.json").is_file());
}

#[test]
fn bad_input_is_refused_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("memo");
    write_memo_task(&task, "memo");
    let out = tmp.path().join("run");
    assert!(matches!(
        run(&config(&[&task], &["robot"], &out)).unwrap_err(),
        RunError::Agent(_)
    ));
    assert!(matches!(
        run(&config(&[&task], &[], &out)).unwrap_err(),
        RunError::Config(_)
    ));
    let missing = tmp.path().join("nope");
    assert!(matches!(
        run(&config(&[&missing], &["oracle"], &out)).unwrap_err(),
        RunError::Tasks(_)
    ));
    assert!(!out.exists(), "nothing was written");
}

const ABORT_ENV: &str = "BUREAU_TEST_ABORT_RUN";

/// The child process of the test below: runs the suite and aborts the whole process in the
/// middle of task `b`.
fn abort_child(suite: &str, out: &str) -> ! {
    let factory = |spec: &str| -> Result<Box<dyn Agent>, AgentError> {
        let mut a = Wrapped::new(spec);
        a.abort_on_task = Some("b".into());
        Ok(Box::new(a))
    };
    let c = RunConfig {
        quiet: true,
        ..RunConfig::new(vec![suite.into()], vec!["flaky".into()], PathBuf::from(out))
    };
    let _ = run_with(&c, &factory);
    panic!("the run should have aborted in task b");
}

#[test]
fn resume_after_the_process_aborts_mid_run() {
    if let Ok(args) = std::env::var(ABORT_ENV) {
        let (suite, out) = args.split_once('|').unwrap();
        abort_child(suite, out);
    }
    let tmp = tempfile::tempdir().unwrap();
    let suite = write_suite(&tmp.path().join("suite"), &["a", "b", "c"]);
    let out = tmp.path().join("run");
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "resume_after_the_process_aborts_mid_run",
            "--exact",
            "--test-threads=1",
            "--nocapture",
        ])
        .env(ABORT_ENV, format!("{}|{}", suite.display(), out.display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(!status.success(), "the child process aborted");

    // The crash left: a finished, b interrupted in its first attempt, c not started.
    let a_result = read(&trial_dir(&out, "a", "flaky", 1).join("result.json"));
    let b = trial_dir(&out, "b", "flaky", 1);
    assert!(!b.join("result.json").exists());
    assert!(read(&b.join("attempts/1/trajectory.jsonl")).contains("partial.txt"));
    assert!(!trial_dir(&out, "c", "flaky", 1).exists());

    let factory =
        |spec: &str| -> Result<Box<dyn Agent>, AgentError> { Ok(Box::new(Wrapped::new(spec))) };
    let c = config(&[&suite], &["flaky"], &out);
    let outcome = run_with(&c, &factory).unwrap();
    assert_eq!(
        (outcome.total, outcome.ran, outcome.skipped, outcome.passed),
        (3, 2, 1, 3)
    );
    assert_eq!(
        read(&trial_dir(&out, "a", "flaky", 1).join("result.json")),
        a_result,
        "a finished trial is never re-run"
    );

    let rb = result(&out, "b", "flaky", 1);
    assert_eq!(rb.status, TrialStatus::Passed);
    let attempts: Vec<(u32, TrialStatus, &str)> = rb
        .attempts
        .iter()
        .map(|a| (a.attempt, a.status, a.dir.as_str()))
        .collect();
    assert_eq!(
        attempts,
        vec![
            (1, TrialStatus::Error, "attempts/1"),
            (2, TrialStatus::Passed, ".")
        ]
    );
    assert!(
        rb.attempts[0]
            .error
            .as_deref()
            .unwrap()
            .starts_with("interrupted")
    );
    assert!(
        b.join("attempts/1/trajectory.jsonl").is_file(),
        "the interrupted attempt is kept"
    );
    assert_eq!(result(&out, "c", "flaky", 1).attempts.len(), 1);
    let summary = json(&out.join("summary.json"));
    assert!(summary.is_object());
}

/// Issue 14: TheAgentCompany's checkpoint bonus (`checkpoint_bonus = "final"` / `"any"`) is
/// scored beside the default, in result.json, summary.json and report.md.
#[test]
fn checkpoint_bonus_is_scored_beside_the_default() {
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("memo");
    write_memo_task(&task, "memo");
    let toml = read(&task.join("task.toml"));
    std::fs::write(
        task.join("task.toml"),
        toml.replacen(
            "timezone = ",
            "checkpoint_bonus = \"final\"\ntimezone = ",
            1,
        ),
    )
    .unwrap();
    // Only the last checkpoint (the budget in memo.md, weight 2 of 4) is reached.
    let only_last = tmp.path().join("only-last");
    std::fs::create_dir_all(&only_last).unwrap();
    std::fs::write(only_last.join("1.jsonl"), "").unwrap();
    std::fs::write(
        only_last.join("2.jsonl"),
        r#"{"tool":"files_write","args":{"path":"memo.md","content":"Budget total: 12,500 EUR.\n"}}"#,
    )
    .unwrap();
    let out = tmp.path().join("run");
    let spec = format!("replay:{}", only_last.display());
    run(&config(&[&task], &["null", &spec], &out)).unwrap();
    let agent = bureau_agents::sanitize_name(&spec);
    let r = result(&out, "memo", &agent, 1);
    let score = r.score.unwrap();
    assert!((score.weighted - 0.5).abs() < 1e-9, "{score:?}");
    let bonus = score.bonus.unwrap();
    assert_eq!((bonus.strategy.as_str(), bonus.applied), ("final", true));
    assert_eq!(bonus.weighted, 1.0);
    let null = result(&out, "memo", "null", 1)
        .score
        .unwrap()
        .bonus
        .unwrap();
    assert!(!null.applied);
    assert_eq!(null.weighted, 0.0);
    let summary = json(&out.join("summary.json"));
    let b = &summary["agents"][agent.as_str()]["checkpoint_bonus"];
    assert_eq!(b["trials"], 1);
    assert_eq!(b["weighted_mean"], 1.0);
    assert_eq!(b["default_weighted_mean"], 0.5);
    let report = read(&out.join("report.md"));
    assert!(report.contains("### Checkpoint bonus"), "{report}");
}
