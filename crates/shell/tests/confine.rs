//! The confined shell on this machine: what a command can and cannot do.
//! These tests need Linux with Landlock ABI >= 3 and namespaces (CI: the same machine kind).

use std::path::Path;
use std::time::Duration;

use bureau_shell::{Confinement, LimitHit, ShellLimits, ShellOutcome};

fn shell() -> Confinement {
    match Confinement::probe() {
        Ok(c) => c,
        Err(e) => panic!("these tests need the confined shell on this machine: {e}"),
    }
}

fn limits() -> ShellLimits {
    ShellLimits {
        wall: Duration::from_secs(10),
        ..ShellLimits::default()
    }
}

fn run(cmd: &str, ws: &Path) -> ShellOutcome {
    shell().run(cmd, ws, &limits()).unwrap()
}

/// Live processes (not zombies) whose process group is `pgid`.
fn live_in_group(pgid: u32) -> Vec<u32> {
    let mut found = Vec::new();
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
        if f[0] != "Z" && f[2].parse::<u32>().ok() == Some(pgid) {
            found.push(pid);
        }
    }
    found
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            let rest = &s[s.rfind(')').unwrap() + 1..];
            !rest.trim_start().starts_with('Z')
        })
        .unwrap_or(false)
}

#[test]
fn probe_describes_what_is_enforced() {
    let lines = shell().describe();
    let text = lines.join("\n");
    assert!(text.contains("Landlock"), "{text}");
    assert!(text.contains("network namespace"), "{text}");
}

#[test]
fn writes_inside_the_workspace_succeed() {
    let ws = tempfile::tempdir().unwrap();
    let out = run(
        "mkdir -p sub && echo hello > sub/a.txt && cat sub/a.txt && pwd",
        ws.path(),
    );
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("sub/a.txt")).unwrap(),
        "hello\n"
    );
    let canon = ws.path().canonicalize().unwrap();
    assert_eq!(out.stdout.text, format!("hello\n{}\n", canon.display()));
    // Files the caller created stay writable, renames and deletes work.
    std::fs::write(ws.path().join("given.txt"), "v1").unwrap();
    let out = run(
        "echo v2 >> given.txt && mv given.txt moved.txt && rm sub/a.txt",
        ws.path(),
    );
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("moved.txt")).unwrap(),
        "v1v2\n"
    );
    assert!(!ws.path().join("sub/a.txt").exists());
}

#[test]
fn as_root_the_workspace_is_the_commands_own_and_stays_root_owned() {
    use std::os::unix::fs::MetadataExt;
    if !rustix::process::geteuid().is_root() {
        panic!("this test checks the root caller's id-mapped workspace: run it as root");
    }
    let ws = tempfile::tempdir().unwrap();
    // As the world makes them: root-owned, 0644.
    std::fs::write(ws.path().join("world.txt"), "v1\n").unwrap();
    let out = run(
        "id -u; stat -c %u world.txt; echo v2 >> world.txt && echo new > mine.txt && \
         git init -q && git add -A && \
         git -c user.name=a -c user.email=a@b commit -qm one && git log --format=%s",
        ws.path(),
    );
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    let lines: Vec<&str> = out.stdout.text.lines().collect();
    let uid: u32 = lines[0].parse().unwrap();
    assert_eq!(uid, bureau_shell::UID_BASE + out.pid, "{out:?}");
    // The command sees the world's file as its own...
    assert_eq!(lines[1], lines[0], "{out:?}");
    assert_eq!(lines[2], "one", "{out:?}");
    // ...and on disk everything stays (or is made) root's.
    for name in ["world.txt", "mine.txt", ".git/HEAD"] {
        let md = std::fs::metadata(ws.path().join(name)).unwrap();
        assert_eq!((md.uid(), md.gid()), (0, 0), "{name}");
    }
    assert_eq!(
        std::fs::read_to_string(ws.path().join("world.txt")).unwrap(),
        "v1\nv2\n"
    );
    // The command has no capability at all (none in any set, bounding set empty).
    let out = run(
        "grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status",
        ws.path(),
    );
    for line in out.stdout.text.lines() {
        assert!(line.ends_with("0000000000000000"), "{line}: {out:?}");
    }
    assert_eq!(out.stdout.text.lines().count(), 5, "{out:?}");
}

#[test]
fn writes_outside_the_workspace_fail() {
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim.txt");
    std::fs::write(&victim, "keep me").unwrap();
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let marker = format!("bureau-shell-test-{}", std::process::id());
    // `/tmp` is the command's own (a private tmpfs): the write succeeds there and never
    // reaches the host's `/tmp` (checked below).
    let out = run(
        &format!("echo x > /tmp/{marker} && cat /tmp/{marker}"),
        ws.path(),
    );
    assert_eq!(out.stdout.text, "x\n", "{out:?}");
    let attempts = [
        format!("echo x > {home}/{marker}"),
        format!("mkdir /var/tmp/{marker}"),
        format!("echo x > {}", victim.display()),
        format!(": > {}", victim.display()),
        format!("truncate -s 0 {}", victim.display()),
        format!("rm {}", victim.display()),
        format!("mv {} {}/moved", victim.display(), ws.path().display()),
        format!("ln -s /etc/passwd {}/link", outside.path().display()),
        format!("chmod 777 {}", victim.display()),
        format!("touch -d 2001-01-01 {}", victim.display()),
    ];
    for cmd in &attempts {
        let out = run(cmd, ws.path());
        assert_ne!(out.exit_code, Some(0), "`{cmd}` should fail: {out:?}");
    }
    assert!(!Path::new(&format!("/tmp/{marker}")).exists());
    assert!(!Path::new(&format!("{home}/{marker}")).exists());
    assert!(!Path::new(&format!("/var/tmp/{marker}")).exists());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    assert!(!outside.path().join("link").exists());
    // The same write succeeds unconfined: the test can fail.
    let status = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(format!("echo x > {}/free.txt", outside.path().display()))
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn reading_the_system_works_and_the_environment_is_clean() {
    let ws = tempfile::tempdir().unwrap();
    let out = run(
        "cat /etc/hostname && ls /usr/bin >/dev/null && echo \"[$OPENAI_API_KEY]\" && echo ok > /dev/null",
        ws.path(),
    );
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    let hostname = std::fs::read_to_string("/etc/hostname").unwrap();
    assert!(out.stdout.text.starts_with(&hostname), "{out:?}");
    assert!(out.stdout.text.ends_with("[]\n"), "{out:?}");
}

#[test]
fn the_network_is_unreachable() {
    let ws = tempfile::tempdir().unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = format!(
        "perl -MIO::Socket::INET -e 'IO::Socket::INET->new(PeerAddr => \"127.0.0.1:{port}\", Timeout => 2) or die \"connect failed: $@\\n\"; print \"connected\\n\"'"
    );
    // Unconfined, the listener is reachable: the test can fail.
    let free = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(&connect)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&free.stdout), "connected\n");
    let out = run(&connect, ws.path());
    assert_ne!(out.exit_code, Some(0), "{out:?}");
    assert!(out.stderr.text.contains("connect failed"), "{out:?}");
    // Outbound: no route at all, and DNS fails.
    let out = run(
        "perl -MIO::Socket::INET -e 'IO::Socket::INET->new(PeerAddr => \"1.1.1.1:53\", Timeout => 2) or die \"connect failed: $!\\n\"'",
        ws.path(),
    );
    assert_ne!(out.exit_code, Some(0), "{out:?}");
    // Landlock denies the connect (EACCES) where the kernel has ABI 4; the empty network
    // namespace would answer "Network is unreachable" otherwise.
    assert!(out.stderr.text.contains("connect failed"), "{out:?}");
    let out = run("getent hosts example.com", ws.path());
    assert_ne!(out.exit_code, Some(0), "{out:?}");
    // The only interface is loopback, and it is down.
    let out = run(
        "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '",
        ws.path(),
    );
    assert_eq!(out.stdout.text, "lo\n", "{out:?}");
    let ours = std::fs::read_to_string("/proc/net/dev").unwrap();
    assert!(
        ours.lines().count() > 3,
        "the parent has more interfaces than lo: {ours}"
    );
}

#[test]
fn exit_codes_and_signals_are_preserved() {
    let ws = tempfile::tempdir().unwrap();
    let out = run("echo out; echo err >&2; exit 3", ws.path());
    assert_eq!((out.exit_code, out.signal), (Some(3), None));
    assert_eq!(out.stdout.text, "out\n");
    assert_eq!(out.stderr.text, "err\n");
    assert!(!out.success());
    let out = run("kill -TERM $$", ws.path());
    assert_eq!((out.exit_code, out.signal), (None, Some(15)), "{out:?}");
    let out = run("true", ws.path());
    assert!(out.success());
    assert_eq!(out.limit, None);
}

#[test]
fn a_cpu_bound_loop_is_killed_at_the_cpu_limit() {
    let ws = tempfile::tempdir().unwrap();
    let limits = ShellLimits {
        cpu_seconds: 1,
        ..limits()
    };
    let out = shell()
        .run("while :; do :; done", ws.path(), &limits)
        .unwrap();
    assert_eq!(out.limit, Some(LimitHit::Cpu), "{out:?}");
    assert_eq!(out.signal, Some(24), "SIGXCPU: {out:?}");
    assert!(!out.timed_out);
    assert!(out.wall < Duration::from_secs(8), "{out:?}");
}

#[test]
fn a_memory_hog_is_stopped_at_the_memory_limit() {
    let ws = tempfile::tempdir().unwrap();
    let hog = "perl -e '$x = \"a\" x (400 * 1024 * 1024); print length($x), \"\\n\"'";
    let small = ShellLimits {
        memory_bytes: 128 << 20,
        ..limits()
    };
    let out = shell().run(hog, ws.path(), &small).unwrap();
    assert_ne!(out.exit_code, Some(0), "{out:?}");
    assert!(out.stderr.text.contains("Out of memory"), "{out:?}");
    assert!(out.stdout.text.is_empty(), "{out:?}");
    // With room, the same command succeeds: the limit is what stopped it.
    let roomy = ShellLimits {
        memory_bytes: 1 << 30,
        ..limits()
    };
    let out = shell().run(hog, ws.path(), &roomy).unwrap();
    assert_eq!(
        out.stdout.text,
        format!("{}\n", 400 * 1024 * 1024),
        "{out:?}"
    );
}

#[test]
fn a_large_file_is_stopped_at_the_file_size_limit() {
    let ws = tempfile::tempdir().unwrap();
    let lim = ShellLimits {
        file_bytes: 1 << 20,
        ..limits()
    };
    let out = shell()
        .run("head -c 5000000 /dev/zero > big", ws.path(), &lim)
        .unwrap();
    assert_ne!(out.exit_code, Some(0), "{out:?}");
    assert_eq!(
        std::fs::metadata(ws.path().join("big")).unwrap().len(),
        1 << 20
    );
}

#[test]
fn background_children_are_killed_at_the_wall_limit() {
    let ws = tempfile::tempdir().unwrap();
    let lim = ShellLimits {
        wall: Duration::from_secs(1),
        ..limits()
    };
    let out = shell()
        .run(
            "echo $$; sleep 100 & sleep 100 & sleep 100",
            ws.path(),
            &lim,
        )
        .unwrap();
    assert!(out.timed_out, "{out:?}");
    assert_eq!(out.limit, Some(LimitHit::Wall));
    assert_eq!(out.stdout.text, format!("{}\n", out.pid));
    assert!(out.wall < Duration::from_secs(5), "{out:?}");
    assert_eq!(out.leftover_processes, 0);
    assert_eq!(live_in_group(out.pid), Vec::<u32>::new());
    assert!(out.note().contains("wall-time limit"), "{}", out.note());
}

#[test]
fn what_a_finished_command_leaves_running_is_killed() {
    let ws = tempfile::tempdir().unwrap();
    // One child stays in the group; one leaves it with setsid (reached through its uid).
    let out = run("sleep 100 & echo $!; setsid sleep 100 & echo $!", ws.path());
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    assert!(out.wall < Duration::from_secs(5), "{out:?}");
    let pids: Vec<u32> = out
        .stdout
        .text
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 2, "{out:?}");
    for pid in pids {
        assert!(!alive(pid), "pid {pid} survived: {out:?}");
    }
    assert_eq!(live_in_group(out.pid), Vec::<u32>::new());
}

#[test]
fn huge_output_is_truncated_and_the_command_stopped() {
    let ws = tempfile::tempdir().unwrap();
    let lim = ShellLimits {
        output_bytes: 1000,
        ..limits()
    };
    let out = shell().run("yes", ws.path(), &lim).unwrap();
    assert_eq!(out.limit, Some(LimitHit::Output), "{out:?}");
    assert!(out.stdout.truncated);
    assert_eq!(out.stdout.text.len(), 1000);
    assert!(out.stdout.text.starts_with("y\ny\n"));
    assert!(out.stdout.bytes_read > 1000);
    assert!(out.wall < Duration::from_secs(5), "{out:?}");
    assert!(out.note().contains("stdout truncated"), "{}", out.note());
    // Output just under the cap is kept whole.
    let out = shell()
        .run("head -c 999 /dev/zero | tr '\\0' x", ws.path(), &lim)
        .unwrap();
    assert!(!out.stdout.truncated);
    assert_eq!(out.stdout.text.len(), 999);
    assert_eq!(out.limit, None);
}

#[test]
fn a_missing_workspace_is_an_error_not_a_run() {
    let err = shell()
        .run("true", Path::new("/nonexistent/bureau-ws"), &limits())
        .unwrap_err();
    assert!(err.to_string().contains("/nonexistent/bureau-ws"), "{err}");
}
