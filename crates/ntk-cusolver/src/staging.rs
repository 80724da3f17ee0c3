//! A kernel's values on the host on their way to the device, in parallel passes (one thread
//! would take 0.15-0.3 s at `n = 10,000`, as long as the factorization and both Lanczos runs
//! together): widened from f32 to f64, and scanned for the largest magnitude.

use rayon::prelude::*;

/// Values per task: large enough that a task's cost is its memory traffic.
const CHUNK: usize = 1 << 16;

/// The largest magnitude of `values`, NaN when any is (`f64::max` alone would skip a NaN).
pub fn max_abs(values: &[f64]) -> f64 {
    let fold = |c: &[f64]| {
        let (mut max, mut nan) = (0.0f64, false);
        for v in c {
            let a = v.abs();
            nan |= a.is_nan();
            max = if a > max { a } else { max };
        }
        if nan { f64::NAN } else { max }
    };
    values.par_chunks(CHUNK).map(fold).reduce(
        || 0.0,
        |a, b| {
            if a.is_nan() || b.is_nan() {
                f64::NAN
            } else {
                a.max(b)
            }
        },
    )
}

/// `values` in f64 (exactly: every f32 is an f64).
pub fn widen(values: &[f32]) -> Vec<f64> {
    let mut out = Vec::new();
    values
        .par_iter()
        .map(|&v| f64::from(v))
        .collect_into_vec(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_magnitude_across_chunks_and_a_nan_anywhere() {
        let mut v: Vec<f64> = (0..3 * CHUNK + 5).map(|i| (i % 97) as f64 - 50.0).collect();
        assert_eq!(max_abs(&v), 50.0);
        v[2 * CHUNK + 1] = -1e300;
        assert_eq!(max_abs(&v), 1e300);
        v[CHUNK + 3] = f64::NAN;
        assert!(max_abs(&v).is_nan());
        assert_eq!(max_abs(&[]), 0.0);
    }

    #[test]
    fn widening_keeps_every_value() {
        let v: Vec<f32> = (0..CHUNK + 7)
            .map(|i| (i as f32).sqrt() * -1.5e-3)
            .collect();
        let w = widen(&v);
        assert_eq!(w.len(), v.len());
        assert!(v.iter().zip(&w).all(|(a, b)| f64::from(*a) == *b));
    }
}
