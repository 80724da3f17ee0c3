//! The cuDNN engine (`ntk_engine::cudnn`) held to the host engine step for step, in f32, for
//! ResNet-20 in every variant: the training-mode and evaluation-mode logits, every
//! parameter's gradient, 20 steps each taken from the host engine's state (loss, every
//! parameter's change, the momenta, BatchNorm's running statistics), 20 free-running steps,
//! a diverged step, and a run that moves between the device and the host engine; and in
//! TF32 (the user's explicit `train.fp32_precision = "tf32"`), the forward and gradient
//! within TF32's rounding.
//!
//! Tolerances, from f32: both engines round at `2^-24 ~ 6e-8` per operation and sum in
//! different orders (cuDNN's algorithms against im2col GEMMs on the host); a convolution sums
//! `9 c_in <= 576` products, so a layer differs by about `sqrt(576) 6e-8 ~ 1e-6` relative, and
//! 20 layers forward and back compound that to `~1e-5`: logits and losses are held to `1e-4`,
//! and the median parameter tensor of a gradient or a step's change to `1e-4`.
//!
//! The worst tensor is another matter. ReLU's slope jumps at 0 and NormReLU's at its kink `b`:
//! a pre-activation within rounding of the kink can take the other branch in the other
//! engine (measured: about one such element per forward of ResNet-20 at batch 32), and each
//! flip changes the gradient of the weights below it by one of the `~10^4` terms they sum,
//! `~1e-2` of the tensor's largest entry but `~1e-4` of its norm. SELU has a kink too: its
//! slope jumps from `lambda alpha` to `lambda` at 0, where pre-activations are densest
//! (measured: about ten flips per step of ResNet-20 at batch 32 in the step tests below,
//! while the gradient test's parameters in general position happened to have none). So a
//! gradient in general position is held to `3e-2` of each tensor's largest entry where there
//! are kinks and `2e-3` for SELU with the median tensor at `1e-4`, and a step's change and the
//! momenta are compared in norm ([`compare_change`]).
//!
//! These run only where a GPU and the libraries are present; elsewhere each says why it
//! skips (`ntk_engine::cudnn::libraries::probe`).

#![cfg(feature = "cudnn")]

mod common;

use burn::tensor::{DType, Device};
use ntk_engine::cudnn::{CudnnResNet, Fp32Precision};
use ntk_engine::host::HostResNetSgd;
use ntk_engine::host::resnet::{BlockKind, HostResNet, Slot, StemKind};
use ntk_model::{ResNet, ResNetConfig, ResNetVariant};
use ntk_train::config::{EngineChoice, OptimConfig, TrainConfig};
use ntk_train::metrics::{EpochMetrics, read_csv};
use ntk_train::train::RunOptions;

const BATCH: usize = 32;

/// Whether a cuDNN engine can start here; prints why not.
fn available() -> bool {
    match ntk_engine::cudnn::libraries::probe() {
        Ok(()) => true,
        Err(m) => {
            eprintln!("skipped: {m}");
            false
        }
    }
}

fn network(variant: ResNetVariant) -> ResNet {
    let cfg = ResNetConfig::example(20, variant).with_seed(7);
    ResNet::new(&cfg, &Device::flex(), DType::F32).expect("a ResNet-20")
}

/// Deterministic values about N(0, 1) (a sum of uniforms), and labels.
fn batch(seed: u64, d: usize) -> (Vec<f64>, Vec<usize>) {
    let mut s = seed
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    let mut u = || {
        s = s
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    let x = (0..BATCH * d)
        .map(|_| (0..4).map(|_| u()).sum::<f64>() * 3f64.sqrt() - 2.0 * 3f64.sqrt())
        .collect();
    let y = (0..BATCH).map(|_| (u() * 10.0) as usize % 10).collect();
    (x, y)
}

/// Every parameter tensor's slot, named.
fn slots(h: &HostResNet<f32>) -> Vec<(String, Slot)> {
    let mut out = vec![("stem.w".to_string(), h.stem_w)];
    let one = |at: usize| Slot { at, len: 1 };
    match &h.stem_kind {
        StemKind::BatchNorm(bn) => {
            out.push(("stem.gamma".into(), bn.gamma));
            out.push(("stem.beta".into(), bn.beta));
        }
        StemKind::Fixup { bias } => out.push(("stem.bias".into(), *bias)),
        StemKind::Normalized => {}
    }
    for (k, b) in h.blocks.iter().enumerate() {
        out.push((format!("block{k}.w1"), b.w1));
        out.push((format!("block{k}.w2"), b.w2));
        match &b.kind {
            BlockKind::BatchNorm { bn1, bn2 } => {
                out.push((format!("block{k}.gamma1"), bn1.gamma));
                out.push((format!("block{k}.beta1"), bn1.beta));
                out.push((format!("block{k}.gamma2"), bn2.gamma));
                out.push((format!("block{k}.beta2"), bn2.beta));
            }
            BlockKind::Fixup {
                b1a,
                b1b,
                b2a,
                scale,
                b2b,
            } => {
                for (n, s) in [
                    ("b1a", b1a),
                    ("b1b", b1b),
                    ("b2a", b2a),
                    ("scale", scale),
                    ("b2b", b2b),
                ] {
                    out.push((format!("block{k}.{n}"), one(s.at)));
                }
            }
            BlockKind::Normalized => {}
        }
    }
    if let Some(b2) = h.head.bias2 {
        out.push(("head.bias2".into(), b2));
    }
    out.push(("head.w".into(), h.head.w));
    out.push(("head.b".into(), h.head.b));
    out
}

/// `max |a - b| / max |b|` (0 when both are zero).
fn rel(a: &[f32], b: &[f32]) -> f64 {
    let diff = a
        .iter()
        .zip(b)
        .map(|(x, y)| (f64::from(*x) - f64::from(*y)).abs())
        .fold(0.0, f64::max);
    let scale = b.iter().map(|y| f64::from(*y).abs()).fold(0.0, f64::max);
    if diff == 0.0 {
        0.0
    } else {
        diff / scale.max(f64::MIN_POSITIVE)
    }
}

/// The worst tensor of `a` against `b` (both in the host order): its name and error.
fn worst(h: &HostResNet<f32>, a: &[f32], b: &[f32]) -> (String, f64) {
    slots(h)
        .into_iter()
        .map(|(n, s)| (n, rel(&a[s.range()], &b[s.range()])))
        .fold((String::new(), 0.0), |acc, x| {
            if x.1 > acc.1 || acc.0.is_empty() {
                x
            } else {
                acc
            }
        })
}

/// The worst-tensor tolerance of a gradient or a step's change (see the module docs): `3e-2`
/// where an activation has a kink (ReLU in batch_norm and fixup, NormReLU), `2e-3` for SELU.
fn grad_tol(variant: ResNetVariant) -> f64 {
    if variant == ResNetVariant::Selu {
        2e-3
    } else {
        3e-2
    }
}

/// The median of the per-tensor errors of `a` against `b`.
fn median(h: &HostResNet<f32>, a: &[f32], b: &[f32]) -> f64 {
    let mut e: Vec<f64> = slots(h)
        .into_iter()
        .map(|(_, s)| rel(&a[s.range()], &b[s.range()]))
        .collect();
    e.sort_by(f64::total_cmp);
    e[e.len() / 2]
}

/// Parameters moved off their initial values (Fixup starts with zero branches, BatchNorm
/// with gamma 1 and beta 0), so every term of every gradient is exercised.
fn general_position(h: &mut HostResNet<f32>) {
    for (i, v) in h.theta.iter_mut().enumerate() {
        let w = (((i * 7919) % 2003) as f32 / 1001.5 - 1.0) * 0.05;
        *v += w;
    }
}

fn optim() -> OptimConfig {
    OptimConfig {
        scalar_lr_scale: 0.1,
        ..OptimConfig::sgd(0.1, 0.9, 5e-4)
    }
}

fn device(h: HostResNet<f32>, o: &OptimConfig) -> CudnnResNet {
    device_with(h, o, Fp32Precision::Ieee)
}

fn device_with(h: HostResNet<f32>, o: &OptimConfig, fp32: Fp32Precision) -> CudnnResNet {
    CudnnResNet::from_host(
        h,
        (o.settings(), ntk_engine::Loss::CrossEntropy),
        BATCH,
        0,
        fp32,
    )
    .unwrap_or_else(|e| panic!("the cuDNN engine: {e}"))
}

/// `(softmax - onehot) / B` of row-major logits, in f64 as the host engine computes it.
fn cotangent(logits: &[f32], y: &[usize]) -> Vec<f32> {
    let k = logits.len() / y.len();
    let mut out = vec![0f32; logits.len()];
    for (i, &label) in y.iter().enumerate() {
        let row: Vec<f64> = logits[i * k..(i + 1) * k]
            .iter()
            .map(|&v| f64::from(v))
            .collect();
        let best = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = row.iter().map(|v| (v - best).exp()).sum();
        for j in 0..k {
            let p = (row[j] - best).exp() / sum;
            out[i * k + j] = ((p - if j == label { 1.0 } else { 0.0 }) / y.len() as f64) as f32;
        }
    }
    out
}

#[test]
fn the_device_engine_is_the_host_engines_forward_and_gradient() {
    if !available() {
        return;
    }
    let mut failures = Vec::new();
    for variant in ResNetVariant::all() {
        let net = network(variant);
        let mut host = HostResNet::<f32>::read(&net);
        general_position(&mut host);
        let mut dev = device(host.clone(), &optim());
        let d = host.stem.input.image();
        let (x, y) = batch(1, d);
        let want = host.forward(&x, BATCH).to_vec();
        let got = dev.logits(&x, BATCH).expect("device logits");
        let e_logits = rel(&got, &want);
        let dl = cotangent(&want, &y);
        let mut grad = vec![0f32; host.num_params()];
        host.backward(&dl, &mut grad);
        let (_, dgrad) = dev.gradient(&x, &y).expect("device gradient");
        let (name, e_grad) = worst(&host, &dgrad, &grad);
        let med = median(&host, &dgrad, &grad);
        println!(
            "{variant}: logits {e_logits:.2e}, worst gradient {name} {e_grad:.2e}, median {med:.2e} (device {})",
            dev.device_name()
        );
        if e_logits >= 1e-4 {
            failures.push(format!("{variant}: logits differ by {e_logits:.3e}"));
        }
        if e_grad >= grad_tol(variant) || med >= 1e-4 {
            failures.push(format!(
                "{variant}: the gradient of {name} differs by {e_grad:.3e} (median {med:.3e})"
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// TF32, the user's explicit choice (`train.fp32_precision = "tf32"`): the same forward and
/// gradient as the host engine's f32 within TF32's rounding. Each factor of a product rounds
/// at `u = 2^-11 ~ 4.9e-4`, so a convolution's output moves by about `u` relative (a sum of
/// products with independent errors of at most `2u`, random signs) and 20 layers compound
/// that to about `sqrt(20) u ~ 2e-3`: logits are held to `2e-2` of the largest. Kinks take the
/// other branch about `10^4` times more often than in f32 (about one pre-activation in
/// `10^3`, against one per forward), so the gradient is compared as a whole, in norm, and
/// held to `1e-1`; an engine that computed something else would be off by order 1. The
/// errors are printed beside f32's: on a GPU without TF32 (before Ampere) the two are alike.
#[test]
fn tf32_keeps_the_host_engines_forward_and_gradient_within_its_rounding() {
    if !available() {
        return;
    }
    let wide = |v: &[f32]| v.iter().map(|&x| f64::from(x)).collect::<Vec<f64>>();
    let mut failures = Vec::new();
    for variant in ResNetVariant::all() {
        let net = network(variant);
        let mut host = HostResNet::<f32>::read(&net);
        general_position(&mut host);
        let d = host.stem.input.image();
        let (x, y) = batch(1, d);
        let want = host.forward(&x, BATCH).to_vec();
        let dl = cotangent(&want, &y);
        let mut grad = vec![0f32; host.num_params()];
        host.backward(&dl, &mut grad);
        let mut errors = Vec::new();
        for fp32 in [Fp32Precision::Ieee, Fp32Precision::Tf32] {
            let mut dev = device_with(host.clone(), &optim(), fp32);
            assert_eq!(dev.fp32_precision(), fp32);
            let got = dev.logits(&x, BATCH).expect("device logits");
            let (_, dgrad) = dev.gradient(&x, &y).expect("device gradient");
            errors.push((rel(&got, &want), rel2(&wide(&dgrad), &wide(&grad))));
        }
        let [(l32, g32), (l_tf, g_tf)] = errors[..] else {
            unreachable!("two precisions")
        };
        println!(
            "{variant}: logits {l_tf:.2e} in tf32 ({l32:.2e} in f32), gradient in norm {g_tf:.2e} ({g32:.2e})"
        );
        if l_tf >= 2e-2 || g_tf >= 1e-1 {
            failures.push(format!(
                "{variant}: in tf32 the logits differ by {l_tf:.3e}, the gradient by {g_tf:.3e} in norm"
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// `||a - b|| / ||b||` (Euclidean; 0 when both are zero).
fn rel2(a: &[f64], b: &[f64]) -> f64 {
    let d: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt();
    let n: f64 = b.iter().map(|y| y * y).sum::<f64>().sqrt();
    if d == 0.0 {
        0.0
    } else {
        d / n.max(f64::MIN_POSITIVE)
    }
}

/// The comparison of a step's change (or the momenta) `a - p0` against `b - p0`, robust to
/// kink flips (module docs): the whole vector within `5e-3` relative (Euclidean), every
/// tensor within `5e-2`, and every single-value tensor (Fixup's scalars) within `2e-3`. A
/// flip changes one of the `~10^4` terms of the sums below it, `~1e-4` of a tensor's norm;
/// a defect in a layer's formula moves that tensor's norm by `>= 1e-1`. Returns what failed.
fn compare_change(
    what: &str,
    h: &HostResNet<f32>,
    (a, b, p0): (&[f32], &[f32], &[f32]),
) -> Option<String> {
    let da: Vec<f64> = a
        .iter()
        .zip(p0)
        .map(|(x, y)| f64::from(*x) - f64::from(*y))
        .collect();
    let db: Vec<f64> = b
        .iter()
        .zip(p0)
        .map(|(x, y)| f64::from(*x) - f64::from(*y))
        .collect();
    let all = rel2(&da, &db);
    let (mut worst, mut scalar) = ((String::new(), 0.0f64), (String::new(), 0.0f64));
    for (n, s) in slots(h) {
        let e = rel2(&da[s.range()], &db[s.range()]);
        let slot = if s.len == 1 { &mut scalar } else { &mut worst };
        if e > slot.1 || slot.0.is_empty() {
            *slot = (n, e);
        }
    }
    println!(
        "  {what}: all {all:.2e}, worst tensor {} {:.2e}, worst scalar {} {:.2e}",
        worst.0, worst.1, scalar.0, scalar.1
    );
    (all >= 5e-3 || worst.1 >= 5e-2 || scalar.1 >= 2e-3).then(|| {
        format!(
            "{what}: all {all:.3e}, worst tensor {} {:.3e}, worst scalar {} {:.3e}",
            worst.0, worst.1, scalar.0, scalar.1
        )
    })
}

/// Step for step: before each of 20 steps of the host engine (lr 0.1, momentum 0.9, weight
/// decay 5e-4, Fixup's scalars at a tenth of the rate), the cuDNN engine is given the host
/// engine's parameters, running statistics and momenta, and takes the same step on the same
/// batch: the loss (1e-4 relative: the same forward from the same state), the change of every
/// parameter and the momenta ([`compare_change`]) and the running statistics (1e-4) must
/// agree at every step. The first step sets the momenta (`v = g`), the others use them;
/// from the second on the device replays its captured CUDA graph.
#[test]
fn the_device_engine_takes_the_host_engines_steps() {
    if !available() {
        return;
    }
    let mut failures = Vec::new();
    for variant in ResNetVariant::all() {
        failures.extend(steps_from_the_host(
            variant,
            ntk_engine::Loss::CrossEntropy,
            20,
        ));
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The square loss (`train.loss = "mse"`, the device's `square_error` kernel): 5 steps from
/// the host engine's state, held as the cross-entropy's are, for a BatchNorm and a
/// norm-free network.
#[test]
fn the_device_engine_takes_the_host_engines_square_loss_steps() {
    if !available() {
        return;
    }
    let mut failures = Vec::new();
    for variant in [ResNetVariant::BatchNorm, ResNetVariant::NormRelu] {
        failures.extend(steps_from_the_host(variant, ntk_engine::Loss::Mse, 5));
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// `steps` steps of ResNet-20 `variant` on `loss`, each from the host engine's state on both
/// engines: the loss within `1e-4` relative and the hits within one, every parameter's
/// change and the momenta ([`compare_change`]), BatchNorm's running statistics within
/// `1e-4`. What differs, one line each.
fn steps_from_the_host(variant: ResNetVariant, loss: ntk_engine::Loss, steps: u64) -> Vec<String> {
    let mut failures = Vec::new();
    let net = network(variant);
    let o = optim();
    let mut host = HostResNetSgd::<f32>::new(&net, &o.settings(), loss);
    let h0 = HostResNet::<f32>::read(&net);
    let mut dev = CudnnResNet::from_host(
        h0.clone(),
        (o.settings(), loss),
        BATCH,
        0,
        Fp32Precision::Ieee,
    )
    .unwrap_or_else(|e| panic!("the cuDNN engine: {e}"));
    assert_eq!(dev.loss(), loss);
    let d = h0.stem.input.image();
    let (mut worst_loss, mut worst_run) = (0.0f64, 0.0f64);
    println!("{variant} ({}):", loss.name());
    for step in 0..steps {
        let before = host.network().clone();
        let v0 = host.velocity();
        dev.set_state(&before.theta, &before.running)
            .expect("state to the device");
        dev.set_velocity(&v0).expect("momenta to the device");
        let (x, y) = batch(100 + step, d);
        let lr = if step < 10 { 0.1 } else { 0.05 };
        let a = host.step(&x, d, &y, lr);
        let b = dev.step(&x, &y, lr).expect("a device step");
        let e = (a.loss_sum - b.loss_sum).abs() / a.loss_sum.abs();
        worst_loss = worst_loss.max(e);
        if e >= 1e-4 || a.correct.abs_diff(b.correct) > 1 {
            failures.push(format!(
                "{variant} step {step}: loss {} ({} right) on the device, {} ({} right) on the host",
                b.loss_sum, b.correct, a.loss_sum, a.correct
            ));
        }
        let want = host.network().clone();
        let got = dev.sync_host().expect("read back").clone();
        let what = format!("{variant} step {step} change");
        if let Some(f) = compare_change(&what, &h0, (&got.theta, &want.theta, &before.theta)) {
            failures.push(f);
        }
        let e_run = rel(&got.running, &want.running);
        worst_run = worst_run.max(e_run);
        if e_run >= 1e-4 {
            failures.push(format!(
                "{variant} step {step}: running statistics differ by {e_run:.3e}"
            ));
        }
        let vh: Vec<f32> = host.velocity().iter().map(|&v| v as f32).collect();
        let vd: Vec<f32> = dev
            .velocity()
            .expect("velocity")
            .iter()
            .map(|&v| v as f32)
            .collect();
        if vh.len() != vd.len() {
            failures.push(format!(
                "{variant} step {step}: momenta of {} and {}",
                vd.len(),
                vh.len()
            ));
        } else {
            let zero = vec![0f32; vh.len()];
            let what = format!("{variant} step {step} momenta");
            if let Some(f) = compare_change(&what, &h0, (&vd, &vh, &zero)) {
                failures.push(f);
            }
        }
    }
    println!(
        "{variant} ({}): {steps} steps, worst loss {worst_loss:.2e}, worst running statistics {worst_run:.2e}",
        loss.name()
    );
    failures
}

/// Free running: 20 steps of each engine from the same start, each on its own trajectory, at
/// lr 0.01 (where the dynamics do not amplify a rounding difference by orders of magnitude
/// within 20 steps; at lr 0.1 on these random labels they do, by a factor ~2 per step, and
/// a flipped kink then makes the trajectories part). The loss at every step within `1e-2`
/// relative (measured: batch_norm 8.1e-4 to 1.1e-3 over four runs, as cuDNN's measured
/// algorithms may differ from run to run; the others 1e-9 to 1.7e-4). The parameters'
/// change over the 20 steps is reported and held to `0.3` in norm only: flips every step
/// make the two trajectories part slowly even here (measured on an H200: batch_norm 0.12,
/// norm_relu 0.011-0.015, selu 0.026-0.028, fixup 9e-7), which the step-for-step test above
/// separates from the steps themselves.
#[test]
fn the_device_engine_follows_the_host_engine_for_20_steps() {
    if !available() {
        return;
    }
    let mut failures = Vec::new();
    for variant in ResNetVariant::all() {
        let net = network(variant);
        let o = OptimConfig {
            scalar_lr_scale: 0.1,
            ..OptimConfig::sgd(0.01, 0.9, 5e-4)
        };
        let mut host =
            HostResNetSgd::<f32>::new(&net, &o.settings(), ntk_engine::Loss::CrossEntropy);
        let h0 = HostResNet::<f32>::read(&net);
        let mut dev = device(h0.clone(), &o);
        let d = h0.stem.input.image();
        let mut worst_loss = 0.0f64;
        for step in 0..20 {
            let (x, y) = batch(100 + step, d);
            let a = host.step(&x, d, &y, 0.01);
            let b = dev.step(&x, &y, 0.01).expect("a device step");
            worst_loss = worst_loss.max((a.loss_sum - b.loss_sum).abs() / a.loss_sum.abs());
        }
        println!("{variant}: free-running 20 steps, worst loss {worst_loss:.2e}");
        if worst_loss >= 1e-2 {
            failures.push(format!(
                "{variant}: free-running losses differ by {worst_loss:.3e}"
            ));
        }
        let want = host.network().clone();
        let got = dev.sync_host().expect("read back").clone();
        let (dg, dw): (Vec<f64>, Vec<f64>) = got
            .theta
            .iter()
            .zip(&want.theta)
            .zip(&h0.theta)
            .map(|((g, w), p)| (f64::from(*g) - f64::from(*p), f64::from(*w) - f64::from(*p)))
            .unzip();
        let drift = rel2(&dg, &dw);
        println!(
            "{variant}: free-running 20 steps, the parameters' change differs by {drift:.2e} (norm)"
        );
        if drift >= 0.3 {
            failures.push(format!(
                "{variant}: free-running changes differ by {drift:.3e}"
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn a_diverged_step_leaves_the_device_network_as_it_was() {
    if !available() {
        return;
    }
    let net = network(ResNetVariant::BatchNorm);
    let h0 = HostResNet::<f32>::read(&net);
    let mut dev = device(h0.clone(), &optim());
    let d = h0.stem.input.image();
    let (mut x, y) = batch(3, d);
    x[5] = f64::NAN;
    let r = dev.step(&x, &y, 0.1).expect("a device step");
    assert!(r.loss_sum.is_nan(), "the loss is NaN: {}", r.loss_sum);
    let after = dev.sync_host().expect("read back");
    assert_eq!(after.theta, h0.theta, "parameters untouched");
    assert_eq!(after.running, h0.running, "running statistics untouched");
    assert!(
        dev.velocity().expect("velocity").is_empty(),
        "no momentum yet"
    );
}

#[test]
fn evaluation_on_the_device_is_the_host_engines() {
    if !available() {
        return;
    }
    for variant in [ResNetVariant::BatchNorm, ResNetVariant::Fixup] {
        let net = network(variant);
        let mut host = HostResNet::<f32>::read(&net);
        general_position(&mut host);
        // Running statistics away from (0, 1).
        for (i, r) in host.running.iter_mut().enumerate() {
            *r = 0.5 + 0.1 * ((i % 7) as f32);
        }
        let mut dev = device(host.clone(), &optim());
        let d = host.stem.input.image();
        // 70 rows: two full chunks of 32 and one of 6 (padded on the device).
        let rows = 70;
        let (mut x, _) = batch(9, d);
        x.extend(batch(10, d).0);
        x.extend(batch(11, d).0);
        x.truncate(rows * d);
        let mut want = Vec::new();
        host.eval_logits(&x, rows, BATCH, |l, _| want.extend_from_slice(l));
        let mut got = Vec::new();
        dev.eval_logits(&x, rows, |l, _| got.extend_from_slice(l))
            .expect("device evaluation");
        let e = rel(&got, &want);
        println!("{variant}: evaluation logits {e:.2e}");
        assert_eq!(got.len(), want.len());
        assert!(e < 1e-4, "{variant}: evaluation logits differ by {e:.3e}");
    }
}

/// A ResNet-20 run on generated CIFAR-format files (256 training images, batch 128: two steps
/// an epoch, two epochs, lr 0.01, momentum 0.9) with `engine`.
fn moving_config(data: &std::path::Path, engine: EngineChoice) -> TrainConfig {
    let mut cfg = TrainConfig::parse(&format!(
        r#"
[data]
dataset = "cifar-10"
n = 256
subset = "first"
scaling = "cifar-per-channel"
dir = "{}"

[resnet]
depth = 20
variant = "batch_norm"

[optim]
lr = 0.01
momentum = 0.9
weight_decay = 1e-4

[train]
batch_size = 128
epochs = 2
test_n = 64
augment = true
"#,
        data.display()
    ))
    .expect("the config");
    cfg.train.engine = engine;
    cfg
}

/// A run of `cfg` in `out` ([`common::run`]: the CPU's Burn device holds the model of
/// record; the cuDNN engine computes the steps where `cfg` asks for it).
fn train_in(cfg: &TrainConfig, out: &std::path::Path, resume: bool, stop_after: Option<usize>) {
    common::run(cfg, out, RunOptions { resume, stop_after });
}

/// The checkpoint of `out` after `epoch`: its engine and momenta.
fn velocity_at(out: &std::path::Path, epoch: usize) -> Vec<f64> {
    let ck = ntk_train::checkpoint::find(out)
        .expect("readable")
        .expect("a checkpoint");
    assert_eq!(ck.pointer.epoch, epoch);
    assert_eq!(ck.pointer.engine, ntk_engine::StateForm::Host);
    ck.load_velocity().expect("velocity.npy")
}

/// A run moves between the GPU and the CPU with `--resume` (README, "train.engine"): the
/// cuDNN engine's checkpoint is the host engine's files, so a run trained for an epoch on
/// the device finishes on the host engine, and one begun on the host finishes on the device.
/// Each is held to the run that stayed on the other side: the momenta at the end (in norm:
/// 4 free-running steps in f32, where the step tests above hold a single step's change to
/// 5e-3; a momentum lost on the way would be off by its 0.9^2 = 81% share) and the test loss
/// of both epochs (1e-3 relative, as the free-running losses above). The momenta after the
/// first epoch are compared too: the device writes them in the host engine's order.
#[test]
fn a_run_moves_between_the_device_and_the_host_engine() {
    if !available() {
        return;
    }
    let data = tempfile::tempdir().unwrap();
    ntk_data::cifar::write_cifar_like(data.path(), 64, 7).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = |name: &str| dir.path().join(name);
    let host = moving_config(data.path(), EngineChoice::Host);
    let gpu = moving_config(data.path(), EngineChoice::Cudnn);
    // Whole on each side, with the first epoch's checkpoint kept apart.
    train_in(&host, &out("host"), false, Some(1));
    let host_v1 = velocity_at(&out("host"), 1);
    train_in(&host, &out("host"), true, None);
    train_in(&gpu, &out("gpu"), false, Some(1));
    let gpu_v1 = velocity_at(&out("gpu"), 1);
    train_in(&gpu, &out("gpu"), true, None);
    // Moved: the first epoch on one side, the second on the other.
    train_in(&gpu, &out("gpu-host"), false, Some(1));
    train_in(&host, &out("gpu-host"), true, None);
    train_in(&host, &out("host-gpu"), false, Some(1));
    train_in(&gpu, &out("host-gpu"), true, None);

    let mut failures = Vec::new();
    let v1 = rel2(&gpu_v1, &host_v1);
    println!("momenta after epoch 1, device against host: {v1:.2e} (norm)");
    if gpu_v1.len() != host_v1.len() || v1 >= 2e-2 {
        failures.push(format!("epoch-1 momenta differ by {v1:.3e}"));
    }
    let losses = |name: &str| -> Vec<f64> {
        let rows: Vec<EpochMetrics> = read_csv(&out(name).join("metrics.csv")).unwrap();
        rows.iter()
            .map(|r| r.test_loss.expect("evaluated"))
            .collect()
    };
    for (moved, stayed) in [
        ("gpu-host", "host"),
        ("gpu-host", "gpu"),
        ("host-gpu", "gpu"),
        ("host-gpu", "host"),
    ] {
        let v = rel2(&velocity_at(&out(moved), 2), &velocity_at(&out(stayed), 2));
        let (a, b) = (losses(moved), losses(stayed));
        let l = a
            .iter()
            .zip(&b)
            .map(|(x, y)| (x - y).abs() / y.abs())
            .fold(0.0f64, f64::max);
        println!("{moved} against {stayed}: momenta {v:.2e} (norm), test losses {l:.2e}");
        if a.len() != 2 || b.len() != 2 || v >= 2e-2 || l >= 1e-3 {
            failures.push(format!(
                "{moved} against {stayed}: momenta {v:.3e}, test losses {a:?} against {b:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
