//! Entries, manifests and the tree digest.
//!
//! An [`Entry`] is what Bureau means by "the same file": kind, permission bits, size, mtime
//! (nanoseconds), link count (files) and a BLAKE3 hash of the content (files) or of the target
//! (symlinks). The [`Digest`] of a tree is the wrapping sum, lane by lane, of one BLAKE3 hash
//! per entry (path included): a multiset hash, so the digest of a replica can be updated from
//! the entries of the paths that changed without walking the rest of the tree.
//!
//! Inode and ctime are kept beside each entry but are not part of its identity: they are the
//! portable backend's cheap "did anything touch this?" signal (any write, chmod, utime, link or
//! rename bumps ctime, even one that puts size and mtime back).

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::ReplicaError;

/// What an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    File,
    Dir,
    Symlink,
}

impl Kind {
    fn byte(self) -> u8 {
        match self {
            Kind::File => b'f',
            Kind::Dir => b'd',
            Kind::Symlink => b'l',
        }
    }
}

/// One path of a tree, as far as exactness is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub kind: Kind,
    /// Permission bits (`mode & 0o7777`).
    pub mode: u32,
    /// Bytes (files), target length (symlinks), 0 (directories).
    pub size: u64,
    /// Modification time in nanoseconds since the epoch.
    pub mtime_ns: i128,
    /// Hard links to the inode (files); 0 for directories and symlinks.
    pub nlink: u64,
    /// BLAKE3 of the content (files) or of the target (symlinks); zero for directories.
    pub content: [u8; 32],
    /// Local identity, not part of the entry's digest: inode number and ctime.
    pub ino: u64,
    pub ctime_ns: i128,
}

impl Entry {
    /// The fields that make two entries "the same" (everything but inode and ctime).
    pub fn same_as(&self, other: &Entry) -> bool {
        self.kind == other.kind
            && self.mode == other.mode
            && self.size == other.size
            && self.mtime_ns == other.mtime_ns
            && self.nlink == other.nlink
            && self.content == other.content
    }

    /// Metadata equal (everything but the content hash), including inode and ctime.
    pub fn stat_unchanged(&self, other: &Entry) -> bool {
        self.kind == other.kind
            && self.mode == other.mode
            && self.size == other.size
            && self.mtime_ns == other.mtime_ns
            && self.nlink == other.nlink
            && self.ino == other.ino
            && self.ctime_ns == other.ctime_ns
    }

    /// The entry's contribution to a [`Digest`].
    pub fn hash(&self, rel: &Path) -> [u8; 32] {
        let mut h = blake3::Hasher::new();
        let p = rel.as_os_str().as_bytes();
        h.update(&(p.len() as u64).to_le_bytes());
        h.update(p);
        h.update(&[self.kind.byte()]);
        h.update(&self.mode.to_le_bytes());
        h.update(&self.size.to_le_bytes());
        h.update(&self.mtime_ns.to_le_bytes());
        h.update(&self.nlink.to_le_bytes());
        h.update(&self.content);
        *h.finalize().as_bytes()
    }
}

/// A multiset hash of a tree's entries (see the module docs).
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct Digest([u64; 4]);

impl Digest {
    pub fn add(&mut self, h: &[u8; 32]) {
        for (i, lane) in self.0.iter_mut().enumerate() {
            *lane = lane.wrapping_add(lane_of(h, i));
        }
    }
    pub fn remove(&mut self, h: &[u8; 32]) {
        for (i, lane) in self.0.iter_mut().enumerate() {
            *lane = lane.wrapping_sub(lane_of(h, i));
        }
    }
    pub fn to_hex(self) -> String {
        self.0.iter().map(|l| format!("{l:016x}")).collect()
    }
}

fn lane_of(h: &[u8; 32], i: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&h[i * 8..i * 8 + 8]);
    u64::from_le_bytes(b)
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({})", self.to_hex())
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

/// Every entry below a root (the root itself excluded), by relative path.
#[derive(Debug, Clone, Default)]
pub struct Manifest {
    pub entries: BTreeMap<PathBuf, Entry>,
}

impl Manifest {
    /// Scan `root`, hashing every file.
    pub fn scan(root: &Path) -> Result<Manifest, ReplicaError> {
        let mut m = Manifest::default();
        scan_into(root, Path::new(""), &mut m.entries, &mut |_, _| None)?;
        Ok(m)
    }

    /// Scan `root`; where `known(rel, stat)` returns an entry whose inode, ctime and metadata
    /// are unchanged, take its content hash instead of re-reading the file.
    pub fn scan_with(
        root: &Path,
        known: &mut dyn FnMut(&Path, &Entry) -> Option<[u8; 32]>,
    ) -> Result<Manifest, ReplicaError> {
        let mut m = Manifest::default();
        scan_into(root, Path::new(""), &mut m.entries, known)?;
        Ok(m)
    }

    pub fn digest(&self) -> Digest {
        let mut d = Digest::default();
        for (rel, e) in &self.entries {
            d.add(&e.hash(rel));
        }
        d
    }

    /// All entries strictly below `rel`.
    pub fn descendants<'a>(&'a self, rel: &'a Path) -> impl Iterator<Item = &'a PathBuf> + 'a {
        self.entries
            .range::<Path, _>((std::ops::Bound::Excluded(rel), std::ops::Bound::Unbounded))
            .map(|(p, _)| p)
            .take_while(move |p| p.starts_with(rel))
    }

    pub fn total_bytes(&self) -> u64 {
        self.entries
            .values()
            .filter(|e| e.kind == Kind::File)
            .map(|e| e.size)
            .sum()
    }
}

fn scan_into(
    root: &Path,
    rel: &Path,
    out: &mut BTreeMap<PathBuf, Entry>,
    known: &mut dyn FnMut(&Path, &Entry) -> Option<[u8; 32]>,
) -> Result<(), ReplicaError> {
    let dir = root.join(rel);
    let rd = fs::read_dir(&dir).map_err(|e| ReplicaError::io(&dir, "read directory", e))?;
    for item in rd {
        let item = item.map_err(|e| ReplicaError::io(&dir, "read directory", e))?;
        let child = rel.join(item.file_name());
        let full = root.join(&child);
        let Some(entry) = stat_entry_with(&full, &child, known)? else {
            continue;
        };
        let is_dir = entry.kind == Kind::Dir;
        out.insert(child.clone(), entry);
        if is_dir {
            scan_into(root, &child, out, known)?;
        }
    }
    Ok(())
}

/// The entry at `full` (hashing content), or `None` when nothing is there.
pub fn stat_entry(full: &Path) -> Result<Option<Entry>, ReplicaError> {
    stat_entry_with(full, Path::new(""), &mut |_, _| None)
}

/// Metadata of `full` without hashing (content left zero), or `None` when absent.
pub fn stat_only(full: &Path) -> Result<Option<Entry>, ReplicaError> {
    let md = match fs::symlink_metadata(full) {
        Ok(md) => md,
        Err(e)
            if e.kind() == std::io::ErrorKind::NotFound
                || e.kind() == std::io::ErrorKind::NotADirectory =>
        {
            return Ok(None);
        }
        Err(e) => return Err(ReplicaError::io(full, "stat", e)),
    };
    let ft = md.file_type();
    let kind = if ft.is_dir() {
        Kind::Dir
    } else if ft.is_file() {
        Kind::File
    } else if ft.is_symlink() {
        Kind::Symlink
    } else {
        let what = if ft.is_fifo() {
            "a fifo"
        } else if ft.is_socket() {
            "a socket"
        } else {
            "a device node"
        };
        return Err(ReplicaError::Unsupported {
            path: full.to_path_buf(),
            what: what.to_string(),
        });
    };
    Ok(Some(Entry {
        kind,
        mode: md.mode() & 0o7777,
        size: if kind == Kind::Dir { 0 } else { md.size() },
        mtime_ns: md.mtime() as i128 * 1_000_000_000 + md.mtime_nsec() as i128,
        nlink: if kind == Kind::File { md.nlink() } else { 0 },
        content: [0; 32],
        ino: md.ino(),
        ctime_ns: md.ctime() as i128 * 1_000_000_000 + md.ctime_nsec() as i128,
    }))
}

fn stat_entry_with(
    full: &Path,
    rel: &Path,
    known: &mut dyn FnMut(&Path, &Entry) -> Option<[u8; 32]>,
) -> Result<Option<Entry>, ReplicaError> {
    let Some(mut e) = stat_only(full)? else {
        return Ok(None);
    };
    match e.kind {
        Kind::Dir => {}
        Kind::Symlink => {
            let t = fs::read_link(full).map_err(|err| ReplicaError::io(full, "read link", err))?;
            e.content = *blake3::hash(t.as_os_str().as_bytes()).as_bytes();
        }
        Kind::File => {
            e.content = match known(rel, &e) {
                Some(h) => h,
                None => hash_file(full)?,
            };
        }
    }
    Ok(Some(e))
}

/// BLAKE3 of a file's bytes.
pub fn hash_file(full: &Path) -> Result<[u8; 32], ReplicaError> {
    let mut f = fs::File::open(full).map_err(|e| ReplicaError::io(full, "open", e))?;
    let mut h = blake3::Hasher::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = f
            .read(&mut buf)
            .map_err(|e| ReplicaError::io(full, "read", e))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(*h.finalize().as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_is_order_free_and_incremental() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("d")).unwrap();
        fs::write(dir.path().join("d/a"), b"one").unwrap();
        fs::write(dir.path().join("b"), b"two").unwrap();
        let m = Manifest::scan(dir.path()).unwrap();
        assert_eq!(m.entries.len(), 3);
        let full = m.digest();
        let mut d = Digest::default();
        for (rel, e) in m.entries.iter().rev() {
            d.add(&e.hash(rel));
        }
        assert_eq!(d, full);
        let rel = Path::new("b");
        d.remove(&m.entries[rel].hash(rel));
        assert_ne!(d, full);
        d.add(&m.entries[rel].hash(rel));
        assert_eq!(d, full);
    }

    #[test]
    fn content_change_with_same_size_changes_the_entry() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        fs::write(&p, b"abc").unwrap();
        let a = stat_entry(&p).unwrap().unwrap();
        fs::write(&p, b"abd").unwrap();
        let b = stat_entry(&p).unwrap().unwrap();
        assert_ne!(a.content, b.content);
        assert!(!a.same_as(&b));
    }

    #[test]
    fn descendants_stop_at_the_subtree() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("a/b")).unwrap();
        fs::write(dir.path().join("a/b/c"), b"").unwrap();
        fs::write(dir.path().join("a.txt"), b"").unwrap();
        fs::write(dir.path().join("ab"), b"").unwrap();
        let m = Manifest::scan(dir.path()).unwrap();
        let d: Vec<_> = m.descendants(Path::new("a")).cloned().collect();
        assert_eq!(d, vec![PathBuf::from("a/b"), PathBuf::from("a/b/c")]);
    }

    #[test]
    fn fifo_is_refused_with_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pipe");
        let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let err = Manifest::scan(dir.path()).unwrap_err().to_string();
        assert!(err.contains("pipe") && err.contains("fifo"), "{err}");
    }
}
