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

mod drawn;
pub mod layout;
mod legend;
mod marks;
mod pdf;
mod strokes;
pub mod style;
pub mod ticks;

use std::path::Path;
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;
pub use plotters::style::RGBColor;
use plotters::style::text_anchor::{HPos, Pos, VPos};

pub use drawn::{Drawn, captioned, save_all};
pub use layout::Layout;
use layout::Metrics;
use marks::{Axis, LINE_WIDTH, draw_bar, draw_line, draw_marker, ipt};
pub use strokes::{Dash, MEASURED};
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
    /// The marker shapes, in order.
    pub const ALL: [Self; 4] = [Self::Circle, Self::Square, Self::Triangle, Self::Diamond];

    /// The `i`-th marker shape (cycling).
    pub fn nth(i: usize) -> Self {
        Self::ALL[i % Self::ALL.len()]
    }

    /// The shape `k` places after this one (cycling).
    pub fn after(self, k: usize) -> Self {
        let at = Self::ALL.iter().position(|m| *m == self).unwrap_or(0);
        Self::nth(at + k)
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

/// The files [`Figure::save_as`] writes for a stem, after the stem: `.png`, `.svg`, `.pdf`
/// and, in a column, `.caption.txt`.
pub const FIGURE_FILES: [&str; 4] = [".png", ".svg", ".pdf", ".caption.txt"];

/// Whether `name` is one of the files a figure of `stem` is saved as ([`FIGURE_FILES`]):
/// what a command that draws it may clean up after a dead writer, and no other name.
pub fn is_figure_file(name: &str, stem: &str) -> bool {
    name.strip_prefix(stem)
        .is_some_and(|ext| FIGURE_FILES.contains(&ext))
}

/// Checks, before any work, the places in `dir` of the files a figure command writes: the
/// tables named in `tables` and the figures of `stems` ([`is_figure_file`]), each a place
/// it replaces ([`ntk_files::places::check_replaced_in`]). Forty-fifth hostile round, D2:
/// `gmap`, `activations`, `transfer` and `fig1` checked each only as they wrote it, after
/// their measurements and the earlier files. A file there at one of those names must be of
/// the kind the command writes (`ntk_files::format`: a table whose first line begins with
/// its header's first name, one of `heads[i]` for `tables[i]`; a PNG, SVG or PDF by its first
/// bytes), else it is the user's and refused by name (ninety-eighth hostile round, D5: a
/// user's `gmap.csv`, `transfer_norm.png`, `activations.svg` were replaced, rc 0).
pub fn check_places(
    dir: &Path,
    tables: &[&str],
    heads: &[&[&str]],
    stems: &[&str],
) -> ntk_files::Result<()> {
    ntk_files::places::check_replaced_in(dir, &|f: &str| {
        tables.contains(&f) || stems.iter().any(|s| is_figure_file(f, s))
    })?;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .collect();
    names.sort();
    for name in names {
        let path = dir.join(&name);
        let why = match tables.iter().position(|t| *t == name) {
            Some(i) => ntk_files::format::not_a_table_of(&path, heads[i]),
            None => match stems.iter().find_map(|s| name.strip_prefix(s)) {
                Some(ext) if FIGURE_FILES.contains(&ext) => {
                    ntk_files::format::not_of_its_format(&path)
                }
                _ => continue,
            },
        };
        if let Some(why) = why {
            return Err(ntk_files::Error::OutputPath {
                path,
                why: format!(
                    "{why}, so not a file this command wrote: a file of yours? Move it, or \
                     choose another --out (nothing was written)"
                ),
            });
        }
    }
    Ok(())
}

/// Removes a dead writer's leftovers in `dir` of the files a command writes there: the
/// tables named in `tables` and the figures of `stems` ([`is_figure_file`]); a file of
/// another name is the user's, whatever it looks like (`ntk_files::outset::clean_dir`).
/// Every command that writes figures calls it before it writes (twenty-ninth hostile
/// round, N1: `fig1`, `gmap`, `transfer`, `activations` and `ntk-train plot` left a killed
/// writer's files for good). Returns how many it removed.
pub fn clean_leftovers(dir: &Path, tables: &[&str], stems: &[&str]) -> usize {
    ntk_files::outset::clean_dir(dir, None, &|f: &str| {
        tables.contains(&f) || stems.iter().any(|s| is_figure_file(f, s))
    })
}

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

    /// [`Figure::save_as`] drawing the same figure but writing no `stem.caption.txt`: the
    /// caption standing there is kept as it is (a user's, or one edited for a paper: the
    /// tools' collect and plot keep it where their record does not prove it theirs as
    /// written). In a column the note is not drawn in any case; a screen figure draws it.
    pub fn save_keeping_caption(&self, stem: &Path, layout: Layout) -> ntk_files::Result<()> {
        let mut drawn = self.plain_text();
        if layout == Layout::Column {
            drawn.note = None;
        }
        drawn.save_plain(stem, layout)
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

    /// Whether a series has a point to draw on the figure's scales (a finite value; a
    /// positive one on a log scale): [`Figure::save_as`] refuses a figure without one
    /// ("nothing to plot").
    pub fn is_drawable(&self) -> bool {
        self.axes().is_some()
    }

    /// Whether [`Figure::save_as`] in `layout` writes `stem.caption.txt`: in a column, where
    /// the figure has a note.
    pub fn writes_caption(&self, layout: Layout) -> bool {
        layout == Layout::Column && self.note.is_some()
    }

    /// [`Figure::save_as`] of a figure whose texts are [`Figure::plain_text`]'s. In a
    /// column the note is not drawn: it goes, after the title, into `stem.caption.txt`
    /// beside the figure (the text of a paper's caption), so that the axes keep the page;
    /// a screen figure draws it under its legend. An older caption of that stem is left to
    /// the tools' collect and plot, which remove it only where their record proves it theirs
    /// as written (eighty-ninth hostile round, D5: it was removed whatever wrote it, a user's
    /// own caption and one edited for a paper included).
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
                .map_err(|e| write_error(&caption, e))?;
            let mut drawn = self.clone();
            drawn.note = None;
            return drawn.draw_files(stem, layout);
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
        // The pixels are drawn into memory and encoded there (`png_bytes`), so the PNG is
        // written as every other file, and a full disk is the same plain message at it
        // (fifty-fourth round N1: plotters' encoder printed its error's debug form).
        let (w, h) = (2 * size.0, 2 * size.1);
        let mut pixels = vec![0u8; 3 * w as usize * h as usize];
        {
            let root = BitMapBackend::with_buffer(&mut pixels, (w, h)).into_drawing_area();
            self.draw(&root, 2.0, false, &m)
                .map_err(|e| plot_error(&png, e))?;
            root.present().map_err(|e| plot_error(&png, e))?;
        }
        let bytes = png_bytes(&pixels, (w, h)).map_err(|e| plot_error(&png, e))?;
        ntk_files::io::atomic_write(&png, &bytes).map_err(|e| write_error(&png, e))?;
        let mut text = String::new();
        {
            let root = SVGBackend::with_string(&mut text, size).into_drawing_area();
            self.draw(&root, 1.0, true, &m)
                .map_err(|e| plot_error(&svg, e))?;
            root.present().map_err(|e| plot_error(&svg, e))?;
        }
        ntk_files::io::atomic_write(&svg, text.as_bytes()).map_err(|e| write_error(&svg, e))?;
        let pdf = stem.with_extension("pdf");
        let mut bytes = Vec::new();
        {
            let root =
                pdf::PdfBackend::new(&mut bytes, size, m.pdf_pt_per_unit, FONT).into_drawing_area();
            self.draw(&root, 1.0, true, &m)
                .map_err(|e| plot_error(&pdf, e))?;
            root.present().map_err(|e| plot_error(&pdf, e))?;
        }
        ntk_files::io::atomic_write(&pdf, &bytes).map_err(|e| write_error(&pdf, e))
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
            let (_, ys) = chart.plotting_area().get_pixel_range();
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
        let lw = LINE_WIDTH * s;
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
}

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

/// `text` broken at spaces into lines that `fits` accepts (a word longer than a line
/// stands alone).
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

/// A drawing error of the figure file `path`.
/// A figure's file that cannot be written: its path once, also where the refusal names it
/// (a FIFO at `gmap.svg`; forty-fifth hostile round, D2: `gmap.svg: gmap.svg: is a FIFO`).
/// An 8-bit RGB image (`pixels`, rows top to bottom) as PNG bytes, with the compression and
/// adaptive row filters plotters' own encoder used.
fn png_bytes(pixels: &[u8], (w, h): (u32, u32)) -> Result<Vec<u8>, png::EncodingError> {
    let mut bytes = Vec::new();
    let mut encoder = png::Encoder::new(&mut bytes, w, h);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_adaptive_filter(png::AdaptiveFilterType::Adaptive);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(pixels)?;
    writer.finish()?;
    Ok(bytes)
}

fn write_error(path: &Path, source: std::io::Error) -> ntk_files::Error {
    ntk_files::Error::Write {
        path: path.to_path_buf(),
        source,
    }
}

fn plot_error(path: &Path, message: impl ToString) -> ntk_files::Error {
    ntk_files::Error::Plot {
        path: path.to_path_buf(),
        message: message.to_string(),
    }
}

#[cfg(test)]
mod tests;
