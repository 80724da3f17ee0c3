//! Dense host linear algebra for the CPU engines: GEMM, the lower triangle of a Gram product
//! (SYRK), and the eigenvalues of a symmetric matrix, on faer's column-major matrices.
//!
//! Two implementations behind one interface, chosen at run time ([`library`]: `NTK_BLAS`):
//! - OpenBLAS, loaded from a shared library: by default the current one `scripts/setup.sh`
//!   fetches (PyPI's `scipy-openblas32`, the OpenBLAS numpy ships, which picks its kernels
//!   for the CPU it finds), else the system's (Debian's `libopenblas0`): `cblas_?gemm`,
//!   `cblas_?syrk` and LAPACK's `dsyevd`. On this machine class (2 cores, AVX-512) its SGEMM
//!   runs at ~190 GFLOP/s where faer's runs at ~100, and `dsyevd` finds the 2000 eigenvalues
//!   of a kernel in ~0.5 s where faer's solver takes 1.1-2.3 s
//!   (`experiments/bench/README.md`).
//! - without one (or with `NTK_BLAS=faer`): faer (pure Rust), the same results within
//!   rounding. [`describe`] says which one runs, and which kernels.
//!
//! Both are checked against each other's algebra by the tests (the NTK engines against
//! Burn's autodiff, the eigenvalues against closed forms); CI runs the tests once with each.

mod fallback;
mod library;
mod openblas;

pub use fallback::Faer;
pub use library::{Library, Request, cpu_has_avx2, library, load, pre_avx2};
pub use openblas::OpenBlas;

use ::faer::{Mat, MatMut, MatRef};

/// The float types the host engines run in.
pub trait Real: faer::traits::RealField + Copy + Send + Sync + 'static {
    fn of(v: f64) -> Self;
    fn f64(self) -> f64;
    /// `e^self - 1` in this precision (SELU's negative branch): f64's `exp_m1`, and for f32
    /// [`crate::expm1::exp_m1_f32`], which vectorizes.
    fn exp_m1(self) -> Self;
    /// Unit roundoff.
    const EPSILON: f64;
    #[doc(hidden)]
    fn blas() -> &'static dyn Level3<Self>;
}

impl Real for f32 {
    #[inline(always)]
    fn of(v: f64) -> Self {
        v as f32
    }
    #[inline(always)]
    fn f64(self) -> f64 {
        f64::from(self)
    }
    #[inline(always)]
    fn exp_m1(self) -> Self {
        crate::expm1::exp_m1_f32(self)
    }
    const EPSILON: f64 = f32::EPSILON as f64;
    fn blas() -> &'static dyn Level3<f32> {
        library().routines()
    }
}

impl Real for f64 {
    #[inline(always)]
    fn of(v: f64) -> Self {
        v
    }
    #[inline(always)]
    fn f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn exp_m1(self) -> Self {
        f64::exp_m1(self)
    }
    const EPSILON: f64 = f64::EPSILON;
    fn blas() -> &'static dyn Level3<f64> {
        library().routines()
    }
}

/// The level-3 routines the engines need (and `axpy`), per float type.
#[doc(hidden)]
pub trait Level3<T> {
    /// `c = alpha a b + beta c` (`beta = 0`: c overwritten, never read).
    fn gemm(&self, c: MatMut<'_, T>, a: MatRef<'_, T>, b: MatRef<'_, T>, alpha: T, beta: T);
    /// Lower triangle of `c = alpha a a^T` (the strict upper triangle is not written).
    fn syrk_lower(&self, c: MatMut<'_, T>, a: MatRef<'_, T>, alpha: T);
    /// `y += alpha x`.
    fn axpy(&self, alpha: T, x: &[T], y: &mut [T]);
}

/// What each host library provides beyond the level-3 routines ([`Level3`]): its thread count, the
/// symmetric eigensolver, and the level-2 routines of [`crate::symmetric`] (f64). Both
/// [`OpenBlas`] and [`Faer`] implement it; [`Library::routines`] picks one.
pub(crate) trait Routines: Level3<f32> + Level3<f64> + Sync {
    fn threads(&self) -> usize;
    fn set_threads(&self, n: usize);
    /// The eigenvalues (ascending) of the symmetric matrix whose row-major lower triangle
    /// `a` holds, and with `vectors` its eigenvectors as columns.
    fn eigen(
        &self,
        a: &[f64],
        n: usize,
        vectors: bool,
    ) -> crate::Result<(Vec<f64>, Option<Mat<f64>>)>;
    /// `y = A x`, the lower triangle of the column-major `a` read.
    fn symv(&self, a: &[f64], n: usize, x: &[f64], y: &mut [f64]);
    /// `a = L L^T` in place (lower, column-major); `Err(row)` at the first non-positive pivot.
    fn potrf(&self, a: &mut [f64], n: usize) -> Result<(), usize>;
    /// `x = L^{-1} x` (or `L^{-T} x`), `L` the lower triangle of the column-major `l`.
    fn trsv(&self, l: &[f64], n: usize, x: &mut [f64], transposed: bool);
}

/// `c = alpha a b`: `c` is overwritten; `a` and `b` may be transposed views.
pub fn gemm<T: Real>(c: MatMut<'_, T>, a: MatRef<'_, T>, b: MatRef<'_, T>, alpha: T) {
    gemm_acc(c, a, b, alpha, T::of(0.0))
}

/// `c = alpha a b + beta c` (with `beta = 0`, `c` is overwritten and never read).
pub fn gemm_acc<T: Real>(c: MatMut<'_, T>, a: MatRef<'_, T>, b: MatRef<'_, T>, alpha: T, beta: T) {
    assert_eq!(c.nrows(), a.nrows(), "gemm: rows of c and a");
    assert_eq!(c.ncols(), b.ncols(), "gemm: columns of c and b");
    assert_eq!(a.ncols(), b.nrows(), "gemm: inner dimensions");
    T::blas().gemm(c, a, b, alpha, beta)
}

/// The host linear algebra as results record it: `faer`, or OpenBLAS's build configuration
/// and the kernel it chose for this CPU (which decides the rounding).
pub fn describe() -> String {
    library().describe()
}

/// Runs `f` with the host BLAS single-threaded (OpenBLAS's thread count 1, or faer's global
/// parallelism sequential) and restores the previous setting when the last such caller in
/// the process is done, also on a panic.
/// For engines that split their work over their own threads (rayon) and call GEMMs from
/// each: two BLAS thread pools on the same cores would contend (OpenBLAS's idle threads
/// spin), see `experiments/bench/README.md`.
///
/// The setting is global to the process, so callers on several threads at once (two runs
/// in one process, or the tests of one binary) share one count of active callers: the first
/// in saves the setting and sets one thread, the last out restores it. A plain save and
/// restore per caller let one caller's restore switch the BLAS back to many threads while
/// another was still inside, and that caller's GEMMs then ran threaded (different rounding,
/// so a run was no longer bit-for-bit reproducible, and faer's threaded GEMM re-entered the
/// convolutions' per-thread scratch).
pub fn single_threaded<R>(f: impl FnOnce() -> R) -> R {
    /// Callers inside `single_threaded`, and the setting before the first of them.
    static ACTIVE: std::sync::Mutex<(usize, usize)> = std::sync::Mutex::new((0, 0));
    fn state() -> std::sync::MutexGuard<'static, (usize, usize)> {
        // The guarded section only counts and calls the setters; a poisoned lock (a panic
        // elsewhere while it was held) still holds a consistent count.
        ACTIVE
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            let mut s = state();
            s.0 -= 1;
            if s.0 == 0 {
                set_threads(s.1);
            }
        }
    }
    {
        let mut s = state();
        if s.0 == 0 {
            s.1 = threads();
            set_threads(1);
        }
        s.0 += 1;
    }
    let _leave = Leave;
    f()
}

/// Sets the host BLAS's thread count (OpenBLAS's, or faer's global parallelism) for the
/// rest of the process (`ntk_runs::slurm::use_cpus_per_task`).
pub fn set_threads(n: usize) {
    library().routines().set_threads(n)
}

/// The host BLAS's thread count.
fn threads() -> usize {
    library().routines().threads()
}

/// `y += alpha x` (OpenBLAS threads it for long vectors).
pub fn axpy<T: Real>(alpha: T, x: &[T], y: &mut [T]) {
    assert_eq!(x.len(), y.len(), "axpy: lengths");
    T::blas().axpy(alpha, x, y)
}

/// The values of a column-major matrix without padding between columns, as one slice
/// (`None` when its columns are padded or it is a view).
pub fn contiguous_mut<T: Real>(m: &mut Mat<T>) -> Option<&mut [T]> {
    let (rows, cols) = (m.nrows(), m.ncols());
    if cols > 1 && m.col_stride() != rows as isize {
        return None;
    }
    let ptr = m.as_ptr_mut();
    // SAFETY: an owned matrix of `rows x cols` values with column stride `rows` (checked)
    // and unit row stride is one allocation of `rows * cols` initialized values, borrowed
    // mutably through `m` for the slice's lifetime.
    Some(unsafe { std::slice::from_raw_parts_mut(ptr, rows * cols) })
}

/// [`contiguous_mut`], shared.
pub fn contiguous<T: Real>(m: &Mat<T>) -> Option<&[T]> {
    let (rows, cols) = (m.nrows(), m.ncols());
    if cols > 1 && m.col_stride() != rows as isize {
        return None;
    }
    // SAFETY: as in `contiguous_mut`, borrowed shared.
    Some(unsafe { std::slice::from_raw_parts(m.as_ptr(), rows * cols) })
}

/// The lower triangle of the Gram matrix `alpha M M^T` (the upper part is zero).
pub fn gram_lower<T: Real>(m: MatRef<'_, T>, alpha: T) -> Mat<T> {
    let n = m.nrows();
    let mut g = Mat::<T>::zeros(n, n);
    if n > 0 {
        T::blas().syrk_lower(g.as_mut(), m, alpha);
    }
    g
}

/// [`gram_lower`] into an existing `n x n` buffer (its strict upper triangle is left as is).
pub fn gram_lower_into<T: Real>(c: &mut Mat<T>, m: MatRef<'_, T>, alpha: T) {
    assert_eq!(
        (c.nrows(), c.ncols()),
        (m.nrows(), m.nrows()),
        "gram_lower_into: shape"
    );
    if m.nrows() > 0 {
        T::blas().syrk_lower(c.as_mut(), m, alpha);
    }
}

/// All eigenvalues (ascending) of the symmetric `n x n` matrix stored row-major in `a` (only
/// the lower triangle in row-major order, i.e. the upper in column-major, is read).
pub fn sym_eigenvalues(a: &[f64], n: usize) -> crate::Result<Vec<f64>> {
    assert_eq!(a.len(), n * n, "sym_eigenvalues: buffer size");
    if n == 0 {
        return Ok(Vec::new());
    }
    Ok(eigen_impl(a, n, false)?.0)
}

/// The eigendecomposition `A = V diag(w) V^T` of the symmetric `n x n` matrix stored
/// row-major in `a` (its lower triangle in row-major order is read): the eigenvalues `w`
/// ascending and the orthonormal eigenvectors as the columns of `V` (column `j` belongs to
/// `w[j]`). LAPACK's `dsyevd` (divide and conquer) with OpenBLAS, faer's self-adjoint
/// eigensolver without.
pub fn sym_eigen(a: &[f64], n: usize) -> crate::Result<(Vec<f64>, Mat<f64>)> {
    assert_eq!(a.len(), n * n, "sym_eigen: buffer size");
    if n == 0 {
        return Ok((Vec::new(), Mat::zeros(0, 0)));
    }
    let (w, v) = eigen_impl(a, n, true)?;
    Ok((w, v.expect("asked for the eigenvectors")))
}

fn eigen_impl(a: &[f64], n: usize, vectors: bool) -> crate::Result<(Vec<f64>, Option<Mat<f64>>)> {
    library().routines().eigen(a, n, vectors)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What results record as the host linear algebra names the library that runs.
    #[test]
    fn describe_names_the_library() {
        let d = describe();
        if library().name() == "openblas" {
            assert!(d.contains("OpenBLAS"), "{d}");
        } else {
            assert_eq!(d, "faer");
        }
    }

    fn naive(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> Mat<f64> {
        Mat::from_fn(a.nrows(), b.ncols(), |i, j| {
            (0..a.ncols()).map(|k| a[(i, k)] * b[(k, j)]).sum()
        })
    }

    /// Two callers inside [`single_threaded`] at once, leaving in the order they entered:
    /// the BLAS stays single-threaded until the second is done (a per-caller restore had
    /// switched it back while the second was still inside).
    #[test]
    fn single_threaded_holds_while_any_caller_is_inside() {
        use std::sync::{Barrier, mpsc};
        let (entered, left) = (Barrier::new(2), Barrier::new(2));
        let (tx, rx) = mpsc::channel();
        std::thread::scope(|s| {
            s.spawn(|| {
                single_threaded(|| {
                    entered.wait();
                });
                left.wait();
            });
            s.spawn(|| {
                single_threaded(|| {
                    entered.wait();
                    // The first caller has left.
                    left.wait();
                    tx.send(threads()).unwrap();
                });
            });
        });
        assert_eq!(rx.recv().unwrap(), 1);
    }

    /// The eigendecomposition rebuilds the matrix, its vectors are orthonormal, and its
    /// values are the eigenvalues-only route's, to f64 rounding (a 9 x 9 matrix with a
    /// repeated and a zero eigenvalue: `B B^T` of a rank-7 `B`, plus a multiple of one
    /// direction). Only the lower triangle is read: the upper holds garbage.
    #[test]
    fn the_eigendecomposition_rebuilds_the_matrix() {
        let n = 9;
        let b = Mat::<f64>::from_fn(n, 7, |i, j| ((i * 7 + j * 3) % 11) as f64 / 5.0 - 1.0);
        let a = naive(b.as_ref(), b.transpose());
        let mut row_major = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                row_major[i * n + j] = if j <= i { a[(i, j)] } else { f64::NAN };
            }
        }
        let (w, v) = sym_eigen(&row_major, n).unwrap();
        let values = sym_eigenvalues(&row_major, n).unwrap();
        let scale = w[n - 1];
        for (x, y) in w.iter().zip(&values) {
            assert!((x - y).abs() < 1e-13 * scale, "{x} {y}");
        }
        assert!(w.windows(2).all(|p| p[0] <= p[1]), "ascending: {w:?}");
        let vtv = naive(v.transpose(), v.as_ref());
        let rebuilt = naive(
            Mat::from_fn(n, n, |i, j| v[(i, j)] * w[j]).as_ref(),
            v.transpose(),
        );
        for i in 0..n {
            for j in 0..n {
                let eye = if i == j { 1.0 } else { 0.0 };
                assert!((vtv[(i, j)] - eye).abs() < 1e-13, "V^T V ({i}, {j})");
                assert!(
                    (rebuilt[(i, j)] - a[(i, j)]).abs() < 1e-13 * scale,
                    "({i}, {j})"
                );
            }
        }
    }

    /// GEMM over every combination of transposed operands equals the triple loop.
    #[test]
    fn gemm_matches_the_definition() {
        let a = Mat::<f64>::from_fn(7, 5, |i, j| (i * 5 + j) as f64 * 0.1 - 1.0);
        let b = Mat::<f64>::from_fn(5, 3, |i, j| ((i + 2 * j) % 4) as f64 - 1.5);
        let at = a.transpose().to_owned();
        let bt = b.transpose().to_owned();
        let want = naive(a.as_ref(), b.as_ref());
        for (x, y) in [
            (a.as_ref(), b.as_ref()),
            (at.transpose(), b.as_ref()),
            (a.as_ref(), bt.transpose()),
            (at.transpose(), bt.transpose()),
        ] {
            let mut c = Mat::<f64>::zeros(7, 3);
            gemm(c.as_mut(), x, y, 2.0);
            for i in 0..7 {
                for j in 0..3 {
                    assert!((c[(i, j)] - 2.0 * want[(i, j)]).abs() < 1e-12);
                }
            }
            // c = a b + 0.5 c, with c = 2 a b already: 2 a b again.
            gemm_acc(c.as_mut(), x, y, 1.0, 0.5);
            for i in 0..7 {
                for j in 0..3 {
                    assert!((c[(i, j)] - 2.0 * want[(i, j)]).abs() < 1e-12);
                }
            }
        }
    }

    #[test]
    fn gram_lower_is_the_lower_triangle() {
        let m = Mat::<f32>::from_fn(6, 4, |i, j| (i as f32 - j as f32) * 0.5);
        let g = gram_lower(m.as_ref(), 1.0);
        for i in 0..6 {
            for j in 0..=i {
                let want: f32 = (0..4).map(|k| m[(i, k)] * m[(j, k)]).sum();
                assert!((g[(i, j)] - want).abs() < 1e-5);
            }
        }
        let gt = gram_lower(m.transpose().to_owned().transpose(), 1.0);
        assert!((gt[(5, 2)] - g[(5, 2)]).abs() < 1e-6);
    }

    /// The eigenvalues of the path graph's Laplacian-like tridiagonal matrix
    /// `tridiag(-1, 2, -1)`: `2 - 2 cos(k pi / (n + 1))`, k = 1..n.
    #[test]
    fn eigenvalues_match_the_closed_form() {
        let n = 50;
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            a[i * n + i] = 2.0;
            if i + 1 < n {
                a[i * n + i + 1] = -1.0;
                a[(i + 1) * n + i] = -1.0;
            }
        }
        let w = sym_eigenvalues(&a, n).unwrap();
        for (k, v) in w.iter().enumerate() {
            let want = 2.0 - 2.0 * ((k + 1) as f64 * std::f64::consts::PI / (n as f64 + 1.0)).cos();
            assert!((v - want).abs() < 1e-12, "{k}: {v} vs {want}");
        }
    }
}
