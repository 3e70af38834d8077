//! `bureau submit slurm` on a real Slurm cluster (issue 18 §3): a 4-shard run of
//! suites/starter × 3 epochs gives the same summary and verdicts as the run done in one
//! process, also when one array element is cancelled mid-run and the submission repeated.
//!
//! Needs a cluster: `.ci/slurm/start.sh` starts a one-node one on this machine (.ci/run does).
//! Without `sinfo` these tests fail, naming that script; they never skip.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const SHARDS: &str = "4";
const EPOCHS: &str = "3";
const AGENTS: [&str; 2] = ["oracle", "null"];
const WAIT: Duration = Duration::from_secs(600);

fn bureau() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bureau"))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn starter() -> PathBuf {
    std::path::absolute(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../suites/starter")).unwrap()
}

/// Fails (never skips) when no Slurm cluster answers.
fn require_slurm() {
    let ok = Command::new("sinfo")
        .args(["-h", "-o", "%T"])
        .output()
        .map(|o| o.status.success() && !o.stdout.is_empty())
        .unwrap_or(false);
    assert!(
        ok,
        "no Slurm cluster answers `sinfo` here{}: start the one-node test cluster with \
         .ci/slurm/start.sh (it installs slurm-wlm and munge when missing; .ci/run does this), \
         then re-run these tests",
        if std::env::var("CI").as_deref() == Ok("true") {
            " (CI=true)"
        } else {
            ""
        }
    );
}

/// A scratch directory under /tmp, which slurmd's jobs (run as root here) can read and write.
fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("bureau-slurm-test-")
        .tempdir_in("/tmp")
        .unwrap()
}

fn single_process_run(out: &Path) -> Duration {
    let t = Instant::now();
    let o = bureau()
        .arg("run")
        .arg(starter())
        .args(AGENTS.iter().flat_map(|a| ["--agent", a]))
        .args(["--epochs", EPOCHS, "--quiet", "--out"])
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "bureau run: {}", text(&o.stderr));
    t.elapsed()
}

/// `bureau submit slurm`; returns the array's and the report's job ids.
fn submit(out: &Path) -> (String, String) {
    let o = bureau()
        .args(["submit", "slurm"])
        .arg(starter())
        .args(AGENTS.iter().flat_map(|a| ["--agent", a]))
        .args(["--epochs", EPOCHS, "--shards", SHARDS, "--bureau"])
        .arg(env!("CARGO_BIN_EXE_bureau"))
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    let stdout = text(&o.stdout);
    assert!(
        o.status.success(),
        "bureau submit slurm: {}{stdout}",
        text(&o.stderr)
    );
    let id = |prefix: &str| {
        stdout
            .lines()
            .find_map(|l| l.strip_prefix(prefix))
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("no `{prefix}` line in {stdout:?}"))
            .to_string()
    };
    (id("shards: job "), id("report: job "))
}

/// The states squeue reports for `job` (all states, including finished ones kept by MinJobAge).
fn states(job: &str) -> Vec<String> {
    let o = Command::new("squeue")
        .args(["-h", "-r", "-t", "all", "-o", "%T", "-j", job])
        .output()
        .unwrap();
    text(&o.stdout)
        .lines()
        .map(|l| l.trim().to_string())
        .collect()
}

const LIVE: [&str; 6] = [
    "PENDING",
    "RUNNING",
    "COMPLETING",
    "CONFIGURING",
    "SUSPENDED",
    "REQUEUED",
];

fn wait_done(jobs: &[&str], out: &Path) {
    let start = Instant::now();
    loop {
        let live: Vec<String> = jobs
            .iter()
            .flat_map(|j| states(j))
            .filter(|s| LIVE.contains(&s.as_str()))
            .collect();
        if live.is_empty() {
            return;
        }
        assert!(
            start.elapsed() < WAIT,
            "jobs {jobs:?} still {live:?} after {WAIT:?}; logs:\n{}",
            logs(out)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn logs(out: &Path) -> String {
    let mut s = String::new();
    if let Ok(entries) = std::fs::read_dir(out.join("slurm")) {
        let mut names: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        names.sort();
        for p in names
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "out"))
        {
            s += &format!(
                "--- {}\n{}\n",
                p.display(),
                std::fs::read_to_string(&p).unwrap_or_default()
            );
        }
    }
    s
}

/// summary.json without wall-clock figures (they differ between any two runs).
fn summary(out: &Path) -> serde_json::Value {
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                m.retain(|k, _| !k.contains("wall"));
                m.values_mut().for_each(strip);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let text = std::fs::read_to_string(out.join("summary.json"))
        .unwrap_or_else(|e| panic!("{}/summary.json: {e}\n{}", out.display(), logs(out)));
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    strip(&mut v);
    v
}

/// Every entry three levels under trials/ (task/agent/epoch), as relative paths.
fn trial_dirs(out: &Path) -> BTreeSet<String> {
    let mut set = BTreeSet::new();
    let trials = out.join("trials");
    for task in std::fs::read_dir(&trials).unwrap().flatten() {
        for agent in std::fs::read_dir(task.path()).unwrap().flatten() {
            for epoch in std::fs::read_dir(agent.path()).unwrap().flatten() {
                let rel = epoch
                    .path()
                    .strip_prefix(&trials)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                set.insert(rel);
            }
        }
    }
    set
}

fn verdict_count(out: &Path) -> usize {
    if !out.join("trials").is_dir() {
        return 0;
    }
    trial_dirs(out)
        .iter()
        .filter(|t| out.join("trials").join(t).join("verdicts.json").is_file())
        .count()
}

/// The sharded run equals the single-process one: same trials, byte-equal verdicts, same summary.
fn assert_same_run(single: &Path, sharded: &Path) {
    let a = trial_dirs(single);
    let b = trial_dirs(sharded);
    assert_eq!(a.len(), 13 * AGENTS.len() * 3, "the single run's trials");
    assert_eq!(a, b, "trial directories differ; logs:\n{}", logs(sharded));
    for t in &a {
        let va = std::fs::read(single.join("trials").join(t).join("verdicts.json")).unwrap();
        let vb = std::fs::read(sharded.join("trials").join(t).join("verdicts.json"))
            .unwrap_or_else(|e| panic!("{t}/verdicts.json: {e}\n{}", logs(sharded)));
        assert!(
            va == vb,
            "{t}/verdicts.json differs between the single and the sharded run"
        );
    }
    assert_eq!(summary(single), summary(sharded), "summary.json differs");
}

#[test]
fn a_four_shard_slurm_run_equals_the_single_process_run() {
    require_slurm();
    let tmp = scratch();
    let single = tmp.path().join("single");
    let sharded = tmp.path().join("sharded");
    let single_time = single_process_run(&single);

    let t = Instant::now();
    let (array, report) = submit(&sharded);
    wait_done(&[&array, &report], &sharded);
    let sharded_time = t.elapsed();
    for state in states(&array) {
        assert_eq!(
            state,
            "COMPLETED",
            "an array element did not complete; logs:\n{}",
            logs(&sharded)
        );
    }
    assert_same_run(&single, &sharded);
    assert!(sharded.join("report.md").is_file());
    assert!(
        sharded.join("html/index.html").is_file(),
        "the report job wrote no HTML:\n{}",
        logs(&sharded)
    );
    eprintln!(
        "single process: {:.1} s; 4 Slurm shards, submission to report: {:.1} s (one 2-core node)",
        single_time.as_secs_f64(),
        sharded_time.as_secs_f64()
    );
}

#[test]
fn a_cancelled_shard_is_completed_by_resubmitting_without_duplicates() {
    require_slurm();
    let tmp = scratch();
    let single = tmp.path().join("single");
    let sharded = tmp.path().join("sharded");
    single_process_run(&single);

    let (array, report) = submit(&sharded);
    // Cancel element 2 as soon as it runs.
    let element = format!("{array}_2");
    let start = Instant::now();
    loop {
        let s = states(&element);
        if s.iter().any(|s| s == "RUNNING") {
            break;
        }
        assert!(
            !s.iter().any(|s| !LIVE.contains(&s.as_str())),
            "element 2 ended ({s:?}) before it could be cancelled; logs:\n{}",
            logs(&sharded)
        );
        assert!(start.elapsed() < WAIT, "element 2 never ran");
        std::thread::sleep(Duration::from_millis(10));
    }
    let o = Command::new("scancel").arg(&element).output().unwrap();
    assert!(o.status.success(), "scancel: {}", text(&o.stderr));
    wait_done(&[&array, &report], &sharded);
    assert_eq!(states(&element), ["CANCELLED"], "logs:\n{}", logs(&sharded));
    let total = 13 * AGENTS.len() * 3;
    let before = verdict_count(&sharded);
    assert!(
        before < total,
        "nothing was lost by the cancel ({before} of {total} trials scored)"
    );

    // The same submission again: finished shards do nothing, shard 2 does its missing trials.
    let (array2, report2) = submit(&sharded);
    wait_done(&[&array2, &report2], &sharded);
    for state in states(&array2) {
        assert_eq!(state, "COMPLETED", "logs:\n{}", logs(&sharded));
    }
    assert_eq!(verdict_count(&sharded), total);
    assert_same_run(&single, &sharded);
}
