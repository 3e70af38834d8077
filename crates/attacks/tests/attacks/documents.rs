//! Attacks: documents. A file in the workspace (or a task's seed file) built to crash, exhaust
//! or hang its reader. See docs/security.md.
//!
//! Every attack runs its reader on a helper thread and waits a bounded time, so a reader that
//! hangs fails the test instead of hanging the suite; a reader that crashes takes the test
//! binary down, which fails the suite too (that is what these tests did before document
//! readers ran isolated).

use std::io::Write;
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use bureau_core::log::Actor;
use bureau_core::task::Task;
use bureau_core::tool::ToolOutcome;
use bureau_formats::office;
use bureau_world::World;
use serde_json::json;

/// Run `f` on a helper thread; panic if it takes longer than `limit`.
pub(crate) fn bounded<T: Send + 'static>(
    limit: Duration,
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(limit) {
        Ok(v) => v,
        Err(_) => panic!("{what} did not finish within {limit:?}: it hangs"),
    }
}

/// A PDF whose page draws a form XObject that draws itself: the text extractor recurses
/// until the stack overflows (the 641-byte file of issue 11 is of this family).
pub(crate) fn self_referencing_pdf() -> Vec<u8> {
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 /MediaBox [0 0 612 792] >>".to_string(),
        "<< /Type /Page /Parent 2 0 R /Resources << /XObject << /X 4 0 R >> >> /Contents 5 0 R >>"
            .to_string(),
        "<< /Type /XObject /Subtype /Form /BBox [0 0 1 1] /Length 5 >>\nstream\n/X Do\nendstream"
            .to_string(),
        "<< /Length 5 >>\nstream\n/X Do\nendstream".to_string(),
    ];
    // The binary comment real PDFs carry: the file is not text, so readers parse it.
    let mut out = b"%PDF-1.4\n%\xE2\xE3\xCF\xD3\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        write!(out, "{} 0 obj\n{body}\nendobj\n", i + 1).unwrap();
    }
    let xref = out.len();
    write!(out, "xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).unwrap();
    for o in &offsets {
        writeln!(out, "{o:010} 00000 n ").unwrap();
    }
    write!(
        out,
        "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
        objects.len() + 1
    )
    .unwrap();
    out
}

/// A zip holding `entries` (name, bytes), deflated.
pub(crate) fn zip_of(entries: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let mut zw = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, data) in entries {
        zw.start_file(*name, opts).unwrap();
        zw.write_all(data).unwrap();
    }
    zw.finish().unwrap().into_inner()
}

const CONTENT_TYPES: &str = r#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>"#;

/// A .docx whose document part is `xml`.
pub(crate) fn docx_with(xml: &[u8]) -> Vec<u8> {
    zip_of(&[
        ("[Content_Types].xml", CONTENT_TYPES.as_bytes().to_vec()),
        ("word/document.xml", xml.to_vec()),
    ])
}

/// A world whose workspace holds `files`, built from a minimal task.
pub(crate) fn world_with(files: &[(&str, &[u8])]) -> (tempfile::TempDir, World) {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("task");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("task.toml"),
        r#"
id = "attack"
title = "Attack"
persona = "ops manager"
category = "admin"
difficulty = "easy"
apps = ["files"]
timezone = "Europe/Berlin"
[user]
name = "Dana Reyes"
email = "dana@northwind.test"

[[turn]]
at = 2026-03-02T09:00:00
prompt = "Read the files."

[[rubric]]
id = "x"
description = "x"
kind = "result"
file_exists = "notes.md"
"#,
    )
    .unwrap();
    let seed = dir.join("world/files");
    std::fs::create_dir_all(&seed).unwrap();
    std::fs::write(seed.join("notes.md"), "notes\n").unwrap();
    let task = Task::load(&dir).unwrap_or_else(|e| panic!("{e}"));
    let world = World::build(&task, &d.path().join("trial")).unwrap();
    for (path, bytes) in files {
        let p = world.workspace().join(path);
        std::fs::create_dir_all(p.parent().unwrap_or(Path::new("."))).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
    (d, world)
}

fn tool(w: &mut World, name: &str, args: serde_json::Value) -> ToolOutcome {
    w.call_tool(Actor::Agent, name, &args)
}

#[test]
fn a_self_referencing_pdf_is_a_clear_error_not_a_crash() {
    let pdf = self_referencing_pdf();
    let started = Instant::now();
    let err = bounded(Duration::from_secs(90), "read_pdf", move || {
        office::read_pdf("loop.pdf", &pdf).map(|p| p.pages.len())
    })
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("loop.pdf: reading this file was stopped: "),
        "{err}"
    );
    assert!(err.contains("overflowed its stack"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(60));
}

#[test]
fn files_read_of_a_self_referencing_pdf_is_a_tool_error_and_the_world_goes_on() {
    let pdf = self_referencing_pdf();
    let outcome = bounded(Duration::from_secs(90), "files_read", move || {
        let (d, mut w) = world_with(&[("report.pdf", &pdf)]);
        let bad = tool(&mut w, "files_read", json!({"path": "report.pdf"}));
        let good = tool(&mut w, "files_read", json!({"path": "notes.md"}));
        drop(d);
        (bad, good)
    });
    match outcome.0 {
        ToolOutcome::Error { message } => {
            assert!(message.contains("report.pdf"), "{message}");
            assert!(message.contains("overflowed its stack"), "{message}");
        }
        other => panic!("expected a tool error, got {other:?}"),
    }
    assert!(
        matches!(&outcome.1, ToolOutcome::Ok { value, .. } if value.to_string().contains("notes")),
        "{:?}",
        outcome.1
    );
}

#[test]
fn the_text_rendering_of_a_self_referencing_pdf_is_a_clear_error() {
    let pdf = self_referencing_pdf();
    // Named .txt: the reader goes by the %PDF- header, as files_read and read_text do.
    let err = bounded(Duration::from_secs(90), "to_text", move || {
        office::to_text("notes.txt", &pdf).map(|_| ())
    })
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("notes.txt: reading this file was stopped: "),
        "{err}"
    );
}

// ---- held: these refusals already held before issue 11; they must keep holding ----

#[test]
fn held_a_docx_zip_bomb_is_refused() {
    // 200 MB of zeros deflate to ~200 KB: over the per-part limit.
    let bomb = docx_with(&vec![b'0'; 200 << 20]);
    assert!(bomb.len() < 1 << 20, "{}", bomb.len());
    let err = bounded(Duration::from_secs(90), "read_docx", move || {
        office::read_docx("bomb.docx", &bomb).map(|_| ())
    })
    .unwrap_err()
    .to_string();
    assert!(err.contains("refusing it as a possible zip bomb"), "{err}");
}

#[test]
fn held_an_xlsx_zip_bomb_is_refused() {
    let bomb = zip_of(&[
        ("[Content_Types].xml", b"<Types/>".to_vec()),
        ("xl/workbook.xml", b"<workbook/>".to_vec()),
        ("xl/worksheets/sheet1.xml", vec![b' '; 300 << 20]),
    ]);
    let err = bounded(Duration::from_secs(90), "sheet::read_file", move || {
        bureau_formats::sheet::read_file("bomb.xlsx", &bomb).map(|_| ())
    })
    .unwrap_err()
    .to_string();
    assert!(err.contains("zip bomb"), "{err}");
}

#[test]
fn held_billion_laughs_in_a_docx_does_not_expand() {
    let mut xml =
        String::from("<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n<!ENTITY lol \"lol\">\n");
    for i in 1..10 {
        let prev = if i == 1 {
            "lol".to_string()
        } else {
            format!("lol{}", i - 1)
        };
        xml.push_str(&format!(
            "<!ENTITY lol{i} \"{}\">\n",
            format!("&{prev};").repeat(10)
        ));
    }
    xml.push_str("]>\n<w:document xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\"><w:body><w:p><w:r><w:t>&lol9;</w:t></w:r></w:p></w:body></w:document>");
    let docx = docx_with(xml.as_bytes());
    let text = bounded(Duration::from_secs(60), "read_docx", move || {
        office::read_docx("lol.docx", &docx).map(|d| d.to_text())
    });
    // Entities are never expanded: the document reads as (at most) nothing, not 10^9 "lol"s.
    match text {
        Ok(t) => assert!(t.len() < 1000, "{} bytes", t.len()),
        Err(e) => assert!(e.to_string().starts_with("lol.docx: "), "{e}"),
    }
}

#[test]
fn held_deeply_nested_xml_is_refused() {
    // 50,000 levels in 550 KB (under 1 MiB, so no ratio check applies): the depth cap refuses.
    let xml = format!(
        "<w:document xmlns:w=\"x\">{}{}</w:document>",
        "<w:p>".repeat(50_000),
        "</w:p>".repeat(50_000)
    );
    let docx = docx_with(xml.as_bytes());
    let err = bounded(Duration::from_secs(60), "read_docx", move || {
        office::read_docx("deep.docx", &docx).map(|_| ())
    })
    .unwrap_err()
    .to_string();
    assert!(err.contains("nests elements more than 256 deep"), "{err}");
}

/// CRC-32 (IEEE) for hand-made PNG chunks.
fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for b in data {
        crc ^= u32::from(*b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A PNG whose header claims `w` × `h` pixels, with a few bytes of image data.
fn png_claiming(w: u32, h: u32) -> Vec<u8> {
    let chunk = |kind: &[u8], data: &[u8]| {
        let mut c = (data.len() as u32).to_be_bytes().to_vec();
        let mut body = kind.to_vec();
        body.extend_from_slice(data);
        c.extend_from_slice(&body);
        c.extend_from_slice(&crc32(&body).to_be_bytes());
        c
    };
    let mut ihdr = w.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend(chunk(b"IHDR", &ihdr));
    png.extend(chunk(
        b"IDAT",
        &[0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01],
    ));
    png.extend(chunk(b"IEND", &[]));
    png
}

#[test]
fn held_hostile_files_given_to_the_editing_and_converting_tools() {
    let deep = format!(
        "<w:document xmlns:w=\"x\"><w:body>{}{}</w:body></w:document>",
        "<w:p>".repeat(50_000),
        "</w:p>".repeat(50_000)
    );
    let files: Vec<(&str, Vec<u8>)> = vec![
        ("bomb.docx", docx_with(&vec![b'0'; 200 << 20])),
        ("deep.docx", docx_with(deep.as_bytes())),
        (
            "bomb.xlsx",
            zip_of(&[
                ("[Content_Types].xml", b"<Types/>".to_vec()),
                ("xl/workbook.xml", b"<workbook/>".to_vec()),
                ("xl/worksheets/sheet1.xml", vec![b' '; 300 << 20]),
            ]),
        ),
        ("huge.png", png_claiming(100_000, 100_000)),
        ("loop.pdf", self_referencing_pdf()),
    ];
    let refs: Vec<(&str, &[u8])> = files.iter().map(|(n, b)| (*n, b.as_slice())).collect();
    let (_d, w) = world_with(&refs);
    let out = bounded(Duration::from_secs(180), "the office tools", move || {
        let mut w = w;
        let calls = [
            (
                "files_edit_docx",
                json!({"path": "bomb.docx", "operations": [{"op": "delete", "block": 0}]}),
            ),
            (
                "files_edit_docx",
                json!({"path": "deep.docx", "operations": [{"op": "append", "text": "x"}]}),
            ),
            ("files_read", json!({"path": "deep.docx", "blocks": true})),
            (
                "files_set_cells",
                json!({"path": "bomb.xlsx", "cells": {"A1": 1}}),
            ),
            (
                "files_image_to_pdf",
                json!({"source": "huge.png", "path": "huge.pdf"}),
            ),
            (
                "files_pdf_to_docx",
                json!({"source": "loop.pdf", "path": "loop.docx"}),
            ),
        ];
        let started = Instant::now();
        let mut messages = Vec::new();
        for (name, args) in calls {
            match tool(&mut w, name, args) {
                ToolOutcome::Error { message } => messages.push(message),
                ToolOutcome::Ok { value, .. } => panic!("{name} accepted a hostile file: {value}"),
            }
        }
        // The world goes on, and nothing was written.
        assert!(matches!(
            tool(&mut w, "files_read", json!({"path": "notes.md"})),
            ToolOutcome::Ok { .. }
        ));
        assert!(!w.workspace().join("huge.pdf").exists());
        assert!(!w.workspace().join("loop.docx").exists());
        (messages, started.elapsed())
    });
    let (m, took) = out;
    assert!(m[0].contains("zip bomb"), "{}", m[0]);
    assert!(m[1].contains("deep"), "{}", m[1]);
    assert!(m[2].contains("deep"), "{}", m[2]);
    assert!(m[3].contains("zip bomb"), "{}", m[3]);
    assert!(m[4].contains("pixels"), "{}", m[4]);
    assert!(m[5].starts_with("loop.pdf: "), "{}", m[5]);
    eprintln!("six hostile files refused in {took:?}");
}
