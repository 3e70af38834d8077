//! Files carried by service objects: the files of a chat message, the attachments of a
//! knowledge-base page.
//!
//! The service state holds only what describes a file ([`StoredFile`]: name, size, MIME type,
//! BLAKE3 digest). Its bytes are stored once, content-addressed, in the world's blob store
//! (`<world root>/blobs/<blake3 hex>`), the very store snapshots keep workspace contents in.
//! So a snapshot stays small and deterministic whatever is attached (no base64 in the state
//! JSON, a photo posted twice is stored once), a trial's `world/blobs/` holds everything a
//! stored snapshot names, and restoring a snapshot into another world copies the blobs its
//! services name ([`restore_blobs`]), verified against their digests.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::files::{ReadError, read_regular};
use crate::{World, WorldError};

/// The largest file a chat message or a knowledge-base page may carry.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// A file a service object carries. Its bytes are in the blob store under `blake3`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredFile {
    /// The file name (one path component, no `/`).
    pub name: String,
    pub size: u64,
    /// `image/png`, `application/pdf`, ... by the bytes for media, else by the name.
    pub mime_type: String,
    /// BLAKE3 of the bytes, hex.
    pub blake3: String,
}

impl StoredFile {
    /// As tools list it: name, size, MIME type.
    pub fn listed(&self) -> Value {
        json!({"name": self.name, "size": self.size, "mime_type": self.mime_type})
    }

    /// As checks see it: name, size, MIME type and digest (never the bytes).
    pub fn checked(&self) -> Value {
        json!({"name": self.name, "size": self.size, "mime_type": self.mime_type,
            "blake3": self.blake3})
    }
}

/// Whether `name` can name an attached file: 1–255 bytes, one path component (no `/` or
/// `\`), not `.` or `..`, no control characters. The error says what is wrong.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.trim().is_empty() {
        return Err("a file name is empty".into());
    }
    if name.len() > 255 {
        return Err(format!(
            "the file name `{}…` is longer than 255 bytes; shorten it",
            name.chars().take(40).collect::<String>()
        ));
    }
    if name == "." || name == ".." || name.contains(['/', '\\']) {
        return Err(format!(
            "`{name}` is not a file name: give a name without `/`, `\\` or `..`"
        ));
    }
    if name.chars().any(char::is_control) {
        return Err(format!(
            "the file name {name:?} holds control characters; remove them"
        ));
    }
    Ok(())
}

/// The MIME type of a file: the media type its bytes are (a `.png` that is a JPEG is
/// `image/jpeg`), else what its name's extension says, else `application/octet-stream`.
pub fn mime_type(name: &str, bytes: &[u8]) -> String {
    if let Some(t) = bureau_media::sniff(bytes) {
        return t.mime().to_string();
    }
    mime_by_name(name).to_string()
}

/// The MIME type a file name's extension says (`application/octet-stream` when it says
/// nothing known).
pub(crate) fn mime_by_name(name: &str) -> &'static str {
    let ext = name.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
    match ext.as_str() {
        "txt" | "md" | "log" => "text/plain",
        "csv" => "text/csv",
        "json" => "application/json",
        "html" | "htm" => "text/html",
        "pdf" => "application/pdf",
        "ics" => "text/calendar",
        "eml" => "message/rfc822",
        "zip" => "application/zip",
        "xlsx" => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "docx" => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "pptx" => "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        _ => "application/octet-stream",
    }
}

/// How a size reads in an error: `17.3 MB` or `812 bytes`.
pub(crate) fn human_size(n: u64) -> String {
    if n >= 1_000_000 {
        format!("{:.1} MB", n as f64 / 1_000_000.0)
    } else {
        format!("{n} bytes")
    }
}

/// A regular file on disk, read whole if it is at most [`MAX_FILE_BYTES`]; `what` names it in
/// errors (`world/chat/files/x.png`, the workspace path).
pub(crate) fn read_file(path: &Path, what: &str) -> Result<Vec<u8>, String> {
    read_regular(path, MAX_FILE_BYTES).map_err(|e| match e {
        ReadError::TooLarge { size, .. } => format!(
            "`{what}` is {}; a file may be at most {} MiB",
            human_size(size),
            MAX_FILE_BYTES / (1024 * 1024)
        ),
        ReadError::Io(e) if e.kind() == std::io::ErrorKind::NotFound => {
            format!("no file `{what}`")
        }
        e => format!("`{what}` cannot be read: {e}"),
    })
}

impl World {
    /// The blob store (`<root>/blobs`).
    pub(crate) fn blob_dir(&self) -> std::path::PathBuf {
        self.root.join("blobs")
    }

    /// Store `bytes` as a file named `name` in the blob store; what describes it.
    pub(crate) fn store_file(&self, name: &str, bytes: &[u8]) -> Result<StoredFile, String> {
        check_name(name)?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(format!(
                "`{name}` is {}; a file may be at most {} MiB",
                human_size(bytes.len() as u64),
                MAX_FILE_BYTES / (1024 * 1024)
            ));
        }
        let hash = blake3::hash(bytes).to_hex().to_string();
        let blobs = self.blob_dir();
        std::fs::create_dir_all(&blobs).map_err(|e| format!("cannot store `{name}`: {e}"))?;
        crate::snapshot::store_blob(&blobs, &hash, bytes)
            .map_err(|e| format!("cannot store `{name}`: {e}"))?;
        Ok(StoredFile {
            name: name.to_string(),
            size: bytes.len() as u64,
            mime_type: mime_type(name, bytes),
            blake3: hash,
        })
    }

    /// The bytes of a stored file, checked against its digest.
    pub(crate) fn stored_bytes(&self, f: &StoredFile) -> Result<Vec<u8>, String> {
        if !is_hash(&f.blake3) {
            return Err(format!("`{}` has no valid content digest", f.name));
        }
        let path = self.blob_dir().join(&f.blake3);
        let bytes = read_regular(&path, MAX_FILE_BYTES)
            .map_err(|e| format!("the contents of `{}` are missing ({e})", f.name))?;
        if blake3::hash(&bytes).to_hex().as_str() != f.blake3 {
            return Err(format!(
                "the contents of `{}` do not match their digest",
                f.name
            ));
        }
        Ok(bytes)
    }
}

fn is_hash(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// After a restore from `from` (another world's blob store, e.g. a stored trial's
/// `world/blobs`): copy into this world's store every file the services name that it lacks,
/// verified against its digest. A file missing from both is an error naming it.
pub(crate) fn restore_blobs(world: &World, from: &Path) -> Result<(), WorldError> {
    let own = world.blob_dir();
    let files: Vec<(&str, &StoredFile)> = world
        .chat
        .stored_files()
        .map(|f| ("chat", f))
        .chain(world.kb.stored_files().map(|f| ("kb", f)))
        .collect();
    if files.is_empty() {
        return Ok(());
    }
    std::fs::create_dir_all(&own).map_err(|e| WorldError::io(&own, e))?;
    for (service, f) in files {
        if !is_hash(&f.blake3) {
            return Err(WorldError::Snapshot(format!(
                "{service} file `{}`: `{}` is not a content hash",
                f.name, f.blake3
            )));
        }
        if own.join(&f.blake3).is_file() {
            continue;
        }
        let src = from.join(&f.blake3);
        let bytes = read_regular(&src, MAX_FILE_BYTES).map_err(|e| {
            WorldError::Snapshot(format!(
                "{service} file `{}`: its contents ({}) cannot be read: {e}",
                f.name,
                src.display()
            ))
        })?;
        if blake3::hash(&bytes).to_hex().as_str() != f.blake3 {
            return Err(WorldError::Snapshot(format!(
                "{service} file `{}`: {} does not match its digest",
                f.name,
                src.display()
            )));
        }
        crate::snapshot::store_blob(&own, &f.blake3, &bytes)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_one_component() {
        assert!(check_name("whiteboard.jpg").is_ok());
        assert!(check_name(".env").is_ok());
        assert!(check_name("a..b.txt").is_ok());
        for bad in [
            "",
            " ",
            ".",
            "..",
            "../x.png",
            "a/b.png",
            "a\\b.png",
            "x\u{7}.png",
        ] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        assert!(check_name(&"x".repeat(256)).is_err());
        assert!(
            check_name("../etc/passwd")
                .unwrap_err()
                .contains("without `/`")
        );
    }

    #[test]
    fn mime_types_follow_the_bytes_then_the_name() {
        assert_eq!(
            mime_type("photo.png", &[0xFF, 0xD8, 0xFF, 0xE0]),
            "image/jpeg"
        );
        assert_eq!(mime_type("notes.md", b"# hi"), "text/plain");
        assert_eq!(mime_type("data.bin", b"\0\x01"), "application/octet-stream");
        assert_eq!(mime_type("x.pdf", b"%PDF-1.7\n"), "application/pdf");
    }
}
