//! Private replicas of a baseline workspace, pooled, with exact reset.
//!
//! A [`Baseline`] is a directory recorded once: its [`Manifest`] (every entry with its content
//! hash) and a tree [`Digest`]. A [`Pool`] hands out [`Lease`]s on [`Replica`]s of it, at most
//! `capacity` at a time; a replica is a directory the agent may change freely. Releasing a
//! lease resets the replica to the baseline — exactly: adds, deletes, edits that keep size and
//! mtime, chmod, renames, symlinks and hard links are all undone — and then checks the digest
//! of every touched path against the baseline; a mismatch is an error and the replica is
//! discarded, never reused.
//!
//! Two backends (see docs/replica.md):
//! - [`BackendKind::Overlay`] (Linux): overlayfs with the baseline as the read-only lower
//!   layer, mounted by a small holder process in its own user + mount namespace (no root
//!   needed). The upper layer *is* the change set, so [`Replica::changes`] and
//!   [`Replica::reset`] cost what the agent changed, not what the workspace holds.
//! - [`BackendKind::Portable`]: a copy of the baseline plus a per-replica manifest (size, mtime,
//!   mode, inode, ctime, content hash); reset walks metadata, re-hashes only entries whose
//!   metadata moved, restores what differs from the baseline and deletes extras.

mod entry;
mod manifest;
mod memo;
mod overlay;
mod pool;
mod portable;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

pub use entry::NsEntry;
pub use manifest::{Digest, Entry, Kind, Manifest, hash_file, stat_entry, stat_only};
pub use overlay::{overlay_available, probe_overlay};
pub use pool::{Backend, BackendKind, Lease, Pool, PoolOptions};

/// Errors of baselines, pools and replicas.
#[derive(Debug, thiserror::Error)]
pub enum ReplicaError {
    #[error("{path}: cannot {op}: {source}")]
    Io {
        path: PathBuf,
        op: &'static str,
        source: std::io::Error,
    },
    #[error("{path}: {what} is not supported in a workspace (only files, directories, symlinks)")]
    Unsupported { path: PathBuf, what: String },
    #[error(
        "replica {replica} does not match its baseline after reset (digest {found}, baseline {expected}); differing paths: {paths:?} — the replica was discarded"
    )]
    DigestMismatch {
        replica: PathBuf,
        expected: String,
        found: String,
        paths: Vec<PathBuf>,
    },
    #[error(
        "baseline {root} changed since it was opened (digest {found}, recorded {expected}) — reopen it with Baseline::open"
    )]
    BaselineChanged {
        root: PathBuf,
        expected: String,
        found: String,
    },
    #[error(
        "overlay backend unavailable: {0} — use Backend::Portable, or allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 / user.max_user_namespaces > 0)"
    )]
    OverlayUnavailable(String),
    #[error("{path}: path contains ',', ':' or '\\', which overlayfs mount options cannot carry")]
    BadOverlayPath { path: PathBuf },
    #[error("pool capacity must be at least 1")]
    ZeroCapacity,
}

impl ReplicaError {
    pub(crate) fn io(path: &Path, op: &'static str, source: std::io::Error) -> ReplicaError {
        ReplicaError::Io {
            path: path.to_path_buf(),
            op,
            source,
        }
    }
}

/// A recorded baseline directory.
#[derive(Debug)]
pub struct Baseline {
    root: PathBuf,
    manifest: Manifest,
    digest: Digest,
    /// Baseline inode → its paths, for files with more than one link.
    link_groups: BTreeMap<u64, Vec<PathBuf>>,
}

impl Baseline {
    /// Record `dir`: scan every entry and hash every file.
    pub fn open(dir: &Path) -> Result<Baseline, ReplicaError> {
        Baseline::open_memoised(dir, None)
    }

    /// [`Baseline::open`], taking the content hashes of files whose metadata (inode, ctime,
    /// size, mtime, mode, links) is unchanged from the memo file `memo` (kept outside `dir`)
    /// and writing the new ones there: a tree is hashed once, not once per process.
    pub fn open_memoised(dir: &Path, memo: Option<&Path>) -> Result<Baseline, ReplicaError> {
        let root = dir
            .canonicalize()
            .map_err(|e| ReplicaError::io(dir, "open baseline", e))?;
        let manifest = match memo {
            Some(memo) => memo::scan(&root, memo)?,
            None => Manifest::scan(&root)?,
        };
        let digest = manifest.digest();
        let mut link_groups: BTreeMap<u64, Vec<PathBuf>> = BTreeMap::new();
        for (rel, e) in &manifest.entries {
            if e.kind == Kind::File && e.nlink > 1 {
                link_groups.entry(e.ino).or_default().push(rel.clone());
            }
        }
        Ok(Baseline {
            root,
            manifest,
            digest,
            link_groups,
        })
    }

    /// The baseline directory (canonical).
    pub fn root(&self) -> &Path {
        &self.root
    }
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }
    pub fn digest(&self) -> Digest {
        self.digest
    }
    /// Number of entries (files, directories, symlinks) below the root.
    pub fn len(&self) -> usize {
        self.manifest.entries.len()
    }
    pub fn is_empty(&self) -> bool {
        self.manifest.entries.is_empty()
    }

    /// Rescan the baseline directory and fail if it no longer matches what was recorded.
    pub fn verify(&self) -> Result<(), ReplicaError> {
        let found = Manifest::scan(&self.root)?.digest();
        if found != self.digest {
            return Err(ReplicaError::BaselineChanged {
                root: self.root.clone(),
                expected: self.digest.to_hex(),
                found: found.to_hex(),
            });
        }
        Ok(())
    }

    pub(crate) fn entry(&self, rel: &Path) -> Option<&Entry> {
        self.manifest.entries.get(rel)
    }

    pub(crate) fn link_siblings(&self, rel: &Path) -> &[PathBuf] {
        match self.manifest.entries.get(rel) {
            Some(e) if e.nlink > 1 => self
                .link_groups
                .get(&e.ino)
                .map(|v| v.as_slice())
                .unwrap_or(&[]),
            _ => &[],
        }
    }
}

/// What the agent changed in a replica, relative to the baseline. Paths are relative to the
/// replica root and sorted. Directories appear in `added`/`deleted` (with everything under
/// them) and in `modified` only when their kind or permissions changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangeSet {
    pub added: Vec<PathBuf>,
    pub modified: Vec<PathBuf>,
    pub deleted: Vec<PathBuf>,
}

impl ChangeSet {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.modified.is_empty() && self.deleted.is_empty()
    }
    pub fn len(&self) -> usize {
        self.added.len() + self.modified.len() + self.deleted.len()
    }
}

/// What a reset did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResetStats {
    /// Paths examined and checked against the baseline after the reset.
    pub touched: usize,
}

/// Compare the entry now at `view/rel` with the baseline's, hashing content only when all
/// metadata agrees. Returns the current metadata (if any) and whether it equals the baseline.
pub(crate) fn compare_with_baseline(
    baseline: &Baseline,
    view: &Path,
    rel: &Path,
    hash_content: bool,
) -> Result<(Option<Entry>, bool), ReplicaError> {
    let full = view.join(rel);
    let cur = stat_only(&full)?;
    let base = baseline.entry(rel);
    let same = match (&cur, base) {
        (None, None) => true,
        (Some(_), None) | (None, Some(_)) => false,
        (Some(c), Some(b)) => {
            if c.kind != b.kind
                || c.mode != b.mode
                || c.size != b.size
                || c.mtime_ns != b.mtime_ns
                || c.nlink != b.nlink
            {
                false
            } else {
                match c.kind {
                    Kind::Dir => true,
                    _ if !hash_content => true,
                    Kind::File => hash_file(&full)? == b.content,
                    Kind::Symlink => stat_entry(&full)?.is_some_and(|e| e.content == b.content),
                }
            }
        }
    };
    Ok((cur, same))
}

/// Classify touched paths into a [`ChangeSet`].
pub(crate) fn classify(
    baseline: &Baseline,
    view: &Path,
    touched: &BTreeSet<PathBuf>,
) -> Result<ChangeSet, ReplicaError> {
    let mut cs = ChangeSet::default();
    for rel in touched {
        let (cur, same) = compare_with_baseline(baseline, view, rel, true)?;
        if same {
            continue;
        }
        match (cur, baseline.entry(rel)) {
            (Some(_), None) => cs.added.push(rel.clone()),
            (None, Some(_)) => cs.deleted.push(rel.clone()),
            (Some(c), Some(b)) => {
                let dir_only_times = c.kind == Kind::Dir && b.kind == Kind::Dir && c.mode == b.mode;
                if !dir_only_times {
                    cs.modified.push(rel.clone());
                }
            }
            (None, None) => {}
        }
    }
    Ok(cs)
}

/// After a reset: every touched path must equal the baseline. Returns the mismatching paths.
/// `hash_content`: re-hash files whose metadata matches (portable: the bytes are our copy);
/// the overlay passes `false`, because with an empty upper layer the view of a path *is* the
/// lower (baseline) file, so matching metadata is the proof.
pub(crate) fn check_touched(
    baseline: &Baseline,
    view: &Path,
    touched: &BTreeSet<PathBuf>,
    hash_content: bool,
) -> Result<Vec<PathBuf>, ReplicaError> {
    let mut bad = Vec::new();
    for rel in touched {
        let (_, same) = compare_with_baseline(baseline, view, rel, hash_content)?;
        if !same {
            bad.push(rel.clone());
        }
    }
    Ok(bad)
}

/// One replica of a baseline: a directory an agent may change, that [`Replica::reset`] puts
/// back exactly.
#[derive(Debug)]
pub struct Replica {
    inner: Inner,
}

#[derive(Debug)]
enum Inner {
    Overlay(overlay::OverlayReplica),
    Portable(portable::PortableReplica),
}

impl Replica {
    /// Make a replica of `baseline` in the new directory `dir`.
    pub fn create(
        baseline: std::sync::Arc<Baseline>,
        dir: &Path,
        kind: BackendKind,
    ) -> Result<Replica, ReplicaError> {
        let inner = match kind {
            BackendKind::Overlay => Inner::Overlay(overlay::OverlayReplica::create(baseline, dir)?),
            BackendKind::Portable => {
                Inner::Portable(portable::PortableReplica::create(baseline, dir)?)
            }
        };
        Ok(Replica { inner })
    }

    pub fn backend(&self) -> BackendKind {
        match self.inner {
            Inner::Overlay(_) => BackendKind::Overlay,
            Inner::Portable(_) => BackendKind::Portable,
        }
    }

    /// The workspace directory the agent works in. For the overlay backend this is
    /// `/proc/<holder pid>/root/<merged>`, which changes with every reset: ask again after one.
    pub fn path(&self) -> PathBuf {
        match &self.inner {
            Inner::Overlay(o) => o.view(),
            Inner::Portable(p) => p.view().to_path_buf(),
        }
    }

    /// What changed since the baseline (overlay: read from the upper layer, no tree scan;
    /// portable: a metadata walk, hashing only entries whose metadata moved).
    pub fn changes(&mut self) -> Result<ChangeSet, ReplicaError> {
        match &mut self.inner {
            Inner::Overlay(o) => o.changes(),
            Inner::Portable(p) => p.changes(),
        }
    }

    /// Put the replica back to the baseline exactly, then check every touched path against
    /// the baseline's entries; a mismatch is [`ReplicaError::DigestMismatch`].
    pub fn reset(&mut self) -> Result<ResetStats, ReplicaError> {
        match &mut self.inner {
            Inner::Overlay(o) => o.reset(),
            Inner::Portable(p) => p.reset(),
        }
    }

    /// Wait for clean-up a reset left running in the background (overlay: stopping the old
    /// holder and deleting the old upper layer). Resets call this themselves first.
    pub fn settle(&mut self) -> Result<(), ReplicaError> {
        match &mut self.inner {
            Inner::Overlay(o) => o.join_reaper(),
            Inner::Portable(_) => Ok(()),
        }
    }

    /// Scan the whole replica and return its digest (for tests and audits; O(tree)).
    pub fn full_digest(&self) -> Result<Digest, ReplicaError> {
        Ok(Manifest::scan(&self.path())?.digest())
    }

    /// A handle for running processes *inside* the replica's namespaces (overlay backend;
    /// `None` for the portable one, whose `path()` is an ordinary directory). A process whose
    /// working directory is `path()` = `/proc/<holder>/root/<merged>` gets `getcwd()` =
    /// `<merged>`, the path as seen inside the holder's namespace — in Bureau's namespace the
    /// empty mount point — so every tool that makes cwd-relative paths absolute (`pwd`, git,
    /// python's `os.getcwd`, node) would look in the wrong place. A child that calls
    /// [`NsEntry::enter`] between fork and exec instead runs in the holder's user and mount
    /// namespaces with its cwd on the merged directory, where every path is right.
    ///
    /// The entry belongs to the current generation: after [`Replica::reset`] it refuses to
    /// enter (`ESTALE`) — ask again. It holds the namespaces open: drop it with the lease.
    pub fn entry(&self) -> Result<Option<NsEntry>, ReplicaError> {
        match &self.inner {
            Inner::Overlay(o) => o.entry().map(Some),
            Inner::Portable(_) => Ok(None),
        }
    }

    /// Process id of the overlay holder (None for the portable backend).
    pub fn holder_pid(&self) -> Option<u32> {
        match &self.inner {
            Inner::Overlay(o) => Some(o.holder_pid()),
            Inner::Portable(_) => None,
        }
    }

    /// Every holder process of the replica: the one serving [`Replica::path`] and the spare
    /// mounted for the next reset (empty for the portable backend).
    pub fn holder_pids(&self) -> Vec<u32> {
        match &self.inner {
            Inner::Overlay(o) => o.holder_pids(),
            Inner::Portable(_) => Vec::new(),
        }
    }
}
