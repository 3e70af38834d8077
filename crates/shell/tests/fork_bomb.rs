//! A fork bomb is bounded by the process limit and leaves nothing behind. In its own test
//! binary so that no other test's processes are counted.

use std::time::{Duration, Instant};

use bureau_shell::{Confinement, ShellLimits};

/// Live processes whose session id is `sid`.
fn in_session(sid: u32) -> usize {
    let mut n = 0;
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let rest = &stat[stat.rfind(')').unwrap() + 1..];
        let f: Vec<&str> = rest.split_whitespace().collect();
        if f[0] != "Z" && f[3].parse::<u32>().ok() == Some(sid) {
            n += 1;
        }
    }
    n
}

#[test]
fn a_fork_bomb_is_bounded_and_cleaned_up() {
    let shell = Confinement::probe().unwrap_or_else(|e| panic!("needs the confined shell: {e}"));
    let ws = tempfile::tempdir().unwrap();
    let ws_path = ws.path().to_path_buf();
    let limits = ShellLimits {
        wall: Duration::from_secs(3),
        max_processes: 24,
        ..ShellLimits::default()
    };
    let runner = std::thread::spawn(move || {
        shell
            .run(
                "echo $$ > sid; perl -e 'while (1) { defined(fork()) or select(undef, undef, undef, 0.05) }'",
                &ws_path,
                &limits,
            )
            .unwrap()
    });
    // Watch the command's session while the bomb goes off.
    let sid_file = ws.path().join("sid");
    let start = Instant::now();
    let mut peak = 0;
    let mut sid = None;
    while !runner.is_finished() && start.elapsed() < Duration::from_secs(10) {
        if sid.is_none() {
            sid = std::fs::read_to_string(&sid_file)
                .ok()
                .and_then(|s| s.trim().parse::<u32>().ok());
        }
        if let Some(sid) = sid {
            peak = peak.max(in_session(sid));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = runner.join().unwrap();
    let sid = sid.expect("the command wrote its pid");
    assert_eq!(sid, out.pid);
    assert!(peak >= 10, "the bomb did fork ({peak} processes seen)");
    assert!(peak <= 24, "at most max_processes at once, saw {peak}");
    assert!(out.timed_out, "{out:?}");
    assert!(out.wall < Duration::from_secs(6), "{out:?}");
    assert_eq!(out.leftover_processes, 0, "{out:?}");
    assert_eq!(in_session(sid), 0);
}
