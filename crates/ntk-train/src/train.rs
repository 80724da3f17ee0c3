//! The training loop: mini-batch SGD on the cross-entropy loss, metrics per epoch.

use std::path::Path;
use std::time::Instant;

use burn::module::Module;
use burn::nn::loss::CrossEntropyLossConfig;
use burn::optim::decay::WeightDecayConfig;
use burn::optim::momentum::MomentumConfig;
use burn::optim::{GradientsParams, SgdConfig};
use burn::tensor::{Int, Tensor, TensorData};
use ntk_model::Mlp;
use ntk_probe::backend::Compute;
use ntk_probe::config::DataConfig;
use ntk_probe::inputs::{self, Inputs};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

use crate::config::TrainConfig;

/// One row of `metrics.csv`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct EpochMetrics {
    pub epoch: usize,
    pub train_loss: f64,
    pub train_accuracy: f64,
    pub test_loss: Option<f64>,
    pub test_accuracy: Option<f64>,
    pub lr: f64,
    pub seconds: f64,
    pub samples_per_second: f64,
}

/// `summary.json` of a run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TrainSummary {
    pub epochs_completed: usize,
    pub diverged: bool,
    pub final_train_loss: f64,
    pub final_test_accuracy: Option<f64>,
    pub depth: usize,
    pub width: usize,
    pub activation: String,
    pub backend: String,
    pub precision: String,
    pub seconds: f64,
}

fn tensor_x(
    inputs: &Inputs,
    idx: &[usize],
    compute: &Compute,
    device: &burn::tensor::Device,
) -> Tensor<2> {
    let mut x = Vec::with_capacity(idx.len() * inputs.d);
    for &i in idx {
        x.extend_from_slice(&inputs.x[i * inputs.d..(i + 1) * inputs.d]);
    }
    Tensor::from_data(
        TensorData::new(x, [idx.len(), inputs.d]),
        (device, compute.dtype()),
    )
}

fn tensor_y(inputs: &Inputs, idx: &[usize], device: &burn::tensor::Device) -> Tensor<1, Int> {
    let y: Vec<i64> = idx.iter().map(|&i| i64::from(inputs.labels[i])).collect();
    Tensor::from_data(TensorData::new(y, [idx.len()]), device)
}

/// Mean cross-entropy and accuracy of `mlp` (plain device) on a whole set, in batches.
fn evaluate(mlp: &Mlp, set: &Inputs, compute: &Compute, batch: usize) -> (f64, f64) {
    let loss_fn = CrossEntropyLossConfig::new().init(&compute.device);
    let (mut loss, mut correct) = (0.0, 0usize);
    let all: Vec<usize> = (0..set.n).collect();
    for idx in all.chunks(batch.max(1)) {
        let x = tensor_x(set, idx, compute, &compute.device);
        let y = tensor_y(set, idx, &compute.device);
        let logits = mlp.forward(x);
        let l: f64 = loss_fn.forward(logits.clone(), y.clone()).into_scalar_f64();
        loss += l * idx.len() as f64;
        let pred: Vec<i64> = logits.argmax(1).try_into_vec_as().expect("predictions");
        let truth: Vec<i64> = y.try_into_vec_as().expect("labels");
        correct += pred.iter().zip(&truth).filter(|(a, b)| a == b).count();
    }
    (loss / set.n as f64, correct as f64 / set.n as f64)
}

trait ScalarF64 {
    fn into_scalar_f64(self) -> f64;
}
impl ScalarF64 for Tensor<1> {
    fn into_scalar_f64(self) -> f64 {
        self.try_into_vec_as::<f64>().expect("a scalar")[0]
    }
}

/// Loads the train set and the first `test_n` test samples.
pub fn load_data(data: &DataConfig, test_n: usize) -> Result<(Inputs, Option<Inputs>), String> {
    let train = inputs::load(data)?;
    if test_n == 0 {
        return Ok((train, None));
    }
    let mut test_cfg = data.clone();
    test_cfg.split = ntk_data::Split::Test;
    test_cfg.subset = ntk_probe::config::SubsetRule::First;
    test_cfg.n = test_n;
    Ok((train, Some(inputs::load(&test_cfg)?)))
}

/// Trains; writes `out/metrics.csv` after every epoch and `out/summary.json` at the end.
pub fn train(cfg: &TrainConfig, compute: &Compute, out: &Path) -> Result<TrainSummary, String> {
    let start = Instant::now();
    let t = &cfg.train;
    let (train_set, test_set) = load_data(&cfg.data, t.test_n)?;
    let model_cfg = ntk_model::MlpConfig {
        input_dim: train_set.d,
        ..cfg.model.clone()
    };
    let ad = compute.device.clone().autodiff();
    let mut model = Mlp::new(&model_cfg, &compute.device, compute.dtype())
        .map_err(|e| e.to_string())?
        .fork(&ad)
        .train();
    let mut sgd = SgdConfig::new();
    if t.momentum > 0.0 {
        sgd = sgd.with_momentum(Some(
            MomentumConfig::new()
                .with_momentum(t.momentum)
                .with_dampening(0.0)
                .with_nesterov(t.nesterov),
        ));
    }
    if t.weight_decay > 0.0 {
        sgd = sgd.with_weight_decay(Some(WeightDecayConfig::new(t.weight_decay as f32)));
    }
    let mut optim = sgd.init();
    let loss_fn = CrossEntropyLossConfig::new().init(&ad);
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let mut rows: Vec<EpochMetrics> = Vec::new();
    let mut diverged = false;
    for epoch in 1..=t.epochs {
        let epoch_start = Instant::now();
        let mut order: Vec<usize> = (0..train_set.n).collect();
        order.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(
            t.seed.wrapping_add(epoch as u64),
        ));
        let (mut loss_sum, mut correct) = (0.0, 0usize);
        for idx in order.chunks(t.batch_size) {
            let x = tensor_x(&train_set, idx, compute, &ad);
            let y = tensor_y(&train_set, idx, &ad);
            let logits = model.forward(x);
            let loss = loss_fn.forward(logits.clone(), y.clone());
            let l = loss.clone().into_scalar_f64();
            if !l.is_finite() {
                diverged = true;
                break;
            }
            loss_sum += l * idx.len() as f64;
            let pred: Vec<i64> = logits.argmax(1).try_into_vec_as().expect("predictions");
            let truth: Vec<i64> = y.try_into_vec_as().expect("labels");
            correct += pred.iter().zip(&truth).filter(|(a, b)| a == b).count();
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            model = optim.step(t.lr, model, grads);
        }
        if diverged {
            break;
        }
        let seconds = epoch_start.elapsed().as_secs_f64();
        let (test_loss, test_accuracy) = match &test_set {
            Some(s) => {
                let (l, a) = evaluate(&model.valid(), s, compute, 1000);
                (Some(l), Some(a))
            }
            None => (None, None),
        };
        rows.push(EpochMetrics {
            epoch,
            train_loss: loss_sum / train_set.n as f64,
            train_accuracy: correct as f64 / train_set.n as f64,
            test_loss,
            test_accuracy,
            lr: t.lr,
            seconds,
            samples_per_second: train_set.n as f64 / seconds,
        });
        write_metrics(&out.join("metrics.csv"), &rows)?;
    }
    let last = rows.last();
    let summary = TrainSummary {
        epochs_completed: rows.len(),
        diverged,
        final_train_loss: last.map_or(f64::NAN, |r| r.train_loss),
        final_test_accuracy: last.and_then(|r| r.test_accuracy),
        depth: model_cfg.depth,
        width: model_cfg.width,
        activation: model_cfg.activation().to_string(),
        backend: compute.backend.to_string(),
        precision: compute.precision.to_string(),
        seconds: start.elapsed().as_secs_f64(),
    };
    let json = serde_json::to_string_pretty(&summary).expect("serializes");
    ntk_model::io::atomic_write(&out.join("summary.json"), json.as_bytes())
        .map_err(|e| format!("{}: {e}", out.display()))?;
    Ok(summary)
}

/// Writes the metrics so far (atomically: a reader never sees half a file).
pub fn write_metrics(path: &Path, rows: &[EpochMetrics]) -> Result<(), String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.serialize(r).map_err(|e| e.to_string())?;
    }
    let bytes = w.into_inner().map_err(|e| e.to_string())?;
    ntk_model::io::atomic_write(path, &bytes).map_err(|e| format!("{}: {e}", path.display()))
}
