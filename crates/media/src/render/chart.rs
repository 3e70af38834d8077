//! Bar and line charts: a title, a y axis with round ticks and its label, one labelled bar or
//! point per value with the value written beside it.

use image::{Rgb, RgbImage};
use imageproc::drawing::{draw_filled_circle_mut, draw_filled_rect_mut};
use imageproc::rect::Rect;

use super::font::{Face, Type};
use super::templates::stroke;
use super::{MAX_POINTS, MAX_WIDTH, MIN_WIDTH, RenderError};

/// Bars or a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChartKind {
    Bar,
    Line,
}

/// A chart of one series.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub kind: ChartKind,
    pub title: String,
    /// One label a value, in order (x axis).
    pub labels: Vec<String>,
    pub values: Vec<f64>,
    pub x_label: String,
    pub y_label: String,
    pub width: u32,
    pub height: u32,
}

impl Chart {
    pub fn new(kind: ChartKind, title: &str, labels: &[&str], values: &[f64]) -> Chart {
        Chart {
            kind,
            title: title.to_string(),
            labels: labels.iter().map(|l| l.to_string()).collect(),
            values: values.to_vec(),
            x_label: String::new(),
            y_label: String::new(),
            width: 1000,
            height: 640,
        }
    }

    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.values.is_empty() {
            out.push("the chart has no values; give `values` (and one label each)".into());
        }
        if self.values.len() > MAX_POINTS {
            out.push(format!(
                "{} values is more than the {MAX_POINTS} a chart can show legibly; aggregate them",
                self.values.len()
            ));
        }
        if self.labels.len() != self.values.len() {
            out.push(format!(
                "{} labels for {} values; give one label a value",
                self.labels.len(),
                self.values.len()
            ));
        }
        if let Some(v) = self
            .values
            .iter()
            .find(|v| !v.is_finite() || v.abs() > 1e15)
        {
            out.push(format!(
                "the value {v} cannot be drawn; give finite values below 1e15"
            ));
        }
        if !(MIN_WIDTH..=MAX_WIDTH).contains(&self.width)
            || !(MIN_WIDTH..=MAX_WIDTH).contains(&self.height)
        {
            out.push(format!(
                "the chart is {}×{} pixels; width and height must be within {MIN_WIDTH}..={MAX_WIDTH}",
                self.width, self.height
            ));
        }
        for t in [&self.title, &self.x_label, &self.y_label]
            .into_iter()
            .chain(&self.labels)
        {
            if t.chars().count() > 200 || t.chars().any(char::is_control) {
                out.push(format!(
                    "the text {:?} is too long (over 200 characters) or holds a control character",
                    t.chars().take(40).collect::<String>()
                ));
            }
        }
        out
    }
}

/// A value as written on the chart: whole numbers without decimals, others with up to two.
pub fn format_value(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{}", v.round() as i64)
    } else {
        let s = format!("{v:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// A round tick step for a range: 1, 2 or 5 times a power of ten, about 5 ticks.
fn tick_step(span: f64) -> f64 {
    let raw = (span / 5.0).max(f64::MIN_POSITIVE);
    let mag = 10f64.powf(raw.log10().floor());
    let n = raw / mag;
    let m = if n <= 1.0 {
        1.0
    } else if n <= 2.0 {
        2.0
    } else if n <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

const PALETTE: [Rgb<u8>; 6] = [
    Rgb([52, 101, 164]),
    Rgb([230, 126, 34]),
    Rgb([46, 139, 87]),
    Rgb([192, 57, 43]),
    Rgb([142, 68, 173]),
    Rgb([22, 160, 133]),
];

/// Draw the chart (no randomness: the same chart gives the same pixels).
pub fn render_chart(c: &Chart) -> Result<RgbImage, RenderError> {
    let problems = c.problems();
    if !problems.is_empty() {
        return Err(RenderError::Input(problems.join("; ")));
    }
    let (w, h) = (c.width, c.height);
    let base = (w.min(h) as f32 / 40.0).max(10.0);
    let title_t = Type::new(Face::Bold, base * 1.5)?;
    let text = Type::new(Face::Sans, base)?;
    let small = Type::new(Face::Sans, base * 0.9)?;
    let value_t = Type::new(Face::Bold, base * 1.2)?;
    let ink = Rgb([34, 34, 40]);
    let grid = Rgb([225, 227, 232]);
    let mut img = RgbImage::from_pixel(w, h, Rgb([255, 255, 255]));

    let lo = c.values.iter().copied().fold(0.0f64, f64::min);
    let hi = c.values.iter().copied().fold(0.0f64, f64::max);
    let step = tick_step(if hi > lo { hi - lo } else { 1.0 });
    let (y_min, y_max) = (
        (lo / step).floor() * step,
        ((hi / step).ceil() * step).max(step),
    );
    let ticks: Vec<f64> = {
        let n = ((y_max - y_min) / step).round() as i64;
        (0..=n).map(|i| y_min + i as f64 * step).collect()
    };
    let tick_w = ticks
        .iter()
        .map(|t| small.width(&format_value(*t)))
        .max()
        .unwrap_or(0);
    let pad = (w / 40) as i32;
    let title_rows = if c.title.is_empty() {
        Vec::new()
    } else {
        title_t.wrap(&c.title, w - 2 * pad as u32)
    };
    let mut top = pad;
    for t in &title_rows {
        title_t.draw_centred(&mut img, (w / 2) as i32, top, ink, t);
        top += title_t.line_height() as i32;
    }
    if !c.y_label.is_empty() {
        small.draw(&mut img, pad, top + 4, ink, &c.y_label);
        top += small.line_height() as i32 + 4;
    }
    top += (base * 1.2 * 1.3) as i32; // room for the values above the bars
    let left = pad + tick_w as i32 + 10;
    let right = w as i32 - pad;
    let x_label_h = if c.x_label.is_empty() {
        0
    } else {
        text.line_height() as i32 + 6
    };
    let bottom = h as i32 - pad - x_label_h - text.line_height() as i32 - 8;
    if bottom - top < 40 || right - left < 40 {
        return Err(RenderError::Input(format!(
            "a {w}×{h} chart leaves no room for its plot; make it larger or the title shorter"
        )));
    }
    let y_of = |v: f64| -> f32 {
        bottom as f32 - ((v - y_min) / (y_max - y_min)) as f32 * (bottom - top) as f32
    };
    for t in &ticks {
        let y = y_of(*t);
        stroke(&mut img, (left as f32, y), (right as f32, y), 0.5, grid);
        let label = format_value(*t);
        small.draw(
            &mut img,
            left - 8 - small.width(&label) as i32,
            y as i32 - small.line_height() as i32 / 2,
            ink,
            &label,
        );
    }
    stroke(
        &mut img,
        (left as f32, top as f32),
        (left as f32, bottom as f32),
        1.0,
        ink,
    );
    let zero = y_of(0.0);
    stroke(
        &mut img,
        (left as f32, zero),
        (right as f32, zero),
        1.0,
        ink,
    );
    let n = c.values.len();
    let slot = (right - left) as f32 / n as f32;
    let mut prev: Option<(f32, f32)> = None;
    for (i, (v, label)) in c.values.iter().zip(&c.labels).enumerate() {
        let cx = left as f32 + slot * (i as f32 + 0.5);
        let y = y_of(*v);
        let value = format_value(*v);
        match c.kind {
            ChartKind::Bar => {
                let bw = (slot * 0.6).max(2.0);
                let (y0, y1) = if y < zero { (y, zero) } else { (zero, y) };
                let rect = Rect::at((cx - bw / 2.0) as i32, y0 as i32)
                    .of_size(bw as u32, ((y1 - y0) as u32).max(1));
                draw_filled_rect_mut(&mut img, rect, PALETTE[i % PALETTE.len()]);
            }
            ChartKind::Line => {
                if let Some(p) = prev {
                    stroke(&mut img, p, (cx, y), 1.5, PALETTE[0]);
                }
                prev = Some((cx, y));
            }
        }
        let vy = if *v >= 0.0 {
            y as i32 - value_t.line_height() as i32 - 2
        } else {
            y as i32 + 4
        };
        value_t.draw_centred(&mut img, cx as i32, vy, ink, &value);
        let shown = fit(&small, label, slot as u32);
        small.draw_centred(&mut img, cx as i32, bottom + 8, ink, &shown);
    }
    if c.kind == ChartKind::Line {
        for (i, v) in c.values.iter().enumerate() {
            let cx = left as f32 + slot * (i as f32 + 0.5);
            draw_filled_circle_mut(
                &mut img,
                (cx as i32, y_of(*v) as i32),
                (base * 0.35) as i32,
                PALETTE[0],
            );
        }
    }
    if !c.x_label.is_empty() {
        text.draw_centred(
            &mut img,
            (left + right) / 2,
            h as i32 - pad - text.line_height() as i32,
            ink,
            &c.x_label,
        );
    }
    Ok(img)
}

/// `label` cut with an ellipsis to fit `max` pixels.
fn fit(t: &Type, label: &str, max: u32) -> String {
    if t.width(label) <= max {
        return label.to_string();
    }
    let mut s: String = label.to_string();
    while !s.is_empty() && t.width(&format!("{s}…")) > max {
        s.pop();
    }
    format!("{s}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_written_plainly() {
        assert_eq!(format_value(120.0), "120");
        assert_eq!(format_value(31.5), "31.5");
        assert_eq!(format_value(-2.25), "-2.25");
        assert_eq!(format_value(0.1 + 0.2), "0.3");
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!(tick_step(120.0), 50.0);
        assert_eq!(tick_step(7.0), 2.0);
        assert_eq!(tick_step(0.9), 0.2);
    }

    #[test]
    fn a_chart_is_drawn_the_same_twice_and_bad_ones_are_refused() {
        let mut c = Chart::new(
            ChartKind::Bar,
            "Q3 revenue (kEUR)",
            &["North", "South", "East"],
            &[120.0, 95.0, -10.0],
        );
        c.y_label = "kEUR".into();
        let a = render_chart(&c).unwrap();
        assert_eq!(a, render_chart(&c).unwrap());
        assert_eq!(a.dimensions(), (1000, 640));
        // The first bar's colour is on the canvas.
        assert!(a.pixels().any(|p| *p == PALETTE[0]));
        c.kind = ChartKind::Line;
        assert_ne!(render_chart(&c).unwrap(), a);
        c.values.pop();
        let e = render_chart(&c).unwrap_err().to_string();
        assert!(
            e.contains("2 values") || e.contains("3 labels for 2 values"),
            "{e}"
        );
        c.values = vec![f64::NAN; 3];
        assert!(render_chart(&c).unwrap_err().to_string().contains("finite"));
    }
}
