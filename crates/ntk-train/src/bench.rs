//! Training throughput: SGD steps per second of an MLP on random data, with the FLOP count
//! and the floor it implies (`ntk-train bench`).
//!
//! Work per sample of an MLP with layer sizes `m_0 .. m_{L+1}`: the forward is
//! `2 sum_l m_l m_{l+1}` FLOPs; the backward computes the weight gradients (the same again)
//! and the input gradients of every layer but the first (the same less the first layer);
//! so a step is about `3x` the forward, `(6 sum_l m_l m_{l+1} - 2 m_0 m_1)` per sample.
//! Elementwise work (activations, loss, the SGD update) is lower order and not counted.
//!
//! A CIFAR ResNet's convolutions: a 3x3 convolution from `c_in` to `c_out` channels on an
//! `s x s` output map is `9 c_in c_out s^2` multiply-adds; the step is again about three
//! forwards, `6 MACs` FLOPs per sample (BatchNorm, pooling and the shortcuts are lower
//! order).

use std::time::Instant;

use ntk_engine::{Batch, Engine};
use ntk_model::{Activation, MlpConfig, ResNetConfig};
use ntk_numerics::backend::{Compute, Fp32Precision};
use rand::{Rng, SeedableRng};
use serde::Serialize;

use crate::config::EngineChoice;
use ntk_model::NetSpec;

/// One benchmark result.
#[derive(Clone, Debug, Serialize)]
pub struct Throughput {
    pub model: String,
    pub backend: ntk_numerics::backend::Backend,
    pub precision: String,
    /// `host` (`ntk_engine::host`), `burn`, or the cuDNN engine's `cuDNN on <GPU>`.
    pub engine: String,
    pub input_dim: usize,
    pub batch: usize,
    pub steps: usize,
    pub seconds_per_step: f64,
    pub samples_per_second: f64,
    pub gflop_per_step: f64,
    pub gflops: f64,
    /// Seconds per step at this CPU's peak (`peak_gflops`); `null` on GPU backends, whose
    /// peak this tool does not know.
    pub floor_seconds_per_step: Option<f64>,
}

/// FLOPs of one SGD step (forward and backward) of the MLP on `batch` samples.
pub fn step_flops(sizes: &[usize], batch: usize) -> f64 {
    let macs: usize = sizes.windows(2).map(|w| w[0] * w[1]).sum();
    batch as f64 * (6.0 * macs as f64 - 2.0 * (sizes[0] * sizes[1]) as f64)
}

/// Multiply-adds of one forward of a CIFAR ResNet on one image.
pub fn resnet_macs(r: &ResNetConfig) -> f64 {
    let s0 = r.image_size as f64;
    let conv = |cin: usize, cout: usize, s: f64| 9.0 * (cin * cout) as f64 * s * s;
    let mut macs = conv(r.in_channels, r.stage_width(0), s0);
    for stage in 0..3 {
        let s = s0 / f64::from(1u32 << stage);
        let w = r.stage_width(stage);
        for b in 0..r.blocks_per_stage() {
            let cin = if b == 0 && stage > 0 {
                r.stage_width(stage - 1)
            } else {
                w
            };
            macs += conv(cin, w, s) + conv(w, w, s);
        }
    }
    macs + (r.feature_width() * r.num_classes) as f64
}

/// FLOPs of one SGD step of `spec` on `batch` samples of `input_dim` values (of an ONNX
/// graph, the dense rule: a floor where weights are shared).
pub fn spec_step_flops(spec: &NetSpec, input_dim: usize, batch: usize) -> f64 {
    match spec {
        NetSpec::Mlp(m) => {
            let cfg = MlpConfig {
                input_dim,
                ..m.clone()
            };
            step_flops(&cfg.layer_sizes(), batch)
        }
        NetSpec::ResNet(r) => 6.0 * resnet_macs(r) * batch as f64,
        // A dense graph's rule (each parameter one multiply-add forward, two backward); a
        // convolution's weights are used more often than that, so a floor for those.
        NetSpec::Onnx(o) => 6.0 * o.file.parameters() as f64 * batch as f64,
    }
}

/// The MLP `ntk-train bench` times: `depth` hidden layers of `width` with `activation`
/// (ReLU by default), 10 classes.
pub fn mlp_spec(input_dim: usize, width: usize, depth: usize, activation: Activation) -> NetSpec {
    NetSpec::Mlp(MlpConfig {
        output_dim: 10,
        activation_param: activation.param(),
        ..MlpConfig::new(input_dim, width, depth, activation.kind())
    })
}

/// Refuses a benchmark that cannot fit in memory (`ntk_runs::budget`), before anything is
/// allocated; `max_memory` is `--max-memory` (else the machine's limit).
pub fn check_memory(
    compute: &Compute,
    spec: &NetSpec,
    input_dim: usize,
    batch: usize,
    max_memory: Option<&str>,
) -> crate::Result<()> {
    let elem = compute.dtype().size() as f64;
    let mut need = crate::budget::network_estimate(spec, input_dim, batch, elem);
    need.add("the batch", batch as f64 * input_dim as f64, 4.0);
    // The flags that set the size: a ResNet's input and width are fixed (3x32x32, 16),
    // which the flags --input-dim and --width do not set (fourteenth hostile round, D1).
    let culprit = match spec {
        NetSpec::ResNet(_) => format!("{}, --batch {batch}", spec.describe()),
        _ => format!(
            "{} (--width {}), --batch {batch}, --input-dim {input_dim}",
            spec.describe(),
            spec.width()
        ),
    };
    need.check(&culprit, max_memory)?;
    Ok(())
}

/// Times `steps` SGD steps (after two warm-up steps) of `spec` on random inputs of
/// `input_dim` values with 10 classes, computed by `engine` (its f32 products rounded as
/// `fp32` says: `tf32` for the cuDNN engine only).
pub fn step(
    compute: &Compute,
    spec: &NetSpec,
    (engine, fp32): (EngineChoice, Fp32Precision),
    input_dim: usize,
    batch: usize,
    steps: usize,
    peak_gflops: f64,
) -> crate::Result<Throughput> {
    let model = spec.build(input_dim, &compute.device, compute.dtype())?;
    let sgd = ntk_engine::Sgd::new(0.9, 0.0);
    let setup = ntk_engine::Setup {
        sgd: &sgd,
        loss: ntk_engine::Loss::CrossEntropy,
        compute,
        batch,
        fp32,
    };
    let mut stepper = ntk_engine::choose(engine, model, &setup)?;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
    let x: Vec<f64> = (0..batch * input_dim)
        .map(|_| f64::from(rng.random_range(-1.0f32..1.0)))
        .collect();
    let labels: Vec<usize> = (0..batch).map(|_| rng.random_range(0..10)).collect();
    // One step of the run's loop: the batch handed over (a copy of its values, under 1% of
    // a step), the step, and the engine's device error if any. A diverged step is timed too.
    let cudnn = stepper.engine() == Engine::Cudnn;
    let mut run = || -> crate::Result<()> {
        let batch = Batch {
            x: x.clone(),
            d: input_dim,
            labels: labels.clone(),
        };
        stepper.step(batch, 0.01);
        stepper.failure().map_or(Ok(()), |e| Err(e.into()))
    };
    // Warm-up: the cuDNN engine's first step runs eagerly and its second captures the graph.
    let warm = if cudnn { 3 } else { 2 };
    for _ in 0..warm {
        run()?;
    }
    let t = Instant::now();
    for _ in 0..steps {
        run()?;
    }
    let seconds = t.elapsed().as_secs_f64() / steps as f64;
    let flops = spec_step_flops(spec, input_dim, batch);
    let host = !cudnn;
    let mut r = Throughput {
        model: spec.describe(),
        backend: compute.backend,
        precision: compute.precision.to_string(),
        // As earlier rows name them: `host`, `burn`, or the cuDNN engine's GPU.
        engine: match stepper.engine() {
            Engine::Cudnn => stepper.method().to_string(),
            e => e.name().to_string(),
        },
        input_dim,
        batch,
        steps,
        seconds_per_step: seconds,
        samples_per_second: batch as f64 / seconds,
        gflop_per_step: flops / 1e9,
        gflops: flops / 1e9 / seconds,
        floor_seconds_per_step: (host && compute.on_host()).then(|| flops / 1e9 / peak_gflops),
    };
    if fp32 == Fp32Precision::Tf32 {
        // As PyTorch's side writes it (experiments/bench/gpu/torch_resnets.py).
        r.precision = fp32.name().to_string();
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    #[test]
    fn flop_count_of_the_fig3_network() {
        // 784-512x10-10: 2,765,824 multiply-adds per sample.
        let mut sizes = vec![784];
        sizes.extend([512; 10]);
        sizes.push(10);
        let f = super::step_flops(&sizes, 500);
        assert_eq!(f, 500.0 * (6.0 * 2_765_824.0 - 2.0 * 401_408.0));
    }

    #[test]
    fn resnet_macs_match_the_known_counts() {
        use ntk_model::{ResNetConfig, ResNetVariant};
        // ResNet-20 on CIFAR: about 41 M multiply-adds per image (the usual figure, e.g.
        // 40.8 M counted by ptflops for the option-A network); ResNet-110: about 253 M.
        let m20 = super::resnet_macs(&ResNetConfig::new(20, ResNetVariant::BatchNorm));
        let m110 = super::resnet_macs(&ResNetConfig::new(110, ResNetVariant::BatchNorm));
        assert!((m20 / 1e6 - 40.6).abs() < 0.5, "{m20}");
        assert!((m110 / 1e6 - 252.9).abs() < 1.0, "{m110}");
    }
}
