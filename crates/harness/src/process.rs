//! Running a harness process headless: its own session and process group, its own cgroup
//! where one is writable, stdout read line by line, a tail of stderr kept, a deadline after
//! which the whole group — and every process of its cgroup — is killed.

use std::collections::{BTreeMap, VecDeque};
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::Path;

use bureau_replica::NsEntry;
use bureau_shell::cgroup::{Cgroup, CgroupLimits, Cgroups};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Bytes of stderr kept (the end of it).
pub const STDERR_TAIL: usize = 8 * 1024;

/// After the harness exits, how long output its leftover children still write is read.
const DRAIN: Duration = Duration::from_millis(300);

/// How a run ended.
#[derive(Debug)]
pub struct Finished {
    /// `None` when the deadline killed it.
    pub status: Option<ExitStatus>,
    pub timed_out: bool,
    /// The last [`STDERR_TAIL`] bytes of stderr.
    pub stderr_tail: String,
    pub elapsed: Duration,
    /// Processes of the harness still alive in its cgroup when the turn ended (after the
    /// harness itself exited or was killed): all of them were killed. `None` when no cgroup
    /// was writable (only the process group was killed).
    pub leftover_killed: Option<usize>,
    /// The process was asked to stop ([`bureau_core::interrupt`]): the harness was killed
    /// before it finished.
    pub interrupted: bool,
}

/// The cgroup hierarchies, probed once per process.
fn cgroups() -> &'static Cgroups {
    static CGROUPS: OnceLock<Cgroups> = OnceLock::new();
    CGROUPS.get_or_init(Cgroups::probe)
}

/// What to run.
pub struct Spawn<'a> {
    pub argv: &'a [String],
    pub cwd: &'a Path,
    /// Set (or overridden) in the inherited environment.
    pub env: &'a BTreeMap<String, String>,
    pub deadline: Duration,
    /// When the workspace is an overlay replica: the process enters the replica's user and
    /// mount namespaces (after `setsid`), and its working directory is the merged directory
    /// as seen inside (`cwd` is then not used).
    pub entry: Option<&'a Arc<NsEntry>>,
}

/// Run `spec`, calling `on_line` with each line of stdout as it arrives. The process runs in
/// a new session (`setsid`), so it and every child it starts share one process group, and —
/// where a cgroup hierarchy is writable ([`Cgroups::probe`]) — in a cgroup of its own, which
/// its children cannot leave; when the deadline passes, and in any case when the run ends,
/// the whole group is killed (`kill(-pgid, SIGKILL)`) and then every process of the cgroup
/// (`cgroup.kill`, or freeze-kill-thaw), including ones that left the group with `setsid`, so
/// no process of the harness outlives its turn. No descriptor above 2 is inherited. Stdin is
/// empty.
pub fn run(spec: &Spawn<'_>, mut on_line: impl FnMut(&str)) -> std::io::Result<Finished> {
    let (program, args) = spec
        .argv
        .split_first()
        .ok_or_else(|| std::io::Error::other("empty command"))?;
    let mut cmd = Command::new(program);
    cmd.args(args)
        .envs(spec.env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // With an entry, std must not chdir (it does so before `pre_exec`, and entering the mount
    // namespace resets the directory anyway): the entry's `chdir` sets it inside.
    if spec.entry.is_none() {
        cmd.current_dir(spec.cwd);
    }
    let entry = spec.entry.cloned();
    let cgroups = cgroups();
    let group = if cgroups.kills_all() {
        Some(
            cgroups
                .create("harness", &CgroupLimits::default())
                .map_err(std::io::Error::other)?,
        )
    } else {
        None
    };
    let procs = group
        .as_ref()
        .map(|g| g.procs_files().to_vec())
        .unwrap_or_default();
    // SAFETY: `setsid`, `close_range`, the cgroup join (`open`/`write`) and `NsEntry::enter`
    // are raw system calls that touch no memory of the parent: a new session and process
    // group, no inherited descriptor above 2 (close-on-exec: std's own error pipe still
    // works until `exec`), the cgroup, then the replica's namespaces.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::close_range(3, libc::c_uint::MAX, libc::CLOSE_RANGE_CLOEXEC as i32) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Cgroup::join_self(&procs)?;
            if let Some(entry) = &entry {
                entry.enter()?;
            }
            Ok(())
        });
    }
    let started = Instant::now();
    let mut child = cmd.spawn()?;
    let pgid = child.id() as libc::pid_t;

    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let (tx, rx) = mpsc::channel::<String>();
    if let Some(stdout) = stdout {
        // Detached: a grandchild that escaped the group may hold the pipe open forever.
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match reader.read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let line = String::from_utf8_lossy(&buf);
                        let line = line.trim_end_matches(['\n', '\r']).to_string();
                        if tx.send(line).is_err() {
                            break;
                        }
                    }
                }
            }
        });
    }
    let tail = Arc::new(Mutex::new(VecDeque::<u8>::new()));
    if let Some(mut stderr) = stderr {
        let tail = tail.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            loop {
                match stderr.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
                        t.extend(&buf[..n]);
                        let excess = t.len().saturating_sub(STDERR_TAIL);
                        t.drain(..excess);
                    }
                }
            }
        });
    }

    let deadline = started + spec.deadline;
    let mut status: Option<ExitStatus> = None;
    let mut exited_at: Option<Instant> = None;
    let mut timed_out = false;
    let mut interrupted = false;
    loop {
        let now = Instant::now();
        if status.is_none() && now >= deadline {
            timed_out = true;
            break;
        }
        // SIGINT/SIGTERM to Bureau: the harness is killed below, within one poll.
        if status.is_none() && bureau_core::interrupt::requested().is_some() {
            interrupted = true;
            break;
        }
        if let Some(at) = exited_at
            && now >= at + DRAIN
        {
            break;
        }
        let wait = deadline
            .saturating_duration_since(now)
            .min(Duration::from_millis(50));
        match rx.recv_timeout(wait) {
            Ok(line) => on_line(&line),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                if status.is_some() {
                    break;
                }
                // Stdout closed; wait for the exit (or the deadline) below.
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        if status.is_none()
            && let Some(s) = child.try_wait()?
        {
            status = Some(s);
            exited_at = Some(Instant::now());
        }
    }
    // What is still running of the harness now that its turn is over (the harness itself,
    // when it exited, is no longer a member).
    let leftover = group.as_ref().map(|g| g.pids().len());
    kill_group(pgid);
    let leftover_killed = group.map(|g| {
        g.remove();
        leftover.unwrap_or(0)
    });
    if status.is_none() {
        // Killed: reap it (SIGKILL cannot be ignored, so this returns promptly).
        let reaped = child.wait()?;
        if !timed_out && !interrupted {
            status = Some(reaped);
        }
    }
    // Lines already read before the kill.
    while let Ok(line) = rx.try_recv() {
        on_line(&line);
    }
    let stderr_tail = {
        let t = tail.lock().unwrap_or_else(|p| p.into_inner());
        let bytes: Vec<u8> = t.iter().copied().collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    Ok(Finished {
        status,
        timed_out,
        stderr_tail,
        elapsed: started.elapsed(),
        leftover_killed,
        interrupted,
    })
}

/// Kill every process of the group `pgid` (no error when none is left).
fn kill_group(pgid: libc::pid_t) {
    if pgid > 0 {
        // SAFETY: plain system call; a negative pid addresses the process group.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gone(pid: i32) -> bool {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        stat.is_empty()
            || stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
    }

    #[test]
    fn a_child_left_running_after_the_harness_exits_is_killed_and_does_not_hold_the_turn() {
        let dir = tempfile::tempdir().unwrap();
        let argv: Vec<String> = ["sh", "-c", "sleep 300 & echo $!; echo done; echo oops >&2"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let mut lines = Vec::new();
        let started = Instant::now();
        let done = run(
            &Spawn {
                argv: &argv,
                cwd: dir.path(),
                env: &BTreeMap::from([("X".to_string(), "1".to_string())]),
                deadline: Duration::from_secs(60),
                entry: None,
            },
            |l| lines.push(l.to_string()),
        )
        .unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "held by the child"
        );
        assert!(!done.timed_out);
        assert!(done.status.unwrap().success());
        assert_eq!(lines[1], "done");
        assert_eq!(done.stderr_tail.trim(), "oops");
        let pid: i32 = lines[0].parse().unwrap();
        // SIGKILL is delivered asynchronously; give the kernel a moment.
        let deadline = Instant::now() + Duration::from_secs(5);
        while !gone(pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(gone(pid), "the background child {pid} outlived the turn");
    }

    #[test]
    fn a_process_that_left_the_session_is_killed_with_the_harness_cgroup() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let argv: Vec<String> = vec![
            "sh".into(),
            "-c".into(),
            format!(
                "setsid -f sh -c 'echo $$ > {}; exec sleep 47'; sleep 0.5",
                pid_file.display()
            ),
        ];
        let done = run(
            &Spawn {
                argv: &argv,
                cwd: dir.path(),
                env: &BTreeMap::new(),
                deadline: Duration::from_secs(20),
                entry: None,
            },
            |_| {},
        )
        .unwrap();
        let pid: i32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while !gone(pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let survived = !gone(pid);
        if survived {
            // SAFETY: plain system call; do not leave it behind.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        if cgroups().kills_all() {
            assert!(!survived, "the setsid process {pid} outlived the turn");
            assert_eq!(done.leftover_killed, Some(1));
        } else {
            assert_eq!(done.leftover_killed, None);
        }
    }

    #[test]
    fn the_deadline_kills_the_group_and_keeps_what_was_read() {
        let dir = tempfile::tempdir().unwrap();
        let argv: Vec<String> = ["sh", "-c", "echo first; exec sleep 300"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let mut lines = Vec::new();
        let done = run(
            &Spawn {
                argv: &argv,
                cwd: dir.path(),
                env: &BTreeMap::new(),
                deadline: Duration::from_millis(500),
                entry: None,
            },
            |l| lines.push(l.to_string()),
        )
        .unwrap();
        assert!(done.timed_out);
        assert!(done.status.is_none());
        assert_eq!(lines, ["first"]);
        assert!(done.elapsed < Duration::from_secs(10));
    }

    #[test]
    fn a_missing_program_is_an_error() {
        let argv = vec!["/nonexistent/bin".to_string()];
        let err = run(
            &Spawn {
                argv: &argv,
                cwd: Path::new("/"),
                env: &BTreeMap::new(),
                deadline: Duration::from_secs(1),
                entry: None,
            },
            |_| {},
        )
        .unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
    }
}
