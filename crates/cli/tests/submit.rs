//! `bureau submit slurm|k8s` without a cluster: the files written, bad input refused.

use std::path::Path;
use std::process::Command;

fn bureau() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bureau"))
}

fn starter() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../suites/starter")
        .to_string_lossy()
        .into_owned()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The words `sh` makes of the `exec` line of `script`, with `var` set to `value`.
fn exec_words(script: &str, var: &str, value: &str) -> Vec<String> {
    let line = script
        .lines()
        .find_map(|l| l.strip_prefix("exec "))
        .unwrap();
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!("{var}={value}; printf '%s\\n' {line}"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    text(&o.stdout).lines().map(String::from).collect()
}

#[test]
fn slurm_dry_run_writes_scripts_whose_paths_survive_the_shell() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("it's a \"run\"");
    let agents_file = tmp.path().join("my agents.toml");
    std::fs::write(&agents_file, "").unwrap();
    let o = bureau()
        .args([
            "submit",
            "slurm",
            &starter(),
            "--agent",
            "oracle",
            "--agent",
            "null",
        ])
        .args([
            "--epochs",
            "3",
            "--shards",
            "4",
            "--dry-run",
            "--time",
            "0:30:00",
        ])
        .arg("--agents-file")
        .arg(&agents_file)
        .arg("--bureau")
        .arg("/opt/a b/bureau")
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("nothing submitted"));
    let shards = std::fs::read_to_string(out.join("slurm/shards.sbatch")).unwrap();
    assert!(text(&o.stdout).contains(&shards));
    assert!(shards.contains("#SBATCH --array=1-4\n"));
    assert!(shards.contains("#SBATCH --time=0:30:00\n"));
    let words = exec_words(&shards, "SLURM_ARRAY_TASK_ID", "2");
    let out_s = out.to_str().unwrap();
    let expected: Vec<String> = [
        "/opt/a b/bureau",
        "run",
        &std::path::absolute(starter()).unwrap().to_string_lossy(),
        "--agent",
        "oracle",
        "--agent",
        "null",
        "--agents-file",
        agents_file.to_str().unwrap(),
        "--epochs",
        "3",
        "--concurrency",
        "1",
        "--out",
        out_s,
        "--shard",
        "2/4",
        "--quiet",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(words, expected);
    let report = std::fs::read_to_string(out.join("slurm/report.sbatch")).unwrap();
    assert_eq!(
        exec_words(&report, "X", ""),
        ["/opt/a b/bureau", "report", out_s, "--html"]
    );
}

#[test]
fn submit_refuses_bad_input_before_writing() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    // No shards.
    let o = bureau()
        .args([
            "submit",
            "slurm",
            &starter(),
            "--agent",
            "oracle",
            "--shards",
            "0",
            "--dry-run",
        ])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("--shards 0"),
        "{}",
        text(&o.stderr)
    );
    // Targets that do not load.
    let o = bureau()
        .args([
            "submit",
            "slurm",
            "no/such/suite",
            "--agent",
            "oracle",
            "--shards",
            "2",
            "--dry-run",
        ])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("no/such/suite"),
        "{}",
        text(&o.stderr)
    );
    // No sbatch: one line naming the package and --dry-run.
    let o = bureau()
        .args([
            "submit",
            "slurm",
            &starter(),
            "--agent",
            "oracle",
            "--shards",
            "2",
        ])
        .arg("--out")
        .arg(&out)
        .env("PATH", tmp.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("slurm-client") && err.contains("--dry-run"),
        "{err}"
    );
    // k8s needs an image.
    let o = bureau()
        .args([
            "submit",
            "k8s",
            &starter(),
            "--agent",
            "oracle",
            "--shards",
            "2",
            "--image",
            "",
        ])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(!out.exists());
}

#[test]
fn k8s_writes_an_indexed_job_without_secret_values() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("sweep");
    let key = "sk-bureau-test-key-that-must-not-appear";
    let o = bureau()
        .args([
            "submit",
            "k8s",
            "suites/starter",
            "--agent",
            "oracle",
            "--shards",
            "3",
        ])
        .args([
            "--image",
            "reg/bureau:1",
            "--pvc",
            "runs",
            "--secret",
            "keys",
        ])
        .arg("--out")
        .arg(&out)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .env("OPENAI_API_KEY", key)
        .env("ANTHROPIC_API_KEY", key)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let yaml = std::fs::read_to_string(out.join("k8s/job.yaml")).unwrap();
    assert!(!yaml.contains(key));
    let v: serde_json::Value = {
        let y: serde_yaml::Value = serde_yaml::from_str(&yaml).unwrap();
        serde_json::to_value(y).unwrap()
    };
    assert_eq!(v["spec"]["completionMode"], "Indexed");
    assert_eq!(v["spec"]["completions"], 3);
    let args = v["spec"]["template"]["spec"]["containers"][0]["args"][0]
        .as_str()
        .unwrap();
    assert!(
        args.contains("--out /runs/sweep --shard \"$((JOB_COMPLETION_INDEX + 1))/3\""),
        "{args}"
    );
    assert!(text(&o.stderr).contains("kubectl wait"));
    let report = std::fs::read_to_string(out.join("k8s/report.yaml")).unwrap();
    assert!(report.contains("report /runs/sweep --html"));
}
