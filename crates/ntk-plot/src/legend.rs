//! The legend of a [`Figure`]: one entry per labelled curve (its line sample with spread and
//! marker, then the label), at the right of the axes for a screen or in rows under them in
//! a column ([`LegendRows`]), then the note where the figure carries it.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::layout::Metrics;
use crate::marks::{LINE_WIDTH, MARKER_RIM, draw_bar, draw_marker, draw_pieces, ipt};
use crate::strokes::{legend_length, legend_pieces};
use crate::{Figure, Series, Spread, wrap};

/// How far a series' marker covers its legend sample on each side of the middle, in layout
/// units: its white rim, or nothing without a marker.
fn halo(sr: &Series) -> f64 {
    if sr.marker.is_some() { MARKER_RIM } else { 0.0 }
}

impl Figure {
    /// The series the legend names: those with a label.
    pub(crate) fn in_legend(&self) -> impl Iterator<Item = &Series> {
        self.series.iter().filter(|s| !s.label.is_empty())
    }

    /// The length of every legend entry's line sample, in layout units: the layout's, or
    /// more where a curve's pattern needs more to show around its marker
    /// ([`legend_length`]), one length for all so that the labels line up.
    pub(crate) fn legend_sample(&self, m: &Metrics) -> f64 {
        self.in_legend()
            .map(|sr| legend_length(sr.dash, LINE_WIDTH, halo(sr)))
            .fold(m.sample, f64::max)
    }

    /// The legend's width in pixels: the widest label and its line sample.
    pub(crate) fn legend_width<DB: DrawingBackend>(
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
        widest as i32 + ((self.legend_sample(m) + 40.0) * s) as i32
    }

    /// The legend under the axes: its entries in as many columns as fit the width, then
    /// the note wrapped to the width.
    pub(crate) fn legend_rows<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        s: f64,
        m: &Metrics,
    ) -> LegendRows {
        let font = ("sans-serif", (m.legend * s).round() as i32).into_text_style(area);
        let note = ("sans-serif", (m.note * s).round() as i32).into_text_style(area);
        let width = f64::from(area.dim_in_pixel().0) / s - 12.0;
        let sample = self.legend_sample(m);
        let entry = |label: &str| {
            sample
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
    pub(crate) fn draw_legend_below<DB: DrawingBackend>(
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
            sample: self.legend_sample(m),
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
    pub(crate) fn draw_legend<DB: DrawingBackend>(
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
            sample: self.legend_sample(m),
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
    pub(crate) fn legend_entry<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        sr: &Series,
        (x0, y): (f64, f64),
        pen: &LegendPen<'_>,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        let LegendPen {
            s,
            vector,
            sample,
            font,
        } = pen;
        let (s, vector) = (*s, *vector);
        let sample = sample * s;
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
        let w = LINE_WIDTH * s;
        let line = legend_pieces(a.0, b.0, y, sr.dash, w, halo(sr) * s);
        draw_pieces(area, line, sr.color, w, vector)?;
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
/// output is vector (SVG, PDF), the line samples' length ([`Figure::legend_sample`], layout
/// units) and the labels' font.
pub(crate) struct LegendPen<'a> {
    s: f64,
    vector: bool,
    sample: f64,
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
pub(crate) struct LegendRows {
    columns: usize,
    /// Each column's left edge, in layout units.
    column_x: Vec<f64>,
    /// Rows of entries.
    entries: usize,
    note_lines: Vec<String>,
}

impl LegendRows {
    /// The legend's height in layout units.
    pub(crate) fn height(&self, m: &Metrics) -> f64 {
        let note = if self.note_lines.is_empty() {
            0.0
        } else {
            (0.3 + 0.85 * self.note_lines.len() as f64) * m.row
        };
        m.row * self.entries as f64 + note + 10.0
    }
}
