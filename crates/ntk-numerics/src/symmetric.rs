//! A symmetric `n x n` matrix on the host in f64, full storage (every entry held, so row- and
//! column-major are the same buffer): its product with a vector, its Cholesky factor in a
//! second buffer, and solves with that factor. The level-2 arithmetic of Lanczos on a dense
//! host kernel (`ntk_kernel::extreme::dense`): at `n = 2000` the lower triangle is 16 MB and
//! stays in a 32 MB L3, so a product takes about 0.25 ms where the full eigensolver takes
//! 0.2 s.
//!
//! OpenBLAS's `dsymv`, `dtrsv` and LAPACK's `dpotrf` where linked (`cfg(ntk_openblas)`, see
//! [`crate::linalg`]), faer's without. Only the lower triangle (column-major) is read by
//! [`symv`] and [`cholesky_in_place`]; the factor's strict upper triangle is left as it was.

/// `y = A x` for the symmetric `a` (its lower triangle read, column-major).
pub fn symv(a: &[f64], n: usize, x: &[f64], y: &mut [f64]) {
    check(a, n, &[x.len(), y.len()]);
    if n > 0 {
        imp::symv(a, n, x, y)
    }
}

/// Factors `a = L L^T` in place (the lower triangle, column-major, becomes `L`); `Err(row)`
/// names the first row (0-based) whose pivot is not positive: `a` is then not numerically
/// positive definite and holds a partial factor.
pub fn cholesky_in_place(a: &mut [f64], n: usize) -> Result<(), usize> {
    check(a, n, &[]);
    if n == 0 {
        return Ok(());
    }
    imp::potrf(a, n)
}

/// `x = (L L^T)^{-1} x` through the factor `l` of [`cholesky_in_place`]: a forward and a back
/// substitution, `2 n^2` multiply-adds.
pub fn cholesky_solve(l: &[f64], n: usize, x: &mut [f64]) {
    check(l, n, &[x.len()]);
    if n > 0 {
        imp::trsv(l, n, x, false);
        imp::trsv(l, n, x, true);
    }
}

fn check(a: &[f64], n: usize, vectors: &[usize]) {
    assert_eq!(a.len(), n * n, "symmetric: an n x n buffer");
    assert!(
        vectors.iter().all(|&v| v == n),
        "symmetric: vectors of length n"
    );
}

#[cfg(not(ntk_openblas))]
mod imp {
    use faer::linalg::cholesky::llt::factor::{
        LltError, LltParams, cholesky_in_place, cholesky_in_place_scratch,
    };
    use faer::linalg::triangular_solve::{
        solve_lower_triangular_in_place, solve_upper_triangular_in_place,
    };
    use faer::{MatMut, MatRef, Spec};

    pub(super) fn symv(a: &[f64], n: usize, x: &[f64], y: &mut [f64]) {
        // The lower triangle, each off-diagonal entry applied as itself and transposed.
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

    pub(super) fn potrf(a: &mut [f64], n: usize) -> Result<(), usize> {
        let par = faer::get_global_parallelism();
        let spec = Spec::<LltParams, f64>::default();
        let mut mem =
            faer::dyn_stack::MemBuffer::new(cholesky_in_place_scratch::<f64>(n, par, spec));
        let stack = faer::dyn_stack::MemStack::new(&mut mem);
        let m = MatMut::from_column_major_slice_mut(a, n, n);
        cholesky_in_place(m, Default::default(), par, stack, spec)
            .map(|_| ())
            .map_err(|LltError::NonPositivePivot { index }| index)
    }

    pub(super) fn trsv(l: &[f64], n: usize, x: &mut [f64], transposed: bool) {
        let l = MatRef::from_column_major_slice(l, n, n);
        let x = MatMut::from_column_major_slice_mut(x, n, 1);
        if transposed {
            solve_upper_triangular_in_place(l.transpose(), x, faer::Par::Seq);
        } else {
            solve_lower_triangular_in_place(l, x, faer::Par::Seq);
        }
    }
}

#[cfg(ntk_openblas)]
mod imp {
    use std::os::raw::{c_char, c_int};

    const COL_MAJOR: c_int = 102;
    const NO_TRANS: c_int = 111;
    const TRANS: c_int = 112;
    const LOWER: c_int = 122;
    const NON_UNIT: c_int = 131;

    // Linked by build.rs (the same library as `crate::linalg`'s).
    unsafe extern "C" {
        fn cblas_dsymv(
            layout: c_int,
            uplo: c_int,
            n: c_int,
            alpha: f64,
            a: *const f64,
            lda: c_int,
            x: *const f64,
            incx: c_int,
            beta: f64,
            y: *mut f64,
            incy: c_int,
        );
        fn cblas_dtrsv(
            layout: c_int,
            uplo: c_int,
            trans: c_int,
            diag: c_int,
            n: c_int,
            a: *const f64,
            lda: c_int,
            x: *mut f64,
            incx: c_int,
        );
        /// LAPACK (Fortran ABI: the hidden length of the character argument last).
        fn dpotrf_(
            uplo: *const c_char,
            n: *const c_int,
            a: *mut f64,
            lda: *const c_int,
            info: *mut c_int,
            uplo_len: usize,
        );
    }

    fn int(v: usize) -> c_int {
        c_int::try_from(v).expect("matrix dimension exceeds the BLAS integer range")
    }

    pub(super) fn symv(a: &[f64], n: usize, x: &[f64], y: &mut [f64]) {
        let nn = int(n);
        // SAFETY: `a` is n x n, `x` and `y` of length n (checked by the caller), y distinct.
        unsafe {
            cblas_dsymv(
                COL_MAJOR,
                LOWER,
                nn,
                1.0,
                a.as_ptr(),
                nn,
                x.as_ptr(),
                1,
                0.0,
                y.as_mut_ptr(),
                1,
            )
        }
    }

    pub(super) fn potrf(a: &mut [f64], n: usize) -> Result<(), usize> {
        let (nn, uplo) = (int(n), b'L' as c_char);
        let mut info: c_int = 0;
        // SAFETY: `a` is an n x n column-major buffer (checked by the caller).
        unsafe { dpotrf_(&uplo, &nn, a.as_mut_ptr(), &nn, &mut info, 1) };
        match info {
            0 => Ok(()),
            // The leading minor of order `info` is not positive definite.
            i if i > 0 => Err(i as usize - 1),
            i => panic!("dpotrf: argument {} is invalid", -i),
        }
    }

    pub(super) fn trsv(l: &[f64], n: usize, x: &mut [f64], transposed: bool) {
        let nn = int(n);
        let trans = if transposed { TRANS } else { NO_TRANS };
        // SAFETY: `l` is n x n, `x` of length n (checked by the caller).
        unsafe {
            cblas_dtrsv(
                COL_MAJOR,
                LOWER,
                trans,
                NON_UNIT,
                nn,
                l.as_ptr(),
                nn,
                x.as_mut_ptr(),
                1,
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A symmetric positive definite matrix with known entries: `B B^T + n I`.
    fn spd(n: usize) -> Vec<f64> {
        let b: Vec<f64> = (0..n * n)
            .map(|k| ((k * 37 % 11) as f64 - 5.0) / 7.0)
            .collect();
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                a[j * n + i] = (0..n).map(|k| b[i * n + k] * b[j * n + k]).sum::<f64>()
                    + if i == j { n as f64 } else { 0.0 };
            }
        }
        a
    }

    #[test]
    fn products_factors_and_solves_are_the_dense_ones() {
        let n = 37;
        let a = spd(n);
        let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.3).sin()).collect();
        let mut y = vec![0.0; n];
        symv(&a, n, &x, &mut y);
        for i in 0..n {
            let want: f64 = (0..n).map(|j| a[j * n + i] * x[j]).sum();
            assert!(
                (y[i] - want).abs() <= 1e-12 * want.abs().max(1.0),
                "row {i}"
            );
        }
        let mut l = a.clone();
        cholesky_in_place(&mut l, n).expect("positive definite");
        let mut z = y.clone();
        cholesky_solve(&l, n, &mut z);
        for i in 0..n {
            assert!(
                (z[i] - x[i]).abs() <= 1e-12,
                "x[{i}]: {} against {}",
                z[i],
                x[i]
            );
        }
    }

    #[test]
    fn a_matrix_that_is_not_positive_definite_names_its_row() {
        let n = 4;
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            a[i * n + i] = if i == 2 { -1.0 } else { 1.0 };
        }
        assert_eq!(cholesky_in_place(&mut a, n), Err(2));
    }
}
