//! Figures as PNG (at twice the SVG's pixel size, 1800 x 1200), SVG and PDF (vector, the
//! text as glyph outlines: `pdf.rs`) with plotters.
//! Text is drawn with the DejaVu Sans font compiled into the binary (`assets/fonts`; it has
//! the Greek letters κ, θ, φ and the superscript digits of `10⁵`), so figures look the same
//! on every machine.
//!
//! What a figure guarantees: axis ticks from [`ticks`] (log axes labelled `10ᵏ` at every
//! decade with minor ticks between, integer-only ticks on count axes), the legend to the
//! right of the data area (never over it), four line styles that stay apart (solid, long
//! dashes, round dots, dash-dot; [`strokes`]) with a marker shape per curve, and seed
//! spread as shaded bands or error bars ([`Spread`]), and points without a value (a singular
//! kernel's κ) as open markers in a band above the axes, labelled `singular`
//! ([`Series::unresolved`]): never on a tick line, where they would read as values.

pub mod layout;
mod pdf;
mod strokes;
pub mod style;
pub mod ticks;

use std::path::Path;
use std::sync::Once;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::prelude::*;
pub use plotters::style::RGBColor;
use plotters::style::text_anchor::{HPos, Pos, VPos};

pub use layout::Layout;
use layout::Metrics;
pub use strokes::Dash;
use strokes::Piece;
pub use ticks::Scale;
use ticks::Ticks;

pub(crate) static FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");

pub(crate) fn register_font() {
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

/// The marker drawn at a curve's points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    Circle,
    Square,
    Triangle,
    Diamond,
}

impl Marker {
    /// The `i`-th marker shape (cycling).
    pub fn nth(i: usize) -> Self {
        [Self::Circle, Self::Square, Self::Triangle, Self::Diamond][i % 4]
    }
}

/// The spread of a curve at each of its points, as (low, high) values, e.g. the minimum
/// and maximum over seeds, or mean -+ one standard deviation.
#[derive(Clone, Debug, PartialEq)]
pub enum Spread {
    /// A shaded band between the lows and the highs.
    Band(Vec<(f64, f64)>),
    /// A vertical error bar at each point.
    Bars(Vec<(f64, f64)>),
}

/// One curve: points, colour, dash, marker, legend label, and its spread if any.
#[derive(Clone, Debug)]
pub struct Series {
    /// The legend's words; an empty label leaves the series out of the legend (the
    /// figure's note then says what such curves are).
    pub label: String,
    pub points: Vec<(f64, f64)>,
    /// The spread at each point (same length as `points`), if any.
    pub spread: Option<Spread>,
    pub color: RGBColor,
    pub dash: Dash,
    /// Markers at the points (at most [`MAX_MARKERS`] of them, evenly spaced).
    pub marker: Option<Marker>,
    /// The x positions of points that have no value to draw because it could not be
    /// resolved (a singular kernel's κ): an open marker in the band above the axes at each, so
    /// that no point disappears without a trace; the figure's note says what they mean.
    pub unresolved: Vec<f64>,
}

/// A figure: title, axis labels and scales, curves, and a note printed under the legend
/// (what the lines and bands are: "mean over 5 seeds; band: min..max").
#[derive(Clone, Debug)]
pub struct Figure {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_scale: Scale,
    pub y_scale: Scale,
    pub series: Vec<Series>,
    pub note: Option<String>,
}

/// A figure's title as `--title` asks for it: the figure's own (`None`), none at all
/// (`Some("")`: a paper's caption says it), or the given text in its place, where `{what}`
/// stands for what the figure shows (`--title "{what}, 3 seeds"`).
pub fn title_as_asked(given: Option<&str>, own: impl FnOnce() -> String, what: &str) -> String {
    match given {
        None => own(),
        Some(t) => t.replace("{what}", what),
    }
}

/// The height of one lane of the band of unresolved points above the axes, in units of the
/// 900 x 600 layout.
const LANE: f64 = 11.0;

/// The most markers drawn on one curve (a 100-epoch curve gets one every 4 epochs).
pub const MAX_MARKERS: usize = 25;

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
        (190.0, 180.0, 20.0),
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

impl Series {
    /// The plotted (x, y) of point `i`, if it can be plotted on these scales.
    fn at(&self, i: usize, sx: Scale, sy: Scale) -> Option<(f64, f64)> {
        let (x, y) = self.points[i];
        Some((sx.to_plot(x)?, sy.to_plot(y)?))
    }

    /// The (low, high) of point `i`, if any.
    fn spread_at(&self, i: usize) -> Option<(f64, f64)> {
        match &self.spread {
            Some(Spread::Band(v) | Spread::Bars(v)) => v.get(i).copied(),
            None => None,
        }
    }
}

impl Figure {
    /// Writes `stem.png` (1800 x 1200), `stem.svg` (900 x 600) and `stem.pdf` (675 x 450
    /// pt), laid out for a screen.
    pub fn save(&self, stem: &Path) -> ntk_files::Result<()> {
        self.save_as(stem, Layout::Screen)
    }

    /// Writes `stem.png`, `stem.svg` and `stem.pdf` (the PNG at twice the SVG's size, the
    /// PDF in points: [`layout`]) in `layout`.
    pub fn save_as(&self, stem: &Path, layout: Layout) -> ntk_files::Result<()> {
        self.plain_text().save_plain(stem, layout)
    }

    /// This figure with every text (title, axis labels, curve labels, note) drawable and
    /// well-formed XML in the SVG: a control character (which XML 1.0 forbids: a title
    /// given as `--title $'a\x01b'`) is replaced by U+FFFD, a tab or carriage return by a
    /// space; the note keeps its line breaks (they separate its lines).
    fn plain_text(&self) -> Self {
        let mut f = self.clone();
        for text in [&mut f.title, &mut f.x_label, &mut f.y_label]
            .into_iter()
            .chain(f.series.iter_mut().map(|s| &mut s.label))
        {
            *text = plain(text, false);
        }
        f.note = f.note.as_deref().map(|n| plain(n, true));
        f
    }

    /// [`Figure::save_as`] of a figure whose texts are [`Figure::plain_text`]'s. In a
    /// column the note is not drawn: it goes, after the title, into `stem.caption.txt`
    /// beside the figure (the text of a paper's caption), so that the axes keep the page;
    /// a screen figure draws it under its legend (and an older caption file of that stem
    /// is removed).
    fn save_plain(&self, stem: &Path, layout: Layout) -> ntk_files::Result<()> {
        let caption = stem.with_extension("caption.txt");
        if layout == Layout::Column
            && let Some(note) = &self.note
        {
            let mut text = String::new();
            if !self.title.trim().is_empty() {
                text.push_str(self.title.trim());
                text.push_str("\n\n");
            }
            text.push_str(note.trim_end());
            text.push('\n');
            ntk_files::io::atomic_write(&caption, text.as_bytes())
                .map_err(|e| plot_error(&caption, e))?;
            let mut drawn = self.clone();
            drawn.note = None;
            return drawn.draw_files(stem, layout);
        }
        match std::fs::remove_file(&caption) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(plot_error(&caption, e));
            }
            _ => {}
        }
        self.draw_files(stem, layout)
    }

    /// The PNG, SVG and PDF of this figure as it is drawn.
    fn draw_files(&self, stem: &Path, layout: Layout) -> ntk_files::Result<()> {
        register_font();
        let m = Metrics::of(layout);
        let size = self.canvas(&m);
        self.check(stem)?;
        let png = stem.with_extension("png");
        let svg = stem.with_extension("svg");
        // Atomically, as every file the tools write: drawn beside the target under a
        // temporary name (the PNG encoder picks its format by the extension, hence the
        // trailing `.png`), synced, renamed over it; a kill or a full disk leaves the old
        // figure or none, never a truncated one.
        let png_tmp = png.with_file_name(format!(
            "{}{}{}.png",
            png.file_name().unwrap_or_default().to_string_lossy(),
            ntk_files::outset::TMP_TAG,
            std::process::id()
        ));
        let drawn = (|| {
            {
                let root =
                    BitMapBackend::new(&png_tmp, (2 * size.0, 2 * size.1)).into_drawing_area();
                self.draw(&root, 2.0, false, &m)
                    .map_err(|e| plot_error(&png, e))?;
                root.present().map_err(|e| plot_error(&png, e))?;
            }
            std::fs::File::open(&png_tmp)
                .and_then(|f| f.sync_all())
                .and_then(|()| ntk_files::io::replace_file(&png_tmp, &png))
                .map_err(|e| plot_error(&png, e))
        })();
        if drawn.is_err() {
            let _ = std::fs::remove_file(&png_tmp);
        }
        drawn?;
        let mut text = String::new();
        {
            let root = SVGBackend::with_string(&mut text, size).into_drawing_area();
            self.draw(&root, 1.0, true, &m)
                .map_err(|e| plot_error(&svg, e))?;
            root.present().map_err(|e| plot_error(&svg, e))?;
        }
        ntk_files::io::atomic_write(&svg, text.as_bytes()).map_err(|e| plot_error(&svg, e))?;
        let pdf = stem.with_extension("pdf");
        let mut bytes = Vec::new();
        {
            let root =
                pdf::PdfBackend::new(&mut bytes, size, m.pdf_pt_per_unit, FONT).into_drawing_area();
            self.draw(&root, 1.0, true, &m)
                .map_err(|e| plot_error(&pdf, e))?;
            root.present().map_err(|e| plot_error(&pdf, e))?;
        }
        ntk_files::io::atomic_write(&pdf, &bytes).map_err(|e| plot_error(&pdf, e))
    }

    /// The canvas in layout units: the layout's size, and for a legend under the axes that
    /// legend's height on top, so that the axes keep their height however long it is.
    fn canvas(&self, m: &Metrics) -> (u32, u32) {
        if !m.legend_below {
            return m.size;
        }
        let mut scratch = String::new();
        let area = SVGBackend::with_string(&mut scratch, m.size).into_drawing_area();
        let legend = self.legend_rows(&area, 1.0, m).height(m);
        (m.size.0, m.size.1 + legend.ceil() as u32)
    }

    /// Every spread has one (low, high) per point.
    fn check(&self, stem: &Path) -> ntk_files::Result<()> {
        for s in &self.series {
            if let Some(Spread::Band(v) | Spread::Bars(v)) = &s.spread
                && v.len() != s.points.len()
            {
                let message = format!(
                    "series {:?}: {} spreads for {} points",
                    s.label,
                    v.len(),
                    s.points.len()
                );
                return Err(plot_error(stem, message));
            }
        }
        Ok(())
    }

    /// The axes' ticks from the data (points and spreads) that can be plotted.
    fn axes(&self) -> Option<(Ticks, Ticks)> {
        let (mut xs, mut ys) = (Vec::new(), Vec::new());
        for s in &self.series {
            for i in 0..s.points.len() {
                if s.at(i, self.x_scale, self.y_scale).is_none() {
                    continue;
                }
                xs.push(s.points[i].0);
                ys.push(s.points[i].1);
                if let Some((lo, hi)) = s.spread_at(i) {
                    ys.extend(
                        [lo, hi]
                            .into_iter()
                            .filter(|v| self.y_scale.to_plot(*v).is_some()),
                    );
                }
            }
        }
        for s in &self.series {
            xs.extend(
                s.unresolved
                    .iter()
                    .filter(|x| self.x_scale.to_plot(**x).is_some()),
            );
        }
        let range = |v: &[f64]| {
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (lo.is_finite() && hi.is_finite()).then_some((lo, hi))
        };
        let (x0, x1) = range(&xs)?;
        // Only unresolved points: an axis of one decade (or unit), for their markers.
        // The open markers of unresolved points sit in a band above the axes
        // ([`Figure::singular_lanes`]), not inside them: no headroom is needed.
        let (y0, y1) = range(&ys).unwrap_or(match self.y_scale {
            Scale::Log => (1.0, 10.0),
            _ => (0.0, 1.0),
        });
        Some((
            ticks::ticks(self.x_scale, x0, x1),
            ticks::ticks(self.y_scale, y0, y1),
        ))
    }

    /// The lanes of the band above the axes: one per curve with unresolved points.
    fn singular_lanes(&self) -> usize {
        self.series
            .iter()
            .filter(|s| !s.unresolved.is_empty())
            .count()
    }

    /// Draws the figure at `s` pixels per unit of the 900 x 600 layout; `vector` for a
    /// vector backend (SVG), which strokes thick lines itself.
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        s: f64,
        vector: bool,
        m: &Metrics,
    ) -> Result<(), DrawError>
    where
        DB::ErrorType: 'static,
    {
        let err = |e: DrawingAreaErrorKind<DB::ErrorType>| DrawError::Backend(e.to_string());
        let px = |v: f64| (v * s).round() as i32;
        root.fill(&WHITE).map_err(err)?;
        let (xt, yt) = self.axes().ok_or(DrawError::Empty)?;
        let (w, _) = root.dim_in_pixel();
        // The title is centred over the whole figure (plot and legend), in a smaller font
        // when it would not fit (over the plot alone a long title ran off the left edge),
        // and on more lines when even the smallest size does not.
        let text_w = |t: &str, size: f64| {
            root.estimate_text_size(t, &("sans-serif", px(size)).into_text_style(root))
                .map_or(0, |t| t.0 as i32)
        };
        let room = w as i32 - px(24.0);
        let mut title_size = m.title;
        while title_size - 1.0 >= m.title_min && text_w(&self.title, title_size) > room {
            title_size -= 1.0;
        }
        let title_lines = wrap(&self.title, |t| text_w(t, title_size) <= room);
        let body = if self.title.trim().is_empty() {
            // No title (`--title ""`): the axes start at the top margin.
            root.margin(px(8.0), 0, 0, 0)
        } else if title_lines.len() <= 1 {
            root.margin(px(8.0), 0, 0, 0)
                .titled(&self.title, ("sans-serif", px(title_size)))
                .map_err(err)?
        } else {
            let line_h = 1.25 * title_size;
            let style = ("sans-serif", px(title_size))
                .into_font()
                .into_text_style(root)
                .pos(Pos::new(HPos::Center, VPos::Center));
            for (i, line) in title_lines.iter().enumerate() {
                let y = 8.0 + line_h * (i as f64 + 0.5);
                root.draw(&Text::new(
                    line.clone(),
                    (w as i32 / 2, px(y)),
                    style.clone(),
                ))
                .map_err(err)?;
            }
            root.margin(px(12.0 + line_h * title_lines.len() as f64), 0, 0, 0)
        };
        // The legend under the axes, laid out once (the canvas was made this much taller
        // for it: [`Figure::canvas`]).
        let rows = m.legend_below.then(|| self.legend_rows(&body, s, m));
        let (area, legend_area) = if let Some(rows) = &rows {
            let legend_h = rows.height(m) * s;
            let body_h = body.dim_in_pixel().1 as i32;
            body.split_vertically(body_h - legend_h.round() as i32)
        } else {
            let legend_w = self.legend_width(&body, s, m).min(w as i32 * 45 / 100);
            body.split_horizontally(w as i32 - legend_w)
        };
        let label_font = ("sans-serif", px(m.tick));
        let widest = yt
            .labels
            .iter()
            .map(|l| {
                root.estimate_text_size(l, &label_font.into_text_style(root))
                    .map_or(0, |t| t.0)
            })
            .max()
            .unwrap_or(0);
        // The band of unresolved points above the axes: one lane of open markers per curve
        // that has some, and room for its label.
        let lanes = self.singular_lanes();
        let band = if lanes > 0 {
            LANE * lanes as f64 + 6.0
        } else {
            0.0
        };
        // A y label longer than the axes are tall goes on lines side by side (drawn below,
        // rotated), so that it never runs into the title or the x label.
        let axes_h = f64::from(area.dim_in_pixel().1) - (24.0 + band + 2.0 * m.tick + 20.0) * s;
        let y_lines = wrap(&self.y_label, |t| f64::from(text_w(t, m.axis)) <= axes_h);
        let y_line_h = 1.2 * m.axis * s;
        let y_extra = (y_lines.len().max(1) - 1) as f64 * y_line_h;
        let mut chart = ChartBuilder::on(&area)
            .margin(px(12.0))
            .margin_top(px(12.0 + band))
            .margin_right(px(6.0))
            .x_label_area_size(px(2.0 * m.tick + 20.0))
            .y_label_area_size(widest as i32 + px(m.axis + 22.0) + y_extra.round() as i32)
            .build_cartesian_2d(Axis(&xt), Axis(&yt))
            .map_err(err)?;
        // No two labels overlap: those that would are left out (`Ticks::without_overlaps`).
        let gap = 0.3 * m.tick * s;
        let label_w = |l: &str| {
            root.estimate_text_size(l, &label_font.into_text_style(root))
                .map_or(0.0, |t| f64::from(t.0))
        };
        let xt_shown = xt.without_overlaps(
            |v| f64::from(chart.backend_coord(&(v, yt.lo)).0),
            label_w,
            gap,
        );
        let yt_shown = yt.without_overlaps(
            |v| f64::from(chart.backend_coord(&(xt.lo, v)).1),
            |_| m.tick * s,
            gap,
        );
        let fx = |v: &f64| xt_shown.label_of(*v);
        let fy = |v: &f64| yt_shown.label_of(*v);
        let y_desc = if y_lines.len() > 1 { "" } else { &self.y_label };
        chart
            .configure_mesh()
            .x_desc(&self.x_label)
            .y_desc(y_desc)
            .x_label_formatter(&fx)
            .y_label_formatter(&fy)
            .label_style(label_font)
            .axis_desc_style(("sans-serif", px(m.axis)))
            .bold_line_style(BLACK.mix(0.18).stroke_width(px(1.0).max(1) as u32))
            .light_line_style(BLACK.mix(0.06).stroke_width(px(1.0).max(1) as u32))
            .axis_style(BLACK.stroke_width(px(1.0).max(1) as u32))
            .set_all_tick_mark_size(px(6.0))
            .draw()
            .map_err(err)?;
        if y_lines.len() > 1 {
            let (xs, ys) = chart.plotting_area().get_pixel_range();
            let (left, _) = area.get_pixel_range();
            let style = ("sans-serif", px(m.axis))
                .into_font()
                .transform(FontTransform::Rotate270)
                .into_text_style(root)
                .pos(Pos::new(HPos::Center, VPos::Center));
            let y_mid = (ys.start + ys.end) / 2;
            for (i, line) in y_lines.iter().enumerate() {
                let x = f64::from(left.start) + 12.0 * s + y_line_h * (i as f64 + 0.6);
                root.draw(&Text::new(
                    line.clone(),
                    (x.round() as i32, y_mid),
                    style.clone(),
                ))
                .map_err(err)?;
            }
            debug_assert!(xs.start > left.start);
        }
        let to_px = |p: (f64, f64)| {
            let c = chart.backend_coord(&p);
            (f64::from(c.0), f64::from(c.1))
        };
        // Minor tick marks on both axes, inward (the light grid lines continue them).
        let (x_lo, y_lo) = to_px((xt.lo, yt.lo));
        let minor_len = 3.5 * s;
        let tick = BLACK.stroke_width(px(1.0).max(1) as u32);
        for &x in &xt.minor {
            let (x, _) = to_px((x, yt.lo));
            root.draw(&PathElement::new(
                vec![ipt((x, y_lo)), ipt((x, y_lo - minor_len))],
                tick,
            ))
            .map_err(err)?;
        }
        for &y in &yt.minor {
            let (_, y) = to_px((xt.lo, y));
            root.draw(&PathElement::new(
                vec![ipt((x_lo, y)), ipt((x_lo + minor_len, y))],
                tick,
            ))
            .map_err(err)?;
        }
        // Bands under everything, then lines, bars and markers.
        for sr in &self.series {
            if let Some(Spread::Band(_)) = sr.spread {
                let (mut top, mut bottom) = (Vec::new(), Vec::new());
                for i in 0..sr.points.len() {
                    let (Some((x, _)), Some((lo, hi))) =
                        (sr.at(i, self.x_scale, self.y_scale), sr.spread_at(i))
                    else {
                        continue;
                    };
                    if let (Some(lo), Some(hi)) =
                        (self.y_scale.to_plot(lo), self.y_scale.to_plot(hi))
                    {
                        top.push(ipt(to_px((x, hi))));
                        bottom.push(ipt(to_px((x, lo))));
                    }
                }
                bottom.reverse();
                top.extend(bottom);
                if top.len() >= 4 {
                    root.draw(&Polygon::new(top, sr.color.mix(0.18).filled()))
                        .map_err(err)?;
                }
            }
        }
        let lw = 2.0 * s;
        // Each curve with unresolved points gets its own lane in the band above the top
        // edge, so that two curves unresolved at one x stay apart; the band is labelled.
        let mut lane = 0.0;
        let (_, y_top) = to_px((xt.lo, yt.hi));
        let lane_y = |lane: f64| y_top - (6.0 + LANE * (lane + 0.5)) * s;
        if lanes > 0 {
            let style = ("sans-serif", px(m.tick))
                .into_font()
                .into_text_style(root)
                .pos(Pos::new(HPos::Right, VPos::Center));
            let (x_left, _) = to_px((xt.lo, yt.hi));
            let mid = lane_y((lanes as f64 - 1.0) / 2.0);
            root.draw(&Text::new(
                "singular".to_string(),
                (px(x_left / s - 6.0), mid.round() as i32),
                style,
            ))
            .map_err(err)?;
        }
        for sr in &self.series {
            let pts: Vec<(f64, f64)> = (0..sr.points.len())
                .filter_map(|i| sr.at(i, self.x_scale, self.y_scale))
                .map(to_px)
                .collect();
            draw_line(root, &pts, sr.dash, sr.color, lw, vector).map_err(err)?;
            if let Some(Spread::Bars(_)) = sr.spread {
                for i in 0..sr.points.len() {
                    let (Some((x, _)), Some((lo, hi))) =
                        (sr.at(i, self.x_scale, self.y_scale), sr.spread_at(i))
                    else {
                        continue;
                    };
                    if let (Some(lo), Some(hi)) =
                        (self.y_scale.to_plot(lo), self.y_scale.to_plot(hi))
                    {
                        let (a, b) = (to_px((x, lo)), to_px((x, hi)));
                        draw_bar(root, a, b, sr.color, s).map_err(err)?;
                    }
                }
            }
            if let Some(m) = sr.marker {
                let every = pts.len().div_ceil(MAX_MARKERS).max(1);
                for p in pts.iter().step_by(every) {
                    draw_marker(root, *p, m, sr.color, s, false).map_err(err)?;
                }
            }
            // Open markers in the band above the axes where a point has no value.
            let m = sr.marker.unwrap_or(Marker::Circle);
            for &x in &sr.unresolved {
                if let Some(x) = self.x_scale.to_plot(x) {
                    let (px, _) = to_px((x, yt.hi));
                    draw_marker(root, (px, lane_y(lane)), m, sr.color, s, true).map_err(err)?;
                }
            }
            if !sr.unresolved.is_empty() {
                lane += 1.0;
            }
        }
        if let Some(rows) = &rows {
            self.draw_legend_below(&legend_area, s, vector, m, rows)
                .map_err(err)
        } else {
            self.draw_legend(&legend_area, s, vector, m).map_err(err)
        }
    }

    /// The series the legend names: those with a label.
    fn in_legend(&self) -> impl Iterator<Item = &Series> {
        self.series.iter().filter(|s| !s.label.is_empty())
    }

    /// The legend's width in pixels: the widest label and its line sample.
    fn legend_width<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        s: f64,
        m: &Metrics,
    ) -> i32 {
        let font = ("sans-serif", (m.legend * s).round() as i32).into_text_style(root);
        let note = ("sans-serif", (m.note * s).round() as i32).into_text_style(root);
        let labels = self.in_legend().map(|x| (x.label.as_str(), &font));
        let notes = self.note.iter().flat_map(|n| n.lines()).map(|l| (l, &note));
        let widest = labels
            .chain(notes)
            .map(|(l, f)| root.estimate_text_size(l, f).map_or(0, |t| t.0))
            .max()
            .unwrap_or(0);
        widest as i32 + ((m.sample + 40.0) * s) as i32
    }

    /// The legend under the axes: its entries in as many columns as fit the width, then
    /// the note wrapped to the width.
    fn legend_rows<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        s: f64,
        m: &Metrics,
    ) -> LegendRows {
        let font = ("sans-serif", (m.legend * s).round() as i32).into_text_style(area);
        let note = ("sans-serif", (m.note * s).round() as i32).into_text_style(area);
        let width = f64::from(area.dim_in_pixel().0) / s - 12.0;
        let entry = |label: &str| {
            m.sample
                + 8.0
                + f64::from(area.estimate_text_size(label, &font).map_or(0, |t| t.0)) / s
                + 18.0
        };
        // As many columns as fit, each as wide as its widest entry (row-major order).
        let widths: Vec<f64> = self.in_legend().map(|sr| entry(&sr.label)).collect();
        let column_widths = |k: usize| -> Vec<f64> {
            (0..k)
                .map(|c| {
                    widths
                        .iter()
                        .skip(c)
                        .step_by(k)
                        .copied()
                        .fold(0.0, f64::max)
                })
                .collect()
        };
        let columns = (1..=widths.len().max(1))
            .rev()
            .find(|&k| column_widths(k).iter().sum::<f64>() <= width)
            .unwrap_or(1);
        let mut column_x = vec![0.0];
        for w in column_widths(columns) {
            column_x.push(column_x.last().copied().unwrap_or(0.0) + w);
        }
        column_x.truncate(columns);
        let fits =
            |t: &str| f64::from(area.estimate_text_size(t, &note).map_or(0, |t| t.0)) / s <= width;
        let note_lines = self
            .note
            .iter()
            .flat_map(|n| n.lines())
            .flat_map(|l| wrap(l, fits))
            .collect();
        LegendRows {
            columns,
            column_x,
            entries: self.in_legend().count().div_ceil(columns),
            note_lines,
        }
    }

    /// The legend in rows under the axes (the column layout).
    fn draw_legend_below<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        s: f64,
        vector: bool,
        m: &Metrics,
        rows: &LegendRows,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        let centred = |size: f64| left_centred(area, size * s);
        let pen = LegendPen {
            s,
            vector,
            m,
            font: centred(m.legend),
        };
        for (i, sr) in self.in_legend().enumerate() {
            let (r, c) = (i / rows.columns, i % rows.columns);
            let x0 = (6.0 + rows.column_x[c]) * s;
            let y = (m.row * (r as f64 + 0.5) + 4.0) * s;
            self.legend_entry(area, sr, (x0, y), &pen)?;
        }
        let note = centred(m.note);
        let mut y = (m.row * (rows.entries as f64 + 0.3) + 4.0 + 0.5 * 0.85 * m.row) * s;
        for line in &rows.note_lines {
            area.draw(&Text::new(line.clone(), ipt((6.0 * s, y)), note.clone()))?;
            y += 0.85 * m.row * s;
        }
        Ok(())
    }

    /// The legend: one row per curve (line sample with its marker and spread, then the
    /// label), then the note.
    fn draw_legend<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        s: f64,
        vector: bool,
        m: &Metrics,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        let centred = |size: f64| left_centred(area, size * s);
        let pen = LegendPen {
            s,
            vector,
            m,
            font: centred(m.legend),
        };
        let row = m.row * s;
        let x0 = 6.0 * s;
        let mut y = 62.0 * s;
        for sr in self.in_legend() {
            self.legend_entry(area, sr, (x0, y), &pen)?;
            y += row;
        }
        let note = centred(m.note);
        y += 0.5 * row;
        for line in self.note.iter().flat_map(|n| n.lines()) {
            area.draw(&Text::new(line.to_string(), ipt((x0, y)), note.clone()))?;
            y += 0.85 * row;
        }
        Ok(())
    }

    /// One legend entry at `(x0, y)`: the line sample with its spread and marker, then the
    /// label, drawn with `pen`.
    fn legend_entry<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        sr: &Series,
        (x0, y): (f64, f64),
        pen: &LegendPen<'_>,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        let LegendPen { s, vector, m, font } = pen;
        let (s, vector) = (*s, *vector);
        let sample = m.sample * s;
        let (a, b) = ((x0, y), (x0 + sample, y));
        match sr.spread {
            Some(Spread::Band(_)) => area.draw(&Rectangle::new(
                [ipt((a.0, y - 7.0 * s)), ipt((b.0, y + 7.0 * s))],
                sr.color.mix(0.18).filled(),
            ))?,
            Some(Spread::Bars(_)) => {
                let c = x0 + sample / 2.0;
                draw_bar(area, (c, y - 8.0 * s), (c, y + 8.0 * s), sr.color, s)?
            }
            None => {}
        }
        draw_line(area, &[a, b], sr.dash, sr.color, 2.0 * s, vector)?;
        if let Some(mk) = sr.marker {
            draw_marker(area, (x0 + sample / 2.0, y), mk, sr.color, s, false)?;
        }
        area.draw(&Text::new(
            sr.label.clone(),
            ipt((x0 + sample + 8.0 * s, y)),
            font.clone(),
        ))
    }
}

/// How legend entries are drawn: the figure's scale `s` (pixels per point), whether the
/// output is vector (SVG, PDF), the layout's metrics and the labels' font.
struct LegendPen<'a> {
    s: f64,
    vector: bool,
    m: &'a Metrics,
    font: TextStyle<'a>,
}

/// The legend's text style: `px` pixels, anchored at its left end, centred vertically.
fn left_centred<'a, DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, px: f64) -> TextStyle<'a> {
    ("sans-serif", px.round() as i32)
        .into_font()
        .into_text_style(area)
        .pos(Pos::new(HPos::Left, VPos::Center))
}

/// How the legend under the axes is laid out.
struct LegendRows {
    columns: usize,
    /// Each column's left edge, in layout units.
    column_x: Vec<f64>,
    /// Rows of entries.
    entries: usize,
    note_lines: Vec<String>,
}

impl LegendRows {
    /// The legend's height in layout units.
    fn height(&self, m: &Metrics) -> f64 {
        let note = if self.note_lines.is_empty() {
            0.0
        } else {
            (0.3 + 0.85 * self.note_lines.len() as f64) * m.row
        };
        m.row * self.entries as f64 + note + 10.0
    }
}

/// `text` broken at spaces into lines that `fits` accepts (a word longer than a line
/// stands alone).
/// `text` without control characters: a tab, carriage return (and a line break unless
/// `lines`) becomes a space, any other U+FFFD.
fn plain(text: &str, lines: bool) -> String {
    text.chars()
        .map(|c| match c {
            '\n' if lines => c,
            '\t' | '\r' | '\n' => ' ',
            c if c.is_control() => '\u{FFFD}',
            c => c,
        })
        .collect()
}

fn wrap(text: &str, fits: impl Fn(&str) -> bool) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let candidate = if line.is_empty() {
            word.to_string()
        } else {
            format!("{line} {word}")
        };
        if line.is_empty() || fits(&candidate) {
            line = candidate;
        } else {
            lines.push(std::mem::replace(&mut line, word.to_string()));
        }
    }
    lines.push(line);
    lines
}

/// An axis of [`Ticks`] as plotters sees it: linear in the plotted coordinate, its major
/// ticks bold (labelled) and its minor ticks light.
struct Axis<'a>(&'a Ticks);

impl Ranged for Axis<'_> {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let f = (v - self.0.lo) / (self.0.hi - self.0.lo);
        limit.0 + (f64::from(limit.1 - limit.0) * f).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.0.minor.clone()
        } else {
            self.0.major.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.0.lo..self.0.hi
    }
}

/// A pixel position rounded to the backend's integers.
fn ipt(p: (f64, f64)) -> (i32, i32) {
    (p.0.round() as i32, p.1.round() as i32)
}

/// The polyline `pts` (pixels of `area`) in style `dash`, `w` pixels wide.
fn draw_line<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    pts: &[(f64, f64)],
    dash: Dash,
    color: RGBColor,
    w: f64,
    vector: bool,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    for piece in strokes::pieces(pts, dash, w) {
        match piece {
            Piece::Segment(v) => stroke(area, &v, color, w, vector)?,
            Piece::Dot(p) => area.draw(&Circle::new(
                ipt(p),
                (0.75 * w).round().max(1.0) as i32,
                color.filled(),
            ))?,
        }
    }
    Ok(())
}

/// The polyline `v`, `w` pixels wide. A vector backend strokes it as one path; on a
/// bitmap every pixel within `w / 2` of a segment is painted, its edge anti-aliased by
/// coverage, with round caps and joins: plotters' own thick bitmap lines (a polygon fill)
/// come out one pixel thin on segments near 45 degrees.
fn stroke<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    v: &[(f64, f64)],
    color: RGBColor,
    w: f64,
    vector: bool,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    if vector {
        let style = color.stroke_width(w.round().max(1.0) as u32);
        return area.draw(&PathElement::new(
            v.iter().copied().map(ipt).collect::<Vec<_>>(),
            style,
        ));
    }
    let h = w / 2.0;
    for seg in v.windows(2) {
        let (a, b) = (seg[0], seg[1]);
        let (dx, dy) = (b.0 - a.0, b.1 - a.1);
        let len2 = dx * dx + dy * dy;
        let x0 = (a.0.min(b.0) - h - 1.0).floor() as i32;
        let x1 = (a.0.max(b.0) + h + 1.0).ceil() as i32;
        let y0 = (a.1.min(b.1) - h - 1.0).floor() as i32;
        let y1 = (a.1.max(b.1) + h + 1.0).ceil() as i32;
        for y in y0..=y1 {
            for x in x0..=x1 {
                // Distance from the pixel's centre to the segment.
                let (px, py) = (f64::from(x) + 0.5, f64::from(y) + 0.5);
                let t = if len2 > 0.0 {
                    (((px - a.0) * dx + (py - a.1) * dy) / len2).clamp(0.0, 1.0)
                } else {
                    0.0
                };
                let d = ((px - a.0 - t * dx).powi(2) + (py - a.1 - t * dy).powi(2)).sqrt();
                let cover = (h + 0.5 - d).clamp(0.0, 1.0);
                if cover > 0.0 {
                    area.draw_pixel((x, y), &color.mix(cover))?;
                }
            }
        }
    }
    Ok(())
}

/// An error bar from `a` to `b` (pixels of `area`) with caps.
fn draw_bar<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    a: (f64, f64),
    b: (f64, f64),
    color: RGBColor,
    s: f64,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let style = color.stroke_width((1.2 * s).round().max(1.0) as u32);
    let cap = 3.5 * s;
    area.draw(&PathElement::new(vec![ipt(a), ipt(b)], style))?;
    for p in [a, b] {
        area.draw(&PathElement::new(
            vec![ipt((p.0 - cap, p.1)), ipt((p.0 + cap, p.1))],
            style,
        ))?;
    }
    Ok(())
}

/// Marker `m` centred at `p` (pixels of `area`): filled, with a white rim so it reads over
/// lines; `open`: a white inside in a coloured rim (a point without a value).
fn draw_marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    p: (f64, f64),
    m: Marker,
    color: RGBColor,
    s: f64,
    open: bool,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let (x, y) = p;
    let r = 4.0 * s;
    let shape = |r: f64| -> Vec<(i32, i32)> {
        match m {
            Marker::Circle => Vec::new(),
            Marker::Square => vec![
                ipt((x - 0.85 * r, y - 0.85 * r)),
                ipt((x + 0.85 * r, y - 0.85 * r)),
                ipt((x + 0.85 * r, y + 0.85 * r)),
                ipt((x - 0.85 * r, y + 0.85 * r)),
            ],
            Marker::Triangle => vec![
                ipt((x, y - 1.15 * r)),
                ipt((x + r, y + 0.65 * r)),
                ipt((x - r, y + 0.65 * r)),
            ],
            Marker::Diamond => vec![
                ipt((x, y - 1.2 * r)),
                ipt((x + 0.9 * r, y)),
                ipt((x, y + 1.2 * r)),
                ipt((x - 0.9 * r, y)),
            ],
        }
    };
    let rim = r + 1.2 * s;
    let layers = if open {
        [(rim + 0.6 * s, color), (r - 0.6 * s, WHITE)]
    } else {
        [(rim, WHITE), (r, color)]
    };
    for (radius, c) in layers {
        if m == Marker::Circle {
            area.draw(&Circle::new(ipt((x, y)), radius.round() as i32, c.filled()))?;
        } else {
            area.draw(&Polygon::new(shape(radius), c.filled()))?;
        }
    }
    Ok(())
}

/// A drawing error of the figure file `path`.
/// Why a figure cannot be drawn.
#[derive(Debug)]
enum DrawError {
    /// No series has a point to draw.
    Empty,
    /// The drawing backend's error (plotters' message: its type differs per backend).
    Backend(String),
}

impl std::fmt::Display for DrawError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Empty => f.write_str("nothing to plot"),
            Self::Backend(message) => f.write_str(message),
        }
    }
}

fn plot_error(path: &Path, message: impl ToString) -> ntk_files::Error {
    ntk_files::Error::Plot {
        path: path.to_path_buf(),
        message: message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figure(spread: Option<Spread>) -> Figure {
        Figure {
            title: "κ against depth L".into(),
            x_label: "depth L".into(),
            y_label: "NTK condition number κ".into(),
            x_scale: Scale::Integer,
            y_scale: Scale::Log,
            series: vec![Series {
                label: "relu".into(),
                points: vec![(0.0, 1e8), (1.0, 4e4), (2.0, 1.7e4)],
                spread,
                color: PALETTE[1],
                dash: Dash::DashDot,
                marker: Some(Marker::Diamond),
                unresolved: vec![3.0],
            }],
            note: Some("band: min..max over seeds".into()),
        }
    }

    #[test]
    fn a_figure_is_written_as_png_and_svg() {
        let dir = tempfile::tempdir().unwrap();
        let stem = dir.path().join("fig");
        let band = Spread::Band(vec![(9e7, 1.1e8), (3e4, 5e4), (1.5e4, 2e4)]);
        figure(Some(band)).save(&stem).unwrap();
        let png = image_size(&stem.with_extension("png"));
        assert_eq!(png, (1800, 1200));
        let svg = std::fs::read_to_string(stem.with_extension("svg")).unwrap();
        assert!(svg.contains("10⁸") && svg.contains("10⁴"), "decade labels");
        assert!(svg.contains("κ"));
        // The unresolved point at x = 3 widens the x axis to it.
        let labels: Vec<&str> = svg.lines().map(str::trim).collect();
        assert!(
            labels.contains(&"3"),
            "the x axis reaches the unresolved point"
        );
    }

    /// A figure whose every point is unresolved is still drawn (its markers and note).
    #[test]
    fn only_unresolved_points_still_make_a_figure() {
        let dir = tempfile::tempdir().unwrap();
        let mut f = figure(None);
        f.series[0].points.clear();
        f.series[0].unresolved = vec![1.0, 2.0];
        f.save(&dir.path().join("fig")).unwrap();
    }

    /// Unresolved points are drawn in a band above the axes, labelled `singular`, and never
    /// change the value axis (no headroom for them inside it); no band without them; an
    /// empty title draws none.
    #[test]
    fn unresolved_points_sit_in_a_labelled_band_above_the_axes() {
        let dir = tempfile::tempdir().unwrap();
        let stem = dir.path().join("fig");
        let mut plain = figure(None);
        plain.series[0].unresolved.clear();
        let with = figure(None);
        assert_eq!(
            plain.axes().unwrap().1.hi,
            with.axes().unwrap().1.hi,
            "the value axis is the data's"
        );
        with.save(&stem).unwrap();
        let svg = std::fs::read_to_string(stem.with_extension("svg")).unwrap();
        assert!(svg.contains("\nsingular\n"), "{svg}");
        plain.save(&stem).unwrap();
        let svg = std::fs::read_to_string(stem.with_extension("svg")).unwrap();
        assert!(!svg.contains("\nsingular\n"));
        let mut untitled = figure(None);
        untitled.title = String::new();
        untitled.save(&stem).unwrap();
        assert_eq!(
            super::title_as_asked(Some("{what}, 3 seeds"), || "own".into(), "κ"),
            "κ, 3 seeds"
        );
        assert_eq!(super::title_as_asked(None, || "own".into(), "κ"), "own");
    }

    #[test]
    fn a_spread_of_the_wrong_length_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let bad = figure(Some(Spread::Bars(vec![(1.0, 2.0)])));
        let e = bad.save(&dir.path().join("fig")).unwrap_err().to_string();
        assert!(e.contains("1 spreads for 3 points"), "{e}");
    }

    /// The column layout: half the canvas, the legend under the axes (rows of entries), a
    /// title too wide for one line on two, a y label taller than the axes on lines side by
    /// side, and the note in a caption file beside the figure instead of on the page.
    #[test]
    fn a_column_figure_has_its_size_and_wraps_what_is_too_wide() {
        let dir = tempfile::tempdir().unwrap();
        let stem = dir.path().join("fig");
        let mut f = figure(None);
        f.title = "MNIST, all 60,000 training images: the NTK's condition number".into();
        f.y_label = "training loss (cross-entropy, log scale), mean over the seeds".into();
        f.note = Some("mean over 5 seeds; band: min..max over seeds; open: singular".into());
        f.save_as(&stem, Layout::Column).unwrap();
        // 340 units for the title and axes, the legend's row (one entry) added below; the
        // PNG at twice the size.
        let (w, h) = image_size(&stem.with_extension("png"));
        assert_eq!(w, 1020);
        assert!(h > 2 * 340 && h < 2 * 400, "{h}");
        let svg = std::fs::read_to_string(stem.with_extension("svg")).unwrap();
        assert!(svg.contains("width=\"510\""));
        // Neither the title nor the y label is drawn whole on one line.
        assert!(!svg.contains(&f.title), "the title is wrapped");
        assert!(svg.contains("MNIST,"));
        assert!(!svg.contains(&f.y_label), "the y label is wrapped");
        assert!(svg.contains("\ntraining loss"), "its first line is drawn");
        // The note is the caption's, after the title; the page does not hold it.
        assert!(!svg.contains("mean over 5 seeds"));
        let caption = std::fs::read_to_string(dir.path().join("fig.caption.txt")).unwrap();
        assert_eq!(
            caption,
            format!("{}\n\n{}\n", f.title, f.note.as_deref().unwrap())
        );
        // Every text's em is at least 8 pt once the 510 units are a column's 244.8 pt.
        for size in svg.split("font-size=\"").skip(1) {
            let em: f64 = size[..size.find('"').unwrap()].parse().unwrap();
            assert!(
                em * layout::COLUMN_WIDTH_PT / 510.0 >= 8.0,
                "font-size {em}"
            );
        }
        // Drawn again for a screen, the figure carries its note and the caption goes.
        f.save_as(&stem, Layout::Screen).unwrap();
        let svg = std::fs::read_to_string(stem.with_extension("svg")).unwrap();
        assert!(svg.contains("mean over 5 seeds"));
        assert!(!dir.path().join("fig.caption.txt").exists());
    }

    #[test]
    fn control_characters_in_texts_never_reach_the_svg() {
        let dir = tempfile::tempdir().unwrap();
        let mut f = figure(None);
        f.title = "a\u{1}b<c&d\u{1b}[31m\tq\u{7f}".into();
        f.x_label = "x\u{0}".into();
        f.series[0].label = "s\u{8}".into();
        f.note = Some("one\u{c}\ntwo".into());
        for layout in [Layout::Screen, Layout::Column] {
            f.save_as(&dir.path().join("f"), layout).unwrap();
            let svg = std::fs::read_to_string(dir.path().join("f.svg")).unwrap();
            let bad: Vec<char> = svg
                .chars()
                .filter(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
                .collect();
            assert!(bad.is_empty(), "{bad:?}");
            assert!(svg.contains("&lt;c&amp;d"), "the markup stays escaped");
        }
    }

    /// The tick labels of an SVG: every `<text>` at the tick font size (plotters writes a
    /// pixel size `px` as `px / 1.24`), as (text, left, top, width, height) boxes in SVG
    /// units, the width estimated at 0.62 em a character (DejaVu Sans's digits are 0.64 em,
    /// its superscripts and `×` narrower).
    fn tick_label_boxes(svg: &str, tick_px: f64) -> Vec<(String, f64, f64, f64, f64)> {
        let attr = |tag: &str, name: &str| -> Option<String> {
            let at = tag.find(&format!(" {name}=\""))? + name.len() + 3;
            tag[at..].split('"').next().map(str::to_string)
        };
        let num = |tag: &str, name: &str| attr(tag, name).and_then(|v| v.parse::<f64>().ok());
        let mut boxes = Vec::new();
        for part in svg.split("<text").skip(1) {
            let (tag, rest) = part.split_once('>').unwrap();
            let text = rest.split("</text>").next().unwrap().trim().to_string();
            let Some(em) = num(tag, "font-size") else {
                continue;
            };
            if (em * 1.24 - tick_px).abs() > 0.05 || text.is_empty() || tag.contains("rotate") {
                continue;
            }
            let (x, y) = (num(tag, "x").unwrap(), num(tag, "y").unwrap());
            let w = 0.62 * em * text.chars().count() as f64;
            let left = match attr(tag, "text-anchor").as_deref() {
                Some("end") => x - w,
                Some("middle") => x - w / 2.0,
                _ => x,
            };
            // `dy="0.76em"`: y is the top; `0.5ex`: the middle; `-0.5ex`: the bottom.
            let top = match attr(tag, "dy").as_deref() {
                Some("0.76em") => y,
                Some("-0.5ex") => y - em,
                _ => y - 0.5 * em,
            };
            boxes.push((text, left, top, w, em));
        }
        boxes
    }

    /// Issue 45, D5: no two tick labels overlap in any layout, on the drawn SVG's text
    /// positions: log axes over about one decade (a column figure drew `10³`, `9×10²` and
    /// `8×10²` 9 px apart at a 17 px font), over two decades, and a linear axis.
    #[test]
    fn no_two_tick_labels_overlap_in_any_layout() {
        let dir = tempfile::tempdir().unwrap();
        for (name, ys, y_scale, xs, x_scale) in [
            (
                "one decade",
                [780.0, 1050.0],
                Scale::Log,
                [1.0, 20.0],
                Scale::Integer,
            ),
            (
                "two decades",
                [30.0, 2500.0],
                Scale::Log,
                [0.5, 7e4],
                Scale::Log,
            ),
            (
                "linear",
                [0.0, 1.0],
                Scale::Linear,
                [800.0, 1100.0],
                Scale::Log,
            ),
        ] {
            for layout in [Layout::Screen, Layout::Column] {
                let mut f = figure(None);
                f.series[0].points = vec![(xs[0], ys[0]), (xs[1], ys[1])];
                f.series[0].unresolved.clear();
                (f.x_scale, f.y_scale) = (x_scale, y_scale);
                let stem = dir.path().join("ticks");
                f.save_as(&stem, layout).unwrap();
                let svg = std::fs::read_to_string(stem.with_extension("svg")).unwrap();
                let size = Metrics::of(layout).tick;
                let boxes = tick_label_boxes(&svg, size);
                assert!(boxes.len() >= 4, "{name} {layout:?}: {boxes:?}");
                for (i, a) in boxes.iter().enumerate() {
                    for b in &boxes[i + 1..] {
                        let apart = a.1 + a.3 <= b.1
                            || b.1 + b.3 <= a.1
                            || a.2 + a.4 <= b.2
                            || b.2 + b.4 <= a.2;
                        assert!(apart, "{name} {layout:?}: {a:?} overlaps {b:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn wrap_breaks_at_spaces_and_keeps_long_words_whole() {
        let fits = |t: &str| t.len() <= 10;
        assert_eq!(wrap("ab cd ef gh ij", fits), ["ab cd ef", "gh ij"]);
        assert_eq!(wrap("abcdefghijklm xy", fits), ["abcdefghijklm", "xy"]);
        assert_eq!(wrap("short", fits), ["short"]);
    }

    /// Width and height from a PNG's IHDR chunk.
    fn image_size(path: &Path) -> (u32, u32) {
        let b = std::fs::read(path).unwrap();
        let be = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        (be(16), be(20))
    }
}
