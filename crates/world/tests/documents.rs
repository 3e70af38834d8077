//! Office documents through the world's tools: files_write_docx, files_export_pdf, and
//! files_read rendering office files as text.

use std::path::Path;

use bureau_core::log::Actor;
use bureau_core::task::Task;
use bureau_core::tool::ToolOutcome;
use bureau_world::World;
use serde_json::{Value, json};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn setup() -> (tempfile::TempDir, World) {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("task");
    write(
        &dir.join("task.toml"),
        r#"
id = "docs"
title = "Docs"
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
prompt = "Write the memo."

[[rubric]]
id = "x"
description = "x"
kind = "result"
file_exists = "memo.docx"
"#,
    );
    write(
        &dir.join("world/files/notes.md"),
        "# Offsite notes\n\nWe meet in Delft.\n\n- bring badges\n- book the bus\n",
    );
    let t = Task::load(&dir).unwrap_or_else(|e| panic!("{e}"));
    let w = World::build(&t, &d.path().join("trial")).unwrap();
    (d, w)
}

fn ok(w: &mut World, tool: &str, args: Value) -> Value {
    match w.call_tool(Actor::Agent, tool, &args) {
        ToolOutcome::Ok { value } => value,
        ToolOutcome::Error { message } => panic!("{tool} failed: {message}"),
    }
}

fn err(w: &mut World, tool: &str, args: Value) -> String {
    match w.call_tool(Actor::Agent, tool, &args) {
        ToolOutcome::Ok { value } => panic!("{tool} should fail, got {value}"),
        ToolOutcome::Error { message } => message,
    }
}

fn memo_args() -> Value {
    json!({"path": "out/memo.docx", "blocks": [
        {"type": "heading", "level": 1, "text": "Offsite"},
        {"type": "paragraph", "text": "Budget: 4,200 EUR."},
        {"type": "bullets", "items": ["badges", "bus"]},
        {"type": "table", "rows": [["Who", "Task"], ["Sam", "bus"]]}
    ]})
}

#[test]
fn write_docx_then_read_it_back_as_text() {
    let (_d, mut w) = setup();
    let r = ok(&mut w, "files_write_docx", memo_args());
    assert_eq!(r["created"], true);
    let read = ok(&mut w, "files_read", json!({"path": "out/memo.docx"}));
    assert_eq!(read["format"], "docx");
    assert_eq!(
        read["text"],
        "# Offsite\n\nBudget: 4,200 EUR.\n\n- badges\n- bus\n\n| Who | Task |\n|---|---|\n| Sam | bus |\n"
    );
    let last = w.log().last().unwrap();
    assert_eq!(
        (last.service.as_str(), last.action.as_str()),
        ("files", "write_docx")
    );
    assert_eq!(last.payload["path"], "out/memo.docx");
    // Overwrite reports created = false.
    assert_eq!(
        ok(&mut w, "files_write_docx", memo_args())["created"],
        false
    );
}

#[test]
fn export_pdf_from_markdown_and_docx() {
    let (_d, mut w) = setup();
    let r = ok(
        &mut w,
        "files_export_pdf",
        json!({"source": "notes.md", "path": "notes.pdf"}),
    );
    assert_eq!(r["pages"], 1);
    let read = ok(&mut w, "files_read", json!({"path": "notes.pdf"}));
    assert_eq!(read["format"], "pdf");
    let text = read["text"].as_str().unwrap();
    assert!(
        text.starts_with("## Page 1\n")
            && text.contains("Offsite notes")
            && text.contains("book the bus"),
        "{text}"
    );
    ok(&mut w, "files_write_docx", memo_args());
    ok(
        &mut w,
        "files_export_pdf",
        json!({"source": "out/memo.docx", "path": "out/memo.pdf"}),
    );
    let text = ok(&mut w, "files_read", json!({"path": "out/memo.pdf"}))["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        text.contains("Budget: 4,200 EUR.") && text.contains("Sam"),
        "{text}"
    );
    let last = w.log().last().unwrap();
    assert_eq!(last.action, "export_pdf");
    assert_eq!(last.payload["source"], "out/memo.docx");
}

#[test]
fn bad_calls_say_what_to_fix_and_change_nothing() {
    let (_d, mut w) = setup();
    let before = w.log().len();
    assert!(
        err(
            &mut w,
            "files_write_docx",
            json!({"path": "memo.txt", "blocks": []})
        )
        .contains("must end with .docx")
    );
    assert!(
        err(
            &mut w,
            "files_write_docx",
            json!({"path": "m.docx", "blocks": [{"type": "heading", "level": 9, "text": "x"}]})
        )
        .contains("1 to 6")
    );
    assert!(
        err(
            &mut w,
            "files_write_docx",
            json!({"path": "m.docx", "blocks": [{"type": "image", "src": "x"}]})
        )
        .contains("invalid arguments")
    );
    assert!(
        err(
            &mut w,
            "files_export_pdf",
            json!({"source": "missing.md", "path": "x.pdf"})
        )
        .contains("no file")
    );
    assert!(
        err(
            &mut w,
            "files_export_pdf",
            json!({"source": "notes.md", "path": "x.docx"})
        )
        .contains(".pdf")
    );
    assert!(!w.files().exists("m.docx") && !w.files().exists("x.pdf"));
    assert_eq!(w.log().len(), before);
}

#[test]
fn corrupt_office_file_is_a_tool_error_with_the_reason() {
    let (_d, mut w) = setup();
    std::fs::write(
        w.workspace().join("broken.docx"),
        b"PK\x03\x04garbage\x00\x01",
    )
    .unwrap();
    let m = err(&mut w, "files_read", json!({"path": "broken.docx"}));
    assert!(m.contains("broken.docx") && m.contains("corrupt"), "{m}");
    // An unknown binary is still reported as binary, not an error.
    std::fs::write(w.workspace().join("photo.raw"), [0u8, 1, 2, 3]).unwrap();
    assert_eq!(
        ok(&mut w, "files_read", json!({"path": "photo.raw"}))["binary"],
        true
    );
}

#[test]
fn snapshot_restore_brings_back_the_document() {
    let (_d, mut w) = setup();
    ok(&mut w, "files_write_docx", memo_args());
    let snap = w.snapshot().unwrap();
    let first = ok(&mut w, "files_read", json!({"path": "out/memo.docx"}))["text"].clone();
    ok(
        &mut w,
        "files_write_docx",
        json!({"path": "out/memo.docx", "blocks": [{"type": "paragraph", "text": "changed"}]}),
    );
    assert_eq!(
        ok(&mut w, "files_read", json!({"path": "out/memo.docx"}))["text"],
        "changed\n"
    );
    w.restore(&snap).unwrap();
    assert_eq!(
        ok(&mut w, "files_read", json!({"path": "out/memo.docx"}))["text"],
        first
    );
}
