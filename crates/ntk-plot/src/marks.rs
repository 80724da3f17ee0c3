//! What a figure is drawn with: the axes as plotters sees them ([`Axis`]), lines with their
//! dashes, error bars and markers, filled or open.

use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::prelude::*;

use crate::strokes::{self, Piece};
use crate::ticks::Ticks;
use crate::{Dash, Marker};

/// An axis of [`Ticks`] as plotters sees it: linear in the plotted coordinate, its major
/// ticks bold (labelled) and its minor ticks light.
pub(crate) struct Axis<'a>(pub(crate) &'a Ticks);

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
pub(crate) fn ipt(p: (f64, f64)) -> (i32, i32) {
    (p.0.round() as i32, p.1.round() as i32)
}

/// The polyline `pts` (pixels of `area`) in style `dash`, `w` pixels wide.
pub(crate) fn draw_line<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    pts: &[(f64, f64)],
    dash: Dash,
    color: RGBColor,
    w: f64,
    vector: bool,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    draw_pieces(area, strokes::pieces(pts, dash, w), color, w, vector)
}

/// The `pieces` of a patterned line (pixels of `area`), `w` pixels wide.
pub(crate) fn draw_pieces<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    pieces: Vec<Piece>,
    color: RGBColor,
    w: f64,
    vector: bool,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    for piece in pieces {
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
pub(crate) fn stroke<DB: DrawingBackend>(
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
pub(crate) fn draw_bar<DB: DrawingBackend>(
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

/// A curve's width, in layout units.
pub(crate) const LINE_WIDTH: f64 = 2.0;

/// A marker's radius, in layout units.
const MARKER_RADIUS: f64 = 4.0;

/// How far a filled marker's white rim reaches from its centre along a line through it, in
/// layout units: the radius and the rim's 1.2 (a square's, a triangle's and a diamond's
/// reach no further across).
pub(crate) const MARKER_RIM: f64 = MARKER_RADIUS + 1.2;

/// Marker `m` centred at `p` (pixels of `area`): filled, with a white rim so it reads over
/// lines; `open`: a white inside in a coloured rim (a point without a value).
pub(crate) fn draw_marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    p: (f64, f64),
    m: Marker,
    color: RGBColor,
    s: f64,
    open: bool,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let (x, y) = p;
    let r = MARKER_RADIUS * s;
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
    let rim = MARKER_RIM * s;
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
