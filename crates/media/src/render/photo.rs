//! A flat picture photographed: turned, seen slightly askew, lit unevenly, out of focus and
//! grainy — each by an amount the author gives, every random choice from the picture's stream.

use image::{DynamicImage, Rgb, RgbImage};
use imageproc::geometric_transformations::{Border, Interpolation, Projection, warp_into};

use super::{MAX_BLUR, MAX_ROTATE, RenderError, Rng};

/// How a picture is photographed. All zero (the default) leaves it flat.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Photo {
    /// Degrees, clockwise (negative: anticlockwise); at most [`MAX_ROTATE`] either way.
    pub rotate: f32,
    /// Gaussian blur sigma in pixels (0.5–1.5 is a phone photo); at most [`MAX_BLUR`].
    pub blur: f32,
    /// Sensor noise, 0 to 1 (0.05 is visible grain).
    pub noise: f32,
    /// Perspective: 0 (head-on) to 1 (a strong angle); each corner moves by up to
    /// `perspective × 8 %` of the short side.
    pub perspective: f32,
    /// Lighting gradient: 0 (even) to 1 (one side a third darker).
    pub lighting: f32,
}

impl Photo {
    pub fn is_flat(&self) -> bool {
        *self == Photo::default()
    }

    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut bad = |what: &str, v: f32, lo: f32, hi: f32, hint: &str| {
            if !v.is_finite() || v < lo || v > hi {
                out.push(format!("{what} = {v} is outside {lo}..={hi}; {hint}"));
            }
        };
        bad(
            "rotate",
            self.rotate,
            -MAX_ROTATE,
            MAX_ROTATE,
            "a photo is turned by a few degrees",
        );
        bad(
            "blur",
            self.blur,
            0.0,
            MAX_BLUR,
            "a sigma of 0.5 to 1.5 looks like a phone photo",
        );
        bad("noise", self.noise, 0.0, 1.0, "0.05 is visible grain");
        bad(
            "perspective",
            self.perspective,
            0.0,
            1.0,
            "0.2 is a slight angle",
        );
        bad(
            "lighting",
            self.lighting,
            0.0,
            1.0,
            "0.3 is a soft shadow across the picture",
        );
        out
    }
}

/// How a picture is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// JPEG at a quality of 1 to 100.
    Jpeg(u8),
    Png,
}

impl Encoding {
    /// By the output's extension: `.jpg`/`.jpeg` (at `quality`) or `.png`.
    pub fn for_path(path: &str, quality: u8) -> Option<Encoding> {
        let lower = path.to_ascii_lowercase();
        if lower.ends_with(".jpg") || lower.ends_with(".jpeg") {
            Some(Encoding::Jpeg(quality))
        } else if lower.ends_with(".png") {
            Some(Encoding::Png)
        } else {
            None
        }
    }
}

/// Encode an image; the same pixels always give the same bytes.
pub fn encode(img: &DynamicImage, encoding: Encoding) -> Result<Vec<u8>, RenderError> {
    let mut out = Vec::new();
    let r = match encoding {
        Encoding::Jpeg(q) => img.write_with_encoder(
            image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, q.clamp(1, 100)),
        ),
        Encoding::Png => img.write_with_encoder(image::codecs::png::PngEncoder::new_with_quality(
            &mut out,
            image::codecs::png::CompressionType::Default,
            image::codecs::png::FilterType::Adaptive,
        )),
    };
    r.map_err(|e| RenderError::Internal(format!("encoding failed: {e}")))?;
    Ok(out)
}

/// Photograph `page` lying on `surround`.
pub(super) fn photograph(page: RgbImage, surround: Rgb<u8>, p: &Photo, rng: &mut Rng) -> RgbImage {
    // Every draw happens whatever the amounts, so changing one amount leaves the others'
    // randomness as it was.
    let jitter: [(f32, f32); 4] =
        std::array::from_fn(|_| (rng.range(-1.0, 1.0), rng.range(-1.0, 1.0)));
    let light_angle = rng.range(0.0, std::f32::consts::TAU);
    let noise_seed = rng.u64();

    let mut img = if p.rotate != 0.0 || p.perspective > 0.0 {
        tilt(&page, surround, p, &jitter)
    } else {
        page
    };
    if p.lighting > 0.0 {
        light(&mut img, p.lighting, light_angle);
    }
    if p.blur > 0.0 {
        img = imageproc::filter::gaussian_blur_f32(&img, p.blur);
    }
    if p.noise > 0.0 {
        grain(&mut img, p.noise, noise_seed);
    }
    img
}

/// Turn and skew the page onto a canvas of the surround, with a margin.
fn tilt(page: &RgbImage, surround: Rgb<u8>, p: &Photo, jitter: &[(f32, f32); 4]) -> RgbImage {
    let (w, h) = (page.width() as f32, page.height() as f32);
    let (cx, cy) = (w / 2.0, h / 2.0);
    let (s, c) = p.rotate.to_radians().sin_cos();
    let skew = p.perspective * 0.08 * w.min(h);
    let from = [(0.0, 0.0), (w, 0.0), (w, h), (0.0, h)];
    let mut to = from.map(|(x, y)| {
        let (dx, dy) = (x - cx, y - cy);
        (cx + dx * c - dy * s, cy + dx * s + dy * c)
    });
    for (t, j) in to.iter_mut().zip(jitter) {
        t.0 += j.0 * skew;
        t.1 += j.1 * skew;
    }
    let min_x = to.iter().map(|t| t.0).fold(f32::MAX, f32::min);
    let max_x = to.iter().map(|t| t.0).fold(f32::MIN, f32::max);
    let min_y = to.iter().map(|t| t.1).fold(f32::MAX, f32::min);
    let max_y = to.iter().map(|t| t.1).fold(f32::MIN, f32::max);
    let margin = (0.03 * w.max(h)).round();
    for t in to.iter_mut() {
        t.0 += margin - min_x;
        t.1 += margin - min_y;
    }
    let out_w = (max_x - min_x + 2.0 * margin).ceil().max(1.0) as u32;
    let out_h = (max_y - min_y + 2.0 * margin).ceil().max(1.0) as u32;
    let mut out = RgbImage::from_pixel(out_w, out_h, surround);
    match Projection::from_control_points(from, to) {
        Some(proj) => warp_into(
            page,
            proj,
            Interpolation::Bilinear,
            Border::Constant(surround),
            &mut out,
        ),
        // Degenerate corners (cannot happen within the limits): the page as it is.
        None => return page.clone(),
    }
    out
}

/// Darken towards one side, along `angle`.
fn light(img: &mut RgbImage, amount: f32, angle: f32) {
    let (w, h) = (img.width() as f32, img.height() as f32);
    let (dx, dy) = (angle.cos(), angle.sin());
    // Projections of the corners onto the direction give the range to normalise.
    let proj = [(0.0, 0.0), (w, 0.0), (0.0, h), (w, h)].map(|(x, y)| x * dx + y * dy);
    let lo = proj.iter().copied().fold(f32::MAX, f32::min);
    let hi = proj.iter().copied().fold(f32::MIN, f32::max);
    let span = (hi - lo).max(1.0);
    for (x, y, px) in img.enumerate_pixels_mut() {
        let t = ((x as f32 * dx + y as f32 * dy) - lo) / span;
        let f = 1.0 - amount * 0.35 * t;
        for ch in px.0.iter_mut() {
            *ch = (f32::from(*ch) * f).round().clamp(0.0, 255.0) as u8;
        }
    }
}

/// Add grain: a triangular-distributed offset per channel, ± `amount` × 96 at most.
fn grain(img: &mut RgbImage, amount: f32, seed: u64) {
    let mut rng = Rng::new(seed, "grain");
    let scale = amount * 96.0 / 255.0;
    for px in img.pixels_mut() {
        let r = rng.u64().to_le_bytes();
        for (i, ch) in px.0.iter_mut().enumerate() {
            let tri = f32::from(r[2 * i]) + f32::from(r[2 * i + 1]) - 255.0;
            *ch = (f32::from(*ch) + tri * scale).round().clamp(0.0, 255.0) as u8;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page() -> RgbImage {
        RgbImage::from_fn(
            120,
            80,
            |x, _| if x < 60 { Rgb([255; 3]) } else { Rgb([0; 3]) },
        )
    }

    #[test]
    fn a_flat_photo_changes_nothing() {
        let out = photograph(
            page(),
            Rgb([9, 9, 9]),
            &Photo::default(),
            &mut Rng::new(1, "a"),
        );
        assert_eq!(out, page());
    }

    #[test]
    fn turning_adds_a_margin_of_the_surround() {
        let p = Photo {
            rotate: 10.0,
            ..Photo::default()
        };
        let out = photograph(page(), Rgb([1, 2, 3]), &p, &mut Rng::new(1, "a"));
        assert!(out.width() > 120 && out.height() > 80);
        assert_eq!(out.get_pixel(0, 0), &Rgb([1, 2, 3]));
    }

    #[test]
    fn the_same_seed_and_key_give_the_same_pixels_and_another_key_other_grain() {
        let p = Photo {
            rotate: 3.0,
            blur: 0.8,
            noise: 0.1,
            perspective: 0.3,
            lighting: 0.4,
        };
        let a = photograph(page(), Rgb([80; 3]), &p, &mut Rng::new(7, "x.jpg"));
        let b = photograph(page(), Rgb([80; 3]), &p, &mut Rng::new(7, "x.jpg"));
        let c = photograph(page(), Rgb([80; 3]), &p, &mut Rng::new(7, "y.jpg"));
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn out_of_range_amounts_are_named() {
        let p = Photo {
            rotate: 90.0,
            noise: -1.0,
            blur: f32::NAN,
            ..Photo::default()
        };
        let all = p.problems().join("\n");
        assert!(all.contains("rotate = 90"), "{all}");
        assert!(all.contains("noise = -1"), "{all}");
        assert!(all.contains("blur = NaN"), "{all}");
    }

    #[test]
    fn encodings_follow_the_extension() {
        assert_eq!(Encoding::for_path("a/B.JPG", 80), Some(Encoding::Jpeg(80)));
        assert_eq!(Encoding::for_path("a.png", 80), Some(Encoding::Png));
        assert_eq!(Encoding::for_path("a.gif", 80), None);
        let img = DynamicImage::ImageRgb8(page());
        let j = encode(&img, Encoding::Jpeg(70)).unwrap();
        assert!(j.starts_with(&[0xFF, 0xD8, 0xFF]));
        assert_eq!(j, encode(&img, Encoding::Jpeg(70)).unwrap());
        assert!(encode(&img, Encoding::Png).unwrap().starts_with(b"\x89PNG"));
    }
}
