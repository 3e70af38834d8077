//! `[workspace]` tasks: the world starts from a bureau-gen persona workspace (cached, verified,
//! without `.bureau/`), the task's own files on top, and file_deps checked against the tree.

use std::collections::BTreeMap;
use std::path::Path;

mod common;

use bureau_core::task::{WORKSPACE_FILES, WORKSPACE_PERSONAS};
use bureau_gen::{GenSpec, Persona};
use bureau_world::World;
use bureau_world::generated::{cache_key, cache_root};
use common::task;

/// Every file under `root` (relative path → bytes).
/// The generated-workspace cache is shared by every test of this file, and one of them damages
/// it on purpose: they take turns.
static CACHE: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn cache_lock() -> std::sync::MutexGuard<'static, ()> {
    CACHE.lock().unwrap_or_else(|p| p.into_inner())
}

fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e.path().strip_prefix(root).unwrap();
            (
                rel.to_string_lossy().replace('\\', "/"),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

fn generated_reference() -> (tempfile::TempDir, BTreeMap<String, Vec<u8>>) {
    let out = tempfile::tempdir().unwrap();
    let spec = GenSpec {
        persona: Persona::Researcher,
        files: 120,
        seed: 7,
    };
    bureau_gen::generate(&spec, out.path()).unwrap();
    let t = tree(out.path());
    (out, t)
}

#[test]
fn a_workspace_task_builds_from_the_generated_tree_without_the_manifest() {
    let _cache = cache_lock();
    let d = tempfile::tempdir().unwrap();
    let t = task(d.path(), "");
    let root = tempfile::tempdir().unwrap();
    let w = World::build(&t, root.path()).unwrap();
    let got = tree(w.workspace());
    let (_ref_dir, mut want) = generated_reference();
    assert!(want.keys().any(|k| k.starts_with(".bureau/")));
    want.retain(|k, _| !k.starts_with(".bureau/"));
    assert_eq!(want.len(), 120);
    // The task's own world/files/ goes on top of the generated tree.
    want.insert("task-notes.md".into(), b"from the task\n".to_vec());
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>()
    );
    assert!(
        got == want,
        "generated files differ from bureau-gen's output"
    );
    assert!(!w.workspace().join(".bureau").exists());
    // The build logged the generation.
    assert!(w.log().iter().any(|e| e.action == "generate"));
    // The baseline is cached under its key.
    let key = cache_key(t.workspace.as_ref().unwrap());
    assert!(key.starts_with("researcher-120-7-"), "{key}");
    assert!(
        cache_root()
            .join(&key)
            .join(".bureau/manifest.json")
            .is_file()
    );
}

#[test]
fn two_builds_are_identical_and_a_damaged_cache_is_regenerated() {
    let _cache = cache_lock();
    let d = tempfile::tempdir().unwrap();
    let t = task(d.path(), "");
    let (r1, r2, r3) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let w1 = World::build(&t, r1.path()).unwrap();
    let w2 = World::build(&t, r2.path()).unwrap();
    assert!(tree(w1.workspace()) == tree(w2.workspace()));
    assert_eq!(
        w1.snapshot().unwrap().files,
        w2.snapshot().unwrap().files,
        "snapshots of two builds differ"
    );
    // Someone edits a cached file: the next build notices (blake3) and regenerates.
    let cached = cache_root().join(cache_key(t.workspace.as_ref().unwrap()));
    let victim = tree(w1.workspace())
        .into_keys()
        .find(|k| k != "task-notes.md")
        .unwrap();
    std::fs::write(cached.join(&victim), "tampered").unwrap();
    let w3 = World::build(&t, r3.path()).unwrap();
    assert!(tree(w3.workspace()) == tree(w1.workspace()));
    assert_ne!(std::fs::read(cached.join(&victim)).unwrap(), b"tampered");
}

#[test]
fn file_deps_may_name_generated_files_and_missing_ones_fail_the_build() {
    let _cache = cache_lock();
    let (_ref_dir, want) = generated_reference();
    let generated = want.keys().find(|k| !k.starts_with(".bureau/")).unwrap();
    let d = tempfile::tempdir().unwrap();
    let deps = format!(
        "file_deps = [{{ from = \"{generated}\", to = \"answer.md\" }}, {{ file = \"task-notes.md\" }}]"
    );
    let t = task(d.path(), &deps);
    let root = tempfile::tempdir().unwrap();
    World::build(&t, root.path()).unwrap();

    let d2 = tempfile::tempdir().unwrap();
    let t2 = task(
        d2.path(),
        "file_deps = [{ from = \"results/not-there.xlsx\", to = \"answer.md\" }]",
    );
    let root2 = tempfile::tempdir().unwrap();
    let e = World::build(&t2, root2.path()).unwrap_err().to_string();
    assert!(e.contains("task.toml"), "{e}");
    assert!(
        e.contains("`results/not-there.xlsx` are neither in the generated workspace (researcher 120 files seed 7)"),
        "{e}"
    );
}

#[test]
fn core_knows_exactly_the_generator_personas_and_file_range() {
    let names: Vec<&str> = Persona::ALL.iter().map(|p| p.name()).collect();
    assert_eq!(names, WORKSPACE_PERSONAS);
    assert_eq!(
        (*WORKSPACE_FILES.start(), *WORKSPACE_FILES.end()),
        (bureau_gen::MIN_FILES, bureau_gen::MAX_FILES)
    );
}
