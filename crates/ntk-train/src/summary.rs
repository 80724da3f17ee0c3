//! A run's `summary.json`: what it holds ([`TrainSummary`]), how the run ended
//! ([`RunStatus`]), writing it when the run ends ([`finish`]) and reading it back
//! ([`read_summary`]).

use std::path::Path;
use std::time::Instant;

use ntk_runs::provenance::Provenance;
use serde::{Deserialize, Serialize};

use crate::epoch::{Diverged, Progress};
use crate::run::Run;

/// `summary.json` of a run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TrainSummary {
    /// How the run ended.
    pub status: RunStatus,
    pub diverged: bool,
    /// The epoch in which the run diverged (not among `epochs_completed`).
    pub diverged_epoch: Option<usize>,
    /// Why it diverged: which loss, its value, the reference ([`crate::divergence`]);
    /// absent in summaries written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub divergence: Option<crate::divergence::Divergence>,
    /// The run's initial loss: the mean loss of its first batch before the first step, the
    /// reference of divergence (absent in summaries written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_loss: Option<f64>,
    pub epochs_completed: usize,
    pub iterations_completed: usize,
    pub final_train_loss: Option<f64>,
    pub final_train_accuracy: Option<f64>,
    pub final_test_loss: Option<f64>,
    pub final_test_accuracy: Option<f64>,
    pub best_test_accuracy: Option<f64>,
    pub final_kappa: Option<f64>,
    pub model: String,
    pub depth: usize,
    pub width: usize,
    pub activation: String,
    pub normalization: String,
    pub lr: f64,
    pub batch_size: usize,
    pub model_seed: u64,
    pub data_seed: u64,
    pub data: String,
    pub backend: ntk_numerics::backend::Backend,
    /// What computed the steps ([`ntk_engine::Engine`]: `burn`, `host` or `cudnn`). The
    /// backend says where Burn's tensors lived (the model of record, the evaluation, the
    /// tracked NTK), which is the CPU's `flex` also when the cuDNN engine trained on the GPU.
    /// Absent in summaries written before it was recorded (2026-11-29).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<ntk_engine::Engine>,
    pub precision: String,
    /// Wall time of this process's part of the run (a resumed run counts its own).
    pub seconds: f64,
    /// Where the science is at risk: the inputs' scale decides the tracked kappa
    /// (`ntk_kernel::scale`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The resolved config, its fingerprint, the tool, commit and command line
    /// (`ntk_runs::provenance`); absent in summaries written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
    /// The run's tables beside its metrics ([`RECORDED_FILES`]) as the run wrote them, by
    /// size and SHA-256 ([`ntk_runs::manifest`]; empty when it wrote none of them), checked
    /// by `collect` and by a sweep before the run counts as done ([`check_recorded`]);
    /// absent in summaries written before they were recorded (2026-12-03). Seventy-third
    /// hostile round, D6: an edited `predicted.csv` or `ntk.csv` reached `convergence.csv`
    /// and `sweep.csv`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<ntk_runs::manifest::Files>,
    /// `metrics.csv` as the run wrote it, by size and SHA-256: every epoch's row, not only
    /// the final and best values the summary holds it to (eighty-sixth hostile round, N3: a
    /// middle epoch's `train_loss` edited reached `convergence.csv` and the figures). Checked
    /// where `files` is ([`check_recorded`]); absent in summaries written before 2026-12-04.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics_file: Option<ntk_runs::manifest::Files>,
    /// SHA-256 of this summary's JSON with `checksum` null
    /// (`ntk_runs::provenance::SelfChecksum`): a summary edited after the run is not reported
    /// (seventy-fifth hostile round, D3: a finished run's `status` edited to `diverged` was
    /// reported so). Absent in summaries written before 2026-12-03.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checksum: Option<String>,
}

/// The tables a run writes beside `metrics.csv` (which is held to the summary's own
/// values), recorded in its summary ([`TrainSummary::files`]).
pub const RECORDED_FILES: [&str; 4] = [
    "ntk.csv",
    "representations.csv",
    "predicted.csv",
    "predicted_spectrum.csv",
];

/// Why the summary at `path` is not as its run wrote it: its fields do not match the
/// checksum it was written with (`SelfChecksum::sealed`), its recorded config included
/// (hundred-and-forty-fourth hostile round, D1 and N3: a summary whose recorded config was
/// edited was left to the config comparisons, which blamed `config.toml` or called the run
/// another config's); `None` where they do, or where it records no checksum (written
/// before 2026-12-03).
pub fn edited(s: &TrainSummary, path: &Path) -> Option<String> {
    (!ntk_runs::provenance::SelfChecksum::sealed(s)).then(|| {
        format!(
            "{}: its fields do not match the checksum it was written with: the summary was \
             edited after the run",
            path.display()
        )
    })
}

/// Checks that the run in `dir` holds the tables its summary (at `path`) records as the run
/// wrote them, and none of [`RECORDED_FILES`] it does not record: a file missing, edited
/// or added after the run is named. A summary that records none passes.
pub fn check_recorded(dir: &Path, s: &TrainSummary, path: &Path) -> Result<(), String> {
    check_metrics_file(dir, s, path)?;
    check_recorded_tables(dir, s, path)
}

/// [`check_recorded`] without `metrics.csv`: the tables of [`RECORDED_FILES`] only.
pub fn check_recorded_tables(dir: &Path, s: &TrainSummary, path: &Path) -> Result<(), String> {
    match &s.files {
        None => Ok(()),
        Some(files) if files.is_empty() => {
            match RECORDED_FILES
                .iter()
                .find(|n| std::fs::symlink_metadata(dir.join(n)).is_ok())
            {
                Some(name) => Err(format!(
                    "{}: a file of the run's that {} does not record (its run did not write \
                     it): the set is not as its run wrote it",
                    dir.join(name).display(),
                    path.display()
                )),
                None => Ok(()),
            }
        }
        Some(files) => {
            ntk_runs::manifest::verify(dir, files, &RECORDED_FILES, path).map_err(|e| e.message)
        }
    }
}

/// The run's `metrics.csv` in `dir` against its record in the summary at `path`
/// ([`TrainSummary::metrics_file`]); a summary without one passes.
pub fn check_metrics_file(dir: &Path, s: &TrainSummary, path: &Path) -> Result<(), String> {
    match &s.metrics_file {
        Some(files) => {
            ntk_runs::manifest::verify(dir, files, &[METRICS_FILE], path).map_err(|e| e.message)
        }
        None => Ok(()),
    }
}

/// The run's table of epochs, recorded in its summary ([`TrainSummary::metrics_file`]).
pub const METRICS_FILE: &str = "metrics.csv";

impl ntk_runs::provenance::SelfChecksum for TrainSummary {
    fn checksum_field(&mut self) -> &mut Option<String> {
        &mut self.checksum
    }
}

impl TrainSummary {
    pub fn finished(&self) -> bool {
        self.status == RunStatus::Finished
    }
}

/// How a run ended, as `summary.json` records it (`finished`, `diverged`, `interrupted`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Every epoch (or iteration) of the config trained.
    Finished,
    /// The loss became non-finite or exploded (`diverged_epoch` says when, `divergence`
    /// why; [`crate::divergence`]); the last good state is kept.
    Diverged,
    /// Stopped before the end (`stop_after`, a signal); a checkpoint resumes it.
    Interrupted,
}

impl std::fmt::Display for RunStatus {
    /// The word `summary.json` and the tables use.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&ntk_names::spelled(self))
    }
}

/// A run's summary, if it has one; an error naming the file when it cannot be read.
pub fn read_summary(dir: &Path) -> crate::Result<Option<TrainSummary>> {
    Ok(ntk_runs::sweep::read(&dir.join("summary.json"))?)
}

/// This process's part of a run, as its summary records it: when it started (a resumed run
/// counts its own wall time) and the engine its steps ran on.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Process {
    pub(crate) started: Instant,
    pub(crate) engine: ntk_engine::Engine,
}

/// Ends the run: a run stopped early on purpose (`stop_after`) gets an `interrupted`
/// summary and no file (its checkpoint resumes it); a finished or diverged one (whose last
/// good state the epoch loop kept) writes `summary.json`.
pub(crate) fn finish(
    run: &Run,
    progress: &Progress,
    diverged: Option<Diverged>,
    process: Process,
) -> crate::Result<TrainSummary> {
    if diverged.is_none() && progress.rows.last().is_none_or(|r| r.epoch < run.epochs) {
        return Ok(summarize(run, progress, None, process, false));
    }
    let mut summary = summarize(run, progress, diverged, process, true);
    // Only the tables this run's config writes: one dropped beside a run that writes no
    // such table stays unrecorded, and `collect` names it (seventy-fifth hostile round, D2).
    let cfg = run.cfg;
    let writes: Vec<&str> = RECORDED_FILES
        .into_iter()
        .filter(|f| match *f {
            "ntk.csv" => cfg.ntk.is_some(),
            "representations.csv" => cfg.representations.is_some(),
            _ => cfg.prediction.is_some(),
        })
        .collect();
    let record = |names: &[&str]| {
        ntk_runs::manifest::record(run.out, names).map_err(|source| ntk_files::Error::Read {
            path: run.out.to_path_buf(),
            source,
        })
    };
    summary.files = Some(record(&writes)?);
    // None where the run wrote no epoch (a run that diverged in its first).
    summary.metrics_file = Some(record(&[METRICS_FILE])?).filter(|f| !f.is_empty());
    ntk_runs::provenance::SelfChecksum::seal(&mut summary);
    let json = serde_json::to_string_pretty(&summary).expect("serializes");
    ntk_files::io::atomic_write(&run.out.join("summary.json"), json.as_bytes()).map_err(
        |source| ntk_files::Error::Write {
            path: run.out.to_path_buf(),
            source,
        },
    )?;
    Ok(summary)
}

/// The summary of the run so far: `diverged`, `finished` (`complete`) or `interrupted`.
fn summarize(
    run: &Run,
    progress: &Progress,
    diverged: Option<Diverged>,
    process: Process,
    complete: bool,
) -> TrainSummary {
    let (cfg, net, rows) = (run.cfg, &run.labels, &progress.rows);
    let last = rows.last();
    TrainSummary {
        status: match (&diverged, complete) {
            (Some(_), _) => RunStatus::Diverged,
            (None, true) => RunStatus::Finished,
            (None, false) => RunStatus::Interrupted,
        },
        diverged: diverged.is_some(),
        diverged_epoch: diverged.as_ref().map(|d| d.epoch),
        divergence: diverged.map(|d| d.why),
        initial_loss: progress.guard.initial_loss(),
        epochs_completed: rows.len(),
        iterations_completed: last.map_or(0, |r| r.iteration),
        final_train_loss: last.map(|r| r.train_loss),
        final_train_accuracy: last.map(|r| r.train_accuracy),
        final_test_loss: rows.iter().rev().find_map(|r| r.test_loss),
        final_test_accuracy: rows.iter().rev().find_map(|r| r.test_accuracy),
        best_test_accuracy: rows.iter().filter_map(|r| r.test_accuracy).reduce(f64::max),
        final_kappa: progress.tracked.ntk.last().and_then(|r| r.kappa),
        model: net.model.clone(),
        depth: net.depth,
        width: net.width,
        activation: net.activation.clone(),
        normalization: net.normalization.clone(),
        lr: cfg.optim.lr,
        batch_size: cfg.train.batch_size,
        model_seed: net.seed,
        data_seed: cfg.train.seed,
        data: run.data.train.description.clone(),
        backend: run.compute.backend,
        engine: Some(process.engine),
        precision: run.compute.precision.to_string(),
        seconds: process.started.elapsed().as_secs_f64(),
        warnings: progress.warnings.clone(),
        provenance: Some(run.identity.provenance.clone()),
        files: None,
        metrics_file: None,
        checksum: None,
    }
}
