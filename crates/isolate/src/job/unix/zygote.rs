//! The zygote: started first thing, forks a supervisor per job; "prepare" messages.

use std::sync::OnceLock;

use super::*;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::unix::{Fd, pipe, socketpair};

// -- the zygote --

pub(crate) struct Zygote {
    pub(crate) ctl: i32,
}

pub(crate) static ZYGOTE: OnceLock<Option<Zygote>> = OnceLock::new();

/// Why the zygote is gone, once a message could not be sent to it (it was killed, say by the
/// OOM killer). Jobs then fork the calling process, as without a zygote.
static LOST: OnceLock<String> = OnceLock::new();

pub(crate) fn zygote() -> Option<&'static Zygote> {
    if LOST.get().is_some() {
        return None;
    }
    ZYGOTE.get().and_then(Option::as_ref)
}

/// The zygote could not be reached (`e`): say so once, on stderr, and stop using it.
pub(crate) fn lost(e: &std::io::Error) {
    if LOST.set(e.to_string()).is_ok() {
        eprintln!(
            "warning: Bureau's job zygote is gone ({e}); documents, media and checks are now isolated by forking this process, which costs more per job in a large run"
        );
    }
}

/// Why the zygote is gone, if it is.
pub(crate) fn lost_reason() -> Option<String> {
    LOST.get().cloned()
}

pub(crate) fn threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|d| d.count())
        .unwrap_or(usize::MAX)
}

pub(crate) fn start_zygote(warm: fn()) -> bool {
    if ZYGOTE.get().is_some() || threads() != 1 {
        return zygote().is_some();
    }
    let Ok((mine, theirs)) = socketpair(libc::SOCK_SEQPACKET) else {
        let _ = ZYGOTE.set(None);
        return false;
    };
    let fds = [mine.into_raw(), theirs.into_raw()];
    // SAFETY: the process has one thread (checked above), so the child is a complete copy.
    let parent_pid = unsafe { libc::getpid() };
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        // SAFETY: closing our own descriptors.
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
        let _ = ZYGOTE.set(None);
        return false;
    }
    if pid == 0 {
        // SAFETY: closing the caller's end in the zygote.
        unsafe { libc::close(fds[0]) };
        zygote_main(fds[1], parent_pid, warm);
    }
    // SAFETY: closing the zygote's end in the caller.
    unsafe { libc::close(fds[1]) };
    let _ = ZYGOTE.set(Some(Zygote { ctl: fds[0] }));
    true
}

pub(crate) fn zygote_main(ctl: i32, parent_pid: libc::pid_t, warm: fn()) -> ! {
    // SAFETY: plain system calls on this process's own state.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if libc::getppid() != parent_pid {
            libc::_exit(0);
        }
        // Keep stderr (a supervisor's own failure is worth seeing); nothing else.
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            libc::dup2(null, 0);
            libc::dup2(null, 1);
        }
        let ctl_h = libc::fcntl(ctl, libc::F_DUPFD_CLOEXEC, 3);
        if ctl_h != 3 {
            libc::dup2(ctl_h, 3);
            libc::fcntl(3, libc::F_SETFD, libc::FD_CLOEXEC);
        }
        if libc::syscall(libc::SYS_close_range, 4u32, u32::MAX, 0u32) != 0 {
            for fd in 4..4096 {
                libc::close(fd);
            }
        }
        // Supervisors are reaped by the kernel; Ctrl-C is for the caller to handle.
        libc::signal(libc::SIGCHLD, libc::SIG_IGN);
        libc::signal(libc::SIGINT, libc::SIG_IGN);
    }
    warm();
    compact_heap();
    let ctl = 3;
    loop {
        let mut header = [0u8; HEADER_BYTES + 8];
        let mut fds = [-1i32; 2];
        let n = match recv_with_fds(ctl, &mut header, &mut fds) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            // SAFETY: leaving the zygote.
            Err(_) => unsafe { libc::_exit(1) },
        };
        if n == 0 {
            // The caller is gone.
            // SAFETY: leaving the zygote.
            unsafe { libc::_exit(0) };
        }
        let parsed = Header::decode(&header[..n]);
        if let (Some((MAGIC_PREPARE, h)), true) = (parsed, fds[0] >= 0) {
            run_prepare(&h, fds[0]);
            compact_heap();
        } else if let (Some((MAGIC, h)), true) = (parsed, fds[0] >= 0 && fds[1] >= 0) {
            // SAFETY: the zygote has one thread; the supervisor runs `supervise` only.
            let pid = unsafe { libc::fork() };
            if pid == 0 {
                // SAFETY: plain system calls on this process's own state.
                unsafe {
                    libc::close(ctl);
                    libc::signal(libc::SIGCHLD, libc::SIG_DFL);
                    libc::signal(libc::SIGINT, libc::SIG_DFL);
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                }
                let outcome = supervise(&h, Fd(fds[0]));
                let _ = write_frame(fds[1], &outcome);
                // SAFETY: leaving the supervisor.
                unsafe { libc::_exit(0) };
            }
        }
        for fd in fds {
            if fd >= 0 {
                // SAFETY: closing descriptors received with this message.
                unsafe { libc::close(fd) };
            }
        }
    }
}

/// Merge the zygote's free heap chunks and hand their whole pages back, before it forks.
///
/// A forked job shares the zygote's heap page by page until it writes one. glibc's `malloc`
/// in the job writes into free chunks it inherited (unlinking one, or merging every "fast"
/// chunk on a large request), so each page holding free-list bookkeeping is copied on the
/// job's first allocations: hundreds of page faults per job when the zygote's heap is
/// fragmented by warming up and preparing. `malloc_trim` merges the fast chunks and returns
/// free pages to the kernel, so a job allocates from merged chunks and fresh pages instead.
fn compact_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: a glibc call on this (single-threaded) process's own heap.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// `recvmsg` of one message and up to two descriptors.
pub(crate) fn recv_with_fds(
    ctl: i32,
    buf: &mut [u8],
    fds: &mut [i32; 2],
) -> std::io::Result<usize> {
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // Room for a control message of two descriptors, aligned as cmsghdr needs.
    let mut cbuf = [0u64; 8];
    // SAFETY: a zeroed msghdr is valid; its pointers are set to live buffers below.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cbuf.as_mut_ptr().cast();
    // SAFETY: CMSG_SPACE is a pure computation.
    msg.msg_controllen = unsafe { libc::CMSG_SPACE(8) } as usize;
    // SAFETY: `msg` points at live buffers of the stated sizes.
    let n = unsafe { libc::recvmsg(ctl, &mut msg, libc::MSG_CMSG_CLOEXEC) };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: walking the control messages the kernel wrote into `cbuf`.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        let mut k = 0;
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(c).cast::<i32>();
                let count =
                    ((*c).cmsg_len as usize - libc::CMSG_LEN(0) as usize) / size_of::<i32>();
                for i in 0..count {
                    let fd = std::ptr::read_unaligned(data.add(i));
                    if k < 2 {
                        fds[k] = fd;
                        k += 1;
                    } else {
                        libc::close(fd);
                    }
                }
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    Ok(n as usize)
}

/// Send the header and two descriptors to the zygote.
pub(crate) fn send_with_fds(ctl: i32, header: &[u8], fds: [i32; 2]) -> std::io::Result<()> {
    let mut iov = libc::iovec {
        iov_base: header.as_ptr() as *mut libc::c_void,
        iov_len: header.len(),
    };
    let mut cbuf = [0u64; 8];
    // SAFETY: a zeroed msghdr is valid; its pointers are set to live buffers below.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cbuf.as_mut_ptr().cast();
    // SAFETY: CMSG_SPACE is a pure computation; the header is filled in below.
    unsafe {
        msg.msg_controllen = libc::CMSG_SPACE(8) as usize;
        let c = libc::CMSG_FIRSTHDR(&msg);
        (*c).cmsg_level = libc::SOL_SOCKET;
        (*c).cmsg_type = libc::SCM_RIGHTS;
        (*c).cmsg_len = libc::CMSG_LEN(8) as usize;
        let data = libc::CMSG_DATA(c).cast::<i32>();
        std::ptr::write_unaligned(data, fds[0]);
        std::ptr::write_unaligned(data.add(1), fds[1]);
    }
    loop {
        // SAFETY: `msg` points at live buffers of the stated sizes.
        let n = unsafe { libc::sendmsg(ctl, &msg, libc::MSG_NOSIGNAL) };
        if n >= 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

// -- "prepare" messages --

/// What the zygote runs for a "prepare" message: the monomorphised
/// [`trampoline_prepare`].
pub(crate) type PrepareEntry = fn(usize, &[u8]);

pub(crate) fn trampoline_prepare<I: DeserializeOwned>(function: usize, bytes: &[u8]) {
    let Ok(input) = ciborium::from_reader::<I, _>(bytes) else {
        return;
    };
    // SAFETY: `function` is the address of a `fn(I)` taken in `prepare` in this program
    // (the zygote is a fork of it), and this trampoline is the one monomorphised for `I`.
    let f: fn(I) = unsafe { std::mem::transmute::<*const (), fn(I)>(function as *const ()) };
    f(input);
}

pub(crate) fn prepare<I: Serialize + DeserializeOwned>(f: fn(I), input: &I) -> bool {
    let Some(z) = zygote() else {
        return false;
    };
    let mut bytes = Vec::new();
    if ciborium::into_writer(input, &mut bytes).is_err() || bytes.len() > MAX_PREPARE_BYTES {
        return false;
    }
    let Ok((r, w)) = pipe() else {
        return false;
    };
    let entry: PrepareEntry = trampoline_prepare::<I>;
    let header = Header {
        entry: entry as usize as u64,
        function: f as usize as u64,
        wall_ms: 0,
        memory_bytes: 0,
        max_output_bytes: 0,
        detect_stuck: 0,
    };
    if let Err(e) = send_with_fds(z.ctl, &header.encode_as(MAGIC_PREPARE), [r.0, r.0]) {
        lost(&e);
        return false;
    }
    drop(r);
    // The zygote reads the input right away; a zygote gone makes this fail.
    write_frame(w.0, &bytes).is_ok()
}

/// In the zygote: read the input of a "prepare" message and run it.
pub(crate) fn run_prepare(h: &Header, input: i32) {
    let Ok(bytes) = read_frame(input, MAX_PREPARE_BYTES) else {
        return;
    };
    // SAFETY: `entry` is the address of a `PrepareEntry` in this program, taken in
    // `prepare`; see `trampoline_prepare`.
    let entry: PrepareEntry =
        unsafe { std::mem::transmute::<*const (), PrepareEntry>(h.entry as *const ()) };
    let function = h.function as usize;
    let _ = std::panic::catch_unwind(move || entry(function, &bytes));
}
