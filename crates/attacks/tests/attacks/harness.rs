//! Attacks: harness. See docs/security.md.
//!
//! A harness (a third-party agent program Bureau runs headless) that tries to outlive its
//! turn: a process that leaves the harness's session and process group with `setsid -f`.

use std::path::Path;
use std::time::{Duration, Instant};

use bureau_run::{RunConfig, run_with_catalog};

/// Kills the listed pids when dropped, so a failing run of this test leaves nothing behind.
struct Reaper(Vec<i32>);

impl Drop for Reaper {
    fn drop(&mut self) {
        for &pid in &self.0 {
            // SAFETY: plain system call.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
    }
}

fn alive(pid: i32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    !stat.is_empty()
        && stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
}

fn pids(path: &Path) -> Vec<i32> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

#[test]
fn a_process_that_left_the_harness_session_is_killed_at_the_end_of_the_turn() {
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("memo");
    crate::common::write_memo_task(&task, "memo");
    let pid_file = dir.path().join("escaped.pids");
    let script = dir.path().join("escape.sh");
    // The harness starts `sleep 47` in a session of its own, then ends its turn at once.
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nsetsid -f sh -c 'echo $$ >> {p}; exec sleep 47'\nsleep 0.5\nexit 0\n",
            p = pid_file.display()
        ),
    )
    .unwrap();
    let agents = dir.path().join("agents.toml");
    std::fs::write(
        &agents,
        format!(
            "[agents.escape]\nharness = \"command\"\ncommand = [\"sh\", {}]\n\
             [agents.escape.limits]\nwall_seconds = 20\n",
            serde_json::to_string(&script.to_string_lossy()).unwrap()
        ),
    )
    .unwrap();
    let out = dir.path().join("run");
    let mut config = RunConfig::new(
        vec![task.to_string_lossy().into_owned()],
        vec!["escape".to_string()],
        out.clone(),
    );
    config.quiet = true;
    config.retries = 0;
    config.agents_file = Some(agents);
    let started = Instant::now();
    let outcome = run_with_catalog(&config, bureau_harness::catalog()).unwrap();
    assert!(started.elapsed() < Duration::from_secs(120));
    let escaped = pids(&pid_file);
    let _reaper = Reaper(escaped.clone());
    // The turns ran (the trial is scored: it did nothing, so it fails) and escaped each time.
    assert_eq!(outcome.errored, 0, "{outcome:?}");
    assert!(!escaped.is_empty(), "the harness did not run");
    // SIGKILL is delivered asynchronously; give the kernel a moment.
    let until = Instant::now() + Duration::from_secs(5);
    while escaped.iter().any(|&p| alive(p)) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left: Vec<i32> = escaped.iter().copied().filter(|&p| alive(p)).collect();
    assert!(left.is_empty(), "processes outlived their turn: {left:?}");
    // The trajectory says how many were left and killed.
    let trajectory =
        std::fs::read_to_string(out.join("trials/memo/escape/1/trajectory.jsonl")).unwrap();
    assert!(
        trajectory.contains("\"leftover_processes_killed\":1"),
        "{trajectory}"
    );
}
