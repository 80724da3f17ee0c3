//! Lanczos with full reorthogonalization: the largest eigenvalue of a symmetric operator
//! known only by its product with a vector.
//!
//! After `j` steps from a random unit vector, `A V_j = V_j T_j + beta_j v_{j+1} e_j^T`
//! (Paige), `T_j` tridiagonal with `alpha_i = v_i^T A v_i` on its diagonal and `beta_i` off
//! it. Every new vector is orthogonalized against the whole basis, twice ("twice is
//! enough", Giraud et al. 2005), so `V_j` stays orthonormal in floating point. The
//! eigenvalues of `T_j` (Ritz values) interlace with `A`'s (Cauchy): the largest, `theta`,
//! is at most `lambda_max(A)`, and the `i`-th largest at most `A`'s `i`-th largest. The
//! residual of its Ritz vector is `||A y - theta y|| = |beta_j s_j|` (`s_j` the last
//! component of `theta`'s eigenvector of `T_j`): some eigenvalue of `A` lies within it of
//! `theta`, and within `residual^2 / gap` once `theta` is separated from the rest.
//!
//! The basis and the products stay on the device; `alpha` and `beta` are read back every
//! [`CHECK_EVERY`] steps to test convergence (the one synchronization).

use burn::tensor::{DType, Device, Tensor, TensorData};
use faer::{Mat, Side};

use ntk_numerics::spectrum::{binary_exponent, times_pow2};

use super::unit_roundoff;

/// Steps between convergence checks.
pub const CHECK_EVERY: usize = 8;

/// The largest Ritz value and how far to trust it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Ritz {
    /// The largest Ritz value: a lower bound on `lambda_max(A)`.
    pub theta: f64,
    /// `|beta_j s_j|`: an eigenvalue of `A` lies within this of `theta`.
    pub residual: f64,
    /// All Ritz values, ascending (the `i`-th largest bounds `A`'s `i`-th largest below).
    pub values: Vec<f64>,
    pub steps: usize,
    /// The residual met the tolerance, or the Krylov space became invariant (the Ritz
    /// values are then eigenvalues).
    pub converged: bool,
}

/// Runs Lanczos on `apply` (the product `A v` for `v` of shape `n x 1`) from a seeded random
/// start until the largest Ritz value's residual is at most `tolerance(theta)`, the Krylov
/// space is invariant, or `max_steps` steps.
pub fn largest(
    apply: &mut dyn FnMut(Tensor<2>) -> Tensor<2>,
    n: usize,
    device: &Device,
    dtype: DType,
    max_steps: usize,
    seed: u64,
    tolerance: &dyn Fn(f64) -> f64,
) -> crate::Result<Ritz> {
    let max_steps = max_steps.clamp(1, n);
    let mut v = start_vector(n, seed, device, dtype);
    let mut basis = v.clone();
    let (mut alphas, mut betas) = (Vec::new(), Vec::new());
    for step in 1..=max_steps {
        let mut w = apply(v.clone());
        alphas.push(v.clone().transpose().matmul(w.clone()));
        for _ in 0..2 {
            let c = basis.clone().transpose().matmul(w.clone());
            w = w - basis.clone().matmul(c);
        }
        let beta = norm(w.clone(), dtype);
        betas.push(beta.clone());
        if step % CHECK_EVERY == 0 || step == max_steps {
            let ritz = ritz(&alphas, &betas, n, unit_roundoff(dtype), tolerance)?;
            if ritz.converged || step == max_steps {
                return Ok(ritz);
            }
        }
        v = w / beta;
        basis = Tensor::cat(vec![basis, v.clone()], 1);
    }
    unreachable!("the loop returns at its last step")
}

/// [`largest`] on the host in f64: `apply` returns `A v` for `v` of length `n`; the basis is
/// held as host vectors; `progress` shows the steps as a bar with its ETA (a line every 30 s
/// without a terminal). Tests convergence ([`ritz_of`]) after every step, not every
/// [`CHECK_EVERY`] as [`largest`] does: on the host nothing waits on a read back, and the
/// test's `j x j` tridiagonal eigensolve is nothing beside a product with an `n x n` kernel
/// (at `n = 2000` this saved about 4 of the 16-24 steps a kernel took).
pub fn host_largest(
    n: usize,
    apply: &dyn Fn(&[f64]) -> Vec<f64>,
    (max_steps, seed): (usize, u64),
    tolerance: &dyn Fn(f64) -> f64,
    progress: &ntk_system::progress::Reporter,
) -> crate::Result<Ritz> {
    let max_steps = max_steps.clamp(1, n);
    let mut v = start_values(n, seed);
    let mut basis: Vec<Vec<f64>> = vec![v.clone()];
    let (mut alphas, mut betas) = (Vec::new(), Vec::new());
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    let bar = progress.long_bar(max_steps as u64, "lanczos".into());
    for step in 1..=max_steps {
        bar.inc(1);
        let mut w = apply(&v);
        alphas.push(dot(&v, &w));
        for _ in 0..2 {
            for q in &basis {
                let c = dot(q, &w);
                w.iter_mut().zip(q).for_each(|(wi, qi)| *wi -= c * qi);
            }
        }
        let beta = host_norm(&w);
        betas.push(beta);
        let ritz = ritz_of(&alphas, &betas, n, f64::EPSILON, tolerance)?;
        if ritz.converged || step == max_steps {
            bar.finish_and_clear();
            return Ok(ritz);
        }
        v = w.iter().map(|x| x / beta).collect();
        basis.push(v.clone());
    }
    unreachable!("the loop returns at its last step")
}

/// `||w||` of the `n x 1` tensor `w` as a `1 x 1` tensor, formed as `m ||w / m||` with `m =
/// max |w_i|` so that no square overflows or underflows (`||w||^2` overflows f64 once `||w||`
/// passes about `1.3e154`, f32 once it passes about `1.8e19`: a kernel of that scale, whose
/// products are finite, would otherwise give an infinite `beta`; round 99, D4). A zero `w`
/// gives 0.
fn norm(w: Tensor<2>, dtype: DType) -> Tensor<2> {
    let tiny = match dtype {
        DType::F64 => f64::MIN_POSITIVE,
        _ => f64::from(f32::MIN_POSITIVE),
    };
    let m = w.clone().abs().max().reshape([1, 1]);
    let unit = w / m.clone().clamp_min(tiny);
    unit.powi_scalar(2).sum().sqrt().reshape([1, 1]) * m
}

/// [`norm`] of a host vector: `m ||w / m||`, `m = max |w_i|` (0 for a zero vector; not
/// finite when an entry is not).
pub fn host_norm(w: &[f64]) -> f64 {
    if w.iter().any(|x| x.is_nan()) {
        return f64::NAN;
    }
    let m = w.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    if m == 0.0 || m.is_infinite() {
        return m;
    }
    m * w.iter().map(|x| (x / m).powi(2)).sum::<f64>().sqrt()
}

/// A unit vector with independent standard normal entries (seeded), so that no eigenvector
/// is missed but with probability zero.
fn start_vector(n: usize, seed: u64, device: &Device, dtype: DType) -> Tensor<2> {
    Tensor::from_data(
        TensorData::new(start_values(n, seed), [n, 1]),
        (device, dtype),
    )
}

/// The values of the start vector `seed` gives: every device's Lanczos starts from the same
/// vector.
pub fn start_values(n: usize, seed: u64) -> Vec<f64> {
    let mut x = ntk_model::init::gaussian(seed, 0, n, 1, 1.0);
    let norm = x.iter().map(|v| v * v).sum::<f64>().sqrt();
    x.iter_mut().for_each(|v| *v /= norm);
    x
}

/// [`ritz_of`] the coefficients held as `1 x 1` tensors, read back first.
fn ritz(
    alphas: &[Tensor<2>],
    betas: &[Tensor<2>],
    n: usize,
    eps: f64,
    tolerance: &dyn Fn(f64) -> f64,
) -> crate::Result<Ritz> {
    let read = |t: &[Tensor<2>]| -> crate::Result<Vec<f64>> {
        Tensor::cat(t.to_vec(), 0)
            .try_into_vec_as::<f64>()
            .map_err(|e| crate::Error::Lanczos(format!("reading the Lanczos coefficients: {e:?}")))
    };
    ritz_of(&read(alphas)?, &read(betas)?, n, eps, tolerance)
}

/// The Ritz values of `T` from the coefficients `alpha_1..alpha_j` and `beta_1..beta_j` of
/// `j` steps on an `n x n` operator in arithmetic of unit roundoff `eps`: `T` is cut at the
/// first numerically vanishing `beta` (an invariant Krylov space: the steps after it are not
/// Lanczos steps), and the largest value's residual `|beta_j s_j|` is tested against
/// `tolerance(theta)` (an absolute residual). A `beta` or `alpha` that is not finite is an
/// error: the operator overflowed (it was once taken for an invariant space, round 99 D4).
pub fn ritz_of(
    alpha: &[f64],
    beta: &[f64],
    n: usize,
    eps: f64,
    tolerance: &dyn Fn(f64) -> f64,
) -> crate::Result<Ritz> {
    if alpha.is_empty() || beta.len() != alpha.len() {
        return Err(crate::Error::Lanczos(format!(
            "Lanczos: {} alpha and {} beta coefficients; expected as many, at least one",
            alpha.len(),
            beta.len()
        )));
    }
    let scale = alpha
        .iter()
        .filter(|a| a.is_finite())
        .fold(0.0f64, |m, a| m.max(a.abs()));
    let vanishing = |b: f64| b <= (n as f64).sqrt() * eps * scale;
    // The values after a vanishing beta are those of `w / beta`: not Lanczos steps, and may
    // not be finite.
    let (steps, invariant) = match beta.iter().position(|&b| !b.is_finite() || vanishing(b)) {
        Some(i) if !beta[i].is_finite() => return Err(crate::Error::LanczosNonFinite),
        Some(i) => (i + 1, true),
        None => (alpha.len(), alpha.len() == n),
    };
    if alpha[..steps].iter().any(|a| !a.is_finite()) {
        return Err(crate::Error::LanczosNonFinite);
    }
    // T scaled by a power of two to entries near 1 (exact), so that its eigensolver neither
    // overflows nor underflows where T's eigenvalues are in range; the values scaled back
    // (infinite where one is past f64's range).
    let top = alpha[..steps]
        .iter()
        .chain(&beta[..steps - 1])
        .fold(0.0f64, |m, v| m.max(v.abs()));
    let e = if top > 0.0 { binary_exponent(top) } else { 0 };
    let t = Mat::<f64>::from_fn(steps, steps, |i, j| {
        let v = if i == j {
            alpha[i]
        } else if i == j + 1 {
            beta[j]
        } else if j == i + 1 {
            beta[i]
        } else {
            0.0
        };
        times_pow2(v, -e)
    });
    let eig = t
        .self_adjoint_eigen(Side::Lower)
        .map_err(|e| crate::Error::Lanczos(format!("Lanczos: tridiagonal eigensolver: {e:?}")))?;
    let values: Vec<f64> = (0..steps).map(|i| times_pow2(eig.S()[i], e)).collect();
    let theta = values[steps - 1];
    let residual = if invariant {
        0.0
    } else {
        (beta[steps - 1] * eig.U()[(steps - 1, steps - 1)]).abs()
    };
    Ok(Ritz {
        theta,
        residual,
        values,
        steps,
        converged: invariant || residual <= tolerance(theta),
    })
}
