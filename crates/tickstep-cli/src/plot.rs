//! `sim --plot`: the simulation's frames as an SVG (plotters' SVG backend, line series only).
//!
//! Two panels over the frame number: the budget and the step time in milliseconds, with a red
//! vertical mark at each Overload; and the deferred count per priority.

use std::path::Path;

use plotters::prelude::*;

use crate::sim_report::{FrameRecord, SimReport};

const WIDTH: u32 = 1000;
const HEIGHT: u32 = 700;
const PRIORITY_COLORS: [RGBColor; 5] = [
    RGBColor(0, 0, 0),
    RGBColor(214, 39, 40),
    RGBColor(31, 119, 180),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
];
const PRIORITY_NAMES: [&str; 5] = ["Kernel", "High", "Normal", "Low", "Background"];

/// Draws `report` to `path`.
pub(crate) fn draw(path: &Path, report: &SimReport) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    let (top, bottom) = root.split_vertically(HEIGHT / 2);
    let frames = report.frames.len().max(2) as u64;
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;

    let peak_ms = report
        .frames
        .iter()
        .map(|f| ms(f.budget).max(ms(f.step)))
        .fold(1.0, f64::max)
        * 1.1;
    let mut chart = ChartBuilder::on(&top)
        .caption("frame budget and step time (ms)", ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(50)
        .build_cartesian_2d(0..frames, 0.0..peak_ms)?;
    chart.configure_mesh().x_desc("frame").y_desc("ms").draw()?;
    let series = |pick: &dyn Fn(&FrameRecord) -> f64| -> Vec<(u64, f64)> {
        report
            .frames
            .iter()
            .enumerate()
            .map(|(n, f)| (n as u64, pick(f)))
            .collect()
    };
    chart
        .draw_series(LineSeries::new(
            series(&|f| ms(f.budget)),
            BLUE.stroke_width(2),
        ))?
        .label("budget")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE));
    chart
        .draw_series(LineSeries::new(series(&|f| ms(f.step)), BLACK))?
        .label("step")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK));
    for (i, o) in report.overloads.iter().enumerate() {
        let mark = chart.draw_series(LineSeries::new(
            vec![(o.frame, 0.0), (o.frame, peak_ms)],
            RED.stroke_width(2),
        ))?;
        if i == 0 {
            mark.label("Kernel.Overload")
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RED));
        }
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;

    let peak_deferred = report
        .frames
        .iter()
        .flat_map(|f| f.deferred)
        .max()
        .unwrap_or(0)
        .max(1) as f64
        * 1.1;
    let mut chart = ChartBuilder::on(&bottom)
        .caption(
            "tasks deferred after each frame, per priority",
            ("sans-serif", 18),
        )
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(50)
        .build_cartesian_2d(0..frames, 0.0..peak_deferred)?;
    chart
        .configure_mesh()
        .x_desc("frame")
        .y_desc("tasks")
        .draw()?;
    for level in 1..5 {
        let color = PRIORITY_COLORS[level];
        chart
            .draw_series(LineSeries::new(
                series(&|f| f.deferred[level] as f64),
                color.stroke_width(2),
            ))?
            .label(PRIORITY_NAMES[level])
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
