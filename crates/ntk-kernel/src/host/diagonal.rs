//! Every input's kernel diagonal `K(x, x)` of an MLP without normalization, in the precision
//! `T` the structured route forms its kernel in, without the kernel: from the factors of a
//! group of rows at a time (one forward and one backward over every input, `O(n P)` work
//! and bounded memory, where the kernel is `O(n^2 P)`),
//!
//! ```text
//! K_o(x, x) = beta_out^2 |a_L(x)|^2 + b + sum_l (beta_l^2 |a_{l-1}(x)|^2 + b) |delta_{l,o}(x)|^2,
//! ```
//!
//! the diagonal of [`super::ntk`]'s formula (`|a|^2` the diagonal of the Gram `A A^T`), each
//! square norm, product and sum in `T` as the route's Gram products and Hadamard sums form
//! them, so that an entry that overflows there overflows here (to the order of rounding).
//! Summed over `outputs`, or one output at a time (`per_output`, the diagonal blocks of
//! `probe.output = "full"`). For the range check of a run's inputs before any work: an input
//! whose kernel overflows need not be the one of the largest norm when the weights are given
//! (a unit that only some inputs reach).

use faer::Mat;
use ntk_engine::host::mlp::{Params, Pool};
use ntk_model::Mlp;

use super::{Forward, Real, Reuse};

/// The bytes of factors one group of rows may hold.
const GROUP_BYTES: usize = 64 << 20;

/// The largest diagonal entry `K_o(x, x)` of each of the `n` row-major inputs `x` (over the
/// outputs `o` when `per_output`, else their sum over `outputs`), formed in `T` and widened
/// to f64 (an overflow is infinite, a NaN stays NaN).
pub fn largest_diagonal<T: Real>(
    mlp: &Mlp,
    x: &[f64],
    n: usize,
    outputs: &[usize],
    per_output: bool,
) -> Vec<f64> {
    let params = Params::<T>::read(mlp);
    let d = x.len().checked_div(n).unwrap_or(0);
    let widths: usize = params.hidden().iter().map(|l| l.fan_out()).sum();
    let per_row = std::mem::size_of::<T>() * (d + widths * (1 + outputs.len().max(1)));
    grouped(
        mlp,
        &params,
        (x, n, d),
        outputs,
        per_output,
        GROUP_BYTES / per_row.max(1),
    )
}

/// [`largest_diagonal`] in groups of `rows` rows.
fn grouped<T: Real>(
    mlp: &Mlp,
    params: &Params<T>,
    (x, n, d): (&[f64], usize, usize),
    outputs: &[usize],
    per_output: bool,
    rows: usize,
) -> Vec<f64> {
    let rows = rows.clamp(1, n.max(1));
    let mut out = Vec::with_capacity(n);
    for start in (0..n).step_by(rows) {
        let len = rows.min(n - start);
        let group = &x[start * d..(start + len) * d];
        out.extend(group_diagonal(mlp, params, group, len, outputs, per_output));
    }
    out
}

/// [`largest_diagonal`] of one group of `n` rows.
fn group_diagonal<T: Real>(
    mlp: &Mlp,
    params: &Params<T>,
    x: &[f64],
    n: usize,
    outputs: &[usize],
    per_output: bool,
) -> Vec<f64> {
    let fwd = Forward::new(params, x, n, None, Reuse::OneKernel);
    let depth = params.depth();
    let deltas = fwd.deltas(depth, params.output(), outputs, &mut Pool::default());
    let bias = T::of(if mlp.config().bias { 1.0 } else { 0.0 });
    let beta2 = |beta: f64| T::of(beta * beta);
    // `|row i of m, columns cols|^2` in T.
    let sq = |m: &Mat<T>, i: usize, cols: std::ops::Range<usize>| {
        cols.fold(T::of(0.0), |s, j| s + m[(i, j)] * m[(i, j)])
    };
    // Each output alone, or all of them as one group (their signals side by side).
    let groups: Vec<(usize, T)> = if per_output {
        (0..outputs.len()).map(|o| (o, T::of(1.0))).collect()
    } else {
        vec![(0, T::of(outputs.len() as f64))]
    };
    (0..n)
        .map(|i| {
            let top = fwd.input(depth);
            let out_term = sq(top, i, 0..top.ncols()) * beta2(params.output().beta()) + bias;
            groups
                .iter()
                .map(|&(o, copies)| {
                    let mut k = copies * out_term;
                    for (l, delta) in deltas.iter().enumerate() {
                        let m = params.hidden()[l].fan_out();
                        let cols = if per_output {
                            o * m..(o + 1) * m
                        } else {
                            0..delta.ncols()
                        };
                        let a = fwd.input(l);
                        let g = sq(a, i, 0..a.ncols()) * beta2(params.hidden()[l].beta()) + bias;
                        k += g * sq(delta, i, cols);
                    }
                    k.f64()
                })
                .fold(0.0, |m: f64, v| {
                    if v.is_nan() || m.is_nan() {
                        f64::NAN
                    } else {
                        m.max(v)
                    }
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::{DType, Device};
    use ntk_model::{ActivationKind, MlpConfig};

    /// The diagonal equals the kernel's, summed over outputs and per output, in f64 and in
    /// f32, whatever the group size; an input scaled past f32's range is infinite there.
    #[test]
    fn the_diagonal_is_the_kernels() {
        let (n, d) = (7, 5);
        let x: Vec<f64> = (0..n * d)
            .map(|i| ((i * 37 % 11) as f64 - 5.0) / 3.0)
            .collect();
        for bias in [false, true] {
            let cfg = MlpConfig::new(d, 16, 3, ActivationKind::Tanh)
                .with_seed(4)
                .with_bias(bias)
                .with_output_dim(3);
            let mlp = Mlp::new(&cfg, &Device::flex(), DType::F64).unwrap();
            let all = [0, 1, 2];
            let k = super::super::ntk::<f64>(&mlp, &x, n, &all);
            let params = Params::<f64>::read(&mlp);
            for rows in [1, 3, n] {
                let diag = grouped(&mlp, &params, (&x, n, d), &all, false, rows);
                for (i, got) in diag.iter().enumerate() {
                    let want = k.data[i * n + i];
                    assert!((got - want).abs() <= 1e-12 * want, "{i}: {got} {want}");
                }
            }
            let per = largest_diagonal::<f32>(&mlp, &x, n, &all, true);
            for (i, got) in per.iter().enumerate() {
                let want = all
                    .iter()
                    .map(|&o| super::super::ntk::<f64>(&mlp, &x, n, &[o]).data[i * n + i])
                    .fold(0.0, f64::max);
                assert!((got - want).abs() <= 1e-5 * want, "{i}: {got} {want}");
            }
        }
        let cfg = MlpConfig::new(d, 16, 2, ActivationKind::Relu).with_seed(1);
        let mlp = Mlp::new(&cfg, &Device::flex(), DType::F64).unwrap();
        let mut big = x.clone();
        big[3 * d..4 * d].iter_mut().for_each(|v| *v *= 1e25);
        let diag = largest_diagonal::<f32>(&mlp, &big, n, &[0], false);
        assert!(diag[3].is_infinite(), "{diag:?}");
        assert!(
            diag.iter()
                .enumerate()
                .all(|(i, v)| i == 3 || v.is_finite())
        );
        let wide = largest_diagonal::<f64>(&mlp, &big, n, &[0], false);
        assert!(wide.iter().all(|v| v.is_finite()), "{wide:?}");
    }
}
