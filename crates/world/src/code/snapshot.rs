//! Code hosting in snapshots: hosted repositories through the blob store.

use std::collections::BTreeMap;
use std::path::Path;

use super::*;
use crate::{World, WorldError};

/// The code state to store in a snapshot: the state plus a manifest of `<root>/code` whose
/// contents go to the blob store (`<root>/blobs/<hash>`), like workspace files.
pub(crate) fn snapshot_state(world: &World) -> Result<CodeState, WorldError> {
    let mut state = world.code.clone();
    let dir = code_dir(world);
    if dir.is_dir() {
        let blobs = world.root.join("blobs");
        let m = crate::snapshot::walk_tree(&dir, Some(&blobs))?;
        if !m.symlinks.is_empty() {
            return Err(WorldError::Snapshot(format!(
                "{} holds symbolic links; hosted repositories cannot",
                dir.display()
            )));
        }
        state.hosted_files = m.files;
        state.hosted_dirs = m.dirs;
    }
    Ok(state)
}

/// Put the code state of a snapshot back, hosted repositories included (exactly: files the
/// snapshot does not have are removed).
pub(crate) fn restore_state(
    world: &mut World,
    state: &CodeState,
    blobs: &Path,
) -> Result<(), WorldError> {
    let dir = code_dir(world);
    if dir.exists() || !state.hosted_files.is_empty() || !state.hosted_dirs.is_empty() {
        crate::snapshot::restore_tree(
            &dir,
            &state.hosted_files,
            &state.hosted_dirs,
            &BTreeMap::new(),
            blobs,
            None,
        )
        .map_err(|e| WorldError::Snapshot(format!("hosted repositories: {e}")))?;
    }
    let mut live = state.clone();
    live.hosted_files.clear();
    live.hosted_dirs.clear();
    world.code = live;
    Ok(())
}
