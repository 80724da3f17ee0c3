//! One training run: mini-batch SGD on the cross-entropy loss, metrics per epoch,
//! checkpoints, resume and divergence handling.
//!
//! A custom loop rather than burn-train's `Learner`: the run must (1) stop at the first
//! non-finite loss and keep the last good state, (2) resume bit for bit (the data order
//! and augmentation are functions of (seed, epoch), the checkpoint holds the optimizer's
//! momentum), (3) take the probe's NTK every K epochs, (4) write pandas-ready tables
//! atomically, and (5) run inside sweeps, shards and progress bars of our own. The pieces
//! that fit are Burn's: its module optimizer (with our SGD rule in the run's precision,
//! `ntk_engine::sgd::SgdOptimizer`: Burn's `Sgd` keeps momentum and weight decay in f32), the
//! loss (`CrossEntropyLoss`) and the burnpack records of the model and optimizer. Who computes
//! the steps (Burn's autodiff or the host engine) is a [`ntk_engine::stepper::Stepper`].
//!
//! This module is the run's lifecycle ([`train`]); its parts live beside it: what the run
//! is ([`crate::run`]), its data and batches ([`crate::data`]) and what it refuses of them
//! ([`crate::data_checks`]), the run directory
//! ([`crate::run_dir`]), the network and its stepper ([`crate::stepper`]), the epoch loop
//! ([`crate::epoch`]), the probes ([`crate::track`])
//! and the summary ([`crate::summary`]).

use std::path::Path;
use std::time::Instant;

use ntk_numerics::backend::Compute;

use crate::config::TrainConfig;
pub use crate::data::{Data, evaluate, load_data};
use crate::epoch::{Progress, run_epochs};
use crate::progress::Reporter;
use crate::run::Run;
pub use crate::run::{RunOptions, recorded_config, run_config_text, run_provenance};
pub use crate::run_dir::{RUN_FILES, check_run_dir};
use crate::run_dir::{Start, open_run_dir};
pub use crate::summary::{RunStatus, TrainSummary, read_summary};
use crate::track::Tracking;

/// Trains one configuration in `out`; writes `config.toml`, `metrics.csv` (and `ntk.csv`)
/// after every epoch, checkpoints, and `summary.json` at the end.
///
/// The phases: `check_inputs` ([`crate::data_checks`]), `open_run_dir` (refuse, resume or return a finished run),
/// `stepper::build` (the network and its step engine, a [`ntk_engine::Stepper`]), the NTK at
/// initialization, `run_epochs` (steps, divergence, evaluation, NTK tracking, checkpoints)
/// and `finish` (the summary, [`crate::summary::finish`]).
pub fn train(
    cfg: &TrainConfig,
    data: &Data,
    compute: &Compute,
    out: &Path,
    opts: RunOptions,
    reporter: &Reporter,
) -> crate::Result<TrainSummary> {
    let start = Instant::now();
    let spec = cfg.spec()?;
    let augment = crate::data_checks::check_inputs(cfg, &spec, data)?;
    let mut run = Run::new((cfg, spec, augment), data, compute, out, reporter);
    let (_lock, opened) = open_run_dir(run.out, &run.identity, opts.resume)?;
    let found = match opened {
        Start::Done(summary) => return Ok(*summary),
        Start::Fresh => None,
        Start::Resume(ck) => Some(*ck),
    };
    let mut stepper = crate::stepper::build(&run, found.as_ref())?;
    if stepper.on_gpu() {
        // The provenance names the GPU that computed the steps (not part of the fingerprint:
        // the config is the same on either machine).
        if let Some(m) = run.identity.provenance.machine.as_mut() {
            m.push_str(&format!("; steps: {}", stepper.method()));
        }
    }
    if let Some(ck) = &found {
        let here = &mut run.identity.provenance.machine;
        *here = resumed_machine(
            here.take(),
            ck.pointer
                .provenance
                .as_ref()
                .and_then(|p| p.machine.as_deref()),
            ck.pointer.epoch,
        );
    }
    let mut progress = Progress::new(found.as_ref(), cfg.train.divergence_factor);
    if found.is_some() {
        progress.restore_tables(run.out)?;
    }
    let tracking = Tracking::new(cfg, data)?;
    progress.warnings = tracking
        .as_ref()
        .map_or_else(Vec::new, |t| t.warnings(&stepper.valid()));
    match (&tracking, &found) {
        (Some(tr), None) => tr.record(&run, stepper.as_ref(), &mut progress.tracked, 0, false)?,
        // The probes of the checkpoint's epoch, where an interruption stopped them (they
        // run after the checkpoint): measured now, on the same model.
        (Some(tr), Some(ck)) => {
            let epoch = ck.pointer.epoch;
            let last = epoch == run.epochs;
            tr.record(&run, stepper.as_ref(), &mut progress.tracked, epoch, last)?;
        }
        (None, _) => {}
    }
    // Before the first step (or read back on a resume): a rate the linearized network
    // cannot take.
    let spectra = match &found {
        None => crate::predict::write(&run, &stepper.valid())?,
        Some(_) => crate::predict::written(&run)?,
    };
    progress
        .warnings
        .extend(crate::predict::stability_warnings(&spectra));
    for w in &progress.warnings {
        run.reporter
            .log(&ntk_runs::quote::message_escaped(&format!("warning: {w}")));
    }
    let diverged = run_epochs(
        &run,
        stepper.as_mut(),
        &mut progress,
        tracking.as_ref(),
        opts.stop_after,
    )?;
    let process = crate::summary::Process {
        started: start,
        engine: stepper.engine(),
    };
    crate::summary::finish(&run, &progress, diverged, process)
}

/// The machine a resumed run records: this process's, and, when the checkpoint was written
/// on another (another CPU, BLAS kernel or GPU), that one too with the epoch the resume
/// continues from: a run whose epochs ran on two machines compares bit for bit with
/// neither (twentieth hostile round, N2). A checkpoint's record that already names this
/// machine first (resumed here before) is kept as it is.
fn resumed_machine(here: Option<String>, checkpoint: Option<&str>, epoch: usize) -> Option<String> {
    match (here, checkpoint) {
        (Some(here), Some(then))
            if then != here && !then.starts_with(&format!("{here}; resumed at epoch")) =>
        {
            Some(format!(
                "{here}; resumed at epoch {epoch} from a checkpoint written on {then}"
            ))
        }
        (Some(_), Some(then)) => Some(then.to_string()),
        (here, _) => here,
    }
}

#[cfg(test)]
mod tests {
    use ntk_data::inputs::Inputs;
    use ntk_numerics::backend::{self, Precision};

    use super::*;
    use crate::checkpoint;
    use crate::data::epoch_order;
    use crate::epoch::train_epoch;

    /// A tanh MLP (a NaN input reaches its loss) on 12 samples of 4 inputs in 3 classes,
    /// batches of 4, three epochs, momentum, checkpoints every epoch.
    fn config(engine: &str) -> TrainConfig {
        let text = format!(
            r#"
[data]
dataset = "digits"
n = 12
subset = "first"

[model]
width = 8
depth = 1
activation = "tanh"
output_dim = 3
seed = 1

[optim]
lr = 0.1
momentum = 0.9

[train]
batch_size = 4
epochs = 3
test_n = 0
engine = "{engine}"
"#
        );
        TrainConfig::parse(&text).unwrap()
    }

    /// 12 samples of fixed pseudo-random values; sample `nan`, if any, holds a NaN.
    fn data(nan: Option<usize>) -> Data {
        let (n, d) = (12, 4);
        let mut x: Vec<f64> = (0..n * d)
            .map(|i| ((i * 37) % 29) as f64 / 14.5 - 1.0)
            .collect();
        if let Some(i) = nan {
            x[i * d] = f64::NAN;
        }
        let train = Inputs {
            x,
            n,
            d,
            labels: (0..n).map(|i| (i % 3) as u8).collect(),
            description: "synthetic".into(),
            source_rows: None,
        };
        Data::new(train, None)
    }

    fn cpu() -> Compute {
        backend::select(Some("flex"), Precision::F32).unwrap()
    }

    fn train_in(cfg: &TrainConfig, data: &Data, out: &Path, resume: bool) -> TrainSummary {
        let opts = RunOptions {
            resume,
            stop_after: None,
        };
        train(cfg, data, &cpu(), out, opts, &Reporter::silent()).unwrap()
    }

    /// `open_run_dir` on a new directory, a finished run (with and without `--resume`) and
    /// an interrupted one (its summary removed).
    #[test]
    fn the_run_directory_decides_how_a_run_starts() {
        let (cfg, data, compute) = (config("auto"), data(None), cpu());
        let dir = tempfile::tempdir().unwrap();
        let reporter = Reporter::silent();
        let spec = cfg.spec().unwrap();
        let run = Run::new((&cfg, spec, None), &data, &compute, dir.path(), &reporter);
        assert!(matches!(
            open_run_dir(run.out, &run.identity, false),
            Ok((_, Start::Fresh))
        ));
        assert!(dir.path().join("config.toml").exists());
        let done = train_in(&cfg, &data, dir.path(), false);
        assert_eq!(done.status, RunStatus::Finished);
        // The summary names the engine that computed the steps (auto: the host engine for a
        // plain MLP on the CPU), beside the backend of Burn's tensors.
        assert_eq!(done.engine, Some(ntk_engine::Engine::Host));
        let written = std::fs::read_to_string(dir.path().join("summary.json")).unwrap();
        assert!(written.contains("\"engine\": \"host\""), "{written}");
        for engine in ["burn", "host"] {
            let d = tempfile::tempdir().unwrap();
            let s = train_in(&config(engine), &data, d.path(), false);
            assert_eq!(s.engine.map(|e| e.name()), Some(engine));
        }
        let err = open_run_dir(run.out, &run.identity, false)
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("already holds a run") && err.contains("--resume"),
            "{err}"
        );
        match open_run_dir(run.out, &run.identity, true) {
            Ok((_, Start::Done(s))) => assert_eq!(*s, done),
            _ => panic!("a finished run is its summary"),
        }
        std::fs::remove_file(dir.path().join("summary.json")).unwrap();
        match open_run_dir(run.out, &run.identity, true) {
            Ok((_, Start::Resume(ck))) => {
                assert_eq!((ck.pointer.epoch, ck.pointer.iteration), (3, 9))
            }
            _ => panic!("a checkpoint without a summary resumes"),
        }
    }

    /// A NaN sample makes the first epoch's loss non-finite, with either engine: the epoch
    /// stops at its batch, the run is `diverged` in epoch 1 with nothing to keep.
    #[test]
    fn a_non_finite_loss_is_a_divergence() {
        for engine in ["burn", "host"] {
            let (cfg, data, compute) = (config(engine), data(Some(7)), cpu());
            let dir = tempfile::tempdir().unwrap();
            let reporter = Reporter::silent();
            let spec = cfg.spec().unwrap();
            let run = Run::new((&cfg, spec, None), &data, &compute, dir.path(), &reporter);
            let mut s = crate::stepper::build(&run, None).unwrap();
            let mut iteration = 0;
            let mut guard = crate::divergence::Guard::new(1e4, None);
            let why = train_epoch(&run, s.as_mut(), 1, &mut iteration, &mut guard).unwrap_err();
            assert_eq!(why.loss, None, "{engine}: a NaN input's loss is not finite");
            let nan_at = epoch_order(cfg.train.seed, 1, 12)
                .iter()
                .position(|&i| i == 7);
            assert_eq!(
                Some(iteration),
                nan_at.map(|p| p / 4),
                "{engine}: steps before"
            );
            let summary = train_in(&cfg, &data, dir.path(), false);
            assert_eq!(summary.status, RunStatus::Diverged, "{engine}");
            assert_eq!(
                (summary.diverged_epoch, summary.epochs_completed),
                (Some(1), 0)
            );
            assert!(checkpoint::find(dir.path()).unwrap().is_none(), "{engine}");
        }
    }

    /// Burn's steps at a rate multiplied by 1e30 every epoch (0.1, 1e29, 1e59), checkpoints
    /// every 100 epochs, under `train.divergence_factor = factor`.
    fn exploding(factor: f64) -> TrainConfig {
        let mut cfg = config("burn");
        cfg.train.divergence_factor = factor;
        cfg.train.checkpoint_every = 100;
        cfg.schedule.kind = crate::schedule::ScheduleKind::Step;
        cfg.schedule.step_size = Some(1);
        cfg.schedule.gamma = 1e30;
        cfg
    }

    /// [`exploding`] under the default `train.divergence_factor`: the loss after the
    /// first step at 1e29 is finite but far past 1e4 times the initial loss, so the run
    /// diverges in epoch 2 (issue 66: a run whose loss went 2,381 -> 1.26e14 was called
    /// finished); the summary says why, against which reference, and a resume from the
    /// checkpoint keeps the same reference.
    #[test]
    fn an_exploding_loss_is_a_divergence() {
        let cfg = exploding(crate::divergence::DEFAULT_FACTOR);
        let dir = tempfile::tempdir().unwrap();
        let summary = train_in(&cfg, &data(None), dir.path(), false);
        assert_eq!(summary.status, RunStatus::Diverged);
        assert_eq!(
            (summary.diverged_epoch, summary.epochs_completed),
            (Some(2), 1)
        );
        let why = summary.divergence.clone().unwrap();
        let (l, l0) = (why.loss.unwrap(), why.initial_loss.unwrap());
        assert_eq!(summary.initial_loss, Some(l0));
        assert!(l > 1e4 * l0 && l.is_finite(), "{why}");
        // The reference is the first batch's loss at initialization: the same network
        // evaluated on the first epoch's first batch by the evaluation path (f32: a few
        // ulps of a sum of 4 terms).
        let (set, compute) = (data(None).train, cpu());
        let model = cfg
            .spec()
            .unwrap()
            .build(4, &compute.device, compute.dtype())
            .unwrap();
        let first = set.select(&epoch_order(cfg.train.seed, 1, set.n)[..4]);
        let (expected, _) = crate::data::evaluate(&model, &first, &compute, (4, cfg.train.loss));
        assert!(
            (l0 - expected).abs() <= 1e-6 * expected,
            "{l0} against {expected}"
        );
        let ck = checkpoint::find(dir.path()).unwrap().unwrap();
        assert_eq!(ck.pointer.epoch, 1);
        assert_eq!(ck.pointer.initial_loss, Some(l0));
        let json = std::fs::read_to_string(dir.path().join("summary.json")).unwrap();
        assert!(json.contains("\"measured\": \"training_batch\""), "{json}");
    }

    /// A resume drops the rows a killed process wrote after its last checkpoint before its
    /// first epoch: a run checkpointed at epoch 1 whose `metrics.csv` holds epoch 2's row too
    /// (the kill came after the row, before the checkpoint) and that diverges again in epoch
    /// 2 ends with the rows its summary counts, and is a finished run for the next resume
    /// (nineteenth hostile round, N1: it kept the stale row, and neither resumed nor
    /// collected again: "metrics.csv: 2 epoch row(s), but summary.json records 1").
    #[test]
    fn a_resume_drops_the_rows_after_its_checkpoint() {
        let mut cfg = exploding(crate::divergence::DEFAULT_FACTOR);
        cfg.train.checkpoint_every = 1;
        let dir = tempfile::tempdir().unwrap();
        let first = train_in(&cfg, &data(None), dir.path(), false);
        assert_eq!(
            (first.status, first.diverged_epoch, first.epochs_completed),
            (RunStatus::Diverged, Some(2), 1)
        );
        let metrics = dir.path().join("metrics.csv");
        let text = std::fs::read_to_string(&metrics).unwrap();
        let row = text.lines().nth(1).unwrap();
        let (_, rest) = row.split_once(',').unwrap();
        std::fs::write(&metrics, format!("{text}2,{rest}\n")).unwrap();
        std::fs::remove_file(dir.path().join("summary.json")).unwrap();
        let again = train_in(&cfg, &data(None), dir.path(), true);
        assert_eq!((again.diverged_epoch, again.epochs_completed), (Some(2), 1));
        assert_eq!(std::fs::read_to_string(&metrics).unwrap(), text);
        assert_eq!(train_in(&cfg, &data(None), dir.path(), true), again);
    }

    /// A learning rate that explodes (0.1, then 1e29, then 1e59: infinite in f32) makes
    /// the loss non-finite in epoch 3 (with no limit on finite losses); epoch 2, not
    /// checkpointed (`checkpoint_every` is 100), becomes the checkpoint.
    #[test]
    fn a_divergence_keeps_the_last_good_epoch() {
        let cfg = exploding(f64::MAX);
        let dir = tempfile::tempdir().unwrap();
        let summary = train_in(&cfg, &data(None), dir.path(), false);
        assert_eq!(summary.status, RunStatus::Diverged);
        assert_eq!(
            (summary.diverged_epoch, summary.epochs_completed),
            (Some(3), 2)
        );
        let ck = checkpoint::find(dir.path()).unwrap().unwrap();
        assert_eq!((ck.pointer.epoch, ck.pointer.iteration), (2, 6));
        assert_eq!(ck.rows.len(), 2);
    }

    #[test]
    fn a_resume_on_another_machine_records_both() {
        let (a, b) = ("CPU A; OpenBLAS (SkylakeX)", "CPU A; OpenBLAS (Haswell)");
        assert_eq!(
            resumed_machine(Some(a.into()), Some(a), 8).as_deref(),
            Some(a)
        );
        let mixed = resumed_machine(Some(b.into()), Some(a), 8).unwrap();
        assert_eq!(
            mixed,
            "CPU A; OpenBLAS (Haswell); resumed at epoch 8 from a checkpoint written on CPU A; \
             OpenBLAS (SkylakeX)"
        );
        // Resumed again on the same machine: kept; on the first: a third record.
        assert_eq!(
            resumed_machine(Some(b.into()), Some(&mixed), 12).unwrap(),
            mixed
        );
        let back = resumed_machine(Some(a.into()), Some(&mixed), 20).unwrap();
        assert!(
            back.starts_with(&format!("{a}; resumed at epoch 20 from")) && back.ends_with(&mixed)
        );
        // A checkpoint written before machines were recorded: this one alone.
        assert_eq!(resumed_machine(Some(a.into()), None, 3).as_deref(), Some(a));
    }
}
