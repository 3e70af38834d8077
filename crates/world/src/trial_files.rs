//! A trial directory's files: its trees packed into one archive, and the one reader of them.
//!
//! A finished trial keeps its small records (`result.json`, `verdicts.json`,
//! `trajectory.jsonl`, `events.jsonl`, ...) as plain files and every directory of the attempt
//! — `snapshots/`, `world/` (workspace, blobs, code, ...), `deliverables/`, `mail/`,
//! `calendar/` — in one zip archive, [`ARCHIVE`], its entries zstd-compressed under their
//! paths relative to the trial directory (`snapshots/turn-1.json`, `world/blobs/<hash>`).
//! Zip because a reader wants one file of it (the viewer's preview of one deliverable, one
//! blob): its central directory gives random access, where a compressed tar must be read from
//! the start. [`pack`] writes it; [`TrialFiles`] reads a trial packed or not (runs written
//! before the archive existed, or unpacked with `bureau unpack`).
//!
//! The archive is hostile input like the rest of a run directory: only regular files are
//! read, never through a symbolic link, every read is bounded, and an archive with an entry
//! naming a path outside the trial (`..`, absolute) is refused as a whole.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use zip::ZipArchive;
use zip::result::ZipError;

mod pack;

pub use pack::{PackStats, pack, pack_from, unpack_in_place, unpack_to};

/// The archive of a trial's trees, beside its plain records.
pub const ARCHIVE: &str = "trial.zip";
/// Directories of a trial directory that are not packed with it: earlier attempts, each of
/// which has an archive of its own.
pub const NOT_PACKED: &[&str] = &["attempts"];
/// Most entries an archive may hold (a packed trial of a 5,000-file workspace has ~10,000).
pub const MAX_ENTRIES: usize = 1_000_000;
/// Most files [`TrialFiles::list`] returns.
pub const MAX_LISTED: usize = 100_000;

/// Why a file of a trial could not be read. Every message names the file.
#[derive(Debug, thiserror::Error)]
pub enum TrialFilesError {
    #[error("{path}: it does not exist")]
    NotFound { path: String },
    #[error("{path}: {why}")]
    Refused { path: String, why: String },
    #[error("{path}: it is {size} bytes, more than the {max} read")]
    TooLarge { path: String, size: u64, max: u64 },
    #[error("{}: it cannot be read ({source})", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {message}", archive.display())]
    Archive { archive: PathBuf, message: String },
}

impl TrialFilesError {
    /// Whether the file is simply absent (neither on disk nor in the archive).
    pub fn is_not_found(&self) -> bool {
        matches!(self, TrialFilesError::NotFound { .. })
    }

    fn io(path: &Path, source: std::io::Error) -> TrialFilesError {
        TrialFilesError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Whether `rel` is a relative slash path inside a trial: no empty, `.` or `..` component, not
/// absolute, no NUL. `Err` says why not.
pub fn check_rel(rel: &str) -> Result<(), String> {
    if rel.is_empty() {
        return Err("an empty path".into());
    }
    if rel.starts_with('/') {
        return Err("an absolute path".into());
    }
    if rel.contains('\0') {
        return Err("a path with a NUL byte".into());
    }
    for c in rel.split('/') {
        match c {
            "" => return Err("a path with an empty component".into()),
            "." | ".." => return Err(format!("a path with a `{c}` component")),
            _ => {}
        }
    }
    Ok(())
}

/// The files of one trial directory: plain files on disk first, then the entries of its
/// archive. Cheap to open (the archive's central directory is read once); safe to share
/// between threads.
#[derive(Debug)]
pub struct TrialFiles {
    dir: PathBuf,
    archive: Option<Packed>,
}

#[derive(Debug)]
struct Packed {
    path: PathBuf,
    zip: Mutex<ZipArchive<File>>,
    /// Entry name → index, files and directories (a directory's name ends with `/`).
    names: BTreeMap<String, usize>,
}

/// Open `path` for reading without following a symbolic link and without blocking on a FIFO;
/// `Err` unless it is a regular file.
pub(crate) fn open_regular(path: &Path) -> Result<(File, u64), std::io::Error> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) {
                std::io::Error::other("it is a symbolic link, which is not followed")
            } else {
                e
            }
        })?;
    let meta = file.metadata()?;
    if !meta.file_type().is_file() {
        return Err(std::io::Error::other("it is not a regular file"));
    }
    Ok((file, meta.len()))
}

fn zip_message(e: &ZipError) -> String {
    match e {
        ZipError::Io(io) => format!("reading it failed ({io})"),
        e => e.to_string(),
    }
}

impl TrialFiles {
    /// The files of the trial directory `dir`. `Err` when it has an archive that is not a
    /// readable zip archive of a trial (truncated, corrupt, a link, or naming paths outside
    /// the trial); [`TrialFiles::loose`] still reads its plain files.
    pub fn open(dir: &Path) -> Result<TrialFiles, TrialFilesError> {
        let path = dir.join(ARCHIVE);
        match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::loose(dir)),
            Err(e) => return Err(TrialFilesError::io(&path, e)),
            Ok(_) => {}
        }
        let archive_err = |message: String| TrialFilesError::Archive {
            archive: path.clone(),
            message,
        };
        let (file, _) = open_regular(&path).map_err(|e| TrialFilesError::io(&path, e))?;
        let zip = ZipArchive::new(file).map_err(|e| {
            archive_err(format!(
                "not a readable zip archive ({}) — it is truncated or corrupt (the run was \
                 probably stopped while writing it, or the file was damaged since); the \
                 trial's snapshots and files cannot be read: delete the trial's directory \
                 and resume the run to run it again",
                zip_message(&e)
            ))
        })?;
        if zip.len() > MAX_ENTRIES {
            return Err(archive_err(format!(
                "it has {} entries, more than the {MAX_ENTRIES} read",
                zip.len()
            )));
        }
        let mut names = BTreeMap::new();
        for (i, name) in zip.file_names().enumerate() {
            let bare = name.strip_suffix('/').unwrap_or(name);
            check_rel(bare).map_err(|why| {
                archive_err(format!(
                    "its entry {name:?} is {why}, not a file inside the trial — the archive \
                     was not written by Bureau and is refused"
                ))
            })?;
            // `file_names` is in index order.
            names.insert(name.to_string(), i);
        }
        Ok(TrialFiles {
            dir: dir.to_path_buf(),
            archive: Some(Packed {
                path,
                zip: Mutex::new(zip),
                names,
            }),
        })
    }

    /// The plain files of `dir` only, its archive ignored.
    pub fn loose(dir: &Path) -> TrialFiles {
        TrialFiles {
            dir: dir.to_path_buf(),
            archive: None,
        }
    }

    /// The trial directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether the trial has an archive.
    pub fn is_packed(&self) -> bool {
        self.archive.is_some()
    }

    /// `dir/rel` when no component of it (below `dir`) is a symbolic link; `None` when some
    /// component does not exist. `Err` names a link.
    fn on_disk(&self, rel: &str) -> Result<Option<(PathBuf, std::fs::Metadata)>, TrialFilesError> {
        let mut path = self.dir.clone();
        let mut meta = None;
        for c in rel.split('/') {
            path.push(c);
            match std::fs::symlink_metadata(&path) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => return Ok(None),
                Err(e) => return Err(TrialFilesError::io(&path, e)),
                Ok(m) if m.file_type().is_symlink() => {
                    return Err(TrialFilesError::Refused {
                        path: rel.to_string(),
                        why: "it is (or lies under) a symbolic link, which is not followed".into(),
                    });
                }
                Ok(m) => meta = Some(m),
            }
        }
        Ok(meta.map(|m| (path, m)))
    }

    /// Copy the file `rel` (a slash path relative to the trial directory) into `out`: at most
    /// `max` bytes, else [`TrialFilesError::TooLarge`] (and `out` may hold a part of it).
    pub fn copy_into(
        &self,
        rel: &str,
        max: u64,
        out: &mut dyn Write,
    ) -> Result<u64, TrialFilesError> {
        check_rel(rel).map_err(|why| TrialFilesError::Refused {
            path: rel.to_string(),
            why: format!("{why} is not a file of the trial"),
        })?;
        let too_large = |size| TrialFilesError::TooLarge {
            path: rel.to_string(),
            size,
            max,
        };
        if let Some((path, meta)) = self.on_disk(rel)? {
            if !meta.file_type().is_file() {
                return Err(TrialFilesError::Refused {
                    path: rel.to_string(),
                    why: "it is not a regular file".into(),
                });
            }
            let (file, len) = open_regular(&path).map_err(|e| TrialFilesError::io(&path, e))?;
            if len > max {
                return Err(too_large(len));
            }
            return bounded_copy(file, max, out, &path).and_then(|n| match n {
                Some(n) => Ok(n),
                None => Err(too_large(max.saturating_add(1))),
            });
        }
        let Some(packed) = &self.archive else {
            return Err(TrialFilesError::NotFound {
                path: rel.to_string(),
            });
        };
        let Some(&index) = packed.names.get(rel) else {
            return Err(if packed.names.contains_key(&format!("{rel}/")) {
                TrialFilesError::Refused {
                    path: rel.to_string(),
                    why: "it is a directory".into(),
                }
            } else {
                TrialFilesError::NotFound {
                    path: rel.to_string(),
                }
            });
        };
        let mut zip = packed.zip.lock().unwrap_or_else(|p| p.into_inner());
        let entry_err = |e: String| TrialFilesError::Archive {
            archive: packed.path.clone(),
            message: format!("its entry {rel}: {e}"),
        };
        let entry = zip
            .by_index(index)
            .map_err(|e| entry_err(zip_message(&e)))?;
        if !entry.is_file() {
            return Err(TrialFilesError::Refused {
                path: rel.to_string(),
                why: "its archive entry is not a regular file (a link or a directory)".into(),
            });
        }
        if entry.size() > max {
            return Err(too_large(entry.size()));
        }
        match bounded_copy(entry, max, out, &packed.path) {
            Ok(Some(n)) => Ok(n),
            Ok(None) => Err(too_large(max.saturating_add(1))),
            Err(TrialFilesError::Io { source, .. }) => Err(entry_err(format!(
                "it cannot be decompressed ({source}) — the archive is corrupt"
            ))),
            Err(e) => Err(e),
        }
    }

    /// The bytes of the file `rel`, at most `max` of them.
    pub fn read(&self, rel: &str, max: u64) -> Result<Vec<u8>, TrialFilesError> {
        let mut out = Vec::new();
        self.copy_into(rel, max, &mut out)?;
        Ok(out)
    }

    /// Whether the trial has a regular file `rel` (on disk or in its archive).
    pub fn exists(&self, rel: &str) -> bool {
        if check_rel(rel).is_err() {
            return false;
        }
        match self.on_disk(rel) {
            Ok(Some((_, m))) => return m.file_type().is_file(),
            Ok(None) => {}
            Err(_) => return false,
        }
        self.archive
            .as_ref()
            .is_some_and(|p| p.names.contains_key(rel))
    }

    /// Every regular file under the directory `prefix` (a slash path; `""` for the whole
    /// trial), as its path relative to the trial directory and its size, sorted: those on
    /// disk (no symbolic link followed) and those in the archive. At most [`MAX_LISTED`].
    pub fn list(&self, prefix: &str) -> Result<BTreeMap<String, u64>, TrialFilesError> {
        let prefix = prefix.trim_end_matches('/');
        let mut out = BTreeMap::new();
        if !prefix.is_empty() {
            check_rel(prefix).map_err(|why| TrialFilesError::Refused {
                path: prefix.to_string(),
                why: format!("{why} is not a directory of the trial"),
            })?;
        }
        let disk_root = if prefix.is_empty() {
            Some(self.dir.clone())
        } else {
            match self.on_disk(prefix)? {
                Some((p, m)) if m.file_type().is_dir() => Some(p),
                _ => None,
            }
        };
        if let Some(root) = disk_root {
            for entry in walkdir::WalkDir::new(&root)
                .follow_links(false)
                .follow_root_links(false)
                .sort_by_file_name()
            {
                let Ok(entry) = entry else { continue };
                if !entry.file_type().is_file() {
                    continue;
                }
                let Ok(below) = entry.path().strip_prefix(&self.dir) else {
                    continue;
                };
                let Some(rel) = below.to_str() else { continue };
                if prefix.is_empty() && rel == ARCHIVE {
                    continue;
                }
                let len = entry.metadata().map(|m| m.len()).unwrap_or(0);
                out.insert(rel.to_string(), len);
                if out.len() >= MAX_LISTED {
                    return Ok(out);
                }
            }
        }
        if let Some(packed) = &self.archive {
            let dir_prefix = if prefix.is_empty() {
                String::new()
            } else {
                format!("{prefix}/")
            };
            let mut zip = packed.zip.lock().unwrap_or_else(|p| p.into_inner());
            for (name, &i) in packed.names.range(dir_prefix.clone()..) {
                if !name.starts_with(&dir_prefix) || out.len() >= MAX_LISTED {
                    break;
                }
                if name.ends_with('/') || out.contains_key(name) {
                    continue;
                }
                let entry = zip.by_index_raw(i).map_err(|e| TrialFilesError::Archive {
                    archive: packed.path.clone(),
                    message: format!("its entry {name}: {}", zip_message(&e)),
                })?;
                if entry.is_file() {
                    out.insert(name.clone(), entry.size());
                }
            }
        }
        Ok(out)
    }

    /// Write every file under `prefix` into `dest` (their paths below `prefix`), each at most
    /// `max` bytes: e.g. a trial's `world/blobs` as a directory, for restoring its world.
    pub fn copy_tree(&self, prefix: &str, dest: &Path, max: u64) -> Result<usize, TrialFilesError> {
        let prefix = prefix.trim_end_matches('/');
        let files = self.list(prefix)?;
        std::fs::create_dir_all(dest).map_err(|e| TrialFilesError::io(dest, e))?;
        for rel in files.keys() {
            let below = rel
                .strip_prefix(prefix)
                .map(|r| r.trim_start_matches('/'))
                .unwrap_or(rel);
            let to = dest.join(below);
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent).map_err(|e| TrialFilesError::io(parent, e))?;
            }
            let mut f = std::io::BufWriter::new(
                File::create(&to).map_err(|e| TrialFilesError::io(&to, e))?,
            );
            self.copy_into(rel, max, &mut f)?;
            f.flush().map_err(|e| TrialFilesError::io(&to, e))?;
        }
        Ok(files.len())
    }
}

/// Copy at most `max` bytes of `from` into `out`; `None` when there were more.
fn bounded_copy(
    from: impl Read,
    max: u64,
    out: &mut dyn Write,
    path: &Path,
) -> Result<Option<u64>, TrialFilesError> {
    let mut limited = from.take(max.saturating_add(1));
    let n = std::io::copy(&mut limited, out).map_err(|e| TrialFilesError::io(path, e))?;
    Ok((n <= max).then_some(n))
}

#[cfg(test)]
mod tests;
