//! The command's own view of the file system: a new mount namespace whose root is a small
//! read-only tmpfs holding only the system's tool paths (read-only binds), `/dev/null` and a
//! few other device nodes, a fresh `/proc`, a private size-bounded `/tmp` and the workspace
//! (read-write) at its usual path; `pivot_root` then makes it the root and detaches the host's.
//!
//! Everything is prepared in the parent as C strings ([`View::prepare`]); the child
//! ([`View::build`]) makes raw system calls only, with no allocation (it runs between `fork`
//! and `exec`). As root the workspace is an id-mapped mount: files owned by root on disk appear
//! owned by the command's own uid, and what the command writes is stored as root, so the
//! command needs no capability at all to write the (root-owned) workspace.

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Top-level paths bound read-only when they are directories, or re-created when symbolic
/// links (`/bin -> usr/bin` on merged-`/usr` systems).
pub(crate) const TOOL_PATHS: [&str; 8] = [
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc",
];
/// Device nodes bound into the command's `/dev`.
const DEV_NODES: [&str; 5] = ["null", "zero", "full", "random", "urandom"];
/// Symbolic links in the command's `/dev`.
const DEV_LINKS: [(&str, &str); 4] = [
    ("/proc/self/fd", "fd"),
    ("/proc/self/fd/0", "stdin"),
    ("/proc/self/fd/1", "stdout"),
    ("/proc/self/fd/2", "stderr"),
];
/// The directory the new root is mounted on before `pivot_root` (it exists on every Linux;
/// whatever is beneath it is hidden only in the command's namespace).
const STAGE: &str = "/tmp";

const OPEN_TREE_CLONE: libc::c_uint = 1;
const AT_RECURSIVE: libc::c_uint = 0x8000;
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;
const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NOSUID: u64 = 0x2;
const MOUNT_ATTR_NODEV: u64 = 0x4;
const MOUNT_ATTR_IDMAP: u64 = 0x0010_0000;
const LANDLOCK_RULE_PATH_BENEATH: libc::c_long = 1;

#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

#[repr(C, packed)]
struct PathBeneath {
    allowed_access: u64,
    parent_fd: i32,
}

/// How the workspace's owner is handled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Owner {
    /// Root caller: an id-mapped mount shows root-owned files as owned by the command's uid
    /// (and stores the command's files as root).
    IdMapped,
    /// Non-root caller: the caller owns the workspace; a fresh `/proc` needs a PID namespace
    /// the caller does not have, so the host's `/proc` is bound instead.
    Caller,
}

/// Landlock access masks for the rules the child adds (they must be subsets of what the
/// ruleset handles).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Access {
    pub read: u64,
    pub all: u64,
    pub file: u64,
}

/// The prepared view (C strings only; the child reads them).
pub(crate) struct View {
    stage: CString,
    root_opts: CString,
    tmp_opts: CString,
    proc_opts: CString,
    ws_src: CString,
    ws_target: CString,
    ws_inside: CString,
    /// Directories to make beneath the stage, in order (`/dev`, `/proc`, `/tmp`, tool dirs).
    dirs: Vec<CString>,
    /// The workspace's ancestors beneath the stage, outermost first (made after `/tmp`).
    ws_dirs: Vec<CString>,
    /// Read-only recursive binds: (source, target beneath the stage).
    binds: Vec<(CString, CString)>,
    /// Symbolic links: (link text, link path beneath the stage).
    links: Vec<(CString, CString)>,
    /// Device nodes: (host node, target beneath the stage).
    nodes: Vec<(CString, CString)>,
    proc_target: CString,
    tmp_target: CString,
    owner: Owner,
    tmpfs: CString,
    proc_fs: CString,
    dot: CString,
    host_proc: CString,
}

fn c(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| io::Error::other("a path contains a NUL byte"))
}

fn staged(rel: &Path) -> io::Result<CString> {
    let mut bytes = STAGE.as_bytes().to_vec();
    bytes.extend_from_slice(rel.as_os_str().as_bytes());
    c(&bytes)
}

impl View {
    /// Prepares the view for `workspace` (canonical, absolute). `tmp_bytes` bounds the
    /// private `/tmp`.
    pub(crate) fn prepare(workspace: &Path, owner: Owner, tmp_bytes: u64) -> io::Result<View> {
        let mut dirs = vec![
            staged(Path::new("/dev"))?,
            staged(Path::new("/proc"))?,
            staged(Path::new("/tmp"))?,
        ];
        let mut binds = Vec::new();
        let mut links = Vec::new();
        for path in TOOL_PATHS {
            let p = Path::new(path);
            let Ok(md) = std::fs::symlink_metadata(p) else {
                continue;
            };
            if md.file_type().is_symlink() {
                let target = std::fs::read_link(p)?;
                links.push((c(target.as_os_str().as_bytes())?, staged(p)?));
            } else if md.is_dir() {
                dirs.push(staged(p)?);
                binds.push((c(path.as_bytes())?, staged(p)?));
            }
        }
        for (target, name) in DEV_LINKS {
            links.push((
                c(target.as_bytes())?,
                staged(&Path::new("/dev").join(name))?,
            ));
        }
        let mut nodes = Vec::new();
        for name in DEV_NODES {
            let host = Path::new("/dev").join(name);
            if host.exists() {
                nodes.push((c(host.as_os_str().as_bytes())?, staged(&host)?));
            }
        }
        let mut ws_dirs = Vec::new();
        let mut at = std::path::PathBuf::from("/");
        for part in workspace.components().skip(1) {
            at.push(part);
            ws_dirs.push(staged(&at)?);
        }
        Ok(View {
            stage: c(STAGE.as_bytes())?,
            root_opts: c(b"size=1m,mode=0755")?,
            tmp_opts: c(format!("size={tmp_bytes},mode=1777").as_bytes())?,
            proc_opts: c(b"hidepid=invisible")?,
            ws_src: c(workspace.as_os_str().as_bytes())?,
            ws_target: staged(workspace)?,
            ws_inside: c(workspace.as_os_str().as_bytes())?,
            dirs,
            ws_dirs,
            binds,
            links,
            nodes,
            proc_target: staged(Path::new("/proc"))?,
            tmp_target: staged(Path::new("/tmp"))?,
            owner,
            tmpfs: c(b"tmpfs")?,
            proc_fs: c(b"proc")?,
            dot: c(b".")?,
            host_proc: c(b"/proc")?,
        })
    }

    /// Builds the view and pivots into it; adds the Landlock rules for what is beneath it to
    /// `ruleset` (read everywhere, everything in the workspace and `/tmp`, file access to the
    /// device nodes). Runs in the child, after `unshare(CLONE_NEWNS, …)`: system calls only.
    ///
    /// # Safety
    /// Call only in a freshly forked, single-threaded child that has its own mount namespace.
    pub(crate) unsafe fn build(
        &self,
        ruleset: RawFd,
        access: Access,
        uid: u32,
        step: &dyn Fn(u8),
    ) -> io::Result<()> {
        use crate::linux::steps::*;
        // SAFETY (whole body): raw system calls on C strings owned by `self`, and on
        // descriptors this function opens and closes.
        unsafe {
            step(STEP_PRIVATE);
            check(libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ))?;
            step(STEP_WORKSPACE);
            let ws = fd(libc::syscall(
                libc::SYS_open_tree,
                libc::AT_FDCWD,
                self.ws_src.as_ptr(),
                OPEN_TREE_CLONE | libc::O_CLOEXEC as libc::c_uint,
            ))?;
            if self.owner == Owner::IdMapped {
                step(STEP_IDMAP);
                let userns = idmap_userns(uid)?;
                let attr = MountAttr {
                    attr_set: MOUNT_ATTR_IDMAP | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                    attr_clr: 0,
                    propagation: 0,
                    userns_fd: userns as u64,
                };
                let r = libc::syscall(
                    libc::SYS_mount_setattr,
                    ws,
                    c"".as_ptr(),
                    libc::AT_EMPTY_PATH,
                    &attr as *const MountAttr,
                    std::mem::size_of::<MountAttr>(),
                );
                libc::close(userns);
                check_long(r)?;
            }
            step(STEP_ROOT);
            check(libc::mount(
                self.tmpfs.as_ptr(),
                self.stage.as_ptr(),
                self.tmpfs.as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV,
                self.root_opts.as_ptr().cast(),
            ))?;
            for dir in &self.dirs {
                mkdir(dir)?;
            }
            for (text, path) in &self.links {
                check(libc::symlink(text.as_ptr(), path.as_ptr()))?;
            }
            step(STEP_BINDS);
            for (source, target) in &self.binds {
                let tree = fd(libc::syscall(
                    libc::SYS_open_tree,
                    libc::AT_FDCWD,
                    source.as_ptr(),
                    OPEN_TREE_CLONE | AT_RECURSIVE | libc::O_CLOEXEC as libc::c_uint,
                ))?;
                let attr = MountAttr {
                    attr_set: MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                    attr_clr: 0,
                    propagation: 0,
                    userns_fd: 0,
                };
                let r = libc::syscall(
                    libc::SYS_mount_setattr,
                    tree,
                    c"".as_ptr(),
                    libc::AT_EMPTY_PATH as libc::c_uint | AT_RECURSIVE,
                    &attr as *const MountAttr,
                    std::mem::size_of::<MountAttr>(),
                );
                if r != 0 {
                    let e = io::Error::last_os_error();
                    libc::close(tree);
                    return Err(e);
                }
                move_mount(tree, target)?;
            }
            for (host, target) in &self.nodes {
                let f = fd(libc::open(
                    target.as_ptr(),
                    libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
                    0o666,
                ) as libc::c_long)?;
                libc::close(f);
                check(libc::mount(
                    host.as_ptr(),
                    target.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND,
                    std::ptr::null(),
                ))?;
            }
            step(STEP_TMP);
            check(libc::mount(
                self.tmpfs.as_ptr(),
                self.tmp_target.as_ptr(),
                self.tmpfs.as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV,
                self.tmp_opts.as_ptr().cast(),
            ))?;
            step(STEP_WORKSPACE);
            for dir in &self.ws_dirs {
                mkdir(dir)?;
            }
            move_mount(ws, &self.ws_target)?;
            step(STEP_PROC);
            match self.owner {
                Owner::IdMapped => check(libc::mount(
                    self.proc_fs.as_ptr(),
                    self.proc_target.as_ptr(),
                    self.proc_fs.as_ptr(),
                    libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                    self.proc_opts.as_ptr().cast(),
                ))?,
                Owner::Caller => {
                    let tree = fd(libc::syscall(
                        libc::SYS_open_tree,
                        libc::AT_FDCWD,
                        self.host_proc.as_ptr(),
                        OPEN_TREE_CLONE | AT_RECURSIVE | libc::O_CLOEXEC as libc::c_uint,
                    ))?;
                    move_mount(tree, &self.proc_target)?;
                }
            }
            step(STEP_LANDLOCK_RULES);
            add_rule(ruleset, &self.stage, access.read)?;
            add_rule(ruleset, &self.tmp_target, access.all)?;
            add_rule(ruleset, &self.ws_target, access.all)?;
            for (_, target) in &self.nodes {
                add_rule(ruleset, target, access.file)?;
            }
            step(STEP_PIVOT);
            check(libc::mount(
                std::ptr::null(),
                self.stage.as_ptr(),
                std::ptr::null(),
                libc::MS_REMOUNT
                    | libc::MS_BIND
                    | libc::MS_RDONLY
                    | libc::MS_NOSUID
                    | libc::MS_NODEV,
                std::ptr::null(),
            ))?;
            check(libc::chdir(self.stage.as_ptr()))?;
            check_long(libc::syscall(
                libc::SYS_pivot_root,
                self.dot.as_ptr(),
                self.dot.as_ptr(),
            ))?;
            check(libc::umount2(self.dot.as_ptr(), libc::MNT_DETACH))?;
            check(libc::chdir(self.ws_inside.as_ptr()))?;
        }
        Ok(())
    }
}

fn check(r: libc::c_int) -> io::Result<()> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn check_long(r: libc::c_long) -> io::Result<()> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn fd(r: libc::c_long) -> io::Result<RawFd> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as RawFd)
    }
}

fn mkdir(path: &CStr) -> io::Result<()> {
    // SAFETY: plain system call on a C string.
    if unsafe { libc::mkdir(path.as_ptr(), 0o755) } == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EEXIST) {
        Ok(())
    } else {
        Err(e)
    }
}

/// Attaches the detached tree `tree` at `target` and closes `tree`.
fn move_mount(tree: RawFd, target: &CStr) -> io::Result<()> {
    // SAFETY: raw system calls on a descriptor this module opened and a C string.
    unsafe {
        let r = libc::syscall(
            libc::SYS_move_mount,
            tree,
            c"".as_ptr(),
            libc::AT_FDCWD,
            target.as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH,
        );
        let e = io::Error::last_os_error();
        libc::close(tree);
        if r < 0 { Err(e) } else { Ok(()) }
    }
}

fn add_rule(ruleset: RawFd, path: &CStr, access: u64) -> io::Result<()> {
    // SAFETY: raw system calls on a C string and descriptors owned here.
    unsafe {
        let dir = fd(libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) as libc::c_long)?;
        let attr = PathBeneath {
            allowed_access: access,
            parent_fd: dir,
        };
        let r = libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset,
            LANDLOCK_RULE_PATH_BENEATH,
            &attr as *const PathBeneath,
            0,
        );
        let e = io::Error::last_os_error();
        libc::close(dir);
        if r < 0 { Err(e) } else { Ok(()) }
    }
}

/// Writes the decimal digits of `n` into `buf` at `at`; returns the new end.
fn digits(buf: &mut [u8], mut at: usize, n: u32) -> usize {
    let mut tmp = [0u8; 10];
    let mut len = 0;
    let mut n = n;
    loop {
        tmp[len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for i in (0..len).rev() {
        if at < buf.len() {
            buf[at] = tmp[i];
            at += 1;
        }
    }
    at
}

fn put(buf: &mut [u8], mut at: usize, s: &[u8]) -> usize {
    for &b in s {
        if at < buf.len() {
            buf[at] = b;
            at += 1;
        }
    }
    at
}

/// A user namespace mapping uid and gid 0 to `id`, for an id-mapped mount: a helper child
/// unshares it, this process writes its maps and opens it, then the helper is killed. System
/// calls and stack buffers only. Returns the namespace's descriptor.
///
/// # Safety
/// Call only in a single-threaded child (it forks).
unsafe fn idmap_userns(id: u32) -> io::Result<RawFd> {
    // SAFETY (whole body): raw system calls on stack buffers.
    unsafe {
        let mut pipe = [0 as libc::c_int; 2];
        check(libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC))?;
        let helper = libc::fork();
        if helper < 0 {
            return Err(io::Error::last_os_error());
        }
        if helper == 0 {
            let ok: u8 = if libc::unshare(libc::CLONE_NEWUSER) == 0 {
                b'y'
            } else {
                b'n'
            };
            libc::write(pipe[1], (&ok as *const u8).cast(), 1);
            loop {
                libc::pause();
            }
        }
        libc::close(pipe[1]);
        let mut ok = 0u8;
        let n = libc::read(pipe[0], (&mut ok as *mut u8).cast(), 1);
        libc::close(pipe[0]);
        let result = if n == 1 && ok == b'y' {
            write_maps(helper as u32, id)
        } else {
            Err(io::Error::from_raw_os_error(libc::EPERM))
        };
        libc::kill(helper, libc::SIGKILL);
        libc::waitpid(helper, std::ptr::null_mut(), 0);
        result
    }
}

/// Writes `0 <id> 1` to the helper's uid and gid maps and opens its user namespace.
fn write_maps(helper: u32, id: u32) -> io::Result<RawFd> {
    let mut map = [0u8; 32];
    let mut end = put(&mut map, 0, b"0 ");
    end = digits(&mut map, end, id);
    end = put(&mut map, end, b" 1\n");
    for file in [&b"/uid_map\0"[..], &b"/gid_map\0"[..]] {
        let mut path = [0u8; 64];
        let mut at = put(&mut path, 0, b"/proc/");
        at = digits(&mut path, at, helper);
        put(&mut path, at, file);
        // SAFETY: raw system calls on NUL-terminated stack buffers.
        unsafe {
            let f = fd(
                libc::open(path.as_ptr().cast(), libc::O_WRONLY | libc::O_CLOEXEC) as libc::c_long,
            )?;
            let n = libc::write(f, map.as_ptr().cast(), end);
            let e = io::Error::last_os_error();
            libc::close(f);
            if n != end as isize {
                return Err(e);
            }
        }
    }
    let mut path = [0u8; 64];
    let mut at = put(&mut path, 0, b"/proc/");
    at = digits(&mut path, at, helper);
    put(&mut path, at, b"/ns/user\0");
    // SAFETY: raw system call on a NUL-terminated stack buffer.
    fd(
        unsafe { libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC) }
            as libc::c_long,
    )
}

/// For a non-root caller's new user namespace: deny `setgroups` and map the caller's own uid
/// and gid to themselves (the only mapping an unprivileged process may write), so that its
/// files keep their owner and the mounts can be made.
pub(crate) struct SelfMap {
    uid_map: CString,
    gid_map: CString,
}

impl SelfMap {
    pub(crate) fn new(uid: u32, gid: u32) -> io::Result<SelfMap> {
        Ok(SelfMap {
            uid_map: c(format!("{uid} {uid} 1\n").as_bytes())?,
            gid_map: c(format!("{gid} {gid} 1\n").as_bytes())?,
        })
    }

    /// Writes the maps of the calling process. System calls only.
    pub(crate) fn write(&self) -> io::Result<()> {
        for (path, text) in [
            (c"/proc/self/setgroups", c"deny"),
            (c"/proc/self/uid_map", self.uid_map.as_c_str()),
            (c"/proc/self/gid_map", self.gid_map.as_c_str()),
        ] {
            // SAFETY: raw system calls on C strings.
            unsafe {
                let f = fd(
                    libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) as libc::c_long
                )?;
                let len = text.to_bytes().len();
                let n = libc::write(f, text.as_ptr().cast(), len);
                let e = io::Error::last_os_error();
                libc::close(f);
                if n != len as isize {
                    return Err(e);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_are_written_without_allocation() {
        let mut buf = [0u8; 32];
        let at = put(&mut buf, 0, b"0 ");
        let end = digits(&mut buf, at, 1_700_000_123);
        assert_eq!(&buf[..end], b"0 1700000123");
        let end = digits(&mut buf, 0, 0);
        assert_eq!(&buf[..end], b"0");
    }

    #[test]
    fn the_view_stages_the_workspace_and_tool_paths() {
        let view = View::prepare(Path::new("/tmp/a/ws"), Owner::Caller, 1 << 20).unwrap();
        let ws: Vec<&[u8]> = view.ws_dirs.iter().map(|c| c.as_bytes()).collect();
        assert_eq!(ws, [&b"/tmp/tmp"[..], b"/tmp/tmp/a", b"/tmp/tmp/a/ws"]);
        assert_eq!(view.ws_target.as_bytes(), b"/tmp/tmp/a/ws");
        assert!(view.binds.iter().any(|(s, _)| s.as_bytes() == b"/usr"));
        assert_eq!(view.tmp_opts.as_bytes(), b"size=1048576,mode=1777");
    }
}
