use super::*;

fn c(s: &str) -> CellRef {
    CellRef::parse(s).unwrap()
}

fn book(cells: &[(&str, &str)]) -> Workbook {
    let mut wb = Workbook::default();
    let s = wb.add_sheet("Data").unwrap();
    for (at, input) in cells {
        wb.set_input(s, c(at), input).unwrap();
    }
    wb.recalculate();
    wb
}

fn val(wb: &Workbook, at: &str) -> CellValue {
    wb.sheets[0].value(c(at))
}

fn eval(formula: &str) -> CellValue {
    let wb = book(&[
        ("A1", "10"),
        ("A2", "20"),
        ("A3", "hello"),
        ("A4", "TRUE"),
        ("B1", "0"),
    ]);
    wb.evaluate(0, formula).unwrap()
}

fn n(x: f64) -> CellValue {
    CellValue::Number(x)
}

fn err(e: &str) -> CellValue {
    CellValue::Error(e.into())
}

#[test]
fn arithmetic_and_precedence() {
    assert_eq!(eval("=1+2*3"), n(7.0));
    assert_eq!(eval("=(1+2)*3"), n(9.0));
    assert_eq!(eval("=2^3^2"), n(64.0)); // left-assoc like Excel
    assert_eq!(eval("=-2^2"), n(4.0)); // unary minus binds tighter
    assert_eq!(eval("=A1/4"), n(2.5));
    assert_eq!(eval("=50%"), n(0.5));
    assert_eq!(eval("=A1&\"-\"&A2"), CellValue::Text("10-20".into()));
    assert_eq!(eval("=\"x\"\"y\""), CellValue::Text("x\"y".into()));
    assert_eq!(eval("=A1+Z99"), n(10.0)); // empty = 0
    assert_eq!(eval("=\"3\"+1"), n(4.0));
    assert_eq!(eval("=A4+1"), n(2.0));
    assert_eq!(eval("=1.5e2"), n(150.0));
}

#[test]
fn comparisons() {
    assert_eq!(eval("=A1<A2"), CellValue::Bool(true));
    assert_eq!(eval("=A1>=10"), CellValue::Bool(true));
    assert_eq!(eval("=A3=\"HELLO\""), CellValue::Bool(true));
    assert_eq!(eval("=A1<>10"), CellValue::Bool(false));
    assert_eq!(eval("=1<\"a\""), CellValue::Bool(true)); // numbers sort before text
}

#[test]
fn errors() {
    assert_eq!(eval("=A1/B1"), err("#DIV/0!"));
    assert_eq!(eval("=A1/0+1"), err("#DIV/0!"));
    assert_eq!(eval("=A3*2"), err("#VALUE!"));
    assert_eq!(eval("=Nope!A1"), err("#REF!"));
    assert_eq!(eval("=SUM(Nope!A1:A2)"), err("#REF!"));
    assert_eq!(eval("=FOO(1)"), err("#NAME?"));
    assert_eq!(eval("=undefined_name+1"), err("#NAME?"));
    assert_eq!(eval("=AVERAGE(C1:C5)"), err("#DIV/0!"));
    assert_eq!(eval("=SUM(A1,1/0)"), err("#DIV/0!"));
    assert_eq!(eval("=#N/A"), err("#N/A"));
    assert_eq!(
        eval("=IFERROR(1/0,\"none\")"),
        CellValue::Text("none".into())
    );
}

#[test]
fn functions() {
    assert_eq!(eval("=SUM(A1:A4)"), n(30.0)); // text and bool in ranges ignored
    assert_eq!(eval("=SUM(A1:A2,5,TRUE)"), n(36.0));
    assert_eq!(eval("=AVERAGE(A1:A4)"), n(15.0));
    assert_eq!(eval("=MIN(A1:A2)"), n(10.0));
    assert_eq!(eval("=MAX(A1:A2,25)"), n(25.0));
    assert_eq!(eval("=MAX(C1:C9)"), n(0.0));
    assert_eq!(eval("=COUNT(A1:A4)"), n(2.0));
    assert_eq!(eval("=COUNTA(A1:A4)"), n(4.0));
    assert_eq!(
        eval("=IF(A1>5,\"big\",\"small\")"),
        CellValue::Text("big".into())
    );
    assert_eq!(eval("=IF(A1>50,1)"), CellValue::Bool(false));
    assert_eq!(eval("=ROUND(2.675,2)"), n(2.68));
    assert_eq!(eval("=ROUND(-2.5,0)"), n(-3.0));
    assert_eq!(eval("=ROUND(1234,-2)"), n(1200.0));
    assert_eq!(eval("=ABS(-A1)"), n(10.0));
    assert_eq!(eval("=SUM(A:A)"), n(30.0));
    assert_eq!(eval("=sum(a1:a2)"), n(30.0));
    assert_eq!(eval("=COUNTIF(A1:A4,\">15\")"), n(1.0));
    assert_eq!(eval("=SUMIF(A1:A2,\">=10\")"), n(30.0));
    assert_eq!(eval("=AND(A1>5,A2>5)"), CellValue::Bool(true));
    assert_eq!(
        eval("=CONCAT(A3,\" \",A1)"),
        CellValue::Text("hello 10".into())
    );
}

#[test]
fn other_sheets_and_quoted_names() {
    let mut wb = Workbook::default();
    let a = wb.add_sheet("Summary").unwrap();
    let b = wb.add_sheet("Q1 Data").unwrap();
    wb.set_input(b, c("B2"), "7").unwrap();
    wb.set_input(b, c("B3"), "8").unwrap();
    wb.set_input(a, c("A1"), "='Q1 Data'!B2*2").unwrap();
    wb.set_input(a, c("A2"), "=SUM('Q1 Data'!B2:B3)").unwrap();
    wb.recalculate();
    assert_eq!(wb.sheets[a].value(c("A1")), n(14.0));
    assert_eq!(wb.sheets[a].value(c("A2")), n(15.0));
}

#[test]
fn dependents_are_recalculated_in_order() {
    // C1 depends on B1 which depends on A1, inserted in reverse order of need.
    let mut wb = book(&[("C1", "=B1*2"), ("B1", "=A1+1"), ("A1", "1")]);
    assert_eq!(val(&wb, "C1"), n(4.0));
    wb.set_input(0, c("A1"), "10").unwrap();
    wb.recalculate();
    assert_eq!(val(&wb, "B1"), n(11.0));
    assert_eq!(val(&wb, "C1"), n(22.0));
}

#[test]
fn cycles_are_errors_not_overflows() {
    let wb = book(&[
        ("A1", "=B1+1"),
        ("B1", "=A1+1"),
        ("C1", "=A1*2"),
        ("D1", "=D1"),
    ]);
    assert_eq!(val(&wb, "A1"), err("#CYCLE!"));
    assert_eq!(val(&wb, "B1"), err("#CYCLE!"));
    assert_eq!(val(&wb, "C1"), err("#CYCLE!")); // depends on a cycle
    assert_eq!(val(&wb, "D1"), err("#CYCLE!"));
    let wb = book(&[("A1", "=SUM(A1:A3)"), ("A2", "5")]);
    assert_eq!(val(&wb, "A1"), err("#CYCLE!"));
}

#[test]
fn long_dependency_chains_do_not_recurse() {
    let mut wb = Workbook::default();
    let s = wb.add_sheet("Chain").unwrap();
    wb.set_input(s, CellRef::new(0, 0), "1").unwrap();
    for r in 1..50_000u32 {
        wb.set_input(s, CellRef::new(r, 0), &format!("=A{}+1", r))
            .unwrap();
    }
    wb.recalculate();
    assert_eq!(wb.sheets[s].value(CellRef::new(49_999, 0)), n(50_000.0));
}

#[test]
fn hostile_formulas_are_refused() {
    let deep = format!("={}1{}", "(".repeat(500), ")".repeat(500));
    assert!(formula::parse(&deep).unwrap_err().contains("nested"));
    let negs = format!("={}1", "-".repeat(10_000));
    assert!(formula::parse(&negs).is_err());
    assert!(formula::parse(&format!("={}", "1+".repeat(5000))).is_err());
    assert!(formula::parse("=SUM(A1").unwrap_err().contains(")"));
    assert!(formula::parse("=\"open").is_err());
    assert!(formula::parse("=1+").is_err());
    let mut wb = Workbook::default();
    let s = wb.add_sheet("S").unwrap();
    let e = wb.set_input(s, c("A1"), "=SUM(A1:").unwrap_err();
    assert!(e.starts_with("A1:"), "{e}");
}

#[test]
fn input_inference() {
    assert_eq!(CellValue::infer("1250"), n(1250.0));
    assert_eq!(CellValue::infer("1,250.50"), n(1250.5));
    assert_eq!(CellValue::infer("-3.5"), n(-3.5));
    assert_eq!(CellValue::infer("00123"), CellValue::Text("00123".into()));
    assert_eq!(CellValue::infer("'123"), CellValue::Text("123".into()));
    assert_eq!(CellValue::infer("true"), CellValue::Bool(true));
    assert_eq!(CellValue::infer("12,34"), CellValue::Text("12,34".into()));
    assert_eq!(
        CellValue::infer("2026-03-01"),
        CellValue::Date(NaiveDate::from_ymd_opt(2026, 3, 1).unwrap())
    );
    assert!(matches!(
        CellValue::infer("2026-03-01 09:30"),
        CellValue::DateTime(_)
    ));
    assert_eq!(CellValue::infer("North"), CellValue::Text("North".into()));
    assert_eq!(CellValue::infer(""), CellValue::Empty);
    assert_eq!(CellValue::infer("inf"), CellValue::Text("inf".into()));
    assert_eq!(CellValue::infer("NaN"), CellValue::Text("NaN".into()));
}

#[test]
fn text_rendering() {
    let wb = book(&[
        ("A1", "Region"),
        ("B1", "Q1"),
        ("A2", "North"),
        ("B2", "1200"),
        ("A3", "'0042"),
        ("B3", "50.5"),
        ("B4", "=SUM(B2:B3)"),
        ("C4", "=B4/0"),
    ]);
    let t = wb.to_text();
    assert_eq!(
        t,
        "## Sheet: Data (A1:C4)\nA1: Region | B1: Q1\nA2: North | B2: 1200\nA3: \"0042\" | B3: 50.5\nB4: =SUM(B2:B3) → 1250.5 | C4: =B4/0 → #DIV/0!\n"
    );
    assert_eq!(
        Workbook::default().to_text(),
        "(a workbook without sheets)\n"
    );
}

#[test]
fn xlsx_round_trip() {
    let mut wb = book(&[
        ("A1", "Item"),
        ("B1", "Cost"),
        ("A2", "Pens"),
        ("B2", "12.5"),
        ("A3", "Paper"),
        ("B3", "30"),
        ("B4", "=SUM(B2:B3)"),
        ("C1", "TRUE"),
        ("C2", "2026-03-01"),
        ("C3", "=IF(B4>40,\"over\",\"ok\")"),
    ]);
    let s2 = wb.add_sheet("Notes").unwrap();
    wb.set_input(s2, c("A1"), "=Data!B4*2").unwrap();
    wb.recalculate();
    let bytes = write_xlsx(&wb).unwrap();
    assert_eq!(bytes, write_xlsx(&wb).unwrap(), "deterministic output");
    let back = read_file("book.xlsx", &bytes).unwrap();
    assert_eq!(back.sheets.len(), 2);
    assert_eq!(back.sheets[1].name, "Notes");
    assert_eq!(back, wb);
}

#[test]
fn csv_read_and_write() {
    let wb = read_file(
        "sales.csv",
        "\u{feff}Region,Amount,Paid\nNorth,\"1,200\",true\nSouth,800.5,FALSE\n\"A, B\",,x\n"
            .as_bytes(),
    )
    .unwrap();
    let s = &wb.sheets[0];
    assert_eq!(s.name, "sales");
    assert_eq!(s.value(c("B2")), n(1200.0));
    assert_eq!(s.value(c("C3")), CellValue::Bool(false));
    assert_eq!(s.value(c("A4")), CellValue::Text("A, B".into()));
    assert_eq!(s.value(c("B4")), CellValue::Empty);
    let out = String::from_utf8(write_csv(s).unwrap()).unwrap();
    assert_eq!(
        out,
        "Region,Amount,Paid\nNorth,1200,TRUE\nSouth,800.5,FALSE\n\"A, B\",,x\n"
    );
    let tsv = read_file("t.tsv", b"a\tb\n1\t=2+2\n").unwrap();
    assert_eq!(tsv.sheets[0].value(c("B2")), CellValue::Text("=2+2".into()));
}

#[test]
fn bad_files_are_clear_errors() {
    let msg = |name: &str, bytes: &[u8]| read_file(name, bytes).unwrap_err().to_string();
    assert!(msg("x.xlsx", b"hello").contains("not an .xlsx"));
    assert!(msg("x.xlsx", &[0xD0, 0xCF, 0x11, 0xE0, 0, 0]).contains("password"));
    assert!(msg("x.docx", b"").contains(".xlsx, .xlsm, .csv or .tsv"));
    assert!(msg("x.csv", b"a\0b").contains("binary"));
    let good = write_xlsx(&book(&[("A1", "1")])).unwrap();
    for cut in [10, good.len() / 2, good.len() - 10] {
        let e = msg("t.xlsx", &good[..cut]);
        assert!(e.contains("t.xlsx"), "{e}");
    }
}

fn zip_with(entries: &[(&str, Vec<u8>)]) -> Vec<u8> {
    use std::io::Write;
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, data) in entries {
        w.start_file(*name, opts).unwrap();
        w.write_all(data).unwrap();
    }
    w.finish().unwrap().into_inner()
}

#[test]
fn zip_bombs_and_huge_shared_formulas_are_refused() {
    // 300 MB of zeros compresses to ~300 KB: refused without expanding it all.
    let big = vec![0u8; 300 * 1024 * 1024];
    let bomb = zip_with(&[("xl/workbook.xml", big)]);
    let e = read_file("bomb.xlsx", &bomb).unwrap_err().to_string();
    assert!(e.contains("zip bomb"), "{e}");
    let sheet = br#"<worksheet><sheetData><row r="1"><c r="A1"><f t="shared" ref="A1:XFD1048576" si="0">1</f></c></row></sheetData></worksheet>"#;
    let z = zip_with(&[("xl/worksheets/sheet1.xml", sheet.to_vec())]);
    let e = read_file("shared.xlsx", &z).unwrap_err().to_string();
    assert!(e.contains("shared formula"), "{e}");
    let many: Vec<(String, Vec<u8>)> = (0..10_001).map(|i| (format!("f{i}"), vec![])).collect();
    let refs: Vec<(&str, Vec<u8>)> = many.iter().map(|(n, d)| (n.as_str(), d.clone())).collect();
    let e = read_file("many.xlsx", &zip_with(&refs))
        .unwrap_err()
        .to_string();
    assert!(e.contains("entries"), "{e}");
}

#[test]
fn sparse_far_cells_do_not_allocate_the_area() {
    let mut wb = Workbook::default();
    let s = wb.add_sheet("S").unwrap();
    wb.set_input(s, c("A1"), "1").unwrap();
    wb.set_input(s, c("XFD1048576"), "2").unwrap();
    wb.set_input(s, c("B1"), "=SUM(A:XFD)").unwrap();
    wb.recalculate();
    let back = read_file("far.xlsx", &write_xlsx(&wb).unwrap()).unwrap();
    assert_eq!(back.sheets[0].value(c("XFD1048576")), n(2.0));
    assert_eq!(back.sheets[0].value(c("B1")), err("#CYCLE!"));
}

#[test]
fn serde_round_trip() {
    let wb = book(&[
        ("A1", "x"),
        ("A2", "2026-03-01"),
        ("B10", "=1/0"),
        ("C3", "TRUE"),
        ("A11", "2026-03-01 10:00"),
    ]);
    let json = serde_json::to_string(&wb).unwrap();
    assert!(
        json.contains(r##""B10":{"type":"error","value":"#DIV/0!","formula":"=1/0"}"##),
        "{json}"
    );
    let back: Workbook = serde_json::from_str(&json).unwrap();
    assert_eq!(back, wb);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let back: Workbook = serde_json::from_value(v).unwrap();
    assert_eq!(back, wb);
}

#[test]
fn cells_round_trip_through_json() {
    let cells = vec![
        Cell::value(CellValue::Number(74.0)),
        Cell::value(CellValue::Number(80.05)),
        Cell::value(CellValue::Text("Liam".into())),
        Cell::value(CellValue::Bool(true)),
        Cell::value(CellValue::Empty),
        Cell {
            value: CellValue::Number(3.0),
            formula: Some("=1+2".into()),
        },
    ];
    let json = serde_json::to_string(&cells).expect("serialises");
    let back: Vec<Cell> = serde_json::from_str(&json).expect("reads back");
    assert_eq!(back, cells);
}

#[test]
fn xlsx_extras_finds_nothing_in_what_bureau_writes() {
    let wb = book(&[
        ("A1", "Due"),
        ("A2", "2026-03-01"),
        ("B2", "=A2+1"),
        ("C2", "2026-03-01 09:30"),
    ]);
    let bytes = write_xlsx(&wb).unwrap();
    assert_eq!(
        io::xlsx_extras_in_process("b.xlsx", &bytes).unwrap(),
        Vec::<String>::new()
    );
    assert!(xlsx_extras("b.xlsx", b"PK\x03\x04 broken").is_err());
    assert!(xlsx_extras("b.xlsx", b"not a zip").is_err());
}

#[test]
fn layout_text_is_a_padded_table_per_sheet() {
    let wb = book(&[
        ("A1", "Item"),
        ("B1", "Cost"),
        ("A2", "Desk"),
        ("B2", "120"),
        ("B3", "=B2*2"),
    ]);
    assert_eq!(
        wb.to_layout_text(),
        "## Data\n\n| Item | Cost |\n|------|------|\n| Desk | 120  |\n|      | 240  |\n"
    );
}
