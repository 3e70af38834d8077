//! `w.sheets`, `xlsx(path)`, `csv(path)` and the `sheet_cell` predicate against a real world.

use std::path::Path;

use bureau_check::{CheckLimits, eval_predicate, evaluate_item, load_checks};
use bureau_core::log::Actor;
use bureau_core::task::{Evaluator, Predicate, SheetCellFilter, Task};
use bureau_core::tool::ToolOutcome;
use bureau_core::verdict::VerdictStatus;
use bureau_world::World;
use serde_json::{Value, json};

const TASK: &str = r#"
id = "sheets-fixture"
title = "Sheets fixture"
persona = "tester"
category = "testing"
difficulty = "easy"
apps = ["files", "sheets"]
timezone = "Europe/Amsterdam"
[user]
name = "Dana Reyes"
email = "dana@x.test"
[[turn]]
at = "2026-03-02T09:00:00"
prompt = "Day one."
[[rubric]]
id = "c"
description = "d"
kind = "result"
check = "service_view"
"#;

const CHECKS: &str = r#"
def service_view(w):
    c = w.sheets.spreadsheets["Budget"].sheets["Budget"].cells
    return {"passed": True, "detail": json.encode({"b4": [c["B4"].type, c["B4"].value, c["B4"].formula], "a1": [c["A1"].value, c["A1"].formula],
                        "names": w.sheets.spreadsheets["Budget"].sheet_names, "missing": c.get("Z9") == None})}

def files(w):
    x = xlsx("out/b.xlsx").sheets["Budget"].cells
    v = csv("data/t.csv").sheets["t"].cells
    return {"passed": True, "detail": json.encode({"x": [x["B4"].value, x["B4"].formula], "csv": [v["A2"].type, v["A2"].value, v["B2"].type]})}

def broken(w):
    return xlsx("data/t.csv") != None

def corrupt(w):
    return xlsx("bad.xlsx") != None
"#;

fn write(root: &Path, rel: &str, data: &[u8]) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, data).unwrap();
}

fn setup() -> (tempfile::TempDir, Task, World) {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("task");
    write(&t, "task.toml", TASK.as_bytes());
    write(&t, "checks.star", CHECKS.as_bytes());
    write(
        &t,
        "world/sheets/Budget.csv",
        b"Item,Amount\nRent,1200\nTravel,800\n",
    );
    write(&t, "world/files/data/t.csv", b"n,flag\n1250,true\n");
    write(&t, "world/files/bad.xlsx", b"PK\x03\x04truncated");
    let task = Task::load(&t).unwrap_or_else(|e| panic!("{e}"));
    let mut world = World::build(&task, &dir.path().join("run")).unwrap();
    world.begin_turn(&task.turns[0]).unwrap();
    let ok = |w: &mut World, tool: &str, args: Value| {
        let out = w.call_tool(Actor::Agent, tool, &args);
        assert!(!matches!(out, ToolOutcome::Error { .. }), "{out:?}");
    };
    ok(
        &mut world,
        "sheets_write",
        json!({"spreadsheet": "Budget", "range": "A4", "values": [["Total", "=SUM(B2:B3)"]]}),
    );
    ok(
        &mut world,
        "sheets_export",
        json!({"spreadsheet": "Budget", "path": "out/b.xlsx"}),
    );
    (dir, task, world)
}

fn run(task: &Task, world: &World, name: &str) -> (VerdictStatus, String) {
    let program = load_checks(task).unwrap().unwrap();
    let mut item = task.rubric[0].clone();
    item.evaluator = Evaluator::Check(name.into());
    let v = evaluate_item(
        task,
        Some(&program),
        world,
        &[],
        &item,
        &CheckLimits::default(),
    );
    (v.status, v.detail.unwrap_or_default())
}

#[test]
fn views_of_the_service_and_of_files() {
    let (_d, task, world) = setup();
    let (s, d) = run(&task, &world, "service_view");
    assert_eq!(s, VerdictStatus::Passed, "{d}");
    let v: Value = serde_json::from_str(&d).unwrap();
    assert_eq!(v["b4"], json!(["number", 2000.0, "=SUM(B2:B3)"]));
    assert_eq!(v["a1"], json!(["Item", null]));
    assert_eq!(v["names"], json!(["Budget"]));
    assert_eq!(v["missing"], json!(true));
    let (s, d) = run(&task, &world, "files");
    assert_eq!(s, VerdictStatus::Passed, "{d}");
    let v: Value = serde_json::from_str(&d).unwrap();
    assert_eq!(v["x"], json!([2000.0, "=SUM(B2:B3)"]));
    assert_eq!(v["csv"], json!(["number", 1250.0, "bool"]));
    let (s, d) = run(&task, &world, "broken");
    assert_eq!(s, VerdictStatus::Error);
    assert!(d.contains(".xlsx or .xlsm"), "{d}");
    let (s, d) = run(&task, &world, "corrupt");
    assert_eq!(s, VerdictStatus::Error);
    assert!(d.contains("bad.xlsx") && d.contains("corrupt"), "{d}");
}

#[test]
fn sheet_cell_predicate() {
    let (_d, task, world) = setup();
    let p = |f: SheetCellFilter| eval_predicate(&task, &Predicate::SheetCell(f), &world, &[]);
    let base = SheetCellFilter {
        spreadsheet: Some("budget".into()),
        cell: "B4".into(),
        equals: json!(2000),
        ..Default::default()
    };
    let (s, d) = p(base.clone());
    assert_eq!(s, VerdictStatus::Passed, "{d}");
    assert!(d.contains("formula =SUM(B2:B3)"), "{d}");
    let (s, d) = p(SheetCellFilter {
        equals: json!(2001),
        ..base.clone()
    });
    assert_eq!(s, VerdictStatus::Failed);
    assert!(d.contains("is number 2000"), "{d}");
    assert_eq!(
        p(SheetCellFilter {
            equals: json!(2001),
            tolerance: 1.5,
            ..base.clone()
        })
        .0,
        VerdictStatus::Passed
    );
    assert_eq!(
        p(SheetCellFilter {
            equals: json!("2000"),
            ..base.clone()
        })
        .0,
        VerdictStatus::Failed,
        "a number is not the text \"2000\""
    );
    assert_eq!(
        p(SheetCellFilter {
            formula_contains: Some("sum".into()),
            ..base.clone()
        })
        .0,
        VerdictStatus::Passed
    );
    let (s, d) = p(SheetCellFilter {
        cell: "B2".into(),
        equals: json!(1200),
        formula_contains: Some(String::new()),
        ..base.clone()
    });
    assert_eq!(s, VerdictStatus::Failed);
    assert!(d.contains("holds no formula"), "{d}");
    // A workspace file, and a typed text cell.
    let (s, d) = p(SheetCellFilter {
        spreadsheet: None,
        file: Some("out/b.xlsx".into()),
        sheet: Some("Budget".into()),
        cell: "A4".into(),
        equals: json!("Total"),
        ..Default::default()
    });
    assert_eq!(s, VerdictStatus::Passed, "{d}");
    let (s, d) = p(SheetCellFilter {
        spreadsheet: None,
        file: Some("missing.xlsx".into()),
        ..base.clone()
    });
    assert_eq!(s, VerdictStatus::Failed);
    assert!(d.contains("missing.xlsx"), "{d}");
    let (s, _) = p(SheetCellFilter {
        spreadsheet: Some("Nope".into()),
        ..base.clone()
    });
    assert_eq!(s, VerdictStatus::Failed);
    let (s, d) = p(SheetCellFilter {
        sheet: Some("Q9".into()),
        ..base.clone()
    });
    assert_eq!(s, VerdictStatus::Failed);
    assert!(d.contains("no sheet 'Q9'"), "{d}");
    assert_eq!(
        p(SheetCellFilter {
            cell: "Z99".into(),
            equals: Value::Null,
            ..base
        })
        .0,
        VerdictStatus::Passed
    );
}
