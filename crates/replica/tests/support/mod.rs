#![allow(dead_code)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bureau_replica::{Backend, Baseline, Pool, PoolOptions};

pub const BACKENDS: [Backend; 2] = [Backend::Overlay, Backend::Portable];

/// A small baseline with nested folders, a read-only file, an executable, a symlink, a
/// hard-linked pair and fixed mtimes.
pub fn make_baseline(root: &Path) {
    let w = |rel: &str, body: &[u8]| {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, body).unwrap();
    };
    w("README.md", b"# Project\n");
    w("literature/2024/smith.txt", b"Smith et al. 2024\n");
    w("literature/2024/jones.txt", b"Jones 2024, revised\n");
    w("experiments/run1/config.toml", b"lr = 0.1\n");
    w(
        "experiments/run1/results.csv",
        b"epoch,loss\n1,0.5\n2,0.25\n",
    );
    w("experiments/run2/config.toml", b"lr = 0.01\n");
    w("results/summary.md", b"best: run1\n");
    w("bin/tool.sh", b"#!/bin/sh\necho hi\n");
    fs::set_permissions(root.join("bin/tool.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    fs::set_permissions(
        root.join("results/summary.md"),
        fs::Permissions::from_mode(0o444),
    )
    .unwrap();
    fs::create_dir_all(root.join("archive/empty")).unwrap();
    std::os::unix::fs::symlink("../results/summary.md", root.join("literature/latest")).unwrap();
    fs::hard_link(
        root.join("experiments/run1/config.toml"),
        root.join("experiments/run1/config.link"),
    )
    .unwrap();
    let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    for rel in [
        "README.md",
        "literature/2024/smith.txt",
        "results/summary.md",
    ] {
        set_mtime(&root.join(rel), t);
    }
}

pub fn set_mtime(p: &Path, t: SystemTime) {
    let f = fs::File::options()
        .write(true)
        .open(p)
        .or_else(|_| fs::File::open(p));
    f.unwrap()
        .set_times(fs::FileTimes::new().set_modified(t))
        .unwrap();
}

pub fn mtime(p: &Path) -> SystemTime {
    fs::symlink_metadata(p).unwrap().modified().unwrap()
}

pub struct Fixture {
    pub _tmp: tempfile::TempDir,
    pub base_dir: PathBuf,
    pub baseline: Arc<Baseline>,
}

pub fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let base_dir = tmp.path().join("baseline");
    fs::create_dir(&base_dir).unwrap();
    make_baseline(&base_dir);
    let baseline = Arc::new(Baseline::open(&base_dir).unwrap());
    Fixture {
        _tmp: tmp,
        base_dir,
        baseline,
    }
}

pub fn pool(f: &Fixture, backend: Backend, capacity: usize) -> Pool {
    Pool::new(
        Arc::clone(&f.baseline),
        PoolOptions {
            capacity,
            backend,
            dir: Some(f._tmp.path().join(format!("pool-{backend:?}"))),
        },
    )
    .unwrap_or_else(|e| panic!("{backend:?} pool: {e}"))
}

/// `mv`: rename, falling back to copy + delete on EXDEV (overlayfs without redirect_dir
/// refuses to rename a lower directory, exactly as `mv` then does).
pub fn mv(from: &Path, to: &Path) {
    match fs::rename(from, to) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc_exdev()) => {
            copy_tree(from, to);
            fs::remove_dir_all(from).unwrap();
        }
        Err(e) => panic!("rename {} → {}: {e}", from.display(), to.display()),
    }
}

fn libc_exdev() -> i32 {
    18
}

fn copy_tree(from: &Path, to: &Path) {
    let md = fs::symlink_metadata(from).unwrap();
    if md.is_dir() {
        fs::create_dir(to).unwrap();
        for e in fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            copy_tree(&e.path(), &to.join(e.file_name()));
        }
    } else if md.file_type().is_symlink() {
        std::os::unix::fs::symlink(fs::read_link(from).unwrap(), to).unwrap();
    } else {
        fs::copy(from, to).unwrap();
    }
}

pub fn p(s: &str) -> PathBuf {
    PathBuf::from(s)
}
