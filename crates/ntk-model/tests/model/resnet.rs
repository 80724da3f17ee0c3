//! The CIFAR ResNets: parameter counts against He et al., Fixup's identity at init, NormReLU's
//! unit scale through ResNet-110, shapes and layouts, determinism, config errors, and
//! BatchNorm's evaluation mode. On the default CPU device (flex).

use burn::module::{Module, ModuleVisitor, Param};
use burn::tensor::{DType, Device, Tensor, TensorData};
use ntk_model::resnet::Block;
use ntk_model::resnet::layers::{self, border_gain, taps_inside};
use ntk_model::{
    Activation, ActivationKind, Mlp, MlpConfig, ModelError, Net, ResNet, ResNetConfig,
    ResNetVariant, init, normal,
};

fn device() -> Device {
    Device::flex()
}

/// `[b, c, s, s]` i.i.d. N(0, 1) pixels (unit mean square, like per-channel standardized
/// CIFAR), from stream 0 of `seed`.
fn images(b: usize, c: usize, s: usize, seed: u64, device: &Device, dtype: DType) -> Tensor<4> {
    let x = init::gaussian(seed, 0, b, c * s * s, 1.0);
    Tensor::from_data(TensorData::new(x, [b, c, s, s]), (device, dtype))
}

fn to_vec<const D: usize>(t: Tensor<D>) -> Vec<f64> {
    t.try_into_vec_as().unwrap()
}

fn mean_square(t: Tensor<4>) -> f64 {
    to_vec(t.square().mean())[0]
}

fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// A tiny network for structural checks: base width 2, 8x8 images.
fn tiny(depth: usize, variant: ResNetVariant) -> ResNetConfig {
    ResNetConfig::example(depth, variant)
        .with_base_width(2)
        .with_image_size(8)
}

/// Every float parameter's values, in visiting order.
fn all_weights<M: Module>(m: &M) -> Vec<Vec<f64>> {
    struct Collect(Vec<Vec<f64>>);
    impl ModuleVisitor for Collect {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            self.0.push(param.val().try_into_vec_as::<f64>().unwrap());
        }
    }
    let mut c = Collect(Vec::new());
    m.visit(&mut c);
    c.0
}

/// Weights of the 3x3 convolutions of a paper-sized network (3 input channels, 16 base
/// channels, 10 classes), by hand:
/// stem `3 * 16 * 9 = 432`; stage 1: `2n` convs `16 -> 16` of `2,304`; stage 2: one
/// `16 -> 32` (`4,608`) and `2n - 1` of `32 -> 32` (`9,216`); stage 3: one `32 -> 64`
/// (`18,432`) and `2n - 1` of `64 -> 64` (`36,864`). n = 3: `267,696`; n = 18: `1,719,216`.
fn conv_weights(n: usize) -> usize {
    432 + 2 * n * 2_304 + 4_608 + (2 * n - 1) * 9_216 + 18_432 + (2 * n - 1) * 36_864
}

/// Parameter counts, derived by hand (option-A shortcuts have no parameters):
///
/// | | ResNet-20 (n = 3) | ResNet-110 (n = 18) |
/// |---|---|---|
/// | convolutions | 267,696 | 1,719,216 |
/// | classifier `64 * 10 + 10` | 650 | 650 |
/// | norm_relu: the two above | 268,346 | 1,719,866 |
/// | BN channels `16 + 2n (16 + 32 + 64)` | 688 | 4,048 |
/// | batch_norm: + gamma, beta (2 per channel) | **269,722** | **1,727,962** |
/// | batch_norm `num_params()`: + running mean, var | 271,098 | 1,736,058 |
/// | fixup: + 5 scalars per block (`3n` blocks) + bias1 + bias2 | 268,393 | 1,720,138 |
///
/// He et al. (Table 6) report 0.27M and 1.7M. The often quoted 272,474 and 1,730,714 are
/// exactly ours plus 2,752 = option-B projection shortcuts (1x1 convolutions `16 * 32 +
/// 32 * 64 = 2,560` and their BatchNorms `2 (32 + 64) = 192`), which option A does without.
#[test]
fn parameter_counts_match_he_et_al() {
    let d = device();
    assert_eq!(conv_weights(3), 267_696);
    assert_eq!(conv_weights(18), 1_719_216);
    for (depth, n) in [(20, 3), (32, 5), (44, 7), (56, 9), (110, 18)] {
        let convs = conv_weights(n);
        let classifier = 64 * 10 + 10;
        let bn_channels = 16 + 2 * n * (16 + 32 + 64);
        let blocks = 3 * n;
        let count = |v: ResNetVariant| {
            let net = ResNet::new(&ResNetConfig::example(depth, v), &d, DType::F32).unwrap();
            (net.num_params(), net.num_trainable_params())
        };
        let bn = count(ResNetVariant::BatchNorm);
        assert_eq!(bn.1, convs + classifier + 2 * bn_channels, "resnet-{depth}");
        assert_eq!(bn.0, convs + classifier + 4 * bn_channels, "resnet-{depth}");
        let nr = count(ResNetVariant::NormRelu);
        assert_eq!(
            nr,
            (convs + classifier, convs + classifier),
            "resnet-{depth}"
        );
        assert_eq!(
            count(ResNetVariant::Selu),
            nr,
            "resnet-{depth}: selu is norm_relu's net"
        );
        // The memory guards' closed form (`size::resnet_params`, no network built) is
        // exact where there are no per-channel scales (fifty-fifth hostile round, N1).
        assert_eq!(
            ntk_model::size::resnet_params(&ResNetConfig::example(depth, ResNetVariant::NormRelu)),
            (convs + classifier) as f64,
            "resnet-{depth}: size::resnet_params"
        );
        let fx = count(ResNetVariant::Fixup);
        let fixup = convs + classifier + 5 * blocks + 2;
        assert_eq!(fx, (fixup, fixup), "resnet-{depth}");
        println!(
            "resnet-{depth}: batch_norm {} trainable ({} with running stats), norm_relu {}, \
             fixup {}",
            bn.1, bn.0, nr.0, fx.0
        );
        match depth {
            20 => {
                assert_eq!(bn, (271_098, 269_722));
                assert_eq!(nr.0, 268_346);
                assert_eq!(fx.0, 268_393);
                assert_eq!(bn.1 + 2_560 + 192, 272_474);
            }
            110 => {
                assert_eq!(bn, (1_736_058, 1_727_962));
                assert_eq!(nr.0, 1_719_866);
                assert_eq!(fx.0, 1_720_138);
                assert_eq!(bn.1 + 2_560 + 192, 1_730_714);
            }
            _ => {}
        }
    }
}

/// Fixup at init: every branch ends in a zero convolution times `scale` plus `bias2b = 0`,
/// so each block returns `relu(shortcut(x)) = shortcut(x)` (its input is a ReLU output):
/// the identity, or subsampling plus zero channels; and the zero classifier outputs zeros.
#[test]
fn fixup_blocks_return_their_shortcut_at_init() {
    let d = device();
    for (config, b) in [
        (tiny(20, ResNetVariant::Fixup).with_seed(4), 3),
        (ResNetConfig::new(20, ResNetVariant::Fixup).with_seed(5), 2),
    ] {
        let net = ResNet::new(&config, &d, DType::F32).unwrap();
        let s = config.image_size;
        let x = images(b, 3, s, 11, &d, DType::F32);
        let trace = net.forward_blocks(x.clone());
        assert_eq!(trace.len(), net.num_blocks() + 1);
        assert!(
            mean_square(trace[0].clone()) > 0.1,
            "the stem is not trivial"
        );
        for (l, block) in net.blocks.iter().enumerate() {
            let Block::Fixup(fixup) = block else {
                panic!("block {l} is not a Fixup block")
            };
            let input = trace[l].clone();
            let branch = to_vec(fixup.branch(input.clone()));
            assert!(
                branch.iter().all(|v| *v == 0.0),
                "block {l}: branch not zero"
            );
            let expected = to_vec(layers::shortcut(input.clone(), block.downsamples()));
            let got = to_vec(trace[l + 1].clone());
            assert!(
                max_abs_diff(&expected, &got) <= 1e-6,
                "block {l}: output is not its shortcut"
            );
            if !block.downsamples() {
                assert_eq!(got, to_vec(input), "block {l}: not the identity");
            }
        }
        let logits = to_vec(net.forward_images(x));
        assert_eq!(logits.len(), b * 10);
        assert!(
            logits.iter().all(|v| *v == 0.0),
            "classifier outputs {logits:?}"
        );
    }
}

/// NormReLU's mean-square map `g(q) = E[s(sqrt q Z)^2]` by quadrature.
fn g(act: &Activation, q: f64) -> f64 {
    let sd = q.sqrt();
    let kinks: Vec<f64> = act.kinks().iter().map(|k| k / sd).collect();
    normal::expect(|z| act.eval(sd * z).powi(2), &kinks)
}

/// The infinite-width mean-square profile (stem, then each block) of a NormReLU ResNet with
/// `n` blocks per stage, by propagating `samples` draws of one coordinate: a convolution of
/// an input with mean square `q` gives `N(0, q)` coordinates independent of the shortcut;
/// block: `y = s((x + r) / sqrt 2)`, `r ~ N(0, E[s(N(0, q))^2])`; a downsampling block keeps
/// half the channels (carried) and starts the other half afresh as `s(r)`.
fn infinite_width_profile(act: &Activation, n: usize, samples: usize) -> Vec<f64> {
    let s = |v: f64| act.eval(v);
    let ms = |a: &[f64]| a.iter().map(|v| v * v).sum::<f64>() / a.len() as f64;
    let mut stream = 1_000;
    let mut normal = |sd: f64| {
        stream += 1;
        init::gaussian(2_024, stream, 1, samples, sd)
    };
    let mut x: Vec<f64> = normal(1.0).into_iter().map(s).collect();
    let mut profile = vec![ms(&x)];
    let half = std::f64::consts::FRAC_1_SQRT_2;
    for stage in 0..3 {
        for i in 0..n {
            let h: Vec<f64> = normal(ms(&x).sqrt()).into_iter().map(s).collect();
            let r = normal(ms(&h).sqrt());
            let carried = if stage > 0 && i == 0 {
                samples / 2
            } else {
                samples
            };
            x = (0..samples)
                .map(|k| {
                    if k < carried {
                        s((x[k] + r[k]) * half)
                    } else {
                        s(r[k])
                    }
                })
                .collect();
            profile.push(ms(&x));
        }
    }
    profile
}

/// NormReLU ResNet-110 (the real one: 16 base channels, 32x32 images) at init keeps the
/// mean square per coordinate of every block's output at the stem's, up to the
/// infinite-width drift to ~1.11 (see `resnet::norm_relu`) and finite-size noise.
///
/// Sample: `NETS` networks (seeds 0..NETS), each on `B` images of N(0, 1) pixels; the
/// statistic is the mean over networks of `m_l / m_0`, `m_l` the mean square of block `l`'s
/// output over its `N_l = B C_l H_l W_l` coordinates. Its variance, to first order in the
/// deviations `delta` of the mean squares (with `g' = g'(1) = 0.84`, `a = g'(1 + g')/2`,
/// the per-block contraction):
/// - the stem: `delta_0 = g' (eps_w + eps_x)`, weight-norm noise `Var eps_w = 2 / (27 * 16)`
///   (a mean of 16 `chi^2_27 / 27`), the input's `Var eps_x = 2 / (B 3 32^2)`;
/// - block `k`: `delta_k = a delta_{k-1} + eta_k`, `eta_k = (g'^2 eps_1 + g' eps_2) / 2`
///   from its two convolutions, `Var eps = 2 / (C_in C_out)`: the chi-square rule with the
///   nine taps of a window counted as one effective input (neighbouring pixels of a feature
///   map are strongly correlated; this is the conservative end, and matches the spread
///   across seeds);
/// - sampling: `V / N_l`, `V = Var[s(Z)^2]`, and the same for the stem and the
///   infinite-width profile's `S` draws.
///
/// `m_l / m_0 - 1 = delta_l - delta_0 = sum_k a^(l-k) eta_k - (1 - a^l) delta_0`, so
/// `sigma_l^2 = (1 - a^l)^2 Var delta_0 + sum_k a^(2(l-k)) Var eta_k + V / N_l + V / N_0 +
/// 2 V / S`, and the mean over `NETS` networks has tolerance `5 sigma_l / sqrt NETS`.
#[test]
fn norm_relu_resnet110_keeps_unit_scale() {
    keeps_unit_scale(ResNetVariant::NormRelu, 0.84);
}

/// The same for the selu variant (SELU in NormReLU's network, Agarwal et al.'s Fig. 8):
/// SELU's `g'(1) = 0.78`, contraction `a = 0.70`, and an infinite-width drift to ~1.13.
#[test]
fn selu_resnet110_keeps_unit_scale() {
    keeps_unit_scale(ResNetVariant::Selu, 0.78);
}

/// The body of the two tests above; `slope` is the activation's `g'(1)` to two decimals.
fn keeps_unit_scale(variant: ResNetVariant, slope: f64) {
    const NETS: u64 = 8;
    const B: usize = 2;
    const S: usize = 100_000;
    let d = device();
    let config = ResNetConfig::example(110, variant);
    let act = config.activation();
    let n = config.blocks_per_stage();
    let num_blocks = config.num_blocks();

    // Infinite-width profile and the noise model's constants.
    let theory = infinite_width_profile(&act, n, S);
    let theory: Vec<f64> = theory.iter().map(|m| m / theory[0]).collect();
    let gp = (g(&act, 1.0 + 1e-4) - g(&act, 1.0 - 1e-4)) / 2e-4;
    let a = gp * (1.0 + gp) / 2.0;
    let v = act.norm_ratio_variance();
    assert!(
        (g(&act, 1.0) - 1.0).abs() < 1e-9 && (gp - slope).abs() < 0.01,
        "g'(1) = {gp}"
    );

    let stage_of = |l: usize| (l - 1) / n; // block l = 1..=3n
    let coords = |l: usize| {
        let stage = if l == 0 { 0 } else { stage_of(l) };
        let side = config.image_size >> stage;
        B * config.stage_width(stage) * side * side
    };
    let var_delta0 = gp * gp * (2.0 / (27.0 * 16.0) + 2.0 / (B * 3 * 32 * 32) as f64);
    let mut var_acc = 0.0;
    let mut tolerance = vec![0.0];
    for l in 1..=num_blocks {
        let c_out = config.stage_width(stage_of(l)) as f64;
        let c_in = if l > 1 && stage_of(l) != stage_of(l - 1) {
            c_out / 2.0
        } else {
            c_out
        };
        let var_eta = (gp.powi(4) * 2.0 / (c_in * c_out) + gp * gp * 2.0 / (c_out * c_out)) / 4.0;
        var_acc = a * a * var_acc + var_eta;
        let var = (1.0 - a.powi(l as i32)).powi(2) * var_delta0
            + var_acc
            + v / coords(l) as f64
            + v / coords(0) as f64
            + 2.0 * v / S as f64;
        tolerance.push(5.0 * (var / NETS as f64).sqrt());
    }

    // The measurement.
    let profile = |border_rescale: bool, nets: u64| {
        let mut sum = vec![0.0; num_blocks + 1];
        for seed in 0..nets {
            let c = config
                .clone()
                .with_seed(seed)
                .with_border_rescale(border_rescale);
            let net = ResNet::new(&c, &d, DType::F32).unwrap();
            let x = images(B, 3, 32, 100 + seed, &d, DType::F32);
            let ms: Vec<f64> = net.forward_blocks(x).into_iter().map(mean_square).collect();
            for (acc, m) in sum.iter_mut().zip(&ms) {
                *acc += m / ms[0] / nets as f64;
            }
        }
        sum
    };
    let measured = profile(true, NETS);
    let zero_padded = profile(false, 2);

    println!(
        "{variant} ResNet-110 at init, mean square of each block's output / the stem's, mean of \
         {NETS} nets x {B} images (g'(1) = {gp:.4}, contraction a = {a:.4}, V = {v:.4}):"
    );
    println!("block stage  measured  infinite-width  tolerance  zero-padded(2 nets)");
    for l in 0..=num_blocks {
        let stage = if l == 0 {
            "stem".to_string()
        } else {
            (stage_of(l) + 1).to_string()
        };
        println!(
            "{l:5} {stage:>5}  {:8.4}  {:14.4}  {:9.4}  {:8.4}",
            measured[l], theory[l], tolerance[l], zero_padded[l]
        );
    }

    // Infinite width: unit scale up to the drift to the fixed point near 1.11.
    let drift = theory.iter().map(|t| (t - 1.0).abs()).fold(0.0, f64::max);
    assert!(drift < 0.15, "infinite-width drift {drift}");
    for l in 0..=num_blocks {
        // The finite network follows the infinite-width profile ...
        assert!(
            (measured[l] - theory[l]).abs() <= tolerance[l],
            "block {l}: measured {} vs infinite width {} (tolerance {})",
            measured[l],
            theory[l],
            tolerance[l]
        );
        // ... hence stays at the stem's scale within the drift and the noise.
        assert!((measured[l] - 1.0).abs() <= 0.15 + tolerance[l]);
    }
    // Plain zero padding loses scale at the map borders (see `layers::border_gain`).
    assert!(
        zero_padded[num_blocks] < 0.85,
        "zero-padded ResNet-110 ends at {}",
        zero_padded[num_blocks]
    );
}

#[test]
fn border_gain_counts_the_taps_inside_the_map() {
    let taps: Vec<usize> = (0..8).map(|i| taps_inside(8, 1, i)).collect();
    assert_eq!(taps, [2, 3, 3, 3, 3, 3, 3, 2]);
    // Stride 2: windows centred on 0, 2, 4, 6; only the first overlaps the padding.
    let taps: Vec<usize> = (0..4).map(|i| taps_inside(8, 2, i)).collect();
    assert_eq!(taps, [2, 3, 3, 3]);
    let gain = to_vec(border_gain([4, 4], 1, &device(), DType::F64));
    let (corner, edge, inner) = (1.5, 1.5f64.sqrt(), 1.0);
    assert_eq!(
        gain,
        [
            corner, edge, edge, corner, edge, inner, inner, edge, edge, inner, inner, edge, corner,
            edge, edge, corner
        ]
    );
}

#[test]
fn forward_shapes_of_every_variant() {
    let d = device();
    for variant in ResNetVariant::all() {
        for depth in [8, 20] {
            let config = tiny(depth, variant).with_num_classes(7);
            let net = ResNet::new(&config, &d, DType::F32).unwrap();
            let x = images(3, 3, 8, 1, &d, DType::F32);
            assert_eq!(net.forward_images(x.clone()).dims(), [3, 7]);
            let trace = net.forward_blocks(x);
            let n = (depth - 2) / 6;
            assert_eq!(trace.len(), 3 * n + 1);
            assert_eq!(trace[0].dims(), [3, 2, 8, 8]);
            for (stage, (c, s)) in [(2, 8), (4, 4), (8, 2)].into_iter().enumerate() {
                for i in 1..=n {
                    assert_eq!(trace[stage * n + i].dims(), [3, c, s, s], "{variant}");
                }
            }
        }
    }
}

/// `forward` reads flat rows in CHW order (the CIFAR binary layout, `ntk-data`'s cifar.rs:
/// the red plane row-major, then green, then blue) and agrees with `forward_images`.
#[test]
fn flat_rows_are_chw_images() {
    let d = device();
    let config = tiny(8, ResNetVariant::NormRelu);
    let net = ResNet::new(&config, &d, DType::F64).unwrap();
    let (c, s) = (3, 8);
    let flat: Vec<f64> = (0..2 * c * s * s).map(|i| i as f64).collect();
    let rows = Tensor::<2>::from_data(TensorData::new(flat, [2, c * s * s]), (&d, DType::F64));
    let imgs = to_vec(net.images(rows));
    // Element [b, ch, h, w] is the row's value at ch * 64 + h * 8 + w.
    for (b, ch, h, w) in [(0, 0, 0, 1), (0, 1, 2, 3), (1, 2, 7, 5)] {
        let at = ((b * c + ch) * s + h) * s + w;
        assert_eq!(imgs[at], (b * c * s * s + ch * s * s + h * s + w) as f64);
    }
    for variant in ResNetVariant::all() {
        let net = ResNet::new(&tiny(8, variant), &d, DType::F64).unwrap();
        let x = images(4, c, s, 3, &d, DType::F64);
        let rows = x.clone().reshape([4, c * s * s]);
        assert_eq!(to_vec(net.forward(rows)), to_vec(net.forward_images(x)));
    }
}

#[test]
fn same_seed_same_weights_other_seed_other_weights() {
    let d = device();
    for variant in ResNetVariant::all() {
        let config = tiny(20, variant).with_seed(21);
        let a = all_weights(&ResNet::new(&config, &d, DType::F64).unwrap());
        let b = all_weights(&ResNet::new(&config, &d, DType::F64).unwrap());
        assert_eq!(a, b, "{variant}");
        let other =
            all_weights(&ResNet::new(&config.clone().with_seed(22), &d, DType::F64).unwrap());
        assert_ne!(a, other, "{variant}");
        // f32 weights are the f64 draws rounded.
        let f32_net = all_weights(&ResNet::new(&config, &d, DType::F32).unwrap());
        for (w64, w32) in a.iter().zip(&f32_net) {
            assert!(w64.iter().zip(w32).all(|(x, y)| (*x as f32) as f64 == *y));
        }
    }
    // A block's draws do not depend on the depth: ResNet-20 and -32 share block 0 and the stem.
    let config = tiny(20, ResNetVariant::BatchNorm).with_seed(3);
    let short = ResNet::new(&config, &d, DType::F64).unwrap();
    let long = ResNet::new(
        &ResNetConfig {
            depth: 32,
            ..config
        },
        &d,
        DType::F64,
    )
    .unwrap();
    assert_eq!(all_weights(&short.stem), all_weights(&long.stem));
    assert_eq!(all_weights(&short.blocks[0]), all_weights(&long.blocks[0]));
    assert_eq!(
        all_weights(&short.classifier),
        all_weights(&long.classifier)
    );
}

#[test]
fn config_errors_name_the_field() {
    let d = device();
    let check = |config: ResNetConfig, field: &str, value: &str| {
        let err = ResNet::new(&config, &d, DType::F32).unwrap_err();
        assert!(matches!(err, ModelError::InvalidConfig { .. }));
        let msg = err.to_string();
        assert!(msg.contains(field) && msg.contains(value), "{msg}");
    };
    check(
        ResNetConfig::new(21, ResNetVariant::BatchNorm),
        "resnet.depth",
        "21",
    );
    check(
        ResNetConfig::new(2, ResNetVariant::Fixup),
        "resnet.depth",
        "2",
    );
    check(
        ResNetConfig::new(20, ResNetVariant::BatchNorm).with_kink(-1.0),
        "resnet.kink",
        "-1",
    );
    check(
        ResNetConfig::new(20, ResNetVariant::Fixup).with_border_rescale(false),
        "resnet.border_rescale",
        "false",
    );
    check(
        ResNetConfig::new(20, ResNetVariant::Selu).with_kink(-1.0),
        "resnet.kink",
        "selu",
    );
    // SELU shares NormReLU's network, border gain included.
    let selu = ResNetConfig::new(20, ResNetVariant::Selu);
    assert!(selu.border_gain() && !selu.clone().with_border_rescale(false).border_gain());
    assert_eq!(
        selu.activation(),
        ntk_model::Activation::Selu(ntk_model::activation::Selu)
    );
    check(
        ResNetConfig::new(20, ResNetVariant::NormRelu).with_image_size(30),
        "resnet.image_size",
        "30",
    );
    check(
        ResNetConfig::new(20, ResNetVariant::NormRelu).with_base_width(0),
        "resnet.base_width",
        "0",
    );
    for depth in [8, 20, 32, 44, 56, 110] {
        assert!(
            ResNetConfig::new(depth, ResNetVariant::Fixup)
                .validate()
                .is_ok()
        );
    }

    // Serde: snake_case variants, defaults, unknown fields refused.
    let c: ResNetConfig =
        serde_json::from_str(r#"{"depth": 110, "variant": "norm_relu"}"#).unwrap();
    assert_eq!(c, ResNetConfig::new(110, ResNetVariant::NormRelu));
    let selu: ResNetConfig = serde_json::from_str(r#"{"depth": 20, "variant": "selu"}"#).unwrap();
    assert_eq!(selu, ResNetConfig::new(20, ResNetVariant::Selu));
    assert_eq!(
        (
            c.num_classes,
            c.base_width,
            c.image_size,
            c.in_channels,
            c.seed
        ),
        (10, 16, 32, 3, 0)
    );
    assert_eq!(
        c.norm_relu().unwrap().b,
        ntk_model::activation::NORM_RELU_DEFAULT_B
    );
    let err = serde_json::from_str::<ResNetConfig>(r#"{"depth": 20, "variant": "layer_norm"}"#)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("layer_norm") && err.contains("batch_norm"),
        "{err}"
    );
    let err =
        serde_json::from_str::<ResNetConfig>(r#"{"depth": 20, "variant": "fixup", "width": 3}"#)
            .unwrap_err()
            .to_string();
    assert!(err.contains("width"), "{err}");
}

/// Burn 0.22's BatchNorm uses batch statistics only on an autodiff device with its training
/// flag on (`fork(&device.autodiff()).train()`); on a plain device, and after `.valid()`, it
/// uses the running statistics, so one sample's output does not depend on the rest of the
/// batch.
#[test]
fn batch_norm_in_eval_mode_uses_running_statistics() {
    let d = device();
    let config = tiny(8, ResNetVariant::BatchNorm).with_seed(2);
    let net = ResNet::new(&config, &d, DType::F32).unwrap();
    let first = |t: Tensor<2>| to_vec(t.narrow(0, 0, 1));
    let batch_a = images(3, 3, 8, 5, &d, DType::F32);
    let other = images(3, 3, 8, 6, &d, DType::F32);
    let batch_b = Tensor::cat(
        vec![batch_a.clone().narrow(0, 0, 1), other.narrow(0, 1, 2)],
        0,
    );
    let alone = first(net.forward_images(batch_a.clone().narrow(0, 0, 1)));
    let in_a = first(net.forward_images(batch_a.clone()));
    let in_b = first(net.forward_images(batch_b.clone()));
    assert!(max_abs_diff(&alone, &in_a) < 1e-5, "{alone:?} vs {in_a:?}");
    assert!(max_abs_diff(&alone, &in_b) < 1e-5, "{alone:?} vs {in_b:?}");

    // Training mode: batch statistics, so the first sample's logits depend on its batch
    // mates, and the forward moves the running statistics.
    let ad = d.autodiff();
    let training = net.clone().fork(&ad).train();
    let train_a = first(training.forward_images(batch_a.clone().to_device(&ad)));
    let train_b = first(training.forward_images(batch_b.clone().to_device(&ad)));
    assert!(
        max_abs_diff(&train_a, &train_b) > 1e-3,
        "{train_a:?} vs {train_b:?}"
    );
    let stem_bn = training.stem_bn.as_ref().unwrap();
    let running_mean = to_vec(stem_bn.running_mean.value());
    assert!(
        running_mean.iter().any(|m| m.abs() > 1e-4),
        "{running_mean:?}"
    );

    // Back to evaluation: independent of the batch again, now with the updated statistics.
    let eval = training.valid();
    let alone = first(eval.forward_images(batch_a.clone().narrow(0, 0, 1)));
    let in_b = first(eval.forward_images(batch_b));
    assert!(max_abs_diff(&alone, &in_b) < 1e-5, "{alone:?} vs {in_b:?}");
    assert!(max_abs_diff(&alone, &first(net.forward_images(batch_a.narrow(0, 0, 1)))) > 1e-4);
}

#[test]
fn net_dispatches_and_describes() {
    let d = device();
    let resnet = ResNet::new(&tiny(20, ResNetVariant::Fixup), &d, DType::F32).unwrap();
    let x = images(2, 3, 8, 9, &d, DType::F32).reshape([2, 3 * 64]);
    let expected = to_vec(resnet.forward(x.clone()));
    let net = Net::from(resnet);
    assert_eq!(to_vec(net.forward(x)), expected);
    assert_eq!(net.describe(), "resnet-20 fixup");
    let resnet = ResNet::new(
        &ResNetConfig::new(110, ResNetVariant::BatchNorm),
        &d,
        DType::F32,
    )
    .unwrap();
    assert_eq!(Net::from(resnet).describe(), "resnet-110 batch_norm");
    let plain = ResNetConfig::new(56, ResNetVariant::NormRelu).with_border_rescale(false);
    assert_eq!(plain.describe(), "resnet-56 norm_relu zero-padded");

    let mlp_config = MlpConfig::new(5, 8, 2, ActivationKind::Relu).with_output_dim(3);
    let mlp = Mlp::new(&mlp_config, &d, DType::F32).unwrap();
    let x = Tensor::<2>::from_data(TensorData::new(vec![0.1f64; 10], [2, 5]), (&d, DType::F32));
    let expected = to_vec(mlp.forward(x.clone()));
    let net = Net::Mlp(mlp);
    assert_eq!(to_vec(net.forward(x)), expected);
    assert_eq!(net.describe(), "mlp depth 2 width 8 relu");
}

/// Every variant backpropagates on an autodiff device (`fork(&device.autodiff()).train()`,
/// as the trainer does). At Fixup's init the zero classifier blocks every gradient but its
/// own.
#[test]
fn every_variant_backpropagates_on_an_autodiff_device() {
    let ad = device().autodiff();
    for variant in ResNetVariant::all() {
        let net = ResNet::new(&tiny(8, variant), &device(), DType::F32)
            .unwrap()
            .fork(&ad)
            .train();
        let x = images(2, 3, 8, 4, &ad, DType::F32).reshape([2, 3 * 64]);
        let grads = net.forward(x).sum().backward();
        let norm = |p: &Param<Tensor<2>>| {
            p.val()
                .grad(&grads)
                .map_or(0.0, |g| to_vec(g.square().sum())[0])
        };
        assert!(norm(&net.classifier.weight) > 0.0, "{variant}");
        let stem = net
            .stem
            .weight
            .val()
            .grad(&grads)
            .map_or(0.0, |g| to_vec(g.square().sum())[0]);
        assert_eq!(
            stem > 0.0,
            variant != ResNetVariant::Fixup,
            "{variant}: {stem}"
        );
    }
}

/// The normalized variant: its activation is required there and refused elsewhere, its
/// parameter checked, and the serialized form of the other variants' configs unchanged (run
/// fingerprints hash it).
#[test]
fn the_normalized_variant_takes_any_activation_and_names_its_keys() {
    use ntk_model::ActivationKind;
    let d = device();
    let check = |config: ResNetConfig, field: &str, value: &str| {
        let msg = ResNet::new(&config, &d, DType::F32)
            .unwrap_err()
            .to_string();
        assert!(msg.contains(field) && msg.contains(value), "{msg}");
    };
    check(
        ResNetConfig::new(20, ResNetVariant::Normalized),
        "resnet.activation",
        "gelu",
    );
    let mut bn_gelu = ResNetConfig::new(20, ResNetVariant::BatchNorm);
    bn_gelu.activation = Some(ActivationKind::Gelu);
    check(bn_gelu, "resnet.activation", "normalized");
    check(
        ResNetConfig::new_normalized(20, ActivationKind::Gelu).with_activation_param(0.1),
        "resnet.activation_param",
        "gelu",
    );
    check(
        ResNetConfig::new_normalized(20, ActivationKind::LeakyRelu).with_activation_param(2.0),
        "resnet.activation_param",
        "2",
    );
    let leaky =
        ResNetConfig::new_normalized(20, ActivationKind::LeakyRelu).with_activation_param(0.2);
    assert_eq!(leaky.activation().param(), Some(0.2));
    assert_eq!(
        ResNetConfig::new_normalized(20, ActivationKind::Gelu).describe(),
        "resnet-20 normalized gelu"
    );

    let c: ResNetConfig =
        serde_json::from_str(r#"{"depth": 20, "variant": "normalized", "activation": "tanh"}"#)
            .unwrap();
    assert_eq!(c, ResNetConfig::new_normalized(20, ActivationKind::Tanh));
    let bn = serde_json::to_string(&ResNetConfig::new(20, ResNetVariant::BatchNorm)).unwrap();
    assert!(!bn.contains("activation"), "{bn}");

    // NormReLU and SELU are normalized already: the normalized variant with SELU is the
    // selu network, bit for bit.
    let x = Tensor::<2>::from_data(
        TensorData::new(
            (0..2 * 3 * 8 * 8)
                .map(|i| ((i * 37 % 101) as f64 / 50.0 - 1.0) as f32)
                .collect::<Vec<_>>(),
            [2, 3 * 8 * 8],
        ),
        (&d, DType::F32),
    );
    let out = |cfg: ResNetConfig| -> Vec<f32> {
        ResNet::new(
            &cfg.with_base_width(2).with_image_size(8).with_seed(4),
            &d,
            DType::F32,
        )
        .unwrap()
        .forward(x.clone())
        .try_into_vec_as()
        .unwrap()
    };
    assert_eq!(
        out(ResNetConfig::new(8, ResNetVariant::Selu)),
        out(ResNetConfig::new_normalized(8, ActivationKind::Selu))
    );
    // Scale through depth at initialization follows the mean-square map's slope g'(1)
    // (`Normalized::mean_square_slope`): normalized tanh (0.46) keeps every block's output
    // near unit mean square, as NormReLU and SELU do; normalized GELU (1.06) does not, its
    // mean square grows block by block (404 at ResNet-20's last block, seed 5).
    let last_mean_square = |kind: ActivationKind| {
        let net = ResNet::new(
            &ResNetConfig::new_normalized(20, kind).with_seed(5),
            &d,
            DType::F32,
        )
        .unwrap();
        let maps = net.forward_blocks(images(4, 3, 32, 6, &d, DType::F32));
        maps.into_iter().map(mean_square).collect::<Vec<_>>()
    };
    let tanh = last_mean_square(ActivationKind::Tanh);
    assert!(tanh.iter().all(|q| (0.8..1.3).contains(q)), "{tanh:?}");
    let gelu = last_mean_square(ActivationKind::Gelu);
    assert!(gelu[gelu.len() - 1] > 10.0 * gelu[0], "{gelu:?}");
}
