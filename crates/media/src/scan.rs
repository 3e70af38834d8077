//! Scanned PDFs: the page images of pages that have no text layer.
//!
//! A scan is a PDF whose pages are pictures. For each such page the largest image it draws is
//! taken from the file as it is: JPEG data (`DCTDecode`) directly, 8-bit RGB or grey pixels
//! (`FlateDecode` or unfiltered) rebuilt into an image. A page whose image is in another
//! encoding (JBIG2, CCITT fax, JPEG 2000) is rendered with `pdftoppm` when poppler is on PATH,
//! else named in a note. Parsing runs in an isolated child (a hostile PDF can make a parser
//! recurse or allocate without end); at most [`MAX_PARTS`] pages are shown.

use std::io::Read;
use std::time::Duration;

use image::{DynamicImage, GrayImage, RgbImage};
use serde::{Deserialize, Serialize};

use crate::limits::{MAX_AGENT_SIDE, MAX_DECODE_PIXELS, SECONDS};
use crate::picture::{AgentImage, agent_copy_of};
use crate::{MediaError, MediaType, invalid};

/// One page's image, or why there is none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageImage {
    /// 1-based page number.
    pub page: usize,
    pub image: Result<AgentImage, String>,
}

/// The images of `pages` (1-based) of the PDF `bytes`.
pub fn page_images(
    file: &str,
    bytes: &[u8],
    pages: &[usize],
) -> Result<Vec<PageImage>, MediaError> {
    let f = file.to_string();
    let mut out: Vec<PageImage> =
        crate::isolated::decode(file, &(f, pages.to_vec()), bytes, |(f, pages), b| {
            extract_in_process(f, b, pages)
        })?;
    // Pages whose image could not be taken from the file: render them, when poppler is here.
    for p in out.iter_mut() {
        if let Err(why) = &p.image {
            match render_page(file, bytes, p.page) {
                Ok(img) => p.image = Ok(img),
                Err(MediaError::Missing { .. }) => {
                    p.image = Err(format!(
                        "{why}; rendering the page needs pdftoppm (apt-get install poppler-utils)"
                    ))
                }
                Err(e) => p.image = Err(format!("{why}; rendering it failed: {e}")),
            }
        }
    }
    Ok(out)
}

fn extract_in_process(
    file: &str,
    bytes: &[u8],
    pages: &[usize],
) -> Result<Vec<PageImage>, MediaError> {
    let doc = lopdf::Document::load_mem(bytes)
        .map_err(|e| invalid(file, format!("not a readable PDF: {e}")))?;
    let ids = doc.get_pages();
    let mut out = Vec::new();
    for &page in pages {
        let image = match u32::try_from(page).ok().and_then(|p| ids.get(&p)) {
            None => Err(format!("the PDF has no page {page}")),
            Some(id) => page_image(file, &doc, *id),
        };
        out.push(PageImage { page, image });
    }
    Ok(out)
}

fn page_image(
    file: &str,
    doc: &lopdf::Document,
    id: lopdf::ObjectId,
) -> Result<AgentImage, String> {
    let images = doc
        .get_page_images(id)
        .map_err(|e| format!("its images cannot be read: {e}"))?;
    let img = images
        .iter()
        .max_by_key(|i| i.width.saturating_mul(i.height))
        .ok_or_else(|| "the page has neither text nor an image".to_string())?;
    let (w, h) = (
        u32::try_from(img.width).unwrap_or(0),
        u32::try_from(img.height).unwrap_or(0),
    );
    if w == 0 || h == 0 || u64::from(w) * u64::from(h) > MAX_DECODE_PIXELS {
        return Err(format!(
            "its image declares {}×{} pixels",
            img.width, img.height
        ));
    }
    let filters: Vec<&str> = img.filters.iter().flatten().map(String::as_str).collect();
    let decoded: DynamicImage = match filters.as_slice() {
        ["DCTDecode"] => crate::picture::decode_in_process(file, img.content, MediaType::Jpeg)
            .map_err(|e| e.to_string())?,
        [] | ["FlateDecode"] => {
            let bpc = img.bits_per_component.unwrap_or(8);
            let channels = match img.color_space.as_deref() {
                Some("DeviceRGB") => 3,
                Some("DeviceGray") => 1,
                other => {
                    return Err(format!(
                        "its image is in the colour space {}, which is not read directly",
                        other.unwrap_or("(none)")
                    ));
                }
            };
            if bpc != 8 {
                return Err(format!(
                    "its image has {bpc} bits per component, which are not read directly"
                ));
            }
            let need = u64::from(w) * u64::from(h) * channels;
            let raw = if filters.is_empty() {
                img.content.to_vec()
            } else {
                let mut out = Vec::new();
                flate2::read::ZlibDecoder::new(img.content)
                    .take(need + 1)
                    .read_to_end(&mut out)
                    .map_err(|e| format!("its image data does not inflate: {e}"))?;
                out
            };
            if (raw.len() as u64) < need {
                return Err(format!(
                    "its image data is {} bytes, fewer than the {need} its size needs",
                    raw.len()
                ));
            }
            let raw = raw[..need as usize].to_vec();
            if channels == 3 {
                DynamicImage::ImageRgb8(RgbImage::from_raw(w, h, raw).ok_or("bad RGB image data")?)
            } else {
                DynamicImage::ImageLuma8(
                    GrayImage::from_raw(w, h, raw).ok_or("bad grey image data")?,
                )
            }
        }
        other => {
            return Err(format!(
                "its image is encoded with {}, which is not read directly",
                other.join("+")
            ));
        }
    };
    let (bytes, mime, sw, sh) = agent_copy_of(&decoded, MAX_AGENT_SIDE)?;
    let mut notes = Vec::new();
    if (sw, sh) != (w, h) {
        notes.push(format!("scaled from {w}×{h} to {sw}×{sh} pixels"));
    }
    Ok(AgentImage {
        bytes,
        mime_type: mime.into(),
        width: w,
        height: h,
        shown_width: sw,
        shown_height: sh,
        notes,
    })
}

/// Render one page with poppler's pdftoppm (100 dpi, PNG).
fn render_page(file: &str, bytes: &[u8], page: usize) -> Result<AgentImage, MediaError> {
    let pdftoppm = crate::external::need(
        "pdftoppm",
        "rendering a PDF page",
        "apt-get install poppler-utils",
    )?;
    let (dir, input) = crate::external::stage(bytes, ".pdf")?;
    let n = page.to_string();
    let out_prefix = dir.path().join("page");
    crate::external::run(
        &pdftoppm,
        &[
            "-f",
            &n,
            "-l",
            &n,
            "-r",
            "100",
            "-png",
            "-singlefile",
            &input.to_string_lossy(),
            &out_prefix.to_string_lossy(),
        ],
        dir.path(),
        file,
        Duration::from_secs(SECONDS),
    )?;
    let png = std::fs::read(dir.path().join("page.png")).map_err(|e| MediaError::Program {
        program: "pdftoppm".into(),
        file: file.into(),
        reason: format!("it wrote no page image: {e}"),
    })?;
    crate::picture::for_agent(file, &png, MediaType::Png)
}
