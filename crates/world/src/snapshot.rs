//! Snapshots: the whole world at a point in time, restorable exactly.
//!
//! A snapshot is canonical JSON: a manifest of the workspace (path → size, content hash,
//! permissions; directories; symbolic links), the service states, the clock and the event
//! log. File contents are stored once, content-addressed, in `<world root>/blobs/<hash>`.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use bureau_core::log::LogEntry;
use bureau_core::time::WorldTime;
use serde::{Deserialize, Serialize};

use crate::base::BaseLayer;
use crate::files::to_slash;
use crate::{CalendarState, ChangedFiles, MailState, World, WorldError};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRecord {
    pub size: u64,
    /// BLAKE3 of the content, hex.
    pub hash: String,
    /// Unix permission bits.
    pub mode: u32,
}

/// The service states, as one canonical JSON object.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Services {
    pub mail: MailState,
    pub calendar: CalendarState,
    #[serde(default)]
    pub chat: crate::ChatState,
    #[serde(default)]
    pub kb: crate::KbState,
    #[serde(default)]
    pub sheets: crate::SheetsState,
    #[serde(default)]
    pub tracker: crate::TrackerState,
    #[serde(default)]
    pub code: crate::CodeState,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    pub turn: u32,
    pub now: WorldTime,
    pub files: BTreeMap<String, FileRecord>,
    pub dirs: BTreeSet<String>,
    /// Symbolic links in the workspace: path → target as written.
    pub symlinks: BTreeMap<String, String>,
    /// FIFOs, sockets and devices in the workspace: path → what it is. Recorded, never
    /// opened (a FIFO would block the snapshot), not restored. Absent when there are none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub specials: BTreeMap<String, String>,
    pub services: Services,
    pub log: Vec<LogEntry>,
}

impl Snapshot {
    pub(crate) fn empty() -> Snapshot {
        Snapshot {
            turn: 0,
            now: chrono::DateTime::UNIX_EPOCH.fixed_offset(),
            files: BTreeMap::new(),
            dirs: BTreeSet::new(),
            symlinks: BTreeMap::new(),
            specials: BTreeMap::new(),
            services: Services::default(),
            log: Vec::new(),
        }
    }

    /// A digest of the workspace part of the snapshot (paths, hashes, modes, dirs, links).
    pub fn tree_digest(&self) -> String {
        digest(&self.files, &self.dirs, &self.symlinks)
    }
}

/// A digest of a tree manifest (paths, hashes, modes, dirs, links).
fn digest(
    files: &BTreeMap<String, FileRecord>,
    dirs: &BTreeSet<String>,
    symlinks: &BTreeMap<String, String>,
) -> String {
    let mut h = blake3::Hasher::new();
    for (p, r) in files {
        h.update(format!("f\0{p}\0{}\0{}\0{:o}\n", r.size, r.hash, r.mode).as_bytes());
    }
    for d in dirs {
        h.update(format!("d\0{d}\n").as_bytes());
    }
    for (p, t) in symlinks {
        h.update(format!("l\0{p}\0{t}\n").as_bytes());
    }
    h.finalize().to_hex().to_string()
}

/// A directory tree: files (with content hashes), directories, symbolic links; paths relative
/// to its root, `/`-separated.
#[derive(Debug, Default)]
pub(crate) struct Manifest {
    pub files: BTreeMap<String, FileRecord>,
    pub dirs: BTreeSet<String>,
    pub symlinks: BTreeMap<String, String>,
    /// FIFOs, sockets, devices: path → what it is (never opened).
    pub specials: BTreeMap<String, String>,
}

/// The workspace manifest now; with `store`, copy new contents into the blob store.
///
/// On a replica: the base manifest patched with the replica's change set (only touched paths
/// are read; their contents always go to the store). Otherwise a walk of the whole tree;
/// contents the world's base layer holds are not stored (the base keeps them).
fn manifest(world: &World, store: bool) -> Result<Manifest, WorldError> {
    let blobs = world.root.join("blobs");
    let blobs = store.then_some(blobs.as_path());
    if let (Some(replica), Some(base)) = (&world.replica, &world.base) {
        let changes = replica
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .changes()
            .map_err(|e| WorldError::Snapshot(format!("reading the replica's changes: {e}")))?;
        return patch(world.files.root(), &base.manifest, &changes, blobs);
    }
    walk_tree_except(world.files.root(), blobs, world.base.as_deref())
}

/// `base` with the paths of `changes` read again from the tree at `root`.
pub(crate) fn patch(
    root: &Path,
    base: &Manifest,
    changes: &bureau_replica::ChangeSet,
    blobs: Option<&Path>,
) -> Result<Manifest, WorldError> {
    if let Some(blobs) = blobs {
        std::fs::create_dir_all(blobs).map_err(|e| WorldError::io(blobs, e))?;
    }
    let mut m = Manifest {
        files: base.files.clone(),
        dirs: base.dirs.clone(),
        symlinks: base.symlinks.clone(),
        specials: base.specials.clone(),
    };
    let forget = |m: &mut Manifest, p: &str| {
        m.files.remove(p);
        m.dirs.remove(p);
        m.symlinks.remove(p);
        m.specials.remove(p);
    };
    for rel in &changes.deleted {
        forget(&mut m, &to_slash(rel));
    }
    for rel in changes.added.iter().chain(&changes.modified) {
        let p = to_slash(rel);
        forget(&mut m, &p);
        let full = root.join(rel);
        let Ok(meta) = std::fs::symlink_metadata(&full) else {
            continue; // gone since the change set was read
        };
        let ft = meta.file_type();
        if ft.is_symlink() {
            let target = std::fs::read_link(&full).map_err(|e| WorldError::io(&full, e))?;
            m.symlinks.insert(p, target.to_string_lossy().into_owned());
        } else if ft.is_dir() {
            m.dirs.insert(p);
        } else if let Some(kind) = crate::files::special_kind(&ft) {
            m.specials.insert(p, kind.to_string());
        } else {
            let data = read_file(&full)?;
            let hash = blake3::hash(&data).to_hex().to_string();
            if let Some(blobs) = blobs {
                store_blob(blobs, &hash, &data)?;
            }
            m.files.insert(
                p,
                FileRecord {
                    size: data.len() as u64,
                    hash,
                    mode: meta.permissions().mode() & 0o7777,
                },
            );
        }
    }
    Ok(m)
}

/// The contents of a regular file of the tree, never blocking (see [`crate::files::read_regular`]).
fn read_file(path: &Path) -> Result<Vec<u8>, WorldError> {
    crate::files::read_regular(path, u64::MAX).map_err(|e| match e {
        crate::files::ReadError::Io(e) => WorldError::io(path, e),
        e => WorldError::Snapshot(format!("{}: {e}", path.display())),
    })
}

pub(crate) fn store_blob(blobs: &Path, hash: &str, data: &[u8]) -> Result<(), WorldError> {
    let blob = blobs.join(hash);
    if !blob.exists() {
        let tmp = blobs.join(format!("{hash}.tmp"));
        std::fs::write(&tmp, data).map_err(|e| WorldError::io(&tmp, e))?;
        std::fs::rename(&tmp, &blob).map_err(|e| WorldError::io(&blob, e))?;
    }
    Ok(())
}

/// Walk the tree under `root` (sorted); with `blobs`, copy contents not yet there into that
/// content-addressed store (`<blobs>/<blake3 hex>`).
pub(crate) fn walk_tree(root: &Path, blobs: Option<&Path>) -> Result<Manifest, WorldError> {
    walk_tree_except(root, blobs, None)
}

/// [`walk_tree`], not storing contents `base` holds.
fn walk_tree_except(
    root: &Path,
    blobs: Option<&Path>,
    base: Option<&BaseLayer>,
) -> Result<Manifest, WorldError> {
    if let Some(blobs) = blobs {
        std::fs::create_dir_all(blobs).map_err(|e| WorldError::io(blobs, e))?;
    }
    let mut m = Manifest::default();
    for entry in walkdir::WalkDir::new(root)
        .min_depth(1)
        .follow_links(false)
        .sort_by_file_name()
    {
        let entry = entry
            .map_err(|e| WorldError::Snapshot(format!("cannot walk {}: {e}", root.display())))?;
        let rel = entry
            .path()
            .strip_prefix(root)
            .map(to_slash)
            .unwrap_or_default();
        let ft = entry.file_type();
        if ft.is_symlink() {
            let target =
                std::fs::read_link(entry.path()).map_err(|e| WorldError::io(entry.path(), e))?;
            m.symlinks
                .insert(rel, target.to_string_lossy().into_owned());
        } else if ft.is_dir() {
            m.dirs.insert(rel);
        } else if let Some(kind) = crate::files::special_kind(&ft) {
            m.specials.insert(rel, kind.to_string());
        } else {
            let data = read_file(entry.path())?;
            let meta = entry
                .metadata()
                .map_err(|e| WorldError::Snapshot(e.to_string()))?;
            let hash = blake3::hash(&data).to_hex().to_string();
            if let Some(blobs) = blobs
                && !base.is_some_and(|b| b.has(&hash))
            {
                store_blob(blobs, &hash, &data)?;
            }
            m.files.insert(
                rel,
                FileRecord {
                    size: data.len() as u64,
                    hash,
                    mode: meta.permissions().mode() & 0o7777,
                },
            );
        }
    }
    Ok(m)
}

pub(crate) fn take(world: &World) -> Result<Snapshot, WorldError> {
    let m = manifest(world, true)?;
    Ok(Snapshot {
        turn: world.turn,
        now: world.now,
        files: m.files,
        dirs: m.dirs,
        symlinks: m.symlinks,
        specials: m.specials,
        services: Services {
            mail: world.mail.clone(),
            calendar: world.calendar.clone(),
            chat: world.chat.clone(),
            kb: world.kb.clone(),
            sheets: world.sheets.clone(),
            tracker: world.tracker.clone(),
            code: crate::code::snapshot_state(world)?,
        },
        log: world.log.clone(),
    })
}

pub(crate) fn restore(world: &mut World, snap: &Snapshot, blobs: &Path) -> Result<(), WorldError> {
    let root = world.files.root().to_path_buf();
    let base = world.base.clone();
    restore_tree(
        &root,
        &snap.files,
        &snap.dirs,
        &snap.symlinks,
        blobs,
        base.as_deref(),
    )
    .map_err(|e| match e {
        WorldError::Snapshot(m) if m == TREE_DIFFERS => {
            WorldError::Snapshot("the restored workspace differs from the snapshot".into())
        }
        e => e,
    })?;
    world.mail = snap.services.mail.clone();
    world.calendar = snap.services.calendar.clone();
    world.chat = snap.services.chat.clone();
    world.kb = snap.services.kb.clone();
    world.sheets = snap.services.sheets.clone();
    world.tracker = snap.services.tracker.clone();
    crate::code::restore_state(world, &snap.services.code, blobs)?;
    crate::attachments::restore_blobs(world, blobs)?;
    world.log = snap.log.clone();
    world.turn = snap.turn;
    world.now = snap.now;
    Ok(())
}

const TREE_DIFFERS: &str = "the restored tree differs from the snapshot";

/// Make the tree under `root` exactly `files` + `dirs` + `symlinks`, contents from `blobs`.
/// Paths must be relative and stay inside `root`; blob names must be content hashes. A
/// content missing from `blobs` is taken from `base` when it holds it. The result is verified
/// against the wanted manifest.
pub(crate) fn restore_tree(
    root: &Path,
    files: &BTreeMap<String, FileRecord>,
    dirs: &BTreeSet<String>,
    symlinks: &BTreeMap<String, String>,
    blobs: &Path,
    base: Option<&BaseLayer>,
) -> Result<(), WorldError> {
    // A snapshot read back from disk must not name paths outside the tree.
    for p in files.keys().chain(dirs).chain(symlinks.keys()) {
        bureau_core::task::check_rel_path(p)
            .map_err(|e| WorldError::Snapshot(format!("path `{p}` in the snapshot: {e}")))?;
    }
    for rec in files.values() {
        if !is_hash(&rec.hash) {
            return Err(WorldError::Snapshot(format!(
                "`{}` is not a content hash",
                rec.hash
            )));
        }
    }
    std::fs::create_dir_all(root).map_err(|e| WorldError::io(root, e))?;
    let current = walk_tree(root, None)?;
    // Remove what the snapshot does not have (deepest first), and links that differ.
    let mut doomed: Vec<String> = Vec::new();
    for (p, rec) in &current.files {
        if files.get(p).is_none_or(|r| r.hash != rec.hash) {
            doomed.push(p.clone());
        }
    }
    for (p, t) in &current.symlinks {
        if symlinks.get(p) != Some(t) {
            doomed.push(p.clone());
        }
    }
    for p in &doomed {
        let full = root.join(p);
        std::fs::remove_file(&full).map_err(|e| WorldError::io(&full, e))?;
    }
    for d in current.dirs.iter().rev() {
        if !dirs.contains(d) {
            let full = root.join(d);
            // Contents were removed above unless they belong to the snapshot (then it is not a dir).
            std::fs::remove_dir_all(&full).map_err(|e| WorldError::io(&full, e))?;
        }
    }
    for d in dirs {
        let full = root.join(d);
        std::fs::create_dir_all(&full).map_err(|e| WorldError::io(&full, e))?;
    }
    for (p, rec) in files {
        let full = root.join(p);
        let same = current.files.get(p).is_some_and(|r| r.hash == rec.hash);
        if !same {
            let mut blob = blobs.join(&rec.hash);
            if !blob.is_file()
                && let Some(b) = base.and_then(|b| b.blob(&rec.hash))
            {
                blob = b;
            }
            copy_blob(&blob, &full)?;
        }
        let perms = std::fs::Permissions::from_mode(rec.mode);
        std::fs::set_permissions(&full, perms).map_err(|e| WorldError::io(&full, e))?;
    }
    for (p, target) in symlinks {
        let full = root.join(p);
        if current.symlinks.get(p) != Some(target) {
            std::os::unix::fs::symlink(target, &full).map_err(|e| WorldError::io(&full, e))?;
        }
    }

    let after = walk_tree(root, None)?;
    if digest(&after.files, &after.dirs, &after.symlinks) != digest(files, dirs, symlinks) {
        return Err(WorldError::Snapshot(TREE_DIFFERS.into()));
    }
    Ok(())
}

/// A BLAKE3 hex digest (so a snapshot file cannot name a path outside the blob store).
fn is_hash(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn copy_blob(blob: &Path, to: &Path) -> Result<(), WorldError> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(|e| WorldError::io(parent, e))?;
    }
    // A fresh file (not an in-place overwrite) so hard links made by the agent are broken.
    let _ = std::fs::remove_file(to);
    std::fs::copy(blob, to)
        .map_err(|e| WorldError::Snapshot(format!("missing blob {}: {e}", blob.display())))?;
    Ok(())
}

pub(crate) fn changed(world: &World) -> Result<ChangedFiles, WorldError> {
    let now = manifest(world, false)?;
    let base = &world.baseline.files;
    let mut out = ChangedFiles::default();
    for (p, rec) in &now.files {
        match base.get(p) {
            None => out.created.push(p.clone()),
            Some(b) if b.hash != rec.hash => out.modified.push(p.clone()),
            _ => {}
        }
    }
    for p in base.keys() {
        if !now.files.contains_key(p) {
            out.deleted.push(p.clone());
        }
    }
    Ok(out)
}
