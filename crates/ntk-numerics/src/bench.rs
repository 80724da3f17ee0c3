//! What the benchmarks share: this machine's peak and a best-of-N timer.

use std::time::Instant;

use crate::backend::Precision;

/// Peak FLOP/s of this machine class (2 cores, AVX-512 FMA at 2.6 GHz): 2 cores x 2 FMA
/// units x 16 f32 lanes x 2 FLOP x 2.6 GHz = 166 GFLOP/s in f32, half that in f64.
pub fn peak_gflops(precision: Precision) -> f64 {
    match precision {
        Precision::F32 => 166.4,
        Precision::F64 => 83.2,
    }
}

/// The best of `repeats` timed calls of `once` after one untimed warm-up, and the last
/// call's result.
pub fn best_of<T, E>(
    repeats: usize,
    mut once: impl FnMut() -> Result<T, E>,
) -> Result<(T, f64), E> {
    let mut result = once()?;
    let mut best = f64::INFINITY;
    for _ in 0..repeats {
        let s = Instant::now();
        result = once()?;
        best = best.min(s.elapsed().as_secs_f64());
    }
    Ok((result, best))
}
