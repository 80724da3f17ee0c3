//! The host engine against Burn on tiny f64 MLPs: the forward against `Mlp::forward_trace`,
//! and the backward of a random cotangent `G` against the autodiff gradients of
//! `E = sum(G .* f)`: the parameters' (`Grads`) and the pre-activations' (the signals,
//! through `Mlp::forward_probed`). Both routes round at ~1e-16 per operation over a handful
//! of layers: relative 1e-12.

use burn::module::Module;
use burn::tensor::{DType, Device, Tensor, TensorData};
use faer::Mat;

use super::*;
use ntk_model::{ActivationKind, MlpConfig, NtkConvention, init};

const N: usize = 5;
const D: usize = 4;
const M: usize = 6;
const K: usize = 3;

/// Networks of every depth up to 3 with several activations and conventions; biases drawn
/// non-zero, so that the forward adds them.
fn nets() -> Vec<Mlp> {
    use ActivationKind::*;
    use NtkConvention::*;
    let cases = [
        (0, Relu, Paper, true),
        (1, Tanh, Official, false),
        (2, Gelu, UnitVariance, true),
        (3, Relu, Paper, true),
        (2, NormRelu, Official, true),
        (2, Linear, UnitVariance, false),
    ];
    cases
        .into_iter()
        .enumerate()
        .map(|(i, (depth, act, convention, bias))| {
            let cfg = MlpConfig::new(D, M, depth, act)
                .with_output_dim(K)
                .with_bias(bias)
                .with_convention(convention)
                .with_seed(i as u64 + 1);
            let mut mlp = Mlp::new(&cfg, &Device::flex(), DType::F64).unwrap();
            for (l, layer) in mlp.layers.iter_mut().enumerate() {
                layer.bias = layer.bias.take().map(|b| {
                    b.map(|t| {
                        let n = t.dims()[0];
                        let v = init::gaussian(99, l as u64, 1, n, 0.5);
                        Tensor::from_data(TensorData::new(v, [n]), (&t.device(), t.dtype()))
                    })
                });
            }
            mlp
        })
        .collect()
}

fn tensor(v: &[f64], shape: [usize; 2], device: &Device) -> Tensor<2> {
    Tensor::from_data(TensorData::new(v.to_vec(), shape), (device, DType::F64))
}

fn values<const R: usize>(t: Tensor<R>) -> Vec<f64> {
    t.try_into_vec_as().unwrap()
}

/// A matrix's entries, row-major.
fn rows(m: &Mat<f64>) -> Vec<f64> {
    (0..m.nrows())
        .flat_map(|i| (0..m.ncols()).map(move |j| m[(i, j)]))
        .collect()
}

fn rel(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    let num: f64 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
    let den: f64 = b.iter().map(|y| y * y).sum();
    (num / den).sqrt()
}

/// The host forward of `p` on `x`: its trace and output.
fn forward(p: &Params<f64>, x: &Mat<f64>) -> (Trace<f64>, Mat<f64>) {
    let mut trace = Trace::new(p, N, &mut Pool::default());
    p.forward(x.as_ref(), &mut trace);
    let mut f = Mat::zeros(N, K);
    p.output_into(x.as_ref(), &trace, &mut f);
    (trace, f)
}

/// Signal buffers for `p`'s hidden layers.
fn signals(p: &Params<f64>) -> Vec<Mat<f64>> {
    p.hidden()
        .iter()
        .map(|l| Mat::zeros(N, l.fan_out()))
        .collect()
}

#[test]
fn the_forward_is_the_mlps() {
    for (i, mlp) in nets().iter().enumerate() {
        let x = init::gaussian(7, i as u64, N, D, 1.0);
        let p = Params::<f64>::read(mlp);
        assert_eq!(p.depth(), mlp.depth());
        let (trace, f) = forward(&p, &from_rows(&x, N, D));
        let reference = mlp.forward_trace(tensor(&x, [N, D], &Device::flex()));
        let what = format!("depth {} {}", mlp.depth(), mlp.config().activation);
        let err = rel(&rows(&f), &values(reference.output));
        assert!(err < 1e-12, "{what}: output {err:e}");
        for (l, a) in trace.acts.iter().enumerate() {
            let err = rel(&rows(a), &values(reference.inputs[l + 1].clone()));
            assert!(err < 1e-12, "{what}: a_{} {err:e}", l + 1);
        }
        // s_l = gamma_l phi'(z_l).
        let act = mlp.activation();
        for (l, s) in trace.slopes.iter().enumerate() {
            let z = values(reference.preacts[l].clone());
            let want: Vec<f64> = z
                .iter()
                .map(|z| act.derivative(*z) * mlp.scales().gamma[l])
                .collect();
            assert!(rel(&rows(s), &want) < 1e-12, "{what}: s_{}", l + 1);
        }
    }
}

#[test]
fn the_backward_is_autodiffs() {
    let ad = Device::flex().autodiff();
    for (i, mlp) in nets().iter().enumerate() {
        let what = format!("depth {} {}", mlp.depth(), mlp.config().activation);
        let x = init::gaussian(7, i as u64, N, D, 1.0);
        let g = init::gaussian(8, i as u64, N, K, 1.0);
        let p = Params::<f64>::read(mlp);
        let xm = from_rows::<f64>(&x, N, D);
        let (trace, _) = forward(&p, &xm);
        let mut ds = signals(&p);
        // Gradients accumulated onto ones with keep = 1/2 (the momentum buffers' use).
        let mut gw: Vec<Mat<f64>> = p
            .layers()
            .map(|l| Mat::from_fn(l.fan_in(), l.fan_out(), |_, _| 1.0))
            .collect();
        let mut gb: Vec<Option<Vec<f64>>> = p
            .layers()
            .map(|l| l.b().map(|b| vec![1.0; b.len()]))
            .collect();
        let grads = Grads {
            w: &mut gw,
            b: &mut gb,
            keep: 0.5,
        };
        let gm = from_rows::<f64>(&g, N, K);
        p.backprop(
            xm.as_ref(),
            &trace,
            Cotangent::Rows(gm.as_ref()),
            &mut ds,
            Some(grads),
        );

        // Autodiff of E = sum(G .* f), with zero probes on the pre-activations.
        let net = mlp.clone().fork(&ad).train();
        let probes: Vec<Tensor<2>> = (0..mlp.depth())
            .map(|_| Tensor::<2>::zeros([N, M], (&ad, DType::F64)).require_grad())
            .collect();
        let f = net.forward_probed(tensor(&x, [N, D], &ad), Some(&probes));
        let grads = (f * tensor(&g, [N, K], &ad)).sum().backward();
        for (l, layer) in net.layers.iter().enumerate() {
            let want: Vec<f64> = values(layer.weight.val().grad(&grads).unwrap())
                .iter()
                .map(|v| v + 0.5)
                .collect();
            let err = rel(&rows(&gw[l]), &want);
            assert!(err < 1e-12, "{what}: dW_{} {err:e}", l + 1);
            if let Some(b) = &layer.bias {
                let want: Vec<f64> = values(b.val().grad(&grads).unwrap())
                    .iter()
                    .map(|v| v + 0.5)
                    .collect();
                let err = rel(gb[l].as_ref().unwrap(), &want);
                assert!(err < 1e-12, "{what}: db_{} {err:e}", l + 1);
            }
        }
        for (l, (d, probe)) in ds.iter().zip(&probes).enumerate() {
            let err = rel(&rows(d), &values(probe.grad(&grads).unwrap()));
            assert!(err < 1e-12, "{what}: delta_{} {err:e}", l + 1);
        }
    }
}

/// `Cotangent::Unit(o)` is `Rows` of the one-hot `e_o` rows: the same signals, and with
/// gradients asked for, the same gradients.
#[test]
fn a_unit_cotangent_is_the_one_hot_rows() {
    for (i, mlp) in nets().iter().enumerate() {
        let x = init::gaussian(7, i as u64, N, D, 1.0);
        let p = Params::<f64>::read(mlp);
        let xm = from_rows::<f64>(&x, N, D);
        let (trace, _) = forward(&p, &xm);
        for o in 0..K {
            let onehot = Mat::from_fn(N, K, |_, j| if j == o { 1.0 } else { 0.0 });
            let zeros = || -> (Vec<Mat<f64>>, Vec<Option<Vec<f64>>>) {
                let w = p
                    .layers()
                    .map(|l| Mat::zeros(l.fan_in(), l.fan_out()))
                    .collect();
                let b = p
                    .layers()
                    .map(|l| l.b().map(|b| vec![0.0; b.len()]))
                    .collect();
                (w, b)
            };
            let (mut unit, mut rows_) = (signals(&p), signals(&p));
            p.backprop(xm.as_ref(), &trace, Cotangent::Unit(o), &mut unit, None);
            let (mut gw, mut gb) = zeros();
            let grads = Grads {
                w: &mut gw,
                b: &mut gb,
                keep: 0.0,
            };
            let cot = Cotangent::Rows(onehot.as_ref());
            p.backprop(xm.as_ref(), &trace, cot, &mut rows_, Some(grads));
            for (a, b) in unit.iter().zip(&rows_) {
                assert!(rel(&rows(a), &rows(b)) < 1e-14, "output {o}");
            }
            let (mut uw, mut ub) = zeros();
            let grads = Grads {
                w: &mut uw,
                b: &mut ub,
                keep: 0.0,
            };
            let mut again = signals(&p);
            p.backprop(
                xm.as_ref(),
                &trace,
                Cotangent::Unit(o),
                &mut again,
                Some(grads),
            );
            assert!(uw == gw && ub == gb, "output {o}: gradients");
        }
    }
}

/// Stored transposes change the operand's layout only: the signals are the same.
#[test]
fn stored_transposes_give_the_same_signals() {
    let mlp = &nets()[3];
    let x = init::gaussian(7, 0, N, D, 1.0);
    let g = from_rows::<f64>(&init::gaussian(8, 0, N, K, 1.0), N, K);
    let p = Params::<f64>::read(mlp);
    let mut q = p.clone();
    q.store_transposes();
    let xm = from_rows::<f64>(&x, N, D);
    let (trace, _) = forward(&p, &xm);
    let (mut a, mut b) = (signals(&p), signals(&p));
    p.backprop(
        xm.as_ref(),
        &trace,
        Cotangent::Rows(g.as_ref()),
        &mut a,
        None,
    );
    q.backprop(
        xm.as_ref(),
        &trace,
        Cotangent::Rows(g.as_ref()),
        &mut b,
        None,
    );
    for (a, b) in a.iter().zip(&b) {
        assert!(rel(&rows(a), &rows(b)) < 1e-14);
    }
    assert!(p.layers().zip(q.layers()).all(|(a, b)| a.same(b)));
}

/// The tiled copies against the plain index definitions, on sizes that are not multiples of
/// the tile (one tile, several, a remainder on either side) and on a 1 x 1 and an empty
/// matrix: every entry exact (a copy rounds nothing).
#[test]
fn tiled_transposes_equal_their_definitions() {
    for (rows, cols) in [
        (0, 3),
        (1, 1),
        (5, 7),
        (32, 32),
        (33, 70),
        (70, 33),
        (100, 64),
    ] {
        let v: Vec<f64> = (0..rows * cols).map(|k| k as f64 * 0.5 - 3.0).collect();
        let m = from_rows::<f64>(&v, rows, cols);
        let t = transposed(m.as_ref());
        let back = init::transpose(&v, rows, cols);
        assert_eq!(
            (m.nrows(), m.ncols(), t.nrows(), t.ncols()),
            (rows, cols, cols, rows)
        );
        for i in 0..rows {
            for j in 0..cols {
                assert_eq!(
                    m[(i, j)],
                    v[i * cols + j],
                    "from_rows ({i}, {j}) of {rows} x {cols}"
                );
                assert_eq!(
                    t[(j, i)],
                    v[i * cols + j],
                    "transposed ({j}, {i}) of {rows} x {cols}"
                );
                assert_eq!(
                    back[j * rows + i],
                    v[i * cols + j],
                    "init::transpose of {rows} x {cols}"
                );
            }
        }
    }
}
