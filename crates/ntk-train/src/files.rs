//! The files `collect` and the figures write into a sweep or run directory, by name: what a
//! run directory may hold beside a run's own files, and what `--out` checks recognize.

/// The figures `crate::report::save_figures` may write, by stem (each as `.png`, `.svg` and
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
    ReportNames::all().writes(name)
}

/// True for a file of one of the figures ([`FIGURE_STEMS`]): what `plot` writes.
pub fn is_figure_file(name: &str) -> bool {
    FIGURE_STEMS
        .iter()
        .any(|stem| ntk_plot::is_figure_file(name, stem))
}

/// True where `out` looks like an ntk-probe sweep's directory: beside its `runs/`, the
/// probe's `theory.json` or a `kappa_vs_depth_*` figure, or the first point summary under
/// `runs/` written by ntk-probe, or an entry of `runs/` named as an activation
/// (`runs/relu/depth02/...`; a training sweep's runs are named `depth008_relu_...`). Round
/// 91, N5 and ninety-second hostile round, D4: a probe sweep with a datasets, widths or
/// conventions axis (`runs/digits/...`, `runs/width8/...`) was not recognized.
pub fn is_probe_sweep(out: &std::path::Path) -> bool {
    let runs = out.join("runs");
    if !std::fs::symlink_metadata(&runs).is_ok_and(|m| m.is_dir()) {
        return false;
    }
    let probe_file = |name: &str| name == "theory.json" || name.starts_with("kappa_vs_depth_");
    let beside = std::fs::read_dir(out)
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| probe_file(&e.file_name().to_string_lossy()));
    let named = std::fs::read_dir(&runs)
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| {
            e.file_type().is_ok_and(|t| t.is_dir())
                && e.file_name()
                    .to_str()
                    .and_then(ntk_model::ActivationKind::parse)
                    .is_some()
        });
    beside
        || named
        || first_summary(&runs, 8)
            .and_then(|dir| ntk_runs::provenance::recorded_tool(&dir))
            .is_some_and(|tool| tool.starts_with("ntk-probe"))
}

/// The first directory at most `depth` levels under `dir` (itself included) that holds a
/// `summary.json`, hidden entries, `checkpoints/` and links aside.
fn first_summary(dir: &std::path::Path, depth: usize) -> Option<std::path::PathBuf> {
    if dir.join("summary.json").is_file() {
        return Some(dir.to_path_buf());
    }
    if depth == 0 {
        return None;
    }
    let mut subdirs: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            !name.starts_with('.')
                && name != "checkpoints"
                && e.file_type().is_ok_and(|t| t.is_dir())
        })
        .map(|e| e.path())
        .collect();
    subdirs.sort();
    subdirs.iter().find_map(|sub| first_summary(sub, depth - 1))
}

/// The tables every collect writes.
pub const TABLES: [&str; 3] = ["sweep.csv", "best.csv", "compare.csv"];

/// The files one `collect` or `plot` writes (or a sweep's collect may write), by name: the
/// places it checks before it writes the first, and no other (forty-fourth hostile round, D1:
/// a FIFO at `convergence.csv` or `representation_cosine.png` refused a collect whose runs
/// never make them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportNames {
    /// [`TABLES`] (a collect) or none (a plot).
    pub tables: bool,
    /// `convergence.csv` (the runs carry `[prediction]`'s curves).
    pub convergence: bool,
    /// The figures' stems ([`FIGURE_STEMS`]).
    pub stems: Vec<&'static str>,
}

impl ReportNames {
    /// Every name a collect may write ([`is_report_file`]).
    pub fn all() -> Self {
        Self {
            tables: true,
            convergence: true,
            stems: FIGURE_STEMS.to_vec(),
        }
    }

    /// Whether `name` is one of these files.
    pub fn writes(&self, name: &str) -> bool {
        (self.tables && TABLES.contains(&name))
            || (self.convergence && name == "convergence.csv")
            || self
                .stems
                .iter()
                .any(|stem| ntk_plot::is_figure_file(name, stem))
    }
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
        // A plot of runs without tracking or predictions writes the loss and accuracy only.
        let plot = ReportNames {
            tables: false,
            convergence: false,
            stems: vec!["train_loss", "test_accuracy"],
        };
        for name in ["train_loss.svg", "test_accuracy.caption.txt"] {
            assert!(plot.writes(name), "{name}");
        }
        for name in [
            "best.csv",
            "convergence.csv",
            "representation_cosine.png",
            "convergence_rate.pdf",
            "train_loss_log.png",
        ] {
            assert!(!plot.writes(name), "{name}");
        }
    }
}
