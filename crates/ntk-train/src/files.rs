//! The files `collect` and the figures write into a sweep or run directory, by name: what a
//! run directory may hold beside a run's own files, and what `--out` checks recognize.

use std::path::{Path, PathBuf};

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

/// True where `out` looks like an ntk-probe sweep's directory, alone or with training runs
/// beside its points ([`probe_point`]).
pub fn is_probe_sweep(out: &Path) -> bool {
    probe_point(out).is_some()
}

/// What marks `out` as an ntk-probe sweep's directory, if anything does: beside its `runs/`,
/// the probe's `theory.json` or a `kappa_vs_depth_*` figure; an entry of `runs/` named as an
/// activation (`runs/relu/depth02/...`; a training sweep's runs are named
/// `depth008_relu_...`); or a point summary below `runs/`'s first level (a training run's is
/// `runs/<id>/summary.json`) written by ntk-probe. Round 91, N5, and the ninety-second hostile
/// round, D4: a probe sweep with a datasets, widths or conventions axis (`runs/digits/...`,
/// `runs/width8/...`) was not recognized.
pub fn probe_point(out: &Path) -> Option<PathBuf> {
    let runs = out.join("runs");
    if !std::fs::symlink_metadata(&runs).is_ok_and(|m| m.is_dir()) {
        return None;
    }
    let entries = |dir: &Path| -> Vec<std::fs::DirEntry> {
        std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .collect()
    };
    let probe_file = |name: &str| name == "theory.json" || name.starts_with("kappa_vs_depth_");
    if let Some(e) = entries(out)
        .into_iter()
        .find(|e| probe_file(&e.file_name().to_string_lossy()))
    {
        return Some(e.path());
    }
    if let Some(e) = entries(&runs).into_iter().find(|e| {
        e.file_type().is_ok_and(|t| t.is_dir())
            && e.file_name()
                .to_str()
                .and_then(ntk_model::ActivationKind::parse)
                .is_some()
    }) {
        return Some(e.path());
    }
    ntk_runs::sweep::find_files(&runs, "summary.json")
        .into_iter()
        .filter_map(|f| f.parent().map(Path::to_path_buf))
        .filter(|dir| dir.parent() != Some(runs.as_path()))
        .find(|dir| {
            ntk_runs::provenance::recorded_tool(dir).is_some_and(|t| t.starts_with("ntk-probe"))
        })
}

/// A training run under `out/runs/` (its `config.toml`), if any.
pub fn training_run(out: &Path) -> Option<PathBuf> {
    let mut runs: Vec<PathBuf> = std::fs::read_dir(out.join("runs"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| std::fs::symlink_metadata(p.join("config.toml")).is_ok())
        .collect();
    runs.sort();
    runs.into_iter().next()
}

/// Refuses an `out` that is an ntk-probe sweep's directory: [`crate::Error::ProbeSweep`], or,
/// with training runs beside its points, [`crate::Error::MixedWithProbe`], as ntk-probe
/// refuses the same directory (ninety-fourth hostile round, D1: ntk-train's collect and plot
/// wrote their tables and figures into it, and its sweep called a training sweep holding one
/// probe point "an ntk-probe sweep's directory").
pub fn refuse_probe_sweep(out: &Path) -> crate::Result<()> {
    let Some(probe) = probe_point(out) else {
        return Ok(());
    };
    Err(match training_run(out) {
        Some(run) => crate::Error::MixedWithProbe {
            out: out.to_path_buf(),
            probe,
            run,
        },
        None => crate::Error::ProbeSweep {
            out: out.to_path_buf(),
        },
    })
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
