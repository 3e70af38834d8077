//! Entering a replica's namespaces from a child process (between fork and exec).

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::ReplicaError;

/// The user and mount namespaces of an overlay replica's holder and the merged directory as
/// seen inside them, prepared for [`NsEntry::enter`] in a `Command::pre_exec` closure.
///
/// ```no_run
/// # fn demo(replica: &bureau_replica::Replica) -> Result<(), Box<dyn std::error::Error>> {
/// use std::os::unix::process::CommandExt;
/// if let Some(entry) = replica.entry()? {
///     let entry = std::sync::Arc::new(entry);
///     let inside = std::sync::Arc::clone(&entry);
///     let mut cmd = std::process::Command::new("git");
///     cmd.arg("status");
///     // SAFETY: `enter` makes raw system calls only.
///     unsafe { cmd.pre_exec(move || inside.enter()) };
///     cmd.status()?;
/// }
/// # Ok(()) }
/// ```
///
/// std applies `Command::current_dir` and `uid`/`gid` *before* `pre_exec` closures, and
/// `setns` into a mount namespace resets the working directory to that namespace's root:
/// don't set `current_dir` (the entry's `chdir` puts the child in the merged directory), and
/// switch uids only after entering.
#[derive(Debug)]
pub struct NsEntry {
    user: File,
    mnt: File,
    inner: CString,
    inner_path: PathBuf,
    view: PathBuf,
    generation: u64,
    current: Arc<AtomicU64>,
}

impl NsEntry {
    pub(crate) fn open(
        holder: u32,
        merged: &Path,
        view: PathBuf,
        generation: u64,
        current: Arc<AtomicU64>,
    ) -> Result<NsEntry, ReplicaError> {
        let ns = |name: &str| -> Result<File, ReplicaError> {
            let path = PathBuf::from(format!("/proc/{holder}/ns/{name}"));
            std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_CLOEXEC)
                .open(&path)
                .map_err(|e| ReplicaError::io(&path, "open the holder's namespace", e))
        };
        let inner = CString::new(merged.as_os_str().as_bytes()).map_err(|_| {
            ReplicaError::BadOverlayPath {
                path: merged.to_path_buf(),
            }
        })?;
        Ok(NsEntry {
            user: ns("user")?,
            mnt: ns("mnt")?,
            inner,
            inner_path: merged.to_path_buf(),
            view,
            generation,
            current,
        })
    }

    /// The workspace as seen inside the namespaces (the merged directory): the working
    /// directory of an entered child, and what its `getcwd()` returns.
    pub fn inner_path(&self) -> &Path {
        &self.inner_path
    }

    /// The same directory from Bureau's namespace (`/proc/<holder>/root/<merged>`), as
    /// [`crate::Replica::path`] gave it when the entry was made.
    pub fn view(&self) -> &Path {
        &self.view
    }

    /// Whether the replica still serves this entry's generation (false after a reset or once
    /// the replica is gone; [`NsEntry::enter`] then fails with `ESTALE`).
    pub fn is_current(&self) -> bool {
        self.current.load(Ordering::SeqCst) == self.generation
    }

    /// Enter the holder's user namespace, then its mount namespace, then `chdir` to the
    /// merged directory. For `Command::pre_exec`: raw system calls on data prepared when the
    /// entry was made, no allocation, no lock. Fails with `ESTALE` when the replica has been
    /// reset since the entry was made (the namespaces would be the old generation's).
    ///
    /// Inside, the process keeps its uid (the holder maps the caller's uid to itself; when
    /// the caller is root, every uid and gid to itself, so a child can still switch to an
    /// unprivileged uid of its own) and gets capabilities over the holder's namespace only.
    /// It stays in Bureau's network namespace.
    ///
    /// # Safety
    /// Call it in a freshly forked, single-threaded child (a `pre_exec` closure): it changes
    /// the calling process's namespaces and working directory for good.
    pub unsafe fn enter(&self) -> io::Result<()> {
        if !self.is_current() {
            return Err(io::Error::from_raw_os_error(libc::ESTALE));
        }
        // SAFETY: raw system calls on descriptors and a C string owned by `self`.
        unsafe {
            if libc::setns(self.user.as_raw_fd(), libc::CLONE_NEWUSER) != 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::setns(self.mnt.as_raw_fd(), libc::CLONE_NEWNS) != 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::chdir(self.inner.as_ptr()) != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }
}
