//! A symmetric `n x n` matrix on the host in f64, full storage (every entry held, so row- and
//! column-major are the same buffer): its product with a vector, its Cholesky factor in a
//! second buffer, and solves with that factor. The level-2 arithmetic of Lanczos on a dense
//! host kernel (`ntk_kernel::extreme::dense`): at `n = 2000` the lower triangle is 16 MB and
//! stays in a 32 MB L3, so a product takes about 0.25 ms where the full eigensolver takes
//! 0.2 s.
//!
//! OpenBLAS's `dsymv`, `dtrsv` and LAPACK's `dpotrf` where one runs ([`crate::linalg::library`]),
//! faer's without. Only the lower triangle (column-major) is read by
//! [`symv`] and [`cholesky_in_place`]; the factor's strict upper triangle is left as it was.

use crate::linalg::library;

/// `y = A x` for the symmetric `a` (its lower triangle read, column-major).
pub fn symv(a: &[f64], n: usize, x: &[f64], y: &mut [f64]) {
    check(a, n, &[x.len(), y.len()]);
    if n > 0 {
        library().routines().symv(a, n, x, y)
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
    library().routines().potrf(a, n)
}

/// `x = (L L^T)^{-1} x` through the factor `l` of [`cholesky_in_place`]: a forward and a back
/// substitution, `2 n^2` multiply-adds.
pub fn cholesky_solve(l: &[f64], n: usize, x: &mut [f64]) {
    check(l, n, &[x.len()]);
    if n > 0 {
        let routines = library().routines();
        routines.trsv(l, n, x, false);
        routines.trsv(l, n, x, true);
    }
}

fn check(a: &[f64], n: usize, vectors: &[usize]) {
    assert_eq!(a.len(), n * n, "symmetric: an n x n buffer");
    assert!(
        vectors.iter().all(|&v| v == n),
        "symmetric: vectors of length n"
    );
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
