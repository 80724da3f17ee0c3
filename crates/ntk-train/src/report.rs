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

/// A run directory read back.
pub struct RunRecord {
    pub id: String,
    pub depth: usize,
    pub activation: String,
    pub normalization: String,
    pub lr: f64,
    pub seed: u64,
    pub metrics: Vec<EpochMetrics>,
    pub ntk: Vec<NtkRow>,
    /// `representations.csv` when the run tracked them, else empty.
    pub representations: Vec<RepresentationRow>,
    /// The training loss the run minimized (`train.loss`).
    pub loss: crate::loss::Loss,
    /// `predicted.csv` and `predicted_spectrum.csv` when the run predicted itself
    /// (`[prediction]`), else empty.
    pub predicted: Vec<crate::predict::PredictedRow>,
    pub predicted_spectrum: Vec<crate::predict::SpectrumRow>,
    pub summary: Option<TrainSummary>,
    /// The recorded provenance: the summary's, else (a run still going) its checkpoint's.
    pub provenance: Option<Provenance>,
    /// The live writer of a run being trained now (its directory's lock holder).
    pub running: Option<String>,
    /// Why the run's last attempt failed (`failed.json`), if it did.
    pub failure: Option<String>,
}

impl RunRecord {
    fn diverged(&self) -> bool {
        self.summary.as_ref().is_some_and(|s| s.diverged)
    }
    fn finished(&self) -> bool {
        self.summary.as_ref().is_some_and(|s| s.finished())
    }
    fn key(&self) -> (usize, String, String) {
        (
            self.depth,
            self.activation.clone(),
            self.normalization.clone(),
        )
    }
}

impl crate::convergence::PredictedRun for RunRecord {
    fn id(&self) -> &str {
        &self.id
    }
    fn seed(&self) -> u64 {
        self.seed
    }
    fn predicted(&self) -> &[crate::predict::PredictedRow] {
        &self.predicted
    }
    fn predicted_spectrum(&self) -> &[crate::predict::SpectrumRow] {
        &self.predicted_spectrum
    }
}

impl seeds::SeedRun for RunRecord {
    fn configuration(&self) -> (usize, &str, &str) {
        (self.depth, &self.activation, &self.normalization)
    }
    fn lr(&self) -> f64 {
        self.lr
    }
    fn finished(&self) -> bool {
        RunRecord::finished(self)
    }
    fn epochs(&self) -> &[EpochMetrics] {
        &self.metrics
    }
}

/// Reads one run directory (it must hold `config.toml`).
pub fn read_run(dir: &Path, id: String) -> crate::Result<RunRecord> {
    let cfg_path = dir.join("config.toml");
    let cfg: TrainConfig = ntk_runs::config_file::load_toml(&cfg_path)?;
    let spec = cfg.spec()?;
    let summary = read_summary(dir)?;
    let provenance = match &summary {
        Some(s) => s.provenance.clone(),
        None => checkpoint_provenance(dir),
    };
    if let Some(p) = &provenance {
        check_config_file(&cfg_path, &cfg, p)?;
    }
    let metrics_path = dir.join("metrics.csv");
    let metrics: Vec<EpochMetrics> = read_csv(&metrics_path)?;
    if let Some(s) = &summary
        && metrics.len() != s.epochs_completed
    {
        return Err(crate::Error::MetricsDisagree {
            metrics: metrics_path,
            rows: metrics.len(),
            summary: dir.join("summary.json"),
            epochs: s.epochs_completed,
        });
    }
    if let Some(s) = &summary
        && let Some(what) = metrics_disagree(&metrics, s)
    {
        return Err(crate::Error::MetricsEdited {
            metrics: metrics_path,
            summary: dir.join("summary.json"),
            what,
        });
    }
    Ok(RunRecord {
        id,
        depth: spec.depth(),
        activation: spec.activation_name(),
        normalization: spec.normalization_name(),
        lr: cfg.optim.lr,
        seed: spec.seed(),
        metrics,
        ntk: read_csv(&dir.join("ntk.csv"))?,
        representations: match dir.join("representations.csv") {
            p if p.exists() => read_csv(&p)?,
            _ => Vec::new(),
        },
        loss: cfg.train.loss,
        predicted: match dir.join("predicted.csv") {
            p if p.exists() => read_csv(&p)?,
            _ => Vec::new(),
        },
        predicted_spectrum: match dir.join("predicted_spectrum.csv") {
            p if p.exists() => read_csv(&p)?,
            _ => Vec::new(),
        },
        summary,
        provenance,
        running: ntk_files::lock::DirLock::holder(dir),
        failure: ntk_runs::sweep::Failure::read(dir).map(|f| f.reason),
    })
}

/// Refuses a `config.toml` that says other than the fingerprinted config its run recorded
/// (edited after the run): the tables would report the edit. Every key both hold is
/// compared, except those the run resolves from its data and command line.
fn check_config_file(path: &Path, cfg: &TrainConfig, recorded: &Provenance) -> crate::Result<()> {
    let now = provenance::flatten_config(&crate::train::recorded_config(cfg));
    let edited: Vec<String> = now
        .iter()
        .filter(|(k, _)| k.as_str() != "model.input_dim")
        .filter_map(|(k, v)| {
            let was = recorded.config.get(k)?;
            (was != v).then(|| format!("{k} = {v} there, {was} recorded"))
        })
        .collect();
    if edited.is_empty() {
        return Ok(());
    }
    Err(crate::Error::Edited {
        path: path.to_path_buf(),
        edits: edited,
    })
}

/// The provenance a run's checkpoint pointer records (a run without a summary yet).
/// Where a finished run's metrics table disagrees with the summary written from the same
/// rows (an edited `metrics.csv`): a non-finite train loss (a run stops before such an
/// epoch is recorded; a diverging network's test loss may be infinite), or a final or best
/// value that is not the summary's.
fn metrics_disagree(rows: &[EpochMetrics], s: &TrainSummary) -> Option<String> {
    if let Some(r) = rows
        .iter()
        .find(|r| !(r.train_loss.is_finite() && r.train_accuracy.is_finite()))
    {
        return Some(format!(
            "epoch {} has a train loss that is not finite",
            r.epoch
        ));
    }
    let last = rows.last();
    let checks = [
        (
            "final train loss",
            last.map(|r| r.train_loss),
            s.final_train_loss,
        ),
        (
            "final train accuracy",
            last.map(|r| r.train_accuracy),
            s.final_train_accuracy,
        ),
        (
            "final test accuracy",
            rows.iter().rev().find_map(|r| r.test_accuracy),
            s.final_test_accuracy,
        ),
        (
            "best test accuracy",
            rows.iter().filter_map(|r| r.test_accuracy).reduce(f64::max),
            s.best_test_accuracy,
        ),
    ];
    checks
        .into_iter()
        .find(|(_, table, summary)| table != summary)
        .map(|(what, table, summary)| {
            let show = |v: Option<f64>| v.map_or("none".to_string(), |v| v.to_string());
            format!(
                "{what} {} there, {} in the summary",
                show(table),
                show(summary)
            )
        })
}

fn checkpoint_provenance(dir: &Path) -> Option<Provenance> {
    let text = std::fs::read_to_string(dir.join("checkpoint.json")).ok()?;
    serde_json::from_str::<crate::checkpoint::Pointer>(&text)
        .ok()?
        .provenance
}

/// Every run under `out`: `out` itself when it is a run directory, else `out/runs/*`.
pub fn read_runs(out: &Path) -> crate::Result<Vec<RunRecord>> {
    if out.join("config.toml").exists() {
        return Ok(vec![read_run(out, String::new())?]);
    }
    let runs = out.join("runs");
    if let Err(source) = std::fs::read_dir(&runs) {
        return Err(crate::Error::NoRun {
            out: out.to_path_buf(),
            source,
        });
    }
    let dirs: Vec<PathBuf> = ntk_runs::sweep::find_files(&runs, "config.toml")
        .into_iter()
        .filter_map(|p| p.parent().map(Path::to_path_buf))
        .collect();
    if dirs.is_empty() {
        let probe = runs.join("relu").is_dir() || runs.join("linear").is_dir();
        return Err(crate::Error::NoTrainingRuns {
            out: out.to_path_buf(),
            probe_sweep: probe,
        });
    }
    let mut runs = Vec::new();
    for d in &dirs {
        let id = d
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into());
        match read_run(d, id) {
            Ok(r) => runs.push(r),
            // A run that failed (`failed.json`) may have left files that cannot be read:
            // it is named, not read.
            Err(e) if ntk_runs::sweep::Failure::read(d).is_some() => {
                eprintln!(
                    "warning: {}: failed, and its files cannot be read: {e}",
                    d.display()
                );
            }
            Err(e) => return Err(e),
        }
    }
    Ok(runs)
}

/// One row of `sweep.csv`: every run.
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

impl From<RunStatus> for SweepStatus {
    fn from(s: RunStatus) -> Self {
        match s {
            RunStatus::Finished => Self::Finished,
            RunStatus::Diverged => Self::Diverged,
            RunStatus::Interrupted => Self::Interrupted,
        }
    }
}

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

/// Mean, min and max over the tables `tables` (one per seed) of `value` row by row, over
/// the rows every table has, against the row's epoch.
fn mean_curve<T>(
    tables: &[&[T]],
    epoch: impl Fn(&T) -> usize,
    value: impl Fn(&T) -> Option<f64>,
) -> Vec<Stat> {
    let len = tables.iter().map(|t| t.len()).min().unwrap_or(0);
    (0..len)
        .filter_map(|i| {
            let vals: Vec<f64> = tables.iter().filter_map(|t| value(&t[i])).collect();
            if vals.len() < tables.len() {
                return None;
            }
            let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            Some((epoch(&tables[0][i]) as f64, mean(vals)?, lo, hi))
        })
        .collect()
}

fn metric_curve(runs: &[&RunRecord], value: impl Fn(&EpochMetrics) -> Option<f64>) -> Vec<Stat> {
    let tables: Vec<&[EpochMetrics]> = runs.iter().map(|r| r.metrics.as_slice()).collect();
    mean_curve(&tables, |r| r.epoch, value)
}

fn ntk_curve(runs: &[&RunRecord], value: impl Fn(&NtkRow) -> Option<f64>) -> Vec<Stat> {
    let tables: Vec<&[NtkRow]> = runs.iter().map(|r| r.ntk.as_slice()).collect();
    mean_curve(&tables, |r| r.epoch, value)
}

/// The epochs at which some seed's tracked kernel was singular (κ unresolved in
/// `ntk.precision`), over the rows every seed has.
fn singular_epochs(runs: &[&RunRecord]) -> Vec<f64> {
    let len = runs.iter().map(|r| r.ntk.len()).min().unwrap_or(0);
    (0..len)
        .filter(|&i| runs.iter().any(|r| r.ntk[i].singular))
        .map(|i| runs[0].ntk[i].epoch as f64)
        .collect()
}

/// The top layer's rows of each run's `representations.csv` (one per epoch), averaged.
fn top_representation_curve(
    runs: &[&RunRecord],
    value: impl Fn(&RepresentationRow) -> Option<f64>,
) -> Vec<Stat> {
    let tops: Vec<Vec<&RepresentationRow>> = runs
        .iter()
        .map(|r| {
            let top = r.representations.iter().map(|x| x.layer).max();
            r.representations
                .iter()
                .filter(|x| Some(x.layer) == top)
                .collect()
        })
        .collect();
    let tables: Vec<&[&RepresentationRow]> = tops.iter().map(Vec::as_slice).collect();
    mean_curve(&tables, |r| r.epoch, |r| value(r))
}

/// One curve of the figures: a configuration at its chosen lr, the runs (seeds) averaged.
struct Curve<'a> {
    label: String,
    color: ntk_plot::RGBColor,
    dash: Dash,
    marker: Marker,
    members: Vec<&'a RunRecord>,
}

/// The sorted distinct values of `key` over the chosen configurations.
fn distinct<T: Ord>(best: &[BestRow], key: impl Fn(&BestRow) -> T) -> Vec<T> {
    let mut v: Vec<T> = best.iter().map(key).collect();
    v.sort();
    v.dedup();
    v
}

/// Whether a run trained a ResNet (its provenance has a `[resnet]` table).
fn is_resnet(r: &RunRecord) -> bool {
    r.provenance
        .as_ref()
        .is_some_and(|p| p.config.keys().any(|k| k.starts_with("resnet.")))
        || r.summary
            .as_ref()
            .is_some_and(|s| s.model.starts_with("resnet"))
}

/// The family a configuration's colour and words come from: a ResNet's variant, an MLP's
/// normalization layer when it has one, else its activation.
fn family(b: &BestRow, resnet: bool) -> &str {
    if resnet || b.normalization != "none" {
        &b.normalization
    } else {
        &b.activation
    }
}

/// The configuration in the words of a paper: "ReLU", "ReLU, BatchNorm", a ResNet's
/// "NormReLU" (its variant).
fn family_words(b: &BestRow, resnet: bool) -> String {
    if resnet {
        ntk_plot::style::words(&b.normalization)
    } else {
        ntk_plot::style::family_words(&b.activation, &b.normalization)
    }
}

/// The curves of the chosen configurations: colour and marker by depth (a ramp) in a depth
/// sweep, by family ([`ntk_plot::style`]: the same colour for ReLU, NormReLU, BatchNorm in
/// every figure) when there is one depth; dash by family; labels in words ("ResNet-20,
/// NormReLU", "depth 3, ReLU, BatchNorm"), the lr when the runs used several.
fn curves<'a>(runs: &'a [RunRecord], best: &[BestRow]) -> Vec<Curve<'a>> {
    let styles = distinct(best, |b| (b.activation.clone(), b.normalization.clone()));
    let depths = distinct(best, |b| b.depth);
    let several_lrs = runs
        .iter()
        .map(|r| r.lr.to_bits())
        .collect::<std::collections::BTreeSet<_>>()
        .len()
        > 1;
    best.iter()
        .map(|b| {
            let style = styles
                .iter()
                .position(|s| s.0 == b.activation && s.1 == b.normalization)
                .unwrap_or(0);
            let depth = depths.iter().position(|&d| d == b.depth).unwrap_or(0);
            let members = chosen_runs(runs, b);
            let resnet = members.first().is_some_and(|r| is_resnet(r));
            let mut label = if resnet {
                format!("ResNet-{}", b.depth)
            } else {
                format!("depth {}", b.depth)
            };
            if styles.len() > 1 {
                label += &format!(", {}", family_words(b, resnet));
            }
            if several_lrs {
                label += &format!(" (lr {})", b.lr);
            }
            let name = family(b, resnet);
            // One depth: the families take the colours and markers too, not only dashes.
            let (color, marker) = if depths.len() > 1 {
                (ramp(depth, depths.len()), Marker::nth(depth))
            } else {
                (
                    ntk_plot::style::family_color(name).unwrap_or(ramp(style, styles.len())),
                    ntk_plot::style::family_marker(name),
                )
            };
            Curve {
                label,
                color,
                dash: [Dash::Solid, Dash::Dashed, Dash::DashDot, Dash::Dotted][style % 4],
                marker,
                members,
            }
        })
        .collect()
}

/// A figure of `curves` against the epoch, each curve's points read by `points`: the mean
/// over seeds, and where a curve has several seeds their min..max as a band.
fn figure(curves: &[Curve], title: &str, y: &str, log_y: bool, points: &CurveOf) -> Figure {
    let series: Vec<Series> = curves
        .iter()
        .map(|c| {
            let (stats, unresolved) = points(&c.members);
            Series {
                label: c.label.clone(),
                points: stats.iter().map(|p| (p.0, p.1)).collect(),
                spread: (c.members.len() > 1)
                    .then(|| Spread::Band(stats.iter().map(|p| (p.2, p.3)).collect())),
                color: c.color,
                dash: c.dash,
                marker: Some(c.marker),
                unresolved,
            }
        })
        .filter(|s| !s.points.is_empty() || !s.unresolved.is_empty())
        .collect();
    let seeds: Vec<usize> = curves.iter().map(|c| c.members.len()).collect();
    let note = match (seeds.iter().min(), seeds.iter().max()) {
        (Some(1), Some(1)) => "one seed per curve".to_string(),
        (Some(a), Some(b)) if a == b => format!("lines: mean over {a} seeds\nshaded: min to max"),
        (Some(a), Some(b)) => format!("lines: mean over {a}-{b} seeds\nshaded: min to max"),
        _ => String::new(),
    };
    let note = if series.iter().any(|s| !s.unresolved.is_empty()) {
        format!(
            "{note}\nopen markers above the axes: a seed's\nkernel was singular (κ beyond\nntk.precision; see ntk.csv)"
        )
    } else {
        note
    };
    Figure {
        title: title.into(),
        x_label: "epoch".into(),
        y_label: y.into(),
        x_scale: Scale::Integer,
        y_scale: if log_y { Scale::Log } else { Scale::Linear },
        series,
        note: (!note.is_empty()).then_some(note),
    }
}

/// Figures of the chosen configurations: training loss (Fig. 3; with `log_y` also on a log
/// scale, `train_loss_log`), test accuracy, and, when the probes ran during training, kappa
/// and the minimum gradient angle vs epoch, and the mean cosine between the test inputs'
/// top-layer representations vs epoch (Agarwal et al., Fig. 1). Figures without data are
/// not written.
/// `title` replaces each figure's title as [`ntk_plot::title_as_asked`] says (by default a
/// title names what the figure shows and what the runs trained on: `MNIST, 60,000 images`).
/// The runs are the sweep in `dir`'s; the figures go into `out` (`dir` itself, or
/// `plot --out`).
pub fn figures(
    (dir, out): (&Path, &Path),
    runs: &[RunRecord],
    log_y: bool,
    title: Option<&str>,
    layout: Layout,
) -> crate::Result<Vec<PathBuf>> {
    let curves = curves(runs, &choose(runs));
    let on = data_title(runs).map_or(String::new(), |d| format!(" ({d})"));
    let titled = |t: &str| ntk_plot::title_as_asked(title, || format!("{t}{on}"), t);
    // The probes during training measure a subset: their titles say which.
    let probed = |t: &str, key: &str, split: &str| {
        let on = probe_title(runs, key, split).map_or_else(|| on.clone(), |p| format!(" ({p})"));
        ntk_plot::title_as_asked(title, || format!("{t}{on}"), t)
    };
    let loss = |m: &[&RunRecord]| (metric_curve(m, |r| Some(r.train_loss)), vec![]);
    let accuracy = |m: &[&RunRecord]| (metric_curve(m, |r| r.test_accuracy), vec![]);
    let kappa = |m: &[&RunRecord]| (ntk_curve(m, |r| r.kappa), singular_epochs(m));
    let angle = |m: &[&RunRecord]| (ntk_curve(m, |r| r.min_grad_angle_deg), vec![]);
    let cosine = |m: &[&RunRecord]| (top_representation_curve(m, |r| Some(r.mean_cosine)), vec![]);
    let loss_y = if runs.iter().all(|r| r.loss == crate::loss::Loss::Mse) {
        "training loss (square loss"
    } else {
        "training loss (cross-entropy"
    };
    // The runs' own NTK predictions (`[prediction]`), dotted beside the measured curves.
    let with_predictions = |mut fig: Figure| {
        let predicted: Vec<Series> = curves
            .iter()
            .filter_map(|c| crate::convergence::predicted_series(c.color, &c.members))
            .collect();
        if !predicted.is_empty() {
            let note = crate::convergence::PREDICTED_NOTE;
            fig.note = Some(
                fig.note
                    .map_or(note.to_string(), |n| format!("{n}\n{note}")),
            );
            fig.series.extend(predicted);
        }
        fig
    };
    let mut figures = vec![(
        "train_loss",
        with_predictions(figure(
            &curves,
            &titled("Training loss"),
            &format!("{loss_y})"),
            false,
            &loss,
        )),
    )];
    if log_y {
        let y = format!("{loss_y}, log scale)");
        figures.push((
            "train_loss_log",
            with_predictions(figure(&curves, &titled("Training loss"), &y, true, &loss)),
        ));
    }
    figures.extend([
        (
            "test_accuracy",
            figure(
                &curves,
                &titled("Test accuracy"),
                "test accuracy",
                false,
                &accuracy,
            ),
        ),
        (
            "ntk_kappa",
            figure(
                &curves,
                &probed("NTK condition number during training", "ntk.n", "training"),
                "NTK condition number κ",
                true,
                &kappa,
            ),
        ),
        (
            "ntk_angle",
            figure(
                &curves,
                &probed(
                    "Minimum gradient angle during training",
                    "ntk.n",
                    "training",
                ),
                "min gradient angle (°)",
                false,
                &angle,
            ),
        ),
        (
            "representation_cosine",
            figure(
                &curves,
                &probed(
                    "Test inputs' representations at the top layer",
                    "representations.n",
                    "test",
                ),
                "mean normalized dot product (cosine)",
                false,
                &cosine,
            ),
        ),
    ]);
    let mut written = Vec::new();
    // Runs that failed are named on every figure (they are not drawn).
    let failed = ntk_runs::sweep::failed_note(dir);
    for (stem, mut fig) in figures.into_iter().filter(|(_, f)| !f.series.is_empty()) {
        if let Some(f) = &failed {
            fig.note = Some(fig.note.map_or(f.clone(), |n| format!("{n}\n{f}")));
        }
        fig.save_as(&out.join(stem), layout)?;
        written.push(out.join(format!("{stem}.png")));
        written.push(out.join(format!("{stem}.svg")));
        written.push(out.join(format!("{stem}.pdf")));
    }
    Ok(written)
}

/// What the runs trained on, for the figures' titles (`MNIST, 60,000 images`), when every
/// run records the same data set and number of training images.
fn data_title(runs: &[RunRecord]) -> Option<String> {
    let (set, n) = (recorded(runs, "data.dataset")?, recorded(runs, "data.n")?);
    Some(images_title(set.as_str()?, n.as_u64()?))
}

/// The value of the config key `key` that every run records alike (`None` when a run
/// records another value, or none).
fn recorded(runs: &[RunRecord], key: &str) -> Option<serde_json::Value> {
    let of = |r: &RunRecord| r.provenance.as_ref()?.config.get(key).cloned();
    let first = of(runs.first()?)?;
    runs.iter()
        .all(|r| of(r).as_ref() == Some(&first))
        .then_some(first)
}

/// What a probe during training measured, for its figures' titles (`Fashion-MNIST, the
/// first 500 training images`): the data set and the probe's `key` (`ntk.n`,
/// `representations.n`) as every run records them.
fn probe_title(runs: &[RunRecord], key: &str, split: &str) -> Option<String> {
    let (set, n) = (recorded(runs, "data.dataset")?, recorded(runs, key)?);
    let (name, what) = set_words(set.as_str()?);
    let n = group_digits(n.as_u64()?);
    Some(format!("{name}, the first {n} {split} {what}"))
}

/// `MNIST, 60,000 images` for the data set's config name and the number of images.
fn images_title(set: &str, n: u64) -> String {
    let (name, what) = set_words(set);
    format!("{name}, {} {what}", group_digits(n))
}

/// The data set's name as the papers write it and what its samples are (`images`, or
/// `samples` for the synthetic set and one's own file).
fn set_words(set: &str) -> (&str, &'static str) {
    let kind = ntk_data::config::Dataset::parse(set);
    let what = match kind {
        Some(ntk_data::config::Dataset::File | ntk_data::config::Dataset::Synthetic) => "samples",
        _ => "images",
    };
    (kind.map_or(set, |d| d.paper_name()), what)
}

/// `60,000` for 60000.
fn group_digits(n: u64) -> String {
    let digits: Vec<char> = n.to_string().chars().collect();
    digits
        .iter()
        .enumerate()
        .flat_map(|(i, c)| {
            let comma = i > 0 && (digits.len() - i).is_multiple_of(3);
            comma.then_some(',').into_iter().chain(std::iter::once(*c))
        })
        .collect()
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
    use super::*;

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
