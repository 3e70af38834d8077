//! What checks learn of an image: format, size, colour type, a perceptual hash and the
//! dominant colours — from bytes, deterministically, with every decode in an isolated child.
//!
//! - **Perceptual hash** ([`ImageFacts::phash`]): the average hash of [`image_hasher`]
//!   (`HashAlg::Mean`, hash size 16×16, no DCT, Lanczos3 resize, its default bit order): the
//!   picture (composited over white, as a viewer shows it) is reduced to 16×16 grey pixels
//!   and each pixel becomes one bit, brighter than the mean or not — 256 bits, written as 64
//!   hex digits. Two pictures' [`distance`] is the Hamming distance of their hashes, 0–256.
//!   Measured on 256×256 test pictures (`tests` below): the same picture scaled, re-encoded
//!   as JPEG at quality 40 or noised by ±30 per channel is 0 bits away; a square moved by 4%
//!   of the side 8; a circle instead of a square of the same size 20; a square a third
//!   larger 76. The hash sees shapes and brightness, not hue (a red and a blue circle hash
//!   alike): compare colours with the dominant colours. It was chosen over the DCT and
//!   gradient hashes, which flipped 5 to 27 bits under the noise above. The algorithm and
//!   size are fixed: hashes stored in a task stay comparable.
//! - **Dominant colours** ([`ImageFacts::colours`]): the picture, composited over white, is
//!   sampled on a grid of at most [`COLOUR_SAMPLE_SIDE`]² pixels (nearest neighbour, no
//!   blending), each sample falls in one of 512 boxes (3 bits per channel), boxes whose mean
//!   colours lie within [`MERGE_DISTANCE`] of a larger box's are merged into it (so a colour
//!   on a box boundary is not split in two), and the [`DOMINANT_COLOURS`] largest are given as
//!   the mean colour of their samples (`#rrggbb`) with their share of the picture (0–1, four
//!   decimals); ties are ordered by colour. Whatever the machine, the same bytes give the same
//!   list.
//! - **PDF pages** ([`pdf_page`]): the image of one page of a PDF, as
//!   [`crate::scan::page_images`] gives it (the page's largest embedded image, else the page
//!   rendered with pdftoppm), analysed like any picture.
//!
//! Bounds are those of every media decode ([`crate::limits`]): the header is read first and a
//! picture declaring more than [`crate::limits::MAX_DECODE_PIXELS`] is refused before it is
//! inflated; the decode runs under [`crate::isolated::decode`]'s time and memory limits.

use std::collections::BTreeMap;

use image::{DynamicImage, Rgb, RgbImage};
use image_hasher::{HashAlg, HasherConfig};
use serde::{Deserialize, Serialize};

use crate::kind::Family;
use crate::{MediaError, MediaType, invalid, sniff};

/// Most dominant colours listed.
pub const DOMINANT_COLOURS: usize = 6;
/// Longest side of the sampling grid of the dominant colours.
pub const COLOUR_SAMPLE_SIDE: u32 = 128;
/// Boxes whose mean colours are at most this far apart (Euclidean, RGB 0–255) are one colour.
pub const MERGE_DISTANCE: f64 = 40.0;
/// Bits of the perceptual hash.
pub const HASH_BITS: u32 = 256;
/// The distance [`colour_match`] allows by default between an expected colour and a dominant
/// one (Euclidean, RGB 0–255): a slightly different shade matches, another hue does not.
pub const COLOUR_TOLERANCE: f64 = 60.0;
/// The share of the picture a dominant colour must have for [`colour_match`] to count it.
pub const MIN_COLOUR_SHARE: f64 = 0.02;

/// One dominant colour: its mean colour and the share of the picture it covers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Colour {
    /// `#rrggbb`, lower case.
    pub hex: String,
    /// 0–1, four decimals.
    pub share: f64,
}

/// What a check sees of an image.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImageFacts {
    /// `png`, `jpeg`, `gif`, `webp`, `bmp`, `tiff` (by the bytes, not the name).
    pub format: String,
    pub width: u32,
    pub height: u32,
    /// The decoded colour type: `rgb8`, `rgba8`, `l8` (grey), `la8`, `rgb16`, ...
    pub colour_type: String,
    /// The perceptual hash, 64 hex digits (see the module documentation).
    pub phash: String,
    /// The dominant colours, largest share first.
    pub colours: Vec<Colour>,
}

/// The facts of the image `bytes` (`file` names it in errors). An error when the bytes are no
/// image format Bureau reads, are damaged, or declare too many pixels.
pub fn analyze(file: &str, bytes: &[u8]) -> Result<ImageFacts, MediaError> {
    let t = image_type(file, bytes)?;
    crate::picture::dimensions(file, bytes, t)?;
    crate::isolated::decode(
        file,
        &(file.to_string(), t),
        bytes,
        |(f, t): &(String, MediaType), b| {
            let img = crate::picture::decode_in_process(f, b, *t)?;
            Ok(facts_of(t.name(), &img))
        },
    )
}

/// The facts of the image of page `page` (1-based) of the PDF `bytes`: the page's largest
/// embedded image, or the page rendered with pdftoppm when it has none that can be read
/// directly. `width` and `height` are those of that image (embedded pixels, or the 100-dpi
/// rendering), the hash and colours those of the copy an agent would be shown.
pub fn pdf_page(file: &str, bytes: &[u8], page: usize) -> Result<ImageFacts, MediaError> {
    if sniff(bytes) != Some(MediaType::Pdf) {
        return Err(invalid(file, "not a PDF (no %PDF- header)"));
    }
    if page == 0 {
        return Err(invalid(file, "pages are counted from 1"));
    }
    let pages = crate::scan::page_images(file, bytes, &[page])?;
    let image = pages
        .into_iter()
        .next()
        .map(|p| p.image)
        .unwrap_or_else(|| Err(format!("the PDF has no page {page}")));
    let img = image.map_err(|why| invalid(file, format!("page {page}: {why}")))?;
    let mut facts = analyze(&format!("{file}, page {page}"), &img.bytes)?;
    facts.width = img.width;
    facts.height = img.height;
    Ok(facts)
}

fn image_type(file: &str, bytes: &[u8]) -> Result<MediaType, MediaError> {
    match sniff(bytes) {
        Some(t) if t.family() == Family::Image => Ok(t),
        Some(t) => Err(invalid(file, format!("a {} file, not an image", t.name()))),
        None => Err(invalid(
            file,
            "not an image (PNG, JPEG, GIF, WebP, BMP or TIFF by its bytes)",
        )),
    }
}

/// The picture as a viewer shows it: transparent parts over white.
fn over_white(img: &DynamicImage) -> RgbImage {
    if !img.color().has_alpha() {
        return img.to_rgb8();
    }
    let rgba = img.to_rgba8();
    RgbImage::from_fn(rgba.width(), rgba.height(), |x, y| {
        let p = rgba.get_pixel(x, y).0;
        let a = u32::from(p[3]);
        let mix = |c: u8| ((u32::from(c) * a + 255 * (255 - a) + 127) / 255) as u8;
        Rgb([mix(p[0]), mix(p[1]), mix(p[2])])
    })
}

/// Facts of a decoded picture (pure computation: call it inside the isolated child).
pub fn facts_of(format: &str, img: &DynamicImage) -> ImageFacts {
    let rgb = over_white(img);
    ImageFacts {
        format: format.to_string(),
        width: img.width(),
        height: img.height(),
        colour_type: format!("{:?}", img.color()).to_lowercase(),
        phash: phash(&rgb),
        colours: dominant_colours(&rgb),
    }
}

fn phash(rgb: &RgbImage) -> String {
    let hasher = HasherConfig::new()
        .hash_size(16, 16)
        .hash_alg(HashAlg::Mean)
        .to_hasher();
    let h = hasher.hash_image(&DynamicImage::ImageRgb8(rgb.clone()));
    h.as_bytes().iter().map(|b| format!("{b:02x}")).collect()
}

/// Samples of a colour box or cluster, and the sums of their red, green and blue.
type Tally = (u64, [u64; 3]);

fn dominant_colours(rgb: &RgbImage) -> Vec<Colour> {
    let (w, h) = crate::picture::fit(rgb.width(), rgb.height(), COLOUR_SAMPLE_SIDE);
    let sample = if (w, h) == rgb.dimensions() {
        rgb.clone()
    } else {
        image::imageops::resize(rgb, w, h, image::imageops::FilterType::Nearest)
    };
    // Box → (samples, sum of r, g, b).
    let mut boxes: BTreeMap<(u8, u8, u8), Tally> = BTreeMap::new();
    for p in sample.pixels() {
        let [r, g, b] = p.0;
        let e = boxes.entry((r >> 5, g >> 5, b >> 5)).or_insert((0, [0; 3]));
        e.0 += 1;
        e.1[0] += u64::from(r);
        e.1[1] += u64::from(g);
        e.1[2] += u64::from(b);
    }
    let total: u64 = boxes.values().map(|(n, _)| n).sum();
    let mut ordered: Vec<((u8, u8, u8), Tally)> = boxes.into_iter().collect();
    // Largest first; equal counts in box order (the map's order), so the result is total.
    ordered.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.0.cmp(&b.0)));
    let mean = |n: u64, s: &[u64; 3]| -> [f64; 3] {
        [
            s[0] as f64 / n as f64,
            s[1] as f64 / n as f64,
            s[2] as f64 / n as f64,
        ]
    };
    let mut clusters: Vec<Tally> = Vec::new();
    for (_, (n, sum)) in ordered {
        let m = mean(n, &sum);
        match clusters
            .iter_mut()
            .find(|(cn, cs)| rgb_distance(mean(*cn, cs), m) <= MERGE_DISTANCE)
        {
            Some(c) => {
                c.0 += n;
                for (total, add) in c.1.iter_mut().zip(sum) {
                    *total += add;
                }
            }
            None => clusters.push((n, sum)),
        }
    }
    let mut colours: Vec<(u64, String)> = clusters
        .iter()
        .map(|(n, s)| {
            let m = mean(*n, s);
            let hex = format!(
                "#{:02x}{:02x}{:02x}",
                m[0].round() as u8,
                m[1].round() as u8,
                m[2].round() as u8
            );
            (*n, hex)
        })
        .collect();
    colours.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    colours
        .into_iter()
        .take(DOMINANT_COLOURS)
        .map(|(n, hex)| Colour {
            hex,
            share: ((n as f64 / total.max(1) as f64) * 10_000.0).round() / 10_000.0,
        })
        .collect()
}

fn rgb_distance(a: [f64; 3], b: [f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

/// The Hamming distance of two perceptual hashes ([`ImageFacts::phash`]), 0–[`HASH_BITS`].
pub fn distance(a: &str, b: &str) -> Result<u32, String> {
    let digits = (HASH_BITS / 4) as usize;
    let parse = |h: &str| -> Result<Vec<u32>, String> {
        let bad = || format!("`{h}` is not a perceptual hash ({digits} hex digits)");
        if h.len() != digits {
            return Err(bad());
        }
        h.chars().map(|c| c.to_digit(16).ok_or_else(bad)).collect()
    };
    let (a, b) = (parse(a)?, parse(b)?);
    Ok(a.iter().zip(&b).map(|(x, y)| (x ^ y).count_ones()).sum())
}

/// A colour written `#rrggbb`, `rrggbb` or `#rgb`, as RGB.
pub fn parse_colour(s: &str) -> Result<[u8; 3], String> {
    let h = s.trim().trim_start_matches('#');
    let bad = || format!("`{s}` is not a colour; write it #rrggbb, like #d62728");
    if !h.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(bad());
    }
    let digits: Vec<u8> = h
        .chars()
        .map(|c| c.to_digit(16).unwrap_or(0) as u8)
        .collect();
    match digits.as_slice() {
        [r, g, b] => Ok([r * 17, g * 17, b * 17]),
        [r1, r2, g1, g2, b1, b2] => Ok([r1 * 16 + r2, g1 * 16 + g2, b1 * 16 + b2]),
        _ => Err(bad()),
    }
}

/// The distance of two colours (Euclidean in RGB, 0–441.7).
pub fn colour_distance(a: &str, b: &str) -> Result<f64, String> {
    let (a, b) = (parse_colour(a)?, parse_colour(b)?);
    let f = |c: [u8; 3]| [f64::from(c[0]), f64::from(c[1]), f64::from(c[2])];
    Ok(rgb_distance(f(a), f(b)))
}

/// The dominant colour of `facts` nearest to `expected` that covers at least
/// [`MIN_COLOUR_SHARE`] of the picture and lies within `tolerance`, if any.
pub fn colour_match<'a>(
    facts: &'a ImageFacts,
    expected: &str,
    tolerance: f64,
) -> Result<Option<&'a Colour>, String> {
    let mut best: Option<(f64, &Colour)> = None;
    for c in facts.colours.iter().filter(|c| c.share >= MIN_COLOUR_SHARE) {
        let d = colour_distance(expected, &c.hex)?;
        if d <= tolerance && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    Ok(best.map(|(_, c)| c))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Cursor;

    /// A 256×256 white picture with a shape drawn by `inside`, in `colour`, plus noise of
    /// amplitude `noise` from a fixed sequence.
    pub(crate) fn picture(
        colour: [u8; 3],
        inside: impl Fn(u32, u32) -> bool,
        noise: u8,
    ) -> Vec<u8> {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let img = RgbImage::from_fn(256, 256, |x, y| {
            let base = if inside(x, y) {
                colour
            } else {
                [255, 255, 255]
            };
            let mut p = [0u8; 3];
            for i in 0..3 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let n = if noise == 0 {
                    0
                } else {
                    (state % (2 * u64::from(noise) + 1)) as i32 - i32::from(noise)
                };
                p[i] = (i32::from(base[i]) + n).clamp(0, 255) as u8;
            }
            Rgb(p)
        });
        let mut out = Vec::new();
        DynamicImage::ImageRgb8(img)
            .write_to(&mut Cursor::new(&mut out), image::ImageFormat::Png)
            .unwrap();
        out
    }

    fn square(x: u32, y: u32) -> bool {
        (64..192).contains(&x) && (64..192).contains(&y)
    }

    fn circle(x: u32, y: u32) -> bool {
        let (dx, dy) = (x as i32 - 128, y as i32 - 128);
        dx * dx + dy * dy <= 80 * 80
    }

    #[test]
    fn a_noisy_copy_is_near_and_another_picture_is_far() {
        let red = analyze("red.png", &picture([220, 30, 30], square, 0)).unwrap();
        let noisy = analyze("noisy.png", &picture([220, 30, 30], square, 12)).unwrap();
        let blue = analyze("blue.png", &picture([30, 60, 200], circle, 0)).unwrap();
        let near = distance(&red.phash, &noisy.phash).unwrap();
        let far = distance(&red.phash, &blue.phash).unwrap();
        assert!(near <= 4, "noisy copy at {near} bits");
        assert!(far >= 16, "different picture at only {far} bits");
        assert_eq!(
            (red.width, red.height, red.format.as_str()),
            (256, 256, "png")
        );
        assert_eq!(red.colour_type, "rgb8");
        assert_eq!(red.phash.len(), 64);
        // Scaled and re-encoded as JPEG: the same picture.
        let img = image::load_from_memory(&picture([220, 30, 30], square, 0)).unwrap();
        let mut jpeg = Vec::new();
        img.resize_exact(100, 100, image::imageops::FilterType::Triangle)
            .to_rgb8()
            .write_with_encoder(image::codecs::jpeg::JpegEncoder::new_with_quality(
                &mut jpeg, 40,
            ))
            .unwrap();
        let small = analyze("small.jpg", &jpeg).unwrap();
        assert_eq!(small.format, "jpeg");
        assert!(distance(&red.phash, &small.phash).unwrap() <= 4);
    }

    #[test]
    fn dominant_colours_are_the_drawn_ones_with_their_shares() {
        let red = analyze("red.png", &picture([220, 30, 30], square, 0)).unwrap();
        assert_eq!(red.colours[0].hex, "#ffffff");
        assert_eq!(red.colours[1].hex, "#dc1e1e");
        // The square is a quarter of the picture.
        assert!(
            (red.colours[1].share - 0.25).abs() < 0.01,
            "{:?}",
            red.colours
        );
        let noisy = analyze("noisy.png", &picture([220, 30, 30], square, 12)).unwrap();
        assert!(
            colour_match(&noisy, "#dc1e1e", 20.0).unwrap().is_some(),
            "{:?}",
            noisy.colours
        );
        assert!(
            colour_match(&noisy, "#1e3cc8", COLOUR_TOLERANCE)
                .unwrap()
                .is_none()
        );
        let blue = analyze("blue.png", &picture([30, 60, 200], circle, 0)).unwrap();
        assert!(
            colour_match(&blue, "#1e3cc8", 1.0).unwrap().is_some(),
            "{:?}",
            blue.colours
        );
    }

    #[test]
    fn the_same_bytes_give_the_same_facts() {
        let b = picture([10, 200, 90], circle, 20);
        assert_eq!(analyze("a.png", &b).unwrap(), analyze("a.png", &b).unwrap());
    }

    #[test]
    fn transparency_is_seen_over_white() {
        let img = image::RgbaImage::from_fn(64, 64, |x, _| {
            if x < 32 {
                image::Rgba([0, 0, 0, 0])
            } else {
                image::Rgba([0, 0, 255, 255])
            }
        });
        let mut b = Vec::new();
        DynamicImage::ImageRgba8(img)
            .write_to(&mut Cursor::new(&mut b), image::ImageFormat::Png)
            .unwrap();
        let f = analyze("half.png", &b).unwrap();
        assert_eq!(f.colour_type, "rgba8");
        let hexes: Vec<&str> = f.colours.iter().map(|c| c.hex.as_str()).collect();
        assert_eq!(hexes, ["#0000ff", "#ffffff"]);
    }

    #[test]
    fn non_images_and_damaged_images_are_errors_naming_the_file() {
        let e = analyze("notes.png", b"just text").unwrap_err().to_string();
        assert!(e.contains("notes.png") && e.contains("not an image"), "{e}");
        let b = picture([1, 2, 3], square, 0);
        let e = analyze("cut.png", &b[..b.len() / 3])
            .unwrap_err()
            .to_string();
        assert!(e.contains("cut.png"), "{e}");
        let e = analyze("doc.pdf", b"%PDF-1.4\n").unwrap_err().to_string();
        assert!(e.contains("a pdf file, not an image"), "{e}");
    }

    #[test]
    fn the_page_of_a_scanned_pdf_is_analysed_like_its_picture() {
        let png = picture([220, 30, 30], square, 0);
        let pdf = bureau_formats::office::image_to_pdf("scan.png", &png).unwrap();
        let page = pdf_page("scan.pdf", &pdf, 1).unwrap();
        let direct = analyze("scan.png", &png).unwrap();
        assert_eq!((page.width, page.height), (256, 256));
        assert!(distance(&page.phash, &direct.phash).unwrap() <= 2);
        assert_eq!(page.colours[1].hex, direct.colours[1].hex);
        let e = pdf_page("scan.pdf", &pdf, 2).unwrap_err().to_string();
        assert!(e.contains("no page 2"), "{e}");
        let e = pdf_page("scan.png", &png, 1).unwrap_err().to_string();
        assert!(e.contains("not a PDF"), "{e}");
    }

    #[test]
    fn hashes_and_colours_parse_strictly() {
        let zero = "0".repeat(64);
        assert_eq!(distance(&"f".repeat(64), &zero).unwrap(), 256);
        assert_eq!(
            distance(&format!("{}ff", "0".repeat(62)), &zero).unwrap(),
            8
        );
        assert!(distance("xyz", &zero).is_err());
        assert!(distance(&"g".repeat(64), &zero).is_err());
        assert_eq!(parse_colour("#f00").unwrap(), [255, 0, 0]);
        assert_eq!(parse_colour("1F77b4").unwrap(), [31, 119, 180]);
        assert!(parse_colour("#12345").is_err());
        assert!(parse_colour("red").is_err());
        assert_eq!(colour_distance("#000", "#000").unwrap(), 0.0);
    }
}
