//! Images: .png, .jpg, .gif (plain bar pictures of a table), .svg charts.

use super::*;

/// Numbers to chart: the last numeric column of the table (at most 12 bars).
pub(super) fn series(t: &Table) -> Vec<(String, f64)> {
    let col = t.header.len().saturating_sub(1);
    let col = (0..t.header.len())
        .rev()
        .find(|i| {
            t.rows
                .iter()
                .any(|r| matches!(r.get(*i), Some(Val::Num(_))))
        })
        .unwrap_or(col);
    t.rows
        .iter()
        .take(12)
        .map(|r| {
            let label = r.first().map(Val::show).unwrap_or_default();
            let v = match r.get(col) {
                Some(Val::Num(n)) => *n,
                _ => 0.0,
            };
            (label, v)
        })
        .collect()
}

/// A bar chart of the table as pixels (RGB, `w`×`h`).
pub(super) fn bars(t: &Table, w: usize, h: usize, rng: &mut Rng) -> Vec<u8> {
    let s = series(t);
    let max = s.iter().map(|x| x.1).fold(1.0f64, f64::max);
    let mut px = vec![255u8; w * h * 3];
    let n = s.len().max(1);
    let slot = (w - 20) / n;
    let hue = [
        (31u8, 119u8, 180u8),
        (255, 127, 14),
        (44, 160, 44),
        (214, 39, 40),
        (148, 103, 189),
    ][rng.below(5)];
    for (i, (_, v)) in s.iter().enumerate() {
        let bh = ((v.max(0.0) / max) * (h as f64 - 30.0)) as usize;
        let x0 = 10 + i * slot + slot / 6;
        let x1 = 10 + (i + 1) * slot - slot / 6;
        for y in (h - 10 - bh)..(h - 10) {
            for x in x0..x1.min(w) {
                let o = (y * w + x) * 3;
                px[o] = hue.0;
                px[o + 1] = hue.1;
                px[o + 2] = hue.2;
            }
        }
    }
    // Axis.
    for x in 10..w - 10 {
        let o = ((h - 10) * w + x) * 3;
        px[o..o + 3].copy_from_slice(&[40, 40, 40]);
    }
    px
}

pub(crate) fn image(id: &str, t: &Table, f: &FileCtx, rng: &mut Rng) -> Result<Vec<u8>, GenError> {
    let (w, h) = (240usize, 160usize);
    Ok(match id {
        "png" => {
            let px = bars(t, w, h, rng);
            let mut out = Vec::new();
            {
                let mut enc = png::Encoder::new(&mut out, w as u32, h as u32);
                enc.set_color(png::ColorType::Rgb);
                enc.set_depth(png::BitDepth::Eight);
                let mut wr = enc.write_header().map_err(|e| fail(f.path, e))?;
                wr.write_image_data(&px).map_err(|e| fail(f.path, e))?;
                wr.finish().map_err(|e| fail(f.path, e))?;
            }
            out
        }
        "jpg" => {
            // A "photo": a soft gradient with grain.
            let (w, h) = (192usize, 128usize);
            let (r0, g0, b0) = (
                rng.below(120) as u8,
                rng.below(120) as u8,
                rng.below(120) as u8,
            );
            let mut px = Vec::with_capacity(w * h * 3);
            for y in 0..h {
                for x in 0..w {
                    let grain = (rng.u64() % 24) as u8;
                    px.push(r0.saturating_add((x * 100 / w) as u8).saturating_add(grain));
                    px.push(g0.saturating_add((y * 100 / h) as u8).saturating_add(grain));
                    px.push(b0.saturating_add(((x + y) * 60 / (w + h)) as u8));
                }
            }
            let mut out = Vec::new();
            let enc = jpeg_encoder::Encoder::new(&mut out, 85);
            enc.encode(&px, w as u16, h as u16, jpeg_encoder::ColorType::Rgb)
                .map_err(|e| fail(f.path, e))?;
            out
        }
        "gif" => {
            let px = bars(t, w, h, rng);
            // Map to a 4-colour palette: white, dark grey, bar colour, light grey.
            let bar = px
                .chunks(3)
                .find(|p| p != &[255, 255, 255] && p != &[40, 40, 40])
                .map_or([31u8, 119, 180], |p| [p[0], p[1], p[2]]);
            let palette = [
                255u8, 255, 255, 40, 40, 40, bar[0], bar[1], bar[2], 200, 200, 200,
            ];
            let idx: Vec<u8> = px
                .chunks(3)
                .map(|p| match p {
                    [255, 255, 255] => 0,
                    [40, 40, 40] => 1,
                    _ => 2,
                })
                .collect();
            let mut out = Vec::new();
            {
                let mut enc = gif::Encoder::new(&mut out, w as u16, h as u16, &palette)
                    .map_err(|e| fail(f.path, e))?;
                let frame = gif::Frame {
                    width: w as u16,
                    height: h as u16,
                    buffer: std::borrow::Cow::Borrowed(&idx),
                    ..gif::Frame::default()
                };
                enc.write_frame(&frame).map_err(|e| fail(f.path, e))?;
            }
            out
        }
        "svg" => svg(t).into_bytes(),
        other => return Err(fail(f.path, format!("no image writer for {other}"))),
    })
}

/// An SVG bar chart with labels and values as text (readable by agents).
pub(crate) fn svg(t: &Table) -> String {
    let s = series(t);
    let max = s.iter().map(|x| x.1).fold(1.0f64, f64::max);
    let (w, h) = (480.0, 300.0);
    let slot = (w - 40.0) / s.len().max(1) as f64;
    let mut o = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\">\n  <title>{}</title>\n  <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
        xml_escape(&t.name)
    );
    for (i, (label, v)) in s.iter().enumerate() {
        let bh = v.max(0.0) / max * (h - 80.0);
        let x = 20.0 + i as f64 * slot + slot * 0.15;
        o.push_str(&format!(
            "  <rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{bh:.1}\" fill=\"#1f77b4\"/>\n  <text x=\"{x:.1}\" y=\"{:.1}\" font-size=\"10\">{}</text>\n  <text x=\"{x:.1}\" y=\"{:.1}\" font-size=\"10\">{}</text>\n",
            h - 40.0 - bh,
            slot * 0.7,
            h - 25.0,
            xml_escape(label),
            h - 45.0 - bh,
            xml_escape(&thousands(v.round() as i64)),
        ));
    }
    o.push_str("</svg>\n");
    o
}
