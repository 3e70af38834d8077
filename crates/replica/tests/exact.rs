//! Every kind of agent change is undone by a reset, on both backends, and the change set
//! names it.

mod support;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use bureau_replica::{Backend, BackendKind, ChangeSet};
use support::*;

/// Apply `change` to a fresh lease on each backend; check the change set, then that release
/// resets the replica to the baseline digest (full scan) and that the baseline is untouched.
fn check(name: &str, change: impl Fn(&Path), expect: impl Fn(&ChangeSet)) {
    for backend in BACKENDS {
        let f = fixture();
        let pool = pool(&f, backend, 1);
        let want = match backend {
            Backend::Overlay => BackendKind::Overlay,
            _ => BackendKind::Portable,
        };
        assert_eq!(pool.backend(), want);
        let mut lease = pool.acquire().unwrap();
        assert_eq!(
            lease.full_digest().unwrap(),
            f.baseline.digest(),
            "{name}/{backend:?}: fresh replica"
        );
        change(&lease.path());
        let cs = lease.changes().unwrap();
        assert!(!cs.is_empty(), "{name}/{backend:?}: change not seen");
        expect(&cs);
        assert_ne!(
            lease.full_digest().unwrap(),
            f.baseline.digest(),
            "{name}/{backend:?}: the change must move the digest"
        );
        let stats = lease
            .release()
            .unwrap_or_else(|e| panic!("{name}/{backend:?}: {e}"));
        assert!(stats.touched > 0);
        let again = pool.acquire().unwrap();
        assert_eq!(
            again.full_digest().unwrap(),
            f.baseline.digest(),
            "{name}/{backend:?}: reset is not exact"
        );
        let mut again = again;
        assert!(again.changes().unwrap().is_empty(), "{name}/{backend:?}");
        assert_eq!(pool.live(), 1, "the replica is reused");
        f.baseline
            .verify()
            .unwrap_or_else(|e| panic!("{name}/{backend:?}: {e}"));
    }
}

#[test]
fn added_files_and_folders_are_removed() {
    check(
        "add",
        |w| {
            fs::write(w.join("notes.txt"), b"new").unwrap();
            fs::create_dir_all(w.join("drafts/v2")).unwrap();
            fs::write(w.join("drafts/v2/report.md"), b"draft").unwrap();
            fs::write(w.join("literature/2024/new.txt"), b"x").unwrap();
        },
        |cs| {
            assert_eq!(
                cs.added,
                vec![
                    p("drafts"),
                    p("drafts/v2"),
                    p("drafts/v2/report.md"),
                    p("literature/2024/new.txt"),
                    p("notes.txt")
                ]
            );
            assert!(cs.modified.is_empty() && cs.deleted.is_empty(), "{cs:?}");
        },
    );
}

#[test]
fn deleted_files_and_folders_come_back() {
    check(
        "delete",
        |w| {
            fs::remove_file(w.join("README.md")).unwrap();
            fs::remove_dir_all(w.join("experiments")).unwrap();
        },
        |cs| {
            assert_eq!(
                cs.deleted,
                vec![
                    p("README.md"),
                    p("experiments"),
                    p("experiments/run1"),
                    p("experiments/run1/config.link"),
                    p("experiments/run1/config.toml"),
                    p("experiments/run1/results.csv"),
                    p("experiments/run2"),
                    p("experiments/run2/config.toml"),
                ]
            );
            assert!(cs.added.is_empty() && cs.modified.is_empty(), "{cs:?}");
        },
    );
}

#[test]
fn an_edit_keeping_size_and_mtime_is_undone() {
    check(
        "same-size-same-mtime",
        |w| {
            let f = w.join("literature/2024/smith.txt");
            let before = mtime(&f);
            let len = fs::metadata(&f).unwrap().len();
            fs::write(&f, b"SMITH ET AL. 2024\n").unwrap();
            set_mtime(&f, before);
            assert_eq!(fs::metadata(&f).unwrap().len(), len);
            assert_eq!(mtime(&f), before);
        },
        |cs| {
            assert_eq!(cs.modified, vec![p("literature/2024/smith.txt")]);
            assert!(cs.added.is_empty() && cs.deleted.is_empty(), "{cs:?}");
        },
    );
}

#[test]
fn edits_appends_and_truncations_are_undone() {
    check(
        "edit",
        |w| {
            fs::write(w.join("experiments/run1/results.csv"), b"epoch,loss\n").unwrap();
            let mut f = fs::OpenOptions::new()
                .append(true)
                .open(w.join("README.md"))
                .unwrap();
            std::io::Write::write_all(&mut f, b"more\n").unwrap();
        },
        |cs| {
            assert_eq!(
                cs.modified,
                vec![p("README.md"), p("experiments/run1/results.csv")]
            )
        },
    );
}

#[test]
fn permission_changes_are_undone() {
    check(
        "chmod",
        |w| {
            fs::set_permissions(w.join("bin/tool.sh"), fs::Permissions::from_mode(0o600)).unwrap();
            fs::set_permissions(
                w.join("results/summary.md"),
                fs::Permissions::from_mode(0o666),
            )
            .unwrap();
            fs::set_permissions(w.join("archive"), fs::Permissions::from_mode(0o700)).unwrap();
        },
        |cs| {
            assert_eq!(
                cs.modified,
                vec![p("archive"), p("bin/tool.sh"), p("results/summary.md")]
            );
        },
    );
}

#[test]
fn renames_of_files_and_folders_are_undone() {
    check(
        "rename",
        |w| {
            mv(&w.join("README.md"), &w.join("README.old"));
            mv(&w.join("literature/2024"), &w.join("literature/y2024"));
        },
        |cs| {
            assert!(cs.added.contains(&p("README.old")), "{cs:?}");
            assert!(
                cs.added.contains(&p("literature/y2024/smith.txt")),
                "{cs:?}"
            );
            assert!(cs.deleted.contains(&p("README.md")), "{cs:?}");
            assert!(
                cs.deleted.contains(&p("literature/2024/jones.txt")),
                "{cs:?}"
            );
        },
    );
}

#[test]
fn symlinks_made_or_retargeted_are_undone() {
    check(
        "symlink",
        |w| {
            std::os::unix::fs::symlink("/etc/passwd", w.join("passwd")).unwrap();
            fs::remove_file(w.join("literature/latest")).unwrap();
            std::os::unix::fs::symlink("2024/jones.txt", w.join("literature/latest")).unwrap();
            fs::remove_file(w.join("results/summary.md")).unwrap();
            std::os::unix::fs::symlink("../README.md", w.join("results/summary.md")).unwrap();
        },
        |cs| {
            assert_eq!(cs.added, vec![p("passwd")]);
            assert_eq!(
                cs.modified,
                vec![p("literature/latest"), p("results/summary.md")]
            );
        },
    );
}

#[test]
fn hard_links_made_or_broken_are_undone() {
    check(
        "hardlink",
        |w| {
            // A new name for a baseline file, a baseline file replaced by a link to another,
            // and the baseline's own pair broken in two.
            fs::hard_link(w.join("README.md"), w.join("README.link")).unwrap();
            fs::remove_file(w.join("experiments/run2/config.toml")).unwrap();
            fs::hard_link(
                w.join("literature/2024/jones.txt"),
                w.join("experiments/run2/config.toml"),
            )
            .unwrap();
            let link = w.join("experiments/run1/config.link");
            let body = fs::read(&link).unwrap();
            fs::remove_file(&link).unwrap();
            fs::write(&link, body).unwrap();
        },
        |cs| {
            assert_eq!(cs.added, vec![p("README.link")]);
            assert!(
                cs.modified.contains(&p("experiments/run2/config.toml")),
                "{cs:?}"
            );
            assert!(
                cs.modified.contains(&p("experiments/run1/config.link")),
                "{cs:?}"
            );
        },
    );
}

#[test]
fn a_folder_replaced_by_a_file_and_back_is_undone() {
    check(
        "kind",
        |w| {
            fs::remove_dir_all(w.join("experiments/run2")).unwrap();
            fs::write(w.join("experiments/run2"), b"now a file").unwrap();
            fs::remove_file(w.join("README.md")).unwrap();
            fs::create_dir(w.join("README.md")).unwrap();
            fs::write(w.join("README.md/inside"), b"x").unwrap();
        },
        |cs| {
            assert_eq!(cs.added, vec![p("README.md/inside")]);
            assert_eq!(cs.modified, vec![p("README.md"), p("experiments/run2")]);
            assert_eq!(cs.deleted, vec![p("experiments/run2/config.toml")]);
        },
    );
}

#[test]
fn an_unchanged_replica_reports_nothing_and_a_touch_is_undone() {
    for backend in BACKENDS {
        let f = fixture();
        let pool = pool(&f, backend, 1);
        let mut lease = pool.acquire().unwrap();
        assert_eq!(lease.changes().unwrap(), ChangeSet::default());
        let readme = lease.path().join("README.md");
        set_mtime(&readme, std::time::SystemTime::now());
        assert_eq!(lease.changes().unwrap().modified, vec![p("README.md")]);
        lease.reset().unwrap();
        assert_eq!(
            lease.full_digest().unwrap(),
            f.baseline.digest(),
            "{backend:?}"
        );
    }
}

#[test]
fn the_baseline_is_never_written_through_a_replica() {
    for backend in BACKENDS {
        let f = fixture();
        let pool = pool(&f, backend, 2);
        let a = pool.acquire().unwrap();
        let b = pool.acquire().unwrap();
        fs::write(a.path().join("README.md"), b"agent a").unwrap();
        fs::write(a.path().join("experiments/run1/config.toml"), b"lr = 9\n").unwrap();
        assert_eq!(
            fs::read(b.path().join("README.md")).unwrap(),
            b"# Project\n"
        );
        assert_eq!(
            fs::read(b.path().join("experiments/run1/config.link")).unwrap(),
            b"lr = 0.1\n",
            "{backend:?}: a hard link in the baseline must not leak writes across replicas"
        );
        assert_eq!(
            fs::read(f.base_dir.join("experiments/run1/config.link")).unwrap(),
            b"lr = 0.1\n"
        );
        f.baseline.verify().unwrap();
    }
}

#[test]
fn a_baseline_changed_behind_the_pool_fails_the_reset_loudly() {
    for backend in BACKENDS {
        let f = fixture();
        let pool = pool(&f, backend, 1);
        let lease = pool.acquire().unwrap();
        fs::write(lease.path().join("README.md"), b"agent").unwrap();
        // Someone edits the baseline directory itself (not through a replica).
        fs::write(f.base_dir.join("README.md"), b"tampered").unwrap();
        let err = lease.release().unwrap_err().to_string();
        assert!(
            err.contains("does not match its baseline") && err.contains("README.md"),
            "{backend:?}: {err}"
        );
        assert_eq!(pool.live(), 0, "{backend:?}: the bad replica is discarded");
        assert!(f.baseline.verify().is_err());
    }
}
