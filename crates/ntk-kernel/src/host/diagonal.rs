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

use std::sync::Arc;

use faer::Mat;
use ntk_engine::host::mlp::{Params, Pool};
use ntk_model::Mlp;

use super::{Forward, Real, Reuse};

/// The bytes of factors one group of rows may hold.
const GROUP_BYTES: usize = 64 << 20;

/// How a route forms `K(x, x)` from the factors, which decides where it overflows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Formed {
    /// Every square norm, product and sum in `T`: the structured routes (host and device),
    /// whose Grams `A A^T` and `D D^T` are formed in the run's precision.
    InPrecision,
    /// The per-sample gradient's entries in `T` (`beta_l a_i delta_j`, the biases' `delta_j`),
    /// their squares summed in f64: the autodiff route. A square norm `|a|^2` beyond `T`'s
    /// range is no overflow there while every entry `beta |a_i| |delta_j|` is within it.
    FromGradients,
}

/// The largest diagonal entry `K_o(x, x)` of each of the `n` row-major inputs `x` (over the
/// outputs `o` when `per_output`, else their sum over `outputs`), formed as `formed` says
/// and widened to f64 (an overflow is infinite, a NaN stays NaN).
pub fn largest_diagonal<T: Real>(
    mlp: &Mlp,
    (x, n): (&[f64], usize),
    outputs: &[usize],
    per_output: bool,
    formed: Formed,
) -> Vec<f64> {
    diagonals::<T>(mlp, (x, n), outputs, per_output, formed)
        .iter()
        .map(|row| {
            row.iter().fold(0.0, |m: f64, v| {
                if v.is_nan() || m.is_nan() {
                    f64::NAN
                } else {
                    m.max(*v)
                }
            })
        })
        .collect()
}

/// Each of the `n` row-major inputs' diagonal entries: `K_o(x, x)` for each of `outputs`
/// when `per_output` (the diagonal blocks' diagonals of `probe.output = "full"`), else the
/// one entry of their sum, formed as `formed` says and widened to f64. The underflow check
/// reads the smallest of a row's entries, the overflow check the largest
/// ([`largest_diagonal`]): a full-output kernel whose sum is normal may hold one output's
/// subnormal entry (hundred-and-ninth hostile round, D1).
pub fn diagonals<T: Real>(
    mlp: &Mlp,
    (x, n): (&[f64], usize),
    outputs: &[usize],
    per_output: bool,
    formed: Formed,
) -> Vec<Vec<f64>> {
    let params = super::shared::<T>(mlp);
    let d = x.len().checked_div(n).unwrap_or(0);
    let widths: usize = params.hidden().iter().map(|l| l.fan_out()).sum();
    let per_row = std::mem::size_of::<T>() * (d + widths * (1 + outputs.len().max(1)));
    let how = How {
        outputs,
        per_output,
        formed,
        bias: mlp.config().bias,
    };
    grouped(&params, (x, n, d), &how, GROUP_BYTES / per_row.max(1))
}

/// What [`diagonals`] forms, beside the network and the inputs.
struct How<'a> {
    outputs: &'a [usize],
    per_output: bool,
    formed: Formed,
    /// Whether the layers have biases (the bias term `b` is 1, else 0).
    bias: bool,
}

/// [`diagonals`] in groups of `rows` rows.
fn grouped<T: Real>(
    params: &Arc<Params<T>>,
    (x, n, d): (&[f64], usize, usize),
    how: &How,
    rows: usize,
) -> Vec<Vec<f64>> {
    let rows = rows.clamp(1, n.max(1));
    let mut out = Vec::with_capacity(n);
    for start in (0..n).step_by(rows) {
        let len = rows.min(n - start);
        let group = &x[start * d..(start + len) * d];
        out.extend(group_diagonal(params, (group, len), how));
    }
    out
}

/// One factor's row `i`, columns `cols`: the layer's input `a` or its signals `delta`.
type Row<'a, T> = (&'a Mat<T>, usize, std::ops::Range<usize>);

/// The entries of a factor's row.
fn entries<'a, T: Real>((m, i, cols): &Row<'a, T>) -> impl Iterator<Item = T> + 'a {
    let (m, i) = (*m, *i);
    cols.clone().map(move |j| m[(i, j)])
}

/// `(beta^2 |a|^2 + b) |delta|^2` for one layer at one input (`delta` `None` for the output
/// layer, whose signal is the unit cotangent: the factor 1), formed as `formed` says.
///
/// A hidden layer's `|a|^2` and `|delta|^2` are each formed at their row's power of two where
/// the row is far from unit scale ([`super::far_exponent`]) and the product scaled back, as
/// the structured routes form their Grams, so that a term in range is not refused as an
/// overflow of one factor's square (hundred-and-twenty-second hostile round, D2: `|a|^2` past
/// f64 beside `|delta|^2` of 1e-330, a kernel of 4e-9, was "non-finite" on every route). The
/// output layer's `|a_L|^2` is formed as it is (before its scale `beta_out^2`), as the routes
/// form it; the autodiff route's sum of squares, in f64, at the powers of two throughout.
fn layer_term<T: Real>(formed: Formed, beta: f64, b: f64, a: Row<T>, delta: Option<Row<T>>) -> f64 {
    let largest = |r: &Row<T>| entries(r).fold(0.0f64, |m, v| m.max(v.f64().abs()));
    match formed {
        Formed::InPrecision => {
            let f32 = std::mem::size_of::<T>() == 4;
            let far = |r: &Row<T>| super::far_exponent(largest(r), f32);
            let (ea, ed) = match &delta {
                Some(r) => (far(&a), far(r)),
                None => (0, 0),
            };
            if ea == 0 && ed == 0 {
                let sq = |r: &Row<T>| entries(r).fold(T::of(0.0), |s, v| s + v * v);
                let g = sq(&a) * T::of(beta * beta) + T::of(b);
                return match &delta {
                    Some(r) => (g * sq(r)).f64(),
                    None => g.f64(),
                };
            }
            // The square norms in T at the powers of two, their product in f64 scaled back.
            let sq = |r: &Row<T>, e: i32| {
                entries(r)
                    .fold(T::of(0.0), |s, v| {
                        let v = T::of(libm::scalbn(v.f64(), -e));
                        s + v * v
                    })
                    .f64()
            };
            let (g, h) = (sq(&a, ea), delta.as_ref().map_or(1.0, |r| sq(r, ed)));
            libm::scalbn(g * h * beta * beta, 2 * (ea + ed)) + libm::scalbn(b * h, 2 * ed)
        }
        Formed::FromGradients => {
            // The largest gradient entry, formed in T as the backward forms it.
            let top = T::of(beta) * T::of(largest(&a));
            let top = delta.as_ref().map_or(top, |r| top * T::of(largest(r)));
            if !top.f64().is_finite() {
                return f64::INFINITY;
            }
            let far = |r: &Row<T>| super::far_exponent(largest(r), false);
            let sq = |r: &Row<T>, e: i32| {
                entries(r)
                    .map(|v| libm::scalbn(v.f64(), -e))
                    .map(|v| v * v)
                    .sum::<f64>()
            };
            let ea = far(&a);
            let g = libm::scalbn(beta * beta * sq(&a, ea), 2 * ea);
            match &delta {
                None => g + b,
                Some(r) => {
                    let ed = far(r);
                    let h = sq(r, ed);
                    libm::scalbn(beta * beta * sq(&a, ea) * h, 2 * (ea + ed))
                        + libm::scalbn(b * h, 2 * ed)
                }
            }
        }
    }
}

/// [`diagonals`] of one group of `n` rows.
fn group_diagonal<T: Real>(
    params: &Arc<Params<T>>,
    (x, n): (&[f64], usize),
    how: &How,
) -> Vec<Vec<f64>> {
    let fwd = Forward::new(Arc::clone(params), x, n, None, Reuse::OneKernel);
    let depth = params.depth();
    let deltas = fwd.deltas(depth, params.output(), how.outputs, &mut Pool::default());
    let b = if how.bias { 1.0 } else { 0.0 };
    // Each output alone, or all of them as one group (their signals side by side).
    let groups: Vec<(usize, f64)> = if how.per_output {
        (0..how.outputs.len()).map(|o| (o, 1.0)).collect()
    } else {
        vec![(0, how.outputs.len() as f64)]
    };
    let whole = |m: &Mat<T>| 0..m.ncols();
    (0..n)
        .map(|i| {
            let top = fwd.input(depth);
            let beta_out = params.output().beta();
            let out_term = layer_term(how.formed, beta_out, b, (top, i, whole(top)), None);
            groups
                .iter()
                .map(|&(o, copies)| {
                    // The sum in T where the route sums in T.
                    let mut k = T::of(copies * out_term);
                    let mut wide = copies * out_term;
                    for (l, delta) in deltas.iter().enumerate() {
                        let m = params.hidden()[l].fan_out();
                        let cols = if how.per_output {
                            o * m..(o + 1) * m
                        } else {
                            whole(delta)
                        };
                        let a = fwd.input(l);
                        let beta = params.hidden()[l].beta();
                        let term = layer_term(
                            how.formed,
                            beta,
                            b,
                            (a, i, whole(a)),
                            Some((delta, i, cols)),
                        );
                        k += T::of(term);
                        wide += term;
                    }
                    match how.formed {
                        Formed::InPrecision => k.f64(),
                        Formed::FromGradients => wide,
                    }
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::{DType, Device};
    use ntk_model::{ActivationKind, MlpConfig};

    /// The diagonal equals the kernel's, summed over outputs and per output, in f64 and in
    /// f32, formed either way, whatever the group size; an input scaled past f32's square
    /// range is infinite in f32 where the route squares in f32, and finite where it sums the
    /// gradient's f32 entries in f64.
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
            let params = crate::host::shared::<f64>(&mlp);
            for formed in [Formed::InPrecision, Formed::FromGradients] {
                let how = How {
                    outputs: &all,
                    per_output: false,
                    formed,
                    bias,
                };
                for rows in [1, 3, n] {
                    let diag = grouped(&params, (&x, n, d), &how, rows);
                    for (i, got) in diag.iter().map(|r| r[0]).enumerate() {
                        let want = k.data[i * n + i];
                        assert!((got - want).abs() <= 1e-12 * want, "{i}: {got} {want}");
                    }
                }
                let per = largest_diagonal::<f32>(&mlp, (&x, n), &all, true, formed);
                for (i, got) in per.iter().enumerate() {
                    let want = all
                        .iter()
                        .map(|&o| super::super::ntk::<f64>(&mlp, &x, n, &[o]).data[i * n + i])
                        .fold(0.0, f64::max);
                    assert!((got - want).abs() <= 1e-5 * want, "{i}: {got} {want}");
                }
                let each = diagonals::<f64>(&mlp, (&x, n), &all, true, formed);
                for (o, &out) in all.iter().enumerate() {
                    let k = super::super::ntk::<f64>(&mlp, &x, n, &[out]);
                    for (i, row) in each.iter().enumerate() {
                        let want = k.data[i * n + i];
                        assert!((row[o] - want).abs() <= 1e-12 * want, "{i} {o}: {row:?}");
                    }
                }
            }
        }
        let cfg = MlpConfig::new(d, 16, 2, ActivationKind::Relu).with_seed(1);
        let mlp = Mlp::new(&cfg, &Device::flex(), DType::F64).unwrap();
        let mut big = x.clone();
        big[3 * d..4 * d].iter_mut().for_each(|v| *v *= 1e25);
        let diag = largest_diagonal::<f32>(&mlp, (&big, n), &[0], false, Formed::InPrecision);
        assert!(diag[3].is_infinite(), "{diag:?}");
        assert!(
            diag.iter()
                .enumerate()
                .all(|(i, v)| i == 3 || v.is_finite())
        );
        for (formed, wide) in [
            (
                Formed::FromGradients,
                largest_diagonal::<f32>(&mlp, (&big, n), &[0], false, Formed::FromGradients),
            ),
            (
                Formed::InPrecision,
                largest_diagonal::<f64>(&mlp, (&big, n), &[0], false, Formed::InPrecision),
            ),
        ] {
            assert!(wide.iter().all(|v| v.is_finite()), "{formed:?}: {wide:?}");
        }
        // Past the gradient's own range: an entry beta a_i delta_j beyond f32's.
        big[3 * d..4 * d].iter_mut().for_each(|v| *v *= 1e13);
        let grads = largest_diagonal::<f32>(&mlp, (&big, n), &[0], false, Formed::FromGradients);
        assert!(grads[3].is_infinite(), "{grads:?}");
    }
}
