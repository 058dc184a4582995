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
    anyhow::ensure!(!points.is_empty(), "nothing to plot for {title}");
    let plot = |e: &dyn std::fmt::Display| anyhow::anyhow!("plot {title}: {e}");
    let xs = points.iter().map(|p| p.x);
    let ys = points
        .iter()
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
        chart
            .draw_series(LineSeries::new(points.iter().map(|p| (p.x, p.y)), BLUE))
            .map_err(|e| plot(&e))?;
        chart
            .draw_series(
                points
                    .iter()
                    .map(|p| Circle::new((p.x, p.y), 4, BLUE.filled())),
            )
            .map_err(|e| plot(&e))?;
        for p in points {
            if let Some((lo, hi)) = p.interval {
                chart
                    .draw_series(std::iter::once(PathElement::new(
                        vec![(p.x, lo.max(y0)), (p.x, hi.min(y1))],
                        BLUE.stroke_width(1),
                    )))
                    .map_err(|e| plot(&e))?;
            }
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
