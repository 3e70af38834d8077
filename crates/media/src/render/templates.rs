//! The six templates: each draws a flat page and says what it lies on (the surround a
//! photo's margin shows).

use image::{Rgb, RgbImage};
use imageproc::drawing::{draw_filled_circle_mut, draw_filled_rect_mut, draw_polygon_mut};
use imageproc::point::Point;
use imageproc::rect::Rect;

use super::font::{Face, Type};
use super::{MAX_PIXELS, Picture, RenderError, Rng, Template};

const DESK: Rgb<u8> = Rgb([122, 104, 86]);
const WALL: Rgb<u8> = Rgb([203, 199, 190]);
const BEZEL: Rgb<u8> = Rgb([24, 24, 28]);
const SCANNER_LID: Rgb<u8> = Rgb([236, 236, 234]);

pub(super) fn draw(p: &Picture, rng: &mut Rng) -> Result<(RgbImage, Rgb<u8>), RenderError> {
    let width = p.width.unwrap_or_else(|| p.template.default_width());
    match p.template {
        Template::Receipt => Ok((receipt(p, width)?, DESK)),
        Template::Whiteboard => Ok((whiteboard(p, width, rng)?, WALL)),
        Template::Label => Ok((label(p, width)?, DESK)),
        Template::Note => Ok((note(p, width, rng)?, DESK)),
        Template::Screenshot => Ok((screenshot(p, width, rng)?, BEZEL)),
        Template::Document => Ok((document(p, width, rng)?, SCANNER_LID)),
    }
}

/// A canvas, refused when it would pass [`MAX_PIXELS`].
fn canvas(w: u32, h: u32, bg: Rgb<u8>, what: &str) -> Result<RgbImage, RenderError> {
    if u64::from(w) * u64::from(h) > MAX_PIXELS {
        return Err(RenderError::Input(format!(
            "the {what} would be {w}×{h} pixels, more than {MAX_PIXELS}; give it fewer lines or a smaller width"
        )));
    }
    Ok(RgbImage::from_pixel(w.max(1), h.max(1), bg))
}

fn px(v: f32) -> i32 {
    v.round() as i32
}

/// A round brush dragged from `a` to `b` (a marker or pen stroke).
pub(super) fn stroke(
    img: &mut RgbImage,
    a: (f32, f32),
    b: (f32, f32),
    radius: f32,
    color: Rgb<u8>,
) {
    let len = ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
    let steps = (len / (radius * 0.5).max(0.5)).ceil().max(1.0) as usize;
    for i in 0..=steps {
        let t = i as f32 / steps as f32;
        let (x, y) = (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t);
        if radius < 1.0 {
            if x >= 0.0 && y >= 0.0 && (x as u32) < img.width() && (y as u32) < img.height() {
                img.put_pixel(x as u32, y as u32, color);
            }
        } else {
            draw_filled_circle_mut(img, (px(x), px(y)), px(radius), color);
        }
    }
}

/// A hand-drawn rectangle: four strokes whose ends wander a little.
fn wobbly_rect(
    img: &mut RgbImage,
    r: (f32, f32, f32, f32),
    radius: f32,
    color: Rgb<u8>,
    rng: &mut Rng,
) {
    let (x0, y0, x1, y1) = r;
    let mut j = || rng.range(-4.0, 4.0);
    let corners = [
        (x0 + j(), y0 + j()),
        (x1 + j(), y0 + j()),
        (x1 + j(), y1 + j()),
        (x0 + j(), y1 + j()),
    ];
    for i in 0..4 {
        stroke(img, corners[i], corners[(i + 1) % 4], radius, color);
    }
}

/// A stroke with an arrowhead at `b`.
fn arrow(img: &mut RgbImage, a: (f32, f32), b: (f32, f32), radius: f32, color: Rgb<u8>) {
    stroke(img, a, b, radius, color);
    let ang = (b.1 - a.1).atan2(b.0 - a.0);
    let head = radius * 7.0;
    for side in [-0.5f32, 0.5] {
        let t = ang + std::f32::consts::PI + side;
        stroke(
            img,
            b,
            (b.0 + head * t.cos(), b.1 + head * t.sin()),
            radius,
            color,
        );
    }
}

// ---------------------------------------------------------------- receipt

fn receipt(p: &Picture, w: u32) -> Result<RgbImage, RenderError> {
    let margin = (w / 16).max(8);
    let inner = w - 2 * margin;
    // 32 columns of the monospaced font across the paper, like a 58 mm till roll.
    let probe = Type::new(Face::Mono, 100.0)?;
    let mono = Type::new(Face::Mono, 100.0 * inner as f32 / (32.0 * probe.advance()))?;
    let bold = Type::new(Face::Bold, mono.px * 1.25)?;
    let lh = mono.line_height();
    let cols = ((inner as f32 / mono.advance()).floor() as usize).max(8);
    let title: Vec<String> = if p.title.trim().is_empty() {
        Vec::new()
    } else {
        bold.wrap(p.title.trim(), inner)
    };
    // Lines as written (the font is monospaced: spaces line amounts up), wrapped to the
    // paper; a line starting with TOTAL is bold.
    let mut rows: Vec<(String, bool)> = Vec::new();
    for line in &p.lines {
        let strong = line.trim_start().to_ascii_uppercase().starts_with("TOTAL");
        for piece in mono.wrap(line, inner) {
            rows.push((piece, strong));
        }
    }
    let rule = "-".repeat(cols);
    let zigzag = (margin / 2).max(6);
    // A till roll is long: at least a little taller than wide.
    let h = (margin
        + title.len() as u32 * bold.line_height()
        + lh / 2
        + 2 * lh
        + rows.len() as u32 * lh
        + margin
        + zigzag)
        .max(w * 9 / 8);
    let paper = Rgb([250, 248, 241]);
    let ink = Rgb([38, 38, 44]);
    let mut img = canvas(w, h, paper, "receipt")?;
    let mut y = margin as i32;
    for t in &title {
        bold.draw_centred(&mut img, (w / 2) as i32, y, ink, t);
        y += bold.line_height() as i32;
    }
    y += (lh / 2) as i32;
    mono.draw(&mut img, margin as i32, y, ink, &rule);
    y += lh as i32;
    for (row, strong) in &rows {
        mono.draw_thick(&mut img, margin as i32, y, ink, row, i32::from(*strong));
        y += lh as i32;
    }
    mono.draw(&mut img, margin as i32, y, ink, &rule);
    // A torn edge at the bottom, showing what the receipt lies on.
    let base = (h - zigzag) as i32;
    let tooth = zigzag as i32;
    let mut x = 0;
    while x < w as i32 {
        let poly = [
            Point::new(x, h as i32),
            Point::new(x + tooth, base),
            Point::new(x + 2 * tooth, h as i32),
        ];
        draw_polygon_mut(&mut img, &poly, DESK);
        x += 2 * tooth;
    }
    let bottom = Rect::at(0, h as i32 - 1).of_size(w, 1);
    draw_filled_rect_mut(&mut img, bottom, DESK);
    Ok(img)
}

// ---------------------------------------------------------------- whiteboard

const MARKERS: [Rgb<u8>; 4] = [
    Rgb([28, 64, 168]),
    Rgb([30, 30, 36]),
    Rgb([186, 36, 36]),
    Rgb([26, 122, 58]),
];

fn whiteboard(p: &Picture, w: u32, rng: &mut Rng) -> Result<RgbImage, RenderError> {
    let frame = (w / 90).max(6);
    let margin = w / 18;
    let head = Type::new(Face::Sans, w as f32 / 19.0)?;
    let text = Type::new(Face::Sans, w as f32 / 28.0)?;
    let weight = (w / 640).max(1) as i32;
    let inner = w - 2 * margin - frame * 2;
    let title = if p.title.trim().is_empty() {
        Vec::new()
    } else {
        head.wrap(p.title.trim(), inner)
    };
    let bullet_room = (text.px * 1.2) as u32;
    let mut rows = Vec::new();
    for (i, line) in p.lines.iter().enumerate() {
        for (k, piece) in text.wrap(line, inner - bullet_room).into_iter().enumerate() {
            rows.push((i, k == 0, piece));
        }
    }
    let title_h = title.len() as u32 * head.line_height();
    let gap = head.line_height();
    let needed = frame * 2
        + margin * 2
        + title_h
        + gap
        + rows.len() as u32 * (text.line_height() + text.line_height() / 4);
    let h = needed.max(w * 5 / 8);
    let mut img = canvas(w, h, Rgb([190, 192, 196]), "whiteboard")?;
    let board = Rect::at(frame as i32, frame as i32).of_size(w - 2 * frame, h - 2 * frame);
    draw_filled_rect_mut(&mut img, board, Rgb([246, 247, 243]));
    // Ghosts of earlier writing, wiped but not quite.
    for _ in 0..6 {
        let a = (
            rng.range(0.1, 0.9) * w as f32,
            rng.range(0.1, 0.9) * h as f32,
        );
        let b = (
            a.0 + rng.range(-0.2, 0.2) * w as f32,
            a.1 + rng.range(-0.05, 0.05) * h as f32,
        );
        stroke(&mut img, a, b, 3.0, Rgb([232, 233, 230]));
    }
    let x0 = (frame + margin) as i32;
    let mut y = (frame + margin) as i32;
    let title_color = MARKERS[0];
    let mut title_w = 0;
    for t in &title {
        head.draw_thick(&mut img, x0, y, title_color, t, weight + 1);
        title_w = title_w.max(head.width(t) as i32);
        y += head.line_height() as i32;
    }
    let r = (weight as f32 * 1.5).max(1.5);
    if !title.is_empty() {
        let pad = head.px * 0.35;
        wobbly_rect(
            &mut img,
            (
                x0 as f32 - pad,
                (frame + margin) as f32 - pad * 0.6,
                (x0 + title_w) as f32 + pad,
                y as f32 + pad * 0.4,
            ),
            r,
            title_color,
            rng,
        );
    }
    y += (gap / 2) as i32;
    let list_top = y as f32;
    let mut first_bullet: Option<(f32, f32)> = None;
    for (i, first, piece) in &rows {
        let color = MARKERS[1 + i % 3];
        let dx = px(rng.range(-4.0, 4.0));
        let dy = px(rng.range(-2.0, 2.0));
        if *first {
            let cy = y as f32 + text.px * 0.62;
            let cx = x0 as f32 + text.px * 0.35;
            draw_filled_circle_mut(
                &mut img,
                (px(cx) + dx, px(cy) + dy),
                px(text.px * 0.14).max(2),
                color,
            );
            first_bullet.get_or_insert((cx, cy));
        }
        text.draw_thick(
            &mut img,
            x0 + bullet_room as i32 + dx,
            y + dy,
            color,
            piece,
            weight,
        );
        y += (text.line_height() + text.line_height() / 4) as i32;
    }
    // An arrow from the boxed title down to the list.
    if let Some((_, by)) = first_bullet
        && !title.is_empty()
    {
        let first_w = rows.first().map(|(_, _, t)| text.width(t)).unwrap_or(0) as f32;
        let from = (
            (x0 + title_w) as f32 + head.px * 0.5,
            list_top - gap as f32 * 0.9,
        );
        let to = (
            (x0 as f32 + bullet_room as f32 + first_w + text.px * 0.8).max(from.0 + head.px),
            by,
        );
        arrow(&mut img, from, to, r, MARKERS[2]);
    }
    // The tray at the bottom.
    let tray = Rect::at(0, (h - frame * 2) as i32).of_size(w, frame * 2);
    draw_filled_rect_mut(&mut img, tray, Rgb([172, 174, 178]));
    Ok(img)
}

// ---------------------------------------------------------------- label

/// The Code 39 pattern of `c` (twelve modules, 1 = bar, 0 = space; three elements wide).
pub(super) fn code39(c: char) -> Option<&'static str> {
    const TABLE: [(char, &str); 44] = [
        ('0', "101001101101"),
        ('1', "110100101011"),
        ('2', "101100101011"),
        ('3', "110110010101"),
        ('4', "101001101011"),
        ('5', "110100110101"),
        ('6', "101100110101"),
        ('7', "101001011011"),
        ('8', "110100101101"),
        ('9', "101100101101"),
        ('A', "110101001011"),
        ('B', "101101001011"),
        ('C', "110110100101"),
        ('D', "101011001011"),
        ('E', "110101100101"),
        ('F', "101101100101"),
        ('G', "101010011011"),
        ('H', "110101001101"),
        ('I', "101101001101"),
        ('J', "101011001101"),
        ('K', "110101010011"),
        ('L', "101101010011"),
        ('M', "110110101001"),
        ('N', "101011010011"),
        ('O', "110101101001"),
        ('P', "101101101001"),
        ('Q', "101010110011"),
        ('R', "110101011001"),
        ('S', "101101011001"),
        ('T', "101011011001"),
        ('U', "110010101011"),
        ('V', "100110101011"),
        ('W', "110011010101"),
        ('X', "100101101011"),
        ('Y', "110010110101"),
        ('Z', "100110110101"),
        ('-', "100101011011"),
        ('.', "110010101101"),
        (' ', "100110101101"),
        ('$', "100100100101"),
        ('/', "100100101001"),
        ('+', "100101001001"),
        ('%', "101001001001"),
        ('*', "100101101101"),
    ];
    TABLE.iter().find(|(k, _)| *k == c).map(|(_, p)| *p)
}

/// The modules of `text` in Code 39 between start and stop characters, a narrow space
/// between characters.
fn code39_modules(text: &str) -> Vec<bool> {
    let mut out = Vec::new();
    for c in std::iter::once('*')
        .chain(text.chars())
        .chain(std::iter::once('*'))
    {
        if let Some(p) = code39(c) {
            out.extend(p.bytes().map(|b| b == b'1'));
            out.push(false);
        }
    }
    out.pop();
    out
}

fn label(p: &Picture, w: u32) -> Result<RgbImage, RenderError> {
    let margin = w / 20;
    let border = (w / 150).max(3);
    let inner = w - 2 * margin - 2 * border;
    let head = Type::new(Face::Bold, w as f32 / 16.0)?;
    let text = Type::new(Face::Sans, w as f32 / 30.0)?;
    let mono = Type::new(Face::Mono, w as f32 / 30.0)?;
    let code: String = match &p.barcode {
        Some(b) => b.clone(),
        None => {
            // Drawn from the label's own text: the same label, the same code.
            let mut h = blake3::Hasher::new();
            h.update(p.title.as_bytes());
            for l in &p.lines {
                h.update(l.as_bytes());
            }
            h.finalize().to_hex().to_ascii_uppercase()[..12].to_string()
        }
    };
    let modules = code39_modules(&code);
    let module = ((inner as usize / modules.len().max(1)) as u32).clamp(1, 6);
    let bar_h = w / 7;
    let title = if p.title.trim().is_empty() {
        Vec::new()
    } else {
        head.wrap(p.title.trim(), inner)
    };
    let rows: Vec<String> = p.lines.iter().flat_map(|l| text.wrap(l, inner)).collect();
    let h = 2 * border
        + 2 * margin
        + title.len() as u32 * head.line_height()
        + margin / 2
        + rows.len() as u32 * text.line_height()
        + margin / 2
        + bar_h
        + mono.line_height();
    let ink = Rgb([16, 16, 16]);
    let mut img = canvas(w, h, ink, "label")?;
    let paper = Rect::at(border as i32, border as i32).of_size(w - 2 * border, h - 2 * border);
    draw_filled_rect_mut(&mut img, paper, Rgb([253, 253, 250]));
    let x0 = (border + margin) as i32;
    let mut y = (border + margin) as i32;
    for t in &title {
        head.draw(&mut img, x0, y, ink, t);
        y += head.line_height() as i32;
    }
    if !title.is_empty() {
        let rule = Rect::at(x0, y + (margin / 8) as i32).of_size(inner, border.max(2));
        draw_filled_rect_mut(&mut img, rule, ink);
    }
    y += (margin / 2) as i32;
    for r in &rows {
        text.draw(&mut img, x0, y, ink, r);
        y += text.line_height() as i32;
    }
    y += (margin / 2) as i32;
    let code_w = modules.len() as u32 * module;
    let bx = x0 + (inner.saturating_sub(code_w) / 2) as i32;
    for (i, bar) in modules.iter().enumerate() {
        if *bar {
            let r = Rect::at(bx + (i as u32 * module) as i32, y).of_size(module, bar_h);
            draw_filled_rect_mut(&mut img, r, ink);
        }
    }
    y += bar_h as i32;
    mono.draw_centred(&mut img, (w / 2) as i32, y, ink, &format!("*{code}*"));
    Ok(img)
}

// ---------------------------------------------------------------- note

fn note(p: &Picture, w: u32, rng: &mut Rng) -> Result<RgbImage, RenderError> {
    let margin = w / 12;
    let text = Type::new(Face::Sans, w as f32 / 15.0)?;
    let head = Type::new(Face::Bold, w as f32 / 13.0)?;
    let inner = w - 2 * margin;
    let title = if p.title.trim().is_empty() {
        Vec::new()
    } else {
        head.wrap(p.title.trim(), inner)
    };
    let rows: Vec<String> = p.lines.iter().flat_map(|l| text.wrap(l, inner)).collect();
    let needed = 2 * margin
        + title.len() as u32 * head.line_height()
        + margin / 3
        + rows.len() as u32 * text.line_height();
    let h = needed.max(w);
    let yellow = Rgb([253, 233, 122]);
    let mut img = canvas(w, h, yellow, "note")?;
    // The glue strip along the top is a shade darker; the lifted bottom edge shades off.
    for y in 0..h {
        let t = y as f32 / h as f32;
        let f = if t < 0.12 {
            0.96
        } else if t > 0.85 {
            1.0 - (t - 0.85) * 0.5
        } else {
            1.0
        };
        for x in 0..w {
            let c = yellow.0.map(|v| (f32::from(v) * f).round() as u8);
            img.put_pixel(x, y, Rgb(c));
        }
    }
    let ink = Rgb([26, 36, 96]);
    let mut y = margin as i32;
    for t in &title {
        head.draw(&mut img, margin as i32, y, ink, t);
        y += head.line_height() as i32;
    }
    if !title.is_empty() {
        let underline_y = y as f32 + 2.0;
        stroke(
            &mut img,
            (margin as f32, underline_y + rng.range(-2.0, 2.0)),
            (
                margin as f32 + inner as f32 * 0.6,
                underline_y + rng.range(-2.0, 2.0),
            ),
            1.6,
            ink,
        );
    }
    y += (margin / 3) as i32;
    for r in &rows {
        let dx = px(rng.range(-3.0, 3.0));
        text.draw_thick(&mut img, margin as i32 + dx, y, ink, r, 1);
        y += text.line_height() as i32;
    }
    Ok(img)
}

// ---------------------------------------------------------------- screenshot

fn screenshot(p: &Picture, w: u32, rng: &mut Rng) -> Result<RgbImage, RenderError> {
    let h0 = w * 5 / 8;
    let ui = Type::new(Face::Sans, (w as f32 / 80.0).max(11.0))?;
    let body = Type::new(Face::Sans, (w as f32 / 66.0).max(12.0))?;
    let bold = Type::new(Face::Bold, (w as f32 / 62.0).max(12.0))?;
    let dialog_w = (w * 9 / 20).max(180);
    let pad = (w / 64).max(8);
    let text_w = dialog_w - 3 * pad - (body.px * 2.4) as u32;
    let rows: Vec<String> = p.lines.iter().flat_map(|l| body.wrap(l, text_w)).collect();
    let bar = (ui.px * 2.2) as u32;
    let button_h = (ui.px * 2.2) as u32;
    let dialog_h =
        bar + 2 * pad + (rows.len().max(2) as u32) * body.line_height() + pad + button_h + pad;
    let h = h0.max(dialog_h + 4 * bar);
    let mut img = canvas(w, h, Rgb([0, 0, 0]), "screenshot")?;
    // Desktop: a vertical gradient.
    for y in 0..h {
        let t = y as f32 / h as f32;
        let c = Rgb([
            (30.0 + 20.0 * t) as u8,
            (70.0 + 30.0 * t) as u8,
            (110.0 + 40.0 * t) as u8,
        ]);
        for x in 0..w {
            img.put_pixel(x, y, c);
        }
    }
    // The application window.
    let m = (w / 32) as i32;
    let (wx, wy, ww, wh) = (m, m, w - 2 * m as u32, h - 2 * m as u32);
    draw_filled_rect_mut(
        &mut img,
        Rect::at(wx, wy).of_size(ww, wh),
        Rgb([243, 243, 245]),
    );
    draw_filled_rect_mut(
        &mut img,
        Rect::at(wx, wy).of_size(ww, bar),
        Rgb([52, 56, 66]),
    );
    for (i, c) in [Rgb([236, 95, 86]), Rgb([245, 190, 80]), Rgb([98, 196, 84])]
        .into_iter()
        .enumerate()
    {
        let cx = wx + (bar as i32 / 2) + i as i32 * (bar as i32 * 3 / 4);
        draw_filled_circle_mut(
            &mut img,
            (cx, wy + bar as i32 / 2),
            (bar as i32 / 5).max(3),
            c,
        );
    }
    let title = p.title.trim();
    if !title.is_empty() {
        ui.draw_centred(
            &mut img,
            wx + ww as i32 / 2,
            wy + (bar as i32 - ui.line_height() as i32) / 2,
            Rgb([235, 235, 240]),
            title,
        );
    }
    // Menu bar, a sidebar and rows of content, dimmed behind the modal dialog.
    let menu_y = wy + bar as i32;
    draw_filled_rect_mut(
        &mut img,
        Rect::at(wx, menu_y).of_size(ww, bar * 3 / 4),
        Rgb([228, 228, 232]),
    );
    let mut mx = wx + pad as i32;
    for item in ["File", "Edit", "View", "Tools", "Help"] {
        ui.draw(&mut img, mx, menu_y + 2, Rgb([60, 60, 66]), item);
        mx += ui.width(item) as i32 + 2 * pad as i32;
    }
    let side_w = ww / 5;
    let content_y = menu_y + (bar * 3 / 4) as i32;
    draw_filled_rect_mut(
        &mut img,
        Rect::at(wx, content_y).of_size(side_w, wh - bar - bar * 3 / 4),
        Rgb([232, 234, 238]),
    );
    let mut ry = content_y + pad as i32;
    while ry + (bar as i32) < wy + wh as i32 {
        let len = rng.range(0.3, 0.9) * (ww - side_w - 2 * pad) as f32;
        draw_filled_rect_mut(
            &mut img,
            Rect::at(wx + side_w as i32 + pad as i32, ry).of_size(len as u32, (ui.px * 0.6) as u32),
            Rgb([214, 216, 222]),
        );
        let side_len = rng.range(0.4, 0.8) * (side_w - 2 * pad) as f32;
        draw_filled_rect_mut(
            &mut img,
            Rect::at(wx + pad as i32, ry).of_size(side_len.max(1.0) as u32, (ui.px * 0.6) as u32),
            Rgb([206, 208, 214]),
        );
        ry += bar as i32;
    }
    // Dim the window behind the dialog.
    for px_ in img.pixels_mut() {
        px_.0 = px_.0.map(|v| (f32::from(v) * 0.82) as u8);
    }
    // The dialog: shadow, frame, title bar, icon, text, button.
    let dx = (w - dialog_w) as i32 / 2;
    let dy = (h - dialog_h) as i32 / 2;
    draw_filled_rect_mut(
        &mut img,
        Rect::at(dx + 6, dy + 8).of_size(dialog_w, dialog_h),
        Rgb([70, 70, 76]),
    );
    draw_filled_rect_mut(
        &mut img,
        Rect::at(dx, dy).of_size(dialog_w, dialog_h),
        Rgb([250, 250, 251]),
    );
    draw_filled_rect_mut(
        &mut img,
        Rect::at(dx, dy).of_size(dialog_w, bar),
        Rgb([226, 228, 233]),
    );
    bold.draw(
        &mut img,
        dx + pad as i32,
        dy + (bar as i32 - bold.line_height() as i32) / 2,
        Rgb([30, 30, 34]),
        "Error",
    );
    let icon_r = (body.px * 0.9) as i32;
    let icon = (
        dx + pad as i32 + icon_r,
        dy + bar as i32 + pad as i32 + icon_r,
    );
    draw_filled_circle_mut(&mut img, icon, icon_r, Rgb([214, 48, 49]));
    bold.draw_centred(
        &mut img,
        icon.0,
        icon.1 - bold.line_height() as i32 / 2,
        Rgb([255, 255, 255]),
        "!",
    );
    let tx = dx + 2 * pad as i32 + 2 * icon_r;
    let mut ty = dy + bar as i32 + pad as i32;
    for r in &rows {
        body.draw(&mut img, tx, ty, Rgb([28, 28, 32]), r);
        ty += body.line_height() as i32;
    }
    let bw = (ui.width("OK") + 4 * pad).max(80);
    let bx = dx + dialog_w as i32 - pad as i32 - bw as i32;
    let by = dy + dialog_h as i32 - pad as i32 - button_h as i32;
    draw_filled_rect_mut(
        &mut img,
        Rect::at(bx, by).of_size(bw, button_h),
        Rgb([40, 110, 220]),
    );
    ui.draw_centred(
        &mut img,
        bx + bw as i32 / 2,
        by + (button_h as i32 - ui.line_height() as i32) / 2,
        Rgb([255, 255, 255]),
        "OK",
    );
    Ok(img)
}

// ---------------------------------------------------------------- document

fn document(p: &Picture, w: u32, rng: &mut Rng) -> Result<RgbImage, RenderError> {
    let h = (w as f32 * std::f32::consts::SQRT_2).round() as u32;
    let margin = w / 10;
    let inner = w - 2 * margin;
    let head = Type::new(Face::Bold, w as f32 / 34.0)?;
    let sub = Type::new(Face::Bold, w as f32 / 48.0)?;
    let text = Type::new(Face::Sans, w as f32 / 54.0)?;
    let ink = Rgb([20, 20, 24]);
    // Lay out first, to refuse a page that does not fit.
    enum Row {
        Title(String),
        Heading(String),
        Text(String),
        Gap(u32),
    }
    let mut rows = Vec::new();
    if !p.title.trim().is_empty() {
        for t in head.wrap(p.title.trim(), inner) {
            rows.push(Row::Title(t));
        }
        rows.push(Row::Gap(head.line_height()));
    }
    for line in &p.lines {
        if line.trim().is_empty() {
            rows.push(Row::Gap(text.line_height() / 2));
        } else if let Some(hd) = line.strip_prefix("# ") {
            rows.push(Row::Gap(text.line_height() / 3));
            for t in sub.wrap(hd.trim(), inner) {
                rows.push(Row::Heading(t));
            }
        } else {
            for t in text.wrap(line, inner) {
                rows.push(Row::Text(t));
            }
        }
    }
    let height = |r: &Row| match r {
        Row::Title(_) => head.line_height(),
        Row::Heading(_) => sub.line_height(),
        Row::Text(_) => text.line_height(),
        Row::Gap(g) => *g,
    };
    let text_h: u32 = rows.iter().map(height).sum();
    let sig_h = if p.signature.is_some() {
        text.line_height() * 6
    } else {
        0
    };
    if margin * 2 + text_h + sig_h > h {
        return Err(RenderError::Input(format!(
            "the text does not fit on one page ({} pixels of {} available); split it over more pages (more [[scan.page]]) or shorten it",
            text_h + sig_h,
            h - 2 * margin
        )));
    }
    let mut img = canvas(w, h, Rgb([255, 255, 253]), "document page")?;
    let mut y = margin as i32;
    for r in &rows {
        match r {
            Row::Title(t) => head.draw_centred(&mut img, (w / 2) as i32, y, ink, t),
            Row::Heading(t) => sub.draw(&mut img, margin as i32, y, ink, t),
            Row::Text(t) => text.draw(&mut img, margin as i32, y, ink, t),
            Row::Gap(_) => {}
        }
        y += height(r) as i32;
    }
    if let Some(name) = &p.signature {
        y += (text.line_height() * 2) as i32;
        let line_y = y + (text.line_height() * 2) as i32;
        let len = (inner as f32 * 0.4).max(text.width(name) as f32);
        scribble(
            &mut img,
            (margin as f32, line_y as f32),
            len,
            text.px * 2.2,
            rng,
        );
        stroke(
            &mut img,
            (margin as f32, line_y as f32 + 4.0),
            (margin as f32 + len, line_y as f32 + 4.0),
            1.0,
            ink,
        );
        text.draw(&mut img, margin as i32, line_y + 10, ink, name);
    }
    Ok(img)
}

/// A signature: a pen running left to right in loops above `(x, y)`, `len` long, `tall` high.
fn scribble(img: &mut RgbImage, start: (f32, f32), len: f32, tall: f32, rng: &mut Rng) {
    let pen = Rgb([22, 34, 120]);
    let loops = rng.range(3.0, 5.5);
    let (a1, a2) = (rng.range(0.25, 0.5), rng.range(0.1, 0.3));
    let (f2, ph) = (rng.range(1.5, 3.5), rng.range(0.0, std::f32::consts::TAU));
    let steps = (len * 2.0) as usize;
    let point = |t: f32| {
        let ang = t * loops * std::f32::consts::TAU;
        let x = start.0 + tall * 0.3 + t * len * 0.8 + tall * 0.3 * ang.cos();
        let y = start.1
            - tall * 0.5
            - tall * (a1 * ang.sin() + a2 * (ang * f2 + ph).sin()) * (1.0 - 0.4 * t);
        (x, y)
    };
    let mut prev = point(0.0);
    for i in 1..=steps {
        let next = point(i as f32 / steps as f32);
        stroke(img, prev, next, 1.2, pen);
        prev = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code39_patterns_have_five_bars_four_spaces_and_three_wide_elements() {
        for c in "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-. $/+%*".chars() {
            let p = code39(c).unwrap();
            assert_eq!(p.len(), 12, "{c}");
            // Runs of equal modules: elements, alternating bar/space from a bar.
            let mut runs: Vec<(char, usize)> = Vec::new();
            for m in p.chars() {
                match runs.last_mut() {
                    Some((k, n)) if *k == m => *n += 1,
                    _ => runs.push((m, 1)),
                }
            }
            assert_eq!(runs.len(), 9, "{c}: {p}");
            assert_eq!(runs[0].0, '1');
            assert_eq!(runs.iter().filter(|r| r.1 == 2).count(), 3, "{c}: {p}");
            assert!(runs.iter().all(|r| r.1 <= 2));
        }
        // Every pattern distinct.
        let all: std::collections::BTreeSet<_> = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-. $/+%*"
            .chars()
            .map(|c| code39(c).unwrap())
            .collect();
        assert_eq!(all.len(), 44);
        assert_eq!(code39('a'), None);
    }
}
