use std::collections::BTreeMap;
use std::io::{Cursor, Read, Write};

use proptest::prelude::*;

use super::*;
use crate::office::{WriteBlock, read_docx, write_docx};

fn memo() -> Vec<u8> {
    write_docx(
        "memo.docx",
        &[
            WriteBlock::Heading {
                level: 1,
                text: "Plan".into(),
            },
            WriteBlock::Paragraph {
                text: "Budget is 4,200 EUR.".into(),
            },
            WriteBlock::Bullets {
                items: vec!["badges".into(), "bus".into()],
            },
            WriteBlock::Table {
                rows: vec![
                    vec!["Who".into(), "Task".into()],
                    vec!["Sam".into(), "bus".into()],
                ],
            },
            WriteBlock::Paragraph {
                text: "Thanks".into(),
            },
        ],
    )
    .unwrap()
}

fn edit(bytes: &[u8], ops: &[DocxOp]) -> Result<Vec<u8>, FormatError> {
    edit_docx_in_process("memo.docx", bytes, ops)
}

fn texts(bytes: &[u8]) -> Vec<String> {
    docx_blocks_in_process("memo.docx", bytes)
        .unwrap()
        .into_iter()
        .map(|b| b.text)
        .collect()
}

/// Every entry of a zip as (name, raw compressed bytes, crc32), in order.
fn raw_entries(bytes: &[u8]) -> Vec<(String, Vec<u8>, u32)> {
    let mut z = zip::ZipArchive::new(Cursor::new(bytes)).unwrap();
    (0..z.len())
        .map(|i| {
            let mut e = z.by_index_raw(i).unwrap();
            let name = e.name().to_string();
            let crc = e.crc32();
            let mut raw = Vec::new();
            e.read_to_end(&mut raw).unwrap();
            (name, raw, crc)
        })
        .collect()
}

fn entry(bytes: &[u8], name: &str) -> String {
    let mut z = zip::ZipArchive::new(Cursor::new(bytes)).unwrap();
    let mut s = String::new();
    z.by_name(name).unwrap().read_to_string(&mut s).unwrap();
    s
}

/// Other entries than the ones named are byte for byte the same, in the same order.
fn others_identical(before: &[u8], after: &[u8], changed: &[&str]) {
    let a = raw_entries(before);
    let b = raw_entries(after);
    assert_eq!(
        a.iter().map(|e| &e.0).collect::<Vec<_>>(),
        b.iter().map(|e| &e.0).collect::<Vec<_>>()
    );
    for (x, y) in a.iter().zip(&b) {
        if !changed.contains(&x.0.as_str()) {
            assert_eq!(x, y, "{} changed", x.0);
        }
    }
}

#[test]
fn blocks_are_numbered_as_an_agent_sees_them() {
    let blocks = docx_blocks_in_process("memo.docx", &memo()).unwrap();
    let text = blocks_to_text(&blocks);
    assert_eq!(
        text,
        "[0] # Plan\n[1] Budget is 4,200 EUR.\n[2] - badges\n[3] - bus\n[4] table, 2 rows:\n| Who | Task |\n|---|---|\n| Sam | bus |\n[5] Thanks\n"
    );
    assert_eq!(blocks[0].style, "Heading 1");
    assert_eq!(blocks[4].kind, "table");
}

#[test]
fn paragraph_edits_keep_everything_else() {
    let before = memo();
    let after = edit(
        &before,
        &[
            DocxOp::Replace {
                block: 1,
                text: "Budget is 5,000 EUR & more.".into(),
                style: None,
            },
            DocxOp::Insert {
                before: None,
                after: Some(0),
                text: "Status".into(),
                style: Some("Heading 2".into()),
            },
            DocxOp::Insert {
                before: Some(4),
                after: None,
                text: "ferry".into(),
                style: Some("List Bullet".into()),
            },
            DocxOp::Delete { block: 3 },
            DocxOp::Append {
                text: "Dana\tOps".into(),
                style: None,
            },
        ],
    )
    .unwrap();
    assert_eq!(
        texts(&after),
        vec![
            "# Plan",
            "## Status",
            "Budget is 5,000 EUR & more.",
            "- badges",
            "- ferry",
            "| Who | Task |\n|---|---|\n| Sam | bus |",
            "Thanks",
            "Dana\tOps",
        ]
    );
    let d = read_docx("memo.docx", &after).unwrap();
    assert_eq!(d.paragraphs[1].style, "Heading 2");
    assert_eq!(d.paragraphs[4].list_level, Some(0));
    // The new bullet copied the list numbering of the existing ones.
    let xml = entry(&after, "word/document.xml");
    assert_eq!(xml.matches("<w:numId w:val=\"1\" />").count(), 2, "{xml}");
    // The final section properties stay last.
    assert!(
        xml.trim_end()
            .ends_with("</w:sectPr></w:body></w:document>"),
        "{xml}"
    );
    others_identical(&before, &after, &["word/document.xml"]);
    // Deterministic.
    assert_eq!(
        after,
        edit(
            &before,
            &[
                DocxOp::Replace {
                    block: 1,
                    text: "Budget is 5,000 EUR & more.".into(),
                    style: None,
                },
                DocxOp::Insert {
                    before: None,
                    after: Some(0),
                    text: "Status".into(),
                    style: Some("Heading 2".into()),
                },
                DocxOp::Insert {
                    before: Some(4),
                    after: None,
                    text: "ferry".into(),
                    style: Some("List Bullet".into()),
                },
                DocxOp::Delete { block: 3 },
                DocxOp::Append {
                    text: "Dana\tOps".into(),
                    style: None,
                },
            ],
        )
        .unwrap()
    );
}

#[test]
fn inserts_after_one_block_keep_their_call_order() {
    let after = edit(
        &memo(),
        &[
            DocxOp::Insert {
                before: None,
                after: Some(0),
                text: "one".into(),
                style: None,
            },
            DocxOp::Insert {
                before: None,
                after: Some(0),
                text: "two".into(),
                style: None,
            },
            DocxOp::Insert {
                before: Some(1),
                after: None,
                text: "three".into(),
                style: None,
            },
        ],
    )
    .unwrap();
    assert_eq!(
        texts(&after)[..5],
        ["# Plan", "one", "two", "three", "Budget is 4,200 EUR."]
    );
}

#[test]
fn table_cells_and_rows() {
    let before = memo();
    let after = edit(
        &before,
        &[
            DocxOp::SetCell {
                block: 4,
                row: 1,
                col: 1,
                text: "bus & ferry".into(),
            },
            DocxOp::AppendRow {
                block: 4,
                cells: vec!["Ada".into(), "badges".into()],
            },
            DocxOp::AppendRow {
                block: 4,
                cells: vec!["Lee".into()],
            },
        ],
    )
    .unwrap();
    let d = read_docx("memo.docx", &after).unwrap();
    assert_eq!(
        d.tables[0],
        vec![
            vec!["Who", "Task"],
            vec!["Sam", "bus & ferry"],
            vec!["Ada", "badges"],
            vec!["Lee", ""],
        ]
    );
    others_identical(&before, &after, &["word/document.xml"]);
}

/// A hand-made .docx: a styled paragraph with a bold first run and a second run, a table
/// with a header row, an image part and a header part that must survive.
fn formatted() -> Vec<u8> {
    let document = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:w14="http://schemas.microsoft.com/office/word/2010/wordml">
  <w:body>
    <w:p w14:paraId="1A2B3C4D"><w:pPr><w:jc w:val="center"/></w:pPr><w:r><w:rPr><w:b/><w:color w:val="FF0000"/></w:rPr><w:t>Old </w:t></w:r><w:r><w:t>title</w:t></w:r><w:bookmarkStart w:id="0" w:name="x"/><w:bookmarkEnd w:id="0"/></w:p>
    <w:p/>
    <w:tbl><w:tblPr/><w:tr><w:trPr><w:tblHeader/></w:trPr><w:tc><w:tcPr><w:shd w:fill="DDDDDD"/></w:tcPr><w:p><w:r><w:rPr><w:b/></w:rPr><w:t>H</w:t></w:r></w:p></w:tc></w:tr></w:tbl>
    <w:sectPr><w:pgSz w:w="11906" w:h="16838"/></w:sectPr>
  </w:body>
</w:document>"#;
    let styles = r#"<?xml version="1.0" encoding="UTF-8"?>
<w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/></w:style><w:style w:type="character" w:styleId="Strong"><w:name w:val="Strong"/></w:style></w:styles>"#;
    let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let deflated = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (name, body, opt) in [
        ("[Content_Types].xml", "<Types/>".as_bytes(), deflated),
        ("word/document.xml", document.as_bytes(), deflated),
        ("word/styles.xml", styles.as_bytes(), deflated),
        ("word/header1.xml", b"<w:hdr/>".as_slice(), deflated),
        (
            "word/media/image1.png",
            b"\x89PNG not really".as_slice(),
            stored,
        ),
    ] {
        z.start_file(name, opt).unwrap();
        z.write_all(body).unwrap();
    }
    z.finish().unwrap().into_inner()
}

#[test]
fn replace_keeps_paragraph_and_first_run_formatting() {
    let before = formatted();
    assert_eq!(texts(&before), vec!["Old title", "", "| H |\n|---|"]);
    let after = edit(
        &before,
        &[
            DocxOp::Replace {
                block: 0,
                text: "New <title>".into(),
                style: None,
            },
            DocxOp::Replace {
                block: 1,
                text: "was empty".into(),
                style: Some("Title".into()),
            },
            DocxOp::AppendRow {
                block: 2,
                cells: vec!["v".into()],
            },
        ],
    )
    .unwrap();
    let xml = entry(&after, "word/document.xml");
    assert!(
        xml.contains(r#"<w:p w14:paraId="1A2B3C4D"><w:pPr><w:jc w:val="center"/></w:pPr><w:r><w:rPr><w:b/><w:color w:val="FF0000"/></w:rPr><w:t xml:space="preserve">New &lt;title&gt;</w:t></w:r></w:p>"#),
        "{xml}"
    );
    // The copied row is not a header row; its cell keeps the shading and the bold run.
    assert!(
        xml.contains(r#"<w:tr><w:trPr></w:trPr><w:tc><w:tcPr><w:shd w:fill="DDDDDD"/></w:tcPr><w:p><w:r><w:rPr><w:b/></w:rPr><w:t xml:space="preserve">v</w:t></w:r></w:p></w:tc></w:tr>"#),
        "{xml}"
    );
    // Whitespace and the section properties outside the edited blocks are untouched.
    assert!(xml.contains(
        "</w:tbl>\n    <w:sectPr><w:pgSz w:w=\"11906\" w:h=\"16838\"/></w:sectPr>\n  </w:body>"
    ));
    // Title was missing: it was added to the styles part, and readers see it.
    let styles = entry(&after, "word/styles.xml");
    assert!(styles.contains(r#"w:styleId="Title""#), "{styles}");
    let d = read_docx("memo.docx", &after).unwrap();
    assert_eq!(d.paragraphs[1].style, "Title");
    assert_eq!(d.paragraphs[1].heading_level, Some(0));
    others_identical(&before, &after, &["word/document.xml", "word/styles.xml"]);
}

#[test]
fn bad_operations_name_the_operation_and_change_nothing() {
    let bytes = memo();
    let reason = |ops: &[DocxOp]| match edit(&bytes, ops) {
        Err(FormatError::InvalidDocument { reason, .. }) => reason,
        other => panic!("expected an error, got {other:?}"),
    };
    let r = reason(&[DocxOp::Delete { block: 0 }, DocxOp::Delete { block: 9 }]);
    assert!(
        r.contains("operation 1 (delete 9)") && r.contains("blocks 0 to 5"),
        "{r}"
    );
    let r = reason(&[DocxOp::SetCell {
        block: 1,
        row: 0,
        col: 0,
        text: "x".into(),
    }]);
    assert!(r.contains("block 1 is a paragraph, not a table"), "{r}");
    let r = reason(&[DocxOp::Replace {
        block: 4,
        text: "x".into(),
        style: None,
    }]);
    assert!(r.contains("is a table"), "{r}");
    let r = reason(&[DocxOp::SetCell {
        block: 4,
        row: 5,
        col: 0,
        text: "x".into(),
    }]);
    assert!(r.contains("there is no row 5"), "{r}");
    let r = reason(&[DocxOp::AppendRow {
        block: 4,
        cells: vec!["a".into(), "b".into(), "c".into()],
    }]);
    assert!(r.contains("3 values for a row of 2 cells"), "{r}");
    let r = reason(&[
        DocxOp::Delete { block: 2 },
        DocxOp::Replace {
            block: 2,
            text: "x".into(),
            style: None,
        },
    ]);
    assert!(r.contains("deleted by an earlier operation"), "{r}");
    let r = reason(&[DocxOp::Append {
        text: "x".into(),
        style: Some("Fancy".into()),
    }]);
    assert!(
        r.contains("no paragraph style \"Fancy\"") && r.contains("Heading 1"),
        "{r}"
    );
    let r = reason(&[DocxOp::Append {
        text: "bell\u{7}".into(),
        style: None,
    }]);
    assert!(r.contains("U+0007"), "{r}");
    let r = reason(&[DocxOp::Insert {
        before: Some(1),
        after: Some(1),
        text: "x".into(),
        style: None,
    }]);
    assert!(r.contains("exactly one of `before` and `after`"), "{r}");
    assert!(reason(&[]).contains("no operations"));
}

#[test]
fn broken_and_hostile_inputs_are_errors() {
    let e = edit(b"not a zip", &[DocxOp::Delete { block: 0 }]).unwrap_err();
    assert!(e.to_string().contains("not a .docx file"), "{e}");
    let bytes = memo();
    let cut = &bytes[..bytes.len() / 2];
    assert!(edit(cut, &[DocxOp::Delete { block: 0 }]).is_err());
    // Nesting beyond the cap.
    let deep = format!(
        "<w:document xmlns:w=\"x\"><w:body><w:p>{}{}</w:p></w:body></w:document>",
        "<w:r>".repeat(MAX_XML_DEPTH + 5),
        "</w:r>".repeat(MAX_XML_DEPTH + 5)
    );
    let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
    z.start_file(
        "word/document.xml",
        zip::write::SimpleFileOptions::default(),
    )
    .unwrap();
    z.write_all(deep.as_bytes()).unwrap();
    let deep = z.finish().unwrap().into_inner();
    let e = edit(&deep, &[DocxOp::Delete { block: 0 }]).unwrap_err();
    assert!(e.to_string().contains("deep"), "{e}");
    // Through the isolated entry point too.
    let e = edit_docx(
        "x.docx",
        b"PK\x03\x04garbage",
        &[DocxOp::Delete { block: 0 }],
    )
    .unwrap_err();
    assert!(e.to_string().starts_with("x.docx: "), "{e}");
}

fn op_strategy() -> impl Strategy<Value = DocxOp> {
    let text = "[a-zA-Z0-9 &<>\"'\t\n]{0,12}";
    prop_oneof![
        (
            text,
            proptest::option::of(prop_oneof![
                Just("Heading 2".to_string()),
                Just("List Bullet".to_string()),
                Just("Title".to_string()),
                Just("Normal".to_string()),
            ])
        )
            .prop_map(|(text, style)| DocxOp::Append { text, style }),
        (0usize..8, any::<bool>(), text).prop_map(|(i, b, text)| DocxOp::Insert {
            before: b.then_some(i),
            after: (!b).then_some(i),
            text,
            style: None
        }),
        (0usize..8, text).prop_map(|(block, text)| DocxOp::Replace {
            block,
            text,
            style: None
        }),
        (0usize..8).prop_map(|block| DocxOp::Delete { block }),
        (0usize..8, 0usize..3, 0usize..3, text).prop_map(|(block, row, col, text)| {
            DocxOp::SetCell {
                block,
                row,
                col,
                text,
            }
        }),
        (0usize..8, proptest::collection::vec(text, 0..3))
            .prop_map(|(block, cells)| DocxOp::AppendRow { block, cells }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Any sequence of operations either fails (changing nothing) or gives a document that
    /// reads back, whose other parts are byte for byte the originals, with as many blocks as
    /// the operations say.
    #[test]
    fn random_edits_keep_the_document_readable(ops in proptest::collection::vec(op_strategy(), 1..8)) {
        let before = memo();
        let n = docx_blocks_in_process("memo.docx", &before).unwrap().len();
        if let Ok(after) = edit(&before, &ops) {
            super::super::docx::read_docx_in_process("memo.docx", &after).unwrap();
            let blocks = docx_blocks_in_process("memo.docx", &after).unwrap();
            let added = ops.iter().filter(|o| matches!(o, DocxOp::Append { .. } | DocxOp::Insert { .. })).count();
            let deleted = ops.iter().filter(|o| matches!(o, DocxOp::Delete { .. })).count();
            prop_assert_eq!(blocks.len(), n + added - deleted);
            let changed: BTreeMap<&str, ()> = [("word/document.xml", ()), ("word/styles.xml", ())].into_iter().collect();
            let a = raw_entries(&before);
            let b = raw_entries(&after);
            prop_assert_eq!(a.len(), b.len());
            for (x, y) in a.iter().zip(&b) {
                prop_assert_eq!(&x.0, &y.0);
                if !changed.contains_key(x.0.as_str()) {
                    prop_assert_eq!(x, y);
                }
            }
        }
    }

    /// Mutated documents never panic the editor.
    #[test]
    fn mutated_documents_never_panic_the_editor(pos in any::<proptest::sample::Index>(), val in any::<u8>()) {
        let mut bytes = memo();
        let i = pos.index(bytes.len());
        bytes[i] = val;
        let _ = edit(&bytes, &[DocxOp::Append { text: "x".into(), style: None }]);
        let _ = docx_blocks_in_process("memo.docx", &bytes);
    }
}

fn doc_with_body(body: &str) -> Vec<u8> {
    let document = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><w:body>{body}</w:body></w:document>"#
    );
    let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
    z.start_file(
        "word/document.xml",
        zip::write::SimpleFileOptions::default(),
    )
    .unwrap();
    z.write_all(document.as_bytes()).unwrap();
    z.finish().unwrap().into_inner()
}

#[test]
fn replace_takes_the_formatting_of_a_run_inside_a_link() {
    let before = doc_with_body(
        r#"<w:p><w:hyperlink r:id="rId9"><w:r><w:rPr><w:i/></w:rPr><w:t>old link</w:t></w:r></w:hyperlink><w:r><w:t> tail</w:t></w:r></w:p>"#,
    );
    let after = edit(
        &before,
        &[DocxOp::Replace {
            block: 0,
            text: "new".into(),
            style: None,
        }],
    )
    .unwrap();
    let xml = entry(&after, "word/document.xml");
    assert!(
        xml.contains(r#"<w:body><w:p><w:r><w:rPr><w:i/></w:rPr><w:t xml:space="preserve">new</w:t></w:r></w:p></w:body>"#),
        "{xml}"
    );
    // No styles part: a built-in style is referenced by id, and Bureau's reader still sees
    // the heading.
    let after = edit(
        &after,
        &[DocxOp::Append {
            text: "Next".into(),
            style: Some("Heading 3".into()),
        }],
    )
    .unwrap();
    let d = read_docx("x.docx", &after).unwrap();
    assert_eq!(d.headings(), vec![(3, "Next")]);
}

#[test]
fn large_documents_edit_quickly() {
    let body: String = (0..20_000)
        .map(|i| format!("<w:p><w:r><w:t>paragraph {i}</w:t></w:r></w:p>"))
        .collect();
    let before = doc_with_body(&body);
    let ops: Vec<DocxOp> = (0..200)
        .map(|i| DocxOp::Insert {
            before: Some(i * 50),
            after: None,
            text: format!("item {i}"),
            style: Some("List Bullet".into()),
        })
        .chain((0..200).map(|i| DocxOp::Delete { block: i * 50 + 1 }))
        .collect();
    let t = std::time::Instant::now();
    let after = edit(&before, &ops).unwrap();
    assert!(
        t.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        t.elapsed()
    );
    assert_eq!(
        docx_blocks_in_process("x.docx", &after).unwrap().len(),
        20_000
    );
}
