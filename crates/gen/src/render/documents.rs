//! Documents: .docx, .pdf, .md, .txt, .rst, .tex, .rtf, .html and .pptx.

use super::*;

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

pub(super) fn rst(d: &Doc) -> String {
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

pub(super) fn tex(d: &Doc) -> String {
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

pub(super) fn rtf_escape(s: &str) -> String {
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

pub(super) fn rtf(d: &Doc) -> String {
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

pub(super) fn html(d: &Doc, c: &Company) -> String {
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

pub(super) fn pptx(d: &Doc, c: &Company, f: &FileCtx) -> Result<Vec<u8>, GenError> {
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
