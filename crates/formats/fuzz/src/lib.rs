//! The fuzzed functions, and a stable-Rust driver that replays a corpus and mutates it.
//!
//! `<target> [corpus-dir] [seconds]`: runs every file of the corpus (default
//! `corpus/<target>`, seeded with documents Bureau writes when empty), then mutates random
//! corpus entries (bit flips, byte sets, truncation, splices, deterministic xorshift) until
//! the time budget (default 60 s) is spent. A panic saves the input to `artifacts/<target>/`
//! and aborts. Prints the corpus size, executions and seconds run.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bureau_formats::office::{self, WriteBlock};

/// Every reader must return (Ok or Err), never panic or hang.
pub fn docx_read(data: &[u8]) {
    let _ = office::read_docx("fuzz.docx", data);
}

/// Any bytes given to the spreadsheet reader as .xlsx, .csv or .tsv (the first byte picks
/// which): an error or a workbook, never a panic; a workbook read renders to text,
/// recalculates and writes back.
pub fn sheet_read(data: &[u8]) {
    let Some((kind, bytes)) = data.split_first() else {
        return;
    };
    let name = match kind % 3 {
        0 => "fuzz.xlsx",
        1 => "fuzz.csv",
        _ => "fuzz.tsv",
    };
    if let Ok(mut wb) = bureau_formats::sheet::read_file(name, bytes) {
        let _ = wb.to_text();
        wb.recalculate();
        let _ = bureau_formats::sheet::write_xlsx(&wb);
        if let Some(s) = wb.sheets.first() {
            let _ = bureau_formats::sheet::write_csv(s);
        }
    }
}

/// See [`docx_read`].
pub fn pptx_read(data: &[u8]) {
    let _ = office::read_pptx("fuzz.pptx", data);
}

/// See [`docx_read`].
pub fn pdf_read(data: &[u8]) {
    let _ = office::read_pdf("fuzz.pdf", data);
}

/// The in-place .docx editor on any bytes, with a fixed batch of every operation: an error or
/// a document that reads back, never a panic.
pub fn docx_edit(data: &[u8]) {
    use office::DocxOp;
    let ops = [
        DocxOp::Replace {
            block: 1,
            text: "new & <text>".into(),
            style: None,
        },
        DocxOp::Insert {
            before: None,
            after: Some(0),
            text: "inserted".into(),
            style: Some("Heading 2".into()),
        },
        DocxOp::SetCell {
            block: 4,
            row: 1,
            col: 1,
            text: "cell".into(),
        },
        DocxOp::AppendRow {
            block: 4,
            cells: vec!["row".into()],
        },
        DocxOp::Delete { block: 2 },
        DocxOp::Append {
            text: "end".into(),
            style: Some("List Bullet".into()),
        },
    ];
    let _ = office::docx_blocks("fuzz.docx", data);
    if let Ok(out) = office::edit_docx("fuzz.docx", data, &ops) {
        assert!(
            office::read_docx("fuzz.docx", &out).is_ok(),
            "an edited document does not read back"
        );
    }
}

/// The in-place .xlsx editor on any bytes: sets of every kind on sheet "Data" (and one
/// re-cache), an error, `None` (not possible in place) or a workbook, never a panic.
pub fn xlsx_edit(data: &[u8]) {
    use bureau_formats::sheet::{Cell, CellEdit, CellRef, CellValue};
    let at = |s: &str| CellRef::parse(s).unwrap_or(CellRef::new(0, 0));
    let set = |v: CellValue, f: Option<&str>| {
        CellEdit::Set(Cell {
            value: v,
            formula: f.map(str::to_string),
        })
    };
    let edits = vec![
        (
            "Data".to_string(),
            at("A1"),
            set(CellValue::Text("x & <y>".into()), None),
        ),
        (
            "Data".to_string(),
            at("B2"),
            set(CellValue::Number(2.5), None),
        ),
        (
            "Data".to_string(),
            at("C9"),
            set(CellValue::Number(5.0), Some("=B2*2")),
        ),
        (
            "Data".to_string(),
            at("D1"),
            set(CellValue::infer("2026-03-01"), None),
        ),
        ("Data".to_string(), at("A2"), set(CellValue::Empty, None)),
        (
            "Data".to_string(),
            at("B1"),
            CellEdit::Recache(CellValue::Bool(true)),
        ),
    ];
    let _ = bureau_formats::sheet::edit_xlsx("fuzz.xlsx", data, &edits);
}

/// Image → PDF on any bytes (PNG or JPEG by their signature).
pub fn image_to_pdf(data: &[u8]) {
    let _ = office::image_to_pdf("fuzz.png", data);
}

/// The dispatcher under every extension; the first byte picks the extension.
pub fn to_text(data: &[u8]) {
    const EXTS: [&str; 14] = [
        "docx", "pptx", "pdf", "xlsx", "csv", "html", "md", "json", "yaml", "vcf", "eml", "ics",
        "txt", "bin",
    ];
    let Some((first, rest)) = data.split_first() else {
        return;
    };
    let ext = EXTS[usize::from(*first) % EXTS.len()];
    let _ = office::to_text(&format!("fuzz.{ext}"), rest);
}

fn seeds(target: &str) -> Vec<Vec<u8>> {
    let blocks = vec![
        WriteBlock::Heading {
            level: 1,
            text: "Plan".into(),
        },
        WriteBlock::Paragraph {
            text: "Budget 11,917.00".into(),
        },
        WriteBlock::Bullets {
            items: vec!["a".into(), "b".into()],
        },
        WriteBlock::Table {
            rows: vec![vec!["x".into(), "y".into()], vec!["1".into(), "2".into()]],
        },
    ];
    let docx = office::write_docx("seed.docx", &blocks).unwrap_or_default();
    let pptx = office::write_pptx(&[("T".into(), "body\nmore".into(), "notes".into())])
        .unwrap_or_default();
    let pdf = office::write_pdf("seed", "# Title\n\n- item\n| a | b |\nbody\n");
    match target {
        "docx_read" | "docx_edit" => vec![docx],
        "xlsx_edit" => {
            let csv = b"Item,Cost,Total\nDesk,120,=B2*2\nLamp,35,=SUM(B2:B3)\n".to_vec();
            let mut wb = bureau_formats::sheet::read_file("Data.csv", &csv).unwrap_or_default();
            wb.recalculate();
            vec![bureau_formats::sheet::write_xlsx(&wb).unwrap_or_default()]
        }
        "image_to_pdf" => {
            // A 2×2 RGB PNG.
            vec![vec![
                0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48,
                0x44, 0x52, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x02, 0x08, 0x02, 0x00, 0x00,
                0x00, 0xfd, 0xd4, 0x9a, 0x73, 0x00, 0x00, 0x00, 0x10, 0x49, 0x44, 0x41, 0x54, 0x78,
                0xda, 0x63, 0xf8, 0xcf, 0x00, 0x04, 0x10, 0xe2, 0xff, 0x7f, 0x00, 0x1a, 0xf3, 0x04,
                0xfc, 0xc7, 0x99, 0x3c, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
                0x42, 0x60, 0x82,
            ]]
        }
        "pptx_read" => vec![pptx],
        "pdf_read" => vec![pdf],
        "sheet_read" => {
            // First byte: 0 = .xlsx, 1 = .csv, 2 = .tsv (see `sheet_read`).
            let csv =
                b"Region,Q1,Q2,Total\nNorth,1200.5,980,=B2+C2\nSouth,,\"3,400\",=SUM(B3:C3)\n"
                    .to_vec();
            let xlsx = bureau_formats::sheet::read_file("seed.csv", &csv)
                .ok()
                .and_then(|wb| bureau_formats::sheet::write_xlsx(&wb).ok())
                .unwrap_or_default();
            let tsv = b"a\tb\n1\tTRUE\n=A2*2\t2026-03-01\n".to_vec();
            vec![
                [vec![0u8], xlsx].concat(),
                [vec![1u8], csv].concat(),
                [vec![2u8], tsv].concat(),
            ]
        }
        _ => {
            let mut v = Vec::new();
            for (ext, body) in [
                (0u8, docx),
                (1, pptx),
                (2, pdf),
                (7, br#"{"a":[1,{"b":null}]}"#.to_vec()),
                (8, b"a: 1\nb: [x, y]\n".to_vec()),
                (9, b"BEGIN:VCARD\nFN:Dana\nEMAIL:d@x.test\nEND:VCARD\n".to_vec()),
                (10, b"From: a@x.test\r\nSubject: Hi\r\n\r\nBody\r\n".to_vec()),
                (11, b"BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:1\r\nDTSTART:20240701T090000Z\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n".to_vec()),
                (5, b"<html><body><h1>T</h1><p>x</p></body></html>".to_vec()),
            ] {
                let mut b = vec![ext];
                b.extend_from_slice(&body);
                v.push(b);
            }
            v
        }
    }
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

fn mutate(rng: &mut Rng, corpus: &[Vec<u8>]) -> Vec<u8> {
    let mut d = corpus[rng.below(corpus.len())].clone();
    for _ in 0..1 + rng.below(8) {
        match rng.below(5) {
            0 if !d.is_empty() => {
                let i = rng.below(d.len());
                d[i] ^= 1 << rng.below(8);
            }
            1 if !d.is_empty() => {
                let i = rng.below(d.len());
                d[i] = [0, 0xff, b'<', b'>', b'/', b'0', b'9', 0x7f][rng.below(8)];
            }
            2 if !d.is_empty() => d.truncate(rng.below(d.len())),
            3 => {
                let other = &corpus[rng.below(corpus.len())];
                if !other.is_empty() {
                    let a = rng.below(other.len());
                    let b = a + rng.below(other.len() - a);
                    let at = rng.below(d.len() + 1);
                    d.splice(at..at, other[a..b].iter().copied());
                }
            }
            _ if !d.is_empty() => {
                let i = rng.below(d.len());
                let n = rng.below(64).min(d.len() - i);
                let copy = d[i..i + n].to_vec();
                d.splice(i..i, copy);
            }
            _ => d.push(rng.next() as u8),
        }
    }
    d
}

/// The stable-Rust driver (see the module docs).
pub fn run_corpus(target: &str, f: fn(&[u8])) {
    let args: Vec<String> = std::env::args().collect();
    let dir = args
        .get(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new("corpus").join(target));
    let seconds: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(60);
    let _ = std::fs::create_dir_all(&dir);
    let mut corpus: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| std::fs::read(e.path()).ok())
                .collect()
        })
        .unwrap_or_default();
    if corpus.is_empty() {
        for (i, s) in seeds(target).into_iter().enumerate() {
            let _ = std::fs::write(dir.join(format!("seed-{i}")), &s);
            corpus.push(s);
        }
    }
    let run = |data: &[u8]| {
        if std::panic::catch_unwind(|| f(data)).is_err() {
            let art = Path::new("artifacts").join(target);
            let _ = std::fs::create_dir_all(&art);
            let p = art.join(format!("crash-{:016x}", fxhash(data)));
            let _ = std::fs::write(&p, data);
            eprintln!("{target}: PANIC on an input saved to {}", p.display());
            std::process::exit(1);
        }
    };
    let start = Instant::now();
    let mut execs = 0u64;
    for c in &corpus {
        run(c);
        execs += 1;
    }
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let budget = Duration::from_secs(seconds);
    let mut slowest = Duration::ZERO;
    while start.elapsed() < budget {
        let d = mutate(&mut rng, &corpus);
        let t = Instant::now();
        run(&d);
        slowest = slowest.max(t.elapsed());
        execs += 1;
    }
    println!(
        "{target}: corpus {} files, {execs} executions in {:.1} s, slowest input {:.3} s, no panic",
        corpus.len(),
        start.elapsed().as_secs_f64(),
        slowest.as_secs_f64()
    );
}

fn fxhash(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}
