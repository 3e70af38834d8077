//! Any bytes given to the spreadsheet reader as .xlsx, .csv or .tsv: an error or a workbook,
//! never a panic, a hang or unbounded memory; a workbook read renders to text and writes back.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The first byte picks the format, so one corpus covers every reader.
    let (kind, bytes) = match data.split_first() {
        Some((k, rest)) => (*k, rest),
        None => return,
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
});
