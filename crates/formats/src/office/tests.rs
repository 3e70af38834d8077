use std::io::Write;
use std::time::{Duration, Instant};

use super::*;

fn memo() -> Vec<WriteBlock> {
    vec![
        WriteBlock::Heading {
            level: 1,
            text: "Quarterly plan".into(),
        },
        WriteBlock::Paragraph {
            text: "Budget is 11,917.00 & rising <fast>.".into(),
        },
        WriteBlock::Heading {
            level: 2,
            text: "Actions".into(),
        },
        WriteBlock::Bullets {
            items: vec!["Hire two engineers".into(), "Ship the sensor".into()],
        },
        WriteBlock::Table {
            rows: vec![
                vec!["Item".into(), "Cost".into()],
                vec!["Desk | chair".into(), "120".into()],
                vec!["Lamp".into()],
            ],
        },
        WriteBlock::Paragraph {
            text: "Line one\nLine two".into(),
        },
    ]
}

fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    // Stored, not deflated: these tests look past the ratio cap at the other limits.
    let opt =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (name, body) in entries {
        z.start_file(*name, opt).unwrap();
        z.write_all(body).unwrap();
    }
    z.finish().unwrap().into_inner()
}

fn reason(e: FormatError) -> String {
    match e {
        FormatError::InvalidDocument { reason, .. } => reason,
        other => panic!("expected InvalidDocument, got {other:?}"),
    }
}

#[test]
fn docx_round_trip_keeps_headings_lists_tables() {
    let bytes = write_docx("memo.docx", &memo()).unwrap();
    let d = read_docx("memo.docx", &bytes).unwrap();
    assert_eq!(d.headings(), vec![(1, "Quarterly plan"), (2, "Actions")]);
    assert_eq!(d.paragraphs[0].style, "Heading 1");
    assert_eq!(d.paragraphs[1].text, "Budget is 11,917.00 & rising <fast>.");
    assert_eq!(d.paragraphs[1].list_level, None);
    assert_eq!(d.paragraphs[3].style, "List Bullet");
    assert_eq!(d.paragraphs[3].list_level, Some(0));
    assert_eq!(d.paragraphs[5].text, "Line one\nLine two");
    assert_eq!(
        d.tables,
        vec![vec![
            vec!["Item".to_string(), "Cost".into()],
            vec!["Desk | chair".into(), "120".into()],
            vec!["Lamp".into(), "".into()],
        ]]
    );
    assert_eq!(
        d.to_text(),
        "# Quarterly plan\n\nBudget is 11,917.00 & rising <fast>.\n\n## Actions\n\n- Hire two engineers\n- Ship the sensor\n\n| Item | Cost |\n|---|---|\n| Desk \\| chair | 120 |\n| Lamp |  |\n\nLine one\nLine two\n"
    );
}

#[test]
fn docx_writer_is_deterministic() {
    assert_eq!(
        write_docx("a.docx", &memo()).unwrap(),
        write_docx("a.docx", &memo()).unwrap()
    );
}

#[test]
fn docx_heading_level_out_of_range_is_an_error() {
    let e = write_docx(
        "a.docx",
        &[WriteBlock::Heading {
            level: 7,
            text: "x".into(),
        }],
    )
    .unwrap_err();
    assert!(reason(e).contains("1 to 6"));
}

#[test]
fn docx_nested_tables_and_numbered_lists() {
    let doc = br#"<?xml version="1.0"?><w:document xmlns:w="w"><w:body>
      <w:p><w:pPr><w:numPr><w:ilvl w:val="1"/><w:numId w:val="3"/></w:numPr></w:pPr><w:r><w:t>sub item</w:t></w:r></w:p>
      <w:tbl><w:tr><w:tc><w:p><w:r><w:t>outer</w:t></w:r></w:p>
        <w:tbl><w:tr><w:tc><w:p><w:r><w:t>in</w:t></w:r></w:p></w:tc></w:tr></w:tbl>
      </w:tc></w:tr></w:tbl>
      <w:p><w:r><w:t xml:space="preserve">a</w:t><w:tab/><w:t>b</w:t><w:delText>gone</w:delText></w:r></w:p>
    </w:body></w:document>"#;
    let bytes = zip_of(&[("word/document.xml", doc)]);
    let d = read_docx("x.docx", &bytes).unwrap();
    assert_eq!(d.paragraphs[0].list_level, Some(1));
    assert_eq!(d.paragraphs[0].style, "Normal");
    assert_eq!(
        d.tables,
        vec![vec![vec!["outer\n| in |\n|---|".to_string()]]]
    );
    assert_eq!(d.paragraphs[1].text, "a\tb");
    assert_eq!(
        d.to_text(),
        "  - sub item\n\n| outer \\| in \\| \\|---\\| |\n|---|\n\na\tb\n"
    );
}

#[test]
fn pptx_slides_titles_notes() {
    let bytes = write_pptx(&[
        ("Welcome".into(), "Agenda\nBudget".into(), "Say hi".into()),
        ("Numbers".into(), "Revenue 1,200".into(), String::new()),
    ])
    .unwrap();
    let p = read_pptx("deck.pptx", &bytes).unwrap();
    assert_eq!(p.slides.len(), 2);
    assert_eq!(p.slides[0].title, "Welcome");
    assert_eq!(p.slides[0].text, "Agenda\nBudget");
    assert_eq!(p.slides[0].notes, "Say hi");
    assert_eq!(p.slides[1].number, 2);
    assert_eq!(
        to_text("deck.pptx", &bytes).unwrap(),
        "## Slide 1: Welcome\nAgenda\nBudget\nNotes: Say hi\n\n## Slide 2: Numbers\nRevenue 1,200\n"
    );
}

#[test]
fn pdf_write_then_read_per_page() {
    let mut text =
        String::from("# Report\n\nIntro paragraph with café and (parens).\n\n- first\n- second\n");
    for i in 0..120 {
        text.push_str(&format!("Line number {i} of the long body text.\n"));
    }
    let bytes = write_pdf("Report", &text);
    assert_eq!(write_pdf("Report", &text), bytes, "deterministic");
    let pdf = read_pdf("r.pdf", &bytes).unwrap();
    assert!(pdf.pages.len() >= 2, "paginated: {} pages", pdf.pages.len());
    assert!(pdf.pages[0].contains("Report"));
    assert!(pdf.pages[0].contains("café"), "{}", pdf.pages[0]);
    assert!(pdf.pages[0].contains("(parens)"));
    assert!(pdf.pages.last().unwrap().contains("Line number 119"));
    let t = to_text("r.pdf", &bytes).unwrap();
    assert!(t.starts_with("## Page 1\n"));
    assert!(t.contains("\n## Page 2\n"));
}

#[test]
fn a_page_pdf_extract_gives_up_on_is_read_by_lopdf() {
    // A curve continued (`v`) before any point, as Chrome's Skia writes them: pdf-extract
    // panics on it (no current point), so the page's text comes from lopdf instead.
    let content = "1 2 3 4 v\nBT /F1 12 Tf 72 700 Td (NVIDIA revenue 7.19 billion) Tj ET\n";
    let objs = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>".to_vec(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".to_vec(),
        format!("<< /Length {} >>\nstream\n{content}endstream", content.len()).into_bytes(),
        b"<< /Producer (test) >>".to_vec(),
    ];
    let bytes = super::pdf::assemble(&objs, 6);
    let pdf = read_pdf("report.pdf", &bytes).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(pdf.pages.len(), 1);
    assert!(
        pdf.pages[0].contains("NVIDIA revenue 7.19 billion"),
        "{:?}",
        pdf.pages[0]
    );
}

#[test]
fn other_formats() {
    assert_eq!(
        to_text("a.json", br#"{"b":[1,2]}"#).unwrap(),
        "{\n  \"b\": [\n    1,\n    2\n  ]\n}\n"
    );
    assert!(reason(to_text("a.json", b"{nope").unwrap_err()).contains("not valid JSON"));
    assert_eq!(
        to_text("a.yaml", b"a: 1\nb: [x]\n").unwrap(),
        "a: 1\nb: [x]\n"
    );
    assert!(reason(to_text("a.yml", b"a: [1\n").unwrap_err()).contains("not valid YAML"));
    assert_eq!(to_text("notes.md", b"# Hi\n").unwrap(), "# Hi\n");
    assert!(
        to_text(
            "p.html",
            b"<html><body><h1>Title</h1><p>Body &amp; more</p></body></html>"
        )
        .unwrap()
        .contains("Body & more")
    );
    let vcf = b"BEGIN:VCARD\r\nVERSION:3.0\r\nN:Okafor;Dana;;;\r\nEMAIL;TYPE=work:dana@bw.test\r\nTEL:+1 555\r\n 0100\r\nORG:Brightwater;Finance\r\nEND:VCARD\r\n";
    assert_eq!(
        to_text("c.vcf", vcf).unwrap(),
        "name: Dana Okafor\nemail: dana@bw.test\nphone: +1 5550100\norg: Brightwater, Finance\n"
    );
    let eml = b"From: Dana <dana@x.test>\r\nTo: a@x.test\r\nSubject: Hi\r\n\r\nBody\r\n";
    let t = to_text("m.eml", eml).unwrap();
    assert!(
        t.starts_with("From: Dana <dana@x.test>\nTo: a@x.test\nSubject: Hi\n\nBody"),
        "{t}"
    );
    let ics = "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:1@x\r\nSUMMARY:Review\r\nDTSTART:20240701T090000Z\r\nDURATION:PT1H\r\nLOCATION:Room 2\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n";
    assert_eq!(
        to_text("c.ics", ics.as_bytes()).unwrap(),
        "## Review\nWhen: 2024-07-01T09:00:00+00:00 to 2024-07-01T10:00:00+00:00\nWhere: Room 2\n"
    );
    assert_eq!(to_text("x.log", b"plain").unwrap(), "plain");
    assert!(reason(to_text("x.bin", b"\x00\x01\x02").unwrap_err()).contains("binary file"));
}

#[test]
fn magic_bytes_beat_a_lying_extension() {
    let pdf = write_pdf("t", "hello pdf");
    let r = render("report.docx", &pdf).unwrap();
    assert_eq!(r.format, Format::Pdf);
    assert!(r.text.contains("hello pdf"));
    let docx = write_docx(
        "a.docx",
        &[WriteBlock::Paragraph {
            text: "zip inside".into(),
        }],
    )
    .unwrap();
    assert_eq!(render("a.pdf", &docx).unwrap().format, Format::Docx);
    assert_eq!(render("a.pptx", &docx).unwrap().text, "zip inside\n");
    assert_eq!(Format::detect("a.txt", &docx), Format::Docx);
}

// ---- hostile inputs: each a clear error, fast ----

fn bounded<T>(f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let r = f();
    assert!(
        t.elapsed() < Duration::from_secs(20),
        "took {:?}",
        t.elapsed()
    );
    r
}

#[test]
fn zip_bomb_is_refused() {
    // 100 MiB of zeros deflates to ~100 KB: over the per-part cap and the ratio cap.
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opt = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .large_file(true);
    z.start_file("word/document.xml", opt).unwrap();
    let chunk = vec![b' '; 1 << 20];
    for _ in 0..100 {
        z.write_all(&chunk).unwrap();
    }
    let bytes = z.finish().unwrap().into_inner();
    assert!(bytes.len() < 1 << 20, "the bomb is small: {}", bytes.len());
    let e = bounded(|| to_text("bomb.docx", &bytes).unwrap_err());
    assert!(reason(e).contains("zip bomb"));

    // A high-ratio part under the size cap is refused by the ratio cap.
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    z.start_file("word/document.xml", opt).unwrap();
    for _ in 0..10 {
        z.write_all(&chunk).unwrap();
    }
    let bytes = z.finish().unwrap().into_inner();
    let e = bounded(|| to_text("ratio.docx", &bytes).unwrap_err());
    let r = reason(e);
    assert!(r.contains("expands") && r.contains("zip bomb"), "{r}");
}

#[test]
fn zip_with_lying_declared_size_is_refused() {
    // Declare 10 bytes for a part that inflates to 70 MiB: the actual count stops it.
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opt = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    z.start_file("word/document.xml", opt).unwrap();
    let chunk = vec![b'a'; 1 << 20];
    for _ in 0..70 {
        z.write_all(&chunk).unwrap();
    }
    let mut bytes = z.finish().unwrap().into_inner();
    // Patch the uncompressed size in the local header (offset 22) and central directory.
    let cd = bytes.windows(4).rposition(|w| w == b"PK\x01\x02").unwrap();
    bytes[22..26].copy_from_slice(&10u32.to_le_bytes());
    bytes[cd + 24..cd + 28].copy_from_slice(&10u32.to_le_bytes());
    let e = bounded(|| to_text("liar.docx", &bytes).unwrap_err());
    assert!(matches!(e, FormatError::InvalidDocument { .. }), "{e:?}");
}

#[test]
fn too_many_entries_is_refused() {
    let names: Vec<String> = (0..MAX_ZIP_ENTRIES + 1).map(|i| format!("f{i}")).collect();
    let entries: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), &b""[..])).collect();
    let bytes = zip_of(&entries);
    let e = bounded(|| to_text("many.docx", &bytes).unwrap_err());
    assert!(reason(e).contains("entries"));
}

#[test]
fn truncated_docx_is_an_error() {
    let bytes = write_docx("a.docx", &memo()).unwrap();
    for cut in [10, bytes.len() / 3, bytes.len() / 2, bytes.len() - 30] {
        let e = to_text("cut.docx", &bytes[..cut]).unwrap_err();
        assert!(
            matches!(e, FormatError::InvalidDocument { .. }),
            "cut {cut}: {e:?}"
        );
    }
}

#[test]
fn random_bytes_named_pdf_is_an_error() {
    let mut x: u64 = 42;
    let junk: Vec<u8> = (0..5000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    let e = to_text("junk.pdf", &junk).unwrap_err();
    assert!(reason(e).contains("not a PDF"));
    // With a PDF header but garbage after it:
    let mut fake = b"%PDF-1.7\n".to_vec();
    fake.extend_from_slice(&junk);
    let e = bounded(|| to_text("junk.pdf", &fake).unwrap_err());
    assert!(reason(e).contains("PDF"));
}

#[test]
fn deeply_nested_xml_is_refused() {
    let mut doc = String::from("<w:document xmlns:w=\"w\"><w:body>");
    doc.push_str(&"<w:x>".repeat(100_000));
    doc.push_str(&"</w:x>".repeat(100_000));
    doc.push_str("</w:body></w:document>");
    let bytes = zip_of(&[("word/document.xml", doc.as_bytes())]);
    let e = bounded(|| to_text("deep.docx", &bytes).unwrap_err());
    assert!(reason(e).contains("nests elements more than"));
}

#[test]
fn encrypted_pdf_is_refused() {
    // A PDF whose trailer has an /Encrypt dictionary (RC4 40-bit, unknown user password).
    let pdf = encrypted_pdf();
    let e = bounded(|| to_text("secret.pdf", &pdf).unwrap_err());
    let r = reason(e);
    assert!(r.contains("encrypted"), "{r}");
}

fn encrypted_pdf() -> Vec<u8> {
    let objs = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_string(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R >>".to_string(),
        "<< /Length 8 >>\nstream\n\x01\x02\x03\x04\x05\x06\x07\x08\nendstream".to_string(),
        format!(
            "<< /Filter /Standard /V 1 /R 2 /O <{}> /U <{}> /P -44 >>",
            "ab".repeat(32),
            "cd".repeat(32)
        ),
    ];
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offs = Vec::new();
    for (i, o) in objs.iter().enumerate() {
        offs.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{o}\nendobj\n", i + 1).as_bytes());
    }
    let x = out.len();
    out.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", objs.len() + 1).as_bytes());
    for o in offs {
        out.extend_from_slice(format!("{o:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size 6 /Root 1 0 R /Encrypt 5 0 R /ID [<{0}> <{0}>] >>\nstartxref\n{x}\n%%EOF\n",
            "01".repeat(16)
        )
        .as_bytes(),
    );
    out
}

#[test]
fn huge_input_is_refused_before_parsing() {
    let big = vec![b'a'; MAX_INPUT_BYTES + 1];
    assert!(reason(to_text("big.txt", &big).unwrap_err()).contains("more than"));
}

mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn to_text_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..2048), ext in 0usize..14) {
            let exts = ["docx", "pptx", "pdf", "xlsx", "csv", "html", "md", "json", "yaml", "vcf", "eml", "ics", "txt", "bin"];
            let _ = to_text(&format!("f.{}", exts[ext]), &bytes);
        }

        #[test]
        fn mutated_documents_never_panic(pos in any::<proptest::sample::Index>(), val in any::<u8>(), which in 0usize..3) {
            let mut bytes = match which {
                0 => write_docx("a.docx", &memo()).unwrap(),
                1 => write_pptx(&[("T".into(), "B".into(), "N".into())]).unwrap(),
                _ => write_pdf("t", "# H\nbody"),
            };
            let i = pos.index(bytes.len());
            bytes[i] = val;
            let _ = to_text(["a.docx", "a.pptx", "a.pdf"][which], &bytes);
        }
    }
}

fn png_of(w: u32, h: u32, color: png::ColorType, px: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, w, h);
        enc.set_color(color);
        enc.set_depth(png::BitDepth::Eight);
        let mut wr = enc.write_header().unwrap();
        wr.write_image_data(px).unwrap();
    }
    out
}

/// The image XObject of page 1: (width, height, filter, has a soft mask).
fn pdf_image(bytes: &[u8]) -> (i64, i64, String, bool, Vec<f32>) {
    let doc = lopdf::Document::load_mem(bytes).unwrap();
    let pages = doc.get_pages();
    assert_eq!(pages.len(), 1);
    let page = doc.get_dictionary(pages[&1]).unwrap();
    let media: Vec<f32> = page
        .get(b"MediaBox")
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o.as_float().unwrap())
        .collect();
    let res = page.get(b"Resources").unwrap().as_dict().unwrap();
    let xo = res.get(b"XObject").unwrap().as_dict().unwrap();
    let id = xo.get(b"Im1").unwrap().as_reference().unwrap();
    let img = doc.get_object(id).unwrap().as_stream().unwrap();
    let d = &img.dict;
    (
        d.get(b"Width").unwrap().as_i64().unwrap(),
        d.get(b"Height").unwrap().as_i64().unwrap(),
        String::from_utf8(d.get(b"Filter").unwrap().as_name().unwrap().to_vec()).unwrap(),
        d.get(b"SMask").is_ok(),
        media,
    )
}

#[test]
fn png_and_jpeg_become_one_page_pdfs() {
    let rgb = png_of(3, 2, png::ColorType::Rgb, &[200; 18]);
    let pdf = image_to_pdf("scan.png", &rgb).unwrap();
    assert_eq!(
        pdf_image(&pdf),
        (3, 2, "FlateDecode".into(), false, vec![0.0, 0.0, 3.0, 2.0])
    );
    assert_eq!(
        pdf,
        image_to_pdf("scan.png", &rgb).unwrap(),
        "deterministic"
    );
    // Transparency becomes a soft mask; grey and palette images work too.
    let rgba = png_of(2, 2, png::ColorType::Rgba, &[10, 20, 30, 128].repeat(4));
    assert!(pdf_image(&image_to_pdf("a.png", &rgba).unwrap()).3);
    let grey = png_of(4, 1, png::ColorType::Grayscale, &[0, 80, 160, 255]);
    assert_eq!(pdf_image(&image_to_pdf("g.png", &grey).unwrap()).0, 4);
    // A JPEG is embedded as it is.
    let mut jpg = Vec::new();
    jpeg_encoder::Encoder::new(&mut jpg, 80)
        .encode(&[90u8; 5 * 7 * 3], 5, 7, jpeg_encoder::ColorType::Rgb)
        .unwrap();
    let pdf = image_to_pdf("photo.jpg", &jpg).unwrap();
    assert_eq!(
        pdf_image(&pdf),
        (5, 7, "DCTDecode".into(), false, vec![0.0, 0.0, 5.0, 7.0])
    );
    assert!(pdf.windows(jpg.len()).any(|w| w == jpg.as_slice()));
    // The PDF reads as a PDF (no text: an image page).
    assert_eq!(read_pdf("photo.pdf", &pdf).unwrap().pages.len(), 1);
}

#[test]
fn pictures_become_the_pages_of_an_image_only_pdf() {
    let mut jpg = Vec::new();
    jpeg_encoder::Encoder::new(&mut jpg, 80)
        .encode(&[90u8; 300 * 150], 300, 150, jpeg_encoder::ColorType::Luma)
        .unwrap();
    let pages = [
        PageImage::Jpeg {
            width: 300,
            height: 150,
            gray: true,
            data: jpg.clone(),
        },
        PageImage::Pixels {
            width: 2,
            height: 3,
            gray: false,
            pixels: vec![7; 18],
        },
    ];
    let pdf = images_to_pdf("signed (copy).pdf", &pages, 150.0);
    assert_eq!(pdf, images_to_pdf("signed (copy).pdf", &pages, 150.0));
    let doc = lopdf::Document::load_mem(&pdf).unwrap();
    let ids = doc.get_pages();
    assert_eq!(ids.len(), 2);
    // 300 pixels at 150 dpi are two inches: 144 points.
    let media: Vec<f32> = doc
        .get_dictionary(ids[&1])
        .unwrap()
        .get(b"MediaBox")
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o.as_float().unwrap())
        .collect();
    assert_eq!(media, vec![0.0, 0.0, 144.0, 72.0]);
    let first = doc.get_page_images(ids[&1]).unwrap();
    assert_eq!(
        first[0].content,
        jpg.as_slice(),
        "the JPEG is embedded as it is"
    );
    assert_eq!(first[0].color_space.as_deref(), Some("DeviceGray"));
    let second = doc.get_page_images(ids[&2]).unwrap();
    assert_eq!((second[0].width, second[0].height), (2, 3));
    // No text layer: a scan.
    let read = read_pdf("signed.pdf", &pdf).unwrap();
    assert_eq!(read.pages.len(), 2);
    assert!(
        read.pages.iter().all(|p| p.trim().is_empty()),
        "{:?}",
        read.pages
    );
}

#[test]
fn bad_images_are_errors_that_say_why() {
    let r = reason(image_to_pdf("x.gif", b"GIF89a....").unwrap_err());
    assert!(r.contains("not a PNG or JPEG"), "{r}");
    let rgb = png_of(3, 2, png::ColorType::Rgb, &[200; 18]);
    let r = reason(image_to_pdf("cut.png", &rgb[..rgb.len() - 20]).unwrap_err());
    assert!(r.contains("corrupt or truncated"), "{r}");
    // A header claiming 100,000 × 100,000 pixels is refused before any allocation.
    let mut huge = rgb.clone();
    huge[16..20].copy_from_slice(&100_000u32.to_be_bytes());
    huge[20..24].copy_from_slice(&100_000u32.to_be_bytes());
    let r = reason(image_to_pdf("huge.png", &huge).unwrap_err());
    assert!(r.contains("pixels") || r.contains("corrupt"), "{r}");
    let r = reason(image_to_pdf("cut.jpg", &[0xFF, 0xD8, 0xFF, 0xE0, 0x00]).unwrap_err());
    assert!(r.contains("JPEG"), "{r}");
    let mut jpg = Vec::new();
    jpeg_encoder::Encoder::new(&mut jpg, 80)
        .encode(&[90u8; 3], 1, 1, jpeg_encoder::ColorType::Rgb)
        .unwrap();
    let r = reason(image_to_pdf("half.jpg", &jpg[..20]).unwrap_err());
    assert!(r.contains("JPEG"), "{r}");
}

proptest::proptest! {
    #[test]
    fn image_to_pdf_never_panics(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512), kind in 0usize..2) {
        let mut b = if kind == 0 { b"\x89PNG\r\n\x1a\n".to_vec() } else { vec![0xFF, 0xD8, 0xFF] };
        b.extend_from_slice(&bytes);
        let _ = image::image_to_pdf_in_process("x", &b);
    }
}

#[test]
fn pdf_text_becomes_one_paragraph_per_line() {
    let pdf = write_pdf("t", "# Title\n\nFirst line\nSecond line\n");
    let p = read_pdf("t.pdf", &pdf).unwrap();
    let blocks = p.to_blocks();
    let texts: Vec<String> = blocks
        .iter()
        .map(|b| match b {
            WriteBlock::Paragraph { text } => text.trim().to_string(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(texts, vec!["Title", "First line", "Second line"]);
}
