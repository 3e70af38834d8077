//! SIGINT/SIGTERM stop `bureau run` cleanly: every harness process is killed (its process
//! group and, where a cgroup is writable, every process it started), the private directory
//! holding the MCP token is removed, the attempt in progress is recorded as interrupted and
//! never scored, the exit code is 128 + the signal, and the same command resumes the run.

#[path = "../../run/tests/common/mod.rs"]
mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

fn alive(pid: i32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    !stat.is_empty()
        && !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
}

/// The harness: notes its private directory (where `{mcp_config}` is), its own pid, a child
/// in its group and a child that left the group with `setsid`, then hangs.
fn hanging_harness(log: &Path) -> String {
    let script = format!(
        "echo \"dir $(dirname \"$1\")\" >> {log}; echo \"pid $$\" >> {log}; \
         sleep 300 & echo \"pid $!\" >> {log}; \
         setsid -f sh -c 'echo \"pid $$\" >> {log}; exec sleep 301'; \
         echo ready >> {log}; wait",
        log = log.display()
    );
    format!(
        "[agents.hang]\nharness = \"command\"\ncommand = [\"sh\", \"-c\", {}, \"sh\", \"{{mcp_config}}\"]\n",
        serde_json::to_string(&script).unwrap()
    )
}

fn wait_for(log: &Path, what: &str, within: Duration) -> String {
    let start = Instant::now();
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if text.lines().filter(|l| l.starts_with("pid ")).count() >= 3 && text.contains(what) {
            return text;
        }
        assert!(
            start.elapsed() < within,
            "the harness never got going: {text}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn interrupt_with(signal: i32, code: i32, name: &str) {
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("memo");
    write_memo_task(&task, "memo");
    let log = dir.path().join("harness.log");
    let agents = dir.path().join("agents.toml");
    std::fs::write(&agents, hanging_harness(&log)).unwrap();
    let out = dir.path().join("run");
    let mut child = Command::new(env!("CARGO_BIN_EXE_bureau"))
        .args(["run"])
        .arg(&task)
        .args(["--agent", "hang", "--quiet", "--agents-file"])
        .arg(&agents)
        .arg("--out")
        .arg(&out)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let text = wait_for(&log, "ready", Duration::from_secs(60));
    let private = text
        .lines()
        .find_map(|l| l.strip_prefix("dir "))
        .unwrap()
        .to_string();
    assert!(Path::new(&private).join("mcp.json").is_file());
    let pids: Vec<i32> = text
        .lines()
        .filter_map(|l| l.strip_prefix("pid "))
        .map(|p| p.trim().parse().unwrap())
        .collect();
    assert!(pids.iter().all(|p| alive(*p)), "{text}");

    let sent = Instant::now();
    // SAFETY: plain system call to our own child.
    unsafe { libc::kill(child.id() as i32, signal) };
    let output = loop {
        if let Some(_status) = child.try_wait().unwrap() {
            break child.wait_with_output().unwrap();
        }
        assert!(
            sent.elapsed() < Duration::from_secs(15),
            "bureau did not stop within 15 s of {name}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(code), "{stderr}");
    assert!(
        stderr.contains(&format!("interrupted by {name}")),
        "{stderr}"
    );
    assert!(stderr.contains("re-run the same command"), "{stderr}");

    // No process of the harness survives: its group for sure, and the one that left the
    // group where a cgroup holds the harness.
    let settle = Instant::now() + Duration::from_secs(5);
    while pids.iter().any(|p| alive(*p)) && Instant::now() < settle {
        std::thread::sleep(Duration::from_millis(20));
    }
    let survivors: Vec<i32> = pids.iter().copied().filter(|p| alive(*p)).collect();
    let all_killable = bureau_shell::cgroup::Cgroups::probe().kills_all();
    for p in &survivors {
        // SAFETY: do not leave it behind.
        unsafe { libc::kill(*p, 9) };
    }
    if all_killable {
        assert!(survivors.is_empty(), "{survivors:?} outlived the run");
    } else {
        assert!(survivors.len() <= 1, "{survivors:?} outlived the run");
    }
    // The token's directory is gone.
    assert!(!Path::new(&private).exists(), "{private} is still there");

    // The attempt is recorded as interrupted, and the trial has no result.
    let trial = out.join("trials/memo/hang/1");
    assert!(!trial.join("result.json").exists());
    let attempt: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(trial.join("attempts/1/attempt.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(attempt["status"], "error");
    assert!(
        attempt["error"]
            .as_str()
            .unwrap()
            .contains(&format!("interrupted: the run was stopped by {name}")),
        "{attempt}"
    );
}

#[test]
fn sigterm_stops_the_run_kills_the_harness_and_removes_its_token() {
    interrupt_with(15, 143, "SIGTERM");
}

#[test]
fn sigint_stops_the_run_the_same_way() {
    interrupt_with(2, 130, "SIGINT");
}
