//! Images: bounded decoding, and the copy of an image an agent is shown.
//!
//! An image's header is read first ([`dimensions`]); one that declares more than
//! [`MAX_DECODE_PIXELS`] is refused before a byte is inflated (a decompression bomb). An
//! image within [`MAX_AGENT_SIDE`] and [`MAX_AGENT_IMAGE_BYTES`] in a format every vision API
//! takes (PNG, JPEG, GIF, WebP) is passed as it is; any other is decoded (in an isolated
//! child), scaled down to fit and re-encoded — PNG when that stays small, else JPEG —
//! deterministically: the same bytes in give the same bytes out.

use std::io::Cursor;

use image::{DynamicImage, ImageFormat, ImageReader};
use serde::{Deserialize, Serialize};

use crate::limits::{MAX_AGENT_IMAGE_BYTES, MAX_AGENT_SIDE, MAX_DECODE_PIXELS, MAX_INPUT_BYTES};
use crate::{MediaError, MediaType, invalid};

/// An image ready for an agent: encoded bytes, their MIME type, and what was done.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentImage {
    /// Crosses from the decoding process as one byte string (CBOR), not a list of numbers.
    #[serde(with = "serde_bytes")]
    pub bytes: Vec<u8>,
    pub mime_type: String,
    /// Size of the original.
    pub width: u32,
    pub height: u32,
    /// Size of what the agent gets.
    pub shown_width: u32,
    pub shown_height: u32,
    /// What was changed, for the result's notes (`scaled from 4000×3000 to 1568×1176`).
    pub notes: Vec<String>,
}

fn format_of(t: MediaType) -> Option<ImageFormat> {
    Some(match t {
        MediaType::Png => ImageFormat::Png,
        MediaType::Jpeg => ImageFormat::Jpeg,
        MediaType::Gif => ImageFormat::Gif,
        MediaType::Webp => ImageFormat::WebP,
        MediaType::Bmp => ImageFormat::Bmp,
        MediaType::Tiff => ImageFormat::Tiff,
        _ => return None,
    })
}

fn reader<'a>(
    file: &str,
    bytes: &'a [u8],
    t: MediaType,
) -> Result<ImageReader<Cursor<&'a [u8]>>, MediaError> {
    let format =
        format_of(t).ok_or_else(|| invalid(file, format!("{} is no image format", t.name())))?;
    let mut r = ImageReader::with_format(Cursor::new(bytes), format);
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(1 << 16);
    limits.max_image_height = Some(1 << 16);
    limits.max_alloc = Some(MAX_DECODE_PIXELS * 4 + (64 << 20));
    r.limits(limits);
    Ok(r)
}

/// Width and height from the header alone (nothing is inflated); refuses images past
/// [`MAX_DECODE_PIXELS`].
pub fn dimensions(file: &str, bytes: &[u8], t: MediaType) -> Result<(u32, u32), MediaError> {
    if bytes.len() > MAX_INPUT_BYTES {
        return Err(MediaError::TooLarge {
            file: file.into(),
            reason: format!(
                "the image is {} bytes, more than the {MAX_INPUT_BYTES} that are read",
                bytes.len()
            ),
        });
    }
    let (w, h) = reader(file, bytes, t)?
        .into_dimensions()
        .map_err(|e| invalid(file, format!("not a readable {} image: {e}", t.name())))?;
    check_pixels(file, w, h)?;
    Ok((w, h))
}

fn check_pixels(file: &str, w: u32, h: u32) -> Result<(), MediaError> {
    if w == 0 || h == 0 {
        return Err(invalid(file, "the image has no pixels (width or height 0)"));
    }
    if u64::from(w) * u64::from(h) > MAX_DECODE_PIXELS {
        return Err(MediaError::TooLarge {
            file: file.into(),
            reason: format!(
                "the image declares {w}×{h} pixels, more than the {MAX_DECODE_PIXELS} that are decoded (a picture this large is most likely a decompression bomb); ask for a smaller copy"
            ),
        });
    }
    Ok(())
}

/// Decode an image (in the calling process: call it inside [`crate::isolated::decode`]).
pub fn decode_in_process(
    file: &str,
    bytes: &[u8],
    t: MediaType,
) -> Result<DynamicImage, MediaError> {
    let (w, h) = dimensions(file, bytes, t)?;
    check_pixels(file, w, h)?;
    reader(file, bytes, t)?.decode().map_err(|e| {
        invalid(
            file,
            format!("the {} image cannot be decoded: {e}", t.name()),
        )
    })
}

/// The size that fits `side` on the longest side, keeping the aspect ratio.
pub fn fit(w: u32, h: u32, side: u32) -> (u32, u32) {
    if w <= side && h <= side {
        return (w, h);
    }
    if w >= h {
        (
            side,
            ((u64::from(h) * u64::from(side)) / u64::from(w)).max(1) as u32,
        )
    } else {
        (
            ((u64::from(w) * u64::from(side)) / u64::from(h)).max(1) as u32,
            side,
        )
    }
}

/// Encode as PNG, or as JPEG (quality 85) when the PNG would be over
/// [`MAX_AGENT_IMAGE_BYTES`]; returns bytes and MIME type.
pub fn encode_for_agent(img: &DynamicImage) -> Result<(Vec<u8>, &'static str), String> {
    let mut png = Vec::new();
    img.write_to(&mut Cursor::new(&mut png), ImageFormat::Png)
        .map_err(|e| format!("PNG encoding failed: {e}"))?;
    if png.len() <= MAX_AGENT_IMAGE_BYTES {
        return Ok((png, "image/png"));
    }
    let rgb = DynamicImage::ImageRgb8(img.to_rgb8());
    let mut jpg = Vec::new();
    let enc = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpg, 85);
    rgb.write_with_encoder(enc)
        .map_err(|e| format!("JPEG encoding failed: {e}"))?;
    Ok((jpg, "image/jpeg"))
}

/// Scale `img` to fit `side` and encode it for an agent.
pub fn agent_copy_of(
    img: &DynamicImage,
    side: u32,
) -> Result<(Vec<u8>, &'static str, u32, u32), String> {
    let (w, h) = fit(img.width(), img.height(), side);
    let scaled;
    let img = if (w, h) != (img.width(), img.height()) {
        scaled = img.resize_exact(w, h, image::imageops::FilterType::Triangle);
        &scaled
    } else {
        img
    };
    let (bytes, mime) = encode_for_agent(img)?;
    Ok((bytes, mime, w, h))
}

/// The copy of the image `bytes` (of type `t`) an agent is shown.
pub fn for_agent(file: &str, bytes: &[u8], t: MediaType) -> Result<AgentImage, MediaError> {
    let (w, h) = dimensions(file, bytes, t)?;
    let passable = matches!(
        t,
        MediaType::Png | MediaType::Jpeg | MediaType::Gif | MediaType::Webp
    );
    if passable
        && w <= MAX_AGENT_SIDE
        && h <= MAX_AGENT_SIDE
        && bytes.len() <= MAX_AGENT_IMAGE_BYTES
    {
        // Decode once anyway (isolated), so that a file that lies past its header is an error
        // here and not a broken picture at the model.
        crate::isolated::decode(file, &(file.to_string(), t), bytes, |(f, t), b| {
            decode_in_process(f, b, *t).map(|_| ())
        })?;
        return Ok(AgentImage {
            bytes: bytes.to_vec(),
            mime_type: t.mime().to_string(),
            width: w,
            height: h,
            shown_width: w,
            shown_height: h,
            notes: Vec::new(),
        });
    }
    let args = (file.to_string(), t, w, h, passable);
    crate::isolated::decode(file, &args, bytes, |&(ref f, t, w, h, passable), bytes| {
        let img = decode_in_process(f, bytes, t)?;
        let (out, mime, sw, sh) = agent_copy_of(&img, MAX_AGENT_SIDE).map_err(|e| invalid(f, e))?;
        let mut notes = Vec::new();
        if (sw, sh) != (w, h) {
            notes.push(format!("scaled from {w}×{h} to {sw}×{sh} pixels"));
        }
        if !passable {
            notes.push(format!(
                "converted from {} to {}",
                t.name(),
                &mime["image/".len()..]
            ));
        } else if (sw, sh) == (w, h) {
            notes.push(format!(
                "re-encoded as {} to stay under {MAX_AGENT_IMAGE_BYTES} bytes",
                &mime["image/".len()..]
            ));
        }
        Ok(AgentImage {
            bytes: out,
            mime_type: mime.to_string(),
            width: w,
            height: h,
            shown_width: sw,
            shown_height: sh,
            notes,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(w: u32, h: u32) -> Vec<u8> {
        let img = DynamicImage::ImageRgb8(image::RgbImage::from_fn(w, h, |x, y| {
            image::Rgb([(x % 256) as u8, (y % 256) as u8, 128])
        }));
        let mut out = Vec::new();
        img.write_to(&mut Cursor::new(&mut out), ImageFormat::Png)
            .unwrap();
        out
    }

    #[test]
    fn a_small_png_passes_as_it_is() {
        let b = png(40, 30);
        let a = for_agent("a.png", &b, MediaType::Png).unwrap();
        assert_eq!(a.bytes, b);
        assert_eq!((a.width, a.height, a.shown_width), (40, 30, 40));
        assert!(a.notes.is_empty());
    }

    #[test]
    fn a_large_image_is_scaled_to_fit_deterministically() {
        let b = png(2000, 500);
        let a = for_agent("wide.png", &b, MediaType::Png).unwrap();
        assert_eq!((a.shown_width, a.shown_height), (1568, 392));
        assert!(a.notes[0].contains("scaled from 2000×500"), "{:?}", a.notes);
        let again = for_agent("wide.png", &b, MediaType::Png).unwrap();
        assert_eq!(a.bytes, again.bytes);
    }

    #[test]
    fn a_bomb_is_refused_from_its_header() {
        // A PNG header declaring 60000×60000 pixels, with no data behind it.
        let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        b.extend_from_slice(&60000u32.to_be_bytes());
        b.extend_from_slice(&60000u32.to_be_bytes());
        b.extend_from_slice(&[8, 2, 0, 0, 0]);
        let header_crc = crc(&b[12..]);
        b.extend_from_slice(&header_crc.to_be_bytes());
        for (kind, data) in [
            (&b"IDAT"[..], &[0x78u8, 0x9c, 0x03, 0x00][..]),
            (b"IEND", &[]),
        ] {
            b.extend_from_slice(&(data.len() as u32).to_be_bytes());
            let start = b.len();
            b.extend_from_slice(kind);
            b.extend_from_slice(data);
            let c = crc(&b[start..]);
            b.extend_from_slice(&c.to_be_bytes());
        }
        let e = for_agent("bomb.png", &b, MediaType::Png).unwrap_err();
        assert!(e.to_string().contains("decompression bomb"), "{e}");
    }

    #[test]
    fn a_truncated_png_is_an_error() {
        let b = png(100, 100);
        let e = for_agent("cut.png", &b[..b.len() / 2], MediaType::Png).unwrap_err();
        assert!(e.to_string().contains("cut.png"), "{e}");
    }

    fn crc(data: &[u8]) -> u32 {
        let mut c = 0xFFFF_FFFFu32;
        for &b in data {
            c ^= u32::from(b);
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
        }
        !c
    }
}
