//! The `bureau` binary, end to end.

// The task fixtures are shared with bureau-run's tests.
#[path = "../../run/tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::*;

fn bureau() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_bureau"));
    c.env("NO_COLOR", "1");
    c
}

fn run_ok(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        text(&out.stdout),
        text(&out.stderr)
    );
    out
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn trial(out: &Path, task: &str, agent: &str, epoch: u32) -> PathBuf {
    out.join("trials")
        .join(task)
        .join(agent)
        .join(epoch.to_string())
}

/// result.json as written, with the wall time (its only non-deterministic field) redacted.
fn redacted_result(path: &Path) -> String {
    assert!(json(path)["wall_seconds"].as_f64().unwrap() >= 0.0);
    read(path)
        .lines()
        .map(|l| match l.split_once("\"wall_seconds\": ") {
            Some((indent, _)) => format!("{indent}\"wall_seconds\": \"[wall]\","),
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn run_with_oracle_and_null_writes_the_run_directory_and_prints_the_table() {
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("memo");
    write_memo_task(&task, "memo");
    let out = tmp.path().join("run");
    let o = run_ok(
        bureau()
            .arg("run")
            .arg(&task)
            .args(["--agent", "oracle", "--agent", "null", "--quiet", "--out"])
            .arg(&out),
    );
    let stdout = text(&o.stdout);
    assert!(
        stdout.contains("oracle") && stdout.contains("null"),
        "the table names the agents:\n{stdout}"
    );
    let stderr = text(&o.stderr);
    assert!(
        stderr.contains("2 trial(s): 1 passed, 1 failed, 0 errored"),
        "{stderr}"
    );

    insta::assert_snapshot!(
        "oracle_result",
        redacted_result(&trial(&out, "memo", "oracle", 1).join("result.json"))
    );
    insta::assert_snapshot!(
        "null_result",
        redacted_result(&trial(&out, "memo", "null", 1).join("result.json"))
    );

    // --json prints summary.json as stored (re-running the same command resumes: nothing to do).
    let o = run_ok(
        bureau()
            .arg("run")
            .arg(&task)
            .args([
                "--agent", "oracle", "--agent", "null", "--quiet", "--json", "--out",
            ])
            .arg(&out),
    );
    assert_eq!(text(&o.stdout), read(&out.join("summary.json")));
    assert!(text(&o.stderr).contains("(0 run now, 2 already done)"));
}

#[test]
fn piped_runs_print_a_line_per_trial_and_quiet_silences_them() {
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("memo");
    write_memo_task(&task, "memo");
    // Without --out: the default run directory is new, unique and named at the start.
    let o = run_ok(
        bureau()
            .current_dir(tmp.path())
            .arg("run")
            .arg(&task)
            .args(["--agent", "oracle", "--agent", "null"]),
    );
    let stderr = text(&o.stderr);
    let first = stderr.lines().next().unwrap_or_default();
    assert!(first.starts_with("run directory: runs/"), "{stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with('[')).collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(
        lines[0].starts_with("[1/2] ") && lines[1].starts_with("[2/2] "),
        "{stderr}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("memo · oracle · epoch 1 · passed · score 1.000 ·")),
        "{stderr}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("memo · null · epoch 1 · failed · score")),
        "{stderr}"
    );
    let o = run_ok(
        bureau()
            .current_dir(tmp.path())
            .arg("run")
            .arg(&task)
            .args(["--agent", "oracle", "--quiet"]),
    );
    let stderr = text(&o.stderr);
    assert!(!stderr.contains("run directory:"), "{stderr}");
    assert!(!stderr.lines().any(|l| l.starts_with('[')), "{stderr}");
    let runs: Vec<_> = std::fs::read_dir(tmp.path().join("runs"))
        .unwrap()
        .collect();
    assert_eq!(runs.len(), 2, "two runs, two directories");
}

#[test]
fn report_rewrites_report_md_from_stored_results_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("memo");
    write_memo_task(&task, "memo");
    let out = tmp.path().join("run");
    run_ok(
        bureau()
            .arg("run")
            .arg(&task)
            .args(["--agent", "oracle", "--quiet", "--out"])
            .arg(&out),
    );
    let report = read(&out.join("report.md"));
    let summary = read(&out.join("summary.json"));
    std::fs::remove_file(out.join("report.md")).unwrap();
    // The task directory is gone: the report needs only the run directory.
    std::fs::remove_dir_all(&task).unwrap();
    run_ok(bureau().arg("report").arg(&out));
    assert_eq!(read(&out.join("report.md")), report);
    assert_eq!(read(&out.join("summary.json")), summary);

    let o = bureau().arg("report").arg(tmp.path()).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("is not a run directory"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn resume_after_a_simulated_crash_completes_only_the_missing_trials() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = write_suite(&tmp.path().join("suite"), &["a", "b", "c"]);
    let out = tmp.path().join("run");
    let cmd = |out: &Path| {
        let mut c = bureau();
        c.arg("run")
            .arg(&suite)
            .args(["--agent", "oracle", "--quiet", "--out"])
            .arg(out);
        c
    };
    run_ok(&mut cmd(&out));
    let a_before = read(&trial(&out, "a", "oracle", 1).join("result.json"));

    // b: killed during its first attempt (files in attempts/1, no attempt.json, no result.json);
    // c: never started.
    let b = trial(&out, "b", "oracle", 1);
    std::fs::remove_file(b.join("result.json")).unwrap();
    std::fs::create_dir_all(b.join("attempts/1")).unwrap();
    for f in ["trajectory.jsonl", "trial.zip"] {
        std::fs::rename(b.join(f), b.join("attempts/1").join(f)).unwrap();
    }
    std::fs::remove_dir_all(trial(&out, "c", "oracle", 1)).unwrap();

    let o = run_ok(&mut cmd(&out));
    assert!(
        text(&o.stderr)
            .contains("3 trial(s): 3 passed, 0 failed, 0 errored (2 run now, 1 already done)"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(
        read(&trial(&out, "a", "oracle", 1).join("result.json")),
        a_before
    );
    let rb = json(&b.join("result.json"));
    assert_eq!(rb["status"], "passed");
    assert_eq!(rb["attempts"][0]["attempt"], 1);
    assert_eq!(rb["attempts"][0]["status"], "error");
    assert_eq!(rb["attempts"][0]["dir"], "attempts/1");
    assert_eq!(rb["attempts"][1]["attempt"], 2);
    assert_eq!(rb["attempts"][1]["dir"], ".");
    assert!(b.join("attempts/1/trajectory.jsonl").is_file());
    assert!(b.join("trajectory.jsonl").is_file() && b.join("verdicts.json").is_file());
    assert_eq!(
        json(&trial(&out, "c", "oracle", 1).join("result.json"))["attempts"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn resume_after_the_process_is_killed_loses_and_duplicates_no_trial() {
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("memo");
    write_memo_task(&task, "memo");
    let out = tmp.path().join("run");
    const EPOCHS: u32 = 60;
    let args = |c: &mut Command| {
        c.arg("run")
            .arg(&task)
            .args([
                "--agent",
                "oracle",
                "--quiet",
                "--epochs",
                &EPOCHS.to_string(),
                "--out",
            ])
            .arg(&out);
    };
    let mut c = bureau();
    args(&mut c);
    let mut child = c
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let results = |out: &Path| {
        (1..=EPOCHS)
            .filter(|e| {
                trial(out, "memo", "oracle", *e)
                    .join("result.json")
                    .is_file()
            })
            .count()
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    while results(&out) < 3 && Instant::now() < deadline && child.try_wait().unwrap().is_none() {
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let done_before = results(&out);
    assert!(done_before >= 3, "the run got going before the kill");
    assert!(
        done_before < EPOCHS as usize,
        "the kill came before the end of the run"
    );

    let mut c = bureau();
    args(&mut c);
    let o = run_ok(&mut c);
    let stderr = text(&o.stderr);
    assert!(
        stderr.contains(&format!("{EPOCHS} trial(s): {EPOCHS} passed")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("{} already done", done_before)),
        "skips exactly the finished trials: {stderr}"
    );

    // Each epoch's verdicts, without the epoch the entries are labelled with.
    let unlabelled = |dir: &Path, epoch: u32| -> Vec<serde_json::Value> {
        let mut v: Vec<serde_json::Value> =
            serde_json::from_slice(&std::fs::read(dir.join("verdicts.json")).unwrap()).unwrap();
        for e in &mut v {
            assert_eq!(e["epoch"], epoch);
            e.as_object_mut().unwrap().remove("epoch");
        }
        v
    };
    let reference = unlabelled(&trial(&out, "memo", "oracle", 1), 1);
    for e in 1..=EPOCHS {
        let dir = trial(&out, "memo", "oracle", e);
        let r = json(&dir.join("result.json"));
        assert_eq!(r["epoch"], e);
        assert_eq!(r["status"], "passed");
        let attempts = r["attempts"].as_array().unwrap();
        let last = attempts.last().unwrap();
        assert_eq!(last["dir"], ".");
        let numbers: Vec<u64> = attempts
            .iter()
            .map(|a| a["attempt"].as_u64().unwrap())
            .collect();
        assert_eq!(
            numbers,
            (1..=attempts.len() as u64).collect::<Vec<_>>(),
            "epoch {e}: attempt numbers continue"
        );
        assert_eq!(unlabelled(&dir, e), reference, "epoch {e}");
        let stray: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|x| x.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect();
        assert!(stray.is_empty(), "epoch {e}: {stray:?}");
    }
    let dirs = std::fs::read_dir(out.join("trials/memo/oracle"))
        .unwrap()
        .count();
    assert_eq!(dirs, EPOCHS as usize, "no extra trial directory");
}

#[test]
fn a_malformed_task_prints_located_errors_and_exits_2() {
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("broken");
    write_memo_task(&task, "broken");
    let toml = read(&task.join("task.toml"));
    let toml = toml.replace("difficulty = \"easy\"", "difficulty = \"trivial\"");
    std::fs::write(task.join("task.toml"), toml).unwrap();
    let o = bureau()
        .arg("run")
        .arg(&task)
        .args(["--agent", "oracle", "--quiet", "--out"])
        .arg(tmp.path().join("run"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let stderr = text(&o.stderr).replace(&tmp.path().display().to_string(), "[TMP]");
    insta::assert_snapshot!("malformed_task_stderr", stderr);
    assert!(
        !tmp.path().join("run").exists(),
        "nothing runs when a task does not load"
    );

    // A check that names no function of checks.star is a load error too.
    let task2 = tmp.path().join("nocheck");
    write_memo_task(&task2, "nocheck");
    let toml = read(&task2.join("task.toml"));
    std::fs::write(task2.join("task.toml"), format!("{toml}\n[[rubric]]\nid = \"x\"\ndescription = \"x\"\nkind = \"result\"\ncheck = \"missing_fn\"\n")).unwrap();
    std::fs::write(
        task2.join("checks.star"),
        "def other(w):\n    return True\n",
    )
    .unwrap();
    let o = bureau()
        .arg("run")
        .arg(&task2)
        .args(["--agent", "oracle", "--quiet", "--out"])
        .arg(tmp.path().join("run2"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let stderr = text(&o.stderr);
    let line = stderr.lines().next().unwrap();
    assert!(
        line.contains("task.toml:")
            && line.contains("unknown Starlark function `missing_fn` — define"),
        "{stderr}"
    );

    let o = bureau().arg("tasks").arg(&task).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("task.toml:5:14: unknown variant `trivial`"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn bad_agents_and_foreign_run_directories_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("memo");
    write_memo_task(&task, "memo");
    let out = tmp.path().join("run");
    let o = bureau()
        .arg("run")
        .arg(&task)
        .args(["--agent", "gpt-9", "--quiet", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("unknown agent `gpt-9`"),
        "{}",
        text(&o.stderr)
    );

    run_ok(
        bureau()
            .arg("run")
            .arg(&task)
            .args(["--agent", "oracle", "--quiet", "--out"])
            .arg(&out),
    );
    let o = bureau()
        .arg("run")
        .arg(&task)
        .args(["--agent", "null", "--quiet", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("holds a different run"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn llm_agents_without_a_model_a_key_or_a_sound_agents_file_exit_2_before_running() {
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("memo");
    write_memo_task(&task, "memo");
    let out = tmp.path().join("run");
    let run = |extra: &[&str]| {
        let o = bureau()
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .arg("run")
            .arg(&task)
            .args(["--quiet", "--out"])
            .arg(&out)
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
        text(&o.stderr)
    };
    let e = run(&["--agent", "llm"]);
    assert!(
        e.contains("`--agent llm` needs a model — add --model"),
        "{e}"
    );
    let e = run(&["--agent", "llm", "--model", "openai:gpt-4.1-mini"]);
    assert!(
        e.contains("OPENAI_API_KEY is not set — export the openai API key"),
        "{e}"
    );
    let e = run(&["--agent", "llm", "--model", "gpt-4.1-mini"]);
    assert!(e.contains("model `gpt-4.1-mini` names no provider"), "{e}");

    let agents = tmp.path().join("agents.toml");
    std::fs::write(
        &agents,
        "[agents.mini]\nkind = \"llm\"\nmodel = \"openai:gpt-4.1-mini\"\ntemperature = 5\n",
    )
    .unwrap();
    let e = run(&["--agent", "mini", "--agents-file", agents.to_str().unwrap()]);
    assert!(
        e.contains(&format!(
            "{}:4:15: temperature 5 is out of range — give a value from 0 to 2",
            agents.display()
        )),
        "{e}"
    );
    assert!(
        !out.exists(),
        "nothing is written before the agents are sound"
    );
}

#[test]
fn validate_exits_0_on_sound_tasks_and_1_with_a_table_of_offenders() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = write_suite(&tmp.path().join("suite"), &["a", "b"]);
    // The validation cache of this test only.
    let cache = tmp.path().join("cache");
    let validate = || {
        let mut c = bureau();
        c.env("BUREAU_CACHE_DIR", &cache).arg("validate");
        c
    };
    let o = run_ok(validate().arg(&suite));
    assert_eq!(text(&o.stdout), "2 tasks valid (2 with authored oracle)\n");

    write_memo_task_with(&suite.join("c"), "c", 100, "");
    // `a` and `b` come from the cache; only `c` is validated.
    let o = validate().arg(&suite).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    let stdout = text(&o.stdout);
    let mut lines = stdout.lines();
    assert_eq!(
        lines.next().unwrap().split_whitespace().collect::<Vec<_>>(),
        vec!["TASK", "PROBLEM"]
    );
    let row = lines.next().unwrap();
    assert_eq!(row.split_whitespace().next(), Some("c"), "{stdout}");
    assert!(
        row.contains(" the oracle does not reach strict success; not passed: memo-written"),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("1 of 3 tasks invalid; 2 valid (2 with authored oracle, 2 from cache)\n"),
        "{stdout}"
    );

    // A subset of the suite leaves the offender out.
    let o = run_ok(validate().arg(format!("{}@lite", suite.display())));
    assert_eq!(
        text(&o.stdout),
        "1 tasks valid (1 with authored oracle, 1 from cache)\n"
    );
    // --no-cache validates it again.
    let o = run_ok(
        validate()
            .arg("--no-cache")
            .arg(format!("{}@lite", suite.display())),
    );
    assert_eq!(text(&o.stdout), "1 tasks valid (1 with authored oracle)\n");
}

#[test]
fn tasks_lists_id_difficulty_category_turns_items_and_apps() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = write_suite(&tmp.path().join("suite"), &["a", "b"]);
    let o = run_ok(bureau().arg("tasks").arg(&suite));
    insta::assert_snapshot!("tasks_table", text(&o.stdout));
}

#[test]
fn help_texts() {
    for (name, args) in [
        ("help", vec!["--help"]),
        ("help_run", vec!["run", "--help"]),
        ("help_validate", vec!["validate", "--help"]),
        ("help_report", vec!["report", "--help"]),
        ("help_tasks", vec!["tasks", "--help"]),
        ("help_mcp", vec!["mcp", "--help"]),
        ("help_play", vec!["play", "--help"]),
        ("help_view", vec!["view", "--help"]),
        ("help_submit", vec!["submit", "--help"]),
        ("help_submit_slurm", vec!["submit", "slurm", "--help"]),
        ("help_submit_k8s", vec!["submit", "k8s", "--help"]),
    ] {
        let o = run_ok(bureau().args(&args));
        insta::assert_snapshot!(name, text(&o.stdout));
    }
}

#[test]
fn mcp_needs_a_task_or_a_trial_and_reports_bad_tasks_like_run() {
    let o = bureau().arg("mcp").output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("--task"), "{}", text(&o.stderr));

    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("broken");
    write_memo_task(&task, "broken");
    let toml =
        read(&task.join("task.toml")).replace("difficulty = \"easy\"", "difficulty = \"trivial\"");
    std::fs::write(task.join("task.toml"), toml).unwrap();
    let o = bureau()
        .args(["mcp", "--task"])
        .arg(&task)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("task.toml:"),
        "{}",
        text(&o.stderr)
    );
    assert!(o.stdout.is_empty(), "nothing on the protocol channel");

    // A client that closes stdin at once ends the play cleanly; the kept world is there.
    let good = tmp.path().join("good");
    write_memo_task(&good, "good");
    let o = bureau()
        .args(["mcp", "--task"])
        .arg(&good)
        .arg("--world-dir")
        .arg(tmp.path().join("play"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(o.stdout.is_empty());
    assert!(
        text(&o.stderr).contains("was not finished"),
        "{}",
        text(&o.stderr)
    );
    assert!(tmp.path().join("play/world/workspace/readme.txt").is_file());
}

// ---- bureau gen (issue 5) ----
#[test]
fn gen_workspace_writes_the_tree_and_manifest_and_refuses_a_non_empty_out() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ws");
    let args = |extra: &[&str]| {
        let mut c = bureau();
        c.args([
            "gen",
            "workspace",
            "--persona",
            "backend-developer",
            "--files",
            "60",
        ])
        .args(["--seed", "5", "--out"])
        .arg(&out)
        .args(extra);
        c
    };
    let o = run_ok(&mut args(&[]));
    let line = text(&o.stdout);
    assert!(
        line.contains(": 60 files,") && line.contains("depth "),
        "{line}"
    );
    let manifest = std::fs::read_to_string(out.join(".bureau/manifest.json")).unwrap();
    let m: serde_json::Value = serde_json::from_str(&manifest).unwrap();
    assert_eq!(m["persona"], "backend-developer");
    assert_eq!(m["files"].as_array().unwrap().len(), 60);
    // A non-empty --out is refused (exit 2) unless --force; --force gives the same manifest.
    let o = args(&[]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("not empty"), "{}", text(&o.stderr));
    run_ok(&mut args(&["--force"]));
    assert_eq!(
        std::fs::read_to_string(out.join(".bureau/manifest.json")).unwrap(),
        manifest
    );
    // Bad input names the problem.
    let o = bureau()
        .args([
            "gen",
            "workspace",
            "--persona",
            "chef",
            "--files",
            "60",
            "--out",
        ])
        .arg(dir.path().join("other"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("researcher"),
        "{}",
        text(&o.stderr)
    );
}

/// Issue 13: `bureau agents check` says, per agent, what it needs and what is missing, and
/// exits 2 when one cannot work.
#[test]
fn agents_check_names_what_each_agent_lacks() {
    let dir = tempfile::tempdir().unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let up = listener.local_addr().unwrap().port();
    let down = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let agents = dir.path().join("agents.toml");
    std::fs::write(
        &agents,
        format!(
            "[agents.local]\nkind = \"llm\"\nmodel = \"openai:m\"\nbase_url = \"http://127.0.0.1:{up}/v1\"\n\
             [agents.gone]\nkind = \"llm\"\nmodel = \"openai:m\"\nbase_url = \"http://127.0.0.1:{down}/v1\"\n\
             [agents.missing]\nharness = \"command\"\ncommand = [\"/nonexistent/harness\", \"{{prompt}}\"]\n"
        ),
    )
    .unwrap();
    let out = bureau()
        .args(["agents", "check", "oracle", "local"])
        .arg("--agents-file")
        .arg(&agents)
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains(&format!(
            "ok    model endpoint: the model API http://127.0.0.1:{up} accepts connections"
        )),
        "{stdout}"
    );

    let out = bureau()
        .args(["agents", "check", "gone", "missing", "no-such-agent"])
        .arg("--agents-file")
        .arg(&agents)
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "FAIL  model endpoint: the model API http://127.0.0.1:{down} refuses connections"
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "FAIL  program: agent `missing`: the program `/nonexistent/harness` does not exist"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("FAIL  agent: unknown agent `no-such-agent`"),
        "{stdout}"
    );
    assert!(
        text(&out.stderr).contains("3 of 3 agent(s) cannot work"),
        "{}",
        text(&out.stderr)
    );
    drop(listener);
}

/// A fake harness program `name` in `bin`, run by a fake `python3` (as pip writes a script's
/// `#!` line): `--version` prints `version`; `python3 -c ...` (Bureau's check that Hermes's
/// Python imports `mcp`) succeeds only when `mcp` is true.
fn fake_python_harness(bin: &std::path::Path, name: &str, version: &str, mcp: bool) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(bin).unwrap();
    let python = bin.join("python3");
    let import = if mcp {
        "exit 0".to_string()
    } else {
        "echo \"ModuleNotFoundError: No module named 'mcp'\" >&2; exit 1".to_string()
    };
    std::fs::write(
        &python,
        format!("#!/bin/sh\nif [ \"$1\" = -c ]; then {import}; fi\necho '{version}'\n"),
    )
    .unwrap();
    let program = bin.join(name);
    std::fs::write(&program, format!("#!{}\n", python.display())).unwrap();
    for p in [&python, &program] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// Issue 13: a Hermes without `mcp` (Bureau's tools would be silently absent), a Hermes older
/// than the verified one, and an OpenHands without its key each get one clear line naming the
/// fix, and exit 2.
#[test]
fn agents_check_names_a_hermes_without_mcp_an_old_one_and_an_openhands_without_a_key() {
    let dir = tempfile::tempdir().unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let up = listener.local_addr().unwrap().port();
    let no_mcp = dir.path().join("no-mcp");
    let old = dir.path().join("old");
    let good = dir.path().join("good");
    fake_python_harness(&no_mcp, "hermes", "Hermes Agent v0.19.0 (2026.7.20)", false);
    fake_python_harness(&old, "hermes", "Hermes Agent v0.18.2 (2026.6.1)", true);
    fake_python_harness(&good, "hermes", "Hermes Agent v0.19.0 (2026.7.20)", true);
    let openhands = dir.path().join("openhands");
    fake_python_harness(&openhands, "openhands", "OpenHands CLI 1.16.0", true);
    let agents = dir.path().join("agents.toml");
    let hermes = |name: &str, bin: &std::path::Path| {
        format!(
            "[agents.{name}]\nharness = \"hermes\"\nmodel = \"gpt-4o\"\n\
             env = {{ PATH = \"{}\", CUSTOM_BASE_URL = \"http://127.0.0.1:{up}/v1\" }}\n",
            bin.display()
        )
    };
    std::fs::write(
        &agents,
        format!(
            "{}{}{}[agents.oh]\nharness = \"openhands\"\nmodel = \"openai/gpt-4o\"\n\
             env = {{ PATH = \"{}\", LLM_BASE_URL = \"http://127.0.0.1:{up}/v1\", LLM_API_KEY = \"\" }}\n",
            hermes("hm-no-mcp", &no_mcp),
            hermes("hm-old", &old),
            hermes("hm", &good),
            openhands.display()
        ),
    )
    .unwrap();
    let out = bureau()
        .args(["agents", "check", "hm"])
        .arg("--agents-file")
        .arg(&agents)
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("ok    mcp support: "), "{stdout}");
    assert!(
        stdout.contains("ok    version: Hermes Agent v0.19.0"),
        "{stdout}"
    );

    let out = bureau()
        .args(["agents", "check", "hm-no-mcp", "hm-old", "oh"])
        .arg("--agents-file")
        .arg(&agents)
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}{}", text(&out.stderr));
    let fails: Vec<&str> = stdout.lines().filter(|l| l.contains("FAIL")).collect();
    assert_eq!(fails.len(), 3, "{stdout}");
    assert!(
        fails[0].contains("FAIL  mcp support: Hermes's Python")
            && fails[0].contains("cannot import `mcp`")
            && fails[0].contains("No module named 'mcp'")
            && fails[0].contains("hermes-agent[mcp]==0.19.0"),
        "{stdout}"
    );
    assert!(
        fails[1].contains("FAIL  version: Hermes Agent v0.18.2")
            && fails[1].contains("older than 0.19.0")
            && fails[1].contains("pip install 'hermes-agent[mcp]==0.19.0'"),
        "{stdout}"
    );
    assert!(
        fails[2].contains("FAIL  settings: OpenHands") && fails[2].contains("`LLM_API_KEY`"),
        "{stdout}"
    );
    assert!(
        text(&out.stderr).contains("3 of 3 agent(s) cannot work"),
        "{}",
        text(&out.stderr)
    );

    // `bureau run` refuses the Hermes without `mcp` before any trial, with the same line.
    let task = dir.path().join("memo");
    write_memo_task(&task, "memo");
    let out = bureau()
        .arg("run")
        .arg(&task)
        .args(["--quiet", "--agent", "hm-no-mcp", "--out"])
        .arg(dir.path().join("run"))
        .arg("--agents-file")
        .arg(&agents)
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("agent `hm-no-mcp`: Hermes's Python") && stderr.contains("`mcp`"),
        "{stderr}"
    );
    assert!(!dir.path().join("run/trials").exists(), "no trial ran");
    drop(listener);
}

#[test]
fn import_officebench_says_what_it_imported_skipped_and_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../import/tests/fixtures/officebench-mini");
    let out = tmp.path().join("ob");
    let o = bureau()
        .args(["import", "officebench"])
        .arg(&fixture)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    // something was skipped or refused
    assert_eq!(o.status.code(), Some(3));
    let stdout = text(&o.stdout);
    assert!(
        stdout.starts_with("imported 17 of 21, skipped 1 (1 × image output: OfficeBench checks an image file the agent makes; no Bureau tool makes an image file)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("refused 3 (4 located error(s))"),
        "{stdout}"
    );
    assert!(
        stdout.contains("\nfacts in pictures or scans: 2 task(s) (1 × reading images; 1 × reading scanned PDFs); every task offers files_ocr\n"),
        "{stdout}"
    );
    let stderr = text(&o.stderr);
    assert!(
        stderr.contains("tasks/3-900/subtasks/0.json:9: evaluation 1: unknown evaluation function `evaluate_magic`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("tasks/3-901/testbed/emails/Alice/broken.eml: the .eml does not parse"),
        "{stderr}"
    );

    // validate counts the skipped tasks and says why
    let o = bureau().arg("validate").arg(&out).output().unwrap();
    let stdout = text(&o.stdout);
    assert!(
        stdout.contains("1 skipped by their skip_reason (1 × image output"),
        "{stdout}"
    );

    // not an OfficeBench checkout: bad input, nothing written
    let o = bureau()
        .args(["import", "officebench"])
        .arg(tmp.path().join("nothing-here"))
        .arg("--out")
        .arg(tmp.path().join("x"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("no readable tasks/ folder"));
    assert!(!tmp.path().join("x").exists());
}
