//! Bodies to bytes, per file type. Office formats go through `bureau_formats` writers;
//! images and archives through their crates; text formats are written here.

use std::io::Write;

use bureau_formats::mail::{Address, OutgoingMail, build_eml};
use bureau_formats::office::{self, WriteBlock};
use bureau_formats::sheet::{self, Cell, CellRef, CellValue, Workbook};
use chrono::{NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Utc};

use crate::GenError;
use crate::company::{Company, ascii_slug, thousands};
use crate::content::{Block, Body, Doc, Event, Mail, Table, Val, long_date, md_table};
use crate::filler;
use crate::rng::Rng;
use crate::types::FileType;

/// What a renderer knows about the file besides its body.
pub(crate) struct FileCtx<'a> {
    pub path: &'a str,
    pub stem: &'a str,
    pub date: NaiveDate,
}

fn fail(path: &str, what: impl std::fmt::Display) -> GenError {
    GenError::Render {
        path: path.to_string(),
        reason: what.to_string(),
    }
}

pub(crate) fn at(d: NaiveDate, h: u32, m: u32) -> NaiveDateTime {
    d.and_time(NaiveTime::from_hms_opt(h, m, 0).unwrap_or(NaiveTime::MIN))
}

/// Render `body` as a file of type `ty`.
pub(crate) fn render(
    ty: &FileType,
    body: &Body,
    c: &Company,
    f: &FileCtx,
    rng: &mut Rng,
) -> Result<Vec<u8>, GenError> {
    let id = ty.id;
    match body {
        Body::Text(t) => Ok(t.clone().into_bytes()),
        Body::CopyOf(_) => Err(fail(f.path, "copies are resolved after rendering")),
        Body::Doc(d) => doc_as(id, d, c, f, rng),
        Body::Table(t) => table_as(id, t, c, f, rng),
        Body::Mail(m) => mail_as(id, m, c, f),
        Body::Events(e) => Ok(ics(e, c).into_bytes()),
        Body::Contacts(p) => Ok(vcf(p, c).into_bytes()),
        Body::Filler => filler_as(ty, c, f, rng),
    }
}

fn filler_as(ty: &FileType, c: &Company, f: &FileCtx, rng: &mut Rng) -> Result<Vec<u8>, GenError> {
    use crate::types::Category;
    match ty.id {
        "docx" | "pdf" | "md" | "txt" | "rst" | "tex" | "rtf" | "html" | "pptx" => {
            doc_as(ty.id, &filler::doc(c, f, rng), c, f, rng)
        }
        "xlsx" | "csv" | "tsv" | "jsonl" | "sql" | "arff" | "dat" | "xml" => {
            table_as(ty.id, &filler::table(c, f, rng), c, f, rng)
        }
        "json" if rng.chance(0.6) => table_as("json", &filler::table(c, f, rng), c, f, rng),
        "eml" | "mbox" => {
            let n = if ty.id == "mbox" { 2 + rng.below(6) } else { 1 };
            let mails = filler::mails(c, f, rng, n);
            mail_as(ty.id, &mails, c, f)
        }
        "ics" => Ok(ics(&filler::events(c, f, rng), c).into_bytes()),
        "vcf" => {
            let mut idx: Vec<usize> = (0..c.people.len()).collect();
            rng.shuffle(&mut idx);
            idx.truncate(3 + rng.below(8));
            idx.sort_unstable();
            Ok(vcf(&idx, c).into_bytes())
        }
        "png" | "jpg" | "gif" | "svg" => {
            let t = filler::table(c, f, rng);
            image(ty.id, &t, f, rng)
        }
        "zip" | "tar" | "tar.gz" | "gz" => archive(ty.id, c, f, rng),
        _ if ty.category == Category::Image => Err(fail(f.path, "no image renderer")),
        _ => Ok(filler::text(ty.id, c, f, rng).into_bytes()),
    }
}

// ---------------------------------------------------------------- documents

pub(crate) fn doc_as(
    id: &str,
    d: &Doc,
    c: &Company,
    f: &FileCtx,
    rng: &mut Rng,
) -> Result<Vec<u8>, GenError> {
    Ok(match id {
        "docx" => {
            let mut blocks = vec![WriteBlock::Heading {
                level: 1,
                text: d.title.clone(),
            }];
            for b in &d.blocks {
                blocks.push(match b {
                    Block::H(l, t) => WriteBlock::Heading {
                        level: (*l + 1).min(6),
                        text: t.clone(),
                    },
                    Block::P(t) => WriteBlock::Paragraph { text: t.clone() },
                    Block::Bullets(items) => WriteBlock::Bullets {
                        items: items.clone(),
                    },
                    Block::Table(rows) => WriteBlock::Table { rows: rows.clone() },
                });
            }
            office::write_docx(f.path, &blocks).map_err(|e| fail(f.path, e))?
        }
        "pdf" => office::write_pdf(&d.title, &d.to_markdown()),
        "md" => d.to_markdown().into_bytes(),
        "txt" => d.to_plain().into_bytes(),
        "rst" => rst(d).into_bytes(),
        "tex" => tex(d).into_bytes(),
        "rtf" => rtf(d).into_bytes(),
        "html" => html(d, c).into_bytes(),
        "pptx" => pptx(d, c, f)?,
        "eml" | "mbox" => {
            let from = rng.below(c.people.len());
            let to = (from + 1 + rng.below(c.people.len() - 1)) % c.people.len();
            let m = Mail {
                from,
                to: vec![to],
                cc: vec![],
                subject: d.title.clone(),
                body: format!("Hi {},\n\n{}\n", c.person(to).first, d.to_plain()),
                at: at(f.date, 9 + rng.below(8) as u32, rng.below(60) as u32),
                id: format!("{}.{}@{}", f.stem, rng.u64() % 100_000, c.domain),
                in_reply_to: None,
            };
            mail_as(id, &[m], c, f)?
        }
        other => {
            return Err(fail(
                f.path,
                format!("a document cannot be written as {other}"),
            ));
        }
    })
}

fn rst(d: &Doc) -> String {
    let bar = |t: &str, ch: char| ch.to_string().repeat(t.chars().count().max(1));
    let mut s = format!(
        "{}\n{}\n{}\n",
        bar(&d.title, '='),
        d.title,
        bar(&d.title, '=')
    );
    for b in &d.blocks {
        s.push('\n');
        match b {
            Block::H(l, t) => {
                let ch = if *l <= 1 { '-' } else { '~' };
                s.push_str(&format!("{t}\n{}\n", bar(t, ch)));
            }
            Block::P(t) => s.push_str(&format!("{}\n", t.replace('\n', " "))),
            Block::Bullets(items) => {
                for i in items {
                    s.push_str(&format!("* {i}\n"));
                }
            }
            Block::Table(rows) => {
                s.push_str(".. list-table::\n   :header-rows: 1\n\n");
                for r in rows {
                    for (i, cell) in r.iter().enumerate() {
                        let lead = if i == 0 { "   * - " } else { "     - " };
                        s.push_str(&format!("{lead}{cell}\n"));
                    }
                }
            }
        }
    }
    s
}

pub(crate) fn tex_escape(s: &str) -> String {
    let mut o = String::new();
    for ch in s.chars() {
        match ch {
            '&' | '%' | '$' | '#' | '_' | '{' | '}' => {
                o.push('\\');
                o.push(ch);
            }
            '~' => o.push_str("\\textasciitilde{}"),
            '^' => o.push_str("\\textasciicircum{}"),
            '\\' => o.push_str("\\textbackslash{}"),
            '€' => o.push_str("EUR "),
            c => o.push(c),
        }
    }
    o
}

fn tex(d: &Doc) -> String {
    let mut s = String::from(
        "\\documentclass[11pt]{article}\n\\usepackage[utf8]{inputenc}\n\\usepackage{booktabs}\n",
    );
    s.push_str(&format!(
        "\\title{{{}}}\n\\begin{{document}}\n\\maketitle\n",
        tex_escape(&d.title)
    ));
    for b in &d.blocks {
        match b {
            Block::H(l, t) => {
                let cmd = if *l <= 1 { "section" } else { "subsection" };
                s.push_str(&format!("\n\\{cmd}{{{}}}\n", tex_escape(t)));
            }
            Block::P(t) => s.push_str(&format!("\n{}\n", tex_escape(t))),
            Block::Bullets(items) => {
                s.push_str("\\begin{itemize}\n");
                for i in items {
                    s.push_str(&format!("  \\item {}\n", tex_escape(i)));
                }
                s.push_str("\\end{itemize}\n");
            }
            Block::Table(rows) => s.push_str(&tex_table(rows)),
        }
    }
    s.push_str("\n\\end{document}\n");
    s
}

pub(crate) fn tex_table(rows: &[Vec<String>]) -> String {
    let n = rows.first().map_or(1, Vec::len).max(1);
    let mut s = format!(
        "\\begin{{table}}[h]\n\\centering\n\\begin{{tabular}}{{{}}}\n\\toprule\n",
        "l".repeat(n)
    );
    for (i, r) in rows.iter().enumerate() {
        let cells: Vec<String> = r.iter().map(|c| tex_escape(c)).collect();
        s.push_str(&format!("{} \\\\\n", cells.join(" & ")));
        if i == 0 {
            s.push_str("\\midrule\n");
        }
    }
    s.push_str("\\bottomrule\n\\end{tabular}\n\\end{table}\n");
    s
}

fn rtf_escape(s: &str) -> String {
    let mut o = String::new();
    for ch in s.chars() {
        match ch {
            '\\' | '{' | '}' => {
                o.push('\\');
                o.push(ch);
            }
            '\n' => o.push_str("\\line "),
            c if c.is_ascii() => o.push(c),
            c => {
                // RTF \uN takes a signed 16-bit value and a fallback character.
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    o.push_str(&format!("\\u{}?", *unit as i16));
                }
            }
        }
    }
    o
}

fn rtf(d: &Doc) -> String {
    let mut s = String::from("{\\rtf1\\ansi\\deff0{\\fonttbl{\\f0 Helvetica;}}\\f0\\fs22\n");
    s.push_str(&format!("{{\\b\\fs32 {}}}\\par\n", rtf_escape(&d.title)));
    for b in &d.blocks {
        match b {
            Block::H(_, t) => s.push_str(&format!("\\par{{\\b\\fs26 {}}}\\par\n", rtf_escape(t))),
            Block::P(t) => s.push_str(&format!("{}\\par\n", rtf_escape(t))),
            Block::Bullets(items) => {
                for i in items {
                    s.push_str(&format!("\\bullet  {}\\par\n", rtf_escape(i)));
                }
            }
            Block::Table(rows) => {
                for r in rows {
                    s.push_str(&format!("{}\\par\n", rtf_escape(&r.join("\t"))));
                }
            }
        }
    }
    s.push_str("}\n");
    s
}

pub(crate) fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn html(d: &Doc, c: &Company) -> String {
    let mut s = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n</head>\n<body>\n<h1>{}</h1>\n",
        xml_escape(&d.title),
        xml_escape(&d.title)
    );
    for b in &d.blocks {
        match b {
            Block::H(l, t) => {
                let l = (*l + 1).min(6);
                s.push_str(&format!("<h{l}>{}</h{l}>\n", xml_escape(t)));
            }
            Block::P(t) => s.push_str(&format!("<p>{}</p>\n", xml_escape(t))),
            Block::Bullets(items) => {
                s.push_str("<ul>\n");
                for i in items {
                    s.push_str(&format!("<li>{}</li>\n", xml_escape(i)));
                }
                s.push_str("</ul>\n");
            }
            Block::Table(rows) => {
                s.push_str("<table>\n");
                for (i, r) in rows.iter().enumerate() {
                    let tag = if i == 0 { "th" } else { "td" };
                    s.push_str("<tr>");
                    for cell in r {
                        s.push_str(&format!("<{tag}>{}</{tag}>", xml_escape(cell)));
                    }
                    s.push_str("</tr>\n");
                }
                s.push_str("</table>\n");
            }
        }
    }
    s.push_str(&format!(
        "<footer><p>{} internal</p></footer>\n</body>\n</html>\n",
        xml_escape(c.name)
    ));
    s
}

fn pptx(d: &Doc, c: &Company, f: &FileCtx) -> Result<Vec<u8>, GenError> {
    let mut slides: Vec<(String, String, String)> = vec![(
        d.title.clone(),
        format!("{}\n{}", c.name, long_date(f.date)),
        String::new(),
    )];
    let mut cur: Option<(String, Vec<String>)> = None;
    let flush = |cur: &mut Option<(String, Vec<String>)>, slides: &mut Vec<_>| {
        if let Some((t, lines)) = cur.take() {
            slides.push((t, lines.join("\n"), String::new()));
        }
    };
    for b in &d.blocks {
        match b {
            Block::H(_, t) => {
                flush(&mut cur, &mut slides);
                cur = Some((t.clone(), Vec::new()));
            }
            other => {
                let entry = cur.get_or_insert_with(|| (d.title.clone(), Vec::new()));
                match other {
                    Block::P(t) => entry.1.push(t.clone()),
                    Block::Bullets(items) => entry.1.extend(items.iter().cloned()),
                    Block::Table(rows) => entry.1.extend(rows.iter().map(|r| r.join(" | "))),
                    Block::H(..) => {}
                }
            }
        }
    }
    flush(&mut cur, &mut slides);
    office::write_pptx(&slides).map_err(|e| fail(f.path, e))
}

// ---------------------------------------------------------------- tables

fn workbook(t: &Table) -> Result<Workbook, String> {
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

fn delimited(t: &Table, sep: u8) -> Result<Vec<u8>, String> {
    let mut w = csv_writer(sep);
    w.write_record(&t.header).map_err(|e| e.to_string())?;
    for r in &t.rows {
        w.write_record(r.iter().map(Val::show))
            .map_err(|e| e.to_string())?;
    }
    w.into_inner().map_err(|e| e.to_string())
}

fn csv_writer(sep: u8) -> CsvW {
    CsvW {
        sep,
        out: Vec::new(),
    }
}

/// A tiny RFC 4180 writer (quotes only when needed); keeps the crate free of another
/// dependency for the one thing `csv` would do here.
struct CsvW {
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

fn json_records(t: &Table) -> Vec<serde_json::Value> {
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

fn sql_ident(s: &str) -> String {
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

// ---------------------------------------------------------------- mail, calendar, contacts

fn addr(c: &Company, i: usize) -> Address {
    let p = c.person(i);
    Address {
        name: Some(p.name.clone()),
        email: p.email.clone(),
    }
}

fn mail_as(id: &str, mails: &[Mail], c: &Company, f: &FileCtx) -> Result<Vec<u8>, GenError> {
    let mut out = Vec::new();
    for m in mails {
        let om = OutgoingMail {
            from: addr(c, m.from),
            to: m.to.iter().map(|i| addr(c, *i)).collect(),
            cc: m.cc.iter().map(|i| addr(c, *i)).collect(),
            bcc: vec![],
            subject: m.subject.clone(),
            text: m.body.clone(),
            date: Utc.from_utc_datetime(&m.at).fixed_offset(),
            message_id: m.id.clone(),
            in_reply_to: m.in_reply_to.clone(),
            references: m.in_reply_to.iter().cloned().collect(),
            attachments: vec![],
        };
        let bytes = build_eml(&om).map_err(|e| fail(f.path, e))?;
        if id == "mbox" {
            out.extend_from_slice(
                format!(
                    "From {} {}\n",
                    c.person(m.from).email,
                    m.at.format("%a %b %e %H:%M:%S %Y")
                )
                .as_bytes(),
            );
            // mboxrd: quote body lines starting with "From ", use LF line ends.
            let text = String::from_utf8_lossy(&bytes).replace("\r\n", "\n");
            for line in text.lines() {
                if line.trim_start_matches('>').starts_with("From ") {
                    out.push(b'>');
                }
                out.extend_from_slice(line.as_bytes());
                out.push(b'\n');
            }
            out.push(b'\n');
        } else {
            out = bytes;
        }
    }
    Ok(out)
}

fn ics(events: &[Event], c: &Company) -> String {
    use bureau_formats::calendar::{Attendee, CalEvent, write_ics};
    let evs: Vec<CalEvent> = events
        .iter()
        .map(|e| {
            let start = Utc.from_utc_datetime(&e.start);
            CalEvent {
                uid: e.uid.clone(),
                summary: e.summary.clone(),
                description: e.description.clone(),
                location: e.location.clone(),
                start,
                end: start + chrono::Duration::minutes(e.minutes),
                all_day: false,
                tzid: None,
                organizer: Some(c.person(e.organizer).email.clone()),
                attendees: e
                    .attendees
                    .iter()
                    .map(|i| Attendee {
                        email: c.person(*i).email.clone(),
                        name: Some(c.person(*i).name.clone()),
                        status: "ACCEPTED".into(),
                    })
                    .collect(),
                status: "CONFIRMED".into(),
                sequence: 0,
            }
        })
        .collect();
    write_ics(&evs, &format!("-//{}//Workspace//EN", c.name))
}

fn vcf(people: &[usize], c: &Company) -> String {
    let esc = |s: &str| {
        s.replace('\\', "\\\\")
            .replace(',', "\\,")
            .replace(';', "\\;")
    };
    let mut s = String::new();
    for i in people {
        let p = c.person(*i);
        s.push_str("BEGIN:VCARD\r\nVERSION:3.0\r\n");
        s.push_str(&format!("N:{};{};;;\r\n", esc(&p.last), esc(&p.first)));
        s.push_str(&format!("FN:{}\r\n", esc(&p.name)));
        s.push_str(&format!("ORG:{};{}\r\n", esc(c.name), esc(&p.department)));
        s.push_str(&format!("TITLE:{}\r\n", esc(&p.title)));
        s.push_str(&format!("EMAIL;TYPE=INTERNET,WORK:{}\r\n", p.email));
        s.push_str(&format!("TEL;TYPE=WORK,VOICE:{}\r\n", p.phone));
        s.push_str("END:VCARD\r\n");
    }
    s
}

// ---------------------------------------------------------------- images

/// Numbers to chart: the last numeric column of the table (at most 12 bars).
fn series(t: &Table) -> Vec<(String, f64)> {
    let col = t.header.len().saturating_sub(1);
    let col = (0..t.header.len())
        .rev()
        .find(|i| {
            t.rows
                .iter()
                .any(|r| matches!(r.get(*i), Some(Val::Num(_))))
        })
        .unwrap_or(col);
    t.rows
        .iter()
        .take(12)
        .map(|r| {
            let label = r.first().map(Val::show).unwrap_or_default();
            let v = match r.get(col) {
                Some(Val::Num(n)) => *n,
                _ => 0.0,
            };
            (label, v)
        })
        .collect()
}

/// A bar chart of the table as pixels (RGB, `w`×`h`).
fn bars(t: &Table, w: usize, h: usize, rng: &mut Rng) -> Vec<u8> {
    let s = series(t);
    let max = s.iter().map(|x| x.1).fold(1.0f64, f64::max);
    let mut px = vec![255u8; w * h * 3];
    let n = s.len().max(1);
    let slot = (w - 20) / n;
    let hue = [
        (31u8, 119u8, 180u8),
        (255, 127, 14),
        (44, 160, 44),
        (214, 39, 40),
        (148, 103, 189),
    ][rng.below(5)];
    for (i, (_, v)) in s.iter().enumerate() {
        let bh = ((v.max(0.0) / max) * (h as f64 - 30.0)) as usize;
        let x0 = 10 + i * slot + slot / 6;
        let x1 = 10 + (i + 1) * slot - slot / 6;
        for y in (h - 10 - bh)..(h - 10) {
            for x in x0..x1.min(w) {
                let o = (y * w + x) * 3;
                px[o] = hue.0;
                px[o + 1] = hue.1;
                px[o + 2] = hue.2;
            }
        }
    }
    // Axis.
    for x in 10..w - 10 {
        let o = ((h - 10) * w + x) * 3;
        px[o..o + 3].copy_from_slice(&[40, 40, 40]);
    }
    px
}

pub(crate) fn image(id: &str, t: &Table, f: &FileCtx, rng: &mut Rng) -> Result<Vec<u8>, GenError> {
    let (w, h) = (240usize, 160usize);
    Ok(match id {
        "png" => {
            let px = bars(t, w, h, rng);
            let mut out = Vec::new();
            {
                let mut enc = png::Encoder::new(&mut out, w as u32, h as u32);
                enc.set_color(png::ColorType::Rgb);
                enc.set_depth(png::BitDepth::Eight);
                let mut wr = enc.write_header().map_err(|e| fail(f.path, e))?;
                wr.write_image_data(&px).map_err(|e| fail(f.path, e))?;
                wr.finish().map_err(|e| fail(f.path, e))?;
            }
            out
        }
        "jpg" => {
            // A "photo": a soft gradient with grain.
            let (w, h) = (192usize, 128usize);
            let (r0, g0, b0) = (
                rng.below(120) as u8,
                rng.below(120) as u8,
                rng.below(120) as u8,
            );
            let mut px = Vec::with_capacity(w * h * 3);
            for y in 0..h {
                for x in 0..w {
                    let grain = (rng.u64() % 24) as u8;
                    px.push(r0.saturating_add((x * 100 / w) as u8).saturating_add(grain));
                    px.push(g0.saturating_add((y * 100 / h) as u8).saturating_add(grain));
                    px.push(b0.saturating_add(((x + y) * 60 / (w + h)) as u8));
                }
            }
            let mut out = Vec::new();
            let enc = jpeg_encoder::Encoder::new(&mut out, 85);
            enc.encode(&px, w as u16, h as u16, jpeg_encoder::ColorType::Rgb)
                .map_err(|e| fail(f.path, e))?;
            out
        }
        "gif" => {
            let px = bars(t, w, h, rng);
            // Map to a 4-colour palette: white, dark grey, bar colour, light grey.
            let bar = px
                .chunks(3)
                .find(|p| p != &[255, 255, 255] && p != &[40, 40, 40])
                .map_or([31u8, 119, 180], |p| [p[0], p[1], p[2]]);
            let palette = [
                255u8, 255, 255, 40, 40, 40, bar[0], bar[1], bar[2], 200, 200, 200,
            ];
            let idx: Vec<u8> = px
                .chunks(3)
                .map(|p| match p {
                    [255, 255, 255] => 0,
                    [40, 40, 40] => 1,
                    _ => 2,
                })
                .collect();
            let mut out = Vec::new();
            {
                let mut enc = gif::Encoder::new(&mut out, w as u16, h as u16, &palette)
                    .map_err(|e| fail(f.path, e))?;
                let frame = gif::Frame {
                    width: w as u16,
                    height: h as u16,
                    buffer: std::borrow::Cow::Borrowed(&idx),
                    ..gif::Frame::default()
                };
                enc.write_frame(&frame).map_err(|e| fail(f.path, e))?;
            }
            out
        }
        "svg" => svg(t).into_bytes(),
        other => return Err(fail(f.path, format!("no image writer for {other}"))),
    })
}

/// An SVG bar chart with labels and values as text (readable by agents).
pub(crate) fn svg(t: &Table) -> String {
    let s = series(t);
    let max = s.iter().map(|x| x.1).fold(1.0f64, f64::max);
    let (w, h) = (480.0, 300.0);
    let slot = (w - 40.0) / s.len().max(1) as f64;
    let mut o = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\">\n  <title>{}</title>\n  <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
        xml_escape(&t.name)
    );
    for (i, (label, v)) in s.iter().enumerate() {
        let bh = v.max(0.0) / max * (h - 80.0);
        let x = 20.0 + i as f64 * slot + slot * 0.15;
        o.push_str(&format!(
            "  <rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{bh:.1}\" fill=\"#1f77b4\"/>\n  <text x=\"{x:.1}\" y=\"{:.1}\" font-size=\"10\">{}</text>\n  <text x=\"{x:.1}\" y=\"{:.1}\" font-size=\"10\">{}</text>\n",
            h - 40.0 - bh,
            slot * 0.7,
            h - 25.0,
            xml_escape(label),
            h - 45.0 - bh,
            xml_escape(&thousands(v.round() as i64)),
        ));
    }
    o.push_str("</svg>\n");
    o
}

// ---------------------------------------------------------------- archives

fn archive(id: &str, c: &Company, f: &FileCtx, rng: &mut Rng) -> Result<Vec<u8>, GenError> {
    // Two to four small members: a table, a note, a log.
    let mut members: Vec<(String, Vec<u8>)> = Vec::new();
    let n = 2 + rng.below(3);
    for i in 0..n {
        let t = filler::table(c, f, rng);
        let (name, bytes) = match i % 3 {
            0 => (
                format!("{}_{i}.csv", ascii_slug(&t.name)),
                table_as("csv", &t, c, f, rng)?,
            ),
            1 => (
                format!("notes_{i}.txt"),
                filler::doc(c, f, rng).to_plain().into_bytes(),
            ),
            _ => (
                format!("run_{i}.log"),
                filler::text("log", c, f, rng).into_bytes(),
            ),
        };
        members.push((name, bytes));
    }
    let mtime = at(f.date, 9, 0).and_utc().timestamp().max(0) as u64;
    match id {
        "zip" => {
            let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
            let dt = zip::DateTime::from_date_and_time(
                f.date.format("%Y").to_string().parse().unwrap_or(2024),
                f.date.format("%m").to_string().parse().unwrap_or(1),
                f.date.format("%d").to_string().parse().unwrap_or(1),
                9,
                0,
                0,
            )
            .unwrap_or_default();
            let opt = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated)
                .last_modified_time(dt)
                .unix_permissions(0o644);
            for (name, bytes) in &members {
                z.start_file(format!("{}/{name}", f.stem), opt)
                    .map_err(|e| fail(f.path, e))?;
                z.write_all(bytes).map_err(|e| fail(f.path, e))?;
            }
            Ok(z.finish().map_err(|e| fail(f.path, e))?.into_inner())
        }
        "tar" | "tar.gz" => {
            let mut b = tar::Builder::new(Vec::new());
            b.mode(tar::HeaderMode::Deterministic);
            for (name, bytes) in &members {
                let mut hd = tar::Header::new_ustar();
                hd.set_size(bytes.len() as u64);
                hd.set_mode(0o644);
                hd.set_mtime(mtime);
                hd.set_uid(0);
                hd.set_gid(0);
                hd.set_entry_type(tar::EntryType::Regular);
                b.append_data(&mut hd, format!("{}/{name}", f.stem), bytes.as_slice())
                    .map_err(|e| fail(f.path, e))?;
            }
            let tarred = b.into_inner().map_err(|e| fail(f.path, e))?;
            if id == "tar" {
                Ok(tarred)
            } else {
                gzip(&tarred, f)
            }
        }
        _ => {
            let inner = members.into_iter().next().map(|m| m.1).unwrap_or_default();
            gzip(&inner, f)
        }
    }
}

fn gzip(bytes: &[u8], f: &FileCtx) -> Result<Vec<u8>, GenError> {
    // GzBuilder without a file name or mtime: the header is fixed.
    let mut enc = flate2::GzBuilder::new()
        .mtime(0)
        .write(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes).map_err(|e| fail(f.path, e))?;
    enc.finish().map_err(|e| fail(f.path, e))
}
