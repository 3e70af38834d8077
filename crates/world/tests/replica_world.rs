//! A `[workspace]` world built on a replica of its generated tree behaves exactly like one
//! built by copying: the same snapshots (from the replica's change set, not a tree walk), the
//! same changed files, restorable elsewhere; only touched contents go to the blob store; and
//! dropping the world hands a clean replica back to the pool.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;

mod common;

use bureau_core::log::Actor;
use bureau_core::task::Task;
use bureau_replica::{Backend, Baseline, Pool, PoolOptions};
use bureau_world::generated::{baseline_tree, check_tree};
use bureau_world::{BaseLayer, World};
use common::task;
use serde_json::json;

fn pool(t: &Task, backend: Backend) -> (Pool, Arc<BaseLayer>) {
    let ws = t.workspace.as_ref().unwrap();
    let tree = baseline_tree(ws, &t.toml_path()).unwrap();
    let baseline = Arc::new(Baseline::open(&tree).unwrap());
    let base = Arc::new(BaseLayer::from_baseline(&baseline).unwrap());
    check_tree(ws, &base).unwrap();
    let pool = Pool::new(
        baseline,
        PoolOptions {
            capacity: 1,
            backend,
            dir: None,
        },
    )
    .unwrap();
    (pool, base)
}

/// Some generated files (sorted), to change.
fn generated_files(w: &World, n: usize) -> Vec<String> {
    w.base()
        .unwrap()
        .files()
        .keys()
        .filter(|p| p.contains('/'))
        .take(n)
        .cloned()
        .collect()
}

/// The same agent-like changes, through tools and straight on the filesystem.
fn change(w: &mut World, victims: &[String]) {
    let ws = w.workspace().to_path_buf();
    let out = w.call_tool(
        Actor::Agent,
        "files_write",
        &json!({"path": "out/deep/answer.md", "content": "42\n"}),
    );
    assert!(!out.is_error(), "{out:?}");
    let out = w.call_tool(
        Actor::Agent,
        "files_move",
        &json!({"from": victims[0], "to": "moved/renamed.bin"}),
    );
    assert!(!out.is_error(), "{out:?}");
    let out = w.call_tool(Actor::Agent, "files_delete", &json!({"path": victims[1]}));
    assert!(!out.is_error(), "{out:?}");
    // Edit in place, chmod, a symlink, a directory replaced by a file.
    std::fs::write(ws.join(&victims[2]), "edited").unwrap();
    std::fs::set_permissions(ws.join(&victims[3]), std::fs::Permissions::from_mode(0o600)).unwrap();
    std::os::unix::fs::symlink("task-notes.md", ws.join("notes-link")).unwrap();
    let dir = Path::new(&victims[4]).parent().unwrap();
    std::fs::remove_dir_all(ws.join(dir)).unwrap();
    std::fs::write(ws.join(dir), "was a folder").unwrap();
    // The task's own seed file, edited back and forth: unchanged in the end.
    std::fs::write(ws.join("task-notes.md"), "x").unwrap();
    std::fs::write(ws.join("task-notes.md"), "from the task\n").unwrap();
}

fn blob_count(root: &Path) -> usize {
    std::fs::read_dir(root.join("blobs"))
        .map(|d| d.count())
        .unwrap_or(0)
}

fn same_as_a_copied_world(backend: Backend) {
    let d = tempfile::tempdir().unwrap();
    let t = task(d.path(), "");
    let (pool, base) = pool(&t, backend);

    let plain_root = tempfile::tempdir().unwrap();
    let mut plain = World::build(&t, plain_root.path()).unwrap();
    let rep_root = tempfile::tempdir().unwrap();
    let mut rep =
        World::build_on_replica(&t, rep_root.path(), pool.acquire().unwrap(), base.clone())
            .unwrap();
    assert!(rep.on_replica() && !plain.on_replica());
    // Agent subprocesses enter an overlay replica's namespaces; a portable one is a plain dir.
    assert_eq!(
        rep.workspace_entry().is_some(),
        matches!(backend, Backend::Overlay)
    );
    assert!(plain.workspace_entry().is_none());
    assert_eq!(plain.log(), rep.log(), "the builds logged differently");

    let s0p = plain.snapshot().unwrap();
    let s0r = rep.snapshot().unwrap();
    assert_eq!(s0p, s0r, "turn-0 snapshots differ");
    // Only the task's own file is stored: the base holds the generated contents.
    assert_eq!(blob_count(plain_root.path()), 1);
    assert_eq!(blob_count(rep_root.path()), 1);

    let victims = generated_files(&plain, 40);
    // Five files in five different folders.
    let mut picked: Vec<String> = Vec::new();
    for v in &victims {
        let parent = |p: &str| Path::new(p).parent().map(Path::to_path_buf);
        if picked.iter().all(|p| parent(p) != parent(v)) {
            picked.push(v.clone());
        }
    }
    assert!(picked.len() >= 5, "{picked:?}");
    change(&mut plain, &picked);
    change(&mut rep, &picked);

    let s1p = plain.snapshot().unwrap();
    let s1r = rep.snapshot().unwrap();
    assert_eq!(s1p.files, s1r.files);
    assert_eq!(s1p.dirs, s1r.dirs);
    assert_eq!(s1p.symlinks, s1r.symlinks);
    assert_eq!(s1p.tree_digest(), s1r.tree_digest());
    assert_eq!(plain.changed_files().unwrap(), rep.changed_files().unwrap());
    let changed = rep.changed_files().unwrap();
    assert!(changed.created.contains(&"out/deep/answer.md".to_string()));
    assert!(changed.modified.contains(&picked[2]));
    assert!(changed.deleted.contains(&picked[1]));
    assert!(!changed.modified.contains(&"task-notes.md".to_string()));
    // The replica stored only touched contents (a handful, not the tree).
    assert!(
        blob_count(rep_root.path()) < 10,
        "{}",
        blob_count(rep_root.path())
    );

    // A snapshot of the replica world restores into a fresh copied world (as `bureau
    // rescore` does), taking untouched contents from the base.
    let fresh_root = tempfile::tempdir().unwrap();
    let mut fresh = World::build(&t, fresh_root.path()).unwrap();
    fresh
        .restore_from(&s1r, &rep_root.path().join("blobs"))
        .unwrap();
    assert_eq!(fresh.snapshot().unwrap().files, s1r.files);
    // ...and back to turn 0, whose generated contents were never stored anywhere.
    fresh
        .restore_from(&s0r, &rep_root.path().join("blobs"))
        .unwrap();
    assert_eq!(fresh.snapshot().unwrap().files, s0r.files);

    // Dropping the world resets its replica and hands it back.
    drop(rep);
    assert_eq!(pool.idle(), 1);
    assert!(pool.take_errors().is_empty());
    let rep_root2 = tempfile::tempdir().unwrap();
    let again =
        World::build_on_replica(&t, rep_root2.path(), pool.acquire().unwrap(), base).unwrap();
    assert_eq!(again.snapshot().unwrap(), s0r);
    let files: BTreeMap<_, _> = again
        .files()
        .all_files()
        .into_iter()
        .map(|f| (f.path, f.size))
        .collect();
    assert!(!files.contains_key("out/deep/answer.md"));
}

#[test]
fn a_world_on_an_overlay_replica_is_the_same_as_a_copied_one() {
    same_as_a_copied_world(Backend::Overlay);
}

#[test]
fn a_world_on_a_portable_replica_is_the_same_as_a_copied_one() {
    same_as_a_copied_world(Backend::Portable);
}

#[test]
fn only_a_workspace_task_is_built_on_a_replica() {
    let d = tempfile::tempdir().unwrap();
    let t = task(d.path(), "");
    let (pool, base) = pool(&t, Backend::Portable);
    let mut plain = t.clone();
    plain.workspace = None;
    let root = tempfile::tempdir().unwrap();
    let err = World::build_on_replica(&plain, root.path(), pool.acquire().unwrap(), base)
        .unwrap_err()
        .to_string();
    assert!(err.contains("[workspace]"), "{err}");
}
