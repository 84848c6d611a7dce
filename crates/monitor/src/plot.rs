//! SVG plots of an evaluation (plotters' SVG backend; no system fonts: text is written as SVG
//! `<text>` elements and laid out with plotters' built-in size estimate).

use crate::error::{MonitorError, Result};
use crate::eval::EvalReport;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;

fn err<E: std::fmt::Display>(e: E) -> MonitorError {
    MonitorError::Plot(e.to_string())
}

const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(140, 86, 75),
];

/// The text of an SVG of `size` pixels holding one chart: `title` (in a sans-serif font of
/// `font` pixels) over `x` × `y`, the axes described as `descs` (with `x_mesh`, vertical mesh
/// lines too), the series drawn by `draw` and their legend at `legend` (`None`: no legend).
#[allow(clippy::type_complexity)]
fn chart_svg<X, Y>(
    size: (u32, u32),
    (title, font): (&str, i32),
    (x, y): (X, Y),
    (x_desc, y_desc, x_mesh): (&str, &str, bool),
    legend: Option<SeriesLabelPosition>,
    draw: impl FnOnce(
        &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<X::CoordDescType, Y::CoordDescType>>,
    ) -> Result<()>,
) -> Result<String>
where
    X: AsRangedCoord,
    Y: AsRangedCoord,
    X::CoordDescType: ValueFormatter<X::Value>,
    Y::CoordDescType: ValueFormatter<Y::Value>,
{
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", font))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(x, y)
            .map_err(err)?;
        let mut mesh = chart.configure_mesh();
        if !x_mesh {
            mesh.disable_x_mesh();
        }
        mesh.x_desc(x_desc).y_desc(y_desc).draw().map_err(err)?;
        draw(&mut chart)?;
        if let Some(position) = legend {
            chart
                .configure_series_labels()
                .position(position)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .draw()
                .map_err(err)?;
        }
        root.present().map_err(err)?;
    }
    Ok(out)
}

/// The detection / false-positive curve of the monitor (and the matrix baseline), with the
/// other baselines as points.
pub fn roc_svg(r: &EvalReport) -> Result<String> {
    chart_svg(
        (640, 480),
        ("Detection vs false positives (test runs)", 20),
        (0f64..1f64, 0f64..1.02f64),
        ("false-positive rate", "detection rate", true),
        Some(SeriesLabelPosition::LowerRight),
        |chart| {
            let line = |pts: &[crate::eval::CurvePoint]| -> Vec<(f64, f64)> {
                let mut v: Vec<(f64, f64)> = vec![(0.0, 0.0)];
                v.extend(pts.iter().map(|p| (p.fpr, p.detection)));
                v.push((1.0, 1.0));
                v
            };
            let auc = r.rows.first().and_then(|x| x.auc).unwrap_or(f64::NAN);
            chart
                .draw_series(LineSeries::new(line(&r.curve), COLORS[0].stroke_width(2)))
                .map_err(err)?
                .label(format!("Augur monitor (AUC {auc:.3})"))
                .legend(|(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], COLORS[0].stroke_width(2))
                });
            if !r.matrix_curve.is_empty() {
                let a = r
                    .rows
                    .iter()
                    .find(|x| x.method.contains("5×5"))
                    .and_then(|x| x.auc)
                    .unwrap_or(f64::NAN);
                chart
                    .draw_series(LineSeries::new(
                        line(&r.matrix_curve),
                        COLORS[3].stroke_width(2),
                    ))
                    .map_err(err)?
                    .label(format!("5x5 matrix (AUC {a:.3})"))
                    .legend(|(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], COLORS[3].stroke_width(2))
                    });
            }
            chart
                .draw_series(LineSeries::new(
                    vec![(0.0, 0.0), (1.0, 1.0)],
                    BLACK.mix(0.3),
                ))
                .map_err(err)?;
            let point_colors = [COLORS[2], COLORS[4], COLORS[5], COLORS[1]];
            for (i, (name, fpr, det)) in r
                .baseline_points
                .iter()
                .filter(|b| !b.0.contains("5×5"))
                .enumerate()
            {
                let c = point_colors[i % point_colors.len()];
                chart
                    .draw_series(std::iter::once(Circle::new((*fpr, *det), 6, c.filled())))
                    .map_err(err)?
                    .label(name.clone())
                    .legend(move |(x, y)| Circle::new((x + 10, y), 5, c.filled()));
            }
            if let Some(main) = r.rows.first() {
                let m = &main.metrics;
                chart
                    .draw_series(std::iter::once(TriangleMarker::new(
                        (m.false_positive.rate, m.detection.rate),
                        8,
                        COLORS[0].filled(),
                    )))
                    .map_err(err)?
                    .label("monitor at the threshold chosen on training")
                    .legend(|(x, y)| TriangleMarker::new((x + 10, y), 6, COLORS[0].filled()));
            }
            Ok(())
        },
    )
}

/// Horizon curves P(F≤h target) per risk level.
pub fn horizons_svg(r: &EvalReport) -> Result<String> {
    let h = r.horizon_curves.first().map_or(1, |c| c.1.len()).max(1);
    chart_svg(
        (640, 480),
        ("P(F<=h target) by risk level (learned fallback)", 20),
        (1f64..h as f64, 0f64..1.02f64),
        ("horizon h (steps)", "probability", true),
        Some(SeriesLabelPosition::UpperLeft),
        |chart| {
            for (i, (level, curve)) in r.horizon_curves.iter().enumerate() {
                let c = COLORS[i % COLORS.len()];
                chart
                    .draw_series(LineSeries::new(
                        curve.iter().enumerate().map(|(k, &v)| ((k + 1) as f64, v)),
                        c.stroke_width(2),
                    ))
                    .map_err(err)?
                    .label(level.clone())
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2))
                    });
            }
            Ok(())
        },
    )
}

/// Histogram of lead times (v − k) of the prevented unsafe test runs.
pub fn lead_svg(r: &EvalReport) -> Result<String> {
    let leads: &[usize] = r.rows.first().map_or(&[], |x| &x.metrics.leads);
    let max = leads.iter().copied().max().unwrap_or(0) as u32;
    let mut counts = vec![0u32; max as usize + 1];
    for &l in leads {
        counts[l] += 1;
    }
    let top = counts.iter().copied().max().unwrap_or(0).max(1);
    chart_svg(
        (640, 400),
        (
            "Lead time of prevented violations (steps before the violating call)",
            18,
        ),
        ((0u32..max + 1).into_segmented(), 0u32..top + 1),
        ("lead (steps)", "runs", false),
        None,
        |chart| {
            chart
                .draw_series(
                    Histogram::vertical(chart)
                        .style(COLORS[0].filled())
                        .margin(8)
                        .data(counts.iter().enumerate().map(|(k, &c)| (k as u32, c))),
                )
                .map_err(err)?;
            Ok(())
        },
    )
}
