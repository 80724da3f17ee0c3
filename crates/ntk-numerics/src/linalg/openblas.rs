//! The host linear algebra on the system OpenBLAS (`cfg(ntk_openblas)`, found by `build.rs`):
//! `cblas_?gemm`, `cblas_?syrk` and LAPACK's `dsyevd`, declared here.

use super::*;
use std::os::raw::{c_char, c_int};

const COL_MAJOR: c_int = 102;
const NO_TRANS: c_int = 111;
const TRANS: c_int = 112;
const LOWER: c_int = 122;

// Linked by build.rs.
unsafe extern "C" {
    fn cblas_sgemm(
        layout: c_int,
        ta: c_int,
        tb: c_int,
        m: c_int,
        n: c_int,
        k: c_int,
        alpha: f32,
        a: *const f32,
        lda: c_int,
        b: *const f32,
        ldb: c_int,
        beta: f32,
        c: *mut f32,
        ldc: c_int,
    );
    fn cblas_dgemm(
        layout: c_int,
        ta: c_int,
        tb: c_int,
        m: c_int,
        n: c_int,
        k: c_int,
        alpha: f64,
        a: *const f64,
        lda: c_int,
        b: *const f64,
        ldb: c_int,
        beta: f64,
        c: *mut f64,
        ldc: c_int,
    );
    fn cblas_saxpy(n: c_int, alpha: f32, x: *const f32, incx: c_int, y: *mut f32, incy: c_int);
    fn cblas_daxpy(n: c_int, alpha: f64, x: *const f64, incx: c_int, y: *mut f64, incy: c_int);
    fn cblas_ssyrk(
        layout: c_int,
        uplo: c_int,
        trans: c_int,
        n: c_int,
        k: c_int,
        alpha: f32,
        a: *const f32,
        lda: c_int,
        beta: f32,
        c: *mut f32,
        ldc: c_int,
    );
    fn cblas_dsyrk(
        layout: c_int,
        uplo: c_int,
        trans: c_int,
        n: c_int,
        k: c_int,
        alpha: f64,
        a: *const f64,
        lda: c_int,
        beta: f64,
        c: *mut f64,
        ldc: c_int,
    );
    /// LAPACK (Fortran ABI: the two hidden lengths of the character arguments last).
    fn dsyevd_(
        jobz: *const c_char,
        uplo: *const c_char,
        n: *const c_int,
        a: *mut f64,
        lda: *const c_int,
        w: *mut f64,
        work: *mut f64,
        lwork: *const c_int,
        iwork: *mut c_int,
        liwork: *const c_int,
        info: *mut c_int,
        jobz_len: usize,
        uplo_len: usize,
    );
}

unsafe extern "C" {
    fn openblas_get_num_threads() -> c_int;
    fn openblas_set_num_threads(n: c_int);
    fn openblas_get_config() -> *const std::ffi::c_char;
    fn openblas_get_corename() -> *const std::ffi::c_char;
}

pub(super) fn describe() -> String {
    let text = |p: *const std::ffi::c_char| {
        if p.is_null() {
            "?".to_string()
        } else {
            // SAFETY: OpenBLAS returns a pointer to a static NUL-terminated string.
            unsafe { std::ffi::CStr::from_ptr(p) }
                .to_string_lossy()
                .trim()
                .to_string()
        }
    };
    // SAFETY: plain getters of OpenBLAS's static build and CPU information.
    let (config, core) = unsafe { (openblas_get_config(), openblas_get_corename()) };
    format!("{} ({})", text(config), text(core))
}

/// OpenBLAS's thread count.
pub(super) fn threads() -> usize {
    // SAFETY: a plain getter of OpenBLAS's global setting.
    unsafe { openblas_get_num_threads() }.max(1) as usize
}

pub(super) fn set_threads(n: usize) {
    // SAFETY: a plain setter of OpenBLAS's global setting (called between BLAS calls).
    unsafe { openblas_set_num_threads(int(n.max(1))) }
}

fn int(v: usize) -> c_int {
    c_int::try_from(v).expect("matrix dimension exceeds the BLAS integer range")
}

/// A column-major operand as `(transpose flag, leading dimension)`: a faer view with unit
/// row stride is column-major, one with unit column stride is the transpose of one.
fn operand<T>(m: MatRef<'_, T>) -> (c_int, c_int, *const T) {
    let (rs, cs) = (m.row_stride(), m.col_stride());
    if rs == 1 && (cs >= m.nrows().max(1) as isize || m.ncols() <= 1) {
        (
            NO_TRANS,
            int((cs.max(1) as usize).max(m.nrows()).max(1)),
            m.as_ptr(),
        )
    } else if cs == 1 && (rs >= m.ncols().max(1) as isize || m.nrows() <= 1) {
        (
            TRANS,
            int((rs.max(1) as usize).max(m.ncols()).max(1)),
            m.as_ptr(),
        )
    } else {
        panic!("BLAS operand with strides ({rs}, {cs}) is neither column- nor row-major")
    }
}

fn output<T>(c: &mut MatMut<'_, T>) -> (c_int, *mut T) {
    assert!(
        c.row_stride() == 1 || c.nrows() <= 1,
        "BLAS output must be column-major"
    );
    let ld = (c.col_stride().max(1) as usize).max(c.nrows()).max(1);
    (int(ld), c.as_ptr_mut())
}

macro_rules! kernels {
    ($t:ty, $gemm:ident, $syrk:ident, $axpy:ident) => {
        impl Kernels<$t> for Blas {
            fn axpy(&self, alpha: $t, x: &[$t], y: &mut [$t]) {
                if !x.is_empty() {
                    // SAFETY: two slices of equal length (checked by `axpy`).
                    unsafe { $axpy(int(x.len()), alpha, x.as_ptr(), 1, y.as_mut_ptr(), 1) }
                }
            }
            fn gemm(
                &self,
                mut c: MatMut<'_, $t>,
                a: MatRef<'_, $t>,
                b: MatRef<'_, $t>,
                alpha: $t,
                beta: $t,
            ) {
                let (m, n, k) = (c.nrows(), c.ncols(), a.ncols());
                if m == 0 || n == 0 {
                    return;
                }
                if k == 0 {
                    if beta == 0.0 {
                        c.fill(0.0);
                    } else {
                        for j in 0..n {
                            for i in 0..m {
                                c[(i, j)] *= beta;
                            }
                        }
                    }
                    return;
                }
                let (ta, lda, pa) = operand(a);
                let (tb, ldb, pb) = operand(b);
                let (ldc, pc) = output(&mut c);
                // SAFETY: the pointers and leading dimensions describe the faer views,
                // whose shapes were checked by `gemm`; c is a distinct mutable borrow.
                unsafe {
                    $gemm(
                        COL_MAJOR,
                        ta,
                        tb,
                        int(m),
                        int(n),
                        int(k),
                        alpha,
                        pa,
                        lda,
                        pb,
                        ldb,
                        beta,
                        pc,
                        ldc,
                    )
                }
            }
            fn syrk_lower(&self, mut c: MatMut<'_, $t>, a: MatRef<'_, $t>, alpha: $t) {
                let (n, k) = (a.nrows(), a.ncols());
                if k == 0 {
                    c.fill(0.0);
                    return;
                }
                let (ta, lda, pa) = operand(a);
                let (ldc, pc) = output(&mut c);
                // SAFETY: as above; C = alpha op(A) op(A)^T with op(A) the n x k view.
                unsafe {
                    $syrk(
                        COL_MAJOR,
                        LOWER,
                        ta,
                        int(n),
                        int(k),
                        alpha,
                        pa,
                        lda,
                        0.0,
                        pc,
                        ldc,
                    )
                }
            }
        }
    };
}
kernels!(f32, cblas_sgemm, cblas_ssyrk, cblas_saxpy);
kernels!(f64, cblas_dgemm, cblas_dsyrk, cblas_daxpy);

pub(super) fn eigen_impl(
    a: &[f64],
    n: usize,
    vectors: bool,
) -> crate::Result<(Vec<f64>, Option<Mat<f64>>)> {
    let mut a = a.to_vec();
    let mut w = vec![0.0f64; n];
    // The row-major lower triangle is the column-major upper one; with the vectors,
    // `a` is overwritten by them, column-major.
    let jobz = if vectors { b'V' } else { b'N' } as c_char;
    let uplo = b'U' as c_char;
    let nn = int(n);
    let mut info: c_int = 0;
    let (mut wq, mut iwq): (f64, c_int) = (0.0, 0);
    // Workspace query, then the solve (eigenvalues only: tridiagonal QR/root-free;
    // with vectors: divide and conquer).
    // SAFETY: all buffers are sized as dsyevd documents (n*n, n, and the queried work).
    unsafe {
        dsyevd_(
            &jobz,
            &uplo,
            &nn,
            a.as_mut_ptr(),
            &nn,
            w.as_mut_ptr(),
            &mut wq,
            &-1,
            &mut iwq,
            &-1,
            &mut info,
            1,
            1,
        );
    }
    if info != 0 {
        return Err(crate::Error::Eigensolver {
            message: format!("dsyevd workspace query failed (info {info})"),
        });
    }
    let lwork = (wq as usize).max(2 * n + 1);
    let liwork = (iwq as usize).max(1);
    let mut work = vec![0.0f64; lwork];
    let mut iwork = vec![0 as c_int; liwork];
    unsafe {
        dsyevd_(
            &jobz,
            &uplo,
            &nn,
            a.as_mut_ptr(),
            &nn,
            w.as_mut_ptr(),
            work.as_mut_ptr(),
            &int(lwork),
            iwork.as_mut_ptr(),
            &int(liwork),
            &mut info,
            1,
            1,
        );
    }
    match info {
        0 => Ok((w, vectors.then(|| Mat::from_fn(n, n, |i, j| a[j * n + i])))),
        i if i < 0 => Err(crate::Error::Eigensolver {
            message: format!("dsyevd: argument {} invalid", -i),
        }),
        i => Err(crate::Error::Eigensolver {
            message: format!("eigensolver did not converge ({i} off-diagonal elements)"),
        }),
    }
}
