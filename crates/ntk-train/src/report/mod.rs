//! Tables and figures of finished (or running) training: `ntk-train collect DIR` and
//! `ntk-train plot DIR`. Everything is read back from the run directories' files
//! (`config.toml`, `metrics.csv`, `ntk.csv`, `representations.csv`, `summary.json`), never
//! from a model, so any
//! shard's output, on any machine, can be merged and plotted.
//!
//! The learning rate of each configuration (depth, activation, normalization) is chosen
//! as Liu & Hui chose it: the lr of the grid with the lowest final training loss (mean over
//! seeds); an lr at which any seed diverged, or has not finished, is not eligible.

use ntk_plot::Layout;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ntk_plot::{Dash, Figure, Marker, Scale, Series, Spread, ramp};
use ntk_runs::stats::mean;
use serde::Serialize;

use crate::config::TrainConfig;
use crate::metrics::{EpochMetrics, NtkRow, RepresentationRow, read_csv, write_csv};
use crate::seeds::{self, SeedRun};
use crate::train::{RunStatus, TrainSummary, read_summary};
use ntk_runs::provenance::{self, Provenance};

mod figures;
mod runs;

use figures::data_title;
pub use figures::figures;
pub use runs::{RunRecord, read_run, read_runs};

/// A run's state in `sweep.csv`: how it ended, or why it has no summary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SweepStatus {
    Finished,
    Diverged,
    /// Stopped before its end; a checkpoint resumes it.
    Interrupted,
    /// Being trained by a live process now.
    Running,
    /// Its last attempt failed (`failed.json` says why).
    Failed,
}

/// One row of `sweep.csv`: every run.
impl From<RunStatus> for SweepStatus {
    fn from(s: RunStatus) -> Self {
        match s {
            RunStatus::Finished => Self::Finished,
            RunStatus::Diverged => Self::Diverged,
            RunStatus::Interrupted => Self::Interrupted,
        }
    }
}

/// One row of `sweep.csv`: every run.
#[derive(Serialize)]
pub struct SweepRow {
    pub id: String,
    pub status: SweepStatus,
    pub depth: usize,
    pub activation: String,
    pub normalization: String,
    pub lr: f64,
    pub seed: u64,
    pub epochs_completed: usize,
    pub final_train_loss: Option<f64>,
    pub final_test_accuracy: Option<f64>,
    pub best_test_accuracy: Option<f64>,
    pub final_kappa: Option<f64>,
    /// Whether the last tracked kernel was singular (then `final_kappa` is empty for that
    /// reason); empty when the run has no NTK rows.
    pub final_kappa_singular: Option<bool>,
    pub seconds: Option<f64>,
    /// This run's lr is its configuration's chosen lr.
    pub chosen_lr: bool,
}

/// One row of `best.csv`: each configuration at its chosen lr (means over seeds).
#[derive(Serialize, Clone, Debug)]
pub struct BestRow {
    pub depth: usize,
    pub activation: String,
    pub normalization: String,
    pub lr: f64,
    pub seeds: usize,
    pub final_train_loss: f64,
    /// The seeds' sample standard deviation (`n - 1`); empty for one seed.
    pub final_train_loss_sd: Option<f64>,
    /// The standard error of the mean over seeds (`sd / sqrt(seeds)`); empty for one seed.
    pub final_train_loss_se: Option<f64>,
    pub final_test_accuracy: Option<f64>,
    pub final_test_accuracy_sd: Option<f64>,
    pub final_test_accuracy_se: Option<f64>,
    pub epochs: usize,
    /// Grid points of this configuration at which some seed diverged.
    pub lrs_diverged: usize,
    /// The speed measure's threshold, the same in every row: the largest final training
    /// loss of any seed of any chosen configuration ([`crate::seeds::loss_threshold`]).
    pub loss_threshold: Option<f64>,
    /// The first epoch whose training loss is at most `loss_threshold`, mean over seeds.
    pub epochs_to_threshold: Option<f64>,
    pub epochs_to_threshold_sd: Option<f64>,
}

type Key = (usize, String, String);

/// A curve's point: (epoch, mean over seeds, smallest seed's value, largest's).
type Stat = (f64, f64, f64, f64);

/// How a figure's curve is read from the runs of one configuration.
/// A curve's points, and the epochs whose value some seed could not resolve (a singular
/// kernel's κ: drawn as open markers, never silently dropped).
type CurveOf<'a> = dyn Fn(&[&RunRecord]) -> (Vec<Stat>, Vec<f64>) + 'a;

/// The chosen lr of each configuration.
pub fn choose(runs: &[RunRecord]) -> Vec<BestRow> {
    let mut by_key: BTreeMap<Key, BTreeMap<u64, Vec<&RunRecord>>> = BTreeMap::new();
    for r in runs {
        by_key
            .entry(r.key())
            .or_default()
            .entry(r.lr.to_bits())
            .or_default()
            .push(r);
    }
    let mut best = Vec::new();
    for ((depth, activation, normalization), grid) in by_key {
        let lrs_diverged = grid
            .values()
            .filter(|rs| rs.iter().any(|r| r.diverged()))
            .count();
        // Eligible: an lr at which every run finished (a run still going, interrupted or
        // failed has trained fewer epochs: its loss is not comparable).
        let candidate = grid
            .iter()
            .filter(|(_, rs)| rs.iter().all(|r| r.finished() && r.final_loss().is_some()))
            .filter_map(|(lr, rs)| {
                mean(rs.iter().filter_map(|r| r.final_loss())).map(|l| (f64::from_bits(*lr), l, rs))
            })
            .min_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((lr, loss, rs)) = candidate {
            let losses: Vec<f64> = rs.iter().filter_map(|r| r.final_loss()).collect();
            let accuracies: Vec<f64> = rs
                .iter()
                .filter_map(|r| seeds::final_accuracy(*r))
                .collect();
            let (loss_sd, loss_se) = seeds::spread(&losses);
            let (acc_sd, acc_se) = if accuracies.len() == rs.len() {
                seeds::spread(&accuracies)
            } else {
                (None, None)
            };
            best.push(BestRow {
                depth,
                activation,
                normalization,
                lr,
                seeds: rs.len(),
                final_train_loss: loss,
                final_train_loss_sd: loss_sd,
                final_train_loss_se: loss_se,
                final_test_accuracy: mean(accuracies.iter().copied()),
                final_test_accuracy_sd: acc_sd,
                final_test_accuracy_se: acc_se,
                epochs: rs.iter().map(|r| r.metrics.len()).min().unwrap_or(0),
                lrs_diverged,
                loss_threshold: None,
                epochs_to_threshold: None,
                epochs_to_threshold_sd: None,
            });
        }
    }
    with_speed(runs, best)
}

/// The chosen runs of each configuration of `best` (its seeds at its chosen lr).
fn chosen_runs<'a>(runs: &'a [RunRecord], b: &BestRow) -> Vec<&'a RunRecord> {
    let key = (b.depth, b.activation.clone(), b.normalization.clone());
    runs.iter()
        .filter(|r| r.key() == key && r.lr == b.lr)
        .collect()
}

/// `best` with the speed measure: epochs to the loss every chosen run reaches.
fn with_speed(runs: &[RunRecord], mut best: Vec<BestRow>) -> Vec<BestRow> {
    let threshold = seeds::loss_threshold(best.iter().flat_map(|b| chosen_runs(runs, b)));
    for b in &mut best {
        b.loss_threshold = threshold;
        let Some(t) = threshold else { continue };
        let epochs: Vec<f64> = chosen_runs(runs, b)
            .into_iter()
            .filter_map(|r| seeds::epochs_to(r, t))
            .collect();
        if epochs.len() == b.seeds {
            b.epochs_to_threshold = mean(epochs.iter().copied());
            b.epochs_to_threshold_sd = seeds::spread(&epochs).0;
        }
    }
    best
}

pub use crate::files::{FIGURE_STEMS, is_report_file};

/// `ntk-train collect DIR`: `DIR/sweep.csv`, `DIR/best.csv`, `DIR/compare.csv` (the tests
/// between configurations, [`crate::seeds`]) and the figures. The runs must
/// come from one sweep config: their recorded configs may differ in the sweep axes
/// ([`crate::sweep::AXES`]) only, unless `allow_mixed`; `log_y` and `title` as in
/// [`figures`].
pub fn collect(
    out: &Path,
    log_y: bool,
    allow_mixed: bool,
    title: Option<&str>,
) -> crate::Result<Vec<PathBuf>> {
    collect_as(out, log_y, allow_mixed, title, Layout::Screen)
}

/// [`collect`] with the figures in `layout`.
pub fn collect_as(
    out: &Path,
    log_y: bool,
    allow_mixed: bool,
    title: Option<&str>,
    layout: Layout,
) -> crate::Result<Vec<PathBuf>> {
    let runs = read_runs(out)?;
    ntk_runs::sweep::warn_unreadable(&out.join("runs"), "config.toml");
    // A run being trained now may not have recorded its provenance yet: it is listed as
    // running, and checked once it has.
    let entries: Vec<(PathBuf, Option<&Provenance>)> = runs
        .iter()
        .filter(|r| r.running.is_none() || r.provenance.is_some())
        .map(|r| (out.join("runs").join(&r.id), r.provenance.as_ref()))
        .collect();
    provenance::check_merge(out, &entries, &crate::sweep::AXES, allow_mixed)?;
    let best = choose(&runs);
    let rows: Vec<SweepRow> = runs
        .iter()
        .map(|r| {
            let s = r.summary.as_ref();
            SweepRow {
                id: r.id.clone(),
                status: match (s, &r.running, &r.failure) {
                    (Some(s), _, _) => SweepStatus::from(s.status),
                    (None, Some(_), _) => SweepStatus::Running,
                    (None, None, Some(_)) => SweepStatus::Failed,
                    (None, None, None) => SweepStatus::Interrupted,
                },
                depth: r.depth,
                activation: r.activation.clone(),
                normalization: r.normalization.clone(),
                lr: r.lr,
                seed: r.seed,
                epochs_completed: r.metrics.len(),
                final_train_loss: r.final_loss(),
                final_test_accuracy: seeds::final_accuracy(r),
                best_test_accuracy: r
                    .metrics
                    .iter()
                    .filter_map(|m| m.test_accuracy)
                    .reduce(f64::max),
                final_kappa: r.ntk.last().and_then(|k| k.kappa),
                final_kappa_singular: r.ntk.last().map(|k| k.singular),
                seconds: s.map(|s| s.seconds),
                chosen_lr: best.iter().any(|b| {
                    (b.depth, b.activation.clone(), b.normalization.clone()) == r.key()
                        && b.lr == r.lr
                }),
            }
        })
        .collect();
    for r in runs.iter().filter(|r| r.summary.is_none()) {
        if let Some(why) = &r.failure {
            eprintln!(
                "warning: {}: failed: {why}",
                out.join("runs").join(&r.id).display()
            );
        }
    }
    // Runs that failed before they wrote anything else.
    for f in ntk_runs::sweep::find_files(&out.join("runs"), ntk_runs::sweep::FAILED_FILE) {
        let dir = f.parent().unwrap_or(out);
        if !dir.join("config.toml").exists()
            && let Some(failure) = ntk_runs::sweep::Failure::read(dir)
        {
            eprintln!(
                "warning: {}: failed before it began: {}",
                dir.display(),
                failure.reason
            );
        }
    }
    let mut written = vec![
        out.join("sweep.csv"),
        out.join("best.csv"),
        out.join("compare.csv"),
    ];
    write_csv(&written[0], &rows)?;
    write_csv(&written[1], &best)?;
    let threshold = best.first().and_then(|b| b.loss_threshold);
    let chosen: Vec<seeds::Chosen> = best
        .iter()
        .map(|b| seeds::Chosen {
            depth: b.depth,
            activation: &b.activation,
            normalization: &b.normalization,
            lr: b.lr,
        })
        .collect();
    write_csv(&written[2], &seeds::compare(&runs, &chosen, threshold))?;
    written.extend(figures((out, out), &runs, log_y, title, layout)?);
    let convergence = crate::convergence::rows(&runs);
    if !convergence.is_empty() {
        let path = out.join("convergence.csv");
        write_csv(&path, &convergence)?;
        written.push(path);
        written.extend(crate::convergence::figure(
            out,
            &convergence,
            (data_title(&runs).as_deref(), title),
            layout,
        )?);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::figures::*;

    /// The curves of several seeds are their mean with the seeds' min..max as the band;
    /// rows that not every seed has are left out.
    #[test]
    fn titles_name_the_data_set_and_its_size() {
        assert_eq!(images_title("mnist", 60000), "MNIST, 60,000 images");
        assert_eq!(
            images_title("fashion-mnist", 1000),
            "Fashion-MNIST, 1,000 images"
        );
        assert_eq!(images_title("cifar-10", 500), "CIFAR-10, 500 images");
        assert_eq!(
            images_title("digits", 1797000),
            "8x8 digits, 1,797,000 images"
        );
        assert_eq!(images_title("file", 2000), "Own data, 2,000 samples");
        assert_eq!(images_title("synthetic", 50), "Synthetic, 50 samples");
        assert_eq!(group_digits(1_234_567), "1,234,567");
        assert_eq!(three_digits(0.797458).to_string(), "0.797");
        assert_eq!(three_digits(0.003).to_string(), "0.003");
        assert_eq!(three_digits(30.0).to_string(), "30");
        assert_eq!(three_digits(0.1412364).to_string(), "0.141");
    }

    #[test]
    fn seed_curves_are_means_with_their_range() {
        let a: Vec<(usize, f64)> = vec![(1, 2.0), (2, 1.0), (3, 0.5)];
        let b: Vec<(usize, f64)> = vec![(1, 4.0), (2, 0.5)];
        let tables: Vec<&[(usize, f64)]> = vec![&a, &b];
        let curve = mean_curve(&tables, |r| r.0, |r| Some(r.1));
        assert_eq!(curve, [(1.0, 3.0, 2.0, 4.0), (2.0, 0.75, 0.5, 1.0)]);
    }
}
