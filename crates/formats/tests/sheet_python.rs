//! Files written by Bureau open in Python's openpyxl (values, formulas and cached results,
//! several sheets, dates), and files written by openpyxl open in Bureau. Needs
//! `pip install openpyxl` (`.ci/run` installs it); without it this test fails and says so.

use std::process::Command;

use bureau_formats::sheet::{CellRef, CellValue, Workbook, read_file, write_xlsx};
use serde_json::json;

fn require_openpyxl() {
    let ok = Command::new("python3")
        .args(["-c", "import openpyxl"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(
        ok,
        "this test needs Python 3 with openpyxl: run `python3 -m pip install openpyxl` (the CI script .ci/run does)"
    );
}

fn python(script: &str, arg: &std::path::Path) -> String {
    let out = Command::new("python3")
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

fn c(s: &str) -> CellRef {
    CellRef::parse(s).unwrap()
}

#[test]
fn bureau_xlsx_opens_in_openpyxl() {
    require_openpyxl();
    let mut wb = Workbook::default();
    let s = wb.add_sheet("Budget").unwrap();
    for (at, v) in [
        ("A1", "Item"),
        ("B1", "Amount"),
        ("A2", "Rent"),
        ("B2", "1200"),
        ("A3", "Travel"),
        ("B3", "800.5"),
        ("A4", "Total"),
        ("B4", "=SUM(B2:B3)"),
        ("C1", "TRUE"),
        ("C2", "2026-03-01"),
        ("C4", "=IF(B4>1500,\"over\",\"ok\")"),
    ] {
        wb.set_input(s, c(at), v).unwrap();
    }
    let n = wb.add_sheet("Notes & Links").unwrap();
    wb.set_input(n, c("A1"), "=Budget!B4*2").unwrap();
    wb.recalculate();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bureau.xlsx");
    std::fs::write(&path, write_xlsx(&wb).unwrap()).unwrap();
    let script = r#"
import json, sys, datetime, openpyxl
f = openpyxl.load_workbook(sys.argv[1])
v = openpyxl.load_workbook(sys.argv[1], data_only=True)
def conv(x):
    if isinstance(x, (datetime.date, datetime.datetime)):
        return x.isoformat()
    return x
out = {"sheets": f.sheetnames, "cells": {}}
for ws in f.worksheets:
    for row in ws.iter_rows():
        for cell in row:
            if cell.value is None:
                continue
            cached = v[ws.title][cell.coordinate].value
            out["cells"][ws.title + "!" + cell.coordinate] = [conv(cell.value), conv(cached)]
print(json.dumps(out, sort_keys=True))
"#;
    let got: serde_json::Value = serde_json::from_str(&python(script, &path)).unwrap();
    assert_eq!(got["sheets"], json!(["Budget", "Notes & Links"]));
    let cell = |k: &str| got["cells"][k].clone();
    assert_eq!(cell("Budget!A1"), json!(["Item", "Item"]));
    assert_eq!(cell("Budget!B2"), json!([1200, 1200]));
    assert_eq!(cell("Budget!B3"), json!([800.5, 800.5]));
    assert_eq!(cell("Budget!B4"), json!(["=SUM(B2:B3)", 2000.5]));
    assert_eq!(cell("Budget!C1"), json!([true, true]));
    assert_eq!(
        cell("Budget!C2"),
        json!(["2026-03-01T00:00:00", "2026-03-01T00:00:00"])
    );
    assert_eq!(
        cell("Budget!C4"),
        json!(["=IF(B4>1500,\"over\",\"ok\")", "over"])
    );
    assert_eq!(cell("Notes & Links!A1"), json!(["=Budget!B4*2", 4001]));
}

#[test]
fn openpyxl_xlsx_opens_in_bureau() {
    require_openpyxl();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("py.xlsx");
    let script = r#"
import sys, datetime, openpyxl
wb = openpyxl.Workbook()
ws = wb.active
ws.title = "Orders"
ws.append(["Region", "Units", "Price", "Revenue"])
ws.append(["North", 3, 2.5, "=B2*C2"])
ws.append(["South", 4, 10, "=B3*C3"])
ws["D4"] = "=SUM(D2:D3)"
ws["A5"] = datetime.date(2026, 3, 1)
ws["B5"] = True
s = wb.create_sheet("Summary")
s["A1"] = "=Orders!D4/2"
s["A2"] = "=AVERAGE(Orders!B2:B3)"
wb.save(sys.argv[1])
"#;
    python(script, &path);
    let wb = read_file("py.xlsx", &std::fs::read(&path).unwrap()).unwrap();
    let names: Vec<&str> = wb.sheets.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["Orders", "Summary"]);
    let o = &wb.sheets[0];
    assert_eq!(o.value(c("A2")), CellValue::Text("North".into()));
    assert_eq!(o.value(c("B2")), CellValue::Number(3.0));
    // openpyxl stores no computed values: Bureau computes them.
    assert_eq!(o.get(c("D2")).unwrap().formula.as_deref(), Some("=B2*C2"));
    assert_eq!(o.value(c("D2")), CellValue::Number(7.5));
    assert_eq!(o.value(c("D4")), CellValue::Number(47.5));
    assert!(matches!(
        o.value(c("A5")),
        CellValue::Date(_) | CellValue::DateTime(_)
    ));
    assert_eq!(o.value(c("B5")), CellValue::Bool(true));
    let s = &wb.sheets[1];
    assert_eq!(s.value(c("A1")), CellValue::Number(23.75));
    assert_eq!(s.value(c("A2")), CellValue::Number(3.5));
}
