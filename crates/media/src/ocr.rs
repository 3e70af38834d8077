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

/// A picture smaller than this on its longest side is read at twice its size. Tesseract reads
/// text best at about 300 dpi, and screenshots and small scans are far below it: OfficeBench's
/// 600×800 list of scores is misread at its own size ("Carol: 333" as "carol: 938") and read
/// without a fault at twice it.
pub const UPSCALE_BELOW: u32 = 1600;

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
            let (bytes, t) = for_tesseract(file, bytes, t)?;
            one_image(&tesseract, file, &bytes, t, lang)
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
                let (bytes, t) = for_tesseract(file, &img.bytes, t)?;
                let text = one_image(&tesseract, file, &bytes, t, lang)?;
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

/// The picture as tesseract gets it: as it is, or (below [`UPSCALE_BELOW`] on its longest
/// side) in grey at twice its size, decoded and scaled in an isolated child.
pub fn for_tesseract(
    file: &str,
    bytes: &[u8],
    t: MediaType,
) -> Result<(Vec<u8>, MediaType), MediaError> {
    let (w, h) = crate::picture::dimensions(file, bytes, t)?;
    if w.max(h) >= UPSCALE_BELOW {
        return Ok((bytes.to_vec(), t));
    }
    let f = file.to_string();
    // A byte string across the process boundary, not a list of numbers.
    let png: serde_bytes::ByteBuf =
        crate::isolated::decode(file, &(f, t), bytes, |(f, t), bytes| {
            let img = crate::picture::decode_in_process(f, bytes, *t)?;
            let grey = image::DynamicImage::ImageLuma8(img.to_luma8());
            let big = grey.resize_exact(
                img.width() * 2,
                img.height() * 2,
                image::imageops::FilterType::Lanczos3,
            );
            let mut out = Vec::new();
            big.write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png)
                .map_err(|e| invalid(f, format!("cannot re-encode it for OCR: {e}")))?;
            Ok(serde_bytes::ByteBuf::from(out))
        })?;
    Ok((png.into_vec(), MediaType::Png))
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
        // --psm 4 (one column of text of varying sizes) keeps each row of a table on one line;
        // the automatic layout (3) cuts a table into its columns, one after the other, and
        // loses whole columns of OfficeBench's trading records and lists of IDs.
        &[&input.to_string_lossy(), "stdout", "-l", lang, "--psm", "4"],
        dir.path(),
        file,
        Duration::from_secs(SECONDS),
    )?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(w: u32, h: u32) -> Vec<u8> {
        let img =
            image::GrayImage::from_fn(w, h, |x, y| image::Luma([((x * 7 + y * 3) % 256) as u8]));
        let mut out = Vec::new();
        image::DynamicImage::ImageLuma8(img)
            .write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png)
            .expect("encode");
        out
    }

    #[test]
    fn small_pictures_are_read_at_twice_their_size_large_ones_as_they_are() {
        let small = png(600, 800);
        let (bytes, t) = for_tesseract("scores.png", &small, MediaType::Png).expect("scaled");
        assert_eq!(t, MediaType::Png);
        assert_eq!(
            crate::picture::dimensions("x", &bytes, t).expect("a PNG"),
            (1200, 1600)
        );
        let large = png(1600, 40);
        let (bytes, _) = for_tesseract("wide.png", &large, MediaType::Png).expect("kept");
        assert_eq!(bytes, large);
        // a picture that lies past its header is an error, not a crash
        let mut cut = small.clone();
        cut.truncate(small.len() / 2);
        assert!(for_tesseract("cut.png", &cut, MediaType::Png).is_err());
    }
}
