//! Figures as PNG and SVG with plotters. Text is drawn with the DejaVu Sans font compiled
//! into the binary (`assets/fonts`), so figures look the same on every machine.

use std::path::Path;
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;
pub use plotters::style::RGBColor;

static FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        for style in [
            FontStyle::Normal,
            FontStyle::Bold,
            FontStyle::Italic,
            FontStyle::Oblique,
        ] {
            plotters::style::register_font("sans-serif", style, FONT)
                .unwrap_or_else(|_| panic!("the bundled font is a valid TTF"));
        }
    });
}

/// How a line is drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Dash {
    Solid,
    Dashed,
    Dotted,
}

/// One curve: points, colour, dash, markers, legend label.
#[derive(Clone, Debug)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    /// Symmetric error bars (same length as `points`), if any.
    pub errors: Option<Vec<f64>>,
    pub color: RGBColor,
    pub dash: Dash,
    pub markers: bool,
}

/// A figure: axes labels, log-scale choice, curves.
#[derive(Clone, Debug)]
pub struct Figure {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub log_y: bool,
    pub series: Vec<Series>,
}

pub const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

/// Colour `i` of `n` ordered curves (a depth sweep): a viridis-like ramp from dark
/// purple through teal to yellow-green, so neighbouring depths have neighbouring colours.
pub fn ramp(i: usize, n: usize) -> RGBColor {
    const STOPS: [(f64, f64, f64); 5] = [
        (68.0, 1.0, 84.0),
        (59.0, 82.0, 139.0),
        (33.0, 145.0, 140.0),
        (94.0, 201.0, 98.0),
        (200.0, 200.0, 30.0),
    ];
    let t = if n <= 1 {
        0.0
    } else {
        i as f64 / (n - 1) as f64
    } * (STOPS.len() - 1) as f64;
    let k = (t.floor() as usize).min(STOPS.len() - 2);
    let f = t - k as f64;
    let mix = |a: f64, b: f64| (a + (b - a) * f).round() as u8;
    let (a, b) = (STOPS[k], STOPS[k + 1]);
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

impl Figure {
    /// Writes `stem.png` and `stem.svg`.
    pub fn save(&self, stem: &Path) -> crate::Result<()> {
        register_font();
        let png = stem.with_extension("png");
        let svg = stem.with_extension("svg");
        {
            let root = BitMapBackend::new(&png, (900, 600)).into_drawing_area();
            self.draw(&root).map_err(|e| plot_error(&png, e))?;
            root.present().map_err(|e| plot_error(&png, e))?;
        }
        {
            let root = SVGBackend::new(&svg, (900, 600)).into_drawing_area();
            self.draw(&root).map_err(|e| plot_error(&svg, e))?;
            root.present().map_err(|e| plot_error(&svg, e))?;
        }
        Ok(())
    }

    fn bounds(&self) -> (f64, f64, f64, f64) {
        let pts = || {
            self.series.iter().flat_map(|s| {
                s.points.iter().enumerate().map(move |(i, &(x, y))| {
                    let e = s.errors.as_ref().map_or(0.0, |e| e[i]);
                    (x, y - e, y + e)
                })
            })
        };
        let finite = |v: &f64| v.is_finite() && (!self.log_y || *v > 0.0);
        let xs: Vec<f64> = pts().map(|p| p.0).filter(|x| x.is_finite()).collect();
        let lo: Vec<f64> = pts().flat_map(|p| [p.1, p.2]).filter(finite).collect();
        let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
        let max = |v: &[f64]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let (x0, x1) = (min(&xs), max(&xs));
        let (y0, y1) = (min(&lo), max(&lo));
        if self.log_y {
            (x0, x1, y0 / 1.5, y1 * 1.5)
        } else {
            let pad = 0.05 * (y1 - y0).max(1e-9);
            (x0, x1, y0 - pad, y1 + pad)
        }
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        root.fill(&WHITE).map_err(err)?;
        let (x0, x1, y0, y1) = self.bounds();
        if !(x0.is_finite() && y0.is_finite()) {
            return Err("nothing finite to plot".into());
        }
        let mut builder = ChartBuilder::on(root);
        builder
            .caption(&self.title, ("sans-serif", 22))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(80);
        macro_rules! finish {
            ($chart:expr) => {{
                let mut chart = $chart;
                chart
                    .configure_mesh()
                    .x_desc(&self.x_label)
                    .y_desc(&self.y_label)
                    .label_style(("sans-serif", 15))
                    .draw()
                    .map_err(err)?;
                for s in &self.series {
                    let style = ShapeStyle::from(&s.color).stroke_width(2);
                    let pts: Vec<(f64, f64)> = s
                        .points
                        .iter()
                        .copied()
                        .filter(|(x, y)| {
                            x.is_finite() && y.is_finite() && (!self.log_y || *y > 0.0)
                        })
                        .collect();
                    let anno = match s.dash {
                        Dash::Solid => chart.draw_series(LineSeries::new(pts.clone(), style)),
                        Dash::Dashed => {
                            chart.draw_series(DashedLineSeries::new(pts.clone(), 10, 6, style))
                        }
                        Dash::Dotted => {
                            chart.draw_series(DashedLineSeries::new(pts.clone(), 2, 4, style))
                        }
                    }
                    .map_err(err)?;
                    let color = s.color;
                    let dash = s.dash;
                    anno.label(s.label.clone()).legend(move |(x, y)| {
                        let style = ShapeStyle::from(&color).stroke_width(2);
                        match dash {
                            Dash::Solid => PathElement::new(vec![(x, y), (x + 24, y)], style),
                            _ => PathElement::new(vec![(x, y), (x + 8, y)], style),
                        }
                    });
                    if s.markers {
                        chart
                            .draw_series(
                                pts.iter()
                                    .map(|&(x, y)| Circle::new((x, y), 3, s.color.filled())),
                            )
                            .map_err(err)?;
                    }
                    if let Some(errors) = &s.errors {
                        let bars = s.points.iter().zip(errors).filter(|((x, y), e)| {
                            x.is_finite()
                                && y.is_finite()
                                && e.is_finite()
                                && (!self.log_y || *y - *e > 0.0)
                        });
                        chart
                            .draw_series(bars.map(|(&(x, y), &e)| {
                                PathElement::new(
                                    vec![(x, y - e), (x, y + e)],
                                    ShapeStyle::from(&s.color),
                                )
                            }))
                            .map_err(err)?;
                    }
                }
                chart
                    .configure_series_labels()
                    .background_style(WHITE.mix(0.85))
                    .border_style(BLACK)
                    .label_font(("sans-serif", 14))
                    .position(SeriesLabelPosition::UpperRight)
                    .draw()
                    .map_err(err)?;
            }};
        }
        if self.log_y {
            finish!(
                builder
                    .build_cartesian_2d(x0..x1, (y0..y1).log_scale())
                    .map_err(err)?
            );
        } else {
            finish!(builder.build_cartesian_2d(x0..x1, y0..y1).map_err(err)?);
        }
        Ok(())
    }
}

/// A drawing error of the figure file `path`.
fn plot_error(path: &Path, message: impl ToString) -> crate::Error {
    crate::Error::Plot {
        path: path.to_path_buf(),
        message: message.to_string(),
    }
}
