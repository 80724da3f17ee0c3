//! The host linear algebra in pure Rust (faer), where no OpenBLAS is found or `NTK_BLAS=faer`
//! asks for it: the same routines as `openblas.rs`, the same results within rounding.

use super::*;
use faer::linalg::matmul::matmul;
use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::{Accum, Par, Side};

fn par() -> Par {
    faer::get_global_parallelism()
}

/// faer's routines, the fallback [`super::Library`].
pub struct Faer;

impl<T: Real> Level3<T> for Faer {
    fn gemm(&self, mut c: MatMut<'_, T>, a: MatRef<'_, T>, b: MatRef<'_, T>, alpha: T, beta: T) {
        if beta == T::of(0.0) {
            matmul(c, Accum::Replace, a, b, alpha, par());
        } else {
            for j in 0..c.ncols() {
                for i in 0..c.nrows() {
                    c[(i, j)] *= beta;
                }
            }
            matmul(c, Accum::Add, a, b, alpha, par());
        }
    }
    fn syrk_lower(&self, c: MatMut<'_, T>, a: MatRef<'_, T>, alpha: T) {
        triangular::matmul(
            c,
            BlockStructure::TriangularLower,
            Accum::Replace,
            a,
            BlockStructure::Rectangular,
            a.transpose(),
            BlockStructure::Rectangular,
            alpha,
            par(),
        );
    }
    fn axpy(&self, alpha: T, x: &[T], y: &mut [T]) {
        y.iter_mut().zip(x).for_each(|(y, x)| *y = *x * alpha + *y);
    }
}

impl Routines for Faer {
    /// faer's global parallelism as a thread count.
    fn threads(&self) -> usize {
        match faer::get_global_parallelism() {
            Par::Seq => 1,
            Par::Rayon(n) => n.get(),
        }
    }

    fn set_threads(&self, n: usize) {
        faer::set_global_parallelism(match std::num::NonZeroUsize::new(n) {
            Some(n) if n.get() > 1 => Par::Rayon(n),
            _ => Par::Seq,
        });
    }

    fn eigen(
        &self,
        a: &[f64],
        n: usize,
        vectors: bool,
    ) -> crate::Result<(Vec<f64>, Option<Mat<f64>>)> {
        let failed = |e| crate::Error::Eigensolver {
            message: format!("eigensolver did not converge: {e:?}"),
        };
        // faer's solver does not converge on entries near f64's range (the Gram matrix of
        // inputs about 1e153): it solves `A / 2^k` with its largest entry in [1, 2) (powers
        // of two: exact) and scales the eigenvalues back.
        let largest = (0..n)
            .flat_map(|i| (0..=i).map(move |j| a[i * n + j].abs()))
            .fold(0.0f64, f64::max);
        let k = if largest > 0.0 && largest.is_finite() {
            largest.log2().floor() as i32
        } else {
            0
        };
        // Two powers of two each way, so that neither factor leaves f64's normal range.
        let (h, rest) = (k / 2, k - k / 2);
        let down = |v: f64| v * 2f64.powi(-h) * 2f64.powi(-rest);
        let up = |v: f64| v * 2f64.powi(h) * 2f64.powi(rest);
        let scaled = Mat::from_fn(n, n, |i, j| {
            let (r, c) = if j <= i { (i, j) } else { (j, i) };
            down(a[r * n + c])
        });
        if !vectors {
            let w = scaled
                .self_adjoint_eigenvalues(Side::Lower)
                .map_err(failed)?;
            return Ok((w.into_iter().map(up).collect(), None));
        }
        let e = scaled.self_adjoint_eigen(Side::Lower).map_err(failed)?;
        let w = (0..n).map(|i| up(e.S()[i])).collect();
        Ok((w, Some(e.U().to_owned())))
    }

    /// `y = A x`, the lower triangle of the column-major `a` read, each off-diagonal entry
    /// applied as itself and transposed.
    fn symv(&self, a: &[f64], n: usize, x: &[f64], y: &mut [f64]) {
        y.fill(0.0);
        for j in 0..n {
            let col = &a[j * n..(j + 1) * n];
            let (xj, mut acc) = (x[j], col[j] * x[j]);
            for i in j + 1..n {
                y[i] += col[i] * xj;
                acc += col[i] * x[i];
            }
            y[j] += acc;
        }
    }

    /// `a = L L^T` in place (lower, column-major); `Err(row)` at the first non-positive pivot.
    fn potrf(&self, a: &mut [f64], n: usize) -> Result<(), usize> {
        use faer::linalg::cholesky::llt::factor::{
            LltError, LltParams, cholesky_in_place, cholesky_in_place_scratch,
        };
        let par = faer::get_global_parallelism();
        let spec = faer::Spec::<LltParams, f64>::default();
        let mut mem =
            faer::dyn_stack::MemBuffer::new(cholesky_in_place_scratch::<f64>(n, par, spec));
        let stack = faer::dyn_stack::MemStack::new(&mut mem);
        let m = MatMut::from_column_major_slice_mut(a, n, n);
        cholesky_in_place(m, Default::default(), par, stack, spec)
            .map(|_| ())
            .map_err(|LltError::NonPositivePivot { index }| index)
    }

    /// `x = L^{-1} x` (or `L^{-T} x`), `L` the lower triangle of the column-major `l`.
    fn trsv(&self, l: &[f64], n: usize, x: &mut [f64], transposed: bool) {
        use faer::linalg::triangular_solve::{
            solve_lower_triangular_in_place, solve_upper_triangular_in_place,
        };
        let l = MatRef::from_column_major_slice(l, n, n);
        let x = MatMut::from_column_major_slice_mut(x, n, 1);
        if transposed {
            solve_upper_triangular_in_place(l.transpose(), x, Par::Seq);
        } else {
            solve_lower_triangular_in_place(l, x, Par::Seq);
        }
    }
}
