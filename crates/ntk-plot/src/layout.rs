//! A figure's canvas and text sizes for where it goes ([`Layout`]): a screen or report page,
//! or one column of a two-column paper, where every text must stay legible (at least 8 pt)
//! once the figure is scaled to the column's width.

/// A figure's layout: `Screen`, a screen or a report page (900 x 600 units, the legend to
/// the right of the axes); `Column`, one column of a two-column paper, 3.4 in wide (510
/// units across, 340 for the title and axes and the legend's rows under them; fonts of at
/// least 8 pt at that width).
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    // (Plain comments: doc comments here would become `--help` text per value.)
    #[default]
    Screen,
    Column,
}

/// A two-column paper's column width in points (3.4 in, as in NeurIPS, ICML and IEEE).
pub const COLUMN_WIDTH_PT: f64 = 244.8;

/// The canvas and the text sizes, in layout units (SVG pixels; the PNG has twice as many).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Metrics {
    pub size: (u32, u32),
    /// The title's size, and the smallest it may shrink to when it is too wide.
    pub title: f64,
    pub title_min: f64,
    /// Tick labels, axis descriptions, legend labels, the note under the legend.
    pub tick: f64,
    pub axis: f64,
    pub legend: f64,
    pub note: f64,
    /// A legend row's height, and its line sample's length.
    pub row: f64,
    pub sample: f64,
    /// The legend in rows under the axes (else in a column at their right).
    pub legend_below: bool,
    /// The PDF's points per layout unit: a column is 244.8 pt wide, a screen figure
    /// 675 pt (one unit a CSS pixel, 0.75 pt).
    pub pdf_pt_per_unit: f64,
}

impl Metrics {
    pub fn of(layout: Layout) -> Self {
        match layout {
            Layout::Screen => Self {
                size: (900, 600),
                title: 20.0,
                title_min: 12.0,
                tick: 15.0,
                axis: 16.0,
                legend: 14.0,
                note: 13.0,
                row: 24.0,
                sample: 56.0,
                legend_below: false,
                pdf_pt_per_unit: 0.75,
            },
            // A text of size 21 has an em of 21 / 1.24 = 16.9 units (plotters' sizes
            // are 1.24 em; its SVG writes `font-size` = size / 1.24): 8.1 pt once 510 units
            // are 244.8 pt. The legend's rows are added under these 510 x 340 units
            // ([`crate::Figure`] grows the canvas for them).
            Layout::Column => Self {
                size: (510, 340),
                title: 22.5,
                title_min: 21.0,
                tick: 21.0,
                axis: 21.5,
                legend: 21.0,
                note: 21.0,
                row: 27.0,
                sample: 44.0,
                legend_below: true,
                pdf_pt_per_unit: COLUMN_WIDTH_PT / 510.0,
            },
        }
    }

    /// The smallest text's em, in points, once the figure is scaled to `width_pt` (a
    /// plotters font size is 1.24 em).
    #[cfg(test)]
    pub fn smallest_pt(&self, width_pt: f64) -> f64 {
        let smallest = [self.title_min, self.tick, self.axis, self.legend, self.note]
            .into_iter()
            .fold(f64::INFINITY, f64::min);
        smallest / 1.24 * width_pt / f64::from(self.size.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bar: every text at least 8 pt at a column's width.
    #[test]
    fn column_text_is_at_least_8_pt_at_a_column_width() {
        let m = Metrics::of(Layout::Column);
        assert!(
            m.smallest_pt(COLUMN_WIDTH_PT) >= 8.0,
            "{}",
            m.smallest_pt(COLUMN_WIDTH_PT)
        );
        // The screen layout at a column's width would be under 3 pt: why the column exists.
        assert!(Metrics::of(Layout::Screen).smallest_pt(COLUMN_WIDTH_PT) < 3.0);
    }
}
