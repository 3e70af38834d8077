//! `rescore`: verdicts recomputed from stored snapshots and trajectories, no agent re-run.

mod common;

use std::path::Path;

use bureau_core::result::{TrialResult, TrialStatus};
use bureau_run::rescore::{RESCORE_JSON, RescoreRecord};
use bureau_run::{RescoreOptions, RunConfig, rescore, run, trial_dir};
use common::*;

/// The memo task plus an item for turn 1 that only holds on turn 1's world (the budget
/// arrives on day 2), so re-scoring must use each turn's own snapshot.
fn task(dir: &Path) {
    write_memo_task(dir, "memo");
    let toml = read(&dir.join("task.toml"));
    std::fs::write(
        dir.join("task.toml"),
        format!("{toml}\n[[rubric]]\nid = \"no-budget-yet\"\ndescription = \"day 1 memo has no budget\"\nturn = 1\nkind = \"result\"\nfile_contains = {{ path = \"memo.md\", all = [\"Friday\"], none = [\"12,500\"] }}\n"),
    )
    .unwrap();
}

fn run_it(task: &Path, out: &Path) {
    let mut c = RunConfig::new(
        vec![task.display().to_string()],
        vec!["oracle".into(), "null".into()],
        out.to_path_buf(),
    );
    c.quiet = true;
    run(&c).unwrap();
}

fn result(out: &Path, agent: &str) -> TrialResult {
    serde_json::from_str(&read(&trial_dir(out, "memo", agent, 1).join("result.json"))).unwrap()
}

fn record(out: &Path, agent: &str) -> RescoreRecord {
    serde_json::from_str(&read(&trial_dir(out, "memo", agent, 1).join(RESCORE_JSON))).unwrap()
}

#[test]
fn rescoring_an_unchanged_task_reproduces_every_verdict_byte_for_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("memo");
    task(&t);
    let out = tmp.path().join("run");
    run_it(&t, &out);
    assert_eq!(result(&out, "oracle").status, TrialStatus::Passed);
    let before: Vec<String> = ["oracle", "null"]
        .iter()
        .map(|a| read(&trial_dir(&out, "memo", a, 1).join("verdicts.json")))
        .collect();
    let archive = trial_dir(&out, "memo", "oracle", 1).join("trial.zip");
    let packed = std::fs::read(&archive).unwrap();
    // The run as written (packed), then unpacked as runs before trial.zip were.
    for layout in ["packed", "unpacked"] {
        if layout == "unpacked" {
            let done = bureau_run::unpack::unpack(std::slice::from_ref(&out), None).unwrap();
            assert_eq!(done.len(), 2);
            assert!(done.iter().all(|u| u.files > 0));
            assert!(!archive.exists());
        }
        let r = rescore(&out, &RescoreOptions::default()).unwrap();
        assert_eq!(
            (r.rescored, r.verdicts_changed, r.status_changed),
            (2, 0, 0),
            "{layout}"
        );
        assert!(r.skipped.is_empty(), "{layout}: {:?}", r.skipped);
        for (a, b) in ["oracle", "null"].iter().zip(&before) {
            assert_eq!(
                &read(&trial_dir(&out, "memo", a, 1).join("verdicts.json")),
                b,
                "{layout}: {a}"
            );
            assert!(record(&out, a).changed.is_empty());
        }
        assert_eq!(result(&out, "oracle").status, TrialStatus::Passed);
        assert_eq!(result(&out, "null").status, TrialStatus::Failed);
        if layout == "packed" {
            // Re-scoring reads the archive and leaves it as it was, and no scratch behind.
            assert_eq!(std::fs::read(&archive).unwrap(), packed);
            let hidden = std::fs::read_dir(archive.parent().unwrap())
                .unwrap()
                .filter(|e| {
                    e.as_ref()
                        .unwrap()
                        .file_name()
                        .to_string_lossy()
                        .starts_with('.')
                })
                .count();
            assert_eq!(hidden, 0);
        }
    }
}

#[test]
fn a_changed_check_applies_to_the_stored_run_and_the_summary_follows() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("memo");
    task(&t);
    let out = tmp.path().join("run");
    run_it(&t, &out);
    // The author decides the memo must state the budget as "13,000": the oracle now fails it.
    let toml = read(&t.join("task.toml")).replace("all = [\"12,500\"]", "all = [\"13,000\"]");
    std::fs::write(t.join("task.toml"), toml).unwrap();
    let r = rescore(&out, &RescoreOptions::default()).unwrap();
    assert_eq!((r.rescored, r.status_changed), (2, 1));
    let rec = record(&out, "oracle");
    assert_eq!(rec.status_before, TrialStatus::Passed);
    assert_eq!(rec.status_after, TrialStatus::Failed);
    assert_eq!(rec.changed.len(), 1);
    assert_eq!(rec.changed[0].id, "budget-in-memo");
    let res = result(&out, "oracle");
    assert_eq!(res.status, TrialStatus::Failed);
    assert_eq!(res.score.unwrap().weighted, 3.0 / 5.0);
    let summary = json(&out.join("summary.json"));
    assert_eq!(summary["agents"]["oracle"]["strict_success_rate"], 0.0);
}

#[test]
fn a_broken_check_makes_the_rescored_trial_error_and_fixing_it_restores_the_score() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("memo");
    task(&t);
    let out = tmp.path().join("run");
    run_it(&t, &out);
    let toml = read(&t.join("task.toml"));
    std::fs::write(
        t.join("task.toml"),
        format!("{toml}\n[[rubric]]\nid = \"strict\"\ndescription = \"x\"\nkind = \"result\"\ncheck = \"strict\"\n"),
    )
    .unwrap();
    std::fs::write(
        t.join("checks.star"),
        "def strict(w):\n    return w.files.text(\"missing.md\") != \"\"\n",
    )
    .unwrap();
    rescore(&out, &RescoreOptions::default()).unwrap();
    let res = result(&out, "oracle");
    assert_eq!(res.status, TrialStatus::Error);
    assert!(res.error.unwrap().contains("strict: "));
    std::fs::write(
        t.join("checks.star"),
        "def strict(w):\n    return w.files.exists(\"memo.md\")\n",
    )
    .unwrap();
    rescore(&out, &RescoreOptions::default()).unwrap();
    assert_eq!(result(&out, "oracle").status, TrialStatus::Passed);
    assert_eq!(record(&out, "oracle").status_before, TrialStatus::Error);
}

#[test]
fn a_trial_without_every_snapshot_is_left_as_it_was_and_said_why() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("memo");
    task(&t);
    let out = tmp.path().join("run");
    run_it(&t, &out);
    let trial = trial_dir(&out, "memo", "oracle", 1);
    // Unpacked (the layout of runs before trial.zip), then a snapshot lost.
    bureau_run::unpack::unpack(std::slice::from_ref(&trial), None).unwrap();
    std::fs::remove_file(trial.join("snapshots/turn-2.json")).unwrap();
    let before = read(&trial.join("result.json"));
    let r = rescore(&out, &RescoreOptions::default()).unwrap();
    assert_eq!(r.rescored, 1);
    assert_eq!(r.skipped.len(), 1);
    assert!(
        r.skipped[0].1.contains("turn 2 has no snapshot"),
        "{:?}",
        r.skipped
    );
    assert_eq!(read(&trial.join("result.json")), before);
    assert!(!trial.join(RESCORE_JSON).exists());
}
