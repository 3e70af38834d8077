//! Reading office files to text: 100 generated files (60 .docx of growing size, 20 .pdf of
//! 1–39 pages, 20 .pptx of 5–100 slides), each through `office::to_text`.
//!
//! Run: `cargo bench -p bureau-formats --bench office`. The files are kept in
//! `$TMPDIR/bureau-office-bench/` so `crates/formats/benches/office_python.py` can read the
//! same .docx files with python-docx for the comparison in docs/BENCHMARKS.md.

use std::path::PathBuf;

use bureau_formats::office::{self, WriteBlock};
use criterion::{Criterion, criterion_group, criterion_main};

fn corpus() -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for i in 0..60usize {
        let sections = 2 + i * 2;
        let mut blocks = Vec::new();
        for s in 0..sections {
            blocks.push(WriteBlock::Heading {
                level: 1 + (s % 3) as u8,
                text: format!("Section {s}"),
            });
            for p in 0..4 {
                blocks.push(WriteBlock::Paragraph {
                    text: format!(
                        "Paragraph {p} of section {s}: the quarterly figures for region {s} came to {},{:03}.00 EUR after the revised forecast.",
                        s + 1,
                        p * 37
                    ),
                });
            }
            blocks.push(WriteBlock::Bullets {
                items: (0..3)
                    .map(|b| format!("Action {b} for section {s}"))
                    .collect(),
            });
            if s % 2 == 0 {
                blocks.push(WriteBlock::Table {
                    rows: (0..6)
                        .map(|r| (0..4).map(|c| format!("r{r}c{c}")).collect())
                        .collect(),
                });
            }
        }
        files.push((
            format!("doc{i:02}.docx"),
            office::write_docx("bench.docx", &blocks).unwrap(),
        ));
    }
    for i in 0..20usize {
        let mut text = String::from("# Annual report\n\n");
        for l in 0..(i * 2 + 1) * 50 {
            text.push_str(&format!(
                "Line {l}: revenue, costs and the headcount plan for the next quarter.\n"
            ));
        }
        files.push((
            format!("report{i:02}.pdf"),
            office::write_pdf("Annual report", &text),
        ));
    }
    for i in 0..20usize {
        let slides: Vec<(String, String, String)> = (0..5 + i * 5)
            .map(|s| {
                (
                    format!("Slide title {s}"),
                    format!("Point one\nPoint two for {s}"),
                    format!("Speaker note {s}"),
                )
            })
            .collect();
        files.push((
            format!("deck{i:02}.pptx"),
            office::write_pptx(&slides).unwrap(),
        ));
    }
    files
}

fn bench(c: &mut Criterion) {
    // Measure the readers, not the outcomes they gave before (bureau_isolate::run_on_bytes_memo).
    bureau_isolate::set_memo(false);
    let files = corpus();
    let dir = std::env::temp_dir().join("bureau-office-bench");
    let _ = std::fs::create_dir_all(&dir);
    for (name, bytes) in &files {
        let _ = std::fs::write(dir.join(name), bytes);
    }
    let total: usize = files.iter().map(|(_, b)| b.len()).sum();
    eprintln!(
        "office bench: {} files, {total} bytes, written to {}",
        files.len(),
        PathBuf::from(&dir).display()
    );
    let mut g = c.benchmark_group("office");
    g.sample_size(10);
    g.bench_function("to_text_100_files", |b| {
        b.iter(|| {
            for (name, bytes) in &files {
                std::hint::black_box(office::to_text(name, bytes).unwrap());
            }
        })
    });
    for (kind, ext) in [
        ("docx_60", ".docx"),
        ("pdf_20", ".pdf"),
        ("pptx_20", ".pptx"),
    ] {
        let subset: Vec<&(String, Vec<u8>)> =
            files.iter().filter(|(n, _)| n.ends_with(ext)).collect();
        g.bench_function(kind, |b| {
            b.iter(|| {
                for (name, bytes) in &subset {
                    std::hint::black_box(office::to_text(name, bytes).unwrap());
                }
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
