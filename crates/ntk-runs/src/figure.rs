//! Where a figure goes: the one choice about figures that both tools' command lines and
//! the plotting crate share (`--layout`; `ntk_plot::layout` sizes each).

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
