//! The confined shell on an overlay replica (`bureau-replica`): the command enters the
//! replica's namespaces, so `pwd`, git and python see the workspace where it is, and it is
//! confined exactly as in an ordinary directory. As root this test also re-runs itself as
//! uid 65534 (`nobody`) for the non-root path (see tests/non_root.rs for why it copies itself).

use std::fs;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use bureau_replica::{Backend, Baseline, Pool, PoolOptions};
use bureau_shell::{Confinement, LimitHit, ShellError, ShellLimits};

const INNER: &str = "BUREAU_SHELL_REPLICA_NON_ROOT";
const NOBODY: u32 = 65534;

fn euid() -> u32 {
    let status = fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("Uid:")).unwrap();
    line.split_whitespace().nth(2).unwrap().parse().unwrap()
}

fn limits() -> ShellLimits {
    ShellLimits {
        wall: Duration::from_secs(20),
        ..ShellLimits::default()
    }
}

/// Every check, for the current caller (root or not).
fn checks(tmp: &Path) {
    let shell = Confinement::probe().unwrap_or_else(|e| panic!("needs the confined shell: {e}"));
    let base = tmp.join("baseline");
    fs::create_dir_all(base.join("docs")).unwrap();
    fs::write(base.join("docs/plan.md"), "# Plan\n").unwrap();
    let baseline = Arc::new(Baseline::open(&base).unwrap());
    let pool = Pool::new(
        Arc::clone(&baseline),
        PoolOptions {
            capacity: 1,
            backend: Backend::Overlay,
            dir: Some(tmp.join("pool")),
        },
    )
    .unwrap_or_else(|e| panic!("needs overlay replicas: {e}"));
    let mut lease = pool.acquire().unwrap();
    let entry = Arc::new(lease.entry().unwrap().unwrap());
    let inner = entry.inner_path().display().to_string();
    let run = |cmd: &str, limits: &ShellLimits| shell.run_in_replica(cmd, &entry, limits).unwrap();

    // The working directory is the workspace as seen inside, for every tool.
    let out = run(
        "pwd; /bin/pwd; python3 -c 'import os; print(os.getcwd())'; cat docs/plan.md; \
         git init -q && git add -A && git status --porcelain && echo done > result.txt",
        &limits(),
    );
    assert!(out.success(), "{out:?}");
    assert_eq!(
        out.stdout.text,
        format!("{inner}\n{inner}\n{inner}\n# Plan\nA  docs/plan.md\n"),
        "{out:?}"
    );
    // Writes land in the replica (seen through Replica::path) and in its change set.
    assert_eq!(
        fs::read_to_string(lease.path().join("result.txt")).unwrap(),
        "done\n"
    );
    assert!(lease.path().join(".git/index").is_file());
    let cs = lease.changes().unwrap();
    assert!(cs.added.contains(&"result.txt".into()), "{cs:?}");
    assert!(cs.added.contains(&".git/index".into()), "{cs:?}");

    // Writing outside the workspace is refused: a directory this caller owns, and the baseline
    // (the lower layer, readable and owned by the caller).
    let outside = tmp.join("outside");
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("victim.txt"), "keep me").unwrap();
    for cmd in [
        format!("echo x > {}/victim.txt", outside.display()),
        format!("echo x > {}/new.txt", outside.display()),
        format!("echo x > {}/docs/plan.md", base.display()),
        format!("rm {}/docs/plan.md", base.display()),
    ] {
        let out = run(&cmd, &limits());
        assert_ne!(out.exit_code, Some(0), "`{cmd}`: {out:?}");
        assert!(
            out.stderr.text.contains("Permission denied"),
            "`{cmd}`: {out:?}"
        );
    }
    assert_eq!(
        fs::read_to_string(outside.join("victim.txt")).unwrap(),
        "keep me"
    );
    assert!(!outside.join("new.txt").exists());
    // Reading outside the workspace and the system's tool paths is refused too: the task's
    // answer key, the run directory and other trials live in such places.
    for cmd in [
        format!("cat {}/victim.txt", outside.display()),
        format!("ls {}", tmp.display()),
    ] {
        let out = run(&cmd, &limits());
        assert_ne!(out.exit_code, Some(0), "`{cmd}`: {out:?}");
        assert!(
            out.stderr.text.contains("Permission denied"),
            "`{cmd}`: {out:?}"
        );
    }
    baseline.verify().unwrap();

    // No network: only lo, and the parent's loopback listener is unreachable.
    let out = run(
        "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '",
        &limits(),
    );
    assert_eq!(out.stdout.text, "lo\n", "{out:?}");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let out = run(
        &format!(
            "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 2); print(\"connected\")'"
        ),
        &limits(),
    );
    assert_ne!(out.exit_code, Some(0), "{out:?}");
    assert!(!out.stdout.text.contains("connected"), "{out:?}");
    drop(listener);

    // The process limit holds and a fork bomb leaves nothing behind.
    let few = ShellLimits {
        max_processes: 16,
        ..limits()
    };
    let out = run(
        "perl -e '$n = 0; for (1..40) { my $p = fork(); last unless defined $p; \
         if ($p == 0) { sleep 3; exit 0 } $n++ } print \"$n\\n\"'",
        &few,
    );
    let started: u32 = out
        .stdout
        .text
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{out:?}"));
    assert!(
        (1..16).contains(&started),
        "{started} children started: {out:?}"
    );
    let bomb = ShellLimits {
        wall: Duration::from_secs(2),
        max_processes: 16,
        ..limits()
    };
    let out = run(
        "perl -e 'while (1) { defined(fork()) or select(undef, undef, undef, 0.05) }'",
        &bomb,
    );
    assert_eq!(out.limit, Some(LimitHit::Wall), "{out:?}");
    assert_eq!(out.leftover_processes, 0, "{out:?}");

    // As root the command still runs as a uid of its own (mapped inside the replica).
    let out = run("id -u", &limits());
    if euid() == 0 {
        let uid: u32 = out.stdout.text.trim().parse().unwrap();
        assert_eq!(uid, bureau_shell::UID_BASE.wrapping_add(out.pid), "{out:?}");
    } else {
        assert!(out.success(), "{out:?}");
    }

    // After a reset the entry is stale: refused, never run in the old generation.
    lease.reset().unwrap();
    match shell.run_in_replica("echo never > never.txt", &entry, &limits()) {
        Err(ShellError::StaleEntry(_)) => {}
        other => panic!("a stale entry must be refused: {other:?}"),
    }
    assert_eq!(lease.full_digest().unwrap(), baseline.digest());
    let fresh = Arc::new(lease.entry().unwrap().unwrap());
    let out = shell.run_in_replica("ls -A", &fresh, &limits()).unwrap();
    assert_eq!(out.stdout.text, "docs\n", "{out:?}");
    drop(fresh);
    drop(entry);
    lease.release().unwrap();
    println!("replica checks passed");
}

#[test]
fn a_command_in_a_replica_runs_inside_it_confined() {
    let tmp = tempfile::tempdir().unwrap();
    checks(tmp.path());
}

#[test]
fn a_non_root_caller_runs_commands_in_its_replicas_too() {
    if std::env::var_os(INNER).is_some() {
        assert_ne!(euid(), 0);
        let tmp = tempfile::tempdir().unwrap();
        checks(tmp.path());
        return;
    }
    if euid() != 0 {
        // Already not root: the other test covers this caller.
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let stage = tempfile::tempdir().unwrap();
    fs::set_permissions(stage.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let exe = stage.path().join("replica");
    fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
    fs::set_permissions(&exe, fs::Permissions::from_mode(0o755)).unwrap();
    let mut cmd = Command::new(&exe);
    cmd.args([
        "--exact",
        "a_non_root_caller_runs_commands_in_its_replicas_too",
        "--nocapture",
    ])
    .env(INNER, "1")
    .env("HOME", "/nonexistent")
    .env("TMPDIR", "/tmp")
    .current_dir(stage.path())
    .uid(NOBODY)
    .gid(NOBODY);
    // The other test forks concurrently: a child forked while the copy was open for writing
    // holds it until its exec, and exec-ing the copy meanwhile fails with ETXTBSY.
    let mut tries = 0;
    let out = loop {
        match cmd.output() {
            Err(e) if e.raw_os_error() == Some(26) && tries < 100 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            other => break other.unwrap(),
        }
    };
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains("replica checks passed"), "{text}");
}
