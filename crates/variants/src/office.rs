//! Office files of an instance, written by bureau-formats' writers from rendered text:
//!
//! * `*.docx.j2` — markdown-like: `#`…`######` headings, `- ` bullet lines, `| a | b |` table
//!   rows (a `|---|` separator row is skipped; the first row is the header), other lines
//!   paragraphs (a blank line ends one);
//! * `*.xlsx.j2` — CSV (one sheet; numbers become number cells);
//! * `*.pptx.j2` — slides separated by a line `---`; a slide's first line is its title (a
//!   leading `#` is dropped), the rest its body;
//! * `*.pdf.j2` — the first line is the title, the rest the text.

use bureau_formats::office::{WriteBlock, write_docx, write_pdf, write_pptx};

/// The bytes of the office file `name` made from `text`; `None` when `name` is no office
/// file (the text is written as is).
pub fn write_office(name: &str, text: &str) -> Result<Option<Vec<u8>>, String> {
    let lower = name.to_ascii_lowercase();
    let ext = lower.rsplit('.').next().unwrap_or("");
    let fail = |e: bureau_formats::FormatError| format!("cannot write {name}: {e}");
    Ok(Some(match ext {
        "docx" => write_docx(name, &docx_blocks(text)).map_err(fail)?,
        "xlsx" => {
            let wb =
                bureau_formats::sheet::read_file("sheet.csv", text.as_bytes()).map_err(fail)?;
            bureau_formats::sheet::write_xlsx(&wb).map_err(fail)?
        }
        "pptx" => {
            let slides: Vec<(String, String, String)> = text
                .split("\n---\n")
                .map(|s| {
                    let s = s.trim_matches('\n');
                    let (title, body) = s.split_once('\n').unwrap_or((s, ""));
                    (
                        title.trim_start_matches('#').trim().to_string(),
                        body.trim().to_string(),
                        String::new(),
                    )
                })
                .collect();
            write_pptx(&slides).map_err(fail)?
        }
        "pdf" => {
            let t = text.trim_start_matches('\n');
            let (title, body) = t.split_once('\n').unwrap_or((t, ""));
            write_pdf(title.trim_start_matches('#').trim(), body)
        }
        _ => return Ok(None),
    }))
}

fn docx_blocks(text: &str) -> Vec<WriteBlock> {
    let mut blocks = Vec::new();
    let mut para: Vec<&str> = Vec::new();
    let mut bullets: Vec<String> = Vec::new();
    let mut rows: Vec<Vec<String>> = Vec::new();
    let flush = |para: &mut Vec<&str>,
                 bullets: &mut Vec<String>,
                 rows: &mut Vec<Vec<String>>,
                 blocks: &mut Vec<WriteBlock>| {
        if !para.is_empty() {
            blocks.push(WriteBlock::Paragraph {
                text: para.join("\n"),
            });
            para.clear();
        }
        if !bullets.is_empty() {
            blocks.push(WriteBlock::Bullets {
                items: std::mem::take(bullets),
            });
        }
        if !rows.is_empty() {
            blocks.push(WriteBlock::Table {
                rows: std::mem::take(rows),
            });
        }
    };
    for line in text.lines() {
        let t = line.trim();
        let hashes = t.chars().take_while(|c| *c == '#').count();
        if (1..=6).contains(&hashes) && t[hashes..].starts_with(' ') {
            flush(&mut para, &mut bullets, &mut rows, &mut blocks);
            blocks.push(WriteBlock::Heading {
                level: hashes as u8,
                text: t[hashes..].trim().to_string(),
            });
        } else if let Some(item) = t.strip_prefix("- ") {
            if !para.is_empty() || !rows.is_empty() {
                let mut keep = std::mem::take(&mut bullets);
                flush(&mut para, &mut Vec::new(), &mut rows, &mut blocks);
                bullets.append(&mut keep);
            }
            bullets.push(item.trim().to_string());
        } else if t.starts_with('|') && t.ends_with('|') && t.len() > 1 {
            if !para.is_empty() || !bullets.is_empty() {
                let mut keep = std::mem::take(&mut rows);
                flush(&mut para, &mut bullets, &mut Vec::new(), &mut blocks);
                rows.append(&mut keep);
            }
            let cells: Vec<String> = t[1..t.len() - 1]
                .split('|')
                .map(|c| c.trim().to_string())
                .collect();
            if !cells
                .iter()
                .all(|c| !c.is_empty() && c.chars().all(|ch| ch == '-' || ch == ':'))
            {
                rows.push(cells);
            }
        } else if t.is_empty() {
            flush(&mut para, &mut bullets, &mut rows, &mut blocks);
        } else {
            if !bullets.is_empty() || !rows.is_empty() {
                flush(&mut Vec::new(), &mut bullets, &mut rows, &mut blocks);
            }
            para.push(t);
        }
    }
    flush(&mut para, &mut bullets, &mut rows, &mut blocks);
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_like_text_becomes_docx_blocks() {
        let b = docx_blocks(
            "# Offer\n\nDear Ana,\nwelcome.\n\n- one\n- two\n\n| Item | EUR |\n|---|---|\n| Desk | 120 |\n",
        );
        assert_eq!(
            b,
            vec![
                WriteBlock::Heading {
                    level: 1,
                    text: "Offer".into()
                },
                WriteBlock::Paragraph {
                    text: "Dear Ana,\nwelcome.".into()
                },
                WriteBlock::Bullets {
                    items: vec!["one".into(), "two".into()]
                },
                WriteBlock::Table {
                    rows: vec![
                        vec!["Item".into(), "EUR".into()],
                        vec!["Desk".into(), "120".into()]
                    ]
                },
            ]
        );
    }

    #[test]
    fn office_templates_are_real_office_files() {
        let docx = write_office("a.docx", "# T\n\nHello €1,200.00\n")
            .unwrap()
            .unwrap();
        let text = bureau_formats::office::to_text("a.docx", &docx).unwrap();
        assert!(text.contains("Hello €1,200.00"), "{text}");
        let xlsx = write_office("b.xlsx", "item,amount\nDesk,120\n")
            .unwrap()
            .unwrap();
        let wb = bureau_formats::sheet::read_file("b.xlsx", &xlsx).unwrap();
        let text = format!("{wb:?}");
        assert!(text.contains("Desk") && text.contains("120"), "{text}");
        let pdf = write_office("c.pdf", "Title\nBody 42\n").unwrap().unwrap();
        assert!(pdf.starts_with(b"%PDF"));
        assert!(write_office("d.md", "x").unwrap().is_none());
    }
}
