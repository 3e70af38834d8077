//! The pool is bounded, reuses replicas, and a random sequence of agent changes is always
//! reset to the baseline digest.

mod support;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use proptest::prelude::*;
use support::*;

#[test]
fn the_pool_is_bounded_and_waits_for_a_release() {
    for backend in BACKENDS {
        let f = fixture();
        let pool = pool(&f, backend, 2);
        let a = pool.acquire().unwrap();
        let b = pool.acquire().unwrap();
        assert!(
            pool.try_acquire().unwrap().is_none(),
            "{backend:?}: capacity 2"
        );
        assert_eq!(pool.live(), 2);
        fs::write(a.path().join("README.md"), b"dirty").unwrap();

        let (tx, rx) = mpsc::channel();
        let waiter = {
            let pool = pool.clone();
            std::thread::spawn(move || {
                let lease = pool.acquire().unwrap();
                let body = fs::read(lease.path().join("README.md")).unwrap();
                tx.send(body).unwrap();
            })
        };
        assert!(
            rx.recv_timeout(Duration::from_millis(200)).is_err(),
            "{backend:?}: acquire must wait at capacity"
        );
        drop(a); // reset + back to the pool
        let body = rx.recv_timeout(Duration::from_secs(30)).unwrap();
        assert_eq!(
            body, b"# Project\n",
            "{backend:?}: the waiter gets a reset replica"
        );
        waiter.join().unwrap();
        drop(b);
        assert_eq!(pool.live(), 2, "no replica beyond capacity was made");
        assert_eq!(pool.idle(), 2);
        assert!(pool.take_errors().is_empty());
    }
}

#[test]
fn warm_makes_idle_replicas_up_to_capacity() {
    for backend in BACKENDS {
        let f = fixture();
        let pool = pool(&f, backend, 3);
        pool.warm(8).unwrap();
        assert_eq!((pool.live(), pool.idle()), (3, 3), "{backend:?}");
        let lease = pool.acquire().unwrap();
        assert_eq!(lease.full_digest().unwrap(), f.baseline.digest());
    }
}

#[test]
fn dropping_the_pool_removes_its_replicas_and_holders() {
    let f = fixture();
    let dir = f._tmp.path().join("pool-Overlay");
    let mut pids = Vec::new();
    {
        let pool = pool(&f, bureau_replica::Backend::Overlay, 1);
        let lease = pool.acquire().unwrap();
        pids.extend(lease.holder_pids());
        assert_eq!(pids.len(), 2, "a holder and a spare");
        drop(lease); // reset: the spare takes over, the old holder is stopped
        let mut lease = pool.acquire().unwrap();
        lease.settle().unwrap();
        assert!(
            !alive(pids[0]),
            "the old holder {} is stopped after a reset",
            pids[0]
        );
        pids.extend(lease.holder_pids());
    }
    for pid in pids {
        assert!(
            !alive(pid),
            "holder {pid} still alive after the pool was dropped"
        );
    }
    assert_eq!(
        fs::read_dir(&dir).unwrap().count(),
        0,
        "replica dirs left behind"
    );
}

/// A holder is alive while /proc shows it and it is not a zombie.
fn alive(pid: u32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !s
            .split(") ")
            .nth(1)
            .is_some_and(|rest| rest.starts_with('Z')),
        Err(_) => false,
    }
}

#[derive(Debug, Clone)]
enum Op {
    Write(usize, Vec<u8>),
    Append(usize, Vec<u8>),
    SameSizeSameMtime(usize),
    Delete(usize),
    Mkdir(usize, u8),
    RemoveDir(usize),
    Chmod(usize, u32),
    Rename(usize, usize),
    Symlink(usize, usize),
    HardLink(usize, usize),
    Touch(usize),
}

const PATHS: [&str; 12] = [
    "README.md",
    "literature/2024/smith.txt",
    "literature/2024/jones.txt",
    "literature/latest",
    "experiments/run1/config.toml",
    "experiments/run1/config.link",
    "experiments/run1/results.csv",
    "experiments/run2",
    "results/summary.md",
    "archive/empty",
    "new/file.txt",
    "experiments/extra.bin",
];

fn op() -> impl Strategy<Value = Op> {
    let i = 0..PATHS.len();
    prop_oneof![
        (i.clone(), prop::collection::vec(any::<u8>(), 0..40)).prop_map(|(i, b)| Op::Write(i, b)),
        (i.clone(), prop::collection::vec(any::<u8>(), 1..10)).prop_map(|(i, b)| Op::Append(i, b)),
        i.clone().prop_map(Op::SameSizeSameMtime),
        i.clone().prop_map(Op::Delete),
        (i.clone(), any::<u8>()).prop_map(|(i, n)| Op::Mkdir(i, n)),
        i.clone().prop_map(Op::RemoveDir),
        (
            i.clone(),
            prop::sample::select(vec![0o600u32, 0o644, 0o755, 0o444, 0o700])
        )
            .prop_map(|(i, m)| Op::Chmod(i, m)),
        (i.clone(), i.clone()).prop_map(|(a, b)| Op::Rename(a, b)),
        (i.clone(), i.clone()).prop_map(|(a, b)| Op::Symlink(a, b)),
        (i.clone(), i.clone()).prop_map(|(a, b)| Op::HardLink(a, b)),
        i.prop_map(Op::Touch),
    ]
}

/// Apply an op the way an agent's shell would; ops that make no sense on the current tree
/// fail and are ignored, as a shell command would.
fn apply(w: &Path, op: &Op) {
    let at = |i: usize| w.join(PATHS[i]);
    let mkparent = |p: &Path| {
        let _ = fs::create_dir_all(p.parent().unwrap());
    };
    let _ = match op {
        Op::Write(i, b) => {
            mkparent(&at(*i));
            fs::write(at(*i), b)
        }
        Op::Append(i, b) => fs::OpenOptions::new()
            .append(true)
            .open(at(*i))
            .and_then(|mut f| std::io::Write::write_all(&mut f, b)),
        Op::SameSizeSameMtime(i) => {
            let p = at(*i);
            match (fs::read(&p), fs::symlink_metadata(&p)) {
                (Ok(mut body), Ok(md)) if !body.is_empty() && md.is_file() => {
                    body[0] = body[0].wrapping_add(1);
                    let t = md.modified().unwrap();
                    let r = fs::write(&p, &body);
                    set_mtime(&p, t);
                    r
                }
                _ => Ok(()),
            }
        }
        Op::Delete(i) => fs::remove_file(at(*i)),
        Op::Mkdir(i, n) => fs::create_dir_all(at(*i).join(format!("d{n}")))
            .and_then(|_| fs::write(at(*i).join(format!("d{n}/f")), [*n])),
        Op::RemoveDir(i) => fs::remove_dir_all(at(*i)),
        Op::Chmod(i, m) => fs::set_permissions(at(*i), fs::Permissions::from_mode(*m)),
        Op::Rename(a, b) => {
            mkparent(&at(*b));
            fs::rename(at(*a), at(*b))
        }
        Op::Symlink(a, b) => {
            mkparent(&at(*b));
            std::os::unix::fs::symlink(PATHS[*a], at(*b))
        }
        Op::HardLink(a, b) => {
            mkparent(&at(*b));
            fs::hard_link(at(*a), at(*b))
        }
        Op::Touch(i) => {
            if at(*i).is_file() {
                set_mtime(&at(*i), std::time::SystemTime::now());
            }
            Ok(())
        }
    };
}

fn random_changes_reset_to_the_baseline(backend: bureau_replica::Backend) {
    let f = fixture();
    let pool = pool(&f, backend, 1);
    let lease = std::cell::RefCell::new(pool.acquire().unwrap());
    let config = ProptestConfig {
        cases: 96,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    proptest!(config, |(ops in prop::collection::vec(op(), 1..12))| {
        let mut lease = lease.borrow_mut();
        let w = lease.path();
        for o in &ops {
            apply(&w, o);
        }
        let changes = lease.changes().unwrap();
        let moved = lease.full_digest().unwrap() != f.baseline.digest();
        // Everything the change set names moved the digest (a folder whose only change is
        // its mtime moves the digest without being named).
        prop_assert!(changes.is_empty() || moved, "change set {:?} but digest unmoved", changes);
        lease.reset().unwrap();
        prop_assert_eq!(lease.full_digest().unwrap(), f.baseline.digest());
        prop_assert!(lease.changes().unwrap().is_empty());
    });
    drop(lease);
    f.baseline.verify().unwrap();
}

#[test]
fn random_changes_reset_exactly_on_overlay() {
    random_changes_reset_to_the_baseline(bureau_replica::Backend::Overlay);
}

#[test]
fn random_changes_reset_exactly_on_portable() {
    random_changes_reset_to_the_baseline(bureau_replica::Backend::Portable);
}
