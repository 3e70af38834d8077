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

fn ocr_available() -> bool {
    if bureau_media::external::find("tesseract").is_none() {
        eprintln!(
            "tesseract is not on PATH (apt-get install tesseract-ocr): OCR read-back not tested"
        );
        return false;
    }
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

/// The frame of `mp4` shown at `seconds`, decoded (None when ffmpeg gives none).
fn frame_at(mp4: &Path, seconds: f64) -> Option<image::RgbImage> {
    let out = std::process::Command::new("ffmpeg")
        .args([
            "-nostdin",
            "-loglevel",
            "error",
            "-ss",
            &seconds.to_string(),
            "-i",
        ])
        .arg(mp4)
        .args(["-frames:v", "1", "-f", "image2pipe", "-vcodec", "png", "-"])
        .output()
        .ok()?;
    if !out.status.success() || out.stdout.is_empty() {
        return None;
    }
    Some(image::load_from_memory(&out.stdout).ok()?.to_rgb8())
}

fn mean_rgb(img: &image::RgbImage) -> [f64; 3] {
    let mut sum = [0f64; 3];
    for p in img.pixels() {
        for c in 0..3 {
            sum[c] += f64::from(p.0[c]);
        }
    }
    let n = f64::from(img.width() * img.height()).max(1.0);
    sum.map(|s| s / n)
}

#[test]
fn a_clip_of_pictures_of_different_sizes_shows_each_for_its_time() {
    if bureau_media::external::find("ffmpeg").is_none() {
        eprintln!("ffmpeg is not on PATH (apt-get install ffmpeg): video not tested");
        return;
    }
    // A sticky note, a label and a screenshot: three sizes and three colourings. ffmpeg's
    // concat demuxer used to rebuild its filters at each size change and keep only the last
    // picture's two seconds.
    let tmp = tempfile::tempdir().unwrap();
    let spec = spec_in(
        tmp.path(),
        "[[video]]\nout = \"clip.mp4\"\nseconds_per_frame = 2\nwidth = 640\nheight = 360\n\
         [[video.frame]]\ntemplate = \"note\"\nlines = [\"first\"]\n\
         [[video.frame]]\ntemplate = \"label\"\ntitle = \"SECOND\"\nlines = [\"x\"]\n\
         [[video.frame]]\ntemplate = \"screenshot\"\ntitle = \"Third\"\nlines = [\"third\"]\n",
    );
    render_all(&spec, |_| {}).unwrap();
    let clip = tmp.path().join("clip.mp4");
    let frames: Vec<image::RgbImage> = [1.0, 3.0, 5.0]
        .iter()
        .map(|t| frame_at(&clip, *t).unwrap_or_else(|| panic!("no frame at {t} s")))
        .collect();
    let means: Vec<[f64; 3]> = frames.iter().map(mean_rgb).collect();
    // Yellow note: much more red and green than blue. Screenshot: a dark blue desktop.
    assert!(means[0][0] - means[0][2] > 40.0, "{means:?}");
    assert!(means[2][2] > means[2][0], "{means:?}");
    assert!(frames.iter().all(|f| f.dimensions() == (640, 360)));
    // Each pair differs pixel by pixel (a mean absolute difference over all channels).
    for (a, b) in [(0, 1), (1, 2), (0, 2)] {
        let total: f64 = frames[a]
            .pixels()
            .zip(frames[b].pixels())
            .map(|(p, q)| {
                (0..3)
                    .map(|c| f64::from(p.0[c].abs_diff(q.0[c])))
                    .sum::<f64>()
            })
            .sum();
        let d = total / f64::from(640 * 360);
        assert!(
            d > 20.0,
            "frames {a} and {b} look alike ({d:.1}): {means:?}"
        );
    }
}
