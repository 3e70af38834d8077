//! Processes that enter an overlay replica's namespaces see the workspace where it is:
//! `getcwd()` is the merged directory as seen inside, so `pwd`, git and python agree with
//! the files; what they write is in the replica and undone by a reset.

mod support;

use std::fs;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::Arc;

use bureau_replica::{Backend, NsEntry};
use support::*;

/// `sh -c script` entered into the replica (no `current_dir`: the entry chdirs).
fn sh_in(entry: &Arc<NsEntry>, script: &str) -> std::io::Result<std::process::Output> {
    let inside = Arc::clone(entry);
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c").arg(script);
    // SAFETY: `enter` makes raw system calls only.
    unsafe { cmd.pre_exec(move || inside.enter()) };
    cmd.output()
}

#[test]
fn an_entered_child_sees_the_workspace_at_its_inner_path_and_writes_into_the_replica() {
    let f = fixture();
    let pool = pool(&f, Backend::Overlay, 1);
    let mut lease = pool.acquire().unwrap();
    let entry = Arc::new(
        lease
            .entry()
            .unwrap()
            .expect("overlay replicas have an entry"),
    );
    let inner = entry.inner_path().to_str().unwrap().to_string();
    assert_eq!(entry.view(), lease.path());
    assert!(lease.path().starts_with("/proc/"));
    assert!(!inner.starts_with("/proc/"));

    let out = sh_in(
        &entry,
        "pwd; /bin/pwd; python3 -c 'import os; print(os.getcwd())'; cat README.md; \
         git init -q && git status --porcelain | sort | head -3 && echo made > made.txt \
         && mkdir -p out/deep && python3 -c \"open('out/deep/r.txt','w').write('py')\"",
    )
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stdout: {stdout}\nstderr: {stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[..3], [inner.as_str(), inner.as_str(), inner.as_str()]);
    assert_eq!(lines[3], "# Project", "the baseline is visible: {stdout}");
    assert!(
        lines.contains(&"?? README.md"),
        "git status works: {stdout}"
    );

    // What the child wrote is in the replica, seen from Bureau's namespace...
    let view = lease.path();
    assert_eq!(fs::read_to_string(view.join("made.txt")).unwrap(), "made\n");
    assert_eq!(
        fs::read_to_string(view.join("out/deep/r.txt")).unwrap(),
        "py"
    );
    assert!(view.join(".git/HEAD").is_file());
    // ... not in the empty mount point of Bureau's namespace, nor in the baseline.
    assert!(!entry.inner_path().join("made.txt").exists());
    assert!(!f.base_dir.join("made.txt").exists());
    let cs = lease.changes().unwrap();
    for rel in ["made.txt", "out", "out/deep/r.txt", ".git", ".git/HEAD"] {
        assert!(cs.added.contains(&p(rel)), "{rel} not in {cs:?}");
    }
    assert!(cs.modified.is_empty() && cs.deleted.is_empty(), "{cs:?}");

    // A reset makes the entry stale: it refuses to enter rather than use the old namespaces.
    lease.reset().unwrap();
    assert!(!entry.is_current());
    let err = sh_in(&entry, "echo never").unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::ESTALE), "{err}");
    assert_eq!(lease.full_digest().unwrap(), f.baseline.digest());
    assert!(lease.changes().unwrap().is_empty());
    let fresh = Arc::new(lease.entry().unwrap().unwrap());
    let out = sh_in(&fresh, "pwd; ls -A").unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(stdout.starts_with(&format!("{inner}\n")), "{stdout}");
    assert!(
        !stdout.contains("made.txt") && !stdout.contains(".git"),
        "{stdout}"
    );
    drop(fresh);
    lease.release().unwrap();
    f.baseline.verify().unwrap();
}

#[test]
fn inside_a_root_callers_replica_a_child_can_switch_to_an_unprivileged_uid_of_its_own() {
    let f = fixture();
    let pool = pool(&f, Backend::Overlay, 1);
    let lease = pool.acquire().unwrap();
    let entry = Arc::new(lease.entry().unwrap().unwrap());
    // SAFETY: trivial getter.
    let root = unsafe { libc::geteuid() } == 0;
    let id: u32 = 1_700_000_123;
    let inside = Arc::clone(&entry);
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c").arg("id -u; id -g; pwd");
    // SAFETY: raw system calls only.
    unsafe {
        cmd.pre_exec(move || {
            inside.enter()?;
            if libc::setgroups(0, std::ptr::null()) != 0
                || libc::setresgid(id, id, id) != 0
                || libc::setresuid(id, id, id) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    };
    let out = cmd.output();
    if root {
        // The holder of a root caller maps every uid and gid to itself.
        let out = out.unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout}");
        assert_eq!(
            stdout,
            format!("{id}\n{id}\n{}\n", entry.inner_path().display())
        );
        let map =
            fs::read_to_string(format!("/proc/{}/uid_map", lease.holder_pid().unwrap())).unwrap();
        assert_eq!(
            map.split_whitespace().collect::<Vec<_>>(),
            ["0", "0", "4294967295"]
        );
    } else {
        // A non-root caller's holder maps only the caller's uid: switching is refused.
        assert!(out.is_err(), "{out:?}");
    }
}

#[test]
fn portable_replicas_have_no_entry() {
    let f = fixture();
    let pool = pool(&f, Backend::Portable, 1);
    let lease = pool.acquire().unwrap();
    assert!(lease.entry().unwrap().is_none());
}
