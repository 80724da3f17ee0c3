//! The host ResNet against independent routes: the im2col convolution against the direct
//! sum over taps, its adjoints by the dot-product identity `<conv x, dy> = <x, conv^T dy>`,
//! and the whole network (logits, every parameter's gradient, the running statistics)
//! against Burn's autodiff on flex in f64, for the three variants, on even and odd map
//! sizes. In f64 both routes round at ~1e-16 per operation, summed in different orders:
//! agreement to 1e-10 relative leaves a margin of ~1e4 over the accumulated rounding.

use burn::module::{Module, ModuleVisitor, Param};
use burn::tensor::Gradients;
use burn::tensor::{DType, Device, Tensor, TensorData};

use super::conv::{self, Conv};
use super::*;
use ntk_model::{ResNetConfig, init};

/// Deterministic values in about [-1, 1].
fn wave(len: usize, seed: usize) -> Vec<f64> {
    (0..len)
        .map(|i| (((i * 7919 + seed * 104_729) % 2003) as f64 / 1001.5 - 1.0) * 0.9)
        .collect()
}

/// The direct 3x3 padding-1 convolution `y[b, i, j, co] = g(i, j) sum w[co, kh, kw, ci]
/// x[b, s i + kh - 1, s j + kw - 1, ci]`.
fn direct(conv: &Conv<f64>, n: usize, x: &[f64], w: &[f64]) -> Vec<f64> {
    let (inp, out) = (conv.input.with_n(n), conv.output.with_n(n));
    let mut y = vec![0.0; out.len()];
    for b in 0..n {
        for i in 0..out.h {
            for j in 0..out.w {
                for co in 0..out.c {
                    let mut acc = 0.0;
                    for kh in 0..3 {
                        for kw in 0..3 {
                            let (hi, wi) = (
                                (i * conv.stride + kh) as isize - 1,
                                (j * conv.stride + kw) as isize - 1,
                            );
                            if hi < 0 || wi < 0 || hi >= inp.h as isize || wi >= inp.w as isize {
                                continue;
                            }
                            for ci in 0..inp.c {
                                let xv = x[((b * inp.h + hi as usize) * inp.w + wi as usize)
                                    * inp.c
                                    + ci];
                                acc += w[co * 9 * inp.c + (kh * 3 + kw) * inp.c + ci] * xv;
                            }
                        }
                    }
                    let g = conv.gain.as_ref().map_or(1.0, |g| g[i * out.w + j]);
                    y[((b * out.h + i) * out.w + j) * out.c + co] = g * acc;
                }
            }
        }
    }
    y
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn rel(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    let num: f64 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
    let den: f64 = b.iter().map(|y| y * y).sum();
    (num / den.max(1e-300)).sqrt()
}

#[test]
fn the_im2col_convolution_is_the_direct_sum_and_its_adjoints_are_exact() {
    // (c_in, h, w, c_out, stride, gain): the ResNets' shapes, odd maps and many images (more
    // than one chunk) included.
    for (c_in, h, w, c_out, stride, gain) in [
        (3, 8, 8, 4, 1, false),
        (4, 8, 8, 8, 2, false),
        (4, 7, 7, 8, 2, true),
        (2, 5, 6, 3, 1, true),
        (16, 32, 32, 16, 1, false),
    ] {
        let n = if h == 32 { 5 } else { 11 };
        let conv = Conv::<f64>::new(c_in, h, w, c_out, stride, gain);
        let x = wave(conv.input.with_n(n).len(), 1);
        let wt = wave(conv.num_weights(), 2);
        let mut y = vec![0.0; conv.output.with_n(n).len()];
        conv.forward(n, &x, &wt, &mut y);
        let what = format!("{c_in}x{h}x{w} -> {c_out}, stride {stride}, gain {gain}");
        assert!(
            rel(&y, &direct(&conv, n, &x, &wt)) < 1e-14,
            "{what}: forward"
        );
        // <conv_W x, dy> is linear in x and in W: its gradients are conv^T dy and dW.
        let dy = wave(y.len(), 3);
        let mut dyg = dy.clone();
        let mut dw = vec![0.0; wt.len()];
        let mut dx = vec![0.0; x.len()];
        conv.backward(n, &x, &wt, &mut dyg, &mut dw, Some((&mut dx, false)));
        let want = dot(&y, &dy);
        assert!(
            (dot(&x, &dx) - want).abs() < 1e-12 * want.abs().max(1.0),
            "{what}: dx"
        );
        assert!(
            (dot(&wt, &dw) - want).abs() < 1e-12 * want.abs().max(1.0),
            "{what}: dw"
        );
        // Each input coordinate separately: dx = sum over outputs of dy * dy/dx, by columns
        // of the direct map (a few coordinates).
        for probe in [0, x.len() / 3, x.len() - 1] {
            let mut e = vec![0.0; x.len()];
            e[probe] = 1.0;
            let col = direct(&conv, n, &e, &wt);
            assert!(
                (dot(&col, &dy) - dx[probe]).abs() < 1e-12,
                "{what}: dx[{probe}]"
            );
        }
        // Accumulating adds.
        let mut dx2 = dx.clone();
        let mut dyg = dy.clone();
        conv.backward(n, &x, &wt, &mut dyg, &mut dw, Some((&mut dx2, true)));
        let twice: Vec<f64> = dx.iter().map(|v| 2.0 * v).collect();
        assert!(rel(&dx2, &twice) < 1e-15, "{what}: accumulate");
    }
}

/// `conv(x + b)` with the shift folded into the padded copy or the im2col matrix
/// ([`Conv::forward_shifted`], [`Conv::backward_shifted`]) is the convolution of the
/// materialized maps `x + b` bit for bit: outputs, weight gradients and input gradients, on
/// im2col (f64; f32 at stride 2) and on the direct convolution (f32, 16 channels, stride 1).
#[test]
fn a_shift_folded_into_the_convolution_is_the_materialized_sum() {
    fn check<T: Real + std::fmt::Debug>(c_in: usize, c_out: usize, stride: usize) {
        let (n, b) = (3, T::of(0.3125));
        let conv = Conv::<T>::new(c_in, 8, 8, c_out, stride, false);
        let x: Vec<T> = wave(conv.input.with_n(n).len(), 1)
            .into_iter()
            .map(T::of)
            .collect();
        let xb: Vec<T> = x.iter().map(|v| *v + b).collect();
        let wt: Vec<T> = wave(conv.num_weights(), 2).into_iter().map(T::of).collect();
        let len = conv.output.with_n(n).len();
        let (mut y1, mut y2) = (vec![T::of(0.0); len], vec![T::of(0.0); len]);
        conv.forward_shifted(n, &x, b, &wt, &mut y1);
        conv.forward(n, &xb, &wt, &mut y2);
        let what = format!("{c_in} -> {c_out}, stride {stride}");
        assert_eq!(y1, y2, "{what}: forward");
        let dy: Vec<T> = wave(len, 3).into_iter().map(T::of).collect();
        let (mut dw1, mut dw2) = (vec![T::of(0.0); wt.len()], vec![T::of(0.0); wt.len()]);
        let (mut dx1, mut dx2) = (vec![T::of(0.0); x.len()], vec![T::of(0.0); x.len()]);
        let (mut g1, mut g2) = (dy.clone(), dy);
        conv.backward_shifted(n, &x, b, &wt, &mut g1, &mut dw1, Some((&mut dx1, false)));
        conv.backward(n, &xb, &wt, &mut g2, &mut dw2, Some((&mut dx2, false)));
        assert_eq!(dw1, dw2, "{what}: dw");
        assert_eq!(dx1, dx2, "{what}: dx");
        // The shift is on the maps only: not the same as a shift of the padding too.
        let mut y0 = vec![T::of(0.0); len];
        conv.forward(n, &x, &wt, &mut y0);
        assert!(y0 != y1, "{what}: the shift changed nothing");
    }
    check::<f64>(4, 4, 1);
    check::<f64>(4, 8, 2);
    check::<f32>(16, 16, 1);
    check::<f32>(16, 32, 2);
}

#[test]
fn weights_convert_between_burn_and_host_layouts() {
    let (ci, co) = (3, 5);
    let w = wave(co * ci * 9, 4);
    let hwc = conv::to_hwc(&w, ci, co);
    assert_eq!(conv::from_hwc(&hwc, ci, co), w);
    // Burn's [co, ci, kh, kw] entry (2, 1, 0, 2) is the host's [co, kh, kw, ci] (2, 0, 2, 1).
    assert_eq!(hwc[2 * 9 * ci + 2 * ci + 1], w[((2 * ci) + 1) * 9 + 2]);
}

/// Burn's gradients of every trainable parameter, in module order.
struct BurnGrads<'a> {
    grads: &'a Gradients,
    path: Vec<String>,
    out: Vec<f64>,
}

impl ModuleVisitor for BurnGrads<'_> {
    fn enter_module(&mut self, name: &str, _: &str) {
        self.path.push(name.to_string());
    }
    fn exit_module(&mut self, _: &str, _: &str) {
        self.path.pop();
    }
    fn visit_float<const D: usize>(&mut self, p: &Param<Tensor<D>>) {
        if matches!(
            self.path.last().map(String::as_str),
            Some("running_mean" | "running_var")
        ) {
            return;
        }
        let g = p
            .val()
            .grad(self.grads)
            .expect("every parameter has a gradient");
        self.out.extend(g.try_into_vec_as::<f64>().unwrap());
    }
}

/// Every float of `net` in module order: trainable parameters, or running statistics.
struct Values {
    path: Vec<String>,
    running: bool,
    out: Vec<f64>,
}

impl ModuleVisitor for Values {
    fn enter_module(&mut self, name: &str, _: &str) {
        self.path.push(name.to_string());
    }
    fn exit_module(&mut self, _: &str, _: &str) {
        self.path.pop();
    }
    fn visit_float<const D: usize>(&mut self, p: &Param<Tensor<D>>) {
        let is_running = matches!(
            self.path.last().map(String::as_str),
            Some("running_mean" | "running_var")
        );
        if is_running == self.running {
            self.out.extend(p.val().try_into_vec_as::<f64>().unwrap());
        }
    }
}

fn floats(net: &ResNet, running: bool) -> Vec<f64> {
    let mut v = Values {
        path: Vec::new(),
        running,
        out: Vec::new(),
    };
    net.visit(&mut v);
    v.out
}

#[test]
fn the_host_resnet_is_burns_training_forward_and_gradient() {
    let device = Device::flex();
    let ad = device.clone().autodiff();
    // Every variant, and the normalized one with every activation of the registry: a new
    // activation is held to Burn's autodiff here with no code of its own.
    let nets = ResNetVariant::all().into_iter().flat_map(|v| match v {
        ResNetVariant::Normalized => ntk_model::ActivationKind::all()
            .into_iter()
            .map(|k| ResNetConfig::new_normalized(8, k))
            .collect(),
        _ => vec![ResNetConfig::new(8, v)],
    });
    for base_cfg in nets {
        let variant = base_cfg.variant;
        for (size, base) in [(8, 4), (12, 3)] {
            let cfg = base_cfg
                .clone()
                .with_base_width(base)
                .with_image_size(size)
                .with_in_channels(2)
                .with_num_classes(3)
                .with_seed(3);
            let what = format!("{} {size}x{size}", cfg.describe());
            let net = ResNet::new(&cfg, &device, DType::F64).unwrap();
            // Parameters in general position (Fixup starts with zero branches and
            // classifier, and every BatchNorm with gamma 1, beta 0).
            let mut host = HostResNet::<f64>::read(&net);
            host.theta = wave(host.num_params(), 5)
                .iter()
                .map(|v| 0.3 * v + 0.05)
                .collect();
            let mut net = net;
            host.write_into(&mut net);
            let n = 6;
            let x = init::gaussian(9, 0, n, cfg.input_dim(), 1.0);
            let logits = host.forward(&x, n).to_vec();
            let g = wave(logits.len(), 6);
            let mut grad = vec![0.0; host.num_params()];
            host.backward(&g, &mut grad);
            host.commit_running();

            let burn = net.clone().fork(&ad).train();
            let xt = Tensor::<2>::from_data(
                TensorData::new(x.clone(), [n, cfg.input_dim()]),
                (&ad, DType::F64),
            );
            let f = burn.forward(xt);
            let want: Vec<f64> = f.clone().try_into_vec_as().unwrap();
            assert!(
                rel(&logits, &want) < 1e-12,
                "{what}: logits {:e}",
                rel(&logits, &want)
            );
            let gt = Tensor::<2>::from_data(TensorData::new(g, [n, 3]), (&ad, DType::F64));
            let grads = (f * gt).sum().backward();
            let mut bg = BurnGrads {
                grads: &grads,
                path: Vec::new(),
                out: Vec::new(),
            };
            burn.visit(&mut bg);
            // The host gradient in Burn's order: written into a copy as if it were theta.
            let mut as_net = net.clone();
            let mut g_host = host.clone();
            g_host.theta = grad;
            g_host.write_into(&mut as_net);
            let got = floats(&as_net, false);
            let err = rel(&got, &bg.out);
            assert!(err < 1e-10, "{what}: gradient {err:e}");
            // Running statistics after one training forward.
            let mut updated = net.clone();
            host.write_into(&mut updated);
            let err = rel(&floats(&updated, true), &floats(&burn.valid(), true));
            if variant == ResNetVariant::BatchNorm {
                assert!(err < 1e-12, "{what}: running statistics {err:e}");
            }
        }
    }
}
