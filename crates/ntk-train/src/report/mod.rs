//! Tables and figures of finished (or running) training: `ntk-train collect DIR` and
//! `ntk-train plot DIR`. Everything is read back from the run directories' files
//! (`config.toml`, `metrics.csv`, `ntk.csv`, `representations.csv`, `summary.json`), never
//! from a model, so any
//! shard's output, on any machine, can be merged and plotted.
//!
//! The learning rate of each configuration (depth, activation, normalization) is chosen
//! as Liu & Hui chose it, the lr of the grid with the lowest final training loss, but on a
//! selection seed the comparison then leaves out ([`selection`]).

use ntk_plot::Layout;
use std::path::{Path, PathBuf};

use ntk_plot::{Dash, Figure, Marker, Scale, Series, Spread, ramp};
use ntk_runs::quote::message_escaped;
use ntk_runs::stats::mean;
use serde::Serialize;

use crate::config::TrainConfig;
use crate::metrics::{EpochMetrics, NtkRow, RepresentationRow, read_csv, write_csv};
use crate::seeds::{self, SeedRun};
use crate::train::{RunStatus, TrainSummary, read_summary};
use ntk_runs::provenance::{self, Provenance};

mod figures;
mod runs;
mod selection;

use figures::data_title;
pub use figures::{plan_figures, save_figures, say_unrated, unended};
pub use runs::{PlannedRun, RunRecord, read_run, read_runs, read_runs_except};
pub(crate) use runs::{check_as_kept, check_tables, config_edited, misnamed};
pub use selection::{
    Choice, Held, Selection, choose, choose_planned, choose_rate, choose_rate_planned,
    compared_runs, left_out, left_out_planned,
};

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

/// One row of `best.csv`: each configuration at its chosen lr, with the spread over the
/// seeds that speak for it ([`selection`]: the held-out selection seed left out).
#[derive(Serialize, Clone, Debug)]
pub struct BestRow {
    pub depth: usize,
    pub activation: String,
    pub normalization: String,
    pub lr: f64,
    /// How the lr was chosen: `held_out`, `selection_seed_only`, `single_rate`, `pooled`.
    pub selection: Selection,
    /// The seed whose runs chose the lr; with `held_out`, left out of every column below.
    pub selection_seed: Option<u64>,
    /// The selection seed's final training loss at the chosen lr.
    pub selection_loss: Option<f64>,
    /// The chosen lr is the smallest or largest of the grid (the next rate beyond the edge
    /// belongs in the grid).
    pub at_grid_edge: bool,
    /// The compared seeds that finished: the means, spreads and tests rest on these.
    pub seeds: usize,
    /// The compared seeds that diverged at the chosen lr (left out of the means).
    pub seeds_diverged: usize,
    /// Mean over the finished compared seeds; empty when none finished.
    pub final_train_loss: Option<f64>,
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
    /// loss of any compared seed of any configuration ([`crate::seeds::loss_threshold`]).
    pub loss_threshold: Option<f64>,
    /// The first epoch whose training loss is at most `loss_threshold`, mean over seeds.
    pub epochs_to_threshold: Option<f64>,
    pub epochs_to_threshold_sd: Option<f64>,
}

/// The columns of `best.csv`, in order: its header where no configuration has a row yet.
pub const BEST_COLUMNS: [&str; 21] = [
    "depth",
    "activation",
    "normalization",
    "lr",
    "selection",
    "selection_seed",
    "selection_loss",
    "at_grid_edge",
    "seeds",
    "seeds_diverged",
    "final_train_loss",
    "final_train_loss_sd",
    "final_train_loss_se",
    "final_test_accuracy",
    "final_test_accuracy_sd",
    "final_test_accuracy_se",
    "epochs",
    "lrs_diverged",
    "loss_threshold",
    "epochs_to_threshold",
    "epochs_to_threshold_sd",
];

type Key = (usize, String, String);

/// A curve's point: (epoch, mean over seeds, smallest seed's value, largest's).
type Stat = (f64, f64, f64, f64);

/// How a figure's curve is read from the runs of one configuration.
/// A curve's points, and the epochs whose value some seed could not resolve (a singular
/// kernel's κ: drawn as open markers, never silently dropped).
type CurveOf<'a> = dyn Fn(&[&RunRecord]) -> (Vec<Stat>, Vec<f64>) + 'a;

pub use crate::files::{FIGURE_STEMS, ReportNames, TABLES, is_report_file};

/// `ntk-train collect DIR`: `DIR/sweep.csv`, `DIR/best.csv`, `DIR/compare.csv` (the tests
/// between configurations, [`crate::seeds`]) and the figures. The runs must
/// come from one sweep config: their recorded configs may differ in the sweep axes
/// ([`crate::config::AXES`]) only, unless `allow_mixed`; `log_y` and `title` as in
/// [`figures`].
pub fn collect(
    out: &Path,
    log_y: bool,
    allow_mixed: bool,
    title: Option<&str>,
) -> crate::Result<Vec<PathBuf>> {
    collect_as(out, (log_y, title, Layout::Screen), allow_mixed, &[])
}

/// [`collect`] with the figures' log axis, title and layout, and the runs the sweep's config
/// plans (`planned`, of `collect --config` and a sweep's closing collect; empty where the
/// config is not known): a rate choice or a row of best.csv that would read one that has
/// no result waits for it ([`choose_planned`]).
pub fn collect_as(
    out: &Path,
    (log_y, title, layout): (bool, Option<&str>, Layout),
    allow_mixed: bool,
    planned: &[PlannedRun],
) -> crate::Result<Vec<PathBuf>> {
    let runs = read_runs(out)?;
    ntk_runs::sweep::warn_unreadable(&out.join("runs"), "config.toml");
    runs::warn_files_at_run_names(out);
    check_mergeable(out, &runs, allow_mixed)?;
    let log_y = draws_log(out, log_y);
    let missing: Vec<PlannedRun> = planned
        .iter()
        .filter(|p| !runs.iter().any(|r| r.id == p.id))
        .cloned()
        .collect();
    let best = choose_planned(&runs, &missing);
    let held = left_out_planned(&runs, &best, &missing);
    for ((depth, activation, normalization), why) in &held {
        eprintln!(
            "warning: {}: depth {depth} {activation} {normalization} is not in best.csv or \
             compare.csv: {why}",
            out.display()
        );
    }
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
                "warning: {}: failed: {}",
                r.dir.clone().display(),
                message_escaped(why)
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
                message_escaped(&failure.reason)
            );
        }
    }
    let threshold = best.first().and_then(|b| b.loss_threshold);
    let chosen: Vec<seeds::Chosen> = best
        .iter()
        .map(|b| seeds::Chosen {
            depth: b.depth,
            activation: &b.activation,
            normalization: &b.normalization,
            lr: b.lr,
            held_out_seed: b.held_out_seed(),
        })
        .collect();
    let compare = seeds::compare(&runs, &chosen, threshold);
    let mut figures = plan_figures(out, (&runs, &best), log_y, title);
    let convergence = crate::convergence::rows(&runs);
    say_unrated(out, &runs, "convergence.csv or convergence_rate.*");
    figures.extend(convergence_figure(&runs, &convergence, title));
    // Exactly the places this collect writes, before it writes the first; then the write
    // leftovers of a collect killed while it wrote (a dead writer's
    // `train_loss.png.ntk-tmp-PID.png`; twenty-sixth hostile round, N8): its own files only.
    let names = ReportNames {
        tables: true,
        convergence: !convergence.is_empty(),
        stems: figures.iter().map(|(stem, _)| *stem).collect(),
    };
    ntk_files::places::check_replaced_in(out, &|name: &str| names.writes(name))?;
    ntk_files::outset::clean_dir(out, None, &crate::files::is_report_file);
    let mut written = TABLES.map(|t| out.join(t)).to_vec();
    write_csv(&written[0], &rows)?;
    ntk_files::table::write_csv_headed(&written[1], &best, &BEST_COLUMNS)?;
    ntk_files::table::write_csv_headed(&written[2], &compare, &seeds::COMPARE_COLUMNS)?;
    if !convergence.is_empty() {
        let path = out.join("convergence.csv");
        write_csv(&path, &convergence)?;
        written.push(path);
    }
    // Figures not drawn while configurations wait for runs say so, not that their runs are
    // gone (hundred-and-fortieth hostile round, second review, D1).
    let waiting = held.iter().any(|(_, why)| why.waits());
    say_stale_held(out, &names, waiting);
    let drawn = save_figures(out, &figures, layout).map_err(|e| crate::Error::FiguresFailed {
        out: out.to_path_buf(),
        source: Box::new(e),
    })?;
    written.extend(drawn.files());
    record_written(out, &written, &drawn);
    Ok(written)
}

/// The convergence figure of `runs` (their rows `convergence`), where a run carries a
/// prediction: what `collect` draws beside the other figures, and `plot` too (eighty-second
/// hostile round, D13: `plot` never drew it).
pub fn convergence_figure(
    runs: &[RunRecord],
    convergence: &[crate::convergence::ConvergenceRow],
    title: Option<&str>,
) -> Option<(&'static str, ntk_plot::Figure)> {
    let on = data_title(runs);
    // The runs that have not ended are in the note, among their points' runs.
    let mut drawn = convergence.to_vec();
    drawn.extend(crate::convergence::unrated_rows(runs));
    let figure = crate::convergence::figure(&drawn, (on.as_deref(), title));
    // Rows with no rate a log axis draws: said, not left to a figure that is missing
    // without a word (hundred-and-fifty-third hostile round, N4: every run diverged before
    // the middle half's end).
    if figure.is_none() && !convergence.is_empty() {
        eprintln!(
            "note: convergence_rate.* is not drawn: no rate of convergence.csv's {} run(s) is \
             one a log axis draws (each is empty, 0, negative or not finite; the table says \
             which)",
            convergence.len()
        );
    }
    figure.map(|f| ("convergence_rate", f))
}

/// Whether a collect or plot into `out` draws the loss on a log scale (`train_loss_log`):
/// where `asked` (`--log`), and where that figure stands there already (a run's collect
/// draws it), so that it shows the runs as they are now (eighty-fourth hostile round, D1:
/// every `collect` without `--log` called the run's own log figure one of runs that are
/// gone, and it would have missed runs added since).
pub fn draws_log(out: &Path, asked: bool) -> bool {
    asked
        || std::fs::read_dir(out).is_ok_and(|entries| {
            entries.flatten().any(|e| {
                ntk_plot::is_figure_file(&e.file_name().to_string_lossy(), "train_loss_log")
            })
        })
}

/// Records the files a collect or plot wrote in `out` (`written`: its tables and the files
/// [`save_figures`] drew, `drawn`), so that a later one
/// removes what it no longer writes (eighty-eighth hostile round, D5); an earlier caption
/// beside a figure drawn now without one is removed where the record proves it the tools' as
/// written, and said and left otherwise (eighty-ninth, D5). A caption kept, not written, is
/// not recorded (hundred-and-twenty-sixth, D2).
pub fn record_written(out: &Path, written: &[std::path::PathBuf], drawn: &ntk_plot::Drawn) {
    ntk_runs::sweep::settle_captions(out, &drawn.uncaptioned);
    ntk_runs::sweep::record_reports(out, &|name: &str| {
        written
            .iter()
            .any(|p| p.file_name().is_some_and(|n| n == name))
    });
}

/// Says the report files that stand in `out` but that this collect or plot (writing
/// `names`) does not write: an earlier collect's, they show runs that are gone or measure
/// what no run here measures now (seventy-third hostile round, D6: the convergence table and
/// figure of a prediction that is gone; eighty-third, D1: `ntk_kappa.*`, `ntk_angle.*` and
/// `test_accuracy.*` beside a run recomputed without `[ntk]` or a test set). They are left as
/// they are: nothing shows a file at those names to be the collect's and not a user's
/// (seventy-fourth, D6: a user's `convergence.csv` was removed).
pub fn say_stale(out: &Path, names: &ReportNames) {
    say_stale_of(out, out, names);
}

/// [`say_stale`] where `waiting` says that configurations with runs are held out of the
/// figures until runs their rate choice reads end or are made ([`Held::waits`]).
fn say_stale_held(out: &Path, names: &ReportNames, waiting: bool) {
    if !waiting {
        return say_stale(out, names);
    }
    ntk_runs::sweep::say_stale_reports_as(out, &|name| stale_why_as(name, names, true));
}

/// [`say_stale`] for a plot of the runs in `from` into `out` (`plot --out`), whose figures
/// standing there are not of `from` (eighty-ninth hostile round, N2).
pub fn say_stale_of(out: &Path, from: &Path, names: &ReportNames) {
    ntk_runs::sweep::say_stale_figures_of(out, ("runs", from), &|name| stale_why(name, names));
}

/// Why the report file `name` is not written by a collect or plot that writes `names`;
/// `None` where it is written, or is not a report file it could write.
pub fn stale_why(name: &str, names: &ReportNames) -> Option<String> {
    stale_why_as(name, names, false)
}

/// [`stale_why`], where `waiting` says that configurations are held out of the figures
/// until runs their rate choice reads end or are made: a figure of the configurations'
/// curves is not drawn for that, whatever the runs hold.
fn stale_why_as(name: &str, names: &ReportNames, waiting: bool) -> Option<String> {
    // A plot writes figures only: the tables beside them are not its to speak of.
    let could = ReportNames {
        tables: names.tables,
        convergence: names.tables,
        stems: crate::files::FIGURE_STEMS.to_vec(),
    };
    let per_configuration =
        !(name == "convergence.csv" || ntk_plot::is_figure_file(name, "convergence_rate"));
    (could.writes(name) && !names.writes(name)).then(|| match (waiting, per_configuration) {
        (true, true) => "no configuration here has a chosen rate to draw yet: best.csv waits \
                         for runs its choice reads (the warnings above), so these show a \
                         choice not made now"
            .to_string(),
        // The convergence table and figure: of runs that have ended, whatever waits.
        _ => not_drawn_why(name).to_string(),
    })
}

/// Why a report file ([`crate::files::is_report_file`]) is not written now, for [`say_stale`].
fn not_drawn_why(name: &str) -> &'static str {
    let is = |stem: &str| ntk_plot::is_figure_file(name, stem);
    if name == "convergence.csv" || is("convergence_rate") {
        "no run here that has ended carries a prediction now"
    } else if is("ntk_kappa") || is("ntk_angle") {
        "no run here has an NTK measurement ([ntk]) to draw now"
    } else if is("test_accuracy") {
        "no run here has a test accuracy (train.test_n) to draw now"
    } else if is("representation_cosine") {
        "no run here has a representation measurement ([representations]) to draw now"
    } else if is("train_loss_log") {
        "drawn only with --log"
    } else {
        "no run here has a finished epoch to draw now"
    }
}

/// Refuses runs of `out` that are not one sweep's, as `collect` and `plot` merge them into
/// one configuration's mean over seeds: recorded configs that differ beyond the sweep's axes
/// (unless `allow_mixed`), and two runs of one point and seed (sixty-ninth hostile round,
/// D2: `plot` drew as one mean a copy of a run, another width, another `ntk.output`, which
/// `collect` refused).
pub fn check_mergeable(out: &Path, runs: &[RunRecord], allow_mixed: bool) -> crate::Result<()> {
    // A run being trained now may not have recorded its provenance yet: it is listed as
    // running, and checked once it has. A run that failed before it recorded one has no
    // results to merge (it is listed as failed): not taken for an older version's; nor one
    // killed before its first checkpoint, which records none yet (seventy-sixth hostile
    // round, D4).
    let recorded_yet =
        |r: &&RunRecord| r.summary.is_some() || r.dir.clone().join("checkpoint.json").exists();
    let entries: Vec<(PathBuf, Option<&Provenance>)> = runs
        .iter()
        .filter(|r| {
            (r.running.is_none() && r.failure.is_none() && recorded_yet(r))
                || r.provenance.is_some()
        })
        .map(|r| (r.dir.clone(), r.provenance.as_ref()))
        .collect();
    let checked = provenance::check_merge(
        out,
        &entries,
        &crate::config::merge_axes(),
        allow_mixed,
        crate::run::ONE_FORM,
    )
    .and_then(|()| {
        if allow_mixed {
            return Ok(());
        }
        crate::config::own_keys_agree(&entries).map_err(|e| ntk_runs::Error::At {
            path: out.to_path_buf(),
            source: Box::new(e),
        })
    });
    if checked.is_ok()
        && let Some(why) = crate::config::seeds_mixed(&entries)
    {
        eprintln!("warning: {}: {why}", out.display());
    }
    if let Err(e) = checked {
        // The refusal of mixed configs points to --allow-mixed: where two runs are one point
        // and seed, which that flag refuses too, that refusal comes first (twenty-third
        // hostile round, N5).
        if matches!(e, ntk_runs::Error::MixedConfigs { .. }) {
            check_points_once(runs)?;
        }
        return Err(e.into());
    }
    check_points_once(runs)
}

/// Refuses two runs of one point and seed ([`crate::config::point_key`]), `--allow-mixed`
/// or not: the seeds' statistics would count them twice (twenty-second hostile round, D1:
/// a run differing only in `train.checkpoint_every` made `seeds 2, sd 0`).
fn check_points_once(runs: &[RunRecord]) -> crate::Result<()> {
    let entries: Vec<(PathBuf, &Provenance)> = runs
        .iter()
        .filter_map(|r| Some((r.dir.clone(), r.provenance.as_ref()?)))
        .collect();
    match crate::config::same_point_pair(&entries) {
        Some((first, second)) => Err(crate::Error::SamePointTwice {
            first: first.to_path_buf(),
            second: second.to_path_buf(),
        }),
        None => Ok(()),
    }
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
        assert_eq!(ntk_plot::style::three_digits(0.797458).to_string(), "0.797");
        assert_eq!(ntk_plot::style::three_digits(0.003).to_string(), "0.003");
        assert_eq!(ntk_plot::style::three_digits(30.0).to_string(), "30");
        assert_eq!(
            ntk_plot::style::three_digits(0.1412364).to_string(),
            "0.141"
        );
    }

    /// Past the last epoch of a seed that stopped (diverged), the curve goes on over the
    /// seeds that reach each epoch.
    #[test]
    fn seed_curves_are_means_with_their_range() {
        let a: Vec<(usize, f64)> = vec![(1, 2.0), (2, 1.0), (3, 0.5)];
        let b: Vec<(usize, f64)> = vec![(1, 4.0), (2, 0.5)];
        let tables: Vec<&[(usize, f64)]> = vec![&a, &b];
        let curve = mean_curve(&tables, |r| r.0, |r| Some(r.1));
        assert_eq!(
            curve,
            [
                (1.0, 3.0, 2.0, 4.0),
                (2.0, 0.75, 0.5, 1.0),
                (3.0, 0.5, 0.5, 0.5)
            ]
        );
    }
}
