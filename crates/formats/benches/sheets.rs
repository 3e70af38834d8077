//! Reading and writing a generated 100×20 workbook (numbers, text, a formula per row).

use bureau_formats::sheet::{CellRef, Workbook, read_file, write_xlsx};
use criterion::{Criterion, criterion_group, criterion_main};

fn workbook() -> Workbook {
    let mut wb = Workbook::default();
    let s = wb.add_sheet("Data").unwrap();
    for r in 0..100u32 {
        for c in 0..19u32 {
            let v = if c == 0 {
                format!("row {r}")
            } else {
                format!("{}", r * 19 + c)
            };
            wb.set_input(s, CellRef::new(r, c), &v).unwrap();
        }
        wb.set_input(s, CellRef::new(r, 19), &format!("=SUM(B{0}:S{0})", r + 1))
            .unwrap();
    }
    wb.recalculate();
    wb
}

fn bench(c: &mut Criterion) {
    // Measure the readers, not the outcomes they gave before (bureau_isolate::run_on_bytes_memo).
    bureau_isolate::set_memo(false);
    let wb = workbook();
    let bytes = write_xlsx(&wb).unwrap();
    c.bench_function("sheet_write_xlsx_100x20", |b| {
        b.iter(|| write_xlsx(&wb).unwrap())
    });
    c.bench_function("sheet_read_xlsx_100x20", |b| {
        b.iter(|| read_file("bench.xlsx", &bytes).unwrap())
    });
    c.bench_function("sheet_recalculate_100x20", |b| {
        b.iter(|| {
            let mut w = wb.clone();
            w.recalculate();
            w
        })
    });
    c.bench_function("sheet_to_text_100x20", |b| b.iter(|| wb.to_text()));
}

criterion_group!(benches, bench);
criterion_main!(benches);
