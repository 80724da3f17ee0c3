//! The extreme eigenvalues of a whole kernel already formed on the host (f64, dense), for a
//! CPU backend: [`super::solve`]'s algorithm on [`Dense`], whose arithmetic is the host
//! BLAS's (OpenBLAS's `dsymv` and `dtrsv`, LAPACK's `dpotrf`; faer's without OpenBLAS,
//! [`ntk_numerics::symmetric`]), not Burn's tensors.
//!
//! Cost at `n = 2000` (this machine, OpenBLAS 0.3.21, 2 threads): the factorization
//! 0.03 s (`n^3 / 3` multiply-adds), each Lanczos step on `K` 0.25 ms and on `K^{-1}` about
//! 1 ms (two substitutions), where the full eigensolver (`dsyevd`) takes 0.2 s, most of it in
//! the memory-bound reduction to tridiagonal form.
//!
//! A kernel of low rank (a linear network's, rank at most `d + 1`) is recognized first by
//! [`ntk_numerics::spectrum::checked_low_rank`] (the pivoted Cholesky), as the full route does: its
//! spectrum is then exact, so the rank reported is the numerical rank, not a lower bound, and
//! no `O(n^3)` work is done.

use ntk_numerics::kernel::Kernel;
use ntk_numerics::spectrum::{self, Spectrum};
use ntk_numerics::symmetric;

use super::{Extreme, Operand, Options, cholesky, lanczos, solve, warn_unconverged};

/// A dense symmetric kernel on the host (full storage, row- or column-major alike) and, once
/// [`Operand::factor`] succeeded, the Cholesky factor of its shifted copy beside it.
pub struct Dense<'a> {
    n: usize,
    k: &'a [f64],
    factor: Vec<f64>,
    factored: bool,
    progress: ntk_system::progress::Reporter,
}

impl<'a> Dense<'a> {
    /// The kernel `k` (`n x n`, every entry held).
    pub fn new(k: &'a [f64], n: usize) -> Self {
        assert_eq!(k.len(), n * n, "Dense: an n x n kernel");
        Self {
            n,
            k,
            factor: Vec::new(),
            factored: false,
            progress: ntk_system::progress::Reporter::silent(),
        }
    }
}

impl Operand for Dense<'_> {
    fn size(&self) -> usize {
        self.n
    }

    fn epsilon(&self) -> f64 {
        f64::EPSILON
    }

    fn max_abs(&mut self) -> crate::Result<f64> {
        let mut m = 0.0f64;
        for v in self.k {
            if !v.is_finite() {
                return Ok(f64::NAN);
            }
            m = m.max(v.abs());
        }
        Ok(m)
    }

    fn largest(
        &mut self,
        max_steps: usize,
        seed: u64,
        tolerance: &dyn Fn(f64) -> f64,
    ) -> crate::Result<lanczos::Ritz> {
        let (n, k) = (self.n, self.k);
        let apply = |v: &[f64]| {
            let mut y = vec![0.0; n];
            symmetric::symv(k, n, v, &mut y);
            y
        };
        lanczos::host_largest(n, &apply, (max_steps, seed), tolerance, &self.progress)
    }

    fn factor(&mut self, shift: f64) -> crate::Result<Result<(), cholesky::Breakdown>> {
        let n = self.n;
        self.factor.clear();
        self.factor.extend_from_slice(self.k);
        for i in 0..n {
            self.factor[i * n + i] += shift;
        }
        self.factored = false;
        Ok(match symmetric::cholesky_in_place(&mut self.factor, n) {
            Ok(()) => {
                self.factored = true;
                Ok(())
            }
            Err(row) => Err(cholesky::Breakdown { row }),
        })
    }

    fn inverse_largest(
        &mut self,
        max_steps: usize,
        seed: u64,
        tolerance: &dyn Fn(f64) -> f64,
    ) -> crate::Result<lanczos::Ritz> {
        if !self.factored {
            return Err(crate::Error::Lanczos(
                "Lanczos on the inverse before a factorization".into(),
            ));
        }
        let (n, l) = (self.n, &self.factor);
        let apply = |v: &[f64]| {
            let mut x = v.to_vec();
            symmetric::cholesky_solve(l, n, &mut x);
            x
        };
        lanczos::host_largest(n, &apply, (max_steps, seed), tolerance, &self.progress)
    }
}

/// The extreme eigenvalues of the host kernel `kernel` (built with unit roundoff
/// `kernel_epsilon`) with the default [`Options`]: exact from the pivoted Cholesky when its
/// rank is low, else Lanczos on [`Dense`]; a Lanczos run that missed its tolerance is
/// reported on stderr.
pub fn of_host(kernel: &Kernel, kernel_epsilon: f64) -> crate::Result<Extreme> {
    if kernel.size == 0 {
        return Err(crate::Error::NotSquare { rows: 0, cols: 0 });
    }
    if let Some(s) = spectrum::checked_low_rank(kernel, kernel_epsilon)? {
        return Ok(exact(&s));
    }
    let e = solve(
        &mut Dense::new(&kernel.data, kernel.size),
        kernel_epsilon,
        &Options::default(),
    )?;
    warn_unconverged(&e);
    Ok(e)
}

/// The extremes of a spectrum known whole: its rank is the numerical rank, no Lanczos ran.
fn exact(s: &Spectrum) -> Extreme {
    Extreme {
        lambda_min: s.lambda_min,
        lambda_max: s.lambda_max,
        kappa: s.kappa,
        singular: s.singular,
        rank_lower_bound: s.rank,
        tolerance: s.tolerance,
        shift: 0.0,
        steps: [0, 0],
        relative_residuals: [0.0, 0.0],
        converged: true,
    }
}
