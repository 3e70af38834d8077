//! Media in Bureau's office: photos, scans, audio and video.
//!
//! - **Shown to agents** ([`present`]): the bytes of a workspace file or an attachment become
//!   MCP-style media parts ([`bureau_core::tool::Media`]) beside a text description. Every
//!   decoder of untrusted bytes runs in an isolated child process ([`bureau_isolate`]) with a
//!   time and memory budget, after header checks ([`limits`]); what is cut (pages, frames,
//!   seconds, pixels) is said in a note, and a file that lies about its type is a clear error.
//! - **Programs found on PATH** ([`external`]): ffmpeg/ffprobe for video, tesseract for OCR
//!   ([`ocr`]), each optional, each bounded for its whole process tree, each named in one line
//!   when absent.
//! - **Seen by checks** ([`analyze`]): format, size, colour type, a perceptual hash and the
//!   dominant colours of a picture or of a PDF page's image.
//! - **Seen by judges** ([`pages`]): deliverables rendered to page images (pdftoppm,
//!   LibreOffice), bounded, cached by content hash.
//!
//! Depends on `core` (the [`Media`](bureau_core::tool::Media) type), `formats` (PDF text, to
//! tell a scan from a text PDF), `isolate`, and `shell` (its cgroups hold LibreOffice's
//! process tree).

pub mod analyze;
pub mod audio;
pub mod external;
pub mod isolated;
pub mod kind;
pub mod limits;
pub mod ocr;
pub mod pages;
pub mod picture;
pub mod present;
pub mod render;
pub mod scan;
pub mod video;

pub use kind::{MediaType, sniff};
pub use present::{Presented, present};

use base64::Engine as _;
use bureau_core::tool::{Media, MediaKind};

/// What went wrong with a media file, said so that the agent or author can act on it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum MediaError {
    /// The file is not what its name or header says, or is damaged.
    #[error("`{file}`: {reason}")]
    Invalid { file: String, reason: String },
    /// The file exceeds a limit that cannot be met by cutting it.
    #[error("`{file}`: {reason}")]
    TooLarge { file: String, reason: String },
    /// A program the operation needs is not installed.
    #[error("{what} needs `{program}`, which is not on PATH; install it ({install})")]
    Missing {
        what: String,
        program: String,
        install: String,
    },
    /// A program ran and failed, or was stopped at a limit.
    #[error("{program} failed on `{file}`: {reason}")]
    Program {
        program: String,
        file: String,
        reason: String,
    },
}

pub(crate) fn invalid(file: &str, reason: impl Into<String>) -> MediaError {
    MediaError::Invalid {
        file: file.to_string(),
        reason: reason.into(),
    }
}

/// A media part of `bytes`: base64 data, size and blake3 digest.
pub fn media_part(kind: MediaKind, mime_type: &str, label: String, bytes: &[u8]) -> Media {
    Media {
        kind,
        mime_type: mime_type.to_string(),
        label,
        data: base64::engine::general_purpose::STANDARD.encode(bytes),
        bytes: bytes.len() as u64,
        blake3: blake3::hash(bytes).to_hex().to_string(),
    }
}

/// The bytes of a media part (its base64 `data` decoded); `None` when the data is absent
/// (a stored trajectory) or not base64.
pub fn media_bytes(m: &Media) -> Option<Vec<u8>> {
    if m.data.is_empty() {
        return None;
    }
    base64::engine::general_purpose::STANDARD
        .decode(&m.data)
        .ok()
}
