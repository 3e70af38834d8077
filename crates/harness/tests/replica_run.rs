//! A harness process in a real trial on an overlay replica (`bureau run --replicas overlay`):
//! it runs inside the replica's namespaces, so its working directory, every path it derives
//! from it, and git all name the workspace — and what it writes is what the trial collects.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use bureau_run::{ReplicaMode, RunConfig, run_with_catalog, trial_dir};

fn cache() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = tempfile::tempdir().unwrap().keep();
        // SAFETY: set once, before any test of this binary reads it (all go through here).
        unsafe { std::env::set_var("BUREAU_CACHE_DIR", &d) };
        d
    })
}

const SCRIPT: &str = "pwd > where.txt && python3 -c 'import os; print(os.getcwd())' >> where.txt \
    && git init -q . && git add where.txt && git -c user.email=a@b -c user.name=a commit -qm x \
    && git log --format=%s >> where.txt && ls >> where.txt && echo done";

fn run(mode: ReplicaMode) -> (String, serde_json::Value) {
    cache();
    let dir = tempfile::tempdir().unwrap().keep();
    let agents = dir.join("agents.toml");
    std::fs::write(
        &agents,
        format!(
            "[agents.sh]\nharness = \"command\"\nformat = \"text\"\ncommand = [\"sh\", \"-c\", {}]\n",
            serde_json::to_string(SCRIPT).unwrap()
        ),
    )
    .unwrap();
    let task =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../suites/workspace/research-quarter-total");
    let out = dir.join("run");
    let mut c = RunConfig::new(
        vec![task.display().to_string()],
        vec!["sh".into()],
        out.clone(),
    );
    c.quiet = true;
    c.retries = 0;
    c.agents_file = Some(agents);
    c.replicas = mode;
    let outcome = run_with_catalog(&c, bureau_harness::catalog()).unwrap();
    assert!(
        outcome.replica_errors.is_empty(),
        "{:?}",
        outcome.replica_errors
    );
    let trial = trial_dir(&out, "research-quarter-total", "sh", 1);
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(trial.join("result.json")).unwrap()).unwrap();
    let where_ = bureau_world::trial_files::TrialFiles::open(&trial)
        .and_then(|f| f.read("deliverables/where.txt", 1 << 20))
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_else(|e| panic!("{e}: {result:#}"));
    (where_, result)
}

#[test]
fn a_harness_in_an_overlay_replica_sees_the_workspace_under_its_own_name() {
    let (text, result) = run(ReplicaMode::Overlay);
    assert_ne!(result["status"], "error", "{result:#}");
    let lines: Vec<&str> = text.lines().collect();
    // pwd and getcwd() agree, name the merged directory inside the replica (not a /proc path),
    // and git worked there.
    assert_eq!(lines[0], lines[1], "{text}");
    assert!(!lines[0].starts_with("/proc/"), "{text}");
    assert_eq!(lines[2], "x", "{text}");
    // The generated workspace is what the harness sees.
    assert!(lines.len() > 5, "{text}");

    // On a copy per trial the same harness leaves the same listing.
    let (copied, _) = run(ReplicaMode::Off);
    assert_eq!(
        copied.lines().skip(2).collect::<Vec<_>>(),
        lines[2..],
        "{copied}"
    );
}
