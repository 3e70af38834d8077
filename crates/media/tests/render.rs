//! Media made from a spec: byte-identical for a seed, readable back by OCR, files written and
//! checked as `bureau media render` does.

use std::path::Path;

use bureau_media::render::build::{Checked, check_all, render_all, render_pictures};
use bureau_media::render::spec::MediaSpec;
use bureau_media::render::{Encoding, Photo, Picture, Template, scan_pdf};

const SPEC: &str = r##"
seed = 7

[[image]]
out = "world/files/expenses/receipt-lunch.jpg"
template = "receipt"
title = "TRATTORIA DA MARIO"
lines = ["05/03/2026 13:42", "2 x Pasta del giorno   25.00", "1 x Acqua   3.00", "1 x Caffe   3.50", "TOTAL EUR   31.50"]
rotate = 2.5
blur = 0.6
noise = 0.04
perspective = 0.15
lighting = 0.3
jpeg_quality = 85

[[image]]
out = "world/files/board.png"
template = "whiteboard"
title = "Launch plan"
lines = ["Go-live: 2 May", "Owner: Priya"]

[[image]]
out = "world/files/label.jpg"
template = "label"
title = "SHIP TO"
lines = ["Kessler Logistik GmbH", "20457 Hamburg"]
barcode = "PO-2291"

[[image]]
out = "world/files/note.jpg"
template = "note"
lines = ["call Marek re dock 3"]

[[image]]
out = "world/files/error.png"
template = "screenshot"
title = "Ledger Pro"
lines = ["Could not post invoice INV-20931 (error LP-4471)."]

[[chart]]
out = "world/files/q3.png"
kind = "bar"
title = "Q3 revenue by region (kEUR)"
labels = ["North", "South"]
values = [120.0, 95.0]
y_label = "kEUR"

[[scan]]
out = "world/files/contracts/signed.pdf"
[[scan.page]]
template = "document"
title = "MASTER SERVICES AGREEMENT"
lines = ["The effective date of this agreement is 1 March 2026.", "", "# Fees", "The Client pays EUR 4,800 per month."]
rotate = 0.5
[[scan.page]]
template = "document"
title = "SIGNATURES"
lines = ["Signed for the Supplier."]
signature = "J. de Vries"

[[mail]]
out = "turns/2/receipt.eml"
from = "Anna Berg <anna@brightwater.test>"
to = ["finance@brightwater.test"]
subject = "Lunch receipt"
date = "2026-03-05T14:00:00+01:00"
body = "Receipt attached."
attachments = ["world/files/expenses/receipt-lunch.jpg", "notes.txt"]
"##;

fn spec_in(dir: &Path, text: &str) -> MediaSpec {
    std::fs::write(dir.join("notes.txt"), "a file beside the spec\n").unwrap();
    let path = dir.join("media.toml");
    std::fs::write(&path, text).unwrap();
    MediaSpec::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn the_same_spec_and_seed_give_byte_identical_files_and_another_seed_other_photos() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = spec_in(tmp.path(), SPEC);
    let a = render_pictures(&spec).unwrap();
    let b = render_pictures(&spec).unwrap();
    assert_eq!(a.len(), 7);
    for ((ma, ba), (mb, bb)) in a.iter().zip(&b) {
        assert_eq!(ma.out, mb.out);
        assert!(ba == bb, "{} differs between two renders", ma.out);
    }
    let mut other = spec.clone();
    other.seed = 8;
    let c = render_pictures(&other).unwrap();
    // The photographed receipt (random tilt and grain) changes with the seed; the chart has
    // no randomness and does not.
    assert_ne!(a[0].1, c[0].1);
    assert_eq!(a[5].1, c[5].1);
    // Kinds by extension.
    assert!(a[0].1.starts_with(&[0xFF, 0xD8, 0xFF]));
    assert!(a[1].1.starts_with(b"\x89PNG"));
    assert!(a[6].1.starts_with(b"%PDF-"));
}

#[test]
fn render_writes_every_file_and_check_finds_a_changed_or_missing_one() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = spec_in(tmp.path(), SPEC);
    let mut seen = Vec::new();
    let made = render_all(&spec, |m| seen.push(m.out.clone())).unwrap();
    assert_eq!(made.len(), 8);
    assert_eq!(seen.last().map(String::as_str), Some("turns/2/receipt.eml"));
    for m in &made {
        let bytes = std::fs::read(tmp.path().join(&m.out)).unwrap();
        assert_eq!(blake3::hash(&bytes).to_hex().to_string(), m.blake3);
    }
    // The mail carries the receipt as rendered and the file beside the spec.
    let eml = std::fs::read(tmp.path().join("turns/2/receipt.eml")).unwrap();
    let mail = bureau_formats::mail::parse_eml(&eml).unwrap();
    assert_eq!(mail.attachments.len(), 2);
    assert_eq!(mail.attachments[0].content_type, "image/jpeg");
    assert_eq!(
        mail.attachments[0].data,
        std::fs::read(tmp.path().join("world/files/expenses/receipt-lunch.jpg")).unwrap()
    );
    assert_eq!(mail.subject, "Lunch receipt");
    // Rendering again changes no byte of the mail (its Message-ID comes from the seed).
    render_all(&spec, |_| {}).unwrap();
    assert_eq!(
        std::fs::read(tmp.path().join("turns/2/receipt.eml")).unwrap(),
        eml
    );

    let checked = check_all(&spec).unwrap();
    assert!(checked.iter().all(Checked::ok), "{checked:?}");
    std::fs::write(tmp.path().join("world/files/q3.png"), b"not the chart").unwrap();
    std::fs::remove_file(tmp.path().join("world/files/note.jpg")).unwrap();
    let checked = check_all(&spec).unwrap();
    let bad: Vec<String> = checked
        .iter()
        .filter(|c| !c.ok())
        .map(|c| match c {
            Checked::Differs { out, .. } => format!("differs {out}"),
            Checked::Missing { out } => format!("missing {out}"),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        bad,
        ["missing world/files/note.jpg", "differs world/files/q3.png"]
    );
}

/// CI installs tesseract; without it these tests fail rather than check nothing.
fn ocr_available() -> bool {
    assert!(
        bureau_media::external::find("tesseract").is_some(),
        "tesseract is not on PATH: install it (apt-get install tesseract-ocr) to test OCR read-back"
    );
    true
}

fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn tesseract_reads_the_key_text_of_a_photographed_receipt() {
    if !ocr_available() {
        return;
    }
    let mut p = Picture::new(
        Template::Receipt,
        "TRATTORIA DA MARIO",
        &[
            "05/03/2026 13:42",
            "2 x Pasta del giorno   25.00",
            "TOTAL EUR   31.50",
        ],
    );
    p.photo = Photo {
        rotate: 2.0,
        blur: 0.6,
        noise: 0.04,
        perspective: 0.15,
        lighting: 0.3,
    };
    let jpg = p
        .render_bytes(1, "receipt.jpg", Encoding::Jpeg(85))
        .unwrap();
    let text = squash(&bureau_media::ocr::ocr("receipt.jpg", &jpg, "eng").unwrap());
    for key in ["TRATTORIA", "31.50", "TOTAL", "25.00"] {
        assert!(text.contains(key), "{key:?} not read in {text:?}");
    }
}

#[test]
fn tesseract_reads_the_key_text_of_a_scanned_page() {
    if !ocr_available() {
        return;
    }
    let mut page = Picture::new(
        Template::Document,
        "MASTER SERVICES AGREEMENT",
        &[
            "The effective date of this agreement is 1 March 2026.",
            "The Client pays EUR 4,800 per month.",
        ],
    );
    page.photo = Photo {
        rotate: 0.6,
        blur: 0.5,
        noise: 0.03,
        ..Photo::default()
    };
    let mut sig = Picture::new(
        Template::Document,
        "SIGNATURES",
        &["Signed for the Supplier."],
    );
    sig.signature = Some("J. de Vries".into());
    let pdf = scan_pdf(&[page, sig], 1, "signed.pdf", 75).unwrap();
    // No text layer: a scan.
    let read = bureau_formats::office::read_pdf("signed.pdf", &pdf).unwrap();
    assert_eq!(read.pages.len(), 2);
    assert!(read.pages.iter().all(|p| p.trim().is_empty()));
    let text = squash(&bureau_media::ocr::ocr("signed.pdf", &pdf, "eng").unwrap());
    for key in [
        "MASTER SERVICES AGREEMENT",
        "1 March 2026",
        "4,800",
        "de Vries",
    ] {
        assert!(text.contains(key), "{key:?} not read in {text:?}");
    }
}

#[test]
fn voicemails_and_clips_are_made_by_espeak_and_ffmpeg_and_checked_for_their_duration() {
    for program in ["espeak-ng", "ffmpeg", "ffprobe"] {
        assert!(
            bureau_media::external::find(program).is_some(),
            "{program} is not on PATH: install it (apt-get install espeak-ng ffmpeg) to test audio and video"
        );
    }
    let tmp = tempfile::tempdir().unwrap();
    let spec = spec_in(
        tmp.path(),
        r##"
[[audio]]
out = "turns/2/voicemail.wav"
text = "Hi, it's Marek from Kessler. The delivery moves to Thursday at ten thirty."

[[video]]
out = "world/files/walk.mp4"
seconds_per_frame = 2
width = 640
height = 360
[[video.frame]]
template = "whiteboard"
title = "Site walk"
lines = ["Rack B4 damaged"]
[[video.frame]]
template = "note"
lines = ["Forklift 2 out of service"]

[[mail]]
out = "turns/2/voicemail.eml"
from = "Voicemail <voicemail@pbx.example.com>"
to = "anna@brightwater.test"
subject = "New voicemail"
date = "2026-03-05T09:12:00+01:00"
attachments = ["turns/2/voicemail.wav"]
"##,
    );
    render_all(&spec, |_| {}).unwrap();
    let wav = std::fs::read(tmp.path().join("turns/2/voicemail.wav")).unwrap();
    let info = bureau_media::audio::for_agent("voicemail.wav", &wav, bureau_media::MediaType::Wav)
        .unwrap()
        .info;
    assert!(info.duration_seconds.unwrap() > 2.0, "{info:?}");
    let mp4 = std::fs::read(tmp.path().join("world/files/walk.mp4")).unwrap();
    let probe = bureau_media::external::probe("walk.mp4", &mp4).unwrap();
    assert_eq!((probe.width, probe.height), (Some(640), Some(360)));
    let secs = probe.duration_seconds.unwrap();
    assert!((secs - 4.0).abs() < 0.3, "two frames of 2 s, got {secs} s");
    // Both frames are shown: the picture at 1 s is not the one at 3 s.
    let frame_at = |t: &str| {
        let out = std::process::Command::new("ffmpeg")
            .args(["-loglevel", "error", "-ss", t, "-i"])
            .arg(tmp.path().join("world/files/walk.mp4"))
            .args(["-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "gray", "-"])
            .output()
            .unwrap();
        out.stdout
    };
    let (a, b) = (frame_at("1"), frame_at("3"));
    let differ = a
        .iter()
        .zip(&b)
        .filter(|(x, y)| x.abs_diff(**y) > 40)
        .count();
    assert!(
        differ > a.len() / 10,
        "the two frames look alike ({differ} of {} pixels differ)",
        a.len()
    );
    // The mail carries the voicemail.
    let eml = std::fs::read(tmp.path().join("turns/2/voicemail.eml")).unwrap();
    let mail = bureau_formats::mail::parse_eml(&eml).unwrap();
    assert_eq!(mail.attachments[0].content_type, "audio/wav");
    assert_eq!(mail.attachments[0].data, wav);
    // --check: present with a duration; the mail byte for byte.
    let checked = check_all(&spec).unwrap();
    assert!(checked.iter().all(Checked::ok), "{checked:?}");
    assert!(
        checked.iter().any(
            |c| matches!(c, Checked::Playable { seconds, .. } if (*seconds - 4.0).abs() < 0.3)
        )
    );
    std::fs::write(tmp.path().join("world/files/walk.mp4"), b"not a video").unwrap();
    let checked = check_all(&spec).unwrap();
    assert!(
        checked
            .iter()
            .any(|c| matches!(c, Checked::Unreadable { out, .. } if out == "world/files/walk.mp4")),
        "{checked:?}"
    );
}
