//! Frames: a little-endian u64 length, then the bytes.

// -- frames: a little-endian u64 length, then the bytes --

pub(crate) fn write_frame(fd: i32, payload: &[u8]) -> std::io::Result<()> {
    let mut frame = Vec::with_capacity(8 + payload.len());
    frame.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    frame.extend_from_slice(payload);
    write_all(fd, &frame)
}

pub(crate) fn write_all(fd: i32, mut bytes: &[u8]) -> std::io::Result<()> {
    while !bytes.is_empty() {
        // SAFETY: sending from a live buffer on a descriptor this process owns;
        // MSG_NOSIGNAL: a closed peer is an error, not a SIGPIPE. A pipe is not a socket:
        // then `write` (SIGPIPE is ignored by Rust programs).
        let mut n =
            unsafe { libc::send(fd, bytes.as_ptr().cast(), bytes.len(), libc::MSG_NOSIGNAL) };
        if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOTSOCK) {
            // SAFETY: as above.
            n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        }
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        bytes = &bytes[n as usize..];
    }
    Ok(())
}

pub(crate) fn read_frame(fd: i32, max: usize) -> std::io::Result<Vec<u8>> {
    let mut len = [0u8; 8];
    read_exact(fd, &mut len)?;
    let len = u64::from_le_bytes(len);
    let len = usize::try_from(len)
        .ok()
        .filter(|l| *l <= max)
        .ok_or_else(|| std::io::Error::other(format!("a frame of {len} bytes is too large")))?;
    let mut body = vec![0u8; len];
    read_exact(fd, &mut body)?;
    Ok(body)
}

pub(crate) fn read_exact(fd: i32, mut buf: &mut [u8]) -> std::io::Result<()> {
    while !buf.is_empty() {
        // SAFETY: reading into a live buffer from a descriptor this process owns.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf = &mut std::mem::take(&mut buf)[n as usize..];
    }
    Ok(())
}
