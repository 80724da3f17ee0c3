//! The structured NTK equals K = F F^T from Burn's autodiff per-sample gradients.

use crate::common::*;
use burn::module::Module;
use ntk_kernel::jacobian::per_sample_jacobian;
use ntk_kernel::{host, structured};
use ntk_model::{ActivationKind, MlpConfig, NtkConvention};
use ntk_numerics::backend::Precision;
use ntk_numerics::kernel::{Kernel, OutputMode};

fn reference(cfg: &MlpConfig, x: &[f64], n: usize, p: Precision, mode: OutputMode) -> Kernel {
    let c = compute(p);
    let model = mlp(cfg, &c);
    let ad = c.device.clone().autodiff();
    let model = model.fork(&ad).train();
    let xt = tensor(x, n, cfg.input_dim, &c).to_device(&ad);
    per_sample_jacobian(&model, |m, x| m.forward(x), &xt, mode).ntk(mode)
}

fn fast(cfg: &MlpConfig, x: &[f64], n: usize, p: Precision, mode: OutputMode) -> Kernel {
    let c = compute(p);
    structured::ntk(&mlp(cfg, &c), tensor(x, n, cfg.input_dim, &c), mode)
}

/// Float32: both routes round differently; with widths of 16 and depth <= 4 the sums are
/// short (at most ~100 terms of similar size), so the relative difference stays near
/// 10 eps_f32 ~ 1e-6, well below the 1e-5 bound. Float64: the same argument gives ~1e-14,
/// bound 1e-10.
#[test]
fn structured_equals_autodiff_for_every_activation_depth_and_bias() {
    let (n, d, m) = (6, 4, 16);
    let x = gaussian_inputs(n, d, 1);
    for kind in [
        ActivationKind::Relu,
        ActivationKind::Linear,
        ActivationKind::NormRelu,
        ActivationKind::Gelu,
        ActivationKind::Tanh,
    ] {
        for depth in 0..=4 {
            for bias in [false, true] {
                for (p, bound) in [(Precision::F32, 1e-5), (Precision::F64, 1e-10)] {
                    let cfg = MlpConfig::new(d, m, depth, kind)
                        .with_seed(depth as u64 + 7)
                        .with_bias(bias);
                    let b = reference(&cfg, &x, n, p, OutputMode::Sum);
                    let device = fast(&cfg, &x, n, p, OutputMode::Sum);
                    let model = mlp(&cfg, &compute(p));
                    let on_host = match p {
                        Precision::F32 => host::ntk::<f32>(&model, &x, n, &[0]),
                        Precision::F64 => host::ntk::<f64>(&model, &x, n, &[0]),
                    };
                    for (engine, a) in [("device", device), ("host", on_host)] {
                        let err = a.relative_error(&b);
                        assert!(
                            err < bound,
                            "{kind} depth {depth} bias {bias} {p} {engine}: relative error {err:e}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn multi_output_modes_agree() {
    let (n, d, m, k) = (5, 3, 12, 3);
    let x = gaussian_inputs(n, d, 2);
    // Tanh takes the general path; the identity the linear networks' form (host::linear).
    for act in [ActivationKind::Tanh, ActivationKind::Linear] {
        for convention in [
            NtkConvention::Paper,
            NtkConvention::Official,
            NtkConvention::UnitVariance,
        ] {
            let cfg = MlpConfig::new(d, m, 2, act)
                .with_output_dim(k)
                .with_bias(true)
                .with_convention(convention)
                .with_seed(3);
            for mode in [OutputMode::Sum, OutputMode::Single(1), OutputMode::Full] {
                let a = fast(&cfg, &x, n, Precision::F64, mode);
                let b = reference(&cfg, &x, n, Precision::F64, mode);
                assert_eq!(a.size, if mode == OutputMode::Full { n * k } else { n });
                let err = a.relative_error(&b);
                assert!(err < 1e-10, "{act:?} {convention:?} {mode:?}: {err:e}");
            }
            // The host engine: the sum over outputs and a single output.
            let model = mlp(&cfg, &compute(Precision::F64));
            let sum_host = host::ntk::<f64>(&model, &x, n, &[0, 1, 2]);
            let one_host = host::ntk::<f64>(&model, &x, n, &[1]);
            let sum_ref = reference(&cfg, &x, n, Precision::F64, OutputMode::Sum);
            let one_ref = reference(&cfg, &x, n, Precision::F64, OutputMode::Single(1));
            assert!(sum_host.relative_error(&sum_ref) < 1e-10);
            assert!(one_host.relative_error(&one_ref) < 1e-10);
            // The sum over outputs is the trace of the full kernel's output blocks.
            let full = fast(&cfg, &x, n, Precision::F64, OutputMode::Full);
            let sum = fast(&cfg, &x, n, Precision::F64, OutputMode::Sum);
            for i in 0..n {
                for j in 0..n {
                    let t: f64 = (0..k).map(|o| full.get(i * k + o, j * k + o)).sum();
                    assert!((t - sum.get(i, j)).abs() < 1e-10 * sum.get(i, i).abs());
                }
            }
        }
    }
}

#[test]
fn row_blocks_cover_the_kernel_exactly() {
    // n above the minimum block size exercises several row blocks and the mirroring.
    let (n, d) = (150, 3);
    let x = gaussian_inputs(n, d, 3);
    let cfg = MlpConfig::new(d, 8, 2, ActivationKind::Relu).with_seed(1);
    let c = compute(Precision::F64);
    let model = mlp(&cfg, &c);
    let blocked = structured::ntk(&model, tensor(&x, n, d, &c), OutputMode::Sum);
    // Dense reference from the same factors, one product per layer.
    let f = structured::factors(&model, tensor(&x, n, d, &c), &[0]);
    let mut dense = vec![0.0; n * n];
    let gram = |t: &burn::tensor::Tensor<2>| -> Vec<f64> {
        t.clone()
            .matmul(t.clone().transpose())
            .try_into_vec_as()
            .unwrap()
    };
    for l in 0..2 {
        let (g, h) = (gram(&f.inputs[l]), gram(&f.deltas[0][l]));
        for e in 0..n * n {
            dense[e] += f.beta[l] * f.beta[l] * g[e] * h[e];
        }
    }
    let g = gram(&f.inputs[2]);
    for e in 0..n * n {
        dense[e] += f.beta_out * f.beta_out * g[e];
    }
    let dense = Kernel {
        size: n,
        data: dense,
    };
    assert!(blocked.relative_error(&dense) < 1e-13);
}

/// The kernel of `model` on the row-major `n x d` inputs `x` from autodiff's per-sample
/// gradients (f64): the reference of the host routes at extreme scales.
fn autodiff_kernel(model: &ntk_model::Mlp, x: &[f64], n: usize, d: usize) -> Kernel {
    autodiff_kernel_of(model, x, (n, d), OutputMode::Sum)
}

/// [`autodiff_kernel`] of the outputs `mode` selects.
fn autodiff_kernel_of(
    model: &ntk_model::Mlp,
    x: &[f64],
    (n, d): (usize, usize),
    mode: OutputMode,
) -> Kernel {
    let c = compute(Precision::F64);
    let ad = c.device.clone().autodiff();
    let xt = tensor(x, n, d, &c).to_device(&ad);
    per_sample_jacobian(
        &model.clone().fork(&ad).train(),
        |m, x| m.forward(x),
        &xt,
        mode,
    )
    .ntk(mode)
}

/// The device route's kernel (Burn's structured kernel, here on flex) of `model` on `x`.
fn device_kernel(
    model: &ntk_model::Mlp,
    x: &[f64],
    (n, d): (usize, usize),
    mode: OutputMode,
) -> Kernel {
    let c = compute(Precision::F64);
    structured::ntk(model, tensor(x, n, d, &c), mode)
}

/// The range check's diagonal of `model` on `x`, formed as the structured routes form it
/// and as autodiff does (per output where `per_output`).
fn range_diagonals(
    model: &ntk_model::Mlp,
    x: &[f64],
    n: usize,
    (outputs, per_output): (&[usize], bool),
) -> [Vec<Vec<f64>>; 2] {
    use host::diagonal::{Formed, diagonals};
    [Formed::InPrecision, Formed::FromGradients]
        .map(|formed| diagonals::<f64>(model, (x, n), outputs, per_output, formed))
}

/// The MLP of `cfg` (f64, flex) with its weights `rule(name, entry)`.
fn with_weights(cfg: &MlpConfig, rule: impl Fn(&str, usize) -> f64) -> ntk_model::Mlp {
    use ntk_model::export::Named;
    let c = compute(Precision::F64);
    let mut get = |name: &str, shape: &[usize]| -> Result<Vec<f64>, ntk_model::ModelError> {
        let count: usize = shape.iter().product();
        Ok((0..count).map(|e| rule(name, e)).collect())
    };
    let ntk_model::Net::Mlp(model) = ntk_model::Net::Mlp(mlp(cfg, &c))
        .with_tensors(&mut get)
        .unwrap()
    else {
        unreachable!()
    };
    model
}

/// Every route of `model` on `x` (one output) against autodiff's kernel, entry by entry to
/// `1e-12` of the largest entry of its row and column: the host route, the tiles and the
/// tiled diagonal, the device route (summed, and full: one output's is the same kernel), and
/// the range check's diagonals (structured and autodiff).
fn every_route_is_autodiff_s(model: &ntk_model::Mlp, x: &[f64], (n, d): (usize, usize)) {
    let reference = autodiff_kernel(model, x, n, d);
    // Far factors: cuSOLVER's tiled route, which forms them as they are, gives way to the
    // host's tiles here.
    assert!(host::tiles::TileSource::new(model, x, n, &[0]).far());
    let near = |route: &str, i: usize, j: usize, v: f64| {
        let want = reference.data[i * n + j];
        let scale = reference.data[i * n + i].sqrt().max(f64::MIN_POSITIVE)
            * reference.data[j * n + j].sqrt();
        assert!(
            (v - want).abs() <= 1e-12 * scale.max(want.abs()),
            "{route} K({i}, {j}) = {v:e} against {want:e}"
        );
    };
    let on_host = host::ntk::<f64>(model, x, n, &[0]);
    let (tiled, along) = tiled_kernel(model, x, n);
    let summed = device_kernel(model, x, (n, d), OutputMode::Sum);
    let full = device_kernel(model, x, (n, d), OutputMode::Full);
    for (route, k) in [
        ("host", &on_host),
        ("tiles", &tiled),
        ("device", &summed),
        ("device full", &full),
    ] {
        for i in 0..n {
            for j in 0..n {
                near(route, i, j, k.data[i * n + j]);
            }
        }
    }
    let [structured, gradients] = range_diagonals(model, x, n, (&[0], false));
    for i in 0..n {
        near("tiled diagonal", i, i, along[i]);
        near("range check (structured)", i, i, structured[i][0]);
        near("range check (autodiff)", i, i, gradients[i][0]);
    }
}

/// The tiled route's kernel of `model` on `x` (one tile) and its diagonal.
fn tiled_kernel(model: &ntk_model::Mlp, x: &[f64], n: usize) -> (Kernel, Vec<f64>) {
    let src = host::tiles::TileSource::new(model, x, n, &[0]);
    let mut tile = faer::Mat::<f64>::zeros(n, n);
    src.fill(0..n, 0..n, tile.as_mut());
    let kernel = Kernel {
        size: n,
        data: (0..n * n).map(|e| tile[(e / n, e % n)]).collect(),
    };
    (kernel, src.diagonal())
}

/// The hundred-and-twentieth hostile round, D4: first-layer weights of 1e-168 and a readout of
/// 1e-163 on inputs of 1e153: the first layer's backward signal |delta|^2 = 1e-326 underflows
/// while its term |x|^2 |delta|^2 (about 7e-20) is normal. The host route formed each Gram as
/// it is and lost the term (K 6.3e9 times too small, kappa 8.3e4 against 8462.6); each factor
/// far from unit scale now forms its Gram at a power of two. Autodiff's per-sample gradients
/// (each entry about 1e-10) are the reference.
#[test]
fn a_term_whose_factor_underflows_is_kept() {
    let (n, d) = (3, 3);
    let (model, x) = signal_below_the_range(1);
    let reference = autodiff_kernel(&model, &x, n, d);
    assert!(reference.data[0] > 1e-21, "{:e}", reference.data[0]);
    every_route_is_autodiff_s(&model, &x, (n, d));
}

/// Round 120's D4 network with `outputs` outputs (output `o`'s readout row `1e-163 (1 +
/// o / 2)`) and its 3 inputs of about 1e153: the first layer's `|delta|^2` about 1e-326.
fn signal_below_the_range(outputs: usize) -> (ntk_model::Mlp, Vec<f64>) {
    let cfg = MlpConfig::new(3, 16, 1, ActivationKind::Relu)
        .with_seed(1)
        .with_bias(false)
        .with_output_dim(outputs);
    let model = with_weights(&cfg, |name, e| match name {
        "layers.0.weight" => 1e-168 * (1.0 + 0.1 * (e % 7) as f64),
        _ => 1e-163 * (1.0 + 0.5 * (e / 16) as f64),
    });
    let x = (0..9)
        .map(|i| (0.5 + 0.1 * (i % 5) as f64) * 1e153)
        .collect();
    (model, x)
}

/// The hundred-and-twenty-first hostile round, D1: the first fix scaled a factor by one power
/// of two for all rows, its largest row's, and a row far below it (2^-250 beside 2^300) lost
/// its own terms (least angle 0 where it is 1.46 deg). Each row is at its own power of two
/// now: every diagonal entry equals autodiff's, each to its own relative precision.
#[test]
fn rows_of_far_apart_scales_keep_their_own_terms() {
    let (n, d) = (3, 4);
    let cfg = MlpConfig::new(d, 16, 2, ActivationKind::Relu)
        .with_seed(3)
        .with_bias(false);
    let c = compute(Precision::F64);
    let model = mlp(&cfg, &c);
    let base = gaussian_inputs(n, d, 2);
    assert!(!host::tiles::TileSource::new(&model, &base, n, &[0]).far());
    let scales = [2f64.powi(300), 2f64.powi(-250), 1.0];
    let x: Vec<f64> = (0..n * d).map(|i| base[i] * scales[i / d]).collect();
    every_route_is_autodiff_s(&model, &x, (n, d));
}

/// The hundred-and-twenty-second hostile round: (D1) with `probe.output = "full"` the CPU
/// takes the device route (Burn's structured kernel), which formed its Grams unscaled and lost
/// round 120's D4 term; two outputs' full kernel equals autodiff's, block by block. (D2) The
/// range check formed `|a|^2` unscaled: a hidden layer's inputs of 1e160 (`|a|^2` past f64)
/// beside signals of 1e-165 (`|delta|^2` about 1e-330), a kernel of about 4e-9, were refused
/// as not finite on every route; every route and the check now keep it.
#[test]
fn a_square_norm_past_the_range_is_no_overflow_on_any_route() {
    let (n, d) = (3, 4);
    let cfg = MlpConfig::new(d, 16, 2, ActivationKind::Relu)
        .with_seed(7)
        .with_bias(false);
    let pattern = |e: usize| 0.5 + 0.1 * (e % 7) as f64;
    let model = with_weights(&cfg, |name, e| match name {
        "layers.0.weight" => 1e160 * pattern(e),
        "layers.1.weight" => 1e-170 * pattern(e + 3),
        _ => 1e-165 * (pattern(e) - 0.8),
    });
    let x: Vec<f64> = (0..n * d).map(|i| pattern(i * 5 + 1)).collect();
    let reference = autodiff_kernel(&model, &x, n, d);
    assert!(
        reference.data[0] > 1e-12 && reference.data[0] < 1e-6,
        "{:e}",
        reference.data[0]
    );
    every_route_is_autodiff_s(&model, &x, (n, d));

    // Two outputs, full: round 120's D4 network (inputs of 1e153, |delta|^2 about 1e-326).
    let (model, x) = signal_below_the_range(2);
    let reference = autodiff_kernel_of(&model, &x, (3, 3), OutputMode::Full);
    let full = device_kernel(&model, &x, (3, 3), OutputMode::Full);
    assert!(reference.data[0] > 1e-21, "{:e}", reference.data[0]);
    let err = full.relative_error(&reference);
    assert!(err < 1e-12, "full: relative error {err:e}: {:?}", full.data);
    let [structured, gradients] = range_diagonals(&model, &x, 3, (&[0, 1], true));
    for i in 0..3 {
        for o in 0..2 {
            let want = reference.data[(i * 2 + o) * 6 + i * 2 + o];
            for (how, v) in [
                ("structured", structured[i][o]),
                ("autodiff", gradients[i][o]),
            ] {
                assert!(
                    ((v - want) / want).abs() < 1e-12,
                    "{how} K_{o}({i}, {i}) = {v:e} against {want:e}"
                );
            }
        }
    }
}
