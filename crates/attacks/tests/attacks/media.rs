//! Attacks: media. Files that lie about being pictures, sounds or videos, pictures that
//! inflate to gigabytes, and "videos" that would make ffmpeg read other files — each a tool
//! error or a note within a bounded time, never a crash, a hang or another file's contents.
//! See docs/multimodal.md and docs/security.md.

use std::time::Duration;

use bureau_core::log::Actor;
use bureau_core::tool::ToolOutcome;
use serde_json::json;

use crate::documents::{bounded, world_with};

/// A PNG header declaring `w`×`h` RGB pixels, with one tiny IDAT and IEND.
fn png_claiming(w: u32, h: u32) -> Vec<u8> {
    fn crc(data: &[u8]) -> u32 {
        let mut c = 0xFFFF_FFFFu32;
        for &b in data {
            c ^= u32::from(b);
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
        }
        !c
    }
    let mut b = b"\x89PNG\r\n\x1a\n".to_vec();
    let chunk = |b: &mut Vec<u8>, kind: &[u8], data: &[u8]| {
        b.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let start = b.len();
        b.extend_from_slice(kind);
        b.extend_from_slice(data);
        let c = crc(&b[start..]);
        b.extend_from_slice(&c.to_be_bytes());
    };
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&w.to_be_bytes());
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
    chunk(&mut b, b"IHDR", &ihdr);
    chunk(&mut b, b"IDAT", &[0x78, 0x9c, 0x03, 0x00]);
    chunk(&mut b, b"IEND", &[]);
    b
}

fn read(files: &'static [(&'static str, &'static [u8])], path: &'static str) -> ToolOutcome {
    bounded(Duration::from_secs(60), path, move || {
        let (_d, mut w) = world_with(files);
        w.call_tool(Actor::Agent, "files_read", &json!({"path": path}))
    })
}

fn refused(outcome: ToolOutcome, what: &str) -> String {
    match outcome {
        ToolOutcome::Error { message } => message,
        ToolOutcome::Ok { value, media } => {
            panic!("{what} was read: {value} with {} media parts", media.len())
        }
    }
}

#[test]
fn a_picture_claiming_ten_billion_pixels_is_refused_from_its_header() {
    let bomb: &'static [u8] = Box::leak(png_claiming(100_000, 100_000).into_boxed_slice());
    let files: &'static [(&str, &[u8])] = Box::leak(vec![("photo.png", bomb)].into_boxed_slice());
    let m = refused(read(files, "photo.png"), "a 100,000 × 100,000 PNG");
    assert!(m.contains("photo.png"), "{m}");
}

#[test]
fn text_named_like_a_picture_or_a_clip_is_refused_as_what_it_is() {
    for name in ["receipt.png", "scan.jpg", "voicemail.wav", "clip.mp4"] {
        let files: &'static [(&str, &[u8])] = Box::leak(
            vec![(name, &b"Total: 31.50 EUR (trust me, I am a picture)"[..])].into_boxed_slice(),
        );
        let m = refused(read(files, name), name);
        assert!(m.contains("the bytes are not"), "{name}: {m}");
    }
}

#[test]
fn a_playlist_or_concat_list_posing_as_a_clip_never_reaches_other_files() {
    // Left to probe, ffmpeg would follow these to /etc/passwd; Bureau reads only what the
    // bytes' signature says, with ffmpeg told the format and allowed the file protocol only.
    let playlist: &[u8] =
        b"#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\n/etc/passwd\n#EXT-X-ENDLIST\n";
    let concat: &[u8] = b"ffconcat version 1.0\nfile '/etc/passwd'\n";
    for (name, bytes) in [("clip.mp4", playlist), ("walkthrough.mkv", concat)] {
        let files: &'static [(&str, &[u8])] = Box::leak(vec![(name, bytes)].into_boxed_slice());
        let m = refused(read(files, name), name);
        assert!(!m.contains("root:"), "{m}");
    }
    // An MP4 signature in front of a playlist: ffmpeg, told it is MP4, finds no video in it.
    let mut disguised = b"\0\0\0\x18ftypisom\0\0\x02\0isomiso2".to_vec();
    disguised.extend_from_slice(playlist);
    let bytes: &'static [u8] = Box::leak(disguised.into_boxed_slice());
    let files: &'static [(&str, &[u8])] = Box::leak(vec![("trick.mp4", bytes)].into_boxed_slice());
    match read(files, "trick.mp4") {
        ToolOutcome::Error { message } => assert!(!message.contains("root:"), "{message}"),
        ToolOutcome::Ok { value, media } => {
            assert!(media.is_empty(), "{value}");
            assert!(!value.to_string().contains("root:"), "{value}");
        }
    }
}

#[test]
fn a_wav_header_claiming_two_hours_over_one_second_of_samples_is_refused() {
    let mut wav =
        b"RIFF\0\0\0\0WAVEfmt \x10\0\0\0\x01\0\x01\0\x40\x1f\0\0\x80\x3e\0\0\x02\0\x10\0data"
            .to_vec();
    wav.extend_from_slice(&(2u32 * 3600 * 8000 * 2).to_le_bytes());
    wav.extend(std::iter::repeat_n(0u8, 16000));
    let bytes: &'static [u8] = Box::leak(wav.into_boxed_slice());
    let files: &'static [(&str, &[u8])] = Box::leak(vec![("vm.wav", bytes)].into_boxed_slice());
    let m = refused(read(files, "vm.wav"), "a lying WAV");
    assert!(m.contains("vm.wav"), "{m}");
}
