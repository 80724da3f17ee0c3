//! `lambda_min`, `lambda_max` and `kappa` of a kernel on its own device, without the full
//! spectrum: Lanczos on `K` for `lambda_max`, a blocked Cholesky factorization and Lanczos
//! on `K^{-1}` for `lambda_min` (`lambda_max(K^{-1}) = 1 / lambda_min(K)`).
//!
//! Cost: the factorization's `n^3 / 3` multiply-adds (as device matrix products, see
//! [`cholesky`]) against the full eigensolver's `~4 n^3 / 3` (half of it memory-bound
//! reduction to tridiagonal form); each Lanczos step is `n^2` more (a product with `K`, or
//! two triangular solves). Written in Burn tensor operations, so the same code runs on
//! wgpu, cuda and the CPU backends.
//!
//! Singularity follows [`ntk_numerics::spectrum`]: a kernel built with unit roundoff `eps` is
//! singular when `lambda_min <= tau = n eps lambda_max`. When the Cholesky factorization of
//! `K` itself breaks down (a pivot that is not positive: `K` is not numerically positive
//! definite), `K + s I` is factored instead (`s = tau`, then `16 tau`, `256 tau`): the
//! shift moves every eigenvalue by exactly `s`, so `lambda_min = 1 / theta - s`, and the
//! kernel is reported singular. Its rank is then bounded below by the number of Ritz
//! values of `K` above `tau` (interlacing), not counted exactly: the full spectrum
//! ([`ntk_numerics::spectrum::spectrum`]) gives the exact numerical rank.

pub mod cholesky;
pub mod dense;
pub mod lanczos;
pub mod tiled;

use burn::tensor::{DType, Device, Tensor, TensorData};
use serde::Serialize;

use ntk_numerics::kernel::Kernel;

/// The extreme eigenvalues of a kernel and what they say about conditioning.
#[derive(Clone, Debug, Serialize)]
pub struct Extreme {
    pub lambda_min: f64,
    pub lambda_max: f64,
    /// `lambda_max / lambda_min`, or infinite when the kernel is numerically singular.
    pub kappa: f64,
    pub singular: bool,
    /// `n` for a regular kernel; for a singular one a lower bound (Ritz values above
    /// `tolerance`).
    pub rank_lower_bound: usize,
    /// `tau = n eps lambda_max`.
    pub tolerance: f64,
    /// The diagonal shift of the factorization that succeeded (0: `K` itself).
    pub shift: f64,
    /// Lanczos steps for `lambda_max` and for `lambda_min`.
    pub steps: [usize; 2],
    /// Residual bounds of the two Ritz values, relative to them.
    pub relative_residuals: [f64; 2],
    /// Both Lanczos runs met their tolerance (or reached an invariant subspace).
    pub converged: bool,
}

impl Extreme {
    /// The conditioning numbers ([`ntk_numerics::spectrum::Summary`]); the rank is
    /// [`Self::rank_lower_bound`].
    pub fn summary(&self) -> ntk_numerics::spectrum::Summary {
        ntk_numerics::spectrum::Summary {
            lambda_min: self.lambda_min,
            lambda_max: self.lambda_max,
            kappa: (!self.singular).then_some(self.kappa),
            rank: self.rank_lower_bound,
            singular: self.singular,
        }
    }
}

/// How the extreme eigenvalues are computed.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Block width of the Cholesky factorization.
    pub block: usize,
    /// Lanczos steps at most, per run.
    pub max_steps: usize,
    /// Seed of the Lanczos start vectors.
    pub seed: u64,
    /// Form `L^{-1}` once (`n^3 / 3` more multiply-adds) and apply `K^{-1}` as two
    /// matrix-vector products per Lanczos step ([`cholesky::Factor::inverse`]) instead of
    /// `4 n / b` block substitutions. Off by default: the substitutions were measured (an
    /// H100 through wgpu, n = 10,000: the whole solve 2.3 s); this trade, meant for
    /// launch-bound devices, is tested but not yet timed on one.
    pub explicit_inverse: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            block: 256,
            max_steps: 400,
            seed: 0x5eed,
            explicit_inverse: false,
        }
    }
}

/// The residual a Ritz value `theta` must reach: `1e-10 |theta|`, or what the precision of
/// the operator allows (`64 eps` times the condition of the product: 1 for `K`, the current
/// `kappa` estimate for `K^{-1}`) relative to `|theta|`. Relative, so that the answer does
/// not depend on the kernel's scale (round 99, D4: an absolute `1e-10` stopped Lanczos on
/// `K^{-1}` at its first step once the kernel was about `1e10`, and `lambda_min` came out
/// ten times too large).
fn tolerance(eps: f64, condition: f64, theta: f64) -> f64 {
    (64.0 * eps * condition).max(1e-10) * theta.abs()
}

/// The unit roundoff of the solve's dtype (f64, else f32).
fn unit_roundoff(dtype: DType) -> f64 {
    match dtype {
        DType::F64 => f64::EPSILON,
        _ => f64::from(f32::EPSILON),
    }
}

/// A symmetric kernel held where its extreme eigenvalues are computed, as [`solve`] uses
/// it: Burn tensors on any backend ([`Tensors`]), or an NVIDIA GPU's cuSOLVER and cuBLAS
/// (`ntk-cusolver`). [`solve`] holds the algorithm (which runs, which shifts, what is
/// singular); an implementation holds the arithmetic.
pub trait Operand {
    /// `n`.
    fn size(&self) -> usize;
    /// The unit roundoff of the solve's arithmetic.
    fn epsilon(&self) -> f64;
    /// `max |K_ij|` (infinite or NaN when an entry is not finite).
    fn max_abs(&mut self) -> crate::Result<f64>;
    /// Lanczos on `K` ([`lanczos::largest`]'s contract) from [`lanczos::start_values`]`(n,
    /// seed)`.
    fn largest(
        &mut self,
        max_steps: usize,
        seed: u64,
        tolerance: &dyn Fn(f64) -> f64,
    ) -> crate::Result<lanczos::Ritz>;
    /// Factors `K + shift I = L L^T`, kept for [`Self::inverse_largest`]; `Ok(Err(_))` when
    /// a pivot is not positive (the matrix plus shift is not numerically positive definite).
    fn factor(&mut self, shift: f64) -> crate::Result<Result<(), cholesky::Breakdown>>;
    /// Lanczos on `(K + shift I)^{-1}` through the last factor, as [`Self::largest`].
    fn inverse_largest(
        &mut self,
        max_steps: usize,
        seed: u64,
        tolerance: &dyn Fn(f64) -> f64,
    ) -> crate::Result<lanczos::Ritz>;
}

/// The extreme eigenvalues of the symmetric kernel `k` (on any device, in the dtype it
/// carries, which is the precision of the solve); `kernel_epsilon` is the unit roundoff of
/// the precision the kernel was *built* in (it sets `tau`).
pub fn extreme(k: Tensor<2>, kernel_epsilon: f64, options: &Options) -> crate::Result<Extreme> {
    let [n, cols] = k.dims();
    if n == 0 || n != cols {
        return Err(crate::Error::NotSquare { rows: n, cols });
    }
    solve(&mut Tensors::new(k, options), kernel_epsilon, options)
}

/// [`extreme`]'s algorithm on any [`Operand`]: Lanczos on `K` for `lambda_max`, then on the
/// inverse of the first of `K + s I` (`s = 0, tau, 16 tau, 256 tau`) whose factorization
/// holds and whose Ritz value is finite and positive, for `lambda_min = 1 / theta - s`.
pub fn solve(
    op: &mut dyn Operand,
    kernel_epsilon: f64,
    options: &Options,
) -> crate::Result<Extreme> {
    let n = op.size();
    let eps = op.epsilon();
    let max_abs = op.max_abs()?;
    if !max_abs.is_finite() {
        return Err(ntk_numerics::Error::NonFiniteKernel.into());
    }
    if max_abs == 0.0 {
        return Ok(zero_kernel());
    }
    let top = op
        .largest(options.max_steps, options.seed, &|theta| {
            tolerance(eps, 1.0, theta)
        })
        .map_err(|e| overflow_of(e, max_abs))?;
    let lambda_max = top.theta;
    if !lambda_max.is_finite() {
        return Err(overflow_of(crate::Error::LanczosNonFinite, max_abs));
    }
    let tau = n as f64 * kernel_epsilon * lambda_max.abs();
    let (shift, inverse) = inverse_largest(op, lambda_max, tau, options).map_err(|e| match e {
        crate::Error::LanczosNonFinite => crate::Error::InverseOverflow { largest: max_abs },
        e => e,
    })?;
    let lambda_min = 1.0 / inverse.theta - shift;
    let singular = shift > 0.0 || lambda_min <= tau;
    let rank_lower_bound = if singular {
        top.values.iter().filter(|&&v| v > tau).count()
    } else {
        n
    };
    Ok(Extreme {
        lambda_min,
        lambda_max,
        kappa: if singular {
            f64::INFINITY
        } else {
            lambda_max / lambda_min
        },
        singular,
        rank_lower_bound,
        tolerance: tau,
        shift,
        steps: [top.steps, inverse.steps],
        relative_residuals: [
            top.residual / top.theta.abs(),
            inverse.residual / inverse.theta.abs(),
        ],
        converged: top.converged && inverse.converged,
    })
}

/// Lanczos on a kernel whose every entry is finite (the largest `max_abs`) that produced a
/// value that is not finite: its products `K v` (`||K v|| <= lambda_max` for a unit `v`)
/// passed the arithmetic's largest number, so `lambda_max` does too
/// ([`ntk_numerics::Error::SpectrumOverflow`]); any other error as it is.
fn overflow_of(e: crate::Error, max_abs: f64) -> crate::Error {
    match e {
        crate::Error::LanczosNonFinite => ntk_numerics::Error::SpectrumOverflow {
            largest_entry: max_abs,
            lambda_max: None,
        }
        .into(),
        e => e,
    }
}

/// The largest eigenvalue of `(K + s I)^{-1}` by Lanczos on the Cholesky factor, with the
/// first shift `s` of `0, tau, 16 tau, 256 tau` whose factorization holds and whose Ritz value
/// is finite and positive; returns `s` and the Ritz value.
fn inverse_largest(
    op: &mut dyn Operand,
    lambda_max: f64,
    tau: f64,
    options: &Options,
) -> crate::Result<(f64, lanczos::Ritz)> {
    let eps = op.epsilon();
    let mut shifts = [0.0, tau, 16.0 * tau, 256.0 * tau].into_iter().peekable();
    loop {
        let shift = shifts.next().expect("the loop returns at the last shift");
        match op.factor(shift)? {
            Ok(()) => {}
            Err(_) if shifts.peek().is_some() => continue,
            Err(b) => {
                return Err(crate::Error::NotPsd { shift, row: b.row });
            }
        }
        let inverse = op.inverse_largest(options.max_steps, options.seed ^ 1, &|theta| {
            tolerance(eps, lambda_max * theta, theta)
        });
        match inverse {
            Ok(r) if r.theta.is_finite() && r.theta > 0.0 => return Ok((shift, r)),
            // Tiny pivots of a numerically singular K overflow its inverse: shift.
            _ if shifts.peek().is_some() => continue,
            Ok(r) => {
                return Err(crate::Error::RitzValue {
                    shift,
                    theta: r.theta,
                });
            }
            Err(e) => return Err(e),
        }
    }
}

/// A kernel as a Burn tensor on its device ([`extreme`]): products and the blocked
/// Cholesky factorization ([`cholesky`]) as tensor operations.
pub struct Tensors {
    k: Tensor<2>,
    block: usize,
    explicit_inverse: bool,
    /// The last factor, with `L^{-1}` when [`Options::explicit_inverse`].
    factor: Option<(cholesky::Factor, Option<Tensor<2>>)>,
}

impl Tensors {
    /// `k` (square) with the factorization's block width and inverse choice of `options`.
    pub fn new(k: Tensor<2>, options: &Options) -> Self {
        Self {
            k,
            block: options.block,
            explicit_inverse: options.explicit_inverse,
            factor: None,
        }
    }
}

impl Tensors {
    /// [`lanczos::largest`] on `apply` in the kernel's size, device and dtype.
    fn lanczos(
        &self,
        apply: &mut dyn FnMut(Tensor<2>) -> Tensor<2>,
        max_steps: usize,
        seed: u64,
        tolerance: &dyn Fn(f64) -> f64,
    ) -> crate::Result<lanczos::Ritz> {
        let (n, device, dtype) = (self.size(), self.k.device(), self.k.dtype());
        lanczos::largest(apply, n, &device, dtype, max_steps, seed, tolerance)
    }
}

impl Operand for Tensors {
    fn size(&self) -> usize {
        self.k.dims()[0]
    }

    fn epsilon(&self) -> f64 {
        unit_roundoff(self.k.dtype())
    }

    fn max_abs(&mut self) -> crate::Result<f64> {
        Ok(self.k.clone().abs().max().into_scalar::<f64>())
    }

    fn largest(
        &mut self,
        max_steps: usize,
        seed: u64,
        tolerance: &dyn Fn(f64) -> f64,
    ) -> crate::Result<lanczos::Ritz> {
        let k = &self.k;
        self.lanczos(&mut |v| k.clone().matmul(v), max_steps, seed, tolerance)
    }

    fn factor(&mut self, shift: f64) -> crate::Result<Result<(), cholesky::Breakdown>> {
        self.factor = None;
        Ok(
            cholesky::factor(self.k.clone(), shift, self.block).map(|f| {
                let inverse = self.explicit_inverse.then(|| f.inverse());
                self.factor = Some((f, inverse));
            }),
        )
    }

    fn inverse_largest(
        &mut self,
        max_steps: usize,
        seed: u64,
        tolerance: &dyn Fn(f64) -> f64,
    ) -> crate::Result<lanczos::Ritz> {
        let Some((factor, inverse)) = &self.factor else {
            return Err(crate::Error::Lanczos(
                "Lanczos on the inverse before a factorization".into(),
            ));
        };
        let mut apply = |v: Tensor<2>| match inverse {
            Some(w) => w.clone().transpose().matmul(w.clone().matmul(v)),
            None => factor.solve(v),
        };
        self.lanczos(&mut apply, max_steps, seed, tolerance)
    }
}

/// The dtype of the solve on `device`: f64 where the device has it (eigenvalues in f64),
/// else f32.
pub fn solve_dtype(device: &Device) -> DType {
    if device.supports_dtype(DType::F64) {
        DType::F64
    } else {
        DType::F32
    }
}

/// [`extreme`] with the default options in [`solve_dtype`] (the kernel is cast to it on its
/// device); a Lanczos run that missed its tolerance is reported on stderr.
pub fn on_device(k: Tensor<2>, kernel_epsilon: f64) -> crate::Result<Extreme> {
    let dtype = solve_dtype(&k.device());
    let e = extreme(k.cast(dtype), kernel_epsilon, &Options::default())?;
    warn_unconverged(&e);
    Ok(e)
}

/// Says on stderr when a Lanczos run of `e` missed its tolerance (the values are then
/// bounds, not estimates).
pub fn warn_unconverged(e: &Extreme) {
    if !e.converged {
        eprintln!(
            "warning: Lanczos did not reach its tolerance in {:?} steps (relative residuals \
             {:.1e}, {:.1e}): lambda_max is a lower bound, lambda_min an upper bound",
            e.steps, e.relative_residuals[0], e.relative_residuals[1]
        );
    }
}

/// [`on_device`] for a host kernel, sent to `device` first.
pub fn of_kernel(kernel: &Kernel, device: &Device, kernel_epsilon: f64) -> crate::Result<Extreme> {
    let t = Tensor::<2>::from_data(
        TensorData::new(kernel.data.clone(), [kernel.size, kernel.size]),
        (device, solve_dtype(device)),
    );
    on_device(t, kernel_epsilon)
}

/// The all-zero kernel: every eigenvalue 0, rank 0.
fn zero_kernel() -> Extreme {
    Extreme {
        lambda_min: 0.0,
        lambda_max: 0.0,
        kappa: f64::INFINITY,
        singular: true,
        rank_lower_bound: 0,
        tolerance: 0.0,
        shift: 0.0,
        steps: [0, 0],
        relative_residuals: [0.0, 0.0],
        converged: true,
    }
}
