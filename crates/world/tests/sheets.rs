//! The spreadsheets service end to end: seed from .csv/.xlsx, tools, a colleague's silent
//! edit (an `act` event), recalculation, export/import, files_read of spreadsheets,
//! snapshot/restore.

use std::path::Path;

use bureau_core::log::Actor;
use bureau_core::task::Task;
use bureau_core::tool::ToolOutcome;
use bureau_formats::sheet::{self, CellRef, CellValue, Workbook};
use bureau_world::World;
use serde_json::{Value, json};

fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

fn task(dir: &Path) -> Task {
    write(
        &dir.join("task.toml"),
        br#"
id = "t"
title = "T"
persona = "finance"
category = "finance"
difficulty = "easy"
apps = ["files", "sheets"]
timezone = "Europe/Amsterdam"
[user]
name = "Dana Reyes"
email = "dana@brightwater.test"

[[turn]]
at = 2026-03-02T09:00:00
prompt = "Day one."

[[turn]]
at = 2026-03-03T09:00:00
prompt = "Day two."
[[turn.event]]
kind = "act"
silent = true
as = "priya"
tool = "sheets_write"
args = { spreadsheet = "budget", range = "B3", values = [[900]] }

[[rubric]]
id = "x"
description = "x"
kind = "result"
file_exists = "notes.md"
"#,
    );
    write(
        &dir.join("world/people.toml"),
        br#"
[[person]]
name = "Priya Shah"
email = "priya.shah@brightwater.test"
handle = "priya"
role = "Controller"
department = "Finance"
"#,
    );
    write(
        &dir.join("world/sheets/Budget.csv"),
        b"Item,Amount\nRent,1200\nTravel,800\nTotal,2000\n",
    );
    let mut wb = Workbook::default();
    let s = wb.add_sheet("Q1").unwrap();
    wb.set_input(s, CellRef::parse("A1").unwrap(), "10")
        .unwrap();
    wb.set_input(s, CellRef::parse("A2").unwrap(), "=A1*3")
        .unwrap();
    wb.recalculate();
    write(
        &dir.join("world/sheets/Forecast.xlsx"),
        &sheet::write_xlsx(&wb).unwrap(),
    );
    write(&dir.join("world/files/readme.md"), b"hello\n");
    Task::load(dir).unwrap_or_else(|e| panic!("{e}"))
}

fn setup() -> (tempfile::TempDir, Task, World) {
    let d = tempfile::tempdir().unwrap();
    let t = task(&d.path().join("task"));
    let w = World::build(&t, &d.path().join("trial")).unwrap();
    (d, t, w)
}

fn ok(w: &mut World, tool: &str, args: Value) -> Value {
    match w.call_tool(Actor::Agent, tool, &args) {
        ToolOutcome::Ok { value, .. } => value,
        ToolOutcome::Error { message } => panic!("{tool}: {message}"),
    }
}

fn fail(w: &mut World, tool: &str, args: Value) -> String {
    match w.call_tool(Actor::Agent, tool, &args) {
        ToolOutcome::Ok { value, .. } => panic!("{tool} should fail: {value}"),
        ToolOutcome::Error { message } => message,
    }
}

fn value(w: &World, book: &str, cell: &str) -> CellValue {
    w.sheets().get(book).unwrap().sheets[0].value(CellRef::parse(cell).unwrap())
}

#[test]
fn seeds_list_and_read() {
    let (_d, _t, mut w) = setup();
    let l = ok(&mut w, "sheets_list", json!({}));
    assert_eq!(l["spreadsheets"][0]["name"], "Budget");
    assert_eq!(l["spreadsheets"][0]["sheets"][0]["name"], "Budget");
    assert_eq!(l["spreadsheets"][0]["sheets"][0]["used_range"], "A1:B4");
    assert_eq!(l["spreadsheets"][1]["sheets"][0]["name"], "Q1");
    let r = ok(
        &mut w,
        "sheets_read",
        json!({"spreadsheet": "forecast", "range": "A1:A2"}),
    );
    assert_eq!(
        r["cells"],
        json!([
            {"cell": "A1", "type": "number", "value": 10.0},
            {"cell": "A2", "type": "number", "value": 30.0, "formula": "=A1*3"}
        ])
    );
    let r = ok(
        &mut w,
        "sheets_read",
        json!({"spreadsheet": "Budget", "range": "Budget!A2"}),
    );
    assert_eq!(r["cells"][0]["value"], "Rent");
    assert!(
        fail(&mut w, "sheets_read", json!({"spreadsheet": "Nope"})).contains("Budget, Forecast")
    );
    assert!(
        fail(
            &mut w,
            "sheets_read",
            json!({"spreadsheet": "Budget", "sheet": "X"})
        )
        .contains("its sheets are: Budget")
    );
    assert!(
        fail(
            &mut w,
            "sheets_read",
            json!({"spreadsheet": "Budget", "range": "hello"})
        )
        .contains("A1 range")
    );
}

#[test]
fn writes_recalculate_dependents_and_are_logged() {
    let (_d, _t, mut w) = setup();
    let r = ok(
        &mut w,
        "sheets_write",
        json!({"spreadsheet": "Budget", "range": "B4", "values": [["=SUM(B2:B3)"]]}),
    );
    assert_eq!(r["cells"][0]["value"], 2000.0);
    assert_eq!(value(&w, "Budget", "B4"), CellValue::Number(2000.0));
    let r = ok(
        &mut w,
        "sheets_write",
        json!({"spreadsheet": "Budget", "range": "B2", "values": [[1500]]}),
    );
    assert_eq!(r["recalculated"][0]["cell"], "B4");
    assert_eq!(r["recalculated"][0]["value"], 2300.0);
    let log = w.log().last().unwrap();
    assert_eq!(
        (log.service.as_str(), log.action.as_str()),
        ("sheets", "write")
    );
    assert_eq!(log.payload["changes"][0]["before"]["value"], 1200.0);
    assert_eq!(log.payload["changes"][0]["after"]["value"], 1500.0);
    // A bad formula changes nothing.
    let n = w.log().len();
    let e = fail(
        &mut w,
        "sheets_write",
        json!({"spreadsheet": "Budget", "range": "C1", "values": [["ok", "=SUM(B2:"]]}),
    );
    assert!(e.starts_with("D1:"), "{e}");
    assert_eq!(w.log().len(), n);
    assert_eq!(value(&w, "Budget", "C1"), CellValue::Empty);
    // Values must fit a range.
    assert!(
        fail(
            &mut w,
            "sheets_write",
            json!({"spreadsheet": "Budget", "range": "A1:A2", "values": [[1], [2], [3]]})
        )
        .contains("do not fit")
    );
    // Text stays text with a leading quote; strings are typed like typing.
    ok(
        &mut w,
        "sheets_write",
        json!({"spreadsheet": "Budget", "range": "C2", "values": [["'0042", "2026-03-01", true, null]]}),
    );
    assert_eq!(value(&w, "Budget", "C2"), CellValue::Text("0042".into()));
    assert!(matches!(value(&w, "Budget", "D2"), CellValue::Date(_)));
    assert_eq!(value(&w, "Budget", "E2"), CellValue::Bool(true));
}

#[test]
fn append_find_add_sheet_create() {
    let (_d, _t, mut w) = setup();
    let r = ok(
        &mut w,
        "sheets_append_rows",
        json!({"spreadsheet": "Budget", "rows": [["Training", 450], ["Misc", "=B2/10"]]}),
    );
    assert_eq!(r["range"], "A5:B6");
    assert_eq!(value(&w, "Budget", "B6"), CellValue::Number(120.0));
    let f = ok(&mut w, "sheets_find", json!({"query": "travel"}));
    assert_eq!(f["matches"][0]["cell"], "A3");
    assert_eq!(f["matches"][0]["spreadsheet"], "Budget");
    let f = ok(&mut w, "sheets_find", json!({"query": 800}));
    assert_eq!(f["matches"][0]["cell"], "B3");
    let f = ok(
        &mut w,
        "sheets_find",
        json!({"query": "a1*", "in_formulas": true}),
    );
    assert_eq!(f["matches"][0]["spreadsheet"], "Forecast");
    ok(
        &mut w,
        "sheets_add_sheet",
        json!({"spreadsheet": "Budget", "sheet": "Summary"}),
    );
    assert!(
        fail(
            &mut w,
            "sheets_add_sheet",
            json!({"spreadsheet": "Budget", "sheet": "summary"})
        )
        .contains("already exists")
    );
    assert!(
        fail(
            &mut w,
            "sheets_add_sheet",
            json!({"spreadsheet": "Budget", "sheet": "a/b"})
        )
        .contains("cannot contain")
    );
    ok(
        &mut w,
        "sheets_write",
        json!({"spreadsheet": "Budget", "sheet": "Summary", "range": "A1", "values": [["=Budget!B2+Forecast!A1"]]}),
    );
    // Other spreadsheets are not reachable from formulas: only sheets of the same workbook.
    assert_eq!(
        w.sheets().get("Budget").unwrap().sheets[1].value(CellRef::parse("A1").unwrap()),
        CellValue::Error("#REF!".into())
    );
    ok(
        &mut w,
        "sheets_create",
        json!({"name": "Plan", "sheets": ["Jan", "Feb"]}),
    );
    assert!(fail(&mut w, "sheets_create", json!({"name": "plan"})).contains("already exists"));
    assert_eq!(w.sheets().get("plan").unwrap().sheets[1].name, "Feb");
}

#[test]
fn colleague_edits_silently_and_everything_restores() {
    let (_d, t, mut w) = setup();
    w.begin_turn(&t.turns[0]).unwrap();
    ok(
        &mut w,
        "sheets_write",
        json!({"spreadsheet": "Budget", "range": "B4", "values": [["=B2+B3"]]}),
    );
    let snap = w.snapshot().unwrap();
    let before = w.sheets().clone();
    w.begin_turn(&t.turns[1]).unwrap();
    assert_eq!(value(&w, "Budget", "B3"), CellValue::Number(900.0));
    assert_eq!(value(&w, "Budget", "B4"), CellValue::Number(2100.0));
    let entry = w.log().last().unwrap();
    assert!(entry.silent);
    assert_eq!(
        entry.actor,
        Actor::Colleague("priya.shah@brightwater.test".into())
    );
    assert_eq!(entry.payload["by"], "priya.shah@brightwater.test");
    ok(&mut w, "sheets_create", json!({"name": "Scratch"}));
    w.restore(&snap).unwrap();
    assert_eq!(w.sheets(), &before);
    assert_eq!(value(&w, "Budget", "B4"), CellValue::Number(2000.0));
}

#[test]
fn export_import_and_files_read() {
    let (_d, _t, mut w) = setup();
    ok(
        &mut w,
        "sheets_write",
        json!({"spreadsheet": "Budget", "range": "B4", "values": [["=SUM(B2:B3)"]]}),
    );
    let r = ok(
        &mut w,
        "sheets_export",
        json!({"spreadsheet": "Budget", "path": "out/budget.xlsx"}),
    );
    assert!(r["size"].as_u64().unwrap() > 1000);
    assert!(
        fail(
            &mut w,
            "sheets_export",
            json!({"spreadsheet": "Budget", "path": "out/budget.xlsx"})
        )
        .contains("overwrite")
    );
    assert!(
        fail(
            &mut w,
            "sheets_export",
            json!({"spreadsheet": "Budget", "path": "out/budget.ods"})
        )
        .contains(".xlsx")
    );
    ok(
        &mut w,
        "sheets_export",
        json!({"spreadsheet": "Budget", "path": "out/budget.csv"}),
    );
    assert_eq!(
        w.files().read_text("out/budget.csv").unwrap(),
        "Item,Amount\nRent,1200\nTravel,800\nTotal,2000\n"
    );
    let text = ok(&mut w, "files_read", json!({"path": "out/budget.xlsx"}));
    assert_eq!(
        text["text"],
        "## Sheet: Budget (A1:B4)\nA1: Item | B1: Amount\nA2: Rent | B2: 1200\nA3: Travel | B3: 800\nA4: Total | B4: =SUM(B2:B3) → 2000\n"
    );
    let r = ok(
        &mut w,
        "sheets_import",
        json!({"path": "out/budget.xlsx", "name": "Budget copy"}),
    );
    assert_eq!(r["cells"], 8);
    assert_eq!(
        w.sheets().get("budget copy").unwrap(),
        w.sheets().get("budget").unwrap()
    );
    assert!(
        fail(&mut w, "sheets_import", json!({"path": "out/budget.xlsx"})).contains("replace=true")
    );
    ok(
        &mut w,
        "files_write",
        json!({"path": "bad.xlsx", "content": "not a zip"}),
    );
    assert!(fail(&mut w, "files_read", json!({"path": "bad.xlsx"})).contains("not an .xlsx"));
    assert!(fail(&mut w, "sheets_import", json!({"path": "bad.xlsx"})).contains("not an .xlsx"));
    // Plain text files are still read as text.
    assert_eq!(
        ok(&mut w, "files_read", json!({"path": "readme.md"}))["text"],
        "hello\n"
    );
}

#[test]
fn check_view_shape() {
    let (_d, _t, w) = setup();
    let v = w.sheets().check_view(chrono_tz::UTC);
    let cell =
        &v["spreadsheets"]["$dict"]["Forecast"]["sheets"]["$dict"]["Q1"]["cells"]["$dict"]["A2"];
    assert_eq!(
        cell,
        &json!({"type": "number", "value": 30.0, "formula": "=A1*3"})
    );
    let cell =
        &v["spreadsheets"]["$dict"]["Budget"]["sheets"]["$dict"]["Budget"]["cells"]["$dict"]["A1"];
    assert_eq!(
        cell,
        &json!({"type": "text", "value": "Item", "formula": null})
    );
    assert_eq!(
        v["spreadsheets"]["$dict"]["Forecast"]["sheet_names"],
        json!(["Q1"])
    );
}
