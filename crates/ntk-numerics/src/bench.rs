//! What the benchmarks share: this machine's peak, measured, and a best-of-N timer.

use std::sync::OnceLock;
use std::time::Instant;

use crate::backend::Precision;

/// This machine's peak FLOP/s in `precision`, measured once per process: every thread of
/// the pool the host engines run on (rayon's: `RAYON_NUM_THREADS`, else one per core) runs
/// independent fused multiply-adds `a <- a b + c` on the widest vectors its CPU has
/// (AVX-512F, else AVX2 with FMA, else separate multiplies and adds on what the build
/// targets), all threads at once, best of three rounds:
///
/// `peak = threads x iterations x accumulators x lanes x 2 FLOP / seconds`.
///
/// A benchmark's floor (`FLOPs / peak`) is then what no code can beat on this machine at its
/// clock now, whatever the CPU (a figure written down for one machine class was wrong on
/// the next: issue 62). About 0.1 s the first time: rounds of 20 ms, since a few ms read
/// half the rate on an Intel Xeon (its cores power up the 512-bit units and change clock
/// only after a heavy AVX-512 stretch has begun).
pub fn peak_gflops(precision: Precision) -> f64 {
    static PEAK: [OnceLock<f64>; 2] = [OnceLock::new(), OnceLock::new()];
    let (slot, f64_lanes) = match precision {
        Precision::F32 => (&PEAK[0], false),
        Precision::F64 => (&PEAK[1], true),
    };
    *slot.get_or_init(|| measure(peak_threads(), f64_lanes))
}

/// How [`peak_gflops`] measures here: its vector instructions and threads.
pub fn peak_method() -> String {
    format!("{} on {} threads", fma::best().name(), peak_threads())
}

fn peak_threads() -> usize {
    rayon::current_num_threads().max(1)
}

/// `threads` threads running [`fma::run`] at once; the best of three rounds, GFLOP/s.
fn measure(threads: usize, f64_lanes: bool) -> f64 {
    const ITERATIONS: usize = 8_000_000;
    let isa = fma::best();
    let flops = (threads * ITERATIONS * fma::ACCUMULATORS * isa.lanes(f64_lanes) * 2) as f64;
    let round = || {
        let start = Instant::now();
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| std::hint::black_box(fma::run(isa, f64_lanes, ITERATIONS)));
            }
        });
        start.elapsed().as_secs_f64()
    };
    let best = (0..3).map(|_| round()).fold(f64::INFINITY, f64::min);
    flops / best / 1e9
}

/// The multiply-add loops, one per instruction set.
mod fma {
    /// Independent accumulators per thread: more than an FMA's latency (4 cycles) times the
    /// units issuing it (2), so the loop is bound by throughput, not by a dependency chain.
    pub const ACCUMULATORS: usize = 12;

    /// The widest FMA vectors of this CPU.
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub enum Isa {
        Avx512,
        Avx2Fma,
        /// Separate multiplies and adds on what the build targets, in the compiler's vectors:
        /// `4 ACCUMULATORS` f32 or `2 ACCUMULATORS` f64 values a round, 2 FLOPs each.
        Portable,
    }

    impl Isa {
        pub fn name(self) -> &'static str {
            match self {
                Isa::Avx512 => "AVX-512 FMA",
                Isa::Avx2Fma => "AVX2 FMA",
                Isa::Portable => "multiply and add",
            }
        }

        /// Values per vector: f32 lanes, or f64 ones with `f64_lanes`.
        pub fn lanes(self, f64_lanes: bool) -> usize {
            let f32_lanes = match self {
                Isa::Avx512 => 16,
                Isa::Avx2Fma => 8,
                Isa::Portable => 4,
            };
            if f64_lanes { f32_lanes / 2 } else { f32_lanes }
        }
    }

    pub fn best() -> Isa {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                return Isa::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                return Isa::Avx2Fma;
            }
        }
        Isa::Portable
    }

    /// `iterations` rounds of [`ACCUMULATORS`] multiply-adds on `isa`'s vectors; returns a
    /// value of the accumulators (so that none is optimized away).
    pub fn run(isa: Isa, f64_lanes: bool, iterations: usize) -> f64 {
        match isa {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `best` chose this `isa` only where the CPU has AVX-512F.
            Isa::Avx512 => unsafe { x86::avx512(f64_lanes, iterations) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `best` chose this `isa` only where the CPU has AVX2 and FMA.
            Isa::Avx2Fma => unsafe { x86::avx2(f64_lanes, iterations) },
            _ if f64_lanes => portable::<f64, { ACCUMULATORS * 2 }>(iterations),
            _ => portable::<f32, { ACCUMULATORS * 4 }>(iterations),
        }
    }

    /// The loop in plain arithmetic on `N` values (the compiler's vectors).
    fn portable<T, const N: usize>(iterations: usize) -> f64
    where
        T: Copy + From<f32> + Into<f64> + std::ops::Mul<Output = T> + std::ops::Add<Output = T>,
    {
        let mut acc = [T::from(1.0); N];
        let (b, c) = (std::hint::black_box(T::from(0.999_999)), T::from(1e-7));
        for _ in 0..iterations {
            for a in acc.iter_mut() {
                *a = *a * b + c;
            }
        }
        acc.iter().map(|&a| a.into()).sum()
    }

    #[cfg(target_arch = "x86_64")]
    mod x86 {
        use super::ACCUMULATORS;
        use std::arch::x86_64::*;

        /// The loop on 512-bit vectors. `a` converges to `c / (1 - b)` = 0.1: no overflow,
        /// no subnormals to slow it.
        #[target_feature(enable = "avx512f")]
        pub fn avx512(f64_lanes: bool, iterations: usize) -> f64 {
            if f64_lanes {
                let (b, c) = (_mm512_set1_pd(0.999_999), _mm512_set1_pd(1e-7));
                let mut acc = [_mm512_set1_pd(1.0); ACCUMULATORS];
                for _ in 0..iterations {
                    for a in acc.iter_mut() {
                        *a = _mm512_fmadd_pd(*a, b, c);
                    }
                }
                acc.iter().map(|&a| _mm512_reduce_add_pd(a)).sum()
            } else {
                let (b, c) = (_mm512_set1_ps(0.999_999), _mm512_set1_ps(1e-7));
                let mut acc = [_mm512_set1_ps(1.0); ACCUMULATORS];
                for _ in 0..iterations {
                    for a in acc.iter_mut() {
                        *a = _mm512_fmadd_ps(*a, b, c);
                    }
                }
                acc.iter()
                    .map(|&a| f64::from(_mm512_reduce_add_ps(a)))
                    .sum()
            }
        }

        /// The loop on 256-bit vectors with FMA.
        #[target_feature(enable = "avx2,fma")]
        pub fn avx2(f64_lanes: bool, iterations: usize) -> f64 {
            let mut out = [0.0f64; 4];
            if f64_lanes {
                let (b, c) = (_mm256_set1_pd(0.999_999), _mm256_set1_pd(1e-7));
                let mut acc = [_mm256_set1_pd(1.0); ACCUMULATORS];
                for _ in 0..iterations {
                    for a in acc.iter_mut() {
                        *a = _mm256_fmadd_pd(*a, b, c);
                    }
                }
                let mut s = _mm256_setzero_pd();
                for a in acc {
                    s = _mm256_add_pd(s, a);
                }
                // SAFETY: `out` holds 4 f64, the 256 bits stored (unaligned store).
                unsafe { _mm256_storeu_pd(out.as_mut_ptr(), s) };
            } else {
                let (b, c) = (_mm256_set1_ps(0.999_999), _mm256_set1_ps(1e-7));
                let mut acc = [_mm256_set1_ps(1.0); ACCUMULATORS];
                for _ in 0..iterations {
                    for a in acc.iter_mut() {
                        *a = _mm256_fmadd_ps(*a, b, c);
                    }
                }
                let mut s = _mm256_setzero_ps();
                for a in acc {
                    s = _mm256_add_ps(s, a);
                }
                let mut lanes = [0.0f32; 8];
                // SAFETY: `lanes` holds 8 f32, the 256 bits stored (unaligned store).
                unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), s) };
                out[0] = lanes.iter().map(|&v| f64::from(v)).sum();
            }
            out.iter().sum()
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loops_compute_the_recurrence() {
        // After k steps from 1: a_k = 0.1 + 0.9 b^k (c / (1 - b) = 0.1), every lane alike.
        let k = 1000;
        let expect = 0.1 + 0.9 * 0.999_999f64.powi(k);
        for (isa, f64_lanes) in [fma::best(), fma::Isa::Portable]
            .into_iter()
            .flat_map(|isa| [(isa, false), (isa, true)])
        {
            let per = fma::run(isa, f64_lanes, k as usize)
                / (fma::ACCUMULATORS * isa.lanes(f64_lanes)) as f64;
            assert!(
                (per - expect).abs() < 1e-4,
                "{isa:?} f64 {f64_lanes}: {per} vs {expect}"
            );
        }
    }

    #[test]
    fn the_peak_is_a_rate() {
        // A rate, not a check of its size: other tests share the cores while this one runs
        // (the size is what `ntk-train bench` prints, measured on a quiet machine).
        let (s, d) = (peak_gflops(Precision::F32), peak_gflops(Precision::F64));
        assert!(
            s.is_finite() && s > 0.0 && d.is_finite() && d > 0.0,
            "{s} {d}"
        );
        assert!(peak_method().contains(" on "), "{}", peak_method());
    }
}
