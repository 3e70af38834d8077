//! Optical character recognition with tesseract, when it is on PATH (the `files_ocr` tool of
//! tasks that declare the `ocr` app). Never used by checks: a verdict must not depend on an
//! OCR engine's version.

use std::time::Duration;

use crate::external::{need, run, stage};
use crate::kind::Family;
use crate::limits::SECONDS;
use crate::{MediaError, MediaType, invalid};

/// Most pages of a PDF read by OCR.
pub const MAX_OCR_PAGES: usize = 20;

/// The text tesseract reads in an image (any format [`crate::sniff`] knows as an image) or in
/// the page images of a scanned PDF (pages joined with `## Page N` headings).
pub fn ocr(file: &str, bytes: &[u8], lang: &str) -> Result<String, MediaError> {
    if !lang
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '+')
        || lang.is_empty()
    {
        return Err(invalid(
            file,
            format!("`{lang}` is no tesseract language name (like eng, deu or eng+fra)"),
        ));
    }
    let t = crate::sniff(bytes)
        .ok_or_else(|| invalid(file, "not an image or a PDF; OCR reads pictures of text"))?;
    let tesseract = need("tesseract", "OCR", "apt-get install tesseract-ocr")?;
    match t.family() {
        Family::Image => {
            // Check it decodes within bounds first: tesseract has no limit of its own.
            crate::picture::dimensions(file, bytes, t)?;
            one_image(&tesseract, file, bytes, t, lang)
        }
        Family::Pdf => {
            let pages =
                crate::scan::page_images(file, bytes, &(1..=MAX_OCR_PAGES).collect::<Vec<_>>())?;
            let mut out = String::new();
            for p in pages {
                let Ok(img) = p.image else {
                    continue;
                };
                let t = crate::sniff(&img.bytes).unwrap_or(MediaType::Png);
                let text = one_image(&tesseract, file, &img.bytes, t, lang)?;
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(&format!("## Page {}\n\n{}\n", p.page, text.trim_end()));
            }
            if out.is_empty() {
                return Err(invalid(file, "the PDF has no page image to read"));
            }
            Ok(out)
        }
        _ => Err(invalid(
            file,
            format!("a {} file holds no picture of text", t.name()),
        )),
    }
}

fn one_image(
    tesseract: &std::path::Path,
    file: &str,
    bytes: &[u8],
    t: MediaType,
    lang: &str,
) -> Result<String, MediaError> {
    let (dir, input) = stage(bytes, &format!(".{}", t.name()))?;
    let out = run(
        tesseract,
        &[&input.to_string_lossy(), "stdout", "-l", lang, "--psm", "3"],
        dir.path(),
        file,
        Duration::from_secs(SECONDS),
    )?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
