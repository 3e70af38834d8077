//! Attacks: a whole run. Whatever one trial's task, files or agent do, the run ends: the
//! attacked trial is `error` (or scored, with the reason recorded), the other trials are
//! intact, and nothing is written outside the run directory. See docs/security.md.

use std::path::Path;
use std::time::Duration;

use bureau_core::result::TrialStatus;
use bureau_run::{RunConfig, run, trial_dir};

use crate::common::{read, write_suite};
use crate::documents::{bounded, self_referencing_pdf};

fn append(path: &Path, text: &str) {
    let mut s = read(path);
    s.push_str(text);
    std::fs::write(path, s).unwrap();
}

fn status(out: &Path, task: &str) -> (TrialStatus, String) {
    let r: bureau_core::result::TrialResult = serde_json::from_str(&read(
        &trial_dir(out, task, "oracle", 1).join("result.json"),
    ))
    .unwrap();
    (r.status, r.error.unwrap_or_default())
}

/// Three tasks in one suite, run two at a time: a sound one; one whose `checks.star` builds
/// 400,000 nested lists and prints them (a stack overflow in the checker took the whole
/// process down); one whose seed holds a self-referencing PDF that its solution reads (a
/// stack overflow in the PDF reader did the same).
#[test]
fn a_hostile_check_and_a_hostile_file_leave_the_rest_of_the_run_intact() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = write_suite(
        &tmp.path().join("suite"),
        &["sound", "deep-check", "evil-pdf"],
    );

    let deep = suite.join("deep-check");
    append(
        &deep.join("task.toml"),
        "\n[[rubric]]\nid = \"deep\"\ndescription = \"a hostile check\"\nkind = \"result\"\ncheck = \"nested\"\n",
    );
    std::fs::write(
        deep.join("checks.star"),
        "def nested(w):\n    x = []\n    for i in range(400000):\n        x = [x]\n    return len(str(x)) > 0\n",
    )
    .unwrap();

    let evil = suite.join("evil-pdf");
    std::fs::write(evil.join("world/files/evil.pdf"), self_referencing_pdf()).unwrap();
    append(
        &evil.join("solution/1.jsonl"),
        "{\"tool\":\"files_read\",\"args\":{\"path\":\"evil.pdf\"}}\n",
    );

    let out = tmp.path().join("run");
    let mut config = RunConfig::new(
        vec![suite.display().to_string()],
        vec!["oracle".into()],
        out.clone(),
    );
    config.quiet = true;
    config.retries = 0;
    config.concurrency = 2;
    let outcome = bounded(Duration::from_secs(300), "the run", move || run(&config)).unwrap();
    assert_eq!(outcome.total, 3);

    assert_eq!(status(&out, "sound").0, TrialStatus::Passed);
    // The hostile check is an error verdict naming the check: its trial is unscored.
    let (s, _) = status(&out, "deep-check");
    assert_eq!(s, TrialStatus::Error);
    let verdicts = read(&trial_dir(&out, "deep-check", "oracle", 1).join("verdicts.json"));
    assert!(verdicts.contains("check `nested`"), "{verdicts}");
    // The hostile file is a tool error the agent sees; the trial is scored on its work.
    assert_eq!(status(&out, "evil-pdf").0, TrialStatus::Passed);
    let trajectory = read(&trial_dir(&out, "evil-pdf", "oracle", 1).join("trajectory.jsonl"));
    let line = trajectory
        .lines()
        .find(|l| l.contains("\"files_read\"") && l.contains("evil.pdf"))
        .unwrap_or_else(|| panic!("{trajectory}"));
    assert!(line.contains("\"outcome\":\"error\""), "{line}");

    // Nothing was written beside the suite and the run directory.
    let mut top: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    top.sort();
    assert_eq!(top, ["run", "suite"]);
}
