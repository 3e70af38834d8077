//! Writing a trial's archive, and unpacking it again.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, DateTime, ZipWriter};

use super::{ARCHIVE, NOT_PACKED, TrialFiles, TrialFilesError, check_rel, open_regular};

/// zstd's default level: several times faster than deflate at a better ratio.
const ZSTD_LEVEL: i64 = 3;

/// What [`pack`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PackStats {
    /// Files archived.
    pub files: usize,
    /// Their bytes.
    pub bytes: u64,
    /// The archive's bytes (0 when nothing was packed and no archive written).
    pub archive_bytes: u64,
    /// Entries left out: symbolic links, special files, names that are not UTF-8 or not
    /// plain relative paths. They are deleted with the trees.
    pub skipped: usize,
}

/// The directories of `dir` that [`pack`] archives: every one but [`NOT_PACKED`] and hidden
/// ones (temporary), sorted.
fn packed_dirs(dir: &Path) -> Result<Vec<(String, PathBuf)>, TrialFilesError> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| TrialFilesError::io(dir, e))? {
        let entry = entry.map_err(|e| TrialFilesError::io(dir, e))?;
        let t = entry
            .file_type()
            .map_err(|e| TrialFilesError::io(&entry.path(), e))?;
        let Some(name) = entry.file_name().to_str().map(String::from) else {
            continue;
        };
        if t.is_dir() && !name.starts_with('.') && !NOT_PACKED.contains(&name.as_str()) {
            out.push((name, entry.path()));
        }
    }
    out.sort();
    Ok(out)
}

/// Pack every directory of the trial directory `dir` (but `attempts/`) into `dir/`[`ARCHIVE`]
/// and delete them; the plain files beside them stay. The archive is written under a
/// temporary name unique to the call and renamed into place, so it is either whole or absent;
/// its bytes depend only on the files' paths and contents (sorted entries, fixed times and
/// modes). Only regular files are archived, never through a symbolic link. Nothing to pack:
/// no archive. `Err` when `dir` already has an archive, or on any I/O failure (then `dir` is
/// as it was, but for a directory whose removal failed after the archive was written).
pub fn pack(dir: &Path) -> Result<PackStats, TrialFilesError> {
    pack_from(dir, dir)
}

/// [`pack`] with the trees in `trees` instead of `dir` (a trial that built them in a scratch
/// directory, such as one in memory): the directories of `trees` go into `dir/`[`ARCHIVE`],
/// their paths taken from `trees`, and are deleted. `trees` itself stays.
pub fn pack_from(dir: &Path, trees: &Path) -> Result<PackStats, TrialFilesError> {
    let archive = dir.join(ARCHIVE);
    if std::fs::symlink_metadata(&archive).is_ok() {
        return Err(TrialFilesError::Archive {
            archive,
            message: "it already exists: the trial is packed (`bureau unpack` it first)".into(),
        });
    }
    let dirs = packed_dirs(trees)?;
    let mut stats = PackStats::default();
    if dirs.is_empty() {
        return Ok(stats);
    }
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    for (_, root) in &dirs {
        for entry in walkdir::WalkDir::new(root)
            .follow_links(false)
            .follow_root_links(false)
        {
            let entry = entry.map_err(|e| {
                let path = e.path().unwrap_or(root).to_path_buf();
                TrialFilesError::io(&path, e.into())
            })?;
            if entry.file_type().is_dir() {
                continue;
            }
            let rel = entry
                .path()
                .strip_prefix(trees)
                .ok()
                .and_then(Path::to_str)
                .filter(|r| check_rel(r).is_ok());
            match rel {
                Some(rel) if entry.file_type().is_file() => {
                    files.push((rel.to_string(), entry.path().to_path_buf()))
                }
                _ => stats.skipped += 1,
            }
        }
    }
    files.sort();

    static CALLS: AtomicU64 = AtomicU64::new(0);
    let call = CALLS.fetch_add(1, Ordering::SeqCst);
    let tmp = dir.join(format!(".{ARCHIVE}.{}.{call}.tmp", std::process::id()));
    let written = write_archive(&tmp, &files, &mut stats);
    let renamed = written.and_then(|()| {
        std::fs::rename(&tmp, &archive).map_err(|e| TrialFilesError::io(&archive, e))
    });
    if let Err(e) = renamed {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    stats.archive_bytes = std::fs::metadata(&archive).map(|m| m.len()).unwrap_or(0);
    // Deleting can wait on the disk (a file system mounted with `discard` trims every freed
    // block as it goes): no CPU work (`bureau_core::cpu`).
    bureau_core::cpu::waiting(|| {
        for (_, root) in &dirs {
            std::fs::remove_dir_all(root).map_err(|e| TrialFilesError::io(root, e))?;
        }
        Ok::<(), TrialFilesError>(())
    })?;
    Ok(stats)
}

fn write_archive(
    tmp: &Path,
    files: &[(String, PathBuf)],
    stats: &mut PackStats,
) -> Result<(), TrialFilesError> {
    let io = |e| TrialFilesError::io(tmp, e);
    let zip_err = |e: zip::result::ZipError| TrialFilesError::Archive {
        archive: tmp.to_path_buf(),
        message: format!("writing it failed ({})", super::zip_message(&e)),
    };
    let out = File::options()
        .write(true)
        .create_new(true)
        .open(tmp)
        .map_err(io)?;
    let mut zip = ZipWriter::new(BufWriter::new(out));
    let base = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Zstd)
        .compression_level(Some(ZSTD_LEVEL))
        .last_modified_time(DateTime::default())
        .unix_permissions(0o644);
    for (rel, path) in files {
        // Gone or no longer a regular file since the walk: left out like any special file.
        let Ok((mut file, len)) = open_regular(path) else {
            stats.skipped += 1;
            continue;
        };
        zip.start_file(rel.as_str(), base.large_file(len >= u64::from(u32::MAX)))
            .map_err(zip_err)?;
        let n = std::io::copy(&mut file, &mut zip).map_err(|e| TrialFilesError::io(path, e))?;
        stats.files += 1;
        stats.bytes += n;
    }
    let out = zip.finish().map_err(zip_err)?;
    let file = out.into_inner().map_err(|e| io(e.into_error()))?;
    // Waiting on the disk is no CPU work (`bureau_core::cpu`).
    bureau_core::cpu::waiting(|| file.sync_all()).map_err(io)?;
    Ok(())
}

/// Unpack the archive of the trial directory `dir` into it (its entries become the
/// directories they were before packing) and delete the archive. Entries are written under a
/// temporary name and renamed, never through a symbolic link. Returns the files written; 0
/// when `dir` has no archive.
pub fn unpack_in_place(dir: &Path) -> Result<usize, TrialFilesError> {
    let files = TrialFiles::open(dir)?;
    if !files.is_packed() {
        return Ok(0);
    }
    let n = extract(&files, dir)?;
    let archive = dir.join(ARCHIVE);
    drop(files);
    std::fs::remove_file(&archive).map_err(|e| TrialFilesError::io(&archive, e))?;
    Ok(n)
}

/// Write every file of the trial directory `dir` (its plain files and its archive's
/// entries, not its earlier attempts) into `to`, which must not exist or be empty. `dir` is
/// left as it is. Returns the files written.
pub fn unpack_to(dir: &Path, to: &Path) -> Result<usize, TrialFilesError> {
    let files = TrialFiles::open(dir)?;
    match std::fs::read_dir(to) {
        Ok(mut rd) => {
            if rd.next().is_some() {
                return Err(TrialFilesError::Refused {
                    path: to.display().to_string(),
                    why: "it is not empty — give a new or empty directory".into(),
                });
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(to).map_err(|e| TrialFilesError::io(to, e))?
        }
        Err(e) => return Err(TrialFilesError::io(to, e)),
    }
    extract(&files, to)
}

/// Every file of `files` (but earlier attempts) written below `to`.
fn extract(files: &TrialFiles, to: &Path) -> Result<usize, TrialFilesError> {
    let all = files.list("")?;
    let mut n = 0;
    for rel in all.keys() {
        // Earlier attempts, and hidden (temporary) entries.
        if rel.starts_with('.')
            || rel
                .split('/')
                .next()
                .is_some_and(|c| NOT_PACKED.contains(&c))
        {
            continue;
        }
        let dest = to.join(rel);
        // Already there (an earlier, interrupted unpack, or a plain file in place).
        if to == files.dir() && files.on_disk(rel)?.is_some() {
            continue;
        }
        let parent = dest.parent().unwrap_or(to);
        make_dirs_no_links(to, parent)?;
        let name = dest
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = parent.join(format!(".{name}.unpack.tmp"));
        let write = || -> Result<(), TrialFilesError> {
            let mut f =
                BufWriter::new(File::create(&tmp).map_err(|e| TrialFilesError::io(&tmp, e))?);
            files.copy_into(rel, u64::MAX, &mut f)?;
            f.flush().map_err(|e| TrialFilesError::io(&tmp, e))?;
            std::fs::rename(&tmp, &dest).map_err(|e| TrialFilesError::io(&dest, e))
        };
        if let Err(e) = write() {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        n += 1;
    }
    Ok(n)
}

/// Create `dir` (below `root`) and its parents, refusing to go through a symbolic link.
fn make_dirs_no_links(root: &Path, dir: &Path) -> Result<(), TrialFilesError> {
    let below = dir.strip_prefix(root).unwrap_or(Path::new(""));
    let mut path = root.to_path_buf();
    for c in below.components() {
        path.push(c);
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_dir() => {}
            Ok(_) => {
                return Err(TrialFilesError::Refused {
                    path: path.display().to_string(),
                    why: "it is in the way (a file or a symbolic link where a directory goes)"
                        .into(),
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir(&path).map_err(|e| TrialFilesError::io(&path, e))?
            }
            Err(e) => return Err(TrialFilesError::io(&path, e)),
        }
    }
    Ok(())
}
