//! Scans: pictures as the pages of an image-only PDF, as a scanner writes them — one
//! greyscale JPEG a page, A4 wide, no text layer (the PDF writer is
//! [`bureau_formats::office::images_to_pdf`]).

use bureau_formats::office::{PageImage, images_to_pdf};
use image::DynamicImage;

use super::photo::{Encoding, encode};
use super::{MAX_PAGES, Picture, RenderError};

/// The width of a scanned page in inches (A4): a page 1240 pixels wide is scanned at 150 dpi.
pub const PAGE_INCHES: f64 = 8.27;

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
    let widest = out
        .iter()
        .map(|p| match p {
            PageImage::Jpeg { width, .. } | PageImage::Pixels { width, .. } => *width,
        })
        .max()
        .unwrap_or(1240);
    Ok(images_to_pdf(title, &out, f64::from(widest) / PAGE_INCHES))
}
