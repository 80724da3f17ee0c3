//! Line styles drawn by hand in pixel space, so that they stay apart at any resolution:
//! a solid line, dashes, long dashes, round dots, dash-dot and dash-dot-dot. plotters' own dashed series makes
//! "dotted" a short dash of the same look; here a dot is a filled disc.

/// How a line is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dash {
    Solid,
    Dashed,
    /// Round dots: the figures keep it for what is not measured (the infinite-width theory,
    /// the NTK's predictions), never a measured curve ([`MEASURED`]).
    Dotted,
    DashDot,
    /// Dashes twice as long as [`Dash::Dashed`]'s, and more.
    LongDash,
    DashDotDot,
}

/// The styles of measured curves, in the order settings take them: every [`Dash`] but
/// [`Dash::Dotted`].
pub const MEASURED: [Dash; 5] = [
    Dash::Solid,
    Dash::Dashed,
    Dash::DashDot,
    Dash::LongDash,
    Dash::DashDotDot,
];

/// One piece of a patterned line, in pixels.
#[derive(Clone, Debug, PartialEq)]
pub enum Piece {
    /// A stroked polyline.
    Segment(Vec<(f64, f64)>),
    /// A filled disc centred here.
    Dot((f64, f64)),
}

/// One step of a pattern: draw a dash of this length, leave a gap, or put a dot.
#[derive(Clone, Copy, Debug)]
enum Step {
    On(f64),
    Off(f64),
    Dot,
}

/// The repeating pattern of `dash` for lines `w` pixels wide.
fn pattern(dash: Dash, w: f64) -> Vec<Step> {
    match dash {
        Dash::Solid => vec![Step::On(f64::INFINITY)],
        Dash::Dashed => vec![Step::On(5.0 * w), Step::Off(3.0 * w)],
        Dash::Dotted => vec![Step::Dot, Step::Off(2.5 * w)],
        Dash::DashDot => vec![
            Step::On(5.0 * w),
            Step::Off(2.2 * w),
            Step::Dot,
            Step::Off(2.2 * w),
        ],
        Dash::LongDash => vec![Step::On(11.0 * w), Step::Off(4.0 * w)],
        Dash::DashDotDot => vec![
            Step::On(5.0 * w),
            Step::Off(2.2 * w),
            Step::Dot,
            Step::Off(2.2 * w),
            Step::Dot,
            Step::Off(2.2 * w),
        ],
    }
}

/// The length of one period of `dash`'s pattern for lines `w` pixels wide (a solid line: 0).
fn period(dash: Dash, w: f64) -> f64 {
    if dash == Dash::Solid {
        return 0.0;
    }
    pattern(dash, w)
        .iter()
        .map(|step| match step {
            Step::On(l) | Step::Off(l) => *l,
            Step::Dot => 0.0,
        })
        .sum()
}

/// The length a legend's line sample needs for `dash` (lines `w` pixels wide) to read as
/// itself when a marker's white rim covers `halo` pixels on each side of the sample's
/// middle: each side, drawn outward from the rim ([`legend_pieces`]), holds one whole
/// period (every dash, gap and dot at its length) and then half of the next dash (at least
/// `w`), so that no side ends in a stub that reads as a dot:
///
/// `2 (halo + period + max(dash / 2, w))`.
///
/// A shorter sample can lose a pattern under the marker: 56 pixels of 22-pixel long dashes
/// with a 10-pixel marker in the middle showed two dashes and a one-pixel gap, a solid line.
pub fn legend_length(dash: Dash, w: f64, halo: f64) -> f64 {
    if dash == Dash::Solid {
        return 0.0;
    }
    let first = match pattern(dash, w)[0] {
        Step::On(l) => l,
        Step::Off(_) | Step::Dot => 0.0,
    };
    2.0 * (halo + period(dash, w) + (first / 2.0).max(w))
}

/// A legend's line sample from `x0` to `x1` at height `y` in `dash` (lines `w` pixels
/// wide), a marker's rim covering `halo` pixels on each side of its middle: each side drawn
/// outward from the rim, so that the two sides mirror each other and neither starts under
/// the marker. Without a marker (`halo` 0) the sample is one line from `x0`, the pattern
/// running on through the middle.
pub fn legend_pieces(x0: f64, x1: f64, y: f64, dash: Dash, w: f64, halo: f64) -> Vec<Piece> {
    if halo <= 0.0 || dash == Dash::Solid {
        return pieces(&[(x0, y), (x1, y)], dash, w);
    }
    let middle = (x0 + x1) / 2.0;
    let mut out = pieces(&[(middle - halo, y), (x0, y)], dash, w);
    out.extend(pieces(&[(middle + halo, y), (x1, y)], dash, w));
    out
}

/// The point at distance `t` along the segment `a -> b` of length `len`.
fn lerp(a: (f64, f64), b: (f64, f64), t: f64, len: f64) -> (f64, f64) {
    let f = if len > 0.0 { t / len } else { 0.0 };
    (a.0 + (b.0 - a.0) * f, a.1 + (b.1 - a.1) * f)
}

/// The polyline `points` (pixels) cut into the pieces of `dash` for lines `w` pixels wide;
/// the pattern runs on across the vertices.
pub fn pieces(points: &[(f64, f64)], dash: Dash, w: f64) -> Vec<Piece> {
    if points.len() < 2 {
        return Vec::new();
    }
    if dash == Dash::Solid {
        return vec![Piece::Segment(points.to_vec())];
    }
    let pattern = pattern(dash, w);
    let mut out = Vec::new();
    let (mut step, mut left) = (0usize, f64::NAN);
    let mut current: Option<Vec<(f64, f64)>> = None;
    for pair in points.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        let len = ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
        let mut pos = 0.0;
        loop {
            if left.is_nan() {
                left = match pattern[step] {
                    Step::On(l) | Step::Off(l) => l,
                    Step::Dot => 0.0,
                };
                if let Step::Dot = pattern[step] {
                    out.push(Piece::Dot(lerp(a, b, pos, len)));
                }
                if let Step::On(_) = pattern[step] {
                    current = Some(vec![lerp(a, b, pos, len)]);
                }
            }
            let take = left.min(len - pos);
            pos += take;
            left -= take;
            if left > 1e-9 {
                // The segment ends inside this step.
                if let Some(c) = current.as_mut() {
                    c.push(b);
                }
                break;
            }
            if let Some(c) = current.take() {
                let mut c = c;
                c.push(lerp(a, b, pos, len));
                out.push(Piece::Segment(c));
            }
            step = (step + 1) % pattern.len();
            left = f64::NAN;
            if pos >= len - 1e-9 {
                break;
            }
        }
    }
    if let Some(c) = current.filter(|c| c.len() >= 2) {
        out.push(Piece::Segment(c));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(p: &[Piece]) -> (usize, usize) {
        let dots = p.iter().filter(|x| matches!(x, Piece::Dot(_))).count();
        (p.len() - dots, dots)
    }

    #[test]
    fn the_styles_are_made_of_different_pieces() {
        let line = [(0.0, 0.0), (100.0, 0.0), (200.0, 0.0)];
        assert_eq!(count(&pieces(&line, Dash::Solid, 2.0)), (1, 0));
        let (segs, dots) = count(&pieces(&line, Dash::Dashed, 2.0));
        assert!(segs >= 10 && dots == 0, "{segs} dashes");
        let (segs, dots) = count(&pieces(&line, Dash::Dotted, 2.0));
        assert!(segs == 0 && dots >= 30, "{dots} dots");
        let (segs, dots) = count(&pieces(&line, Dash::DashDot, 2.0));
        assert!(segs >= 8 && dots >= 8 && segs.abs_diff(dots) <= 1);
        let (long, dots) = count(&pieces(&line, Dash::LongDash, 2.0));
        let (short, _) = count(&pieces(&line, Dash::Dashed, 2.0));
        assert!(
            dots == 0 && long >= 4 && long < short,
            "{long} long dashes, {short} dashes"
        );
        let (segs, dots) = count(&pieces(&line, Dash::DashDotDot, 2.0));
        assert!(
            segs >= 5 && dots.abs_diff(2 * segs) <= 2,
            "{segs} dashes, {dots} dots"
        );
    }

    #[test]
    fn dashes_have_their_length_and_continue_across_vertices() {
        // A right angle: the dash crossing the corner bends with it.
        let line = [(0.0, 0.0), (13.0, 0.0), (13.0, 40.0)];
        let p = pieces(&line, Dash::Dashed, 2.0);
        let length = |s: &[(f64, f64)]| -> f64 {
            s.windows(2)
                .map(|w| ((w[1].0 - w[0].0).powi(2) + (w[1].1 - w[0].1).powi(2)).sqrt())
                .sum()
        };
        let Piece::Segment(first) = &p[0] else {
            panic!("a dash first")
        };
        assert!((length(first) - 10.0).abs() < 1e-9);
        // Dash 2 starts at 16 along the line: (13, 3), on the second leg.
        let Piece::Segment(second) = &p[1] else {
            panic!("a dash second")
        };
        assert!((second[0].0 - 13.0).abs() < 1e-9 && (second[0].1 - 3.0).abs() < 1e-9);
        assert!((length(second) - 10.0).abs() < 1e-9);
    }
}
