//! Trials of `[workspace]` tasks run on pooled replicas of the generated workspace
//! (`--replicas`): the verdicts are those of a copy per trial, whatever the backend, also when
//! trials of one workspace run in parallel and replicas are reset and reused between them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use bureau_core::result::{TrialResult, TrialStatus};
use bureau_run::{ReplicaMode, RunConfig, run, trial_dir};

/// All tests of this binary share one private cache of generated workspaces.
fn cache() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = tempfile::tempdir().unwrap().keep();
        // SAFETY: set once, before any test of this binary reads it (all go through here).
        unsafe { std::env::set_var("BUREAU_CACHE_DIR", &d) };
        d
    })
}

fn suite(subset: &str) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../suites/workspace");
    format!("{}{subset}", dir.display())
}

fn run_mode(target: &str, mode: ReplicaMode, epochs: u32, concurrency: usize) -> PathBuf {
    cache();
    let out = tempfile::tempdir().unwrap().keep();
    let mut c = RunConfig::new(vec![target.to_string()], vec!["oracle".into()], out.clone());
    c.quiet = true;
    c.replicas = mode;
    c.epochs = epochs;
    c.concurrency = concurrency;
    let outcome = run(&c).unwrap();
    assert!(
        outcome.replica_errors.is_empty(),
        "{:?}",
        outcome.replica_errors
    );
    out
}

/// task/epoch → (status, verdicts.json) of every trial.
fn verdicts(out: &Path) -> BTreeMap<String, (TrialStatus, String)> {
    let mut m = BTreeMap::new();
    for entry in std::fs::read_dir(out.join("trials")).unwrap() {
        let task = entry.unwrap().file_name().to_string_lossy().into_owned();
        for epoch in 1..=8 {
            let dir = trial_dir(out, &task, "oracle", epoch);
            if !dir.is_dir() {
                continue;
            }
            let r: TrialResult =
                serde_json::from_str(&std::fs::read_to_string(dir.join("result.json")).unwrap())
                    .unwrap();
            // The verdicts without the epoch each entry is labelled with.
            let mut v: Vec<serde_json::Value> =
                serde_json::from_str(&std::fs::read_to_string(dir.join("verdicts.json")).unwrap())
                    .unwrap();
            for e in &mut v {
                assert_eq!(e["epoch"], epoch);
                e.as_object_mut().unwrap().remove("epoch");
            }
            m.insert(
                format!("{task}/{epoch}"),
                (r.status, serde_json::to_string_pretty(&v).unwrap()),
            );
        }
    }
    m
}

fn blob_bytes(out: &Path) -> u64 {
    walkdir::WalkDir::new(out.join("trials"))
        .min_depth(3)
        .max_depth(3)
        .into_iter()
        .filter_map(Result::ok)
        .map(|e| {
            let files = bureau_world::trial_files::TrialFiles::open(e.path()).unwrap();
            files.list("world/blobs").unwrap().values().sum::<u64>()
        })
        .sum()
}

fn replicas_json(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("replicas.json")).unwrap()).unwrap()
}

#[test]
fn every_backend_gives_the_verdicts_of_a_copy_per_trial() {
    let lite = suite("@lite");
    let copied = run_mode(&lite, ReplicaMode::Off, 1, 2);
    let want = verdicts(&copied);
    assert_eq!(want.len(), 5);
    assert!(
        want.values().all(|(s, _)| *s == TrialStatus::Passed),
        "{want:#?}"
    );
    assert!(!copied.join("replicas.json").exists());
    let run_json = std::fs::read_to_string(copied.join("run.json")).unwrap();
    assert!(run_json.contains("\"replicas\": \"off\""), "{run_json}");

    for (mode, backend) in [
        (ReplicaMode::Overlay, "overlay"),
        (ReplicaMode::Portable, "portable"),
    ] {
        let out = run_mode(&lite, mode, 1, 2);
        assert_eq!(verdicts(&out), want, "{mode} differs from a copy per trial");
        let rec = replicas_json(&out);
        let backends = rec["backends"].as_object().unwrap();
        assert_eq!(backends.len(), 5, "one pool per workspace: {rec}");
        assert!(backends.values().all(|b| b == backend), "{rec}");
        // Generated contents stay out of the trial directories either way.
        assert!(blob_bytes(&out) <= blob_bytes(&copied) + 4096);
    }
}

#[test]
fn parallel_trials_of_one_workspace_share_a_pool_and_reset_between_trials() {
    // Three tasks on the same researcher workspace, three epochs each, two at a time: nine
    // trials over two replicas, each reset and reused; every trial sees a clean workspace.
    let tasks = [
        "research-quarter-total",
        "research-top-region-lead",
        "research-final-version-terms",
    ];
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../suites/workspace");
    // A suite with just those tasks: link them into a directory of its own.
    let local = dir.path().join("research");
    std::fs::create_dir_all(&local).unwrap();
    std::fs::write(
        local.join("suite.toml"),
        "id = \"research\"\ntitle = \"R\"\ndescription = \"R\"\n",
    )
    .unwrap();
    for t in tasks {
        std::os::unix::fs::symlink(src.join(t).canonicalize().unwrap(), local.join(t)).unwrap();
    }
    let target = local.display().to_string();
    let out = run_mode(&target, ReplicaMode::Overlay, 3, 2);
    let got = verdicts(&out);
    assert_eq!(got.len(), 9, "{got:#?}");
    assert!(
        got.values().all(|(s, _)| *s == TrialStatus::Passed),
        "{got:#?}"
    );
    for t in tasks {
        let first = &got[&format!("{t}/1")].1;
        for e in 2..=3 {
            assert_eq!(&got[&format!("{t}/{e}")].1, first, "{t} epoch {e}");
        }
    }
    let rec = replicas_json(&out);
    assert_eq!(rec["backends"].as_object().unwrap().len(), 1, "{rec}");
    assert_eq!(rec["reset_errors"].as_array().unwrap().len(), 0, "{rec}");
}
