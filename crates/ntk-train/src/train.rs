//! One training run: mini-batch SGD on the cross-entropy loss, metrics per epoch,
//! checkpoints, resume and divergence handling.
//!
//! A custom loop rather than burn-train's `Learner`: the run must (1) stop at the first
//! non-finite loss and keep the last good state, (2) resume bit for bit (the data order
//! and augmentation are functions of (seed, epoch), the checkpoint holds the optimizer's
//! momentum), (3) take the probe's NTK every K epochs, (4) write pandas-ready tables
//! atomically, and (5) run inside sweeps, shards and progress bars of our own. The pieces
//! that fit are Burn's: the SGD optimizer (`burn::optim::SgdConfig`), the loss
//! (`CrossEntropyLoss`) and the burnpack records of the model and optimizer.

use std::path::Path;
use std::sync::OnceLock;
use std::time::Instant;

use burn::module::Module;
use burn::nn::loss::CrossEntropyLossConfig;
use burn::optim::decay::WeightDecayConfig;
use burn::optim::momentum::MomentumConfig;
use burn::optim::{GradientsParams, ModuleOptimizer, SgdConfig};
use burn::tensor::{Device, Int, Tensor, TensorData};
use ntk_core::backend::Compute;
use ntk_core::budget::Estimate;
use ntk_core::provenance::{self, Provenance};
use ntk_data::CifarAugment;
use ntk_data::config::DataConfig;
use ntk_data::inputs::{self, Inputs};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::checkpoint::{self, OptimState, RunIdentity};
use crate::config::{EngineChoice, OptimConfig, TrainConfig};
use crate::host::Engine;
use crate::metrics::{EpochMetrics, NtkRow, write_csv};
use crate::model::Model;
use crate::progress::Reporter;
use crate::track;

/// `summary.json` of a run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TrainSummary {
    /// `finished` or `diverged`.
    pub status: String,
    pub diverged: bool,
    /// The epoch in which the loss became non-finite.
    pub diverged_epoch: Option<usize>,
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
    pub backend: String,
    pub precision: String,
    /// Wall time of this process's part of the run (a resumed run counts its own).
    pub seconds: f64,
    /// The resolved config, its fingerprint, the tool, commit and command line
    /// (`ntk_core::provenance`); absent in summaries written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
}

impl TrainSummary {
    pub fn finished(&self) -> bool {
        self.status == "finished"
    }
}

/// What a run writes in its directory (`checkpoints` is a directory): what `recompute`
/// removes, and whose half-written leftovers a new start cleans.
pub const RUN_FILES: [&str; 6] = [
    "summary.json",
    "config.toml",
    "metrics.csv",
    "ntk.csv",
    "checkpoint.json",
    "checkpoints",
];

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

/// Loads the train set and the first `test_n` test samples.
pub fn load_data(data: &DataConfig, test_n: usize) -> Result<Data, String> {
    let train = inputs::load(data)?;
    if test_n == 0 {
        return Ok(Data {
            train,
            test: None,
            digest: OnceLock::new(),
        });
    }
    let mut test_cfg = data.clone();
    test_cfg.split = ntk_data::Split::Test;
    test_cfg.subset = ntk_data::config::SubsetRule::First;
    test_cfg.n = test_n;
    let test = inputs::load(&test_cfg).map_err(|e| format!("train.test_n = {test_n}: {e}"))?;
    if test.d != train.d {
        return Err(format!(
            "the test split ({}) has {} inputs per sample but the training split ({}) has {}: \
             the two splits' files must hold images of one shape",
            test.description, test.d, train.description, train.d
        ));
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

fn scalar(t: Tensor<1>) -> f64 {
    t.try_into_vec_as::<f64>().expect("a scalar")[0]
}

fn correct(logits: Tensor<2>, y: Tensor<1, Int>) -> usize {
    let pred: Vec<i64> = logits.argmax(1).try_into_vec_as().expect("predictions");
    let truth: Vec<i64> = y.try_into_vec_as().expect("labels");
    pred.iter().zip(&truth).filter(|(a, b)| a == b).count()
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

/// Burn's SGD with the config's momentum, Nesterov and weight decay (PyTorch semantics,
/// dampening 0).
pub fn optimizer(o: &OptimConfig) -> ModuleOptimizer {
    let mut sgd = SgdConfig::new();
    if o.momentum > 0.0 {
        sgd = sgd.with_momentum(Some(
            MomentumConfig::new()
                .with_momentum(o.momentum)
                .with_dampening(0.0)
                .with_nesterov(o.nesterov),
        ));
    }
    if o.weight_decay > 0.0 {
        sgd = sgd.with_weight_decay(Some(WeightDecayConfig::new(o.weight_decay as f32)));
    }
    sgd.init()
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
/// directory left out, `backend` and `data.digest` added (see `ntk_core::provenance`).
pub fn run_provenance(cfg: &TrainConfig, data: &Data, compute: &Compute) -> Provenance {
    let mut c = cfg.clone();
    c.train.device = None;
    c.train.out = None;
    c.sweep = None;
    c.data.dir = None;
    if let Some(m) = c.model.as_mut() {
        m.input_dim = data.train.d;
    }
    let mut flat = provenance::flatten_config(&c);
    flat.insert("backend".into(), compute.backend.into());
    flat.insert("data.digest".into(), data.digest().into());
    Provenance::new(crate::TOOL, flat)
}

/// The memory a run of `cfg` needs, roughly (see `ntk_core::budget`): the data, the
/// parameters with their gradients, momentum and autodiff copies, a batch's activations,
/// and the NTK tracking's kernel and gradient rows. `d` is the data's input dimension.
pub fn memory_estimate(cfg: &TrainConfig, d: usize) -> Result<Estimate, String> {
    let elem = cfg.train.precision.dtype().size() as f64;
    let batch = cfg.train.batch_size as f64;
    let (params, activations) = match cfg.spec()? {
        crate::model::ModelSpec::Mlp(m) => {
            let m = ntk_model::MlpConfig { input_dim: d, ..m };
            let act = 4.0 * batch * m.width as f64 * (m.depth as f64 + 1.0);
            (ntk_model::size::mlp_params(&m), act)
        }
        crate::model::ModelSpec::ResNet(r) => (
            ntk_model::size::resnet_params(&r),
            batch * ntk_model::size::resnet_activations(&r),
        ),
    };
    let mut e = Estimate::default();
    let samples = cfg.data.n as f64 + cfg.train.test_n as f64;
    e.add("the data", samples * d as f64, 8.0);
    e.add("parameters, gradients and momentum", 4.0 * params, elem);
    e.add("a batch's activations", activations, elem);
    if let Some(k) = &cfg.ntk {
        let n = k.n as f64;
        e.add("the tracked NTK", 4.0 * n * n, 8.0);
        e.add("its gradient rows", n * params, 8.0);
    }
    Ok(e)
}

/// Refuses a run whose estimated memory exceeds the limit (`ntk_core::budget`).
pub fn check_memory(cfg: &TrainConfig, d: usize, max_memory: Option<&str>) -> Result<(), String> {
    let spec = cfg.spec()?;
    let culprit = format!(
        "{} (depth {}, width {}), data.n = {}, train.batch_size = {}",
        spec.describe(),
        spec.depth(),
        spec.width(),
        cfg.data.n,
        cfg.train.batch_size
    );
    memory_estimate(cfg, d)?.check(&culprit, max_memory)
}

/// The host engine for this run (see [`crate::host`]), or `None` for Burn's autodiff and
/// optimizer: `auto` takes the host engine on a CPU backend for MLPs without normalization.
pub fn choose_engine(
    choice: EngineChoice,
    optim: &OptimConfig,
    model: &Model,
    compute: &Compute,
) -> Result<Option<Engine>, String> {
    let cpu = matches!(compute.backend, "flex" | "ndarray");
    let engine = || Engine::for_model(model, optim, compute.precision);
    match choice {
        EngineChoice::Burn => Ok(None),
        EngineChoice::Auto => Ok(if cpu { engine() } else { None }),
        EngineChoice::Host => engine().map(Some).ok_or_else(|| {
            format!(
                "train.engine = \"host\": the host engine trains MLPs without normalization \
                 layers, not {}; use \"auto\" or \"burn\"",
                model.describe()
            )
        }),
    }
}

/// The state at the end of the last finite epoch not yet checkpointed: model, Burn's
/// optimizer, the host engine's momentum buffers, epoch, iteration.
type LastGood = (Model, ModuleOptimizer, Option<Vec<f64>>, usize, usize);

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
pub fn train(
    cfg: &TrainConfig,
    data: &Data,
    compute: &Compute,
    out: &Path,
    opts: RunOptions,
    reporter: &Reporter,
) -> Result<TrainSummary, String> {
    let start = Instant::now();
    let t = &cfg.train;
    let spec = cfg.spec()?;
    let set = &data.train;
    if t.augment && set.d != 3 * 32 * 32 {
        return Err(format!(
            "train.augment = true needs 3x32x32 images (CIFAR-10); {} has {} inputs",
            set.description, set.d
        ));
    }
    let sets = std::iter::once(set).chain(data.test.as_ref());
    if let Some(top) = sets.filter_map(|s| s.labels.iter().max()).max()
        && usize::from(*top) >= spec.classes()
    {
        let key = match spec {
            crate::model::ModelSpec::Mlp(_) => "model.output_dim",
            crate::model::ModelSpec::ResNet(_) => "resnet.num_classes",
        };
        return Err(format!(
            "{key} = {}: {} has labels up to {top}; the network needs {} outputs",
            spec.classes(),
            set.description,
            usize::from(*top) + 1
        ));
    }
    let text = run_config_text(cfg);
    let prov = run_provenance(cfg, data, compute);
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    ntk_core::outset::clean_dir(out, None, &|f: &str| RUN_FILES.contains(&f));
    ntk_core::outset::clean_tree(&out.join("checkpoints"));
    let summary_path = out.join("summary.json");
    let found = checkpoint::find(out)?;
    if !opts.resume && (found.is_some() || summary_path.exists()) {
        return Err(format!(
            "{} already holds a run; pass --resume to continue it, or choose another --out",
            out.display()
        ));
    }
    if let Some(ck) = &found {
        provenance::check_reuse(
            &out.join("checkpoint.json"),
            ck.pointer.provenance.as_ref(),
            &prov,
        )
        .map_err(|e| e.to_string())?;
    }
    if opts.resume
        && let Some(s) = crate::sweep::read_summary(out)?
    {
        provenance::check_reuse(&summary_path, s.provenance.as_ref(), &prov)
            .map_err(|e| e.to_string())?;
        return Ok(s);
    }
    ntk_core::io::atomic_write(&out.join("config.toml"), text.as_bytes())
        .map_err(|e| format!("{}: {e}", out.display()))?;

    let ad = compute.device.clone().autodiff();
    let fresh = spec.build(set.d, &compute.device, compute.dtype())?;
    let mut optim = optimizer(&cfg.optim);
    let (model, mut rows, mut ntk_rows, first_epoch, mut iteration) = match &found {
        Some(ck) => {
            if ck.pointer.engine == "burn" {
                optim = ck.load_optim(optim)?;
            }
            reporter.log(&format!(
                "{}: resuming after epoch {}",
                out.display(),
                ck.pointer.epoch
            ));
            (
                ck.load_model(fresh)?,
                ck.rows.clone(),
                ck.ntk_rows.clone(),
                ck.pointer.epoch + 1,
                ck.pointer.iteration,
            )
        }
        None => (fresh, Vec::new(), Vec::new(), 1, 0),
    };
    let mut model = model.fork(&ad).train();
    let mut engine = choose_engine(t.engine, &cfg.optim, &model, compute)?;
    let engine_name = if engine.is_some() { "host" } else { "burn" };
    if let Some(ck) = &found {
        if ck.pointer.engine != engine_name {
            return Err(format!(
                "{}: the checkpoint was written by the {} engine and this run would use the \
                 {engine_name} engine; set train.engine = \"{}\" to resume it",
                out.display(),
                ck.pointer.engine,
                ck.pointer.engine
            ));
        }
        if let Some(e) = engine.as_mut() {
            e.set_velocity(&ck.load_velocity()?)
                .map_err(|e| format!("{}: {e}", ck.dir.display()))?;
        }
    }
    reporter.log(&format!(
        "{}: {} steps ({engine_name} engine)",
        spec.describe(),
        if engine.is_some() {
            "host GEMM"
        } else {
            "Burn autodiff"
        }
    ));
    let probe_set = cfg
        .ntk
        .as_ref()
        .map(|k| set.select(&(0..k.n).collect::<Vec<_>>()));
    if let (Some(k), Some(p), None) = (&cfg.ntk, &probe_set, &found) {
        ntk_rows.push(track::measure(&model.valid(), p, compute, k.output, 0)?);
        write_csv(&out.join("ntk.csv"), &ntk_rows)?;
    }

    let (per_epoch, total, epochs) = step_counts(cfg, set.n);
    let loss_fn = CrossEntropyLossConfig::new().init(&ad);
    let epoch_bar = reporter.bar(epochs as u64, "epochs".into());
    epoch_bar.set_position(first_epoch as u64 - 1);
    let mut last_checkpoint = found.as_ref().map_or(0, |c| c.pointer.epoch);
    let identity = RunIdentity {
        config: &text,
        provenance: &prov,
    };
    let mut last_good: Option<LastGood> = None;
    let mut diverged_epoch = None;
    for epoch in first_epoch..=epochs {
        if opts.stop_after.is_some_and(|s| epoch - first_epoch >= s) {
            break;
        }
        let epoch_start = Instant::now();
        let mut order: Vec<usize> = (0..set.n).collect();
        let mut rng = ChaCha8Rng::seed_from_u64(t.seed);
        rng.set_stream(epoch as u64);
        order.shuffle(&mut rng);
        let mut aug_rng = t.augment.then(|| {
            let mut r = ChaCha8Rng::seed_from_u64(t.seed);
            r.set_stream((1 << 32) + epoch as u64);
            r
        });
        let steps = per_epoch.min(total - iteration);
        let batch_bar = reporter.bar(steps as u64, format!("epoch {epoch}"));
        let (mut loss_sum, mut hits, mut seen) = (0.0, 0usize, 0usize);
        let epoch_lr = cfg.schedule.lr(cfg.optim.lr, iteration, per_epoch, total);
        for idx in order.chunks(t.batch_size).take(steps) {
            let lr = cfg.schedule.lr(cfg.optim.lr, iteration, per_epoch, total);
            if let Some(e) = engine.as_mut() {
                let x = batch_rows(set, idx, aug_rng.as_mut());
                let y: Vec<usize> = idx.iter().map(|&i| usize::from(set.labels[i])).collect();
                let r = e.step(&x, set.d, &y, lr);
                if !r.loss_sum.is_finite() {
                    diverged_epoch = Some(epoch);
                    break;
                }
                loss_sum += r.loss_sum;
                hits += r.correct;
            } else {
                let x = batch_x(set, idx, compute, &ad, aug_rng.as_mut());
                let y = batch_y(set, idx, &ad);
                let logits = model.forward(x);
                let loss = loss_fn.forward(logits.clone(), y.clone());
                let l = scalar(loss.clone());
                if !l.is_finite() {
                    diverged_epoch = Some(epoch);
                    break;
                }
                loss_sum += l * idx.len() as f64;
                hits += correct(logits, y);
                let grads = GradientsParams::from_grads(loss.backward(), &model);
                model = optim.step(lr, model, grads);
            }
            seen += idx.len();
            iteration += 1;
            batch_bar.inc(1);
            batch_bar.set_message(format!(
                "loss {:.4} {:.0} samples/s",
                loss_sum / seen as f64,
                seen as f64 / epoch_start.elapsed().as_secs_f64()
            ));
        }
        batch_bar.finish_and_clear();
        if diverged_epoch.is_some() {
            break;
        }
        if let Some(e) = &engine {
            e.write_into(&mut model);
        }
        let seconds = epoch_start.elapsed().as_secs_f64();
        let last = epoch == epochs;
        let (test_loss, test_accuracy) = match &data.test {
            Some(s) if last || epoch % t.eval_every == 0 => {
                let (l, a) = evaluate(&model.valid(), s, compute, 500);
                (Some(l), Some(a))
            }
            _ => (None, None),
        };
        let row = EpochMetrics {
            epoch,
            iteration,
            train_loss: loss_sum / seen as f64,
            train_accuracy: hits as f64 / seen as f64,
            test_loss,
            test_accuracy,
            lr: epoch_lr,
            seconds,
            samples_per_second: seen as f64 / seconds,
        };
        reporter.log(&format!(
            "{} epoch {epoch}/{epochs}: train loss {:.5} acc {:.4}{} lr {:.3e} {:.1} s ({:.0} samples/s)",
            spec.describe(),
            row.train_loss,
            row.train_accuracy,
            row.test_accuracy
                .map_or(String::new(), |a| format!(" test acc {a:.4}")),
            row.lr,
            seconds,
            row.samples_per_second
        ));
        rows.push(row);
        write_csv(&out.join("metrics.csv"), &rows)?;
        if let (Some(k), Some(p)) = (&cfg.ntk, &probe_set)
            && (last || epoch % k.every == 0)
        {
            ntk_rows.push(track::measure(&model.valid(), p, compute, k.output, epoch)?);
            write_csv(&out.join("ntk.csv"), &ntk_rows)?;
        }
        let velocity = engine.as_ref().map(Engine::velocity);
        if last || epoch % t.checkpoint_every == 0 {
            checkpoint::save(
                out,
                epoch,
                iteration,
                &identity,
                &model,
                optim_state(&optim, velocity.as_deref()),
                &rows,
                &ntk_rows,
            )?;
            last_checkpoint = epoch;
            last_good = None;
        } else {
            last_good = Some((model.clone(), optim.clone(), velocity, epoch, iteration));
        }
        epoch_bar.inc(1);
    }
    epoch_bar.finish_and_clear();
    if let Some(e) = diverged_epoch {
        // Keep the last good state: the end of the last finite epoch.
        if let Some((m, o, v, epoch, it)) = &last_good
            && *epoch > last_checkpoint
        {
            let state = optim_state(o, v.as_deref());
            checkpoint::save(out, *epoch, *it, &identity, m, state, &rows, &ntk_rows)?;
        }
        reporter.log(&format!(
            "{}: diverged (non-finite loss) in epoch {e}; the last good state (epoch {}) is \
             in {}/checkpoint.json",
            spec.describe(),
            rows.last().map_or(0, |r| r.epoch),
            out.display()
        ));
    } else if rows.last().is_none_or(|r| r.epoch < epochs) {
        // Stopped early on purpose (`stop_after`): no summary, the checkpoint resumes it.
        return Ok(summarize(
            cfg, &rows, &ntk_rows, None, compute, start, set, false, &prov,
        ));
    }
    let summary = summarize(
        cfg,
        &rows,
        &ntk_rows,
        diverged_epoch,
        compute,
        start,
        set,
        true,
        &prov,
    );
    let json = serde_json::to_string_pretty(&summary).expect("serializes");
    ntk_core::io::atomic_write(&summary_path, json.as_bytes())
        .map_err(|e| format!("{}: {e}", out.display()))?;
    Ok(summary)
}

/// The optimizer state to checkpoint: the host engine's momentum buffers when it ran.
fn optim_state<'a>(optim: &'a ModuleOptimizer, velocity: Option<&'a [f64]>) -> OptimState<'a> {
    match velocity {
        Some(v) => OptimState::Host(v),
        None => OptimState::Burn(optim),
    }
}

#[allow(clippy::too_many_arguments)]
fn summarize(
    cfg: &TrainConfig,
    rows: &[EpochMetrics],
    ntk_rows: &[NtkRow],
    diverged_epoch: Option<usize>,
    compute: &Compute,
    start: Instant,
    set: &Inputs,
    complete: bool,
    prov: &Provenance,
) -> TrainSummary {
    let spec = cfg.spec().expect("validated");
    let last = rows.last();
    TrainSummary {
        status: match (diverged_epoch, complete) {
            (Some(_), _) => "diverged",
            (None, true) => "finished",
            (None, false) => "interrupted",
        }
        .into(),
        diverged: diverged_epoch.is_some(),
        diverged_epoch,
        epochs_completed: rows.len(),
        iterations_completed: last.map_or(0, |r| r.iteration),
        final_train_loss: last.map(|r| r.train_loss),
        final_train_accuracy: last.map(|r| r.train_accuracy),
        final_test_loss: rows.iter().rev().find_map(|r| r.test_loss),
        final_test_accuracy: rows.iter().rev().find_map(|r| r.test_accuracy),
        best_test_accuracy: rows.iter().filter_map(|r| r.test_accuracy).reduce(f64::max),
        final_kappa: ntk_rows.last().and_then(|r| r.kappa),
        model: spec.describe(),
        depth: spec.depth(),
        width: spec.width(),
        activation: spec.activation_name(),
        normalization: spec.normalization_name(),
        lr: cfg.optim.lr,
        batch_size: cfg.train.batch_size,
        model_seed: spec.seed(),
        data_seed: cfg.train.seed,
        data: set.description.clone(),
        backend: compute.backend.to_string(),
        precision: compute.precision.to_string(),
        seconds: start.elapsed().as_secs_f64(),
        provenance: Some(prov.clone()),
    }
}
