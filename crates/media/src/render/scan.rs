//! Scans: pictures as the pages of an image-only PDF, as a scanner writes them — one
//! greyscale JPEG a page at 150 dpi, no text layer (the PDF writer is
//! [`bureau_formats::office::images_to_pdf`]).

use bureau_formats::office::{PageImage, images_to_pdf};
use image::DynamicImage;

use super::photo::{Encoding, encode};
use super::{MAX_PAGES, Picture, RenderError};

/// The resolution pages are scanned at: an A4 document page (1240 pixels wide) is A4.
pub const SCAN_DPI: f64 = 150.0;

/// A PDF of `pages`, page N drawn with the key `<key>#<N>`; `quality` is the JPEG quality.
pub fn scan_pdf(
    pages: &[Picture],
    seed: u64,
    key: &str,
    quality: u8,
) -> Result<Vec<u8>, RenderError> {
    if pages.is_empty() || pages.len() > MAX_PAGES {
        return Err(RenderError::Input(format!(
            "a scan has {} pages; give it 1 to {MAX_PAGES} ([[scan.page]] entries)",
            pages.len()
        )));
    }
    let mut out = Vec::with_capacity(pages.len());
    for (i, p) in pages.iter().enumerate() {
        let img = p
            .render(seed, &format!("{key}#{}", i + 1))
            .map_err(|e| match e {
                RenderError::Input(m) => RenderError::Input(format!("page {}: {m}", i + 1)),
                other => other,
            })?;
        let grey = DynamicImage::ImageRgb8(img).into_luma8();
        let (width, height) = grey.dimensions();
        let data = encode(&DynamicImage::ImageLuma8(grey), Encoding::Jpeg(quality))?;
        out.push(PageImage::Jpeg {
            width,
            height,
            gray: true,
            data,
        });
    }
    let title = key.rsplit('/').next().unwrap_or(key);
    Ok(images_to_pdf(title, &out, SCAN_DPI))
}
