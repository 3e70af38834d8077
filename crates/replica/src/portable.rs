//! The portable backend: a full copy of the baseline plus a per-replica manifest.
//!
//! The replica is a real copy (never a hard-link tree: an agent writing through a shared inode
//! would change the baseline). Its manifest records, per entry, the baseline's identity fields
//! plus the copy's inode and ctime. A reset walks the replica's metadata only; an entry whose
//! (kind, mode, size, mtime, nlink, inode, ctime) are all unchanged is untouched — ctime moves
//! on every write, chmod, utime, link and rename, so an edit that restores size and mtime is
//! still seen — and only touched entries are re-hashed, compared with the baseline, restored
//! from it or deleted.

use std::collections::BTreeSet;
use std::ffi::CString;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::manifest::{Entry, Manifest, hash_file, stat_only};
use crate::{Baseline, ChangeSet, Kind, ReplicaError, ResetStats, check_touched, classify};

#[derive(Debug)]
pub(crate) struct PortableReplica {
    baseline: Arc<Baseline>,
    dir: PathBuf,
    tree: PathBuf,
    local: Manifest,
}

impl PortableReplica {
    pub(crate) fn create(
        baseline: Arc<Baseline>,
        dir: &Path,
    ) -> Result<PortableReplica, ReplicaError> {
        fs::create_dir_all(dir)
            .map_err(|e| ReplicaError::io(dir, "create replica directory", e))?;
        let tree = dir.join("tree");
        fs::create_dir(&tree).map_err(|e| ReplicaError::io(&tree, "create", e))?;
        let mut r = PortableReplica {
            baseline,
            dir: dir.to_path_buf(),
            tree,
            local: Manifest::default(),
        };
        let all: BTreeSet<PathBuf> = r.baseline.manifest().entries.keys().cloned().collect();
        let mut created = BTreeSet::new();
        for rel in &all {
            if let Some(b) = r.baseline.entry(rel).cloned() {
                r.create_entry(rel, &b, &BTreeSet::new(), &mut created)?;
            }
        }
        r.fix_metadata(&all)?;
        // The copy's content is the kernel's copy of the baseline; its metadata is checked here.
        let base = Arc::clone(&r.baseline);
        r.local = Manifest::scan_with(&r.tree, &mut |rel, _| base.entry(rel).map(|b| b.content))?;
        let bad: Vec<PathBuf> = all
            .iter()
            .filter(|rel| {
                !matches!((r.local.entries.get(*rel), base.entry(rel)), (Some(l), Some(b)) if l.same_as(b))
            })
            .cloned()
            .collect();
        if !bad.is_empty() || r.local.entries.len() != all.len() {
            return Err(crate::pool::mismatch(&base, &r.tree, bad));
        }
        Ok(r)
    }

    pub(crate) fn view(&self) -> &Path {
        &self.tree
    }

    /// Paths whose metadata (including inode and ctime) moved, new paths and missing paths.
    fn touched(&self) -> Result<BTreeSet<PathBuf>, ReplicaError> {
        let mut touched = BTreeSet::new();
        let mut seen = 0usize;
        walk_stat(
            &self.tree,
            Path::new(""),
            &mut |rel, cur| match self.local.entries.get(rel) {
                Some(l) => {
                    seen += 1;
                    if !l.stat_unchanged(cur) {
                        touched.insert(rel.to_path_buf());
                    }
                }
                None => {
                    touched.insert(rel.to_path_buf());
                }
            },
        )?;
        if seen != self.local.entries.len() {
            for rel in self.local.entries.keys() {
                if self.tree.join(rel).symlink_metadata().is_err() {
                    touched.insert(rel.clone());
                }
            }
        }
        Ok(touched)
    }

    pub(crate) fn changes(&mut self) -> Result<ChangeSet, ReplicaError> {
        let touched = self.touched()?;
        classify(&self.baseline, &self.tree, &touched)
    }

    pub(crate) fn reset(&mut self) -> Result<ResetStats, ReplicaError> {
        let mut touched = self.touched()?;
        let base = Arc::clone(&self.baseline);
        // A baseline hard-link group with any touched member is rebuilt whole: its link count
        // depends on every member, so members are deleted and re-linked together.
        let group: BTreeSet<PathBuf> = touched
            .iter()
            .flat_map(|rel| base.link_siblings(rel).iter().cloned())
            .collect();
        let touched_by_agent = touched.len();
        touched.extend(group.iter().cloned());
        // 1a. Delete what the baseline does not have, and entries of the wrong kind.
        for rel in touched.iter().rev() {
            let full = self.tree.join(rel);
            let Some(cur) = stat_only(&full)? else {
                continue;
            };
            if base.entry(rel).is_none_or(|b| b.kind != cur.kind) {
                remove_any(&full)?;
            }
        }
        // 1b. Delete files and symlinks whose content or link count differs.
        for rel in &touched {
            let full = self.tree.join(rel);
            let (Some(cur), Some(b)) = (stat_only(&full)?, base.entry(rel)) else {
                continue;
            };
            let differs = match cur.kind {
                _ if group.contains(rel) => true,
                Kind::Dir => false,
                Kind::File => {
                    cur.nlink != b.nlink || cur.size != b.size || hash_file(&full)? != b.content
                }
                Kind::Symlink => crate::stat_entry(&full)?.is_none_or(|e| e.content != b.content),
            };
            if differs {
                remove_any(&full)?;
            }
        }
        // 2. Recreate what is missing, parents first.
        let mut created = BTreeSet::new();
        for rel in &touched {
            if let Some(b) = base.entry(rel)
                && stat_only(&self.tree.join(rel))?.is_none()
            {
                self.create_entry(rel, b, &touched, &mut created)?;
            }
        }
        // 3. Permissions and times of touched entries and of the directories that hold them.
        let mut fix = touched.clone();
        for rel in &touched {
            let mut p = rel.parent();
            while let Some(parent) = p {
                if parent.as_os_str().is_empty() || !fix.insert(parent.to_path_buf()) {
                    break;
                }
                p = parent.parent();
            }
        }
        self.fix_metadata(&fix)?;
        // 4. Check every fixed path against the baseline (content re-hashed), then record the
        // new local identities.
        let bad = check_touched(&base, &self.tree, &fix, true)?;
        if !bad.is_empty() {
            return Err(crate::pool::mismatch(&base, &self.tree, bad));
        }
        for rel in &fix {
            match (stat_only(&self.tree.join(rel))?, base.entry(rel)) {
                (Some(mut e), Some(b)) => {
                    e.content = b.content;
                    self.local.entries.insert(rel.clone(), e);
                }
                _ => {
                    self.local.entries.remove(rel);
                }
            }
        }
        Ok(ResetStats {
            touched: touched_by_agent,
        })
    }

    fn create_entry(
        &self,
        rel: &Path,
        b: &Entry,
        touched: &BTreeSet<PathBuf>,
        created: &mut BTreeSet<PathBuf>,
    ) -> Result<(), ReplicaError> {
        let src = self.baseline.root().join(rel);
        let dst = self.tree.join(rel);
        match b.kind {
            Kind::Dir => fs::create_dir(&dst).map_err(|e| ReplicaError::io(&dst, "create", e))?,
            Kind::Symlink => {
                let target =
                    fs::read_link(&src).map_err(|e| ReplicaError::io(&src, "read link", e))?;
                std::os::unix::fs::symlink(&target, &dst)
                    .map_err(|e| ReplicaError::io(&dst, "create symlink", e))?;
            }
            Kind::File => {
                // Keep the baseline's hard links: link to a sibling already in place.
                let sibling = self.baseline.link_siblings(rel).iter().find(|s| {
                    s.as_path() != rel
                        && (created.contains(*s)
                            || (!touched.contains(*s) && self.tree.join(s).exists()))
                });
                match sibling {
                    Some(s) => fs::hard_link(self.tree.join(s), &dst)
                        .map_err(|e| ReplicaError::io(&dst, "hard link", e))?,
                    None => {
                        fs::copy(&src, &dst).map_err(|e| ReplicaError::io(&dst, "copy", e))?;
                    }
                }
            }
        }
        created.insert(rel.to_path_buf());
        Ok(())
    }

    /// Set mode and mtime of `paths` (those the baseline has) to the baseline's, children first.
    fn fix_metadata(&self, paths: &BTreeSet<PathBuf>) -> Result<(), ReplicaError> {
        for rel in paths.iter().rev() {
            let Some(b) = self.baseline.entry(rel) else {
                continue;
            };
            let full = self.tree.join(rel);
            let Some(cur) = stat_only(&full)? else {
                continue;
            };
            if cur.kind != Kind::Symlink && cur.mode != b.mode {
                fs::set_permissions(&full, fs::Permissions::from_mode(b.mode))
                    .map_err(|e| ReplicaError::io(&full, "chmod", e))?;
            }
            if cur.mtime_ns != b.mtime_ns {
                set_mtime(&full, b.mtime_ns)?;
            }
        }
        Ok(())
    }
}

impl Drop for PortableReplica {
    fn drop(&mut self) {
        let _ = remove_any(&self.dir);
    }
}

fn walk_stat(
    root: &Path,
    rel: &Path,
    f: &mut dyn FnMut(&Path, &Entry),
) -> Result<(), ReplicaError> {
    let dir = root.join(rel);
    let rd = fs::read_dir(&dir).map_err(|e| ReplicaError::io(&dir, "read directory", e))?;
    for item in rd {
        let item = item.map_err(|e| ReplicaError::io(&dir, "read directory", e))?;
        let child = rel.join(item.file_name());
        let Some(e) = stat_only(&root.join(&child))? else {
            continue;
        };
        f(&child, &e);
        if e.kind == Kind::Dir {
            walk_stat(root, &child, f)?;
        }
    }
    Ok(())
}

/// Remove a file, symlink or directory tree; directories the agent made unreadable or
/// unwritable get their owner's permissions back first.
pub(crate) fn remove_any(full: &Path) -> Result<(), ReplicaError> {
    let md = match fs::symlink_metadata(full) {
        Ok(md) => md,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(ReplicaError::io(full, "stat", e)),
    };
    if !md.is_dir() {
        return fs::remove_file(full).map_err(|e| ReplicaError::io(full, "remove", e));
    }
    match fs::remove_dir_all(full) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(_) => {
            unlock_tree(full);
            fs::remove_dir_all(full).map_err(|e| ReplicaError::io(full, "remove", e))
        }
    }
}

fn unlock_tree(dir: &Path) {
    let _ = fs::set_permissions(dir, fs::Permissions::from_mode(0o700));
    if let Ok(rd) = fs::read_dir(dir) {
        for e in rd.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                unlock_tree(&e.path());
            }
        }
    }
}

/// Set the modification time (nanoseconds) without following a symlink.
pub(crate) fn set_mtime(full: &Path, ns: i128) -> Result<(), ReplicaError> {
    let c = CString::new(full.as_os_str().as_bytes()).map_err(|_| {
        ReplicaError::io(
            full,
            "set times",
            io::Error::new(io::ErrorKind::InvalidInput, "NUL in path"),
        )
    })?;
    let times = [
        libc::timespec {
            tv_sec: 0,
            tv_nsec: libc::UTIME_OMIT,
        },
        libc::timespec {
            tv_sec: ns.div_euclid(1_000_000_000) as libc::time_t,
            tv_nsec: ns.rem_euclid(1_000_000_000) as libc::c_long,
        },
    ];
    // SAFETY: valid C string and a two-element timespec array.
    let rc = unsafe {
        libc::utimensat(
            libc::AT_FDCWD,
            c.as_ptr(),
            times.as_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if rc != 0 {
        return Err(ReplicaError::io(
            full,
            "set times",
            io::Error::last_os_error(),
        ));
    }
    Ok(())
}
