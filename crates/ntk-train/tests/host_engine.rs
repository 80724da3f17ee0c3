//! The host training engine against the reference: Burn's autodiff (`loss.backward()`),
//! `CrossEntropyLoss` (or the square loss written out on tensors) and `Sgd`, step for step,
//! on the same batches.
//!
//! Tolerances: in f64 both routes round at ~1e-16 per operation and the differences after
//! three steps stay far below 1e-10 relative. In f32 (unit roundoff
//! 6e-8) the two GEMM orders differ by ~1e-6 relative per step: 1e-4.

use burn::module::Module;
use burn::nn::loss::CrossEntropyLossConfig;
use burn::optim::GradientsParams;
use burn::tensor::{Int, Tensor, TensorData};
use ntk_engine::host::HostEngine;
use ntk_engine::loss::Loss;
use ntk_engine::sgd::optimizer;
use ntk_engine::{Engine, Setup};
use ntk_model::NetSpec;
use ntk_model::{ActivationKind, MlpConfig, Net};
use ntk_numerics::backend::{self, Compute, Precision};
use ntk_train::config::{EngineChoice, OptimConfig};
use ntk_train::model::Model;

const D: usize = 7;
const K: usize = 4;

fn batch(step: usize, b: usize) -> (Vec<f64>, Vec<usize>) {
    let x = (0..b * D)
        .map(|i| (((i * 37 + step * 101) % 113) as f64 / 56.5 - 1.0) * 1.3)
        .collect();
    let y = (0..b).map(|i| (i * 7 + step) % K).collect();
    (x, y)
}

fn params(model: &Model) -> Vec<f64> {
    let Net::Mlp(mlp) = model else { panic!() };
    let mut out = Vec::new();
    for layer in &mlp.layers {
        out.extend(layer.weight.val().try_into_vec_as::<f64>().unwrap());
        if let Some(b) = &layer.bias {
            out.extend(b.val().try_into_vec_as::<f64>().unwrap());
        }
    }
    out
}

fn rel(a: &[f64], b: &[f64]) -> f64 {
    let num: f64 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
    let den: f64 = b.iter().map(|y| y * y).sum();
    (num / den).sqrt()
}

/// The batch's mean loss on Burn's tensors, written out here (not through `ntk_train::loss`):
/// the cross-entropy, or `(1/2B) sum (f - onehot y)^2`.
fn burn_loss(loss: Loss, logits: Tensor<2>, y: &[usize]) -> Tensor<1> {
    let [b, k] = logits.dims();
    let device = logits.device();
    match loss {
        Loss::CrossEntropy => {
            let yt = Tensor::<1, Int>::from_data(
                TensorData::new(y.iter().map(|&v| v as i64).collect::<Vec<_>>(), [b]),
                &device,
            );
            CrossEntropyLossConfig::new()
                .init(&device)
                .forward(logits, yt)
        }
        Loss::Mse => {
            let mut onehot = vec![0.0f64; b * k];
            for (i, &l) in y.iter().enumerate() {
                onehot[i * k + l] = 1.0;
            }
            let t =
                Tensor::<2>::from_data(TensorData::new(onehot, [b, k]), (&device, logits.dtype()));
            let r = logits - t;
            (r.clone() * r).sum().mul_scalar(0.5 / b as f64)
        }
    }
}

/// Three SGD steps by both routes; returns (max loss rel. error, params rel. error).
fn compare(cfg: MlpConfig, optim: OptimConfig, compute: &Compute, loss: Loss) -> (f64, f64) {
    let spec = NetSpec::Mlp(cfg);
    let model = spec.build(D, &compute.device, compute.dtype()).unwrap();
    let mut host = HostEngine::for_model(&model, (&optim.settings(), loss), compute.precision)
        .expect("a host engine");
    let ad = compute.device.clone().autodiff();
    let mut burn_model = model.clone().fork(&ad).train();
    let mut opt = optimizer(&optim.settings());
    let mut worst = 0.0f64;
    for step in 0..3 {
        let b = 6 + step; // batch sizes change: the engine's buffers follow
        let (x, y) = batch(step, b);
        let lr = 0.05 * (1.0 + step as f64);
        let xt = Tensor::<2>::from_data(TensorData::new(x.clone(), [b, D]), (&ad, compute.dtype()));
        let loss = burn_loss(loss, burn_model.forward(xt), &y);
        let l_burn = loss.clone().try_into_vec_as::<f64>().unwrap()[0];
        let grads = GradientsParams::from_grads(loss.backward(), &burn_model);
        burn_model = opt.step(lr, burn_model, grads);
        let r = host.step(&x, D, &y, lr);
        let l_host = r.loss_sum / b as f64;
        worst = worst.max((l_host - l_burn).abs() / l_burn.abs());
    }
    let mut written = model.fork(&ad).train();
    host.write_into(&mut written);
    (
        worst,
        rel(&params(&written.valid()), &params(&burn_model.valid())),
    )
}

fn configs() -> Vec<(MlpConfig, OptimConfig)> {
    let mut out = Vec::new();
    let acts = [
        ActivationKind::Relu,
        ActivationKind::Linear,
        ActivationKind::NormRelu,
        ActivationKind::Gelu,
        ActivationKind::Tanh,
    ];
    for (i, act) in acts.into_iter().enumerate() {
        for depth in [0, 1, 3] {
            let cfg = MlpConfig {
                output_dim: K,
                seed: 11 + i as u64,
                ..MlpConfig::new(D, 16, depth, act)
            }
            .with_bias(depth != 1);
            let optim = OptimConfig {
                lr: 0.05,
                // Coefficients that are not f32 numbers: the Burn engine's optimizer keeps
                // them in f64 as the host engine does (twenty-eighth hostile round, D1: Burn's
                // own `Sgd` rounded them to f32, 3e-8 relative after a few steps).
                momentum: [0.0, 0.9, 0.9][depth.min(2)],
                nesterov: depth == 3 && i % 2 == 0,
                weight_decay: if i % 2 == 1 { 1e-3 } else { 0.0 },
                scalar_lr_scale: 1.0,
            };
            out.push((cfg, optim));
        }
    }
    out
}

/// Every config's loss and parameters after the steps agree within `bound` (relative).
fn host_steps_agree(precision: Precision, bound: f64, loss_kind: Loss) {
    let compute = backend::select(Some("flex"), precision).unwrap();
    for (cfg, optim) in configs() {
        let label = format!(
            "{} depth {} {:?} {loss_kind:?}",
            cfg.activation, cfg.depth, optim
        );
        let (loss, params) = compare(cfg, optim, &compute, loss_kind);
        assert!(loss < bound, "{label}: loss rel. error {loss:e}");
        assert!(params < bound, "{label}: parameter rel. error {params:e}");
    }
}

#[test]
fn host_steps_equal_burn_autodiff_and_sgd_in_f64() {
    host_steps_agree(Precision::F64, 1e-10, Loss::CrossEntropy);
}

#[test]
fn host_steps_equal_burn_autodiff_and_sgd_in_f32() {
    host_steps_agree(Precision::F32, 1e-4, Loss::CrossEntropy);
}

/// The square loss (`train.loss = "mse"`): the same agreement, the reference's loss written
/// out on tensors.
#[test]
fn host_square_loss_steps_equal_burn_autodiff_in_f64() {
    host_steps_agree(Precision::F64, 1e-10, Loss::Mse);
}

#[test]
fn auto_takes_the_host_engine_only_for_plain_mlps_on_the_cpu() {
    let compute = backend::select(Some("flex"), Precision::F32).unwrap();
    let optim = OptimConfig::sgd(0.1, 0.0, 0.0);
    let plain = NetSpec::Mlp(MlpConfig::new(D, 8, 2, ActivationKind::Relu))
        .build(D, &compute.device, compute.dtype())
        .unwrap();
    let bn = NetSpec::Mlp(MlpConfig {
        normalization: ntk_model::Normalization::BatchNorm,
        ..MlpConfig::new(D, 8, 2, ActivationKind::Relu)
    })
    .build(D, &compute.device, compute.dtype())
    .unwrap();
    let sgd = optim.settings();
    let setup = Setup {
        sgd: &sgd,
        loss: Loss::CrossEntropy,
        compute: &compute,
        batch: 4,
        fp32: ntk_numerics::backend::Fp32Precision::Ieee,
    };
    let pick = |choice, m: &Model| {
        ntk_engine::choose(choice, m.clone(), &setup).map(|s| (s.engine(), s.method()))
    };
    assert_eq!(
        pick(EngineChoice::Auto, &plain).unwrap(),
        (Engine::Host, "host GEMM")
    );
    assert_eq!(pick(EngineChoice::Burn, &plain).unwrap().0, Engine::Burn);
    assert_eq!(pick(EngineChoice::Auto, &bn).unwrap().0, Engine::Burn);
    let err = pick(EngineChoice::Host, &bn).err().unwrap().to_string();
    assert!(
        err.contains("train.engine") && err.contains("normalization"),
        "{err}"
    );
}
