//! The workspace: a real directory per trial, every path confined to it.
//!
//! Paths given by agents are relative to the workspace. Absolute paths, `..` and symlinks
//! that lead outside are refused with a message; nothing outside the workspace is ever read
//! or written.

use std::path::{Component, Path, PathBuf};

use serde::Serialize;

/// One entry of a listing.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct FileInfo {
    /// Relative to the workspace, `/`-separated.
    pub path: String,
    pub size: u64,
    /// `file`, `dir`, or `special` (a FIFO, socket or device: listed, never read).
    pub kind: &'static str,
}

/// Reading limit for one file through tools and checks (larger files are refused).
pub const MAX_READ_BYTES: u64 = 64 * 1024 * 1024;

/// Why a path that must be a regular file cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// A FIFO, socket, device or directory: never opened for reading (a FIFO would block).
    #[error("it is {0}, not a regular file; only regular files can be read")]
    NotRegular(&'static str),
    /// Larger than the caller's limit.
    #[error("it is {size} bytes, over the {max}-byte read limit")]
    TooLarge { size: u64, max: u64 },
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// What a file type is, in words, for anything that is not a regular file.
pub fn special_kind(ft: &std::fs::FileType) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_file() {
        None
    } else if ft.is_dir() {
        Some("a directory")
    } else if ft.is_symlink() {
        Some("a symbolic link")
    } else if ft.is_fifo() {
        Some("a FIFO (named pipe)")
    } else if ft.is_socket() {
        Some("a socket")
    } else if ft.is_char_device() {
        Some("a character device")
    } else if ft.is_block_device() {
        Some("a block device")
    } else {
        Some("a special file")
    }
}

/// Read a file that must be a regular file, without ever blocking on anything else.
///
/// Agent-made paths can name a FIFO (whose `open` for reading waits for a writer forever), a
/// socket or a device. The type is checked before opening (following links, which callers
/// have confined already), the file is opened with `O_NONBLOCK` (a FIFO that appears in
/// between opens at once instead of waiting) and checked again on the open descriptor; only
/// then is it read, at most `max` bytes.
pub fn read_regular(path: &Path, max: u64) -> Result<Vec<u8>, ReadError> {
    let meta = std::fs::metadata(path)?;
    if let Some(kind) = special_kind(&meta.file_type()) {
        return Err(ReadError::NotRegular(kind));
    }
    read_open(path, 0, max)
}

/// Open `path` with `O_NONBLOCK | O_NOCTTY | extra`, check the descriptor is a regular file
/// of at most `max` bytes, and read it.
fn read_open(path: &Path, extra: i32, max: u64) -> Result<Vec<u8>, ReadError> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | extra)
        .open(path)
        .map_err(|e| {
            // O_NOFOLLOW on a link: it was swapped in since the walk.
            if e.raw_os_error() == Some(libc::ELOOP) {
                ReadError::NotRegular("a symbolic link")
            } else {
                ReadError::Io(e)
            }
        })?;
    let meta = file.metadata()?;
    if let Some(kind) = special_kind(&meta.file_type()) {
        return Err(ReadError::NotRegular(kind));
    }
    if meta.len() > max {
        return Err(ReadError::TooLarge {
            size: meta.len(),
            max,
        });
    }
    let mut out = Vec::with_capacity(meta.len().min(max) as usize);
    file.take(max.saturating_add(1)).read_to_end(&mut out)?;
    if out.len() as u64 > max {
        return Err(ReadError::TooLarge {
            size: out.len() as u64,
            max,
        });
    }
    Ok(out)
}

/// A file found by [`Files::walk_files`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkedFile {
    /// Relative to the workspace, `/`-separated.
    pub path: String,
    /// Where the walk found it as a regular file (`None`: a symbolic link, resolved on read).
    walked: Option<PathBuf>,
}

impl WalkedFile {
    /// A file named by the caller, resolved when read.
    pub fn named(path: &str) -> WalkedFile {
        WalkedFile {
            path: path.to_string(),
            walked: None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Files {
    root: PathBuf,
    /// The directory paths are joined to, and the absolute name a symbolic link may use to
    /// point inside the workspace: `root` canonicalized, or `root` as given when the canonical
    /// form is another directory — a replica's workspace reached through `/proc/<pid>/root/...`
    /// (another mount namespace), where the kernel's name for the path does not lead back to it.
    canonical_root: PathBuf,
}

impl Files {
    pub(crate) fn new(root: PathBuf) -> std::io::Result<Files> {
        use std::os::unix::fs::MetadataExt;
        std::fs::create_dir_all(&root)?;
        let meta = std::fs::metadata(&root)?;
        let same = |p: &Path| {
            std::fs::metadata(p).is_ok_and(|m| m.dev() == meta.dev() && m.ino() == meta.ino())
        };
        let canonical_root = match root.canonicalize() {
            Ok(c) if same(&c) => c,
            _ => root.clone(),
        };
        Ok(Files {
            root,
            canonical_root,
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolve a workspace path to a real path inside the workspace, or say why not.
    /// The path need not exist; every symbolic link on the way must stay inside the workspace.
    /// Links are followed by hand, component by component (never through the kernel's name for
    /// the workspace, which is wrong for a replica in another mount namespace).
    pub fn resolve(&self, rel: &str) -> Result<PathBuf, String> {
        let rel = rel.trim();
        let clean = normalize(rel)?;
        self.check_links(rel, &clean)?;
        Ok(self.canonical_root.join(&clean))
    }

    /// Follow `clean` from the workspace root through any symbolic links and fail if one leads
    /// outside the workspace, is broken, or loops.
    fn check_links(&self, rel: &str, clean: &Path) -> Result<(), String> {
        use std::ffi::OsString;
        const MAX_LINKS: usize = 40;
        let outside = || {
            format!(
                "`{rel}` leads outside the workspace through a symbolic link; only paths inside the workspace can be used"
            )
        };
        let broken = || format!("`{rel}` goes through a broken symbolic link; use another path");
        // Components still to walk (last = next) and the resolved components so far.
        let mut pending: Vec<OsString> = clean
            .components()
            .rev()
            .map(|c| c.as_os_str().to_os_string())
            .collect();
        let mut done: Vec<OsString> = Vec::new();
        let mut links = 0usize;
        // `pending[from_link..]` came from link targets.
        let mut from_link = usize::MAX;
        while let Some(name) = pending.pop() {
            if name == ".." {
                if done.pop().is_none() {
                    return Err(outside());
                }
                continue;
            }
            if name == "." || name.is_empty() {
                continue;
            }
            let mut here = self.canonical_root.clone();
            here.extend(&done);
            here.push(&name);
            match std::fs::symlink_metadata(&here) {
                Ok(m) if m.file_type().is_symlink() => {
                    links += 1;
                    if links > MAX_LINKS {
                        return Err(format!(
                            "`{rel}` goes through too many symbolic links; use another path"
                        ));
                    }
                    let target = std::fs::read_link(&here).map_err(|_| broken())?;
                    let target = if target.is_absolute() {
                        let inside = target
                            .strip_prefix(&self.canonical_root)
                            .map_err(|_| outside())?;
                        done.clear();
                        inside.to_path_buf()
                    } else {
                        target
                    };
                    from_link = from_link.min(pending.len());
                    for c in target.components().rev() {
                        match c {
                            Component::Normal(s) => pending.push(s.to_os_string()),
                            Component::ParentDir => pending.push("..".into()),
                            Component::CurDir => {}
                            Component::RootDir | Component::Prefix(_) => return Err(outside()),
                        }
                    }
                }
                Ok(_) => done.push(name),
                // A link's target that does not exist: broken (it may point anywhere later).
                Err(_) if pending.len() >= from_link => return Err(broken()),
                // Nothing exists from here on: the rest of the path cannot go through a link.
                Err(_) => return Ok(()),
            }
        }
        Ok(())
    }

    /// Does a file or directory exist at this workspace path?
    pub fn exists(&self, rel: &str) -> bool {
        self.resolve(rel).map(|p| p.exists()).unwrap_or(false)
    }

    pub fn is_dir(&self, rel: &str) -> bool {
        self.resolve(rel).map(|p| p.is_dir()).unwrap_or(false)
    }

    /// The bytes of a file. Only regular files are read: a FIFO, socket or device is refused
    /// without being opened for a blocking read (see [`read_regular`]).
    pub fn read_bytes(&self, rel: &str) -> Result<Vec<u8>, String> {
        let p = self.resolve(rel)?;
        let meta =
            std::fs::metadata(&p).map_err(|_| format!("no file `{rel}` in the workspace"))?;
        if meta.is_dir() {
            return Err(format!("`{rel}` is a directory; list it with files_list"));
        }
        read_regular(&p, MAX_READ_BYTES).map_err(|e| match e {
            ReadError::Io(e) => format!("cannot read `{rel}`: {e}"),
            e => format!("`{rel}` cannot be read: {e}"),
        })
    }

    /// The text of a file; an error if the file is binary (not UTF-8 or holds NUL bytes).
    pub fn read_text(&self, rel: &str) -> Result<String, String> {
        let bytes = self.read_bytes(rel)?;
        if is_binary(&bytes) {
            return Err(format!(
                "`{rel}` is a binary file ({} bytes), not text",
                bytes.len()
            ));
        }
        String::from_utf8(bytes).map_err(|_| format!("`{rel}` is not UTF-8 text"))
    }

    /// The directory `dir` names ("" or "." = the workspace root), resolved inside it.
    fn dir_base(&self, dir: &str) -> Result<PathBuf, String> {
        let base = if dir.trim().is_empty() || dir.trim() == "." {
            self.canonical_root.clone()
        } else {
            self.resolve(dir)?
        };
        if !base.is_dir() {
            return Err(format!("no directory `{dir}` in the workspace"));
        }
        Ok(base)
    }

    /// Entries under `dir` ("" = the workspace), sorted by path; directories included.
    pub fn list(&self, dir: &str, recursive: bool) -> Result<Vec<FileInfo>, String> {
        let base = self.dir_base(dir)?;
        let mut out = Vec::new();
        let walker = walkdir::WalkDir::new(&base)
            .min_depth(1)
            .max_depth(if recursive { usize::MAX } else { 1 })
            .follow_links(false)
            .sort_by_file_name();
        for entry in walker.into_iter().flatten() {
            let Ok(rel) = entry.path().strip_prefix(&self.canonical_root) else {
                continue;
            };
            let path = to_slash(rel);
            let ft = entry.file_type();
            if ft.is_dir() {
                out.push(FileInfo {
                    path,
                    size: 0,
                    kind: "dir",
                });
            } else if !ft.is_symlink() && special_kind(&ft).is_some() {
                out.push(FileInfo {
                    path,
                    size: 0,
                    kind: "special",
                });
            } else {
                let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
                out.push(FileInfo {
                    path,
                    size,
                    kind: "file",
                });
            }
        }
        out.sort();
        Ok(out)
    }

    /// The files under `dir` ("" = the workspace), sorted by path, for reading them all (as
    /// `files_search` does): like [`Files::list`] with `recursive`, files only, but without a
    /// `stat` per entry. The walk does not follow symbolic links, so an entry it reports as a
    /// regular file was reached through real directories of the workspace: it is read with
    /// [`Files::read_walked`] without resolving its path again. Symbolic links are listed too
    /// (as `list` does) and resolved when read.
    pub fn walk_files(&self, dir: &str) -> Result<Vec<WalkedFile>, String> {
        let base = self.dir_base(dir)?;
        let mut out = Vec::new();
        let walker = walkdir::WalkDir::new(&base)
            .min_depth(1)
            .follow_links(false)
            .sort_by_file_name();
        for entry in walker.into_iter().flatten() {
            let ft = entry.file_type();
            if ft.is_dir() || (!ft.is_symlink() && special_kind(&ft).is_some()) {
                continue;
            }
            let Ok(rel) = entry.path().strip_prefix(&self.canonical_root) else {
                continue;
            };
            out.push(WalkedFile {
                path: to_slash(rel),
                walked: (!ft.is_symlink()).then(|| entry.into_path()),
            });
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    /// The bytes of a file of [`Files::walk_files`]. A regular file the walk reached is opened
    /// without following a link (`O_NOFOLLOW`) and without blocking, and read only if the open
    /// descriptor is a regular file within the read limit; a symbolic link goes through
    /// [`Files::read_bytes`] (resolved inside the workspace).
    pub fn read_walked(&self, file: &WalkedFile) -> Result<Vec<u8>, String> {
        let Some(full) = &file.walked else {
            return self.read_bytes(&file.path);
        };
        read_open(full, libc::O_NOFOLLOW, MAX_READ_BYTES).map_err(|e| match e {
            ReadError::Io(e) => format!("cannot read `{}`: {e}", file.path),
            e => format!("`{}` cannot be read: {e}", file.path),
        })
    }

    /// Every file (not directory) in the workspace, sorted.
    pub fn all_files(&self) -> Vec<FileInfo> {
        self.list("", true)
            .map(|v| v.into_iter().filter(|f| f.kind == "file").collect())
            .unwrap_or_default()
    }

    /// Write a file, creating parent directories. Returns whether it was created.
    pub(crate) fn write(&self, rel: &str, data: &[u8]) -> Result<bool, String> {
        let p = self.resolve(rel)?;
        if p.is_dir() {
            return Err(format!("`{rel}` is a directory"));
        }
        let created = !p.exists();
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create the folder of `{rel}`: {e}"))?;
        }
        // Re-check after creating parents (a parent could have been a symlink).
        self.resolve(rel)?;
        std::fs::write(&p, data).map_err(|e| format!("cannot write `{rel}`: {e}"))?;
        Ok(created)
    }

    pub(crate) fn delete(&self, rel: &str, recursive: bool) -> Result<(), String> {
        let p = self.resolve(rel)?;
        if p == self.canonical_root {
            return Err("the workspace itself cannot be deleted".into());
        }
        let meta = std::fs::symlink_metadata(&p)
            .map_err(|_| format!("no file `{rel}` in the workspace"))?;
        if meta.is_dir() {
            if !recursive {
                return Err(format!(
                    "`{rel}` is a directory; pass recursive=true to delete it and its contents"
                ));
            }
            std::fs::remove_dir_all(&p).map_err(|e| format!("cannot delete `{rel}`: {e}"))
        } else {
            std::fs::remove_file(&p).map_err(|e| format!("cannot delete `{rel}`: {e}"))
        }
    }

    pub(crate) fn rename(&self, from: &str, to: &str, overwrite: bool) -> Result<(), String> {
        let src = self.resolve(from)?;
        let dst = self.resolve(to)?;
        if src == self.canonical_root || dst == self.canonical_root {
            return Err("the workspace itself cannot be moved".into());
        }
        if std::fs::symlink_metadata(&src).is_err() {
            return Err(format!("no file `{from}` in the workspace"));
        }
        if dst.exists() && !overwrite {
            return Err(format!(
                "`{to}` already exists; pass overwrite=true to replace it"
            ));
        }
        if dst.starts_with(&src) && dst != src {
            return Err(format!("cannot move `{from}` into itself"));
        }
        if let Some(parent) = dst.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create the folder of `{to}`: {e}"))?;
        }
        std::fs::rename(&src, &dst).map_err(|e| format!("cannot move `{from}` to `{to}`: {e}"))
    }
}

/// True if the bytes are not text: a NUL byte in the first 8 KiB, or invalid UTF-8.
pub fn is_binary(bytes: &[u8]) -> bool {
    bytes.iter().take(8192).any(|b| *b == 0) || std::str::from_utf8(bytes).is_err()
}

/// Check a workspace path and return it as a clean relative path.
fn normalize(rel: &str) -> Result<PathBuf, String> {
    if rel.is_empty() || rel == "." {
        return Ok(PathBuf::new());
    }
    if rel.contains('\0') {
        return Err("paths cannot contain NUL bytes".into());
    }
    let p = Path::new(rel);
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Normal(s) => out.push(s),
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(format!(
                    "`{rel}` uses `..`; paths must stay inside the workspace"
                ));
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(format!(
                    "`{rel}` is an absolute path; give a path relative to the workspace"
                ));
            }
        }
    }
    Ok(out)
}

pub(crate) fn to_slash(p: &Path) -> String {
    p.components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws() -> (tempfile::TempDir, Files) {
        let d = tempfile::tempdir().unwrap();
        let f = Files::new(d.path().join("ws")).unwrap();
        (d, f)
    }

    #[test]
    fn refuses_parent_absolute_and_nul() {
        let (_d, f) = ws();
        assert!(f.resolve("../x").unwrap_err().contains(".."));
        assert!(f.resolve("a/../../x").is_err());
        assert!(f.resolve("/etc/passwd").unwrap_err().contains("absolute"));
        assert!(f.resolve("a\0b").is_err());
        assert!(f.resolve("a/./b.txt").is_ok());
    }

    #[test]
    fn refuses_symlinks_leading_outside() {
        let (d, f) = ws();
        let outside = d.path().join("secret");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("s.txt"), "secret").unwrap();
        std::os::unix::fs::symlink(&outside, f.root().join("link")).unwrap();
        std::os::unix::fs::symlink(outside.join("s.txt"), f.root().join("file-link")).unwrap();
        assert!(
            f.read_text("link/s.txt")
                .unwrap_err()
                .contains("symbolic link")
        );
        assert!(
            f.read_text("file-link")
                .unwrap_err()
                .contains("symbolic link")
        );
        assert!(f.write("link/new.txt", b"x").is_err());
        assert!(!outside.join("new.txt").exists());
        // A symlink inside the workspace is fine.
        std::fs::write(f.root().join("in.txt"), "hello").unwrap();
        std::os::unix::fs::symlink(f.root().join("in.txt"), f.root().join("in-link")).unwrap();
        assert_eq!(f.read_text("in-link").unwrap(), "hello");
    }

    #[test]
    fn links_are_followed_by_hand_and_must_stay_inside() {
        use std::os::unix::fs::symlink;
        let (_d, f) = ws();
        f.write("docs/a.txt", b"A").unwrap();
        // Relative links with `..`, chains, a linked directory holding a new file.
        symlink("../docs/a.txt", f.root().join("docs-up")).unwrap();
        std::fs::create_dir_all(f.root().join("x")).unwrap();
        symlink("../docs/a.txt", f.root().join("x/a-link")).unwrap();
        symlink("a-link", f.root().join("x/chain")).unwrap();
        symlink("docs", f.root().join("docs-dir")).unwrap();
        assert_eq!(f.read_text("x/chain").unwrap(), "A");
        f.write("docs-dir/new.txt", b"N").unwrap();
        assert_eq!(std::fs::read(f.root().join("docs/new.txt")).unwrap(), b"N");
        // `..` above the workspace through a link, a dangling link, a loop.
        symlink("../../..", f.root().join("x/up")).unwrap();
        assert!(f.resolve("x/up/etc").unwrap_err().contains("outside"));
        assert!(f.resolve("docs-up").unwrap_err().contains("outside"));
        symlink("nowhere.txt", f.root().join("dangling")).unwrap();
        assert!(f.resolve("dangling").unwrap_err().contains("broken"));
        symlink("loop-b", f.root().join("loop-a")).unwrap();
        symlink("loop-a", f.root().join("loop-b")).unwrap();
        assert!(f.resolve("loop-a").unwrap_err().contains("too many"));
        // A path that does not exist yet, below no link, is fine.
        assert!(f.resolve("new/dir/file.txt").is_ok());
    }

    #[test]
    fn binary_files_are_reported_as_such() {
        let (_d, f) = ws();
        f.write("b.bin", &[0u8, 1, 2]).unwrap();
        assert!(f.read_text("b.bin").unwrap_err().contains("binary"));
        f.write("t.txt", "héllo".as_bytes()).unwrap();
        assert_eq!(f.read_text("t.txt").unwrap(), "héllo");
    }

    #[test]
    fn list_is_sorted_and_recursive() {
        let (_d, f) = ws();
        f.write("b/z.txt", b"1").unwrap();
        f.write("a.txt", b"22").unwrap();
        let all: Vec<String> = f
            .list("", true)
            .unwrap()
            .into_iter()
            .map(|e| e.path)
            .collect();
        assert_eq!(all, vec!["a.txt", "b", "b/z.txt"]);
        let top: Vec<String> = f
            .list("", false)
            .unwrap()
            .into_iter()
            .map(|e| e.path)
            .collect();
        assert_eq!(top, vec!["a.txt", "b"]);
    }

    #[test]
    fn walked_files_are_read_without_leaving_the_workspace() {
        use std::os::unix::fs::symlink;
        let (d, f) = ws();
        f.write("a.txt", b"A").unwrap();
        f.write("sub/b.txt", b"B").unwrap();
        let outside = d.path().join("secret.txt");
        std::fs::write(&outside, "secret").unwrap();
        symlink(&outside, f.root().join("out-link")).unwrap();
        symlink(d.path(), f.root().join("out-dir")).unwrap();
        symlink("a.txt", f.root().join("in-link")).unwrap();
        let fifo = f.root().join("pipe");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: plain system call on a path we own.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let walked = f.walk_files("").unwrap();
        let paths: Vec<&str> = walked.iter().map(|w| w.path.as_str()).collect();
        // The links are listed (as `list` does), not descended into; the FIFO is left out.
        assert_eq!(
            paths,
            ["a.txt", "in-link", "out-dir", "out-link", "sub/b.txt"]
        );
        let read = |p: &str| f.read_walked(walked.iter().find(|w| w.path == p).unwrap());
        assert_eq!(read("a.txt").unwrap(), b"A");
        assert_eq!(read("sub/b.txt").unwrap(), b"B");
        assert_eq!(read("in-link").unwrap(), b"A");
        assert!(read("out-link").unwrap_err().contains("symbolic link"));
        assert!(read("out-dir").unwrap_err().contains("symbolic link"));
        // A file swapped for a link after the walk is not followed.
        std::fs::remove_file(f.root().join("sub/b.txt")).unwrap();
        symlink(&outside, f.root().join("sub/b.txt")).unwrap();
        assert!(read("sub/b.txt").unwrap_err().contains("symbolic link"));
        // A walk below a folder, and of a folder that is not there.
        let sub: Vec<String> = f
            .walk_files("sub")
            .unwrap()
            .into_iter()
            .map(|w| w.path)
            .collect();
        assert_eq!(sub, ["sub/b.txt"]);
        assert!(f.walk_files("nope").is_err());
    }
}
