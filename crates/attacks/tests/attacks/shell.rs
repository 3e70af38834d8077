//! Attacks: shell. See docs/security.md.
//!
//! The confined shell (`bureau-shell`, the `llm` agent's `shell_run`) attacked as an agent
//! would: host sockets, inherited descriptors, the answer key and other trials, `/proc`,
//! memory and processes over the whole command, the network. These need Linux with Landlock
//! ABI >= 3 and namespaces, `/usr/bin/python3` and `perl`, and are run as root in CI (the
//! root path is the one Bureau runs); they fail with the probe's message otherwise.

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::time::Duration;

use bureau_shell::{Confinement, LimitHit, ShellLimits, ShellOutcome};

fn shell() -> Confinement {
    match Confinement::probe() {
        Ok(c) => c,
        Err(e) => panic!("these attacks need the confined shell on this machine: {e}"),
    }
}

fn limits() -> ShellLimits {
    ShellLimits {
        wall: Duration::from_secs(20),
        ..ShellLimits::default()
    }
}

fn run(cmd: &str, ws: &Path) -> ShellOutcome {
    shell().run(cmd, ws, &limits()).unwrap()
}

#[test]
fn a_root_owned_0600_unix_socket_outside_the_workspace_cannot_be_connected() {
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let path = outside.path().join("host.sock");
    let listener = UnixListener::bind(&path).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    listener.set_nonblocking(true).unwrap();
    // The attack: connect and read what the host service answers.
    let cmd = format!(
        "/usr/bin/python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); \
         s.connect('{}'); print('connected')\"",
        path.display()
    );
    let out = run(&cmd, ws.path());
    assert_ne!(out.exit_code, Some(0), "{out:?}");
    assert!(!out.stdout.text.contains("connected"), "{out:?}");
    // The socket is not even there: the host's tree is not in the command's view.
    assert!(
        out.stderr.text.contains("No such file or directory"),
        "{out:?}"
    );
    assert!(
        listener.accept().is_err(),
        "the host socket accepted a connection"
    );
    // Unconfined, the same connection is accepted: the test can fail.
    let _client = std::os::unix::net::UnixStream::connect(&path).unwrap();
}

#[test]
fn a_descriptor_the_parent_left_open_is_not_inherited() {
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let log = outside.path().join("bureau.log");
    std::fs::write(&log, "log\n").unwrap();
    let c_path = std::ffi::CString::new(log.to_str().unwrap()).unwrap();
    // As a careless parent would: no O_CLOEXEC.
    // SAFETY: plain system call on a C string.
    let fd = unsafe { libc::open(c_path.as_ptr(), libc::O_WRONLY | libc::O_APPEND) };
    assert!(fd > 2, "open: {}", std::io::Error::last_os_error());
    let out = run(
        &format!("ls /proc/$$/fd; echo pwned >&{fd} && echo wrote"),
        ws.path(),
    );
    // SAFETY: the descriptor opened above.
    unsafe { libc::close(fd) };
    let listed: Vec<&str> = out.stdout.text.lines().filter(|l| *l != "wrote").collect();
    assert_eq!(listed, ["0", "1", "2"], "{out:?}");
    assert!(!out.stdout.text.contains("wrote"), "{out:?}");
    assert!(out.stderr.text.contains("Bad file descriptor"), "{out:?}");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "log\n");
}

#[test]
fn the_task_the_run_directory_and_other_trials_are_not_readable() {
    // A run's layout: the task beside the run directory, two trials' workspaces side by side.
    let root = tempfile::tempdir().unwrap();
    let task = root.path().join("task");
    std::fs::create_dir_all(task.join("solution")).unwrap();
    std::fs::write(task.join("checks.star"), "ANSWER_KEY = 42\n").unwrap();
    std::fs::write(task.join("task.toml"), "id = \"t\"\n").unwrap();
    std::fs::write(task.join("solution/answer.md"), "the answer\n").unwrap();
    let ws = root.path().join("run/trials/t/a/1/world/workspace");
    let other = root.path().join("run/trials/t/b/1/world/workspace");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("draft.md"), "OTHER TRIAL'S WORK\n").unwrap();
    std::fs::write(root.path().join("run/run.json"), "{\"secret\": true}\n").unwrap();
    let attempts = [
        format!("cat {}", task.join("checks.star").display()),
        format!("cat {}", task.join("solution/answer.md").display()),
        format!("ls {}", task.display()),
        format!("cat {}", other.join("draft.md").display()),
        "cat ../../../b/1/world/workspace/draft.md".to_string(),
        format!("cat {}", root.path().join("run/run.json").display()),
        format!("ls {}", root.path().join("run/trials/t/b").display()),
    ];
    for cmd in &attempts {
        let out = run(cmd, &ws);
        assert_ne!(out.exit_code, Some(0), "`{cmd}` should fail: {out:?}");
        for secret in ["ANSWER_KEY", "the answer", "OTHER TRIAL", "secret", "b\n"] {
            assert!(!out.stdout.text.contains(secret), "`{cmd}`: {out:?}");
        }
    }
    // Of the run directory only the workspace's own path exists (empty directories
    // leading to it): no other trial beside it.
    let out = run(
        &format!("ls -a {}", root.path().join("run/trials/t").display()),
        &ws,
    );
    assert_eq!(out.stdout.text, ".\n..\na\n", "{out:?}");
    // The workspace itself is there, read-write, at its usual path.
    let out = run("echo mine > own.md && cat own.md && pwd", &ws);
    assert_eq!(
        out.stdout.text,
        format!("mine\n{}\n", ws.canonicalize().unwrap().display()),
        "{out:?}"
    );
}

#[test]
fn proc_shows_no_host_process() {
    let ws = tempfile::tempdir().unwrap();
    let me = std::process::id();
    let out = run(
        &format!(
            "cat /proc/{me}/cmdline; cat /proc/1/cmdline; \
             ls /proc | grep -c '^[0-9][0-9]*$'"
        ),
        ws.path(),
    );
    let count: usize = out
        .stdout
        .text
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(usize::MAX);
    // The shell, `ls` and `grep`: the command's own processes only.
    assert!(count <= 4, "{count} processes visible: {out:?}");
    assert!(!out.stdout.text.contains("attacks"), "{out:?}");
    // Unconfined there are many more (the test can fail).
    let host = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .count();
    assert!(host > 4, "{host}");
}

#[test]
fn six_processes_of_200_mib_fail_as_a_whole_under_256_mib() {
    let ws = tempfile::tempdir().unwrap();
    let lim = ShellLimits {
        memory_bytes: 256 << 20,
        wall: Duration::from_secs(60),
        ..ShellLimits::default()
    };
    // Each process alone fits (its address space stays under 256 MiB); together they need
    // 1.2 GiB of resident memory.
    let hog = "/usr/bin/python3 -c \"import time; b = b'a' * (200 << 20); time.sleep(3); \
               print('kept', len(b))\"";
    let cmd = format!("for i in 1 2 3 4 5 6; do {hog} & done; wait");
    let out = shell().run(&cmd, ws.path(), &lim).unwrap();
    let kept = out
        .stdout
        .text
        .lines()
        .filter(|l| l.starts_with("kept"))
        .count();
    assert!(
        kept < 6,
        "all six kept 200 MiB under a 256 MiB limit: {out:?}"
    );
    assert_eq!(out.limit, Some(LimitHit::Memory), "{out:?}");
    assert!(out.note().contains("memory limit"), "{}", out.note());
    assert_eq!(out.leftover_processes, 0, "{out:?}");
    // One of them alone succeeds: the limit is what stopped them.
    let out = shell().run(hog, ws.path(), &lim).unwrap();
    assert_eq!(out.stdout.text, format!("kept {}\n", 200 << 20), "{out:?}");
    assert_eq!(out.limit, None, "{out:?}");
}

#[test]
fn a_fork_bomb_stays_bounded() {
    // Held before the mount namespace and cgroups (RLIMIT_NPROC on the command's own uid);
    // kept so it stays held.
    let ws = tempfile::tempdir().unwrap();
    let lim = ShellLimits {
        max_processes: 32,
        wall: Duration::from_secs(20),
        ..ShellLimits::default()
    };
    let bomb = "perl -e '$n = 0; for (1 .. 2000) { my $p = fork; last unless defined $p; \
                if ($p == 0) { sleep 30; exit } $n++ } print \"$n\\n\"'";
    let out = shell().run(bomb, ws.path(), &lim).unwrap();
    let forked: u64 = out.stdout.text.trim().parse().unwrap_or(u64::MAX);
    assert!(forked < 32, "{forked} processes forked: {out:?}");
    assert!(out.wall < Duration::from_secs(15), "{out:?}");
    assert_eq!(out.leftover_processes, 0, "{out:?}");
}

#[test]
fn the_network_is_unreachable() {
    // Held before (a fresh network namespace); kept so it stays held.
    let ws = tempfile::tempdir().unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let cmd = format!(
        "/usr/bin/python3 -c \"import socket\n\
         for host, port in (('127.0.0.1', {port}), ('1.1.1.1', 53), ('example.com', 80)):\n\
         \x20   try:\n\
         \x20       socket.create_connection((host, port), timeout=3); print('reached', host)\n\
         \x20   except OSError as e:\n\
         \x20       print('refused', host)\""
    );
    let out = run(&cmd, ws.path());
    assert!(!out.stdout.text.contains("reached"), "{out:?}");
    assert_eq!(out.stdout.text.matches("refused").count(), 3, "{out:?}");
    assert!(listener.accept().is_err());
    // Unconfined the listener is reachable: the test can fail.
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let _ = s.set_read_timeout(Some(Duration::from_millis(10)));
    let _ = s.read(&mut [0u8; 1]);
}
