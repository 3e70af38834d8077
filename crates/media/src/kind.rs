//! What kind of media a file is, by its bytes (its name only breaks ties).

use serde::{Deserialize, Serialize};

/// A media type Bureau shows to agents as media.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum MediaType {
    Png,
    Jpeg,
    Gif,
    Webp,
    Bmp,
    Tiff,
    Wav,
    Mp3,
    Ogg,
    Flac,
    /// MP4 / QuickTime (ISO base media).
    Mp4,
    /// Matroska / WebM.
    Mkv,
    Avi,
    Pdf,
}

/// What a [`MediaType`] is for an agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Image,
    Audio,
    Video,
    Pdf,
}

impl MediaType {
    pub fn family(self) -> Family {
        use MediaType::*;
        match self {
            Png | Jpeg | Gif | Webp | Bmp | Tiff => Family::Image,
            Wav | Mp3 | Ogg | Flac => Family::Audio,
            Mp4 | Mkv | Avi => Family::Video,
            Pdf => Family::Pdf,
        }
    }

    pub fn mime(self) -> &'static str {
        use MediaType::*;
        match self {
            Png => "image/png",
            Jpeg => "image/jpeg",
            Gif => "image/gif",
            Webp => "image/webp",
            Bmp => "image/bmp",
            Tiff => "image/tiff",
            Wav => "audio/wav",
            Mp3 => "audio/mpeg",
            Ogg => "audio/ogg",
            Flac => "audio/flac",
            Mp4 => "video/mp4",
            Mkv => "video/x-matroska",
            Avi => "video/x-msvideo",
            Pdf => "application/pdf",
        }
    }

    /// A short lowercase name, the `format` field of a tool result.
    pub fn name(self) -> &'static str {
        use MediaType::*;
        match self {
            Png => "png",
            Jpeg => "jpeg",
            Gif => "gif",
            Webp => "webp",
            Bmp => "bmp",
            Tiff => "tiff",
            Wav => "wav",
            Mp3 => "mp3",
            Ogg => "ogg",
            Flac => "flac",
            Mp4 => "mp4",
            Mkv => "mkv",
            Avi => "avi",
            Pdf => "pdf",
        }
    }

    /// The type a file name's extension promises, if it names a media type.
    pub fn from_name(name: &str) -> Option<MediaType> {
        use MediaType::*;
        let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
        Some(match ext.as_str() {
            "png" => Png,
            "jpg" | "jpeg" | "jpe" => Jpeg,
            "gif" => Gif,
            "webp" => Webp,
            "bmp" => Bmp,
            "tif" | "tiff" => Tiff,
            "wav" | "wave" => Wav,
            "mp3" => Mp3,
            "ogg" | "oga" | "opus" => Ogg,
            "flac" => Flac,
            "mp4" | "m4v" | "mov" | "m4a" => Mp4,
            "mkv" | "webm" => Mkv,
            "avi" => Avi,
            "pdf" => Pdf,
            _ => return None,
        })
    }
}

/// The media type of `bytes` by their signature; `None` when they have no media signature.
pub fn sniff(bytes: &[u8]) -> Option<MediaType> {
    use MediaType::*;
    let b = bytes;
    let at = |off: usize, sig: &[u8]| b.len() >= off + sig.len() && &b[off..off + sig.len()] == sig;
    if at(0, b"\x89PNG\r\n\x1a\n") {
        Some(Png)
    } else if at(0, &[0xFF, 0xD8, 0xFF]) {
        Some(Jpeg)
    } else if at(0, b"GIF87a") || at(0, b"GIF89a") {
        Some(Gif)
    } else if at(0, b"RIFF") && at(8, b"WEBP") {
        Some(Webp)
    } else if at(0, b"RIFF") && at(8, b"WAVE") {
        Some(Wav)
    } else if at(0, b"RIFF") && at(8, b"AVI ") {
        Some(Avi)
    } else if at(0, b"BM") && b.len() >= 26 {
        Some(Bmp)
    } else if at(0, b"II*\0") || at(0, b"MM\0*") {
        Some(Tiff)
    } else if at(0, b"ID3")
        || (b.len() >= 2 && b[0] == 0xFF && (b[1] & 0xE0) == 0xE0 && (b[1] & 0x06) != 0)
    {
        Some(Mp3)
    } else if at(0, b"OggS") {
        Some(Ogg)
    } else if at(0, b"fLaC") {
        Some(Flac)
    } else if at(4, b"ftyp") {
        Some(Mp4)
    } else if at(0, &[0x1A, 0x45, 0xDF, 0xA3]) {
        Some(Mkv)
    } else if b.len() >= 5 && b[..b.len().min(1024)].windows(5).any(|w| w == b"%PDF-") {
        Some(Pdf)
    } else {
        None
    }
}

/// How `name` and `bytes` agree: the sniffed type, and a note when the name promised a
/// different media type (a `.png` that is a JPEG is shown as the JPEG it is; a `.png` that is
/// no image at all is reported by the caller).
pub fn identify(name: &str, bytes: &[u8]) -> (Option<MediaType>, Option<String>) {
    let sniffed = sniff(bytes);
    let promised = MediaType::from_name(name);
    let note = match (promised, sniffed) {
        (Some(p), Some(s)) if p != s && !(p == MediaType::Mp4 && s == MediaType::Mp4) => {
            Some(format!(
                "the name says {} but the bytes are {}; read as {}",
                p.name(),
                s.name(),
                s.name()
            ))
        }
        _ => None,
    };
    (sniffed, note)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures() {
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\nrest"), Some(MediaType::Png));
        assert_eq!(sniff(&[0xFF, 0xD8, 0xFF, 0xE0]), Some(MediaType::Jpeg));
        assert_eq!(sniff(b"RIFF\0\0\0\0WAVEfmt "), Some(MediaType::Wav));
        assert_eq!(sniff(b"\0\0\0\x20ftypisom"), Some(MediaType::Mp4));
        assert_eq!(sniff(b"%PDF-1.7\n"), Some(MediaType::Pdf));
        assert_eq!(sniff(b"hello, world"), None);
        assert_eq!(sniff(b""), None);
    }

    #[test]
    fn a_name_that_lies_is_noted() {
        let (t, note) = identify("photo.png", &[0xFF, 0xD8, 0xFF, 0xE0]);
        assert_eq!(t, Some(MediaType::Jpeg));
        assert!(note.unwrap().contains("name says png"));
        assert_eq!(identify("photo.jpg", &[0xFF, 0xD8, 0xFF, 0xE0]).1, None);
    }
}
