//! One x-y chart as SVG (no system fonts needed), for figures people would rather look at
//! than read: Elo against a swept parameter, a tuned parameter's trajectory.

use plotters::prelude::*;

/// A point, with an optional vertical interval (an error bar).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    pub interval: Option<(f64, f64)>,
}

/// Draws `points` joined by a line, with their intervals as bars, under `title`.
pub fn xy_svg(title: &str, x_desc: &str, y_desc: &str, points: &[Point]) -> anyhow::Result<String> {
    xy_svg_series(title, x_desc, y_desc, &[("", points.to_vec())])
}

/// Colours of successive series.
const PALETTE: [RGBColor; 4] = [BLUE, RED, RGBColor(0, 140, 0), RGBColor(200, 120, 0)];

/// [`xy_svg`] with several series, each `(name, points)` in its own colour, named in a legend
/// where a name is given.
pub fn xy_svg_series(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[(&str, Vec<Point>)],
) -> anyhow::Result<String> {
    let all = || series.iter().flat_map(|(_, points)| points.iter());
    anyhow::ensure!(all().next().is_some(), "nothing to plot for {title}");
    let plot = |e: &dyn std::fmt::Display| anyhow::anyhow!("plot {title}: {e}");
    let xs = all().map(|p| p.x);
    let ys = all()
        .flat_map(|p| [Some(p.y), p.interval.map(|i| i.0), p.interval.map(|i| i.1)])
        .flatten()
        .filter(|y| y.is_finite());
    let (x0, x1) = bounds(xs);
    let (y0, y1) = bounds(ys);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (800, 480)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| plot(&e))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(15)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(|e| plot(&e))?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .draw()
            .map_err(|e| plot(&e))?;
        for (k, (name, points)) in series.iter().enumerate() {
            let colour = PALETTE[k % PALETTE.len()];
            let line = chart
                .draw_series(LineSeries::new(points.iter().map(|p| (p.x, p.y)), colour))
                .map_err(|e| plot(&e))?;
            if !name.is_empty() {
                line.label(*name).legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
                });
            }
            chart
                .draw_series(
                    points
                        .iter()
                        .map(|p| Circle::new((p.x, p.y), 4, colour.filled())),
                )
                .map_err(|e| plot(&e))?;
            for p in points {
                if let Some((lo, hi)) = p.interval {
                    chart
                        .draw_series(std::iter::once(PathElement::new(
                            vec![(p.x, lo.max(y0)), (p.x, hi.min(y1))],
                            colour.stroke_width(1),
                        )))
                        .map_err(|e| plot(&e))?;
                }
            }
        }
        if series.iter().any(|(name, _)| !name.is_empty()) {
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()
                .map_err(|e| plot(&e))?;
        }
        root.present().map_err(|e| plot(&e))?;
    }
    Ok(svg)
}

/// A range around `values` with a margin (a unit either side when they are all equal).
fn bounds(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if !lo.is_finite() || !hi.is_finite() {
        return (0.0, 1.0);
    }
    let pad = if hi > lo { (hi - lo) * 0.08 } else { 1.0 };
    (lo - pad, hi + pad)
}
