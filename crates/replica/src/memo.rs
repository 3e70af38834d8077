//! A baseline's content hashes kept between processes: a tree that was scanned once is not
//! read again while its files keep their metadata (inode, ctime, size, mtime, mode, links).
//!
//! The memo is a text file beside the tree, one line per file:
//! `<blake3 hex> <ino> <ctime ns> <mtime ns> <size> <mode> <nlink> <path bytes, hex>`. A line
//! that does not parse is ignored; a memo that cannot be read is empty. ctime cannot be set
//! by a user process, so a file changed since it was hashed never matches its line.

use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::manifest::{Entry, Kind, Manifest};

/// The largest memo read (about 200 bytes a file: a million files).
const MAX_MEMO_BYTES: u64 = 256 * 1024 * 1024;

type Stat = (u64, i128, i128, u64, u32, u64);

fn stat_of(e: &Entry) -> Stat {
    (e.ino, e.ctime_ns, e.mtime_ns, e.size, e.mode, e.nlink)
}

/// Read a memo: path → (metadata, content hash).
pub(crate) fn read(memo: &Path) -> BTreeMap<PathBuf, (Stat, [u8; 32])> {
    use std::io::Read;
    let mut text = String::new();
    let Ok(file) = std::fs::File::open(memo) else {
        return BTreeMap::new();
    };
    if file.take(MAX_MEMO_BYTES).read_to_string(&mut text).is_err() {
        return BTreeMap::new();
    }
    text.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<(PathBuf, (Stat, [u8; 32]))> {
    let mut f = line.split(' ');
    let content = hex32(f.next()?)?;
    let stat = (
        f.next()?.parse().ok()?,
        f.next()?.parse().ok()?,
        f.next()?.parse().ok()?,
        f.next()?.parse().ok()?,
        f.next()?.parse().ok()?,
        f.next()?.parse().ok()?,
    );
    let path = unhex(f.next()?)?;
    if f.next().is_some() {
        return None;
    }
    Some((
        PathBuf::from(std::ffi::OsStr::from_bytes(&path)),
        (stat, content),
    ))
}

fn hex32(s: &str) -> Option<[u8; 32]> {
    unhex(s)?.try_into().ok()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Scan `root`, taking the hashes of `memo` for unchanged files; rewrite the memo when a file
/// was hashed (atomically; failing to write it is not an error).
pub(crate) fn scan(root: &Path, memo: &Path) -> Result<Manifest, crate::ReplicaError> {
    let known = read(memo);
    let mut hashed = 0usize;
    let manifest = Manifest::scan_with(root, &mut |rel, e| {
        let hit = known
            .get(rel)
            .filter(|(stat, _)| *stat == stat_of(e))
            .map(|(_, h)| *h);
        if hit.is_none() {
            hashed += 1;
        }
        hit
    })?;
    let files = manifest
        .entries
        .values()
        .filter(|e| e.kind == Kind::File)
        .count();
    if hashed > 0 || files != known.len() {
        let mut text = String::new();
        for (rel, e) in &manifest.entries {
            if e.kind != Kind::File {
                continue;
            }
            let (ino, ctime, mtime, size, mode, nlink) = stat_of(e);
            text.push_str(&format!(
                "{} {ino} {ctime} {mtime} {size} {mode} {nlink} {}\n",
                hex(&e.content),
                hex(rel.as_os_str().as_bytes())
            ));
        }
        let _ = write_atomic(memo, text.as_bytes());
    }
    Ok(manifest)
}

fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memoised_scan_equals_a_full_scan_and_follows_changes() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("tree");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("a.txt"), "A").unwrap();
        std::fs::write(root.join("sub/b b.txt"), "B").unwrap();
        let memo = d.path().join("tree.hashes");
        let full = Manifest::scan(&root).unwrap();
        assert_eq!(scan(&root, &memo).unwrap().entries, full.entries);
        assert_eq!(read(&memo).len(), 2);
        // From the memo: the same manifest, even with a content hash the files do not have
        // (proving the memo was used and not the files).
        let text = std::fs::read_to_string(&memo).unwrap();
        let forged = text.replacen(
            &hex(&full.entries[Path::new("a.txt")].content),
            &"00".repeat(32),
            1,
        );
        std::fs::write(&memo, &forged).unwrap();
        let m = scan(&root, &memo).unwrap();
        assert_eq!(m.entries[Path::new("a.txt")].content, [0u8; 32]);
        // A file rewritten (new ctime) is hashed again.
        std::thread::sleep(std::time::Duration::from_millis(10));
        std::fs::write(root.join("a.txt"), "A2").unwrap();
        let m = scan(&root, &memo).unwrap();
        assert_eq!(m.entries, Manifest::scan(&root).unwrap().entries);
        // A corrupt memo is ignored.
        std::fs::write(&memo, "garbage\n\u{0}\n").unwrap();
        assert_eq!(
            scan(&root, &memo).unwrap().entries,
            Manifest::scan(&root).unwrap().entries
        );
    }
}
