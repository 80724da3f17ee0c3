//! One training run: mini-batch SGD on the cross-entropy loss, metrics per epoch,
//! checkpoints, resume and divergence handling.
//!
//! A custom loop rather than burn-train's `Learner`: the run must (1) stop at the first
//! non-finite loss and keep the last good state, (2) resume bit for bit (the data order
//! and augmentation are functions of (seed, epoch), the checkpoint holds the optimizer's
//! momentum), (3) take the probe's NTK every K epochs, (4) write pandas-ready tables
//! atomically, and (5) run inside sweeps, shards and progress bars of our own. The pieces
//! that fit are Burn's: the SGD optimizer (`burn::optim::SgdConfig`), the loss
//! (`CrossEntropyLoss`) and the burnpack records of the model and optimizer. Who computes
//! the steps (Burn's autodiff or the host engine) is a [`crate::stepper::Stepper`].

use std::path::Path;
use std::sync::OnceLock;
use std::time::Instant;

use burn::nn::loss::CrossEntropyLossConfig;
use burn::tensor::{Device, Int, Tensor, TensorData};
use ntk_data::CifarAugment;
use ntk_data::config::DataConfig;
use ntk_data::inputs::{self, Inputs};
use ntk_numerics::backend::Compute;
use ntk_runs::provenance::{self, Provenance};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use crate::checkpoint::{self, RunIdentity};
use crate::config::{NtkTrackConfig, RepresentationTrackConfig, TrainConfig};
use crate::metrics::{EpochMetrics, Tracked, write_csv};
use crate::model::Model;
use crate::progress::Reporter;
pub use crate::run_dir::{RUN_FILES, check_run_dir};
use crate::run_dir::{Start, open_run_dir};
use crate::sgd::{correct, scalar};
use crate::stepper::{self, Batch, Snapshot, Stepper};
pub use crate::summary::{RunStatus, TrainSummary, read_summary};
use crate::track;
use ntk_model::NetSpec;

/// The training set and the test set, loaded once per sweep.
pub struct Data {
    pub train: Inputs,
    pub test: Option<Inputs>,
    digest: OnceLock<String>,
}

impl Data {
    /// SHA-256 of the training and test selections (`data.digest` of the provenance),
    /// computed once.
    pub fn digest(&self) -> &str {
        self.digest.get_or_init(|| {
            let test = self.test.as_ref().map_or(String::new(), Inputs::digest);
            provenance::sha256_hex(format!("train {} test {test}", self.train.digest()).as_bytes())
        })
    }
}

/// Loads the train set and the first `test_n` test samples (of `data.test_x` for a file
/// set: all of them when it holds fewer, none without one).
pub fn load_data(data: &DataConfig, test_n: usize) -> crate::Result<Data> {
    let train = inputs::load(data)?;
    let test_n = match inputs::test_rows(data)? {
        Some(rows) => test_n.min(rows),
        None if data.dataset == ntk_data::Dataset::File => 0,
        None => test_n,
    };
    if test_n == 0 {
        return Ok(Data {
            train,
            test: None,
            digest: OnceLock::new(),
        });
    }
    let test = inputs::load_test(data, test_n).map_err(|e| crate::Error::TestSet {
        test_n,
        source: Box::new(e.into()),
    })?;
    if test.d != train.d {
        return Err(crate::Error::Invalid(format!(
            "the test split ({}) has {} inputs per sample but the training split ({}) has {}: \
             the two splits' files must hold images of one shape",
            test.description, test.d, train.description, train.d
        )));
    }
    Ok(Data {
        train,
        test: Some(test),
        digest: OnceLock::new(),
    })
}

/// Rows `idx` of `set` as a `[len, d]` tensor, augmented (CIFAR crop and flip) when `aug`
/// holds a generator.
fn batch_x(
    set: &Inputs,
    idx: &[usize],
    compute: &Compute,
    device: &Device,
    aug: Option<&mut ChaCha8Rng>,
) -> Tensor<2> {
    Tensor::from_data(
        TensorData::new(batch_rows(set, idx, aug), [idx.len(), set.d]),
        (device, compute.dtype()),
    )
}

/// Rows `idx` of `set`, row-major, augmented when `aug` holds a generator.
fn batch_rows(set: &Inputs, idx: &[usize], aug: Option<&mut ChaCha8Rng>) -> Vec<f64> {
    let d = set.d;
    let mut x = Vec::with_capacity(idx.len() * d);
    match aug {
        None => {
            for &i in idx {
                x.extend_from_slice(&set.x[i * d..(i + 1) * d]);
            }
        }
        Some(rng) => {
            let a = CifarAugment::default();
            for &i in idx {
                x.extend(a.apply(&set.x[i * d..(i + 1) * d], [3, 32, 32], rng));
            }
        }
    }
    x
}

fn batch_y(set: &Inputs, idx: &[usize], device: &Device) -> Tensor<1, Int> {
    let y: Vec<i64> = idx.iter().map(|&i| i64::from(set.labels[i])).collect();
    Tensor::from_data(TensorData::new(y, [idx.len()]), device)
}

/// Mean cross-entropy and accuracy of `model` (plain device, evaluation mode) on `set`.
pub fn evaluate(model: &Model, set: &Inputs, compute: &Compute, batch: usize) -> (f64, f64) {
    let loss_fn = CrossEntropyLossConfig::new().init(&compute.device);
    let (mut loss, mut hits) = (0.0, 0usize);
    let all: Vec<usize> = (0..set.n).collect();
    for idx in all.chunks(batch.max(1)) {
        let x = batch_x(set, idx, compute, &compute.device, None);
        let y = batch_y(set, idx, &compute.device);
        let logits = model.forward(x);
        loss += scalar(loss_fn.forward(logits.clone(), y.clone())) * idx.len() as f64;
        hits += correct(logits, y);
    }
    (loss / set.n as f64, hits as f64 / set.n as f64)
}

/// The config a run directory records and a resume must match (device and output place
/// excluded: they do not change the numbers' meaning).
pub fn run_config_text(cfg: &TrainConfig) -> String {
    let mut c = cfg.clone();
    c.train.device = None;
    c.train.out = None;
    c.sweep = None;
    toml::to_string(&c).expect("a config serializes")
}

/// The provenance of a run of `cfg` on `data` and `compute`: the config a run directory
/// records ([`run_config_text`]) with the data's input dimension filled in and the data
/// directory left out, `backend` and `data.digest` added (see `ntk_runs::provenance`).
pub fn run_provenance(cfg: &TrainConfig, data: &Data, compute: &Compute) -> Provenance {
    let mut c = recorded_config(cfg);
    if let Some(m) = c.model.as_mut() {
        m.input_dim = data.train.d;
    }
    let mut flat = provenance::flatten_config(&c);
    flat.insert("backend".into(), compute.backend.into());
    flat.insert("data.digest".into(), data.digest().into());
    if let Some(k) = &cfg.ntk {
        // The tracked kernel's precision as resolved on this device (f64 on the CPU unless
        // the config says otherwise): runs tracked in another precision are not reused.
        let precision = serde_json::to_value(k.precision_on(compute)).expect("an enum");
        flat.insert("ntk.precision".into(), precision);
    }
    Provenance::new(crate::TOOL, flat, &ntk_numerics::linalg::describe())
}

/// `cfg` as a run records it in its provenance, less what the run resolves from its data:
/// without the device, the output and data directories and the sweep (one run's config).
pub fn recorded_config(cfg: &TrainConfig) -> TrainConfig {
    let mut c = cfg.clone();
    c.train.device = None;
    c.train.out = None;
    c.sweep = None;
    c.data = c.data.without_locations();
    // An explicit default is the same config as none.
    if let Some(k) = c.ntk.as_mut()
        && k.batch_norm_statistics == Some(ntk_kernel::batch_norm::BnStatistics::Running)
    {
        k.batch_norm_statistics = None;
    }
    c
}

/// How a run starts.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions {
    /// Continue from the run directory's checkpoint.
    pub resume: bool,
    /// Stop after this many epochs of this process (tests simulate a kill with it).
    pub stop_after: Option<usize>,
}

/// The run's step counts: steps per epoch, total steps, epochs.
pub fn step_counts(cfg: &TrainConfig, n: usize) -> (usize, usize, usize) {
    let per_epoch = n.div_ceil(cfg.train.batch_size);
    let total = match (cfg.train.iterations, cfg.train.epochs) {
        (Some(it), _) => it,
        (None, Some(e)) => e * per_epoch,
        (None, None) => per_epoch,
    };
    (per_epoch, total, total.div_ceil(per_epoch))
}

/// Trains one configuration in `out`; writes `config.toml`, `metrics.csv` (and `ntk.csv`)
/// after every epoch, checkpoints, and `summary.json` at the end.
///
/// The phases: `check_inputs`, `open_run_dir` (refuse, resume or return a finished run),
/// `build_stepper` (the network and its step engine, a [`Stepper`]), the NTK at
/// initialization, `run_epochs` (steps, divergence, evaluation, NTK tracking, checkpoints)
/// and `finish` (the summary).
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
    check_inputs(cfg, &spec, data)?;
    let run = Run::new(cfg, spec, data, compute, out, reporter);
    let (_lock, opened) = open_run_dir(run.out, &run.provenance, &run.config_text, opts.resume)?;
    let found = match opened {
        Start::Done(summary) => return Ok(summary),
        Start::Fresh => None,
        Start::Resume(ck) => Some(ck),
    };
    let mut stepper = build_stepper(&run, found.as_ref())?;
    let mut progress = Progress::new(found.as_ref());
    let tracking = Tracking::new(cfg, data)?;
    progress.warnings = tracking
        .as_ref()
        .map_or_else(Vec::new, |t| t.warnings(&stepper.valid()));
    for w in &progress.warnings {
        run.reporter.log(&format!("warning: {w}"));
    }
    if let (Some(tr), None) = (&tracking, &found) {
        tr.record(&run, &stepper.valid(), &mut progress.tracked, 0, false)?;
    }
    let diverged = run_epochs(
        &run,
        stepper.as_mut(),
        &mut progress,
        tracking.as_ref(),
        opts.stop_after,
    )?;
    finish(&run, &progress, diverged, start)
}

/// What a run is, fixed before its first step: the config and its network, the data,
/// the backend, the output directory and the reporter, the identity checkpoints record
/// (config text and provenance), and the step counts ([`step_counts`]).
struct Run<'a> {
    cfg: &'a TrainConfig,
    spec: NetSpec,
    data: &'a Data,
    compute: &'a Compute,
    out: &'a Path,
    reporter: &'a Reporter,
    config_text: String,
    provenance: Provenance,
    per_epoch: usize,
    total: usize,
    epochs: usize,
}

impl<'a> Run<'a> {
    fn new(
        cfg: &'a TrainConfig,
        spec: NetSpec,
        data: &'a Data,
        compute: &'a Compute,
        out: &'a Path,
        reporter: &'a Reporter,
    ) -> Self {
        let (per_epoch, total, epochs) = step_counts(cfg, data.train.n);
        Self {
            cfg,
            spec,
            data,
            compute,
            out,
            reporter,
            config_text: run_config_text(cfg),
            provenance: run_provenance(cfg, data, compute),
            per_epoch,
            total,
            epochs,
        }
    }

    fn identity(&self) -> RunIdentity<'_> {
        RunIdentity {
            config: &self.config_text,
            provenance: &self.provenance,
        }
    }

    /// The scheduled learning rate of step `iteration`.
    fn lr(&self, iteration: usize) -> f64 {
        let lr = self.cfg.optim.lr;
        self.cfg
            .schedule
            .lr(lr, iteration, self.per_epoch, self.total)
    }
}

/// Refuses data the run cannot train on: augmentation of anything but 3x32x32 images, and
/// labels beyond the network's outputs (both engines would index past the logits).
pub(crate) fn check_inputs(cfg: &TrainConfig, spec: &NetSpec, data: &Data) -> crate::Result<()> {
    let set = &data.train;
    if cfg.train.augment && set.d != 3 * 32 * 32 {
        return Err(crate::Error::Invalid(format!(
            "train.augment = true needs 3x32x32 images (CIFAR-10); {} has {} inputs",
            set.description, set.d
        )));
    }
    let sets = || std::iter::once(set).chain(data.test.as_ref());
    // The set with the largest label, named in the message.
    if let Some((top, with)) = sets()
        .filter_map(|s| s.labels.iter().max().map(|t| (*t, s)))
        .max_by_key(|(t, _)| *t)
        && usize::from(top) >= spec.classes()
    {
        let key = match spec {
            NetSpec::Mlp(_) => "model.output_dim",
            NetSpec::ResNet(_) => "resnet.num_classes",
        };
        return Err(crate::Error::Invalid(format!(
            "{key} = {}: {} has labels up to {top}; the network needs {} outputs",
            spec.classes(),
            with.description,
            usize::from(top) + 1
        )));
    }
    // Inputs beyond f32's range become infinities in an f32 run (and its loss NaN).
    if cfg.train.precision == ntk_numerics::backend::Precision::F32 {
        for s in sets() {
            if let Some(i) = s.x.iter().position(|v| v.abs() > f64::from(f32::MAX)) {
                return Err(crate::Error::Invalid(format!(
                    "{}: row {}, column {} is {:e}, beyond f32's range (train.precision = \
                     \"f32\"); rescale the inputs or train in f64",
                    s.description,
                    i / s.d.max(1),
                    i % s.d.max(1),
                    s.x[i]
                )));
            }
        }
    }
    Ok(())
}

/// Builds the network (with the checkpoint's parameters when resuming) and its stepper
/// ([`stepper::stepper`]); when resuming, checks that the checkpoint's engine is this
/// run's and loads its optimizer state. Logs who computes the steps.
fn build_stepper(run: &Run, found: Option<&checkpoint::Loaded>) -> crate::Result<Box<dyn Stepper>> {
    let (compute, d) = (run.compute, run.data.train.d);
    let fresh = run.spec.build(d, &compute.device, compute.dtype())?;
    let model = match found {
        Some(ck) => {
            let epoch = ck.pointer.epoch;
            let line = format!("{}: resuming after epoch {epoch}", run.out.display());
            run.reporter.log(&line);
            ck.load_model(fresh)?
        }
        None => fresh,
    };
    let t = &run.cfg.train;
    let mut stepper = stepper::stepper(t.engine, &run.cfg.optim, model, compute)?;
    if let Some(ck) = found {
        check_engine(run.out, &ck.pointer.engine, stepper.engine())?;
        stepper.load_state(ck)?;
    }
    run.reporter.log(&format!(
        "{}: {} steps ({} engine)",
        run.spec.describe(),
        stepper.method(),
        stepper.engine()
    ));
    Ok(stepper)
}

/// Refuses to resume a checkpoint written by another engine than `engine` (the optimizer
/// state differs in form).
fn check_engine(out: &Path, written_by: &str, engine: &str) -> crate::Result<()> {
    if written_by == engine {
        return Ok(());
    }
    Err(crate::Error::Invalid(format!(
        "{}: the checkpoint was written by the {written_by} engine and this run would use \
         the {engine} engine; set train.engine = \"{written_by}\" to resume it",
        out.display()
    )))
}

/// What the run has done so far: the tables, the steps taken, the epoch of the current
/// checkpoint, and the last finite epoch's state not yet checkpointed.
struct Progress {
    /// Where the science is at risk ([`ntk_kernel::scale`]), for the summary.
    warnings: Vec<String>,
    rows: Vec<EpochMetrics>,
    tracked: Tracked,
    iteration: usize,
    /// 0 before the first checkpoint.
    last_checkpoint: usize,
    last_good: Option<LastGood>,
}

/// The state at the end of the last finite epoch not yet checkpointed (a divergence
/// checkpoints it).
struct LastGood {
    state: Snapshot,
    epoch: usize,
    iteration: usize,
}

impl Progress {
    /// Nothing done, or what the checkpoint `found` holds.
    fn new(found: Option<&checkpoint::Loaded>) -> Self {
        let (rows, tracked, iteration, last_checkpoint) = match found {
            Some(ck) => (
                ck.rows.clone(),
                ck.tracked.clone(),
                ck.pointer.iteration,
                ck.pointer.epoch,
            ),
            None => (Vec::new(), Tracked::default(), 0, 0),
        };
        Self {
            warnings: Vec::new(),
            rows,
            tracked,
            iteration,
            last_checkpoint,
            last_good: None,
        }
    }

    /// Checkpoints `state` after `epoch` when due (every `train.checkpoint_every` epochs
    /// and after the last); otherwise keeps it as the last good state.
    fn checkpoint_or_keep(
        &mut self,
        run: &Run,
        state: Snapshot,
        epoch: usize,
        last: bool,
    ) -> crate::Result<()> {
        if last || epoch.is_multiple_of(run.cfg.train.checkpoint_every) {
            let identity = run.identity();
            let (rows, tracked) = (&self.rows, &self.tracked);
            state.save(run.out, epoch, self.iteration, &identity, rows, tracked)?;
            self.last_checkpoint = epoch;
            self.last_good = None;
        } else {
            let iteration = self.iteration;
            self.last_good = Some(LastGood {
                state,
                epoch,
                iteration,
            });
        }
        Ok(())
    }
}

/// The probes of a run during training: the NTK (`[ntk]`) of the first `ntk.n` training
/// samples, and the representations (`[representations]`) of the first
/// `representations.n` test inputs.
struct Tracking<'a> {
    ntk: Option<(&'a NtkTrackConfig, Inputs)>,
    representations: Option<(&'a RepresentationTrackConfig, Inputs)>,
}

impl<'a> Tracking<'a> {
    fn new(cfg: &'a TrainConfig, data: &Data) -> crate::Result<Option<Self>> {
        let first = |set: &Inputs, n: usize| set.select(&(0..n.min(set.n)).collect::<Vec<_>>());
        let ntk = cfg.ntk.as_ref().map(|k| (k, first(&data.train, k.n)));
        let representations = match (&cfg.representations, &data.test) {
            (Some(r), Some(test)) => Some((r, first(test, r.n))),
            (Some(_), None) => {
                return Err(crate::Error::Invalid(
                    "[representations] compares test inputs: the run needs a test set \
                     (train.test_n > 0)"
                        .into(),
                ));
            }
            (None, _) => None,
        };
        Ok(
            (ntk.is_some() || representations.is_some()).then_some(Self {
                ntk,
                representations,
            }),
        )
    }

    /// The warnings of the tracked NTK of `model` on its probe inputs: the inputs' scale
    /// decides kappa ([`ntk_kernel::scale::input_scale_warning`]).
    fn warnings(&self, model: &Model) -> Vec<String> {
        self.ntk
            .as_ref()
            .and_then(|(_, probe)| ntk_kernel::scale::input_scale_warning(model, probe))
            .into_iter()
            .collect()
    }

    /// Whether a probe taken every `every` epochs is due after `epoch` (and after the last).
    fn due(every: usize, epoch: usize, last: bool) -> bool {
        last || epoch.is_multiple_of(every)
    }

    /// Whether any probe is due after `epoch`.
    fn any_due(&self, epoch: usize, last: bool) -> bool {
        let ntk = self.ntk.as_ref().map(|(k, _)| k.every);
        let reps = self.representations.as_ref().map(|(r, _)| r.every);
        [ntk, reps]
            .into_iter()
            .flatten()
            .any(|every| Self::due(every, epoch, last))
    }

    /// Takes the probes due after `epoch` (0: at initialization, all of them) on `model`
    /// and rewrites their tables (`ntk.csv`, `representations.csv`).
    fn record(
        &self,
        run: &Run,
        model: &Model,
        tracked: &mut Tracked,
        epoch: usize,
        last: bool,
    ) -> crate::Result<()> {
        if let Some((k, probe)) = &self.ntk
            && Self::due(k.every, epoch, last)
        {
            let precision = k.precision_on(run.compute);
            let stats = k.batch_norm_statistics.unwrap_or_default();
            let how = (k.output, precision, stats);
            let row = track::measure(model, probe, run.compute, how, epoch)?;
            tracked.ntk.push(row);
            write_csv(&run.out.join("ntk.csv"), &tracked.ntk)?;
        }
        if let Some((r, probe)) = &self.representations
            && Self::due(r.every, epoch, last)
        {
            let rows = track::representations(model, probe, run.compute, epoch);
            tracked.representations.extend(rows);
            write_csv(
                &run.out.join("representations.csv"),
                &tracked.representations,
            )?;
        }
        Ok(())
    }
}

/// The epoch loop: trains the epochs after the current checkpoint (at most `stop_after` of
/// them) and records each; returns the epoch whose loss became non-finite, if one did.
fn run_epochs(
    run: &Run,
    stepper: &mut dyn Stepper,
    progress: &mut Progress,
    tracking: Option<&Tracking>,
    stop_after: Option<usize>,
) -> crate::Result<Option<usize>> {
    let first_epoch = progress.last_checkpoint + 1;
    let epoch_bar = run.reporter.bar(run.epochs as u64, "epochs".into());
    epoch_bar.set_position(first_epoch as u64 - 1);
    let mut diverged_epoch = None;
    for epoch in first_epoch..=run.epochs {
        if stop_after.is_some_and(|s| epoch - first_epoch >= s) {
            break;
        }
        let Some(totals) = train_epoch(run, stepper, epoch, &mut progress.iteration) else {
            diverged_epoch = Some(epoch);
            break;
        };
        record_epoch(run, &*stepper, progress, tracking, epoch, &totals)?;
        epoch_bar.inc(1);
    }
    epoch_bar.finish_and_clear();
    Ok(diverged_epoch)
}

/// The sums over an epoch's steps, its learning rate (at its first step) and wall time.
#[derive(Clone, Debug, Default)]
struct EpochTotals {
    loss_sum: f64,
    hits: usize,
    seen: usize,
    lr: f64,
    seconds: f64,
}

/// The data order of `epoch`: `0..n` shuffled by ChaCha8 (`seed`, stream `epoch`).
fn epoch_order(seed: u64, epoch: usize, n: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(epoch as u64);
    order.shuffle(&mut rng);
    order
}

/// The augmentation generator of `epoch`: ChaCha8 (`seed`, stream `2^32 + epoch`).
fn augment_rng(seed: u64, epoch: usize) -> ChaCha8Rng {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    r.set_stream((1 << 32) + epoch as u64);
    r
}

/// Rows `idx` of `set` as a batch, augmented when `aug` holds a generator.
fn batch(set: &Inputs, idx: &[usize], aug: Option<&mut ChaCha8Rng>) -> Batch {
    Batch {
        x: batch_rows(set, idx, aug),
        d: set.d,
        labels: idx.iter().map(|&i| usize::from(set.labels[i])).collect(),
    }
}

/// The steps of `epoch` (advancing `iteration`), then the model of record brought up to
/// date; `None` at the first non-finite loss (that step is not taken).
fn train_epoch(
    run: &Run,
    stepper: &mut dyn Stepper,
    epoch: usize,
    iteration: &mut usize,
) -> Option<EpochTotals> {
    let (t, set) = (&run.cfg.train, &run.data.train);
    let start = Instant::now();
    let order = epoch_order(t.seed, epoch, set.n);
    let mut aug = t.augment.then(|| augment_rng(t.seed, epoch));
    let steps = run.per_epoch.min(run.total - *iteration);
    let bar = run.reporter.bar(steps as u64, format!("epoch {epoch}"));
    let mut sums = EpochTotals {
        lr: run.lr(*iteration),
        ..EpochTotals::default()
    };
    for idx in order.chunks(t.batch_size).take(steps) {
        let lr = run.lr(*iteration);
        let Some(r) = stepper.step(batch(set, idx, aug.as_mut()), lr) else {
            bar.finish_and_clear();
            return None;
        };
        sums.loss_sum += r.loss_sum;
        sums.hits += r.correct;
        sums.seen += idx.len();
        *iteration += 1;
        bar.inc(1);
        bar.set_message(format!(
            "loss {:.4} {:.0} samples/s",
            sums.loss_sum / sums.seen as f64,
            sums.seen as f64 / start.elapsed().as_secs_f64()
        ));
    }
    bar.finish_and_clear();
    stepper.sync();
    sums.seconds = start.elapsed().as_secs_f64();
    Some(sums)
}

/// Records a finished epoch: its metrics row (with the test set evaluated when due),
/// logged and appended to `metrics.csv`, the NTK when due, then a checkpoint or the last
/// good state.
fn record_epoch(
    run: &Run,
    stepper: &dyn Stepper,
    progress: &mut Progress,
    tracking: Option<&Tracking>,
    epoch: usize,
    totals: &EpochTotals,
) -> crate::Result<()> {
    let last = epoch == run.epochs;
    let row = epoch_row(run, stepper, epoch, progress.iteration, totals, last);
    log_epoch(run, &row);
    progress.rows.push(row);
    write_csv(&run.out.join("metrics.csv"), &progress.rows)?;
    if let Some(tr) = tracking
        && tr.any_due(epoch, last)
    {
        tr.record(run, &stepper.valid(), &mut progress.tracked, epoch, last)?;
    }
    progress.checkpoint_or_keep(run, stepper.snapshot(), epoch, last)
}

/// The metrics row of `epoch`; the test set is evaluated every `train.eval_every` epochs
/// and after the last.
fn epoch_row(
    run: &Run,
    stepper: &dyn Stepper,
    epoch: usize,
    iteration: usize,
    totals: &EpochTotals,
    last: bool,
) -> EpochMetrics {
    let (test_loss, test_accuracy) = match &run.data.test {
        Some(s) if last || epoch.is_multiple_of(run.cfg.train.eval_every) => {
            let (l, a) = stepper
                .evaluate(s, 500)
                .unwrap_or_else(|| evaluate(&stepper.valid(), s, run.compute, 500));
            (Some(l), Some(a))
        }
        _ => (None, None),
    };
    let seen = totals.seen as f64;
    EpochMetrics {
        epoch,
        iteration,
        train_loss: totals.loss_sum / seen,
        train_accuracy: totals.hits as f64 / seen,
        test_loss,
        test_accuracy,
        lr: totals.lr,
        seconds: totals.seconds,
        samples_per_second: seen / totals.seconds,
    }
}

/// The log line of an epoch.
fn log_epoch(run: &Run, row: &EpochMetrics) {
    run.reporter.log(&format!(
        "{} epoch {}/{}: train loss {:.5} acc {:.4}{} lr {:.3e} {:.1} s ({:.0} samples/s)",
        run.spec.describe(),
        row.epoch,
        run.epochs,
        row.train_loss,
        row.train_accuracy,
        row.test_accuracy
            .map_or(String::new(), |a| format!(" test acc {a:.4}")),
        row.lr,
        row.seconds,
        row.samples_per_second
    ));
}

/// Ends the run: after a divergence keeps the last good state ([`keep_last_good`]); a run
/// stopped early on purpose (`stop_after`) gets an `interrupted` summary and no file (its
/// checkpoint resumes it); otherwise writes `summary.json`.
fn finish(
    run: &Run,
    progress: &Progress,
    diverged_epoch: Option<usize>,
    start: Instant,
) -> crate::Result<TrainSummary> {
    if let Some(e) = diverged_epoch {
        keep_last_good(run, progress, e)?;
    } else if progress.rows.last().is_none_or(|r| r.epoch < run.epochs) {
        return Ok(summarize(run, progress, None, start, false));
    }
    let summary = summarize(run, progress, diverged_epoch, start, true);
    let json = serde_json::to_string_pretty(&summary).expect("serializes");
    ntk_runs::io::atomic_write(&run.out.join("summary.json"), json.as_bytes()).map_err(
        |source| ntk_runs::Error::Write {
            path: run.out.to_path_buf(),
            source,
        },
    )?;
    Ok(summary)
}

/// After a divergence in `epoch`: checkpoints the last good state (the end of the last
/// finite epoch) when it is newer than the current checkpoint, and says where it is.
fn keep_last_good(run: &Run, progress: &Progress, epoch: usize) -> crate::Result<()> {
    if let Some(good) = &progress.last_good
        && good.epoch > progress.last_checkpoint
    {
        let (rows, tracked) = (&progress.rows, &progress.tracked);
        let identity = run.identity();
        good.state.save(
            run.out,
            good.epoch,
            good.iteration,
            &identity,
            rows,
            tracked,
        )?;
    }
    run.reporter.log(&format!(
        "{}: diverged (non-finite loss) in epoch {epoch}; the last good state (epoch {}) is \
         in {}/checkpoint.json",
        run.spec.describe(),
        progress.rows.last().map_or(0, |r| r.epoch),
        run.out.display()
    ));
    Ok(())
}

/// The summary of the run so far: `diverged`, `finished` (`complete`) or `interrupted`.
fn summarize(
    run: &Run,
    progress: &Progress,
    diverged_epoch: Option<usize>,
    start: Instant,
    complete: bool,
) -> TrainSummary {
    let (cfg, spec, rows) = (run.cfg, &run.spec, &progress.rows);
    let last = rows.last();
    TrainSummary {
        status: match (diverged_epoch, complete) {
            (Some(_), _) => RunStatus::Diverged,
            (None, true) => RunStatus::Finished,
            (None, false) => RunStatus::Interrupted,
        },
        diverged: diverged_epoch.is_some(),
        diverged_epoch,
        epochs_completed: rows.len(),
        iterations_completed: last.map_or(0, |r| r.iteration),
        final_train_loss: last.map(|r| r.train_loss),
        final_train_accuracy: last.map(|r| r.train_accuracy),
        final_test_loss: rows.iter().rev().find_map(|r| r.test_loss),
        final_test_accuracy: rows.iter().rev().find_map(|r| r.test_accuracy),
        best_test_accuracy: rows.iter().filter_map(|r| r.test_accuracy).reduce(f64::max),
        final_kappa: progress.tracked.ntk.last().and_then(|r| r.kappa),
        model: spec.describe(),
        depth: spec.depth(),
        width: spec.width(),
        activation: spec.activation_name(),
        normalization: spec.normalization_name(),
        lr: cfg.optim.lr,
        batch_size: cfg.train.batch_size,
        model_seed: spec.seed(),
        data_seed: cfg.train.seed,
        data: run.data.train.description.clone(),
        backend: run.compute.backend.to_string(),
        precision: run.compute.precision.to_string(),
        seconds: start.elapsed().as_secs_f64(),
        warnings: progress.warnings.clone(),
        provenance: Some(run.provenance.clone()),
    }
}

#[cfg(test)]
mod tests {
    use ntk_numerics::backend::{self, Precision};

    use super::*;

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
        };
        Data {
            train,
            test: None,
            digest: OnceLock::new(),
        }
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
        let run = Run::new(&cfg, spec, &data, &compute, dir.path(), &reporter);
        assert!(matches!(
            open_run_dir(run.out, &run.provenance, &run.config_text, false),
            Ok((_, Start::Fresh))
        ));
        assert!(dir.path().join("config.toml").exists());
        let done = train_in(&cfg, &data, dir.path(), false);
        assert_eq!(done.status, RunStatus::Finished);
        let err = open_run_dir(run.out, &run.provenance, &run.config_text, false)
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("already holds a run") && err.contains("--resume"),
            "{err}"
        );
        match open_run_dir(run.out, &run.provenance, &run.config_text, true) {
            Ok((_, Start::Done(s))) => assert_eq!(s, done),
            _ => panic!("a finished run is its summary"),
        }
        std::fs::remove_file(dir.path().join("summary.json")).unwrap();
        match open_run_dir(run.out, &run.provenance, &run.config_text, true) {
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
            let run = Run::new(
                &cfg,
                cfg.spec().unwrap(),
                &data,
                &compute,
                dir.path(),
                &reporter,
            );
            let model = run.spec.build(4, &compute.device, compute.dtype()).unwrap();
            let mut s = stepper::stepper(cfg.train.engine, &cfg.optim, model, &compute).unwrap();
            let mut iteration = 0;
            assert!(
                train_epoch(&run, s.as_mut(), 1, &mut iteration).is_none(),
                "{engine}"
            );
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

    /// A learning rate that explodes (0.1, then 1e29, then 1e59: infinite in f32) makes
    /// the loss non-finite in epoch 3; epoch 2, not checkpointed (`checkpoint_every` is
    /// 100), becomes the checkpoint.
    #[test]
    fn a_divergence_keeps_the_last_good_epoch() {
        let mut cfg = config("burn");
        cfg.train.checkpoint_every = 100;
        cfg.schedule.kind = crate::schedule::ScheduleKind::Step;
        cfg.schedule.step_size = Some(1);
        cfg.schedule.gamma = 1e30;
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
    fn a_checkpoint_of_another_engine_is_named() {
        let err = check_engine(Path::new("runs/x"), "burn", "host")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "runs/x: the checkpoint was written by the burn engine and this run would use \
             the host engine; set train.engine = \"burn\" to resume it"
        );
        assert!(check_engine(Path::new("runs/x"), "host", "host").is_ok());
    }
}
