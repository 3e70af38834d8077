//! Image → PDF: a PNG or JPEG on a page of its own ([`image_to_pdf`]), or pictures the caller
//! made as the pages of a scan ([`images_to_pdf`]).
//!
//! A JPEG is embedded as it is (the PDF `DCTDecode` filter holds JPEG data), after reading its
//! dimensions and colour components from the frame header; a PNG is decoded (the `png` crate:
//! any bit depth, palette, interlacing, transparency), its pixels deflated into the PDF, its
//! alpha channel becoming a soft mask. The page is the image's size at 72 dpi (one pixel, one
//! point, as most converters do), scaled down to fit PDF's largest page (14,400 points) when
//! bigger. Deterministic: the same image gives the same bytes. The image is decoded in an
//! isolated child process, like every reader of untrusted files.

use std::io::{Cursor, Write};

use super::invalid;
use crate::FormatError;

/// Most pixels an image may have.
pub const MAX_IMAGE_PIXELS: u64 = 50_000_000;
/// The largest page side PDF readers accept, in points.
const MAX_PAGE: f64 = 14_400.0;

/// Put a PNG or JPEG image (by its bytes, whatever the name says) on a one-page PDF.
pub fn image_to_pdf(file: &str, bytes: &[u8]) -> Result<Vec<u8>, FormatError> {
    crate::isolated::read(file, bytes, |f, b| image_to_pdf_in_process(f, b))
}

/// An image ready to embed: its stream dictionary entries, data and optional soft mask.
struct Embedded {
    width: u32,
    height: u32,
    /// `/ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode ...`
    dict: String,
    data: Vec<u8>,
    /// Deflated 8-bit alpha plane.
    alpha: Option<Vec<u8>>,
}

pub(crate) fn image_to_pdf_in_process(file: &str, bytes: &[u8]) -> Result<Vec<u8>, FormatError> {
    if bytes.len() > super::MAX_INPUT_BYTES {
        return Err(invalid(
            file,
            format!(
                "the image is {} bytes, more than the {} that can be read",
                bytes.len(),
                super::MAX_INPUT_BYTES
            ),
        ));
    }
    let img = if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        png_image(file, bytes)?
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        jpeg_image(file, bytes)?
    } else {
        return Err(invalid(
            file,
            "not a PNG or JPEG image (only those two can be converted to PDF); convert it to PNG first".into(),
        ));
    };
    Ok(pdf_of(file, &img))
}

fn check_size(file: &str, width: u32, height: u32) -> Result<(), FormatError> {
    if width == 0 || height == 0 {
        return Err(invalid(
            file,
            "the image has no pixels (width or height 0)".into(),
        ));
    }
    if u64::from(width) * u64::from(height) > MAX_IMAGE_PIXELS {
        return Err(invalid(
            file,
            format!(
                "the image is {width}×{height} pixels, more than the {MAX_IMAGE_PIXELS} that can be converted; scale it down"
            ),
        ));
    }
    Ok(())
}

fn png_image(file: &str, bytes: &[u8]) -> Result<Embedded, FormatError> {
    let bad = |e: &dyn std::fmt::Display| {
        invalid(
            file,
            format!("the PNG image is corrupt or truncated ({e}); ask for a fresh copy"),
        )
    };
    let (width, height, gray, pixels, alpha) =
        crate::error::guard("PNG decoder", || -> Result<_, FormatError> {
            let mut decoder = png::Decoder::new_with_limits(
                Cursor::new(bytes),
                png::Limits {
                    bytes: (MAX_IMAGE_PIXELS * 4) as usize,
                },
            );
            decoder
                .set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
            let mut reader = decoder.read_info().map_err(|e| bad(&e))?;
            let (w, h) = reader.info().size();
            check_size(file, w, h)?;
            let size = reader
                .output_buffer_size()
                .ok_or_else(|| bad(&"the image is too large to decode"))?;
            let mut buf = vec![0u8; size];
            let info = reader.next_frame(&mut buf).map_err(|e| bad(&e))?;
            buf.truncate(info.line_size * info.height as usize);
            let channels = match info.color_type {
                png::ColorType::Grayscale => 1,
                png::ColorType::GrayscaleAlpha => 2,
                png::ColorType::Rgb => 3,
                png::ColorType::Rgba => 4,
                png::ColorType::Indexed => {
                    return Err(bad(&"a palette image that could not be expanded"));
                }
            };
            if info.bit_depth != png::BitDepth::Eight {
                return Err(bad(&"an unexpected bit depth after decoding"));
            }
            let row = info.width as usize * channels;
            let (color_ch, has_alpha) = match channels {
                2 => (1, true),
                4 => (3, true),
                c => (c, false),
            };
            let mut color =
                Vec::with_capacity(info.width as usize * info.height as usize * color_ch);
            let mut alpha = Vec::new();
            for line in buf.chunks(info.line_size) {
                for px in line.get(..row).unwrap_or(line).chunks(channels) {
                    color.extend_from_slice(&px[..color_ch.min(px.len())]);
                    if has_alpha {
                        alpha.push(px.last().copied().unwrap_or(255));
                    }
                }
            }
            let alpha = (has_alpha && alpha.iter().any(|a| *a != 255)).then_some(alpha);
            Ok((info.width, info.height, color_ch == 1, color, alpha))
        })??;
    Ok(Embedded {
        width,
        height,
        dict: format!(
            "/ColorSpace /{} /BitsPerComponent 8 /Filter /FlateDecode",
            if gray { "DeviceGray" } else { "DeviceRGB" }
        ),
        data: deflate(&pixels),
        alpha: alpha.map(|a| deflate(&a)),
    })
}

fn deflate(data: &[u8]) -> Vec<u8> {
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    // Writing into a Vec cannot fail.
    let _ = z.write_all(data);
    z.finish().unwrap_or_default()
}

/// Read a JPEG's frame header (SOF): dimensions, components. The data is embedded as is.
fn jpeg_image(file: &str, bytes: &[u8]) -> Result<Embedded, FormatError> {
    let bad = |why: &str| {
        invalid(
            file,
            format!("the JPEG image cannot be used ({why}); ask for a fresh copy or a PNG"),
        )
    };
    let mut i = 2usize;
    let mut adobe = false;
    loop {
        // Find the next marker: 0xFF (fill bytes allowed), then the code.
        while bytes.get(i) == Some(&0xFF) && bytes.get(i + 1) == Some(&0xFF) {
            i += 1;
        }
        let (Some(0xFF), Some(&code)) = (bytes.get(i), bytes.get(i + 1)) else {
            return Err(bad("no frame header before the end of the file"));
        };
        i += 2;
        if code == 0x01 || (0xD0..=0xD7).contains(&code) {
            continue;
        }
        if code == 0xD9 || code == 0xDA {
            return Err(bad("no frame header before the image data"));
        }
        let len = match (bytes.get(i), bytes.get(i + 1)) {
            (Some(&a), Some(&b)) => usize::from(a) << 8 | usize::from(b),
            _ => return Err(bad("truncated")),
        };
        if len < 2 || i + len > bytes.len() {
            return Err(bad("a segment runs past the end of the file"));
        }
        let seg = &bytes[i + 2..i + len];
        if code == 0xEE && seg.starts_with(b"Adobe") {
            adobe = true;
        }
        let is_sof = (0xC0..=0xCF).contains(&code) && !matches!(code, 0xC4 | 0xC8 | 0xCC);
        if is_sof {
            if !matches!(code, 0xC0..=0xC2) {
                return Err(bad(
                    "a lossless or arithmetic-coded JPEG, which PDF readers do not display",
                ));
            }
            if seg.len() < 6 {
                return Err(bad("a frame header that is too short"));
            }
            if seg[0] != 8 {
                return Err(bad("a sample precision other than 8 bits"));
            }
            let height = u32::from(seg[1]) << 8 | u32::from(seg[2]);
            let width = u32::from(seg[3]) << 8 | u32::from(seg[4]);
            check_size(file, width, height)?;
            let space = match seg[5] {
                1 => "/ColorSpace /DeviceGray",
                3 => "/ColorSpace /DeviceRGB",
                4 if adobe => "/ColorSpace /DeviceCMYK /Decode [1 0 1 0 1 0 1 0]",
                4 => "/ColorSpace /DeviceCMYK",
                _ => return Err(bad("an unusual number of colour components")),
            };
            return Ok(Embedded {
                width,
                height,
                dict: format!("{space} /BitsPerComponent 8 /Filter /DCTDecode"),
                data: bytes.to_vec(),
                alpha: None,
            });
        }
        i += len;
    }
}

/// A picture made by the caller (who knows its size and encoding), to be one page of a PDF
/// written by [`images_to_pdf`]: a scan's pages, rendered in-process, need no decoding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageImage {
    /// Baseline or progressive JPEG data (8-bit, `gray`: one component, else three), kept as
    /// it is (`DCTDecode`).
    Jpeg {
        width: u32,
        height: u32,
        gray: bool,
        data: Vec<u8>,
    },
    /// Raw 8-bit pixels, row by row (`gray`: one byte a pixel, else RGB), deflated into the
    /// PDF (`FlateDecode`).
    Pixels {
        width: u32,
        height: u32,
        gray: bool,
        pixels: Vec<u8>,
    },
}

/// A PDF with one page per image, each image filling its page; `dpi` sets the page size
/// (the A4 page scanned at 150 dpi is 1240 × 1754 pixels and 595 × 842 points). No text
/// layer: what a scanner writes. Deterministic: the same pages give the same bytes.
///
/// The pages are the caller's own pictures; bytes from elsewhere go through
/// [`image_to_pdf`], which reads them in an isolated child.
pub fn images_to_pdf(title: &str, pages: &[PageImage], dpi: f64) -> Vec<u8> {
    let embedded: Vec<Embedded> = pages
        .iter()
        .map(|p| match p {
            PageImage::Jpeg {
                width,
                height,
                gray,
                data,
            } => Embedded {
                width: *width,
                height: *height,
                dict: format!(
                    "/ColorSpace /{} /BitsPerComponent 8 /Filter /DCTDecode",
                    if *gray { "DeviceGray" } else { "DeviceRGB" }
                ),
                data: data.clone(),
                alpha: None,
            },
            PageImage::Pixels {
                width,
                height,
                gray,
                pixels,
            } => Embedded {
                width: *width,
                height: *height,
                dict: format!(
                    "/ColorSpace /{} /BitsPerComponent 8 /Filter /FlateDecode",
                    if *gray { "DeviceGray" } else { "DeviceRGB" }
                ),
                data: deflate(pixels),
                alpha: None,
            },
        })
        .collect();
    let dpi = if dpi.is_finite() && dpi > 0.0 {
        dpi
    } else {
        72.0
    };
    pdf_of_pages(title, &embedded, 72.0 / dpi)
}

/// A one-page PDF showing the image over the whole page.
fn pdf_of(file: &str, img: &Embedded) -> Vec<u8> {
    let title = file.rsplit('/').next().unwrap_or(file);
    pdf_of_pages(title, std::slice::from_ref(img), 1.0)
}

/// A PDF of one page per image, each page the image's size times `points_per_pixel`
/// (scaled down to fit PDF's largest page when bigger). Objects: 1 catalog, 2 page tree,
/// 3 information; then per page its page, contents, image and (when it has one) soft mask.
fn pdf_of_pages(title: &str, imgs: &[Embedded], points_per_pixel: f64) -> Vec<u8> {
    let title: String = title
        .chars()
        .filter(|c| c.is_ascii_graphic() || *c == ' ')
        .filter(|c| !matches!(c, '(' | ')' | '\\'))
        .collect();
    let stream = |dict: String, data: &[u8]| {
        let mut o = format!("<< {dict} /Length {} >>\nstream\n", data.len()).into_bytes();
        o.extend_from_slice(data);
        o.extend_from_slice(b"\nendstream");
        o
    };
    let mut objs: Vec<Vec<u8>> = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        Vec::new(),
        format!("<< /Title ({title}) /Producer (Bureau) >>").into_bytes(),
    ];
    let mut kids = Vec::with_capacity(imgs.len());
    for img in imgs {
        let (w, h) = (f64::from(img.width), f64::from(img.height));
        let scale = (MAX_PAGE / (w * points_per_pixel).max(h * points_per_pixel)).min(1.0)
            * points_per_pixel;
        let (pw, ph) = (w * scale, h * scale);
        let page = objs.len() + 1;
        kids.push(format!("{page} 0 R"));
        objs.push(
            format!(
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {pw:.2} {ph:.2}] /Resources << /XObject << /Im1 {} 0 R >> >> /Contents {} 0 R >>",
                page + 2,
                page + 1
            )
            .into_bytes(),
        );
        let content = format!("q {pw:.2} 0 0 {ph:.2} 0 0 cm /Im1 Do Q\n");
        objs.push(stream(String::new(), content.as_bytes()));
        let smask = if img.alpha.is_some() {
            format!(" /SMask {} 0 R", page + 3)
        } else {
            String::new()
        };
        objs.push(stream(
            format!(
                "/Type /XObject /Subtype /Image /Width {} /Height {} {}{smask}",
                img.width, img.height, img.dict
            ),
            &img.data,
        ));
        if let Some(a) = &img.alpha {
            objs.push(stream(
                format!(
                    "/Type /XObject /Subtype /Image /Width {} /Height {} /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode",
                    img.width, img.height
                ),
                a,
            ));
        }
    }
    objs[1] = format!(
        "<< /Type /Pages /Kids [{}] /Count {} >>",
        kids.join(" "),
        imgs.len()
    )
    .into_bytes();
    super::pdf::assemble(&objs, 3)
}
