//! Media through the world's tools: files_read shows pictures, sounds, video key frames and
//! scanned PDF pages as media parts beside a description; mail_read_attachment does the same
//! for an attachment; files_ocr reads text in a picture; bad media (a lying name, a
//! decompression bomb, a cut file, a PDF of 10,000 pages, two hours of audio) are bounded, a
//! clear error or a note, never a crash or a hang.

use std::io::Cursor;
use std::path::Path;
use std::time::{Duration, Instant};

use bureau_core::log::Actor;
use bureau_core::task::Task;
use bureau_core::tool::{MediaKind, ToolOutcome};
use bureau_world::World;
use serde_json::{Value, json};

fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

fn setup(apps: &str, files: &[(&str, Vec<u8>)]) -> (tempfile::TempDir, World) {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("task");
    write(
        &dir.join("task.toml"),
        format!(
            r#"
id = "media"
title = "Media"
persona = "office manager"
category = "admin"
difficulty = "easy"
apps = [{apps}]
[user]
name = "Dana Reyes"
email = "dana@northwind.test"

[[turn]]
at = 2026-03-02T09:00:00
prompt = "Look at the receipt."

[[rubric]]
id = "x"
description = "x"
kind = "result"
file_exists = "claim.md"
"#
        )
        .as_bytes(),
    );
    for (name, bytes) in files {
        if name.starts_with("world/") {
            write(&dir.join(name), bytes);
        } else {
            write(&dir.join("world/files").join(name), bytes);
        }
    }
    let t = Task::load(&dir).unwrap_or_else(|e| panic!("{e}"));
    let w = World::build(&t, &d.path().join("trial")).unwrap();
    (d, w)
}

fn call(w: &mut World, tool: &str, args: Value) -> ToolOutcome {
    w.call_tool(Actor::Agent, tool, &args)
}

fn err(w: &mut World, tool: &str, args: Value) -> String {
    match call(w, tool, args) {
        ToolOutcome::Error { message } => message,
        ToolOutcome::Ok { value, .. } => panic!("{tool} should fail, got {value}"),
    }
}

fn png(w: u32, h: u32) -> Vec<u8> {
    let img = image::RgbImage::from_fn(w, h, |x, y| {
        image::Rgb([(x % 251) as u8, (y % 241) as u8, 90])
    });
    let mut out = Vec::new();
    image::DynamicImage::ImageRgb8(img)
        .write_to(&mut Cursor::new(&mut out), image::ImageFormat::Png)
        .unwrap();
    out
}

fn wav(seconds: u32, rate: u32) -> Vec<u8> {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: rate,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut out = Vec::new();
    let mut w = hound::WavWriter::new(Cursor::new(&mut out), spec).unwrap();
    for i in 0..seconds * rate {
        w.write_sample(((i % 50) as i16 - 25) * 300).unwrap();
    }
    w.finalize().unwrap();
    out
}

fn b64(data: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap()
}

#[test]
fn a_picture_comes_back_as_an_image_with_its_description() {
    let bytes = png(64, 48);
    let (_d, mut w) = setup("\"files\"", &[("receipts/lunch.png", bytes.clone())]);
    let ToolOutcome::Ok { value, media } =
        call(&mut w, "files_read", json!({"path": "receipts/lunch.png"}))
    else {
        panic!()
    };
    assert_eq!(value["media"], "image");
    assert_eq!(
        (value["width"].as_u64(), value["height"].as_u64()),
        (Some(64), Some(48))
    );
    assert!(value["description"].as_str().unwrap().contains("64×48"));
    assert_eq!(media.len(), 1);
    assert_eq!(media[0].kind, MediaKind::Image);
    assert_eq!(media[0].mime_type, "image/png");
    assert_eq!(b64(&media[0].data), bytes);
    assert_eq!(media[0].label, "lunch.png, 64×48");
}

#[test]
fn a_large_photo_is_scaled_down_and_the_note_says_so() {
    let (_d, mut w) = setup("\"files\"", &[("photo.png", png(3000, 1000))]);
    let ToolOutcome::Ok { value, media } = call(&mut w, "files_read", json!({"path": "photo.png"}))
    else {
        panic!()
    };
    assert_eq!(value["width"], 3000);
    let notes = value["notes"].to_string();
    assert!(
        notes.contains("scaled from 3000×1000 to 1568×522"),
        "{notes}"
    );
    let shown = image::load_from_memory(&b64(&media[0].data)).unwrap();
    assert_eq!((shown.width(), shown.height()), (1568, 522));
}

#[test]
fn a_scanned_pdf_shows_its_pages_as_images() {
    let page = png(400, 560);
    let pdf = bureau_formats::office::image_to_pdf("scan.png", &page).unwrap();
    let (_d, mut w) = setup("\"files\"", &[("contracts/signed.pdf", pdf)]);
    let ToolOutcome::Ok { value, media } = call(
        &mut w,
        "files_read",
        json!({"path": "contracts/signed.pdf"}),
    ) else {
        panic!()
    };
    assert_eq!(value["format"], "pdf");
    assert_eq!(value["media"], "scan");
    assert_eq!(value["image_pages"], json!([1]));
    assert_eq!(media.len(), 1);
    assert_eq!(media[0].label, "page 1 of 1 of signed.pdf");
    let shown = image::load_from_memory(&b64(&media[0].data))
        .unwrap()
        .to_rgb8();
    assert_eq!((shown.width(), shown.height()), (400, 560));
    // The pixels are the page's (PNG → Flate in the PDF → PNG again, losslessly).
    let original = image::load_from_memory(&page).unwrap().to_rgb8();
    assert_eq!(shown.as_raw(), original.as_raw());
}

#[test]
fn a_pdf_with_text_gets_no_images() {
    let pdf = bureau_formats::office::write_pdf("Quarterly report", "Revenue grew 4 percent.");
    let (_d, mut w) = setup("\"files\"", &[("report.pdf", pdf)]);
    let ToolOutcome::Ok { value, media } =
        call(&mut w, "files_read", json!({"path": "report.pdf"}))
    else {
        panic!()
    };
    assert!(value["text"].as_str().unwrap().contains("Revenue grew"));
    assert!(media.is_empty());
    assert!(value.get("media").is_none());
}

#[test]
fn a_voicemail_comes_back_as_audio_and_two_hours_are_cut() {
    let short = wav(3, 8000);
    let long = wav(2 * 3600, 1000);
    let (_d, mut w) = setup(
        "\"files\"",
        &[("vm.wav", short.clone()), ("meeting.wav", long)],
    );
    let ToolOutcome::Ok { value, media } = call(&mut w, "files_read", json!({"path": "vm.wav"}))
    else {
        panic!()
    };
    assert_eq!(value["media"], "audio");
    assert_eq!(value["duration_seconds"], 3.0);
    assert_eq!(media[0].kind, MediaKind::Audio);
    assert_eq!(b64(&media[0].data), short);
    let started = Instant::now();
    let ToolOutcome::Ok { value, media } =
        call(&mut w, "files_read", json!({"path": "meeting.wav"}))
    else {
        panic!()
    };
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(value["duration_seconds"], 7200.0);
    assert!(
        value["notes"]
            .to_string()
            .contains("cut to its first 180 s of 7200 s"),
        "{value}"
    );
    let cut = hound::WavReader::new(Cursor::new(b64(&media[0].data))).unwrap();
    assert_eq!(cut.duration(), 180 * 1000);
}

#[test]
fn a_png_that_is_not_one_is_a_clear_error() {
    let (_d, mut w) = setup(
        "\"files\"",
        &[
            ("fake.png", b"this is a text file with a .png name".to_vec()),
            ("cut.png", png(200, 200)[..300].to_vec()),
        ],
    );
    let m = err(&mut w, "files_read", json!({"path": "fake.png"}));
    assert!(
        m.contains("fake.png") && m.contains("the bytes are not png"),
        "{m}"
    );
    let m = err(&mut w, "files_read", json!({"path": "cut.png"}));
    assert!(m.contains("cut.png"), "{m}");
}

#[test]
fn a_decompression_bomb_is_refused_before_it_is_inflated() {
    // 20000×20000 of one colour (400 million pixels) compresses to about two megabytes.
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, 20000, 20000);
        enc.set_color(png::ColorType::Grayscale);
        enc.set_compression(png::Compression::Fast);
        let mut w = enc.write_header().unwrap();
        let mut sw = w.stream_writer().unwrap();
        let row = vec![0u8; 20000];
        for _ in 0..20000 {
            std::io::Write::write_all(&mut sw, &row).unwrap();
        }
        sw.finish().unwrap();
    }
    assert!(out.len() < 4_000_000, "{}", out.len());
    let (_d, mut w) = setup("\"files\"", &[("bomb.png", out)]);
    let started = Instant::now();
    let m = err(&mut w, "files_read", json!({"path": "bomb.png"}));
    assert!(m.contains("decompression bomb"), "{m}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// A PDF of `n` empty pages (no text, no image).
fn pdf_of_pages(n: usize) -> Vec<u8> {
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    let kids: Vec<String> = (0..n).map(|i| format!("{} 0 R", i + 3)).collect();
    offsets.push(out.len());
    out.extend_from_slice(b"1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n");
    offsets.push(out.len());
    out.extend_from_slice(
        format!(
            "2 0 obj << /Type /Pages /Kids [{}] /Count {n} >> endobj\n",
            kids.join(" ")
        )
        .as_bytes(),
    );
    for i in 0..n {
        offsets.push(out.len());
        out.extend_from_slice(
            format!(
                "{} 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >> endobj\n",
                i + 3
            )
            .as_bytes(),
        );
    }
    let xref = out.len();
    out.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", n + 3).as_bytes());
    for o in offsets {
        out.extend_from_slice(format!("{o:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer << /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            n + 3
        )
        .as_bytes(),
    );
    out
}

#[test]
fn a_pdf_of_ten_thousand_pages_is_bounded() {
    let (_d, mut w) = setup("\"files\"", &[("huge.pdf", pdf_of_pages(10_000))]);
    let started = Instant::now();
    let outcome = call(&mut w, "files_read", json!({"path": "huge.pdf"}));
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    match outcome {
        ToolOutcome::Error { message } => assert!(message.contains("huge.pdf"), "{message}"),
        ToolOutcome::Ok { value, media } => {
            assert!(media.len() <= 8, "{}", media.len());
            assert!(value["notes"].to_string().contains("page"), "{value}");
        }
    }
}

#[test]
fn a_mail_attachment_is_read_in_place_as_media() {
    let bytes = png(32, 32);
    // A message with the picture attached, as a colleague would send it.
    let eml = mail_builder::MessageBuilder::new()
        .from(("Marek", "marek@kessler.test"))
        .to("dana@northwind.test")
        .subject("Photo of the label")
        .date(1_772_438_400i64)
        .message_id("label@kessler.test")
        .text_body("See the photo.")
        .attachment("image/png", "label.png", bytes.clone())
        .write_to_vec()
        .unwrap();
    let (_d, mut w) = setup(
        "\"files\", \"mail\"",
        &[("world/mail/dana@northwind.test/label.eml", eml)],
    );
    let ToolOutcome::Ok { value: list, .. } = call(&mut w, "mail_list", json!({})) else {
        panic!()
    };
    let id = list["messages"][0]["id"].as_str().unwrap().to_string();
    let ToolOutcome::Ok { value, media } = call(
        &mut w,
        "mail_read_attachment",
        json!({"id": id, "filename": "label.png"}),
    ) else {
        panic!()
    };
    assert_eq!(value["filename"], "label.png");
    assert_eq!(value["media"], "image");
    assert_eq!(b64(&media[0].data), bytes);
    let m = err(
        &mut w,
        "mail_read_attachment",
        json!({"id": id, "filename": "nope.png"}),
    );
    assert!(m.contains("its attachments: label.png"), "{m}");
}

#[test]
fn files_ocr_is_offered_only_to_offices_with_the_ocr_app() {
    let (_d, mut w) = setup("\"files\"", &[("a.png", png(10, 10))]);
    let m = err(&mut w, "files_ocr", json!({"path": "a.png"}));
    assert!(m.contains("not available in this office"), "{m}");
    assert!(!w.offered_tool_specs().iter().any(|s| s.name == "files_ocr"));
    let (_d, w) = setup("\"files\", \"ocr\"", &[]);
    assert!(w.offered_tool_specs().iter().any(|s| s.name == "files_ocr"));
}
