//! The probe benchmark: seconds, achieved GFLOP/s and the floor of the structured NTK for
//! synthetic data, with the eigensolver timed separately.
//!
//! Work of the structured kernel (dense, scalar output, n samples, input d, width m,
//! depth L, staircase fraction `s` of the n^2 entries actually computed):
//! - forward: `2 n (d m + (L-1) m^2 + m)`;
//! - backward signals: `2 n (L-1) m^2`;
//! - Gram products: `2 s n^2 (d + L m)` for the layer inputs and `2 s n^2 L m` for the
//!   signals, plus `~3 L s n^2` for the elementwise products and sums.

use std::time::Instant;

use ntk_model::{ActivationKind, Mlp, MlpConfig};
use serde::Serialize;

use burn::tensor::Tensor;

use crate::config::{Eigen, Method};
use ntk_data::inputs::Inputs;
use ntk_kernel::structured;
use ntk_numerics::backend::Compute;
use ntk_numerics::bench::{best_of, peak_gflops};
use ntk_numerics::kernel::OutputMode;

/// The fraction of the n^2 kernel entries the staircase computes for a given block size.
pub fn staircase_fraction(n: usize, block: usize) -> f64 {
    let mut entries = 0usize;
    for start in (0..n).step_by(block) {
        entries += block.min(n - start) * (n - start);
    }
    entries as f64 / (n * n) as f64
}

/// FLOPs of the structured NTK (see the module doc).
pub fn structured_flops(n: usize, d: usize, m: usize, depth: usize, fraction: f64) -> f64 {
    let (n, d, m, l) = (n as f64, d as f64, m as f64, depth as f64);
    if depth == 0 {
        return 2.0 * n * d + fraction * n * n * 2.0 * d;
    }
    let forward = 2.0 * n * (d * m + (l - 1.0) * m * m + m);
    let backward = 2.0 * n * (l - 1.0) * m * m;
    let grams = 2.0 * fraction * n * n * (d + 2.0 * l * m);
    let elementwise = 3.0 * l * fraction * n * n;
    forward + backward + grams + elementwise
}

#[derive(Clone, Debug, Serialize)]
pub struct BenchRow {
    pub n: usize,
    pub d: usize,
    pub width: usize,
    pub depth: usize,
    pub precision: String,
    pub backend: ntk_numerics::backend::Backend,
    pub engine: String,
    pub gflop: f64,
    /// Forming the kernel, best of the repeats (synchronized with the device).
    pub seconds: f64,
    pub gflops_per_s: f64,
    /// Seconds at this CPU's peak ([`peak_gflops`]); `null` on GPU backends.
    pub floor_seconds: Option<f64>,
    /// `full` (every eigenvalue: LAPACK on the host, or cuSOLVER's `syevd`) or `extreme`
    /// (Cholesky and Lanczos on the device, or cuSOLVER and cuBLAS).
    pub eigen: String,
    /// The eigenvalues' seconds, once, the kernel's trip to the solver included, after a
    /// warm-up of the solver (`crate::solver::warm_up`: cuSOLVER's context and handles).
    pub eigen_seconds: f64,
    pub lambda_min: f64,
    pub lambda_max: f64,
    /// `null` when the kernel is numerically singular.
    pub kappa: Option<f64>,
    pub singular: bool,
    /// The interval of κ the worst-case bound `n eps λ_max` of an f32 kernel allows (Weyl:
    /// [`crate::blocks::kappa_interval`]), as the probe's summaries give it: `kappa_low`
    /// absent where the bound leaves no positive least κ, `kappa_high` where it does not
    /// resolve `λ_min` (unbounded). Both absent for f64, whose bound is far below λ_min at
    /// these sizes (ninety-fourth hostile round, N9: an f32 κ the bound allowed 13% off was
    /// printed bare).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kappa_low: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kappa_high: Option<f64>,
    /// Lanczos steps for lambda_max and lambda_min (`extreme`; `null` for `full`).
    pub lanczos_steps: Option<[usize; 2]>,
}

/// Refuses a benchmark row whose memory would exceed the limit (`max_memory`, else
/// `NTK_MAX_MEMORY`, else what the system allows: [`ntk_runs::budget::limit`]) before any
/// work, as every other command does: the estimate is a probe's of the same network on as
/// many synthetic samples ([`crate::run::memory_estimate`]), and the message names the
/// bench's flags.
pub fn check_memory(
    row: &BenchSize,
    precision: ntk_numerics::backend::Precision,
    eigen: Eigen,
    max_memory: Option<&str>,
) -> crate::Result<()> {
    let mut cfg = crate::config::ProbeConfig::parse(&format!(
        "[data]\ndataset = \"synthetic\"\nn = {}\ninput_dim = {}\n\n[model]\nwidth = {}\n\
         depth = {}\nactivation = \"relu\"\n",
        row.n, row.d, row.width, row.depth
    ))?;
    cfg.probe.precision = precision;
    cfg.probe.eigen = eigen;
    cfg.probe.method = Method::Structured;
    let culprit = format!(
        "--n {} --input-dim {} --width {} --depth {} ({precision})",
        row.n, row.d, row.width, row.depth
    );
    Ok(
        crate::run::memory_estimate(&cfg, row.d, ntk_kernel::host::Reuse::OneKernel)?
            .check(&culprit, max_memory)?,
    )
}

/// The sizes of one benchmark row: samples, input dimension, width and depth.
#[derive(Clone, Copy, Debug)]
pub struct BenchSize {
    pub n: usize,
    pub d: usize,
    pub width: usize,
    pub depth: usize,
}

/// Times the structured NTK (best of `repeats`, after one warm-up) and its eigenvalues:
/// `Full` on the host (the kernel read back), `Extreme` on the compute device, where a GPU
/// backend's kernel then stays (formed whole by [`structured::ntk_tensor`]).
pub fn bench_one(
    compute: &Compute,
    n: usize,
    d: usize,
    width: usize,
    depth: usize,
    repeats: usize,
    eigen: Eigen,
) -> crate::Result<BenchRow> {
    let cfg = MlpConfig::new(d, width, depth, ActivationKind::Relu).with_seed(1);
    let mlp = Mlp::new(&cfg, &compute.device, compute.dtype())?;
    let samples = ntk_data::gaussian(n, d, 0);
    let inputs = Inputs::from_samples(&samples, "synthetic".into());
    let t = if eigen == Eigen::Extreme && !compute.on_host() {
        Timed::on_device(&mlp, &inputs, compute, repeats)?
    } else {
        Timed::as_probed(&mlp, &inputs, compute, repeats, eigen)?
    };
    let gflop = structured_flops(n, d, width, depth, t.fraction) / 1e9;
    let (kappa_low, kappa_high) = match compute.precision {
        ntk_numerics::backend::Precision::F32 => {
            let bound = n as f64 * compute.precision.epsilon() * t.cond.lambda_max.abs();
            crate::blocks::kappa_interval(t.cond.lambda_min, t.cond.lambda_max, bound)
        }
        ntk_numerics::backend::Precision::F64 => (None, None),
    };
    Ok(BenchRow {
        n,
        d,
        width,
        depth,
        precision: compute.precision.to_string(),
        backend: compute.backend,
        engine: t.engine,
        gflop,
        seconds: t.best,
        gflops_per_s: gflop / t.best,
        floor_seconds: compute
            .on_host()
            .then(|| gflop / peak_gflops(compute.precision)),
        eigen: eigen.name().to_string(),
        eigen_seconds: t.eigen_seconds,
        lambda_min: t.cond.lambda_min,
        lambda_max: t.cond.lambda_max,
        kappa: t.cond.kappa,
        singular: t.cond.singular,
        kappa_low,
        kappa_high,
        lanczos_steps: t.steps,
    })
}

/// One benchmark's measurements: the kernel's best time, its conditioning and the
/// eigenvalues' time, the engine, and the fraction of the `n^2` entries it computed.
struct Timed {
    best: f64,
    cond: ntk_numerics::spectrum::Summary,
    steps: Option<[usize; 2]>,
    eigen_seconds: f64,
    engine: String,
    fraction: f64,
}

impl Timed {
    /// The kernel formed whole on the device and kept there (synchronized), then
    /// `lambda_min`, `lambda_max` and kappa on the device.
    fn on_device(
        mlp: &Mlp,
        inputs: &Inputs,
        compute: &Compute,
        repeats: usize,
    ) -> crate::Result<Self> {
        let once = || -> crate::Result<Tensor<2>> {
            let x = ntk_kernel::compute::to_tensor(inputs, compute);
            let t = structured::ntk_tensor(mlp, x, OutputMode::Sum)?;
            compute
                .device
                .sync()
                .map_err(|e| crate::Error::Device(format!("{e:?}")))?;
            Ok(t)
        };
        let (t, best) = best_of(repeats, once)?;
        crate::solver::warm_up(compute)?;
        let s = Instant::now();
        let e = crate::solver::extreme_of_tensor(t, compute, compute.precision.epsilon())?;
        Ok(Self {
            best,
            cond: e.summary(),
            steps: Some(e.steps),
            eigen_seconds: s.elapsed().as_secs_f64(),
            engine: "device".to_string(),
            fraction: 1.0,
        })
    }

    /// The kernel as the probe computes it (host engine on CPUs), then its eigenvalues by
    /// `eigen`.
    fn as_probed(
        mlp: &Mlp,
        inputs: &Inputs,
        compute: &Compute,
        repeats: usize,
        eigen: Eigen,
    ) -> crate::Result<Self> {
        let once = || {
            ntk_kernel::compute::compute_kernel(
                mlp,
                inputs,
                compute,
                Method::Structured,
                OutputMode::Sum,
            )
        };
        let (result, best) = best_of(repeats, once)?;
        crate::solver::warm_up(compute)?;
        let s = Instant::now();
        let eps = compute.precision.epsilon();
        let (cond, steps) = match eigen {
            Eigen::Full => {
                let spec = crate::solver::full(&result.kernel, compute, eps)?;
                (spec.summary(), None)
            }
            Eigen::Extreme => {
                let e = crate::solver::extreme(&result.kernel, compute, eps)?;
                (e.summary(), Some(e.steps))
            }
            Eigen::Tiled => {
                return Err(crate::Error::Config {
                    key: "--eigen",
                    value: "tiled".into(),
                    reason: "not timed by bench (it never forms the dense kernel bench times): \
                             crates/ntk-probe/examples/tiled_kappa.rs times it"
                        .into(),
                });
            }
        };
        let n = inputs.n;
        // The host engine computes exactly the lower triangle; the Burn route (device) the
        // staircase.
        let fraction = if result.route == ntk_kernel::compute::Route::Host {
            (n * (n + 1) / 2) as f64 / (n * n) as f64
        } else {
            staircase_fraction(n, structured::block_rows(n))
        };
        Ok(Self {
            best,
            cond,
            steps,
            eigen_seconds: s.elapsed().as_secs_f64(),
            engine: ntk_names::spelled(&result.route),
            fraction,
        })
    }
}
