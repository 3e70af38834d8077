//! The base layer of a workspace: a read-only tree a world starts from (a task's generated
//! persona workspace), whose manifest is computed once and shared by every world built on it.
//!
//! Two uses:
//! - **A world built on a replica** ([`crate::World::build_on_replica`]): the workspace is a
//!   `bureau-replica` lease of the base tree. A snapshot is then the base manifest patched with
//!   the replica's change set — the paths the agent (or the task) touched — instead of a walk
//!   and hash of the whole tree, and only touched contents go to the blob store.
//! - **Any world of a `[workspace]` task**: contents that are in the base are not copied into
//!   the blob store (the base holds them); restoring a snapshot takes a missing blob from the
//!   base by content hash.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use bureau_replica::{Baseline, Kind};

use crate::WorldError;
use crate::files::to_slash;
use crate::snapshot::{FileRecord, Manifest, walk_tree};

/// A read-only tree and its manifest (see the module docs).
#[derive(Debug)]
pub struct BaseLayer {
    dir: PathBuf,
    pub(crate) manifest: Manifest,
    /// Content hash → a path holding it.
    by_hash: HashMap<String, String>,
    bytes: u64,
}

impl BaseLayer {
    /// Scan `dir`, hashing every file.
    pub fn scan(dir: &Path) -> Result<BaseLayer, WorldError> {
        let manifest = walk_tree(dir, None)?;
        Ok(BaseLayer::new(dir.to_path_buf(), manifest))
    }

    /// The base layer of a replica baseline, from the manifest it already holds (no rescan;
    /// symbolic link targets are read from the baseline directory).
    pub fn from_baseline(baseline: &Baseline) -> Result<BaseLayer, WorldError> {
        let dir = baseline.root().to_path_buf();
        let mut m = Manifest::default();
        for (rel, e) in &baseline.manifest().entries {
            let path = to_slash(rel);
            match e.kind {
                Kind::Dir => {
                    m.dirs.insert(path);
                }
                Kind::Symlink => {
                    let full = dir.join(rel);
                    let target = std::fs::read_link(&full).map_err(|e| WorldError::io(&full, e))?;
                    m.symlinks
                        .insert(path, target.to_string_lossy().into_owned());
                }
                Kind::File => {
                    m.files.insert(
                        path,
                        FileRecord {
                            size: e.size,
                            hash: blake3::Hash::from_bytes(e.content).to_hex().to_string(),
                            mode: e.mode,
                        },
                    );
                }
            }
        }
        Ok(BaseLayer::new(dir, m))
    }

    fn new(dir: PathBuf, manifest: Manifest) -> BaseLayer {
        let mut by_hash = HashMap::new();
        let mut bytes = 0;
        for (p, r) in &manifest.files {
            by_hash.entry(r.hash.clone()).or_insert_with(|| p.clone());
            bytes += r.size;
        }
        BaseLayer {
            dir,
            manifest,
            by_hash,
            bytes,
        }
    }

    /// The shared base layer of `dir` in this process: scanned on first use, then reused.
    pub fn shared(dir: &Path) -> Result<Arc<BaseLayer>, WorldError> {
        static BASES: OnceLock<Mutex<BTreeMap<PathBuf, Arc<BaseLayer>>>> = OnceLock::new();
        let bases = BASES.get_or_init(Default::default);
        let mut map = bases.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(b) = map.get(dir) {
            return Ok(b.clone());
        }
        let b = Arc::new(BaseLayer::scan(dir)?);
        map.insert(dir.to_path_buf(), b.clone());
        Ok(b)
    }

    /// The base directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Number of files.
    pub fn file_count(&self) -> u64 {
        self.manifest.files.len() as u64
    }

    /// Total bytes of the files.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The files: path → record.
    pub fn files(&self) -> &BTreeMap<String, FileRecord> {
        &self.manifest.files
    }

    /// Does the base hold this content?
    pub fn has(&self, hash: &str) -> bool {
        self.by_hash.contains_key(hash)
    }

    /// A file of the base holding the content `hash`.
    pub fn blob(&self, hash: &str) -> Option<PathBuf> {
        self.by_hash.get(hash).map(|p| self.dir.join(p))
    }
}
