//! The spectrum of a symmetric kernel in f64, with a condition number that is honest about
//! singularity.
//!
//! A kernel computed in precision with unit roundoff `eps` carries absolute errors of order
//! `n eps lambda_max` in every eigenvalue (Weyl's inequality applied to the rounding error of
//! the Gram products, whose norm is bounded by about `n eps ||K||`). An eigenvalue below that
//! threshold cannot be told from zero: the kernel is reported singular (`kappa = inf`) with
//! its numerical rank, the count of eigenvalues above the threshold.

use faer::MatRef;
use serde::Serialize;

use crate::kernel::Kernel;

/// Eigenvalues (ascending) and what they say about conditioning.
#[derive(Clone, Debug, Serialize)]
pub struct Spectrum {
    pub eigenvalues: Vec<f64>,
    pub lambda_min: f64,
    pub lambda_max: f64,
    /// `lambda_max / lambda_min`, or infinite when the kernel is numerically singular.
    pub kappa: f64,
    /// Number of eigenvalues above `tolerance`.
    pub rank: usize,
    /// `n eps lambda_max`: the smallest eigenvalue the computation can resolve.
    pub tolerance: f64,
    pub singular: bool,
}

/// Computes all eigenvalues with the host symmetric eigensolver ([`crate::linalg`]) and
/// classifies the kernel; `epsilon` is the unit roundoff of the precision `K` was built in.
pub fn spectrum(kernel: &Kernel, epsilon: f64) -> Result<Spectrum, String> {
    let n = kernel.size;
    if n == 0 {
        return Err("empty kernel".into());
    }
    if kernel.data.iter().any(|v| !v.is_finite()) {
        return Err("the kernel has non-finite entries (overflow or NaN in the network)".into());
    }
    let eigenvalues = crate::linalg::sym_eigenvalues(&kernel.data, n)?;
    Ok(classify(eigenvalues, epsilon))
}

/// Eigenvalues (ascending) of `X^T X` for the row-major `n x d` matrix `X`, in f64.
pub fn covariance_eigenvalues(x: &[f64], n: usize, d: usize) -> Result<Vec<f64>, String> {
    let x = MatRef::from_row_major_slice(x, n, d);
    let cov = x.transpose() * x;
    let cov: Vec<f64> = (0..d * d).map(|k| cov[(k / d, k % d)]).collect();
    crate::linalg::sym_eigenvalues(&cov, d)
}

/// Condition number, rank and singularity from ascending eigenvalues.
pub fn classify(eigenvalues: Vec<f64>, epsilon: f64) -> Spectrum {
    let n = eigenvalues.len();
    let lambda_min = eigenvalues[0];
    let lambda_max = eigenvalues[n - 1];
    let tolerance = n as f64 * epsilon * lambda_max.abs();
    let rank = eigenvalues.iter().filter(|&&v| v > tolerance).count();
    let singular = lambda_min <= tolerance;
    let kappa = if singular {
        f64::INFINITY
    } else {
        lambda_max / lambda_min
    };
    Spectrum {
        eigenvalues,
        lambda_min,
        lambda_max,
        kappa,
        rank,
        tolerance,
        singular,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `X^T X` and `X X^T` share their nonzero eigenvalues: the covariance route of the
    /// Gram spectrum agrees with the full `n x n` eigensolve.
    #[test]
    fn covariance_eigenvalues_are_the_gram_eigenvalues() {
        let (n, d) = (40, 6);
        let x: Vec<f64> = (0..n * d)
            .map(|i| ((i * 7919 % 113) as f64 / 113.0 - 0.5) * (1.0 + (i % 5) as f64))
            .collect();
        let full = spectrum(&Kernel::gram(&x, n, d), f64::EPSILON).unwrap();
        let small = covariance_eigenvalues(&x, n, d).unwrap();
        let top = &full.eigenvalues[n - d..];
        for (a, b) in top.iter().zip(&small) {
            assert!((a - b).abs() <= 1e-12 * full.lambda_max, "{a} vs {b}");
        }
        assert_eq!(full.rank, d);
        assert!(full.singular);
    }
}
