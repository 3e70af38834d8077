//! Bureau's office files open in other people's readers, and theirs open in Bureau:
//! python-docx and LibreOffice (headless conversion).
//!
//! These tests never pass silently: without python-docx or LibreOffice they fail with the
//! command that installs them (both are installed by .ci/run).

use std::path::Path;
use std::process::Command;

use bureau_formats::office::{self, WriteBlock};
use serde_json::{Value, json};

fn python_docx() {
    let ok = Command::new("python3")
        .args(["-c", "import docx"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(
        ok,
        "python-docx is missing: run `python3 -m pip install python-docx` (the CI does, in .ci/run)"
    );
}

fn python(script: &str, args: &[&Path]) -> String {
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "python failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn blocks() -> Vec<WriteBlock> {
    vec![
        WriteBlock::Heading {
            level: 1,
            text: "Offsite plan".into(),
        },
        WriteBlock::Paragraph {
            text: "We meet in Delft on 12 March, café at 9.".into(),
        },
        WriteBlock::Heading {
            level: 2,
            text: "To do".into(),
        },
        WriteBlock::Bullets {
            items: vec!["Book the bus".into(), "Print badges".into()],
        },
        WriteBlock::Table {
            rows: vec![
                vec!["Who".into(), "Task".into(), "Cost".into()],
                vec!["Sam".into(), "Bus".into(), "1,200".into()],
            ],
        },
    ]
}

#[test]
fn python_docx_reads_what_bureau_writes() {
    python_docx();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plan.docx");
    std::fs::write(&path, office::write_docx("plan.docx", &blocks()).unwrap()).unwrap();
    let out = python(
        r#"
import docx, json, sys
d = docx.Document(sys.argv[1])
print(json.dumps({
  "paragraphs": [[p.style.name, p.text] for p in d.paragraphs],
  "tables": [[[c.text for c in r.cells] for r in t.rows] for t in d.tables],
}))
"#,
        &[&path],
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["paragraphs"],
        json!([
            ["Heading 1", "Offsite plan"],
            ["Normal", "We meet in Delft on 12 March, café at 9."],
            ["Heading 2", "To do"],
            ["List Bullet", "Book the bus"],
            ["List Bullet", "Print badges"],
        ])
    );
    assert_eq!(
        v["tables"],
        json!([[["Who", "Task", "Cost"], ["Sam", "Bus", "1,200"]]])
    );
}

#[test]
fn bureau_reads_what_python_docx_writes() {
    python_docx();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("theirs.docx");
    python(
        r#"
import docx, sys
d = docx.Document()
d.add_heading("Quarterly report", 0)
d.add_heading("Summary", 1)
d.add_paragraph("Revenue was 11,917.00 EUR.")
d.add_paragraph("first point", style="List Bullet")
d.add_paragraph("nested point", style="List Bullet 2")
d.add_paragraph("step one", style="List Number")
d.add_heading("Details", 2)
t = d.add_table(rows=2, cols=2)
t.cell(0, 0).text = "Region"; t.cell(0, 1).text = "Total"
t.cell(1, 0).text = "North"; t.cell(1, 1).text = "11917"
d.add_paragraph("The end.")
d.save(sys.argv[1])
"#,
        &[&path],
    );
    let bytes = std::fs::read(&path).unwrap();
    let d = office::read_docx("theirs.docx", &bytes).unwrap();
    assert_eq!(
        d.headings(),
        vec![(0, "Quarterly report"), (1, "Summary"), (2, "Details")]
    );
    let styled: Vec<(&str, Option<u8>)> = d
        .paragraphs
        .iter()
        .map(|p| (p.style.as_str(), p.list_level))
        .collect();
    assert_eq!(
        styled,
        vec![
            ("Title", None),
            ("Heading 1", None),
            ("Normal", None),
            ("List Bullet", Some(0)),
            ("List Bullet 2", Some(1)),
            ("List Number", Some(0)),
            ("Heading 2", None),
            ("Normal", None),
        ]
    );
    assert_eq!(
        d.tables,
        vec![vec![
            vec!["Region".to_string(), "Total".into()],
            vec!["North".into(), "11917".into()]
        ]]
    );
    assert_eq!(
        d.to_text(),
        "# Quarterly report\n\n# Summary\n\nRevenue was 11,917.00 EUR.\n\n- first point\n  - nested point\n- step one\n\n## Details\n\n| Region | Total |\n|---|---|\n| North | 11917 |\n\nThe end.\n"
    );
}

#[test]
fn python_docx_reads_what_bureau_edits_in_place() {
    use office::DocxOp;
    python_docx();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("theirs.docx");
    // python-docx's own template: its styles, a header, a bold run, a styled table.
    python(
        r#"
import docx, sys
d = docx.Document()
d.sections[0].header.paragraphs[0].text = "Brightwater internal"
d.add_heading("Quarterly report", 1)
p = d.add_paragraph()
r = p.add_run("Revenue was ")
r.bold = True
p.add_run("11,917.00 EUR.")
d.add_paragraph("first point", style="List Bullet")
d.add_paragraph("drop me")
t = d.add_table(rows=2, cols=2)
t.style = "Table Grid"
t.cell(0, 0).text = "Region"; t.cell(0, 1).text = "Total"
t.cell(1, 0).text = "North"; t.cell(1, 1).text = "11917"
d.add_paragraph("The end.")
d.save(sys.argv[1])
"#,
        &[&path],
    );
    let before = std::fs::read(&path).unwrap();
    let listed = office::docx_blocks("theirs.docx", &before).unwrap();
    assert_eq!(
        office::blocks_to_text(&listed),
        "[0] # Quarterly report\n[1] Revenue was 11,917.00 EUR.\n[2] - first point\n[3] drop me\n[4] table, 2 rows:\n| Region | Total |\n|---|---|\n| North | 11917 |\n[5] The end.\n"
    );
    let after = office::edit_docx(
        "theirs.docx",
        &before,
        &[
            DocxOp::Replace {
                block: 1,
                text: "Revenue was 12,400.00 EUR.".into(),
                style: None,
            },
            DocxOp::Insert {
                before: None,
                after: Some(0),
                text: "Summary".into(),
                style: Some("Heading 2".into()),
            },
            DocxOp::Insert {
                before: Some(3),
                after: None,
                text: "second point".into(),
                style: Some("List Bullet".into()),
            },
            DocxOp::Delete { block: 3 },
            DocxOp::SetCell {
                block: 4,
                row: 1,
                col: 1,
                text: "12400".into(),
            },
            DocxOp::AppendRow {
                block: 4,
                cells: vec!["South".into(), "800".into()],
            },
            DocxOp::Append {
                text: "Signed, Dana".into(),
                style: Some("Quote".into()),
            },
        ],
    )
    .unwrap();
    std::fs::write(&path, &after).unwrap();
    let out = python(
        r#"
import docx, json, sys
d = docx.Document(sys.argv[1])
print(json.dumps({
  "paragraphs": [[p.style.name, p.text] for p in d.paragraphs],
  "bold": [r.bold for r in d.paragraphs[2].runs],
  "tables": [[[c.text for c in r.cells] for r in t.rows] for t in d.tables],
  "table_style": d.tables[0].style.name,
  "header": d.sections[0].header.paragraphs[0].text,
}))
"#,
        &[&path],
    );
    let got: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        got,
        json!({
            "paragraphs": [
                ["Heading 1", "Quarterly report"],
                ["Heading 2", "Summary"],
                ["Normal", "Revenue was 12,400.00 EUR."],
                ["List Bullet", "first point"],
                ["List Bullet", "second point"],
                ["Normal", "The end."],
                ["Quote", "Signed, Dana"],
            ],
            "bold": [true],
            "tables": [[["Region", "Total"], ["North", "12400"], ["South", "800"]]],
            "table_style": "Table Grid",
            "header": "Brightwater internal",
        })
    );

    // Bureau's own .docx has no Title style: the edit adds it, and python-docx sees it.
    let ours = office::write_docx("plan.docx", &blocks()).unwrap();
    let edited = office::edit_docx(
        "plan.docx",
        &ours,
        &[DocxOp::Insert {
            before: Some(0),
            after: None,
            text: "Offsite 2026".into(),
            style: Some("Title".into()),
        }],
    )
    .unwrap();
    let path = dir.path().join("plan.docx");
    std::fs::write(&path, &edited).unwrap();
    let out = python(
        r#"
import docx, json, sys
d = docx.Document(sys.argv[1])
print(json.dumps([[p.style.name, p.text] for p in d.paragraphs][:2]))
"#,
        &[&path],
    );
    let got: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        got,
        json!([["Title", "Offsite 2026"], ["Heading 1", "Offsite plan"]])
    );
}

fn libreoffice() -> &'static str {
    for bin in ["libreoffice", "soffice"] {
        if Command::new(bin)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            return bin;
        }
    }
    panic!(
        "LibreOffice is missing: run `apt-get install -y --no-install-recommends libreoffice-writer-nogui libreoffice-draw-nogui` (the CI does, in .ci/run)"
    );
}

/// `libreoffice --headless --convert-to <to>` of `input` into `dir`, with a private profile.
fn convert(bin: &str, input: &Path, to: &str, dir: &Path) {
    let out = Command::new(bin)
        .arg(format!(
            "-env:UserInstallation=file://{}",
            dir.join("profile").display()
        ))
        .args(["--headless", "--convert-to", to, "--outdir"])
        .arg(dir)
        .arg(input)
        .output()
        .expect("libreoffice runs");
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && !log.contains("Error:"),
        "libreoffice failed on {}: {log}",
        input.display()
    );
}

#[test]
fn libreoffice_opens_bureau_docx_and_pdf() {
    let bin = libreoffice();
    let dir = tempfile::tempdir().unwrap();
    // Bureau .docx → text by LibreOffice Writer: headings, list items and table cells are there.
    let docx = dir.path().join("plan.docx");
    std::fs::write(&docx, office::write_docx("plan.docx", &blocks()).unwrap()).unwrap();
    convert(bin, &docx, "txt:Text (encoded):UTF8", dir.path());
    let txt = std::fs::read_to_string(dir.path().join("plan.txt")).unwrap();
    for want in [
        "Offsite plan",
        "café at 9",
        "Book the bus",
        "Print badges",
        "Who",
        "1,200",
    ] {
        assert!(
            txt.contains(want),
            "LibreOffice's text lacks {want:?}:\n{txt}"
        );
    }
    // The same .docx → .pdf by LibreOffice, read back by Bureau.
    convert(bin, &docx, "pdf", dir.path());
    let pdf = office::read_pdf(
        "plan.pdf",
        &std::fs::read(dir.path().join("plan.pdf")).unwrap(),
    )
    .unwrap();
    assert!(
        pdf.pages
            .iter()
            .any(|p| p.contains("Offsite plan") && p.contains("Print badges")),
        "{:?}",
        pdf.pages
    );
    // Bureau's own PDF opens in LibreOffice Draw, which sees its text (exported as SVG).
    let ours = dir.path().join("ours.pdf");
    std::fs::write(
        &ours,
        office::write_pdf("Ours", "# Budget memo\n\n- Total: 11,917.00 EUR\n"),
    )
    .unwrap();
    convert(bin, &ours, "svg", dir.path());
    let svg = std::fs::read_to_string(dir.path().join("ours.svg")).unwrap();
    assert!(
        svg.contains("Budget memo") && svg.contains("11,917.00"),
        "LibreOffice did not see the PDF's text"
    );
}

#[test]
fn libreoffice_opens_edited_docx_and_xlsx_and_image_pdfs() {
    use bureau_formats::sheet::{self, Cell, CellEdit, CellRef, CellValue, Workbook};
    use office::DocxOp;
    let bin = libreoffice();
    let dir = tempfile::tempdir().unwrap();
    // A Bureau .docx edited in place (a Title style added, a cell set, a row appended, a
    // paragraph replaced, one deleted) → text by LibreOffice Writer.
    let ours = office::write_docx("plan.docx", &blocks()).unwrap();
    let edited = office::edit_docx(
        "plan.docx",
        &ours,
        &[
            DocxOp::Insert {
                before: Some(0),
                after: None,
                text: "Offsite 2026".into(),
                style: Some("Title".into()),
            },
            DocxOp::Replace {
                block: 1,
                text: "We meet in Leiden on 14 March.".into(),
                style: None,
            },
            DocxOp::Delete { block: 3 },
            DocxOp::SetCell {
                block: 5,
                row: 1,
                col: 2,
                text: "1,350".into(),
            },
            DocxOp::AppendRow {
                block: 5,
                cells: vec!["Ada".into(), "Badges".into(), "80".into()],
            },
        ],
    )
    .unwrap();
    let docx = dir.path().join("edited.docx");
    std::fs::write(&docx, &edited).unwrap();
    convert(bin, &docx, "txt:Text (encoded):UTF8", dir.path());
    let txt = std::fs::read_to_string(dir.path().join("edited.txt")).unwrap();
    for want in [
        "Offsite 2026",
        "We meet in Leiden on 14 March.",
        "1,350",
        "Badges",
        "80",
    ] {
        assert!(
            txt.contains(want),
            "LibreOffice's text lacks {want:?}:\n{txt}"
        );
    }
    assert!(
        !txt.contains("Book the bus") && !txt.contains("Delft"),
        "{txt}"
    );

    // A Bureau .xlsx edited in place → CSV by LibreOffice Calc (which recomputes formulas).
    let mut wb = Workbook::default();
    let s = wb.add_sheet("Data").unwrap();
    let at = |a: &str| CellRef::parse(a).unwrap();
    for (a, v) in [
        ("A1", "Item"),
        ("B1", "Cost"),
        ("A2", "Desk"),
        ("B2", "120"),
        ("B3", "=SUM(B2:B2)"),
    ] {
        wb.set_input(s, at(a), v).unwrap();
    }
    wb.recalculate();
    let xlsx = sheet::write_xlsx(&wb).unwrap();
    let set = |v: CellValue, f: Option<&str>| {
        CellEdit::Set(Cell {
            value: v,
            formula: f.map(str::to_string),
        })
    };
    let edits = vec![
        (
            "Data".to_string(),
            at("A4"),
            set(CellValue::Text("Lamp & shade".into()), None),
        ),
        (
            "Data".to_string(),
            at("B4"),
            set(CellValue::Number(35.5), None),
        ),
        (
            "Data".to_string(),
            at("B5"),
            set(CellValue::Number(155.5), Some("=SUM(B2:B4)")),
        ),
        (
            "Data".to_string(),
            at("C2"),
            set(CellValue::infer("2026-03-01"), None),
        ),
    ];
    let out = sheet::edit_xlsx("d.xlsx", &xlsx, &edits).unwrap().unwrap();
    let path = dir.path().join("edited.xlsx");
    std::fs::write(&path, &out).unwrap();
    convert(bin, &path, "csv", dir.path());
    let csv = std::fs::read_to_string(dir.path().join("edited.csv")).unwrap();
    for want in ["Lamp & shade", "35.5", "155.5", "120"] {
        assert!(
            csv.contains(want),
            "LibreOffice's CSV lacks {want:?}:\n{csv}"
        );
    }
    assert!(
        csv.contains("2026") || csv.contains("03/01/26") || csv.contains("3/1/26"),
        "the date is not shown as a date:\n{csv}"
    );

    // A PNG on a PDF page opens in LibreOffice Draw.
    let png: &[u8] = &[
        0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44,
        0x52, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x02, 0x08, 0x02, 0x00, 0x00, 0x00, 0xfd,
        0xd4, 0x9a, 0x73, 0x00, 0x00, 0x00, 0x10, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0xf8,
        0xcf, 0x00, 0x04, 0x10, 0xe2, 0xff, 0x7f, 0x00, 0x1a, 0xf3, 0x04, 0xfc, 0xc7, 0x99, 0x3c,
        0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
    ];
    let pdf = dir.path().join("pixel.pdf");
    std::fs::write(&pdf, office::image_to_pdf("pixel.png", png).unwrap()).unwrap();
    convert(bin, &pdf, "svg", dir.path());
    let svg = std::fs::read_to_string(dir.path().join("pixel.svg")).unwrap();
    assert!(
        svg.contains("<image") || svg.contains("image/png"),
        "no image in LibreOffice's SVG"
    );
}
