//! The Linux fast path: overlayfs in an unprivileged user + mount namespace.
//!
//! `unshare(CLONE_NEWUSER)` fails in a multi-threaded process, and Bureau is multi-threaded, so
//! the namespace belongs to a small *holder* process: we fork, and between fork and exec the
//! child (single-threaded) unshares a user + mount namespace, maps its own uid/gid, makes `/`
//! private and mounts the overlay (baseline = lowerdir, read-only) on the replica's `merged`
//! directory; then it execs `cat` with a pipe on stdin, so it sleeps until we close the pipe
//! (or until Bureau dies, which closes it too). The code between fork and exec only makes raw
//! syscalls on buffers prepared before the fork: no allocation, no locks.
//!
//! The rest of Bureau, in the initial namespace, reaches the merged tree through
//! `/proc/<holder>/root/<merged>`: the magic link enters the holder's mount namespace.
//!
//! Reset: close the pipe (the holder exits and its namespace, with the mount, goes away),
//! start a new holder on a fresh, empty upper/work generation, then delete the old generation
//! — cost proportional to what the agent wrote.

use std::collections::BTreeSet;
use std::ffi::{CStr, CString, OsString};
use std::fs;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use crate::{Baseline, ChangeSet, Kind, ReplicaError, ResetStats, check_touched, classify};

/// A mounted generation: its number and the holder process that keeps the mount.
type Generation = (u64, Child);
type Reaper = std::thread::JoinHandle<Result<Generation, ReplicaError>>;

#[derive(Debug)]
pub(crate) struct OverlayReplica {
    baseline: Arc<Baseline>,
    dir: PathBuf,
    merged: PathBuf,
    generation: u64,
    holder: Option<Child>,
    /// The next generation, already mounted on an empty upper layer: a reset switches to it.
    spare: Option<Generation>,
    /// Background work after a reset: stop the old holder, delete the old generation, mount
    /// the next spare.
    reaper: Option<Reaper>,
    /// The generation `path()` serves, shared with every [`crate::NsEntry`] handed out: an
    /// entry of an older generation refuses to enter (u64::MAX once the replica is gone).
    current: Arc<AtomicU64>,
}

impl OverlayReplica {
    pub(crate) fn create(
        baseline: Arc<Baseline>,
        dir: &Path,
    ) -> Result<OverlayReplica, ReplicaError> {
        fs::create_dir_all(dir)
            .map_err(|e| ReplicaError::io(dir, "create replica directory", e))?;
        let dir = dir
            .canonicalize()
            .map_err(|e| ReplicaError::io(dir, "resolve replica directory", e))?;
        let merged = dir.join("merged");
        fs::create_dir_all(&merged).map_err(|e| ReplicaError::io(&merged, "create", e))?;
        let holder = mount_generation(baseline.root(), &dir, &merged, 0)?;
        let spare = mount_generation(baseline.root(), &dir, &merged, 1)?;
        Ok(OverlayReplica {
            baseline,
            dir,
            merged,
            generation: 0,
            holder: Some(holder),
            spare: Some((1, spare)),
            reaper: None,
            current: Arc::new(AtomicU64::new(0)),
        })
    }

    fn upper(&self) -> PathBuf {
        gen_dir(&self.dir, self.generation).join("upper")
    }

    pub(crate) fn holder_pid(&self) -> u32 {
        self.holder.as_ref().map(|c| c.id()).unwrap_or(0)
    }

    pub(crate) fn view(&self) -> PathBuf {
        let mut s = OsString::from(format!("/proc/{}/root", self.holder_pid()));
        s.push(self.merged.as_os_str());
        PathBuf::from(s)
    }

    /// A handle to enter the current generation's namespaces (see [`crate::NsEntry`]).
    pub(crate) fn entry(&self) -> Result<crate::NsEntry, ReplicaError> {
        crate::entry::NsEntry::open(
            self.holder_pid(),
            &self.merged,
            self.view(),
            self.generation,
            Arc::clone(&self.current),
        )
    }

    /// Every path the upper layer says was touched, plus every baseline path hidden by a
    /// whiteout, an opaque directory or a type change.
    fn touched(&self) -> Result<BTreeSet<PathBuf>, ReplicaError> {
        let mut out = BTreeSet::new();
        walk_upper(&self.baseline, &self.upper(), Path::new(""), &mut out)?;
        Ok(out)
    }

    pub(crate) fn changes(&mut self) -> Result<ChangeSet, ReplicaError> {
        let touched = self.touched()?;
        classify(&self.baseline, &self.view(), &touched)
    }

    pub(crate) fn reset(&mut self) -> Result<ResetStats, ReplicaError> {
        // The previous reset's background work must be done: it mounts our spare.
        self.join_reaper()?;
        let touched = self.touched()?;
        let (next, child) = match self.spare.take() {
            Some(g) => g,
            None => {
                let n = self.generation + 1;
                (
                    n,
                    mount_generation(self.baseline.root(), &self.dir, &self.merged, n)?,
                )
            }
        };
        // Switch: from now on the view path names the spare's holder, whose upper layer is
        // empty. The old mount is unreachable; stopping its holder, deleting its upper layer
        // and mounting the next spare happen off the critical path.
        let old_holder = self.holder.replace(child);
        let old = self.generation;
        self.generation = next;
        self.current.store(next, Ordering::SeqCst);
        let (root, dir, merged) = (
            self.baseline.root().to_path_buf(),
            self.dir.clone(),
            self.merged.clone(),
        );
        self.reaper = Some(std::thread::spawn(move || {
            if let Some(child) = old_holder {
                stop(child, &merged)?;
            }
            remove_generation(&gen_dir(&dir, old))?;
            let spare = next + 1;
            Ok((spare, mount_generation(&root, &dir, &merged, spare)?))
        }));
        let upper = self.upper();
        let mut rd = fs::read_dir(&upper).map_err(|e| ReplicaError::io(&upper, "read", e))?;
        let view = self.view();
        let mut bad = check_touched(&self.baseline, &view, &touched, false)?;
        if rd.next().is_some() {
            bad.insert(0, PathBuf::from("<upper layer not empty>"));
        }
        if !bad.is_empty() {
            return Err(crate::pool::mismatch(&self.baseline, &view, bad));
        }
        Ok(ResetStats {
            touched: touched.len(),
        })
    }

    /// Wait for the previous reset's background work and keep the spare it mounted.
    pub(crate) fn join_reaper(&mut self) -> Result<(), ReplicaError> {
        if let Some(h) = self.reaper.take() {
            let spare = h.join().unwrap_or_else(|_| {
                Err(ReplicaError::io(
                    &self.dir,
                    "clean up an old generation",
                    io::Error::other("the clean-up thread panicked"),
                ))
            })?;
            self.spare = Some(spare);
        }
        Ok(())
    }

    /// Holder processes of this replica (current and spare), for memory measurements.
    pub(crate) fn holder_pids(&self) -> Vec<u32> {
        self.holder
            .iter()
            .chain(self.spare.iter().map(|(_, c)| c))
            .map(|c| c.id())
            .collect()
    }
}

impl Drop for OverlayReplica {
    fn drop(&mut self) {
        self.current.store(u64::MAX, Ordering::SeqCst);
        let _ = self.join_reaper();
        for child in self
            .holder
            .take()
            .into_iter()
            .chain(self.spare.take().map(|(_, c)| c))
        {
            let _ = stop(child, &self.merged);
        }
        let _ = remove_generation(&self.dir);
    }
}

fn gen_dir(dir: &Path, generation: u64) -> PathBuf {
    dir.join(format!("g{generation}"))
}

/// Make generation `generation`'s empty upper/work dirs and mount it in a new holder.
fn mount_generation(
    lower: &Path,
    dir: &Path,
    merged: &Path,
    generation: u64,
) -> Result<Child, ReplicaError> {
    let g = gen_dir(dir, generation);
    let (upper, work) = (g.join("upper"), g.join("work"));
    for d in [&upper, &work] {
        fs::create_dir_all(d).map_err(|e| ReplicaError::io(d, "create", e))?;
    }
    spawn_holder(lower, &upper, &work, merged)
}

/// Close the holder's stdin (it exits, and its namespace and mount go with it) and reap it.
fn stop(mut child: Child, merged: &Path) -> Result<(), ReplicaError> {
    drop(child.stdin.take());
    child
        .wait()
        .map_err(|e| ReplicaError::io(merged, "wait for the overlay holder", e))?;
    Ok(())
}

/// Delete a generation (or a whole replica directory). overlayfs leaves directories of mode
/// 000 in its work directory (`work/work`, and with `volatile` `work/work/incompat/volatile`);
/// give them back their owner's permissions first so an unprivileged user can delete them
/// (root needs no such help). The work directory is small: a handful of entries.
fn remove_generation(dir: &Path) -> Result<(), ReplicaError> {
    let mut gens = vec![dir.to_path_buf()];
    if let Ok(rd) = fs::read_dir(dir) {
        gens.extend(rd.flatten().map(|e| e.path()));
    }
    for g in gens {
        unlock_dirs(&g.join("work"));
    }
    match fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(ReplicaError::io(dir, "remove", e)),
    }
}

/// `chmod u+rwx` on `dir` and every directory below it (best effort).
fn unlock_dirs(dir: &Path) {
    match fs::symlink_metadata(dir) {
        Ok(md) if md.is_dir() => {}
        _ => return,
    }
    let _ = fs::set_permissions(dir, fs::Permissions::from_mode(0o700));
    if let Ok(rd) = fs::read_dir(dir) {
        for e in rd.flatten() {
            unlock_dirs(&e.path());
        }
    }
}

fn walk_upper(
    baseline: &Baseline,
    upper: &Path,
    rel: &Path,
    out: &mut BTreeSet<PathBuf>,
) -> Result<(), ReplicaError> {
    let dir = upper.join(rel);
    let rd = fs::read_dir(&dir).map_err(|e| ReplicaError::io(&dir, "read upper layer", e))?;
    for item in rd {
        let item = item.map_err(|e| ReplicaError::io(&dir, "read upper layer", e))?;
        let child = rel.join(item.file_name());
        let full = upper.join(&child);
        let md = fs::symlink_metadata(&full).map_err(|e| ReplicaError::io(&full, "stat", e))?;
        let ft = md.file_type();
        let base_kind = baseline.entry(&child).map(|e| e.kind);
        let hides_baseline_subtree = if ft.is_char_device() && md.rdev() == 0 {
            true // whiteout: deleted
        } else if ft.is_dir() {
            base_kind.is_some_and(|k| k != Kind::Dir) || is_opaque(&full)
        } else {
            base_kind == Some(Kind::Dir)
        };
        if hides_baseline_subtree {
            out.extend(baseline.manifest().descendants(&child).cloned());
        }
        let is_dir = ft.is_dir();
        out.insert(child.clone());
        if is_dir {
            walk_upper(baseline, upper, &child, out)?;
        }
    }
    Ok(())
}

fn is_opaque(dir: &Path) -> bool {
    let Ok(c) = CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    let mut buf = [0u8; 8];
    // SAFETY: valid NUL-terminated strings and a buffer of the length passed.
    let n = unsafe {
        libc::lgetxattr(
            c.as_ptr(),
            c"user.overlay.opaque".as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    n == 1 && buf[0] == b'y'
}

fn cstr(p: &Path) -> Result<CString, ReplicaError> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| ReplicaError::BadOverlayPath {
        path: p.to_path_buf(),
    })
}

fn overlay_safe(p: &Path) -> Result<(), ReplicaError> {
    if p.as_os_str()
        .as_bytes()
        .iter()
        .any(|b| matches!(b, b',' | b':' | b'\\'))
    {
        return Err(ReplicaError::BadOverlayPath {
            path: p.to_path_buf(),
        });
    }
    Ok(())
}

// Steps of the holder's set-up, encoded with the errno so the parent can say which failed.
const STEP_UNSHARE: i32 = 1;
const STEP_SETGROUPS: i32 = 2;
const STEP_UID_MAP: i32 = 3;
const STEP_GID_MAP: i32 = 4;
const STEP_PRIVATE: i32 = 5;
const STEP_MOUNT: i32 = 6;
const STEP_BASE: i32 = 100_000;

/// Write `data` to `path` with raw syscalls (async-signal-safe; used between fork and exec).
fn raw_write(path: &CStr, data: &[u8]) -> Result<(), i32> {
    // SAFETY: plain syscalls on valid pointers; no allocation.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(*libc::__errno_location());
        }
        let n = libc::write(fd, data.as_ptr().cast(), data.len());
        let err = *libc::__errno_location();
        libc::close(fd);
        if n != data.len() as isize {
            return Err(if n < 0 { err } else { libc::EIO });
        }
    }
    Ok(())
}

fn holder_program() -> &'static Path {
    for p in ["/bin/cat", "/usr/bin/cat"] {
        if Path::new(p).exists() {
            return Path::new(p);
        }
    }
    Path::new("cat")
}

fn spawn_holder(
    lower: &Path,
    upper: &Path,
    work: &Path,
    merged: &Path,
) -> Result<Child, ReplicaError> {
    for p in [lower, upper, work, merged] {
        overlay_safe(p)?;
    }
    let mut opts = OsString::from("lowerdir=");
    opts.push(lower.as_os_str());
    opts.push(",upperdir=");
    opts.push(upper.as_os_str());
    opts.push(",workdir=");
    opts.push(work.as_os_str());
    // userxattr: the only xattr namespace open to an unprivileged mount; volatile: no
    // syncs to the upper filesystem (a replica is thrown away on reset, never recovered).
    opts.push(",userxattr,volatile");
    let opts = CString::new(opts.into_vec()).map_err(|_| ReplicaError::BadOverlayPath {
        path: lower.to_path_buf(),
    })?;
    let target = cstr(merged)?;
    // SAFETY: trivial getters.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let uid_map = format!("{uid} {uid} 1\n").into_bytes();
    let gid_map = format!("{gid} {gid} 1\n").into_bytes();
    // As root, the namespace gets the full identity map, so that a process entering it (the
    // confined shell) can still switch to a uid of its own. Only a process with CAP_SETUID in
    // the *parent* namespace may write such a map, so Bureau writes it: the child sends its
    // pid through `to_parent` after `unshare` and waits on `from_parent` for the go-ahead.
    let full_map = uid == 0;
    let handshake = if full_map {
        Some(MapHandshake::new().map_err(|e| ReplicaError::io(merged, "create a pipe", e))?)
    } else {
        None
    };
    let child_fds = handshake.as_ref().map(|h| (h.child_tx, h.child_rx));

    let mut cmd = Command::new(holder_program());
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .current_dir("/");
    let setup = move || -> io::Result<()> {
        let fail = |step: i32, errno: i32| io::Error::from_raw_os_error(step * STEP_BASE + errno);
        // SAFETY: raw syscalls on buffers built before the fork; nothing here allocates.
        unsafe {
            if libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS) != 0 {
                return Err(fail(STEP_UNSHARE, *libc::__errno_location()));
            }
            if let Some((tx, rx)) = child_fds {
                let pid = libc::getpid().to_ne_bytes();
                if libc::write(tx, pid.as_ptr().cast(), pid.len()) != pid.len() as isize {
                    return Err(fail(STEP_UID_MAP, *libc::__errno_location()));
                }
                let mut ok = [0u8; 1];
                if libc::read(rx, ok.as_mut_ptr().cast(), 1) != 1 || ok[0] != 1 {
                    return Err(fail(STEP_UID_MAP, libc::EPERM));
                }
            } else {
                raw_write(c"/proc/self/setgroups", b"deny").map_err(|e| fail(STEP_SETGROUPS, e))?;
                raw_write(c"/proc/self/uid_map", &uid_map).map_err(|e| fail(STEP_UID_MAP, e))?;
                raw_write(c"/proc/self/gid_map", &gid_map).map_err(|e| fail(STEP_GID_MAP, e))?;
            }
            if libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ) != 0
            {
                return Err(fail(STEP_PRIVATE, *libc::__errno_location()));
            }
            if libc::mount(
                c"overlay".as_ptr(),
                target.as_ptr(),
                c"overlay".as_ptr(),
                0,
                opts.as_ptr().cast(),
            ) != 0
            {
                return Err(fail(STEP_MOUNT, *libc::__errno_location()));
            }
        }
        Ok(())
    };
    // SAFETY: the closure only makes async-signal-safe syscalls (see above).
    unsafe {
        cmd.pre_exec(setup);
    }
    let served = handshake.map(MapHandshake::serve);
    let spawned = cmd.spawn();
    drop(cmd);
    let map_result = served.map(|(writer, child_ends)| {
        drop(child_ends);
        writer
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the uid map writer panicked")))
    });
    let mut child = spawned.map_err(|e| {
        let what = match e.raw_os_error() {
            Some(code) if code >= STEP_BASE => {
                let step = match code / STEP_BASE {
                    STEP_UNSHARE => "unshare(CLONE_NEWUSER|CLONE_NEWNS)",
                    STEP_SETGROUPS => "write /proc/self/setgroups",
                    STEP_UID_MAP => "write /proc/self/uid_map",
                    STEP_GID_MAP => "write /proc/self/gid_map",
                    STEP_PRIVATE => "make / private",
                    STEP_MOUNT => "mount overlay",
                    _ => "set up the namespace",
                };
                format!(
                    "{step} failed: {}",
                    io::Error::from_raw_os_error(code % STEP_BASE)
                )
            }
            _ => format!(
                "cannot start the holder {}: {e}",
                holder_program().display()
            ),
        };
        let map_note = match &map_result {
            Some(Err(e)) => format!("; writing the full uid/gid map failed: {e}"),
            _ => String::new(),
        };
        ReplicaError::OverlayUnavailable(format!(
            "{what}{map_note} (merged dir {})",
            merged.display()
        ))
    })?;
    if let Some(Err(e)) = map_result {
        // The child ran on without our go-ahead only if it failed; be loud either way.
        let _ = child.kill();
        let _ = child.wait();
        return Err(ReplicaError::OverlayUnavailable(format!(
            "writing the full uid/gid map of the holder failed: {e} (merged dir {})",
            merged.display()
        )));
    }
    Ok(child)
}

/// The pipes of the root holder's map handshake (see [`spawn_holder`]). Every end is
/// close-on-exec: the child uses its ends only between fork and exec.
struct MapHandshake {
    /// Child → parent: the child's pid, after `unshare`.
    child_tx: libc::c_int,
    /// Parent → child: one byte, 1 = maps written.
    child_rx: libc::c_int,
    parent_rx: OwnedFd,
    parent_tx: OwnedFd,
    /// Owners of the child's ends in the parent: dropped once the spawn returned, so the map
    /// writer sees end-of-file if the child died before sending its pid.
    child_ends: [OwnedFd; 2],
}

impl MapHandshake {
    fn new() -> io::Result<MapHandshake> {
        let pipe = || -> io::Result<(OwnedFd, OwnedFd)> {
            let mut fds = [0 as libc::c_int; 2];
            // SAFETY: a valid two-int array.
            if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: both descriptors were just created and are owned by nobody else.
            Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
        };
        let (parent_rx, child_tx) = pipe()?;
        let (child_rx, parent_tx) = pipe()?;
        Ok(MapHandshake {
            child_tx: child_tx.as_raw_fd(),
            child_rx: child_rx.as_raw_fd(),
            parent_rx,
            parent_tx,
            child_ends: [child_tx, child_rx],
        })
    }

    /// Start the map writer on a thread: wait for the child's pid, write `0 0 4294967295` to
    /// its uid_map and gid_map, tell it to go on. Returns the thread and the child's ends,
    /// which the caller drops after the spawn.
    fn serve(self) -> (std::thread::JoinHandle<io::Result<()>>, [OwnedFd; 2]) {
        let MapHandshake {
            parent_rx,
            parent_tx,
            child_ends,
            ..
        } = self;
        let writer = std::thread::spawn(move || -> io::Result<()> {
            let mut rx = fs::File::from(parent_rx);
            let mut pid = [0u8; 4];
            io::Read::read_exact(&mut rx, &mut pid)?;
            let pid = i32::from_ne_bytes(pid);
            let full = b"0 0 4294967295\n";
            let result = fs::write(format!("/proc/{pid}/uid_map"), full)
                .and_then(|()| fs::write(format!("/proc/{pid}/gid_map"), full));
            let mut tx = fs::File::from(parent_tx);
            io::Write::write_all(&mut tx, &[u8::from(result.is_ok())])?;
            result
        });
        (writer, child_ends)
    }
}

/// Try the overlay backend on a tiny tree under the system temp dir.
pub fn probe_overlay() -> Result<(), ReplicaError> {
    let base = std::env::temp_dir().join(format!(
        "bureau-replica-probe-{}-{}",
        std::process::id(),
        crate::pool::unique()
    ));
    let result = (|| {
        let lower = base.join("lower");
        fs::create_dir_all(&lower).map_err(|e| ReplicaError::io(&lower, "create", e))?;
        fs::write(lower.join("probe"), b"ok").map_err(|e| ReplicaError::io(&lower, "write", e))?;
        let baseline = Arc::new(Baseline::open(&lower)?);
        let mut r = OverlayReplica::create(baseline, &base.join("replica"))?;
        let view = r.view();
        let got = fs::read(view.join("probe")).map_err(|e| ReplicaError::io(&view, "read", e))?;
        fs::write(view.join("probe"), b"changed")
            .map_err(|e| ReplicaError::io(&view, "write", e))?;
        if got != b"ok" || fs::read(lower.join("probe")).ok().as_deref() != Some(&b"ok"[..]) {
            return Err(ReplicaError::OverlayUnavailable(
                "the merged view does not show the lower layer".into(),
            ));
        }
        r.reset()?;
        Ok(())
    })();
    let _ = fs::remove_dir_all(&base);
    result
}

/// Whether the overlay backend works here (probed once per process).
pub fn overlay_available() -> bool {
    static PROBE: OnceLock<bool> = OnceLock::new();
    *PROBE.get_or_init(|| probe_overlay().is_ok())
}
