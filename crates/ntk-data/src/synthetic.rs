//! Synthetic Gaussian inputs, as in Liu & Hui's experiments (2000 samples of N(0, I_10) in the
//! official code; the paper's text says I_5).
//!
//! The set is unlabelled: every label is 0 and `num_classes` is 1, so that [`Samples`] stays
//! one type for all sources. Callers that need targets (e.g. a regression) derive them.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;

use crate::set::Samples;

/// Sample count of the official code's synthetic set.
pub const PAPER_GAUSSIAN_N: usize = 2000;
/// Input dimension of the official code's synthetic set.
pub const PAPER_GAUSSIAN_DIM: usize = 10;

/// `n` samples of N(0, I_dim) in f32, row after row, from a ChaCha8 stream seeded by `seed`.
///
/// Deterministic: the same `(n, dim, seed)` always gives the same bits, and a larger `n` extends
/// a smaller one (row `i` does not depend on `n`). Labels are all 0, `num_classes` 1.
pub fn gaussian(n: usize, dim: usize, seed: u64) -> Samples {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x: Vec<f32> = (0..n * dim).map(|_| rng.sample(StandardNormal)).collect();
    Samples {
        x,
        y: vec![0; n],
        n,
        dim,
        num_classes: 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_prefix_stable_and_standard() {
        let a = gaussian(PAPER_GAUSSIAN_N, PAPER_GAUSSIAN_DIM, 1);
        assert_eq!((a.n, a.dim, a.num_classes, a.x.len()), (2000, 10, 1, 20000));
        assert!(a.y.iter().all(|&l| l == 0));
        assert_eq!(a, gaussian(2000, 10, 1));
        assert_ne!(a.x, gaussian(2000, 10, 2).x);
        assert_eq!(gaussian(5, 10, 1).x, a.x[..50]);
        let n = a.x.len() as f64;
        let mean = a.x.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
        let var = a.x.iter().map(|&v| f64::from(v).powi(2)).sum::<f64>() / n - mean * mean;
        assert!(
            mean.abs() < 0.03 && (var - 1.0).abs() < 0.05,
            "{mean} {var}"
        );
    }
}
