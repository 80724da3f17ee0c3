//! The structured NTK on the CPU with host GEMMs ([`crate::linalg`]: the system OpenBLAS by
//! default, faer without the `openblas` feature): the same algebra as
//! [`crate::structured`] (see its doc for the formula), with the Gram products computed into
//! the lower triangle only (SYRK, half the FLOPs) and the Hadamard accumulation done in
//! place on that triangle.
//!
//! Why a second engine: on this class of machine (2 cores, AVX-512) OpenBLAS's SGEMM runs at
//! ~190 GFLOP/s and faer's at ~100 where the Burn CPU backends' matmul runs at ~30 (see
//! `experiments/bench/README.md`), and the NTK is nothing but GEMMs. GPU backends keep the
//! device path. Both are tested against the autodiff reference.

use faer::{Mat, MatRef};
use ntk_model::{Activation, Mlp};

use crate::kernel::Kernel;
pub use crate::linalg::Real;
use crate::linalg::{gemm, gram_lower as syrk_lower, gram_lower_into};

/// A row-major `rows x cols` f64 buffer as a faer matrix in `T`.
fn mat<T: Real>(v: &[f64], rows: usize, cols: usize) -> Mat<T> {
    Mat::from_fn(rows, cols, |i, j| T::of(v[i * cols + j]))
}

/// `s(z) gamma` and `s'(z) gamma`, elementwise, column by column.
pub fn activate<T: Real>(z: &Mat<T>, act: &Activation, gamma: f64) -> (Mat<T>, Mat<T>) {
    let (n, m) = (z.nrows(), z.ncols());
    let mut a = Mat::<T>::zeros(n, m);
    let mut s = Mat::<T>::zeros(n, m);
    activate_into(z, act, gamma, &mut a, &mut s);
    (a, s)
}

/// [`activate`] into existing buffers of `z`'s shape (column-major).
pub fn activate_into<T: Real>(
    z: &Mat<T>,
    act: &Activation,
    gamma: f64,
    a: &mut Mat<T>,
    s: &mut Mat<T>,
) {
    let g = T::of(gamma);
    for j in 0..z.ncols() {
        let zc = z.col_as_slice(j);
        let (ac, sc) = (a.col_as_slice_mut(j), s.col_as_slice_mut(j));
        let cols = zc.iter().zip(ac.iter_mut()).zip(sc.iter_mut());
        match act {
            Activation::Relu => {
                for ((z, a), s) in cols {
                    let on = *z > T::of(0.0);
                    *a = if on { *z * g } else { T::of(0.0) };
                    *s = if on { g } else { T::of(0.0) };
                }
            }
            Activation::Linear => {
                for ((z, a), s) in cols {
                    *a = *z * g;
                    *s = g;
                }
            }
            other => {
                for ((z, a), s) in cols {
                    let v = z.f64();
                    *a = T::of(other.eval(v) * gamma);
                    *s = T::of(other.derivative(v) * gamma);
                }
            }
        }
    }
}

/// The lower triangle of `M M^T`.
fn gram_lower<T: Real>(m: MatRef<'_, T>) -> Mat<T> {
    syrk_lower(m, T::of(1.0))
}

/// The per-layer factors on the host: layer inputs `a_0..a_L` and, for the selected outputs
/// side by side, the backpropagated signals `D_1..D_L`.
pub struct HostFactors<T: Real> {
    pub inputs: Vec<Mat<T>>,
    pub deltas: Vec<Mat<T>>,
}

/// One forward and the hand-written backward (see [`crate::structured`]).
pub fn factors<T: Real>(mlp: &Mlp, x: &[f64], n: usize, outputs: &[usize]) -> HostFactors<T> {
    let cfg = mlp.config();
    let depth = cfg.depth;
    let scales = mlp.scales();
    let act = mlp.activation();
    let sizes = cfg.layer_sizes();
    let weights: Vec<Mat<T>> = (0..=depth)
        .map(|l| {
            let v: Vec<f64> = mlp.layers[l]
                .weight
                .val()
                .try_into_vec_as()
                .expect("reading weights");
            mat(&v, sizes[l], sizes[l + 1])
        })
        .collect();
    let biases: Vec<Option<Vec<f64>>> = mlp
        .layers
        .iter()
        .map(|layer| {
            layer
                .bias
                .as_ref()
                .map(|b| b.val().try_into_vec_as().expect("reading biases"))
        })
        .collect();

    let mut inputs = vec![mat::<T>(x, n, sizes[0])];
    let mut slopes = Vec::with_capacity(depth);
    for l in 0..depth {
        let mut z = Mat::<T>::zeros(n, sizes[l + 1]);
        gemm(
            z.as_mut(),
            inputs[l].as_ref(),
            weights[l].as_ref(),
            T::of(scales.beta[l]),
        );
        if let Some(b) = &biases[l] {
            for (j, bj) in b.iter().enumerate() {
                z.col_as_slice_mut(j)
                    .iter_mut()
                    .for_each(|v| *v += T::of(*bj));
            }
        }
        let (a, s) = activate(&z, act, scales.gamma[l]);
        inputs.push(a);
        slopes.push(s);
    }

    let m = cfg.width;
    // W_l^T stored contiguously: faer's GEMM is ~30% slower with a transposed operand.
    let weights_t: Vec<Mat<T>> = weights.iter().map(|w| w.transpose().to_owned()).collect();
    let mut per_output: Vec<Vec<Mat<T>>> = Vec::with_capacity(outputs.len());
    for &o in outputs {
        let mut ds: Vec<Mat<T>> = Vec::with_capacity(depth);
        if depth > 0 {
            // D_L = s'(Z_L) gamma_L .* (beta_out W_out[:, o])^T.
            let mut d = Mat::<T>::zeros(n, m);
            for j in 0..m {
                let w = T::of(scales.beta_out) * weights[depth][(j, o)];
                let (dc, sc) = (d.col_as_slice_mut(j), slopes[depth - 1].col_as_slice(j));
                dc.iter_mut().zip(sc).for_each(|(d, s)| *d = *s * w);
            }
            for l in (0..depth - 1).rev() {
                // D_l = beta_{l+1} (D_{l+1} W_{l+1}^T) .* s'(Z_l) gamma_l.
                let mut back = Mat::<T>::zeros(n, m);
                gemm(
                    back.as_mut(),
                    d.as_ref(),
                    weights_t[l + 1].as_ref(),
                    T::of(scales.beta[l + 1]),
                );
                for j in 0..m {
                    let (bc, sc) = (back.col_as_slice_mut(j), slopes[l].col_as_slice(j));
                    bc.iter_mut().zip(sc).for_each(|(b, s)| *b *= *s);
                }
                ds.push(std::mem::replace(&mut d, back));
            }
            ds.push(d);
            ds.reverse();
        }
        per_output.push(ds);
    }
    // Several outputs: their signals side by side, so one Gram sums over them.
    let deltas: Vec<Mat<T>> = if per_output.len() == 1 {
        per_output.pop().expect("one output")
    } else {
        (0..depth)
            .map(|l| {
                let mut cat = Mat::<T>::zeros(n, m * per_output.len());
                for (slot, ds) in per_output.iter().enumerate() {
                    for j in 0..m {
                        cat.col_as_slice_mut(slot * m + j)
                            .copy_from_slice(ds[l].col_as_slice(j));
                    }
                }
                cat
            })
            .collect()
    };
    HostFactors { inputs, deltas }
}

/// The structured NTK, summed over `outputs` (one output: that output's kernel), in `T`.
pub fn ntk<T: Real>(mlp: &Mlp, x: &[f64], n: usize, outputs: &[usize]) -> Kernel {
    let f = factors::<T>(mlp, x, n, outputs);
    let scales = mlp.scales();
    let depth = mlp.depth();
    let bias = if mlp.config().bias { 1.0 } else { 0.0 };
    let copies = outputs.len() as f64;

    // K = copies (beta_out^2 G_L + b) + sum_l (beta_l^2 G_{l-1} + b) .* H_l, lower triangle.
    let mut k = gram_lower(f.inputs[depth].as_ref());
    let (scale, shift) = (
        T::of(copies * scales.beta_out * scales.beta_out),
        T::of(copies * bias),
    );
    for j in 0..n {
        k.col_as_slice_mut(j)[j..]
            .iter_mut()
            .for_each(|v| *v = *v * scale + shift);
    }
    // Two n x n buffers for all layers: fresh ones per layer would cost page faults and
    // zeroing of 2L n^2 values.
    let (mut g, mut h) = (Mat::<T>::zeros(n, n), Mat::<T>::zeros(n, n));
    for l in 0..depth {
        gram_lower_into(&mut g, f.inputs[l].as_ref(), T::of(1.0));
        gram_lower_into(&mut h, f.deltas[l].as_ref(), T::of(1.0));
        let (b2, b) = (T::of(scales.beta[l] * scales.beta[l]), T::of(bias));
        for j in 0..n {
            let (gc, hc) = (&g.col_as_slice(j)[j..], &h.col_as_slice(j)[j..]);
            let kc = &mut k.col_as_slice_mut(j)[j..];
            for i in 0..kc.len() {
                kc[i] += (gc[i] * b2 + b) * hc[i];
            }
        }
    }
    let mut out = Kernel::zeros(n);
    for j in 0..n {
        for (r, v) in k.col_as_slice(j)[j..].iter().enumerate() {
            let i = j + r;
            let v = v.f64();
            out.data[i * n + j] = v;
            out.data[j * n + i] = v;
        }
    }
    out
}
