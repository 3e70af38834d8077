//! The embedded fonts (DejaVu Sans, Sans Bold and Sans Mono; licence in
//! `crates/media/fonts/LICENSE-DejaVu.txt`) and text drawing on an RGB canvas: measuring,
//! wrapping to a width, and a marker-like thick stroke.

use std::sync::OnceLock;

use ab_glyph::{Font as _, FontRef, PxScale, ScaleFont as _};
use image::{Rgb, RgbImage};

use super::RenderError;

static SANS: &[u8] = include_bytes!("../../fonts/DejaVuSans.ttf");
static SANS_BOLD: &[u8] = include_bytes!("../../fonts/DejaVuSans-Bold.ttf");
static MONO: &[u8] = include_bytes!("../../fonts/DejaVuSansMono.ttf");

/// Which embedded font.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Face {
    Sans,
    Bold,
    Mono,
}

struct Fonts {
    sans: FontRef<'static>,
    bold: FontRef<'static>,
    mono: FontRef<'static>,
}

static FONTS: OnceLock<Option<Fonts>> = OnceLock::new();

fn fonts() -> Result<&'static Fonts, RenderError> {
    FONTS
        .get_or_init(|| {
            Some(Fonts {
                sans: FontRef::try_from_slice(SANS).ok()?,
                bold: FontRef::try_from_slice(SANS_BOLD).ok()?,
                mono: FontRef::try_from_slice(MONO).ok()?,
            })
        })
        .as_ref()
        .ok_or_else(|| RenderError::Internal("an embedded font does not parse".into()))
}

/// A font at a size, ready to measure and draw.
#[derive(Clone, Copy)]
pub struct Type {
    font: &'static FontRef<'static>,
    pub px: f32,
}

impl Type {
    pub fn new(face: Face, px: f32) -> Result<Type, RenderError> {
        let f = fonts()?;
        let font = match face {
            Face::Sans => &f.sans,
            Face::Bold => &f.bold,
            Face::Mono => &f.mono,
        };
        Ok(Type {
            font,
            px: px.max(4.0),
        })
    }

    /// Width of `text` in pixels.
    pub fn width(&self, text: &str) -> u32 {
        imageproc::drawing::text_size(PxScale::from(self.px), self.font, text).0
    }

    /// Distance between baselines.
    pub fn line_height(&self) -> u32 {
        let s = self.font.as_scaled(PxScale::from(self.px));
        (s.height() + s.line_gap()).ceil().max(1.0) as u32
    }

    /// Width of one character cell of a monospaced font (the advance of `0`).
    pub fn advance(&self) -> f32 {
        let s = self.font.as_scaled(PxScale::from(self.px));
        s.h_advance(self.font.glyph_id('0'))
    }

    /// Draw `text` with its top-left at (x, y).
    pub fn draw(&self, img: &mut RgbImage, x: i32, y: i32, color: Rgb<u8>, text: &str) {
        imageproc::drawing::draw_text_mut(
            img,
            color,
            x,
            y,
            PxScale::from(self.px),
            self.font,
            text,
        );
    }

    /// Draw `text` thickened by `weight` pixels (a felt-tip marker's stroke).
    pub fn draw_thick(
        &self,
        img: &mut RgbImage,
        x: i32,
        y: i32,
        color: Rgb<u8>,
        text: &str,
        weight: i32,
    ) {
        for dx in 0..=weight.max(0) {
            for dy in 0..=(weight.max(0) / 2) {
                self.draw(img, x + dx, y + dy, color, text);
            }
        }
    }

    /// Draw `text` centred on `cx`.
    pub fn draw_centred(&self, img: &mut RgbImage, cx: i32, y: i32, color: Rgb<u8>, text: &str) {
        let w = self.width(text) as i32;
        self.draw(img, cx - w / 2, y, color, text);
    }

    /// `text` broken into lines no wider than `max` pixels: at spaces where it can be, inside a
    /// word only when the word alone is too wide. Empty text is one empty line.
    pub fn wrap(&self, text: &str, max: u32) -> Vec<String> {
        let mut out = Vec::new();
        let mut line = String::new();
        for word in text.split(' ') {
            let candidate = if line.is_empty() {
                word.to_string()
            } else {
                format!("{line} {word}")
            };
            if self.width(&candidate) <= max {
                line = candidate;
                continue;
            }
            if !line.is_empty() {
                out.push(std::mem::take(&mut line));
            }
            // The word alone: cut it where it passes the width.
            let mut piece = String::new();
            for c in word.chars() {
                piece.push(c);
                if self.width(&piece) > max && piece.chars().count() > 1 {
                    piece.pop();
                    out.push(std::mem::take(&mut piece));
                    piece.push(c);
                }
            }
            line = piece;
        }
        out.push(line);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_fonts_parse_and_measure() {
        let mono = Type::new(Face::Mono, 20.0).unwrap();
        // Monospaced: every character the same advance.
        assert_eq!(mono.width("iiii"), mono.width("WWWW"));
        let sans = Type::new(Face::Sans, 20.0).unwrap();
        assert!(sans.width("WWWW") > sans.width("iiii"));
        assert!(sans.line_height() >= 20);
    }

    #[test]
    fn wrapping_keeps_every_word_and_respects_the_width() {
        let t = Type::new(Face::Sans, 16.0).unwrap();
        let text = "The effective date of this agreement is 1 March 2026 and it runs for two years";
        let lines = t.wrap(text, 200);
        assert!(lines.len() > 1);
        assert!(lines.iter().all(|l| t.width(l) <= 200), "{lines:?}");
        assert_eq!(lines.join(" "), text);
        // A word wider than the line is cut, not lost.
        let long = "x".repeat(80);
        let cut = t.wrap(&long, 100);
        assert_eq!(cut.concat(), long);
        assert_eq!(t.wrap("", 100), vec![String::new()]);
    }
}
