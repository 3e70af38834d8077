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
        ToolOutcome::Ok { value, .. } => value,
        ToolOutcome::Error { message } => panic!("{tool} failed: {message}"),
    }
}

fn err(w: &mut World, tool: &str, args: Value) -> String {
    match w.call_tool(Actor::Agent, tool, &args) {
        ToolOutcome::Ok { value, .. } => panic!("{tool} should fail, got {value}"),
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

#[test]
fn read_blocks_then_edit_the_docx_in_place() {
    let (_d, mut w) = setup();
    ok(&mut w, "files_write_docx", memo_args());
    let r = ok(
        &mut w,
        "files_read",
        json!({"path": "out/memo.docx", "blocks": true}),
    );
    assert_eq!(r["blocks"], 5);
    assert_eq!(
        r["text"],
        "[0] # Offsite\n[1] Budget: 4,200 EUR.\n[2] - badges\n[3] - bus\n[4] table, 2 rows:\n| Who | Task |\n|---|---|\n| Sam | bus |\n"
    );
    let r = ok(
        &mut w,
        "files_edit_docx",
        json!({"path": "out/memo.docx", "operations": [
            {"op": "replace", "block": 1, "text": "Budget: 5,000 EUR."},
            {"op": "insert", "after": 3, "text": "ferry", "style": "List Bullet"},
            {"op": "delete", "block": 2},
            {"op": "set_cell", "block": 4, "row": 1, "col": 1, "text": "ferry"},
            {"op": "append_row", "block": 4, "cells": ["Ada", "badges"]},
            {"op": "append", "text": "Next steps", "style": "Heading 2"}
        ]}),
    );
    assert_eq!(r["operations"], 6);
    let text = ok(&mut w, "files_read", json!({"path": "out/memo.docx"}))["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        text,
        "# Offsite\n\nBudget: 5,000 EUR.\n\n- bus\n- ferry\n\n| Who | Task |\n|---|---|\n| Sam | ferry |\n| Ada | badges |\n\n## Next steps\n"
    );
    let last = w.log().last().unwrap();
    assert_eq!(
        (last.service.as_str(), last.action.as_str()),
        ("files", "edit_docx")
    );
    assert_eq!(last.actor, Actor::Agent);
    assert_eq!(last.payload["operations"][2], "delete 2");
    // A bad operation changes nothing, and says which operation and why.
    let before = w.files().read_bytes("out/memo.docx").unwrap();
    let n = w.log().len();
    let e = err(
        &mut w,
        "files_edit_docx",
        json!({"path": "out/memo.docx", "operations": [
            {"op": "delete", "block": 0},
            {"op": "set_cell", "block": 1, "row": 0, "col": 0, "text": "x"}
        ]}),
    );
    assert!(
        e.contains("operation 1 (set_cell 1 (0, 0))") && e.contains("not a table"),
        "{e}"
    );
    assert_eq!(w.files().read_bytes("out/memo.docx").unwrap(), before);
    assert_eq!(w.log().len(), n);
    let e = err(
        &mut w,
        "files_read",
        json!({"path": "notes.md", "blocks": true}),
    );
    assert!(e.contains("Word document"), "{e}");
    let e = err(
        &mut w,
        "files_edit_docx",
        json!({"path": "notes.md", "operations": [{"op": "delete", "block": 0}]}),
    );
    assert!(e.contains(".docx"), "{e}");
}

#[test]
fn set_cells_creates_and_updates_a_workspace_xlsx() {
    let (_d, mut w) = setup();
    let r = ok(
        &mut w,
        "files_set_cells",
        json!({"path": "out/budget.xlsx", "sheet": "Costs", "cells": {
            "A1": "Item", "B1": "Cost", "A2": "Desk", "B2": 120, "A3": "Lamp", "B3": "35.5",
            "B4": "=SUM(B2:B3)", "C1": true, "D1": "'007"
        }}),
    );
    assert_eq!(r["created"], true);
    assert_eq!(r["sheet"], "Costs");
    let total = r["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["cell"] == "B4")
        .unwrap()
        .clone();
    assert_eq!(total["value"], 155.5);
    assert_eq!(total["formula"], "=SUM(B2:B3)");
    // Change one input, clear another cell: the formula follows, the rest stays.
    let r = ok(
        &mut w,
        "files_set_cells",
        json!({"path": "out/budget.xlsx", "cells": {"B2": 200, "C1": null, "E2": "2026-03-01"}}),
    );
    assert_eq!(r["created"], false);
    // Nothing of a file Bureau wrote is lost, so there is no note.
    assert!(r.get("note").is_none(), "{r}");
    let r = ok(
        &mut w,
        "files_set_cells",
        json!({"path": "out/budget.xlsx", "cells": {"E2": null}}),
    );
    assert!(r.get("not_kept").is_none(), "{r}");
    let bytes = w.files().read_bytes("out/budget.xlsx").unwrap();
    let wb = bureau_formats::sheet::read_file("budget.xlsx", &bytes).unwrap();
    let s = &wb.sheets[0];
    let v = |a: &str| {
        s.value(bureau_formats::sheet::CellRef::parse(a).unwrap())
            .display()
    };
    assert_eq!(
        (v("A2"), v("B2"), v("B4"), v("C1"), v("D1")),
        (
            "Desk".into(),
            "200".into(),
            "235.5".into(),
            String::new(),
            "007".into()
        )
    );
    let log = w.log();
    let last = &log[log.len() - 2];
    assert_eq!(
        (last.service.as_str(), last.action.as_str()),
        ("files", "set_cells")
    );
    assert_eq!(last.payload["changes"][0]["cell"], "B2");
    assert_eq!(last.payload["changes"][0]["before"]["value"], 120.0);
    // Bad calls change nothing.
    let e = err(
        &mut w,
        "files_set_cells",
        json!({"path": "out/budget.xlsx", "sheet": "Nope", "cells": {"A1": 1}}),
    );
    assert!(
        e.contains("no sheet \"Nope\"") && e.contains("Costs"),
        "{e}"
    );
    let e = err(
        &mut w,
        "files_set_cells",
        json!({"path": "out/budget.xlsx", "cells": {"1A": 1}}),
    );
    assert!(e.contains("not a cell reference"), "{e}");
    let e = err(
        &mut w,
        "files_set_cells",
        json!({"path": "out/budget.xlsx", "cells": {"A1": "=SUM("}}),
    );
    assert!(e.contains("A1"), "{e}");
    assert_eq!(w.files().read_bytes("out/budget.xlsx").unwrap(), bytes);
    // A spreadsheet exports to PDF as a table of its values.
    ok(
        &mut w,
        "files_export_pdf",
        json!({"source": "out/budget.xlsx", "path": "out/budget.pdf"}),
    );
    let text = ok(&mut w, "files_read", json!({"path": "out/budget.pdf"}))["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        text.contains("Costs") && text.contains("Desk") && text.contains("235.5"),
        "{text}"
    );
}

#[test]
fn pdf_to_docx_and_image_to_pdf() {
    let (_d, mut w) = setup();
    ok(
        &mut w,
        "files_export_pdf",
        json!({"source": "notes.md", "path": "notes.pdf"}),
    );
    let r = ok(
        &mut w,
        "files_pdf_to_docx",
        json!({"source": "notes.pdf", "path": "notes.docx"}),
    );
    assert_eq!(r["pages"], 1);
    let text = ok(&mut w, "files_read", json!({"path": "notes.docx"}))["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        text.contains("Offsite notes") && text.contains("We meet in Delft."),
        "{text}"
    );
    assert_eq!(w.log().last().unwrap().action, "pdf_to_docx");
    // A 1×1 PNG.
    let png: &[u8] = &[
        0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44,
        0x52, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x02, 0x08, 0x02, 0x00, 0x00, 0x00, 0xfd,
        0xd4, 0x9a, 0x73, 0x00, 0x00, 0x00, 0x10, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0xf8,
        0xcf, 0x00, 0x04, 0x10, 0xe2, 0xff, 0x7f, 0x00, 0x1a, 0xf3, 0x04, 0xfc, 0xc7, 0x99, 0x3c,
        0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
    ];
    std::fs::write(w.files().root().join("scan.png"), png).unwrap();
    let r = ok(
        &mut w,
        "files_image_to_pdf",
        json!({"source": "scan.png", "path": "scan.pdf"}),
    );
    assert_eq!(r["created"], true);
    let read = ok(&mut w, "files_read", json!({"path": "scan.pdf"}));
    assert_eq!(read["format"], "pdf");
    let last = w.log().last().unwrap();
    assert_eq!(
        (last.action.as_str(), last.payload["source"].as_str()),
        ("image_to_pdf", Some("scan.png"))
    );
    let e = err(
        &mut w,
        "files_image_to_pdf",
        json!({"source": "notes.md", "path": "x.pdf"}),
    );
    assert!(e.contains("not a PNG or JPEG"), "{e}");
}

fn python(script: &str, arg: &Path) -> String {
    let ok = std::process::Command::new("python3")
        .args(["-c", "import openpyxl"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(
        ok,
        "this test needs Python 3 with openpyxl: run `python3 -m pip install openpyxl` (the CI script .ci/run does)"
    );
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(arg)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "python failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// An openpyxl workbook edited with files_set_cells opens in openpyxl with every sheet, value
/// and formula kept (and the new ones there); edited in place, its formatting stays too.
#[test]
fn openpyxl_reads_what_set_cells_wrote() {
    let (_d, mut w) = setup();
    let path = w.files().root().join("budget.xlsx");
    python(
        r##"
import openpyxl, datetime, sys
wb = openpyxl.Workbook()
ws = wb.active
ws.title = "Budget"
ws.append(["Item", "Cost", "Due"])
ws.append(["Rent", 1200, datetime.date(2026, 3, 1)])
ws.append(["Travel", 800.5, None])
ws["B4"] = "=SUM(B2:B3)"
notes = wb.create_sheet("Notes")
notes["A1"] = "keep me"
notes["B1"] = "=Budget!B4*2"
ws["A1"].font = openpyxl.styles.Font(bold=True)
ws["B3"].number_format = "#,##0.00"
ws.merge_cells("D1:E1")
ws.column_dimensions["A"].width = 30
wb.save(sys.argv[1])
"##,
        &path,
    );
    // No dates: edited in place.
    let r = ok(
        &mut w,
        "files_set_cells",
        json!({"path": "budget.xlsx", "sheet": "Budget", "cells": {
            "B3": 900, "A5": "Average & more", "B5": "=AVERAGE(B2:B3)", "A1": "Line", "C2": null, "A7": true
        }}),
    );
    assert_eq!(r["in_place"], true, "{r}");
    assert!(r.get("not_kept").is_none(), "{r}");
    let show = r#"
import openpyxl, json, sys
f = openpyxl.load_workbook(sys.argv[1])
v = openpyxl.load_workbook(sys.argv[1], data_only=True)
def show(x):
    return x.isoformat() if hasattr(x, "isoformat") else x
b = f["Budget"]
print(json.dumps({
  "sheets": f.sheetnames,
  "formulas": [b["B4"].value, b["B5"].value, f["Notes"]["B1"].value],
  "values": [[show(c) for c in row] for row in v["Budget"].iter_rows(values_only=True)],
  "notes": [v["Notes"]["A1"].value, v["Notes"]["B1"].value],
  "bold": b["A1"].font.b,
  "format": b["B3"].number_format,
  "merged": [str(m) for m in b.merged_cells.ranges],
  "width": b.column_dimensions["A"].width,
}))
"#;
    let got: Value = serde_json::from_str(&python(show, &path)).unwrap();
    assert_eq!(
        got,
        json!({
            "sheets": ["Budget", "Notes"],
            "formulas": ["=SUM(B2:B3)", "=AVERAGE(B2:B3)", "=Budget!B4*2"],
            "values": [
                ["Line", "Cost", "Due", null, null],
                ["Rent", 1200, null, null, null],
                ["Travel", 900, null, null, null],
                [null, 2100, null, null, null],
                ["Average & more", 1050, null, null, null],
                [null, null, null, null, null],
                [true, null, null, null, null],
            ],
            "notes": ["keep me", 4200],
            "bold": true,
            "format": "#,##0.00",
            "merged": ["D1:E1"],
            "width": 30.0,
        })
    );
    // Bureau reads the in-place edit back, dependents recomputed.
    let bytes = w.files().read_bytes("budget.xlsx").unwrap();
    let wb = bureau_formats::sheet::read_file("budget.xlsx", &bytes).unwrap();
    let at = |a: &str| bureau_formats::sheet::CellRef::parse(a).unwrap();
    assert_eq!(wb.sheets[1].value(at("B1")).display(), "4200");
    assert_eq!(wb.sheets[0].value(at("A5")).display(), "Average & more");

    // A date is written in place too, with a date format.
    let r = ok(
        &mut w,
        "files_set_cells",
        json!({"path": "budget.xlsx", "sheet": "Budget", "cells": {"C3": "2026-04-15"}}),
    );
    assert_eq!(r["in_place"], true);
    let got: Value = serde_json::from_str(&python(
        r#"
import openpyxl, json, sys
v = openpyxl.load_workbook(sys.argv[1], data_only=True)
print(json.dumps([v["Budget"]["C3"].value.isoformat(), v["Budget"]["A1"].font.b]))
"#,
        &path,
    ))
    .unwrap();
    assert_eq!(got, json!(["2026-04-15T00:00:00", true]));
    // Text with a control character cannot be: the workbook is rewritten, and the result
    // says what that dropped.
    let r = ok(
        &mut w,
        "files_set_cells",
        json!({"path": "budget.xlsx", "sheet": "Budget", "cells": {"A8": "bell\u{7}"}}),
    );
    assert_eq!(r["in_place"], false);
    assert_eq!(
        r["not_kept"],
        json!([
            "cell formatting",
            "column widths or row heights",
            "merged cells"
        ])
    );
    assert!(r["note"].as_str().unwrap().contains("were not kept"));
    let got: Value = serde_json::from_str(&python(
        r#"
import openpyxl, json, sys
v = openpyxl.load_workbook(sys.argv[1], data_only=True)
print(json.dumps([v.sheetnames, v["Budget"]["C3"].value.isoformat(), v["Budget"]["B4"].value, v["Notes"]["B1"].value]))
"#,
        &path,
    ))
    .unwrap();
    assert_eq!(
        got,
        json!([["Budget", "Notes"], "2026-04-15T00:00:00", 2100, 4200])
    );
}
