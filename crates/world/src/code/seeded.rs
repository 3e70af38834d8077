//! Seeded repositories remembered per process.
//!
//! Seeding a hosted repository runs git a few times per seeded commit (`read-tree`, `add`,
//! `write-tree`, `commit-tree`, `update-ref`), then once per branch to read the history back:
//! 15 to 50 processes for a repository of the bundled suites, the same in every trial of the
//! task. Their outcome depends only on the seed's files, the people the commits are made as,
//! and the world clock, and git makes the same objects from the same inputs (that is how
//! every world gets the same commit hashes). So the first trial of a task seeds the
//! repository with git; the bare repository's files and the branches read back are kept under
//! a hash of those inputs; the next trial with the same inputs writes the files back instead.
//! At most [`MEMO_BYTES`] are kept per process (the oldest leave first), and no repository
//! larger than [`MAX_REPO_BYTES`].

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex};

use super::{Branch, Commit};

/// Bytes of seeded repositories one process keeps.
pub const MEMO_BYTES: usize = 64 << 20;
/// The largest seeded repository kept.
pub const MAX_REPO_BYTES: usize = 8 << 20;

pub(crate) type Key = [u8; 32];

/// A seeded repository: its bare repository's directories and files, and its branches and
/// commits as read back from git.
#[derive(Debug)]
pub(crate) struct Seeded {
    dirs: Vec<String>,
    /// Path, permission bits, content.
    files: Vec<(String, u32, Vec<u8>)>,
    pub branches: BTreeMap<String, Branch>,
    pub commits: BTreeMap<String, Commit>,
    bytes: usize,
}

/// What a seed's key is made of, in the order it is hashed.
pub(crate) struct KeyParts<'a> {
    pub name: &'a str,
    pub default_branch: &'a str,
    /// The world clock (seconds and offset from UTC).
    pub now: (i64, i32),
    /// The text of `<repo>.toml` (empty without one).
    pub toml: &'a str,
    /// Who the commits are made as, in the seed's order (name, email).
    pub idents: Vec<(&'a str, &'a str)>,
    /// The seed's directories (`<repo>/`, `<repo>.commits/`).
    pub trees: Vec<&'a Path>,
}

/// The key of a seed, or `None` when its files cannot all be read (the seed then runs git as
/// always, and reports the problem itself).
pub(crate) fn key(parts: &KeyParts<'_>) -> Option<Key> {
    use std::os::unix::fs::PermissionsExt;
    let mut h = blake3::Hasher::new();
    let mut field = |b: &[u8]| {
        h.update(&(b.len() as u64).to_le_bytes());
        h.update(b);
    };
    field(b"bureau seeded repository 1");
    field(parts.name.as_bytes());
    field(parts.default_branch.as_bytes());
    field(&parts.now.0.to_le_bytes());
    field(&parts.now.1.to_le_bytes());
    field(parts.toml.as_bytes());
    for (name, email) in &parts.idents {
        field(name.as_bytes());
        field(email.as_bytes());
    }
    for tree in &parts.trees {
        field(b"tree");
        if !tree.exists() {
            field(b"absent");
            continue;
        }
        for entry in walkdir::WalkDir::new(tree).sort_by_file_name() {
            let entry = entry.ok()?;
            let rel = entry.path().strip_prefix(tree).ok()?;
            field(rel.as_os_str().as_encoded_bytes());
            let t = entry.file_type();
            if t.is_dir() {
                field(b"d");
            } else if t.is_symlink() {
                field(b"l");
                let to = std::fs::read_link(entry.path()).ok()?;
                field(to.as_os_str().as_encoded_bytes());
            } else if t.is_file() {
                let mode = entry.metadata().ok()?.permissions().mode();
                field(b"f");
                field(&(mode & 0o111).to_le_bytes());
                // The task's file: read only as a regular file, and no larger than a kept
                // repository (a larger seed is not kept: git seeds it every time).
                let data = crate::files::read_regular(entry.path(), MAX_REPO_BYTES as u64).ok()?;
                field(&data);
            } else {
                // A FIFO or a device: never read; git refuses it anyway.
                return None;
            }
        }
    }
    Some(*h.finalize().as_bytes())
}

impl Seeded {
    /// Read the bare repository at `bare` (`None` when it is too large to keep or cannot be
    /// read).
    pub(crate) fn capture(
        bare: &Path,
        branches: &BTreeMap<String, Branch>,
        commits: &BTreeMap<String, Commit>,
    ) -> Option<Seeded> {
        use std::os::unix::fs::PermissionsExt;
        let mut dirs = Vec::new();
        let mut files = Vec::new();
        let mut bytes = 0usize;
        for entry in walkdir::WalkDir::new(bare).min_depth(1).sort_by_file_name() {
            let entry = entry.ok()?;
            let rel = entry.path().strip_prefix(bare).ok()?.to_str()?.to_string();
            let t = entry.file_type();
            if t.is_dir() {
                dirs.push(rel);
            } else if t.is_file() {
                let mode = entry.metadata().ok()?.permissions().mode() & 0o777;
                let data = std::fs::read(entry.path()).ok()?;
                bytes += data.len() + rel.len();
                if bytes > MAX_REPO_BYTES {
                    return None;
                }
                files.push((rel, mode, data));
            } else {
                return None;
            }
        }
        Some(Seeded {
            dirs,
            files,
            branches: branches.clone(),
            commits: commits.clone(),
            bytes,
        })
    }

    /// Write the repository into `bare` (an empty directory).
    pub(crate) fn restore(&self, bare: &Path) -> std::io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(bare)?;
        for d in &self.dirs {
            std::fs::create_dir_all(bare.join(d))?;
        }
        for (rel, mode, data) in &self.files {
            let p = bare.join(rel);
            std::fs::write(&p, data)?;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(*mode))?;
        }
        Ok(())
    }
}

#[derive(Default)]
struct Memo {
    seeded: HashMap<Key, Arc<Seeded>>,
    order: VecDeque<Key>,
    bytes: usize,
}

static MEMO: Mutex<Option<Memo>> = Mutex::new(None);

pub(crate) fn get(key: &Key) -> Option<Arc<Seeded>> {
    let memo = MEMO.lock().unwrap_or_else(|p| p.into_inner());
    memo.as_ref()?.seeded.get(key).cloned()
}

pub(crate) fn put(key: Key, seeded: Seeded) {
    let mut guard = MEMO.lock().unwrap_or_else(|p| p.into_inner());
    let memo = guard.get_or_insert_with(Memo::default);
    if memo.seeded.contains_key(&key) {
        return;
    }
    while memo.bytes + seeded.bytes > MEMO_BYTES {
        let Some(old) = memo.order.pop_front() else {
            break;
        };
        if let Some(s) = memo.seeded.remove(&old) {
            memo.bytes -= s.bytes;
        }
    }
    memo.bytes += seeded.bytes;
    memo.order.push_back(key);
    memo.seeded.insert(key, Arc::new(seeded));
}
