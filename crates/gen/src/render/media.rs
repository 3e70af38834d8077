//! Evidence media: photographed pictures, charts and scans, drawn by `bureau_media::render`
//! from the file's own random stream (its seed and path key every random choice).

use bureau_media::render::{Encoding, encode, render_chart, scan_pdf};
use image::DynamicImage;

use super::*;
use crate::content::Evidence;

pub(super) fn media_as(
    id: &str,
    m: &Evidence,
    f: &FileCtx,
    rng: &mut Rng,
) -> Result<Vec<u8>, GenError> {
    let seed = rng.u64();
    let encoding = if id == "jpg" {
        Encoding::Jpeg(82)
    } else {
        Encoding::Png
    };
    let bytes = match m {
        Evidence::Picture(p) => p.render_bytes(seed, f.path, encoding),
        Evidence::Chart(c) => {
            render_chart(c).and_then(|img| encode(&DynamicImage::ImageRgb8(img), encoding))
        }
        Evidence::Scan(pages) => scan_pdf(pages, seed, f.path, 70),
    };
    bytes.map_err(|e| fail(f.path, e))
}
