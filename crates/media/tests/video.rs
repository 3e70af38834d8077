//! Video through `present`: ffprobe's metadata and four key frames from ffmpeg, both on PATH
//! (CI installs ffmpeg; this test fails, never skips, without it). A two-hour clip is not
//! needed to show the bound: the frames are four whatever the length, and a clip whose
//! frames cannot be decoded is a clear error or a note, never a hang.

use std::path::Path;
use std::process::Command;

use bureau_core::tool::MediaKind;

/// A `seconds`-long 320×240 test-pattern clip made by ffmpeg.
fn clip(dir: &Path, seconds: u32) -> Vec<u8> {
    let out = dir.join("clip.mp4");
    let status = Command::new("ffmpeg")
        .args(["-v", "error", "-nostdin", "-f", "lavfi", "-i"])
        .arg(format!("testsrc=duration={seconds}:size=320x240:rate=10"))
        .args(["-pix_fmt", "yuv420p", "-c:v", "mpeg4", "-y"])
        .arg(&out)
        .status()
        .expect("ffmpeg must be installed for this test (apt-get install ffmpeg)");
    assert!(status.success());
    std::fs::read(out).unwrap()
}

#[test]
fn a_clip_gives_its_metadata_and_four_labelled_key_frames() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = clip(dir.path(), 8);
    let p = bureau_media::present("site/walkthrough.mp4", &bytes, None)
        .unwrap()
        .expect("a video is media");
    assert_eq!(p.fields["media"], "video");
    assert_eq!(p.fields["format"], "mp4");
    assert_eq!(p.fields["width"], 320);
    assert_eq!(p.fields["height"], 240);
    let d = p.fields["duration_seconds"].as_f64().unwrap();
    assert!((d - 8.0).abs() < 0.2, "{d}");
    assert_eq!(
        p.fields["frames_at"],
        serde_json::json!(["00:00:01", "00:00:03", "00:00:05", "00:00:07"])
    );
    assert_eq!(p.media.len(), 4);
    for (m, at) in p
        .media
        .iter()
        .zip(["00:00:01", "00:00:03", "00:00:05", "00:00:07"])
    {
        assert_eq!(m.kind, MediaKind::Image);
        assert_eq!(m.label, format!("frame at {at} of walkthrough.mp4"));
        let img = image::load_from_memory(&bureau_media::media_bytes(m).unwrap()).unwrap();
        assert_eq!((img.width(), img.height()), (320, 240));
    }
    // Different moments of the clip: the frames differ.
    assert_ne!(p.media[0].blake3, p.media[3].blake3);
    assert!(p.description.contains("4 key frames"), "{}", p.description);
}

#[test]
fn a_damaged_clip_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = clip(dir.path(), 2);
    let cut = &bytes[..bytes.len() / 3];
    match bureau_media::present("cut.mp4", cut, None) {
        Err(e) => assert!(e.to_string().contains("cut.mp4"), "{e}"),
        Ok(Some(p)) => assert!(
            p.media.len() < 4 || !p.notes.is_empty(),
            "a cut clip gave a full result: {:?}",
            p.fields
        ),
        Ok(None) => panic!("an mp4 is media"),
    }
}
