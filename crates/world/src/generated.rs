//! Generated initial workspaces (`[workspace]` in task.toml).
//!
//! A task with `[workspace] persona/files/seed` starts from the persona workspace bureau-gen
//! writes for that spec. Generation is deterministic, so the tree is generated once into a
//! cache directory keyed by the spec and a fingerprint of the generator's sources
//! (`<cache>/<persona>-<files>-<seed>-<fingerprint>`) and copied into each world; a changed
//! generator gives a new key. The copy verifies every file against the manifest's blake3, so a
//! damaged cache entry is regenerated instead of silently used. `.bureau/` (the manifest) is
//! never copied into the workspace.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use bureau_core::task::{EventKind, Task, WorkspaceSpec};
use bureau_gen::{GenSpec, MANIFEST_DIR, MANIFEST_FILE, Persona};

use crate::WorldError;

/// Fingerprint of bureau-gen's sources (computed by build.rs).
pub const GEN_FINGERPRINT: &str = env!("BUREAU_GEN_FINGERPRINT");

/// Where generated baselines are cached: `$BUREAU_CACHE_DIR/workspaces`, else
/// `$XDG_CACHE_HOME/bureau/workspaces`, else `$HOME/.cache/bureau/workspaces`, else the
/// system temp directory's `bureau-cache/workspaces`.
pub fn cache_root() -> PathBuf {
    bureau_core::cache::cache_dir("workspaces")
}

/// The cache directory name of a spec: `<persona>-<files>-<seed>-<generator fingerprint>`.
pub fn cache_key(ws: &WorkspaceSpec) -> String {
    format!(
        "{}-{}-{}-{}",
        ws.persona, ws.files, ws.seed, GEN_FINGERPRINT
    )
}

fn gen_spec(ws: &WorkspaceSpec, task_toml: &Path) -> Result<GenSpec, WorldError> {
    let persona: Persona = ws.persona.parse().map_err(|e| WorldError::Seed {
        path: task_toml.to_path_buf(),
        message: format!("[workspace]: {e}"),
    })?;
    Ok(GenSpec {
        persona,
        files: ws.files,
        seed: ws.seed,
    })
}

/// One file of a cached baseline, as its manifest lists it.
struct Entry {
    path: String,
    blake3: String,
}

fn read_manifest(dir: &Path) -> Option<Vec<Entry>> {
    let text = std::fs::read_to_string(dir.join(MANIFEST_DIR).join(MANIFEST_FILE)).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v.get("files")?
        .as_array()?
        .iter()
        .map(|f| {
            Some(Entry {
                path: f.get("path")?.as_str()?.to_string(),
                blake3: f.get("blake3")?.as_str()?.to_string(),
            })
        })
        .collect()
}

/// Generate `ws` into the cache (if not there yet) and return the cached directory.
fn ensure_cached(ws: &WorkspaceSpec, task_toml: &Path, fresh: bool) -> Result<PathBuf, WorldError> {
    let root = cache_root();
    let dir = root.join(cache_key(ws));
    if fresh && dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| WorldError::io(&dir, e))?;
    }
    if dir.join(MANIFEST_DIR).join(MANIFEST_FILE).is_file() {
        return Ok(dir);
    }
    std::fs::create_dir_all(&root).map_err(|e| WorldError::io(&root, e))?;
    // Generate next to the final place, then rename: a reader never sees a half-written tree,
    // and concurrent builders race harmlessly (the loser drops its copy).
    let tmp = root.join(format!(
        ".{}.tmp-{}-{:?}",
        cache_key(ws),
        std::process::id(),
        std::thread::current().id()
    ));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).map_err(|e| WorldError::io(&tmp, e))?;
    }
    bureau_gen::generate(&gen_spec(ws, task_toml)?, &tmp).map_err(|e| WorldError::Seed {
        path: task_toml.to_path_buf(),
        message: format!("cannot generate the [workspace]: {e}"),
    })?;
    if dir.exists() {
        // A leftover without a manifest, or another builder won the race.
        if dir.join(MANIFEST_DIR).join(MANIFEST_FILE).is_file() {
            let _ = std::fs::remove_dir_all(&tmp);
            return Ok(dir);
        }
        std::fs::remove_dir_all(&dir).map_err(|e| WorldError::io(&dir, e))?;
    }
    match std::fs::rename(&tmp, &dir) {
        Ok(()) => Ok(dir),
        Err(_) if dir.join(MANIFEST_DIR).join(MANIFEST_FILE).is_file() => {
            let _ = std::fs::remove_dir_all(&tmp);
            Ok(dir)
        }
        Err(e) => Err(WorldError::io(&dir, e)),
    }
}

/// Copy the manifest's files from `src` to `dst`, checking each against its blake3 and
/// keeping its modification time. `Ok(None)` when the cached tree does not match.
fn copy_verified(src: &Path, dst: &Path) -> Result<Option<(u64, u64)>, WorldError> {
    let Some(entries) = read_manifest(src) else {
        return Ok(None);
    };
    let (mut count, mut bytes) = (0u64, 0u64);
    for e in &entries {
        if e.path.starts_with(MANIFEST_DIR) || e.path.contains("..") {
            return Ok(None);
        }
        let from = src.join(&e.path);
        let Ok(data) = std::fs::read(&from) else {
            return Ok(None);
        };
        if blake3::hash(&data).to_hex().as_str() != e.blake3 {
            return Ok(None);
        }
        let to = dst.join(&e.path);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(|err| WorldError::io(parent, err))?;
        }
        std::fs::write(&to, &data).map_err(|err| WorldError::io(&to, err))?;
        if let Ok(mtime) = std::fs::metadata(&from).and_then(|m| m.modified()) {
            let f = std::fs::File::options()
                .write(true)
                .open(&to)
                .map_err(|err| WorldError::io(&to, err))?;
            f.set_modified(mtime)
                .map_err(|err| WorldError::io(&to, err))?;
        }
        count += 1;
        bytes += data.len() as u64;
    }
    Ok(Some((count, bytes)))
}

/// Write the generated workspace of `ws` into `workspace` (an empty directory), through the
/// cache. Returns (files, bytes) copied.
pub(crate) fn materialise(
    ws: &WorkspaceSpec,
    task_toml: &Path,
    workspace: &Path,
) -> Result<(u64, u64), WorldError> {
    let cached = ensure_cached(ws, task_toml, false)?;
    if let Some(n) = copy_verified(&cached, workspace)? {
        return Ok(n);
    }
    // The cache entry is damaged: start the workspace again from a fresh generation.
    std::fs::remove_dir_all(workspace).map_err(|e| WorldError::io(workspace, e))?;
    std::fs::create_dir_all(workspace).map_err(|e| WorldError::io(workspace, e))?;
    let cached = ensure_cached(ws, task_toml, true)?;
    copy_verified(&cached, workspace)?.ok_or_else(|| WorldError::Seed {
        path: cached.clone(),
        message: "a freshly generated workspace does not match its own manifest; remove the cache directory and report it".into(),
    })
}

/// The generated workspace of `ws` as a tree of its own — exactly what a world's workspace
/// starts with, without `.bureau/` — made once next to the cache entry
/// (`<cache>/<key>.tree`, verified against the manifest while it is copied). It is the
/// baseline of replica pools and the base layer of worlds ([`crate::BaseLayer`]); nothing
/// may write to it.
pub fn baseline_tree(ws: &WorkspaceSpec, task_toml: &Path) -> Result<PathBuf, WorldError> {
    let root = cache_root();
    let tree = root.join(format!("{}.tree", cache_key(ws)));
    if tree.is_dir() {
        return Ok(tree);
    }
    let tmp = root.join(format!(
        ".{}.tree.tmp-{}-{:?}",
        cache_key(ws),
        std::process::id(),
        std::thread::current().id()
    ));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).map_err(|e| WorldError::io(&tmp, e))?;
    }
    std::fs::create_dir_all(&tmp).map_err(|e| WorldError::io(&tmp, e))?;
    materialise(ws, task_toml, &tmp)?;
    match std::fs::rename(&tmp, &tree) {
        Ok(()) => Ok(tree),
        // Another builder made it first.
        Err(_) if tree.is_dir() => {
            let _ = std::fs::remove_dir_all(&tmp);
            Ok(tree)
        }
        Err(e) => Err(WorldError::io(&tree, e)),
    }
}

/// Check a base layer of [`baseline_tree`] against the generator's manifest: the same files
/// with the same contents. A damaged tree is an error naming the directory to remove.
pub fn check_tree(ws: &WorkspaceSpec, base: &crate::BaseLayer) -> Result<(), WorldError> {
    let cached = cache_root().join(cache_key(ws));
    let entries = read_manifest(&cached).unwrap_or_default();
    let ok = !entries.is_empty()
        && entries.len() == base.files().len()
        && entries.iter().all(|e| {
            base.files()
                .get(&e.path)
                .is_some_and(|r| r.hash == e.blake3)
        });
    if ok {
        return Ok(());
    }
    Err(WorldError::Seed {
        path: base.dir().to_path_buf(),
        message: format!(
            "this generated workspace tree does not match its manifest ({}); remove the directory (it is a cache) and run again",
            cached.join(MANIFEST_DIR).join(MANIFEST_FILE).display()
        ),
    })
}

/// The shared base layer of `ws`'s generated tree in this process (scanned and checked once).
pub fn base_layer(
    ws: &WorkspaceSpec,
    task_toml: &Path,
) -> Result<std::sync::Arc<crate::BaseLayer>, WorldError> {
    let tree = baseline_tree(ws, task_toml)?;
    let base = crate::BaseLayer::shared(&tree)?;
    check_tree(ws, &base)?;
    Ok(base)
}

/// For a task with `[workspace]`: every `file_deps` source (edge `from`, lone `file`) must be a
/// file of the built workspace, a file an event adds, or the `to` of an edge. The loader
/// cannot check generated files (core does not depend on bureau-gen), so the build does.
pub(crate) fn check_file_deps(task: &Task, workspace: &Path) -> Result<(), WorldError> {
    let mut produced: BTreeSet<&str> = task.file_deps.iter().map(|d| d.to.as_str()).collect();
    for t in &task.turns {
        for e in &t.events {
            if let EventKind::AddFile { path, .. } | EventKind::ReplaceFile { path, .. } = &e.kind {
                produced.insert(path.trim_start_matches("./"));
            }
        }
    }
    let missing: Vec<&str> = task
        .file_deps
        .iter()
        .map(|d| d.from.as_str())
        .chain(task.file_dep_nodes.iter().map(String::as_str))
        .filter(|p| !produced.contains(p) && !workspace.join(p).is_file())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let ws = task.workspace.as_ref();
    Err(WorldError::Seed {
        path: task.toml_path(),
        message: format!(
            "file_deps file(s) {} are neither in the generated workspace ({}) nor in world/files/, nor added by an event, nor the `to` of an edge; run `bureau gen workspace` with the same persona, files and seed and look at .bureau/manifest.json for the paths",
            missing
                .iter()
                .map(|p| format!("`{p}`"))
                .collect::<Vec<_>>()
                .join(", "),
            ws.map(|w| format!("{} {} files seed {}", w.persona, w.files, w.seed))
                .unwrap_or_default()
        ),
    })
}
