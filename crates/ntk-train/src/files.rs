//! The files `collect` and the figures write into a sweep or run directory, by name: what a
//! run directory may hold beside a run's own files, and what `--out` checks recognize.

/// The figures `crate::report::figures` may write, by stem (each as `.png`, `.svg` and
/// `.pdf`, and in a column layout with its `.caption.txt`).
pub const FIGURE_STEMS: [&str; 7] = [
    "convergence_rate",
    "train_loss",
    "train_loss_log",
    "test_accuracy",
    "ntk_kappa",
    "ntk_angle",
    "representation_cosine",
];

/// True for a file that `crate::report`'s `collect` or `figures` writes into a sweep or run directory.
pub fn is_report_file(name: &str) -> bool {
    name == "sweep.csv"
        || name == "best.csv"
        || name == "compare.csv"
        || name == "convergence.csv"
        || is_figure_file(name)
}

/// True for a file of one of the figures ([`FIGURE_STEMS`]): what `plot` writes.
pub fn is_figure_file(name: &str) -> bool {
    FIGURE_STEMS
        .iter()
        .any(|stem| ntk_plot::is_figure_file(name, stem))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_figures_files_and_caption_are_the_reports() {
        for name in [
            "train_loss.png",
            "train_loss_log.pdf",
            "ntk_kappa.svg",
            "test_accuracy.caption.txt",
            "best.csv",
        ] {
            assert!(is_report_file(name), "{name}");
        }
        for name in ["notes.txt", "train_loss.txt", "train_loss.png.bak"] {
            assert!(!is_report_file(name), "{name}");
        }
    }
}
