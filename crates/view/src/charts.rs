//! The overview's charts, drawn server-side as SVG with `plotters` (no charting code of our
//! own, no script): each function returns one `<svg>` element as a string, the same bytes for
//! the same input.

use std::collections::BTreeMap;

use plotters::coord::Shift;
use plotters::prelude::*;

/// Chart size in SVG pixels.
const W: u32 = 640;
const H: u32 = 300;

/// The agents' colours, in the order agents are listed (colour-blind-safe Okabe–Ito).
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
    RGBColor(240, 228, 66),
    RGBColor(0, 0, 0),
];

/// The colour of the `i`-th agent, as CSS.
pub fn colour_css(i: usize) -> String {
    let RGBColor(r, g, b) = PALETTE[i % PALETTE.len()];
    format!("#{r:02x}{g:02x}{b:02x}")
}

fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Draw with `f` into a fresh SVG; a drawing error becomes a small SVG saying so.
fn svg(title: &str, f: impl FnOnce(&Area<'_>) -> Result<(), String>) -> String {
    svg_sized(title, H, f)
}

fn svg_sized(title: &str, height: u32, f: impl FnOnce(&Area<'_>) -> Result<(), String>) -> String {
    let mut out = String::new();
    let result = {
        let root = SVGBackend::with_string(&mut out, (W, height)).into_drawing_area();
        let r = root
            .fill(&WHITE)
            .map_err(|e| e.to_string())
            .and_then(|_| f(&root));
        root.present().map_err(|e| e.to_string()).and(r)
    };
    match result {
        Ok(()) => out.replacen(
            "<svg ",
            &format!("<svg role=\"img\" aria-label=\"{}\" ", attr(title)),
            1,
        ),
        Err(e) => format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"40\"><text x=\"4\" y=\"20\">{}: {}</text></svg>",
            text(title),
            text(&e)
        ),
    }
}

fn text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn attr(s: &str) -> String {
    text(s).replace('"', "&quot;")
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Shorten a label to `n` characters.
fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// Score distribution per agent: a box (quartiles, whiskers at min/max) with every trial's
/// score as a point beside it. Scores are in [0, 1] and drawn as percent.
pub fn score_distribution(agents: &[(String, Vec<f64>)]) -> String {
    svg("weighted score per trial, by agent", |root| {
        let n = agents.len().max(1) as u32;
        let mut chart = ChartBuilder::on(root)
            .caption("Weighted score per trial (%)", ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(40)
            .build_cartesian_2d((0u32..n).into_segmented(), -2f32..102f32)
            .map_err(err)?;
        let labels: Vec<String> = agents.iter().map(|(a, _)| short(a, 18)).collect();
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => {
                    labels.get(*i as usize).cloned().unwrap_or_default()
                }
                SegmentValue::Last => String::new(),
            })
            .y_desc("score %")
            .draw()
            .map_err(err)?;
        for (i, (_, scores)) in agents.iter().enumerate() {
            if scores.is_empty() {
                continue;
            }
            let pct: Vec<f32> = scores.iter().map(|s| (s * 100.0) as f32).collect();
            let q = Quartiles::new(&pct);
            let c = colour(i);
            chart
                .draw_series(std::iter::once(
                    Boxplot::new_vertical(SegmentValue::CenterOf(i as u32), &q)
                        .width(28)
                        .whisker_width(0.5)
                        .style(c),
                ))
                .map_err(err)?;
            // The strip: every trial, spread deterministically across the segment's right half.
            chart
                .draw_series(pct.iter().enumerate().map(|(j, y)| {
                    EmptyElement::at((SegmentValue::CenterOf(i as u32), *y))
                        + Circle::new((22 + (j % 7) as i32 * 3, 0), 2, c.mix(0.6).filled())
                }))
                .map_err(err)?;
        }
        Ok(())
    })
}

/// Lines over ordered x labels, one per agent (per-turn score curves). Values in [0, 1].
pub fn lines(title: &str, x_labels: &[String], agents: &[(String, Vec<Option<f64>>)]) -> String {
    svg(title, |root| {
        let n = x_labels.len().max(1) as u32;
        let mut chart = ChartBuilder::on(root)
            .caption(title, ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(36)
            .y_label_area_size(40)
            .build_cartesian_2d((0u32..n).into_segmented(), -2f32..102f32)
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => {
                    x_labels.get(*i as usize).cloned().unwrap_or_default()
                }
                SegmentValue::Last => String::new(),
            })
            .y_desc("score %")
            .draw()
            .map_err(err)?;
        for (i, (name, values)) in agents.iter().enumerate() {
            let points: Vec<(SegmentValue<u32>, f32)> = values
                .iter()
                .enumerate()
                .filter_map(|(x, v)| {
                    v.map(|v| (SegmentValue::CenterOf(x as u32), (v * 100.0) as f32))
                })
                .collect();
            let c = colour(i);
            chart
                .draw_series(LineSeries::new(points.clone(), c.stroke_width(2)))
                .map_err(err)?
                .label(short(name, 24))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], c));
            chart
                .draw_series(points.into_iter().map(|p| Circle::new(p, 3, c.filled())))
                .map_err(err)?;
        }
        if agents.len() > 1 {
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()
                .map_err(err)?;
        }
        Ok(())
    })
}

/// Grouped horizontal bars: for each group (category, persona), one bar per agent. Values in
/// [0, 1], drawn as percent. Groups with no value for any agent are left out.
pub fn grouped_bars(
    title: &str,
    groups: &BTreeMap<String, Vec<Option<f64>>>,
    agents: &[String],
) -> String {
    let groups: Vec<(&String, &Vec<Option<f64>>)> = groups
        .iter()
        .filter(|(_, v)| v.iter().any(Option::is_some))
        .collect();
    let k = agents.len().max(1);
    let rows = (groups.len() * k).max(1) as u32;
    let height = (70 + rows * 14).clamp(160, 2400);
    svg_sized(title, height, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(150)
            .build_cartesian_2d(0f32..100f32, (0u32..rows).into_segmented())
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(rows as usize)
            .y_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) if (*i as usize).is_multiple_of(k) => groups
                    .get(*i as usize / k)
                    .map(|(g, _)| short(g, 22))
                    .unwrap_or_default(),
                _ => String::new(),
            })
            .x_desc("weighted score %")
            .draw()
            .map_err(err)?;
        for (gi, (_, values)) in groups.iter().enumerate() {
            for (ai, v) in values.iter().enumerate() {
                let Some(v) = v else { continue };
                let row = (gi * k + ai) as u32;
                let c = colour(ai);
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [
                            (0f32, SegmentValue::Exact(row)),
                            ((*v * 100.0) as f32, SegmentValue::Exact(row + 1)),
                        ],
                        c.filled(),
                    )))
                    .map_err(err)?;
            }
        }
        Ok(())
    })
}

/// A scatter of (x, score) per agent: cost or tokens against the weighted score.
pub fn scatter(title: &str, x_desc: &str, agents: &[(String, Vec<(f64, f64)>)]) -> String {
    svg(title, |root| {
        let max_x = agents
            .iter()
            .flat_map(|(_, p)| p.iter().map(|(x, _)| *x))
            .fold(0.0f64, f64::max);
        let max_x = if max_x > 0.0 { max_x * 1.05 } else { 1.0 };
        let mut chart = ChartBuilder::on(root)
            .caption(title, ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(36)
            .y_label_area_size(40)
            .build_cartesian_2d(0f64..max_x, -2f64..102f64)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc("score %")
            .draw()
            .map_err(err)?;
        for (i, (name, points)) in agents.iter().enumerate() {
            let c = colour(i);
            chart
                .draw_series(
                    points
                        .iter()
                        .map(|(x, y)| Circle::new((*x, y * 100.0), 3, c.mix(0.7).filled())),
                )
                .map_err(err)?
                .label(short(name, 24))
                .legend(move |(x, y)| Circle::new((x + 8, y), 3, c.filled()));
        }
        if agents.len() > 1 {
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()
                .map_err(err)?;
        }
        Ok(())
    })
}

/// TCR@p over p (0–100 %): the share of tasks whose mean pass rate reaches p, per agent.
pub fn tcr_curve(agents: &[(String, Vec<(u32, f64)>)]) -> String {
    svg("task completion rate over the threshold p", |root| {
        let mut chart = ChartBuilder::on(root)
            .caption("TCR@p: tasks with pass rate ≥ p (%)", ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(36)
            .y_label_area_size(40)
            .build_cartesian_2d(0u32..100u32, -2f64..102f64)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("p: pass-rate threshold %")
            .y_desc("TCR %")
            .draw()
            .map_err(err)?;
        for (i, (name, points)) in agents.iter().enumerate() {
            let c = colour(i);
            chart
                .draw_series(LineSeries::new(
                    points.iter().map(|(p, v)| (*p, v * 100.0)),
                    c.stroke_width(2),
                ))
                .map_err(err)?
                .label(short(name, 24))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], c));
        }
        if agents.len() > 1 {
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()
                .map_err(err)?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_are_svg_and_deterministic() {
        let agents = vec![
            ("oracle".to_string(), vec![1.0, 1.0, 0.9]),
            ("null".to_string(), vec![0.0, 0.1]),
        ];
        let a = score_distribution(&agents);
        assert!(a.starts_with("<svg"), "{a}");
        assert!(a.contains("oracle") && a.contains("null"));
        assert_eq!(a, score_distribution(&agents));
        let mut groups = BTreeMap::new();
        groups.insert("finance".to_string(), vec![Some(0.5), None]);
        groups.insert("empty".to_string(), vec![None, None]);
        let b = grouped_bars("by category", &groups, &["a".into(), "b".into()]);
        assert!(b.contains("finance") && !b.contains(">empty<"), "{b}");
        let c = tcr_curve(&[("a".into(), vec![(0, 1.0), (50, 0.5), (100, 0.0)])]);
        assert!(c.contains("<polyline") || c.contains("<path"), "{c}");
    }

    #[test]
    fn labels_are_escaped() {
        let s = scatter("t", "tokens", &[("<script>".into(), vec![(1.0, 0.5)])]);
        assert!(!s.contains("<script>"));
        let s = score_distribution(&[("</svg><script>x".into(), vec![0.5])]);
        assert!(!s.contains("<script>"));
    }

    #[test]
    fn empty_input_still_draws() {
        assert!(score_distribution(&[]).starts_with("<svg"));
        assert!(lines("t", &[], &[]).starts_with("<svg"));
        assert!(grouped_bars("t", &BTreeMap::new(), &[]).starts_with("<svg"));
        assert!(scatter("t", "x", &[]).starts_with("<svg"));
        assert!(tcr_curve(&[]).starts_with("<svg"));
    }
}
