//! A task's private reference files (`reference/` beside `world/`): expected documents that
//! checks compare deliverables against. Agents never see them — the world is built from
//! `world/` only — and checks read them with the same typed readers as workspace files, by
//! the path `w.reference("<path>")` returns (`reference:<path>`).

use std::path::{Component, Path, PathBuf};

use bureau_core::Task;

/// How a reference path is spelled to the typed readers.
pub(crate) const PREFIX: &str = "reference:";

/// The reference file `rel` of `task`, if `rel` is a plain relative path with no `..` and no
/// symbolic link on the way (a task's reference folder may not point outside itself).
pub(crate) fn locate(task: &Task, rel: &str) -> Result<PathBuf, String> {
    let rel_path = Path::new(rel);
    if rel.is_empty()
        || !rel_path
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
    {
        return Err(format!(
            "`{rel}` is not a path inside the task's reference/ folder; give it relative, without `..`"
        ));
    }
    let root = task.dir.join("reference");
    let mut at = root.clone();
    for part in rel_path.components() {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(format!(
                    "reference/{rel}: a symbolic link is on the way; reference files are plain files"
                ));
            }
            Ok(_) => {}
            Err(_) => {
                return Err(format!("no file reference/{rel} in the task"));
            }
        }
    }
    Ok(at)
}

/// The bytes of the reference file `rel` (a regular file only).
pub(crate) fn read(task: &Task, rel: &str) -> Result<Vec<u8>, String> {
    let path = locate(task, rel)?;
    bureau_world::files::read_regular(&path, bureau_world::files::MAX_READ_BYTES)
        .map_err(|e| format!("reference/{rel}: {e}"))
}
