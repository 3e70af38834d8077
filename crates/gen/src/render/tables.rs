//! Tables: .xlsx, .csv, .tsv, .json, .jsonl, .sql, .arff, .dat, .xml and the like.

use super::*;

pub(super) fn workbook(t: &Table) -> Result<Workbook, String> {
    let mut wb = Workbook::default();
    let name: String = t
        .name
        .chars()
        .filter(|c| !"[]:*?/\\'".contains(*c))
        .take(31)
        .collect();
    let name = if name.trim().is_empty() {
        "Sheet1".to_string()
    } else {
        name
    };
    let s = wb.add_sheet(&name)?;
    let sh = &mut wb.sheets[s];
    for (col, h) in t.header.iter().enumerate() {
        sh.set(
            CellRef::new(0, col as u32),
            Cell::value(CellValue::Text(h.clone())),
        );
    }
    for (r, row) in t.rows.iter().enumerate() {
        for (col, v) in row.iter().enumerate() {
            let value = match v {
                Val::Num(n) => CellValue::Number(*n),
                Val::Text(s) => CellValue::Text(s.clone()),
            };
            sh.set(CellRef::new(r as u32 + 1, col as u32), Cell::value(value));
        }
    }
    if !t.total_cols.is_empty() && !t.rows.is_empty() {
        let last = t.rows.len() as u32 + 1;
        let row = last;
        wb.set_input(s, CellRef::new(row, 0), "Total")?;
        for &col in &t.total_cols {
            let l = sheet::col_letters(col as u32);
            wb.set_input(
                s,
                CellRef::new(row, col as u32),
                &format!("=SUM({l}2:{l}{last})"),
            )?;
        }
        wb.recalculate();
    }
    Ok(wb)
}

pub(super) fn delimited(t: &Table, sep: u8) -> Result<Vec<u8>, String> {
    let mut w = csv_writer(sep);
    w.write_record(&t.header).map_err(|e| e.to_string())?;
    for r in &t.rows {
        w.write_record(r.iter().map(Val::show))
            .map_err(|e| e.to_string())?;
    }
    w.into_inner().map_err(|e| e.to_string())
}

pub(super) fn csv_writer(sep: u8) -> CsvW {
    CsvW {
        sep,
        out: Vec::new(),
    }
}

/// A tiny RFC 4180 writer (quotes only when needed); keeps the crate free of another
/// dependency for the one thing `csv` would do here.
pub(super) struct CsvW {
    sep: u8,
    out: Vec<u8>,
}

impl CsvW {
    fn write_record<I, S>(&mut self, cells: I) -> Result<(), std::io::Error>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        for (i, c) in cells.into_iter().enumerate() {
            if i > 0 {
                self.out.push(self.sep);
            }
            let c = c.as_ref();
            if c.bytes()
                .any(|b| b == self.sep || b == b'"' || b == b'\n' || b == b'\r')
            {
                self.out.push(b'"');
                self.out
                    .extend_from_slice(c.replace('"', "\"\"").as_bytes());
                self.out.push(b'"');
            } else {
                self.out.extend_from_slice(c.as_bytes());
            }
        }
        self.out.push(b'\n');
        Ok(())
    }
    fn into_inner(self) -> Result<Vec<u8>, std::io::Error> {
        Ok(self.out)
    }
}

pub(super) fn json_records(t: &Table) -> Vec<serde_json::Value> {
    t.rows
        .iter()
        .map(|r| {
            let mut m = serde_json::Map::new();
            for (h, v) in t.header.iter().zip(r) {
                let key = ascii_slug(h);
                m.insert(
                    key,
                    match v {
                        Val::Num(n) => serde_json::Number::from_f64(*n)
                            .map_or(serde_json::Value::Null, serde_json::Value::Number),
                        Val::Text(s) => serde_json::Value::String(s.clone()),
                    },
                );
            }
            serde_json::Value::Object(m)
        })
        .collect()
}

pub(super) fn sql_ident(s: &str) -> String {
    let s = ascii_slug(s);
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        format!("c_{s}")
    } else {
        s
    }
}

pub(crate) fn table_as(
    id: &str,
    t: &Table,
    c: &Company,
    f: &FileCtx,
    rng: &mut Rng,
) -> Result<Vec<u8>, GenError> {
    let e = |x: String| fail(f.path, x);
    Ok(match id {
        "xlsx" => sheet::write_xlsx(&workbook(t).map_err(e)?).map_err(|x| fail(f.path, x))?,
        "csv" => delimited(t, b',').map_err(e)?,
        "tsv" | "dat" if id == "tsv" => delimited(t, b'\t').map_err(e)?,
        "dat" => {
            // Whitespace-separated numeric columns with a comment header.
            let mut s = format!("# {}\n# {}\n", t.name, t.header.join(" "));
            for r in &t.rows {
                let cells: Vec<String> = r
                    .iter()
                    .map(|v| match v {
                        Val::Num(n) => format!("{n}"),
                        Val::Text(x) => ascii_slug(x),
                    })
                    .collect();
                s.push_str(&cells.join(" "));
                s.push('\n');
            }
            s.into_bytes()
        }
        "json" => {
            let v = serde_json::json!({
                "name": t.name,
                "source": c.name,
                "generated": f.date.to_string(),
                "records": json_records(t),
            });
            let mut s = serde_json::to_string_pretty(&v).map_err(|x| fail(f.path, x))?;
            s.push('\n');
            s.into_bytes()
        }
        "jsonl" => {
            let mut s = String::new();
            for r in json_records(t) {
                s.push_str(&r.to_string());
                s.push('\n');
            }
            s.into_bytes()
        }
        "sql" => {
            let table = sql_ident(&t.name);
            let cols: Vec<String> = t
                .header
                .iter()
                .enumerate()
                .map(|(i, h)| {
                    let kind = match t.rows.first().and_then(|r| r.get(i)) {
                        Some(Val::Num(_)) => "REAL",
                        _ => "TEXT",
                    };
                    format!("  {} {kind}", sql_ident(h))
                })
                .collect();
            let mut s = format!(
                "-- {} export, {}\nCREATE TABLE IF NOT EXISTS {table} (\n{}\n);\n",
                c.name,
                f.date,
                cols.join(",\n")
            );
            for r in &t.rows {
                let vals: Vec<String> = r
                    .iter()
                    .map(|v| match v {
                        Val::Num(n) => format!("{n}"),
                        Val::Text(x) => format!("'{}'", x.replace('\'', "''")),
                    })
                    .collect();
                s.push_str(&format!(
                    "INSERT INTO {table} VALUES ({});\n",
                    vals.join(", ")
                ));
            }
            s.into_bytes()
        }
        "arff" => {
            let mut s = format!("% {}\n@RELATION {}\n\n", c.name, sql_ident(&t.name));
            for (i, h) in t.header.iter().enumerate() {
                let kind = match t.rows.first().and_then(|r| r.get(i)) {
                    Some(Val::Num(_)) => "NUMERIC",
                    _ => "STRING",
                };
                s.push_str(&format!("@ATTRIBUTE {} {kind}\n", sql_ident(h)));
            }
            s.push_str("\n@DATA\n");
            for r in &t.rows {
                let vals: Vec<String> = r
                    .iter()
                    .map(|v| match v {
                        Val::Num(n) => format!("{n}"),
                        Val::Text(x) => format!("'{}'", x.replace('\'', "")),
                    })
                    .collect();
                s.push_str(&vals.join(","));
                s.push('\n');
            }
            s.into_bytes()
        }
        "xml" => {
            let mut s = format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<dataset name=\"{}\" source=\"{}\" date=\"{}\">\n",
                xml_escape(&t.name),
                xml_escape(c.name),
                f.date
            );
            for r in &t.rows {
                s.push_str("  <record>\n");
                for (h, v) in t.header.iter().zip(r) {
                    let tag = sql_ident(h);
                    s.push_str(&format!("    <{tag}>{}</{tag}>\n", xml_escape(&v.show())));
                }
                s.push_str("  </record>\n");
            }
            s.push_str("</dataset>\n");
            s.into_bytes()
        }
        "md" => {
            let mut s = format!("# {}\n\n", t.name);
            s.push_str(&md_table(&t.text_rows()));
            s.into_bytes()
        }
        "html" | "docx" | "pdf" | "pptx" | "txt" | "rst" | "tex" | "rtf" => {
            let d = Doc {
                title: t.name.clone(),
                blocks: vec![Block::Table(t.text_rows())],
            };
            doc_as(id, &d, c, f, rng)?
        }
        "png" | "jpg" | "gif" | "svg" => image(id, t, f, rng)?,
        other => {
            return Err(fail(
                f.path,
                format!("a table cannot be written as {other}"),
            ));
        }
    })
}
