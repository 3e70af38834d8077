//! Reading and writing spreadsheet files: .xlsx/.xlsm (calamine; rust_xlsxwriter) and
//! .csv/.tsv (csv). Readers are bounded against hostile files.

use std::io::{Cursor, Read};

use calamine::{DataRef, Reader, SheetType, Xlsx};

use super::{Cell, CellRef, CellValue, Workbook, a1};
use crate::FormatError;
use crate::error::guard;

/// Most non-empty cells read from one file.
pub const MAX_CELLS: usize = 1_000_000;
/// Largest file accepted.
const MAX_FILE_BYTES: usize = 64 * 1024 * 1024;
// The zip limits are the office documents' own (`crate::office`): entries per archive, bytes
// all entries may decompress to, and the decompressed/compressed ratio accepted for the whole
// archive when it expands beyond 16 MB (typical spreadsheets compress 5–20×).
use crate::office::{MAX_RATIO, MAX_TOTAL_BYTES as MAX_UNCOMPRESSED, MAX_ZIP_ENTRIES};
/// Largest area of a shared formula (`<f t="shared" ref="...">`), which readers expand.
const MAX_SHARED_FORMULA_AREA: u64 = 1_000_000;

fn invalid(file: &str, reason: impl Into<String>) -> FormatError {
    FormatError::InvalidDocument {
        file: file.to_string(),
        reason: reason.into(),
    }
}

/// Read a spreadsheet file by its name's extension (.xlsx, .xlsm, .csv, .tsv). Formulas
/// keep the value cached in the file; formulas without one are computed.
///
/// The file is parsed in an isolated child process (see [`crate::isolated`]): a file that
/// crashes, exhausts or hangs the parser is an [`FormatError::InvalidDocument`] naming the
/// limit, never a crash of the caller.
pub fn read_file(name: &str, bytes: &[u8]) -> Result<Workbook, FormatError> {
    crate::isolated::read(name, bytes, |n, b| read_file_in_process(n, b))
}

/// [`read_file`] in the calling process, without crash isolation.
pub(crate) fn read_file_in_process(name: &str, bytes: &[u8]) -> Result<Workbook, FormatError> {
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    if bytes.len() > MAX_FILE_BYTES {
        return Err(invalid(
            name,
            format!(
                "the file is {} bytes; spreadsheets over {MAX_FILE_BYTES} bytes are not read",
                bytes.len()
            ),
        ));
    }
    let mut wb = match ext.as_str() {
        "xlsx" | "xlsm" => read_xlsx(name, bytes)?,
        "csv" => read_delimited(name, bytes, b',')?,
        "tsv" => read_delimited(name, bytes, b'\t')?,
        _ => {
            return Err(invalid(
                name,
                "not a spreadsheet file: the name must end in .xlsx, .xlsm, .csv or .tsv",
            ));
        }
    };
    let needs_values = wb
        .sheets
        .iter()
        .flat_map(|s| s.cells.values())
        .any(|c| c.formula.is_some() && c.value == CellValue::Empty);
    if needs_values {
        wb.recalculate();
    }
    Ok(wb)
}

fn sheet_name_for(name: &str) -> String {
    let file = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let stem = file.rsplit_once('.').map_or(file, |(s, _)| s);
    let cleaned: String = stem
        .chars()
        .map(|c| if "[]:*?/\\".contains(c) { '_' } else { c })
        .take(31)
        .collect();
    let cleaned = cleaned.trim_matches('\'').to_string();
    if cleaned.trim().is_empty() {
        "Sheet1".into()
    } else {
        cleaned
    }
}

/// CSV/TSV: one sheet named after the file; cells typed with [`CellValue::infer`] (no
/// formulas: a CSV cell starting with `=` is text).
fn read_delimited(name: &str, bytes: &[u8], delimiter: u8) -> Result<Workbook, FormatError> {
    if bytes.contains(&0) {
        return Err(invalid(
            name,
            "this is a binary file, not comma/tab-separated text",
        ));
    }
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t.to_string(),
        // Latin-1 fallback.
        Err(_) => bytes.iter().map(|b| char::from(*b)).collect(),
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut rdr = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut sheet = super::Sheet::new(sheet_name_for(name));
    let mut count = 0usize;
    for (r, rec) in rdr.records().enumerate() {
        let rec = rec.map_err(|e| invalid(name, format!("cannot read row {}: {e}", r + 1)))?;
        let Ok(row) = u32::try_from(r) else { break };
        if row > a1::MAX_ROW {
            return Err(invalid(name, "more than 1,048,576 rows"));
        }
        for (c, field) in rec.iter().enumerate() {
            if field.is_empty() {
                continue;
            }
            let Ok(col) = u32::try_from(c) else { break };
            if col > a1::MAX_COL {
                return Err(invalid(
                    name,
                    format!("row {} has more than 16,384 columns", r + 1),
                ));
            }
            count += 1;
            if count > MAX_CELLS {
                return Err(invalid(
                    name,
                    format!("more than {MAX_CELLS} non-empty cells; split the file"),
                ));
            }
            let value = if field.starts_with('=') {
                CellValue::Text(field.to_string())
            } else {
                CellValue::infer(field)
            };
            sheet.set(CellRef::new(row, col), Cell::value(value));
        }
    }
    Ok(Workbook {
        sheets: vec![sheet],
    })
}

/// Check an .xlsx zip before any reader expands it: entry count, real decompressed sizes
/// (a zip bomb stops at the limit), compression ratio, shared-formula areas.
pub(crate) fn check_zip(name: &str, bytes: &[u8]) -> Result<(), FormatError> {
    if bytes.starts_with(&[0xD0, 0xCF, 0x11, 0xE0]) {
        return Err(invalid(
            name,
            "the file is password-protected (encrypted) or an old binary .xls; save it without a password as .xlsx",
        ));
    }
    if !bytes.starts_with(b"PK") {
        return Err(invalid(
            name,
            "not an .xlsx file (an .xlsx is a zip archive; this one does not start like one)",
        ));
    }
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| {
        invalid(
            name,
            format!(
                "the .xlsx archive is corrupt or truncated ({e}); re-save or regenerate the file"
            ),
        )
    })?;
    if zip.len() > MAX_ZIP_ENTRIES {
        return Err(invalid(
            name,
            format!(
                "the .xlsx archive has {} entries (at most {MAX_ZIP_ENTRIES} are read)",
                zip.len()
            ),
        ));
    }
    let shared_ref = regex::bytes::Regex::new(r#"<(?:\w+:)?f\b[^>]*\bref="([A-Za-z0-9$:]+)""#)
        .map_err(|e| invalid(name, format!("internal pattern error: {e}")))?;
    let mut total: u64 = 0;
    let mut buf = Vec::new();
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).map_err(|e| {
            let msg = e.to_string();
            if msg.to_lowercase().contains("password") || msg.to_lowercase().contains("encrypt") {
                invalid(
                    name,
                    "the .xlsx archive is encrypted; save it without a password",
                )
            } else {
                invalid(
                    name,
                    format!("entry {i} of the .xlsx archive cannot be read ({msg})"),
                )
            }
        })?;
        if entry.encrypted() {
            return Err(invalid(
                name,
                "the .xlsx archive is encrypted; save it without a password",
            ));
        }
        let entry_name = entry.name().to_string();
        let declared = entry.size();
        if total.saturating_add(declared) > MAX_UNCOMPRESSED {
            return Err(invalid(
                name,
                format!(
                    "the .xlsx archive expands to more than {MAX_UNCOMPRESSED} bytes (a zip bomb or a huge workbook); not read"
                ),
            ));
        }
        let is_sheet = entry_name.starts_with("xl/worksheets/") && entry_name.ends_with(".xml");
        buf.clear();
        let limit = MAX_UNCOMPRESSED - total + 1;
        let read = if is_sheet {
            (&mut entry).take(limit).read_to_end(&mut buf)
        } else {
            std::io::copy(&mut (&mut entry).take(limit), &mut std::io::sink()).map(|n| n as usize)
        }
        .map_err(|e| {
            invalid(
                name,
                format!("entry {entry_name:?} of the .xlsx archive is corrupt or truncated ({e})"),
            )
        })?;
        total += read as u64;
        if total > MAX_UNCOMPRESSED {
            return Err(invalid(
                name,
                format!(
                    "the .xlsx archive expands to more than {MAX_UNCOMPRESSED} bytes (a zip bomb or a huge workbook); not read"
                ),
            ));
        }
        if is_sheet {
            for caps in shared_ref.captures_iter(&buf) {
                let area = caps
                    .get(1)
                    .and_then(|m| std::str::from_utf8(m.as_bytes()).ok())
                    .and_then(a1::RangeRef::parse)
                    .map_or(u64::MAX, |r| r.rows() * r.cols());
                if area > MAX_SHARED_FORMULA_AREA {
                    return Err(invalid(
                        name,
                        format!(
                            "sheet {entry_name:?} has a shared formula over more than {MAX_SHARED_FORMULA_AREA} cells; not read"
                        ),
                    ));
                }
            }
        }
    }
    if total > 16 * 1024 * 1024 && total / (bytes.len() as u64).max(1) > MAX_RATIO {
        return Err(invalid(
            name,
            format!(
                "the .xlsx archive expands {}× ({total} bytes from {}): a zip bomb; not read",
                total / (bytes.len() as u64).max(1),
                bytes.len()
            ),
        ));
    }
    Ok(())
}

fn read_xlsx(name: &str, bytes: &[u8]) -> Result<Workbook, FormatError> {
    check_zip(name, bytes)?;
    guard("spreadsheet reader", || read_xlsx_checked(name, bytes))?
}

fn convert(name: &str, v: &DataRef<'_>) -> CellValue {
    let _ = name;
    match v {
        DataRef::Empty => CellValue::Empty,
        DataRef::Int(i) => CellValue::Number(*i as f64),
        DataRef::Float(f) => CellValue::Number(*f),
        DataRef::String(s) => CellValue::Text(s.clone()),
        DataRef::SharedString(s) => CellValue::Text((*s).to_string()),
        DataRef::Bool(b) => CellValue::Bool(*b),
        DataRef::Error(e) => CellValue::Error(e.to_string()),
        DataRef::DateTime(d) => {
            if d.is_datetime()
                && let Some(dt) = d.as_datetime()
            {
                if dt.time() == chrono::NaiveTime::MIN {
                    CellValue::Date(dt.date())
                } else {
                    CellValue::DateTime(dt)
                }
            } else {
                CellValue::Number(d.as_f64())
            }
        }
        DataRef::DateTimeIso(s) => match CellValue::infer(s) {
            v @ (CellValue::Date(_) | CellValue::DateTime(_)) => v,
            _ => CellValue::Text(s.clone()),
        },
        DataRef::DurationIso(s) => CellValue::Text(s.clone()),
    }
}

fn read_xlsx_checked(name: &str, bytes: &[u8]) -> Result<Workbook, FormatError> {
    let mut xl: Xlsx<_> = Xlsx::new(Cursor::new(bytes)).map_err(|e| {
        let msg = e.to_string();
        if msg.to_lowercase().contains("password") {
            invalid(
                name,
                "the workbook is password-protected; save it without a password",
            )
        } else {
            invalid(name, format!("not a readable .xlsx workbook ({msg})"))
        }
    })?;
    let names: Vec<String> = xl
        .sheets_metadata()
        .iter()
        .filter(|s| s.typ == SheetType::WorkSheet)
        .map(|s| s.name.clone())
        .collect();
    let mut wb = Workbook::default();
    let mut count = 0usize;
    for sheet_name in names {
        let mut sheet = super::Sheet::new(sheet_name.clone());
        let err = |e: calamine::XlsxError| {
            invalid(name, format!("sheet {sheet_name:?} cannot be read ({e})"))
        };
        {
            let mut cells = xl.worksheet_cells_reader(&sheet_name).map_err(err)?;
            while let Some(cell) = cells.next_cell().map_err(err)? {
                let (row, col) = cell.get_position();
                if row > a1::MAX_ROW || col > a1::MAX_COL {
                    continue;
                }
                let value = convert(name, cell.get_value());
                if value == CellValue::Empty {
                    continue;
                }
                count += 1;
                if count > MAX_CELLS {
                    return Err(invalid(
                        name,
                        format!("more than {MAX_CELLS} non-empty cells; not read"),
                    ));
                }
                sheet
                    .cells
                    .insert(CellRef::new(row, col), Cell::value(value));
            }
        }
        {
            let mut cells = xl.worksheet_cells_reader(&sheet_name).map_err(err)?;
            while let Some(cell) = cells.next_formula().map_err(err)? {
                let f = cell.get_value();
                if f.is_empty() {
                    continue;
                }
                let (row, col) = cell.get_position();
                if row > a1::MAX_ROW || col > a1::MAX_COL {
                    continue;
                }
                let at = CellRef::new(row, col);
                let entry = sheet.cells.entry(at).or_insert_with(|| {
                    count += 1;
                    Cell::default()
                });
                entry.formula = Some(format!("={f}"));
                // A formula saved without a computed result (openpyxl, hand-written files)
                // reads as an empty string: it has no value yet, and is computed below.
                if entry.value == CellValue::Text(String::new()) {
                    entry.value = CellValue::Empty;
                }
                // Bureau's own error for circular references is stored as a text result.
                if entry.value == CellValue::Text("#CYCLE!".into()) {
                    entry.value = CellValue::Error("#CYCLE!".into());
                }
                if count > MAX_CELLS {
                    return Err(invalid(
                        name,
                        format!("more than {MAX_CELLS} non-empty cells; not read"),
                    ));
                }
            }
        }
        wb.sheets.push(sheet);
    }
    if wb.sheets.is_empty() {
        return Err(invalid(name, "the workbook has no worksheets"));
    }
    Ok(wb)
}

/// What an .xlsx holds beyond sheets of values and formulas — what [`read_file`] followed by
/// [`write_xlsx`] does not keep: `"cell formatting"`, `"column widths or row heights"`,
/// `"merged cells"`, `"charts or images"`, `"comments"`, `"data validation"`,
/// `"conditional formatting"`, `"hyperlinks"`, `"defined names"`, `"hidden sheets"`,
/// `"macros"`, `"pivot tables"`, `"tables"`. Found by looking for their parts and elements (no
/// XML is parsed); read in an isolated child process like every reader.
pub fn xlsx_extras(name: &str, bytes: &[u8]) -> Result<Vec<String>, FormatError> {
    crate::isolated::read(name, bytes, |n, b| xlsx_extras_in_process(n, b))
}

pub(crate) fn xlsx_extras_in_process(name: &str, bytes: &[u8]) -> Result<Vec<String>, FormatError> {
    check_zip(name, bytes)?;
    let mut zip = crate::office::archive::Archive::open(name, bytes, ".xlsx")?;
    let names = zip.names();
    let has = |hay: &[u8], needle: &str| hay.windows(needle.len()).any(|w| w == needle.as_bytes());
    let mut found: Vec<&str> = Vec::new();
    let add = |what: &'static str, found: &mut Vec<&str>| {
        if !found.contains(&what) {
            found.push(what);
        }
    };
    for n in &names {
        if n.starts_with("xl/drawings/")
            || n.starts_with("xl/charts/")
            || n.starts_with("xl/media/")
        {
            add("charts or images", &mut found);
        }
        if n.starts_with("xl/comments") || n.starts_with("xl/threadedComments/") {
            add("comments", &mut found);
        }
        if n.ends_with("vbaProject.bin") {
            add("macros", &mut found);
        }
        if n.starts_with("xl/pivotTables/") {
            add("pivot tables", &mut found);
        }
        if n.starts_with("xl/tables/") {
            add("tables", &mut found);
        }
    }
    if let Some(styles) = zip.read("xl/styles.xml")?
        && has_cell_formatting(&styles)
    {
        add("cell formatting", &mut found);
    }
    if let Some(wb) = zip.read("xl/workbook.xml")? {
        if has(&wb, "<definedName ") {
            add("defined names", &mut found);
        }
        if has(&wb, "state=\"hidden\"") || has(&wb, "state=\"veryHidden\"") {
            add("hidden sheets", &mut found);
        }
    }
    for n in names
        .iter()
        .filter(|n| n.starts_with("xl/worksheets/") && n.ends_with(".xml"))
    {
        let Some(x) = zip.read(n)? else { continue };
        for (needle, what) in [
            ("<col ", "column widths or row heights"),
            ("customHeight=", "column widths or row heights"),
            ("<mergeCell ", "merged cells"),
            ("<dataValidation ", "data validation"),
            ("<conditionalFormatting", "conditional formatting"),
            ("<hyperlink ", "hyperlinks"),
        ] {
            if has(&x, needle) {
                add(what, &mut found);
            }
        }
    }
    let mut out: Vec<String> = found.into_iter().map(str::to_string).collect();
    out.sort();
    Ok(out)
}

/// Whether a styles part formats cells beyond what [`write_xlsx`] writes (dates): fonts,
/// fills, borders, alignment, or number formats other than dates.
fn has_cell_formatting(styles: &[u8]) -> bool {
    use regex::bytes::Regex;
    let (Ok(xf_style), Ok(num_fmt), Ok(xf_num)) = (
        Regex::new(r#"<(?:\w+:)?xf\b[^>]*\b(?:fontId|fillId|borderId)="[1-9]"#),
        Regex::new(r#"<(?:\w+:)?numFmt\b[^>]*\bformatCode="([^"]*)""#),
        Regex::new(r#"<(?:\w+:)?xf\b[^>]*\bnumFmtId="(\d+)""#),
    ) else {
        return true;
    };
    if xf_style.is_match(styles) || styles.windows(10).any(|w| w == b"<alignment") {
        return true;
    }
    let date_code = |c: &[u8]| {
        let c = String::from_utf8_lossy(c).to_ascii_lowercase();
        c.contains('y') || c.contains('d') && c.contains('m')
    };
    if num_fmt
        .captures_iter(styles)
        .any(|c| c.get(1).is_some_and(|m| !date_code(m.as_bytes())))
    {
        return true;
    }
    // Built-in number formats other than general (0) and the dates and times (14–22).
    xf_num.captures_iter(styles).any(|c| {
        c.get(1)
            .and_then(|m| std::str::from_utf8(m.as_bytes()).ok())
            .and_then(|n| n.parse::<u32>().ok())
            .is_some_and(|n| (1..=13).contains(&n) || (23..164).contains(&n))
    })
}

/// Write a workbook as .xlsx: every sheet, values, formulas with their computed values as
/// cached results (so readers that do not compute, like openpyxl with data_only, see them),
/// dates with a date format. Deterministic bytes.
pub fn write_xlsx(wb: &Workbook) -> Result<Vec<u8>, FormatError> {
    use rust_xlsxwriter::{DocProperties, ExcelDateTime, Format, Formula};
    let fail =
        |e: rust_xlsxwriter::XlsxError| invalid("workbook", format!("cannot write .xlsx: {e}"));
    if wb.sheets.is_empty() {
        return Err(invalid(
            "workbook",
            "a workbook needs at least one sheet to be written as .xlsx",
        ));
    }
    let mut book = rust_xlsxwriter::Workbook::new();
    let epoch = ExcelDateTime::from_ymd(2000, 1, 1).map_err(fail)?;
    book.set_properties(&DocProperties::new().set_creation_datetime(&epoch));
    let date_fmt = Format::new().set_num_format("yyyy-mm-dd");
    let datetime_fmt = Format::new().set_num_format("yyyy-mm-dd hh:mm:ss");
    for s in &wb.sheets {
        let ws = book.add_worksheet();
        ws.set_name(&s.name).map_err(fail)?;
        for (c, cell) in &s.cells {
            let (row, col) = (c.row, c.col as u16);
            if let Some(f) = &cell.formula {
                let result = match &cell.value {
                    CellValue::Empty => String::new(),
                    v => v.display(),
                };
                ws.write_formula(row, col, Formula::new(f.as_str()).set_result(result))
                    .map_err(fail)?;
                continue;
            }
            match &cell.value {
                CellValue::Empty => {}
                CellValue::Number(n) => {
                    ws.write_number(row, col, *n).map_err(fail)?;
                }
                CellValue::Text(t) => {
                    ws.write_string(row, col, t.as_str()).map_err(fail)?;
                }
                CellValue::Bool(b) => {
                    ws.write_boolean(row, col, *b).map_err(fail)?;
                }
                v @ CellValue::Date(_) => {
                    ws.write_number_with_format(row, col, v.serial().unwrap_or(0.0), &date_fmt)
                        .map_err(fail)?;
                }
                v @ CellValue::DateTime(_) => {
                    ws.write_number_with_format(row, col, v.serial().unwrap_or(0.0), &datetime_fmt)
                        .map_err(fail)?;
                }
                CellValue::Error(e) => {
                    const EXCEL: &[&str] = &[
                        "#DIV/0!", "#N/A", "#NAME?", "#NULL!", "#NUM!", "#REF!", "#VALUE!",
                    ];
                    if EXCEL.contains(&e.as_str()) {
                        ws.write_formula(
                            row,
                            col,
                            Formula::new(format!("={e}")).set_result(e.as_str()),
                        )
                        .map_err(fail)?;
                    } else {
                        ws.write_string(row, col, e.as_str()).map_err(fail)?;
                    }
                }
            }
        }
    }
    book.save_to_buffer().map_err(fail)
}

/// Write one sheet as CSV: values as shown (formulas as their computed values), rows up to
/// the last non-empty cell, `\n` line ends.
pub fn write_csv(sheet: &super::Sheet) -> Result<Vec<u8>, FormatError> {
    let mut w = csv::WriterBuilder::new()
        .flexible(true)
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    let fail = |e: csv::Error| invalid(&sheet.name, format!("cannot write CSV: {e}"));
    if let Some(r) = sheet.used_range() {
        let mut row_cells: Vec<String> = Vec::new();
        for row in 0..=r.end.row {
            row_cells.clear();
            let last = sheet
                .cells
                .range(CellRef::new(row, 0)..=CellRef::new(row, a1::MAX_COL))
                .next_back()
                .map(|(c, _)| c.col);
            if let Some(last) = last {
                for col in 0..=last {
                    row_cells.push(sheet.value(CellRef::new(row, col)).display());
                }
            }
            if row_cells.is_empty() {
                w.write_record([""]).map_err(fail)?;
            } else {
                w.write_record(&row_cells).map_err(fail)?;
            }
        }
    }
    w.into_inner()
        .map_err(|e| invalid(&sheet.name, format!("cannot write CSV: {e}")))
}
