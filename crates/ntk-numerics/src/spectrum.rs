//! The spectrum of a symmetric kernel in f64, with a condition number that is honest about
//! singularity.
//!
//! A kernel computed in precision with unit roundoff `eps` carries absolute errors of order
//! `n eps lambda_max` in every eigenvalue (Weyl's inequality applied to the rounding error of
//! the Gram products, whose norm is bounded by about `n eps ||K||`). An eigenvalue below that
//! threshold cannot be told from zero: the kernel is reported singular (`kappa = inf`) with
//! its numerical rank, the count of eigenvalues above the threshold.
//!
//! Low-rank kernels (the linear network's, rank <= d + 1; the Gram matrix) are recognized
//! before the O(n^3) eigensolver by a pivoted Cholesky factorization `K = L L^T + S`
//! ([`low_rank`]), whose residual `S` is bounded by its trace: when the factorization
//! stops at rank `r` with `trace(S) <= tau = n eps lambda_max`, Weyl's inequality puts the
//! other `n - r` eigenvalues of `K` in `[-tau, tau]` (unresolvable: reported as 0) and the
//! top `r` within `tau` of those of `L^T L` (an `r x r` problem).

use faer::MatRef;
use serde::Serialize;

use crate::kernel::Kernel;

/// What is read off a kernel's spectrum, whichever route found it (every eigenvalue, or only
/// the extremes): `lambda_min`, `lambda_max`, `kappa = lambda_max / lambda_min` (`None` when
/// the kernel is numerically singular, `lambda_min <= n eps lambda_max`), the numerical
/// `rank` (a lower bound when only the extremes were computed, unless the kernel was found of
/// low rank) and `singular`. The one type for these numbers: [`Spectrum::summary`],
/// `ntk_kernel::extreme::Extreme::summary`, the library's `ntk_kernel::api::Conditioning`
/// and the probe's summaries all hold it.
///
/// The rows of the CSV files (`ntk.csv`'s `NtkRow`, `blocks.csv`'s `BlockRow`,
/// `predicted_spectrum.csv`'s `SpectrumRow`, the library's `MetricRow`, `results.csv`'s
/// `ResultRow`) copy these fields instead of holding a `Summary`: the `csv` crate writes no
/// header for a nested struct and cannot flatten one, and each file keeps the column order
/// its users read (docs/columns.md). Each row is made from a `Summary` (or the
/// `Conditioning` or probe summary made from one) in one place, so the numbers have this
/// one type.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Summary {
    pub lambda_min: f64,
    pub lambda_max: f64,
    pub kappa: Option<f64>,
    pub rank: usize,
    pub singular: bool,
}

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

impl Spectrum {
    /// The conditioning numbers of this spectrum ([`Summary`]; its rank is exact).
    pub fn summary(&self) -> Summary {
        Summary {
            lambda_min: self.lambda_min,
            lambda_max: self.lambda_max,
            kappa: (!self.singular).then_some(self.kappa),
            rank: self.rank,
            singular: self.singular,
        }
    }
}

/// Computes all eigenvalues with the host symmetric eigensolver ([`crate::linalg`]) and
/// classifies the kernel; `epsilon` is the unit roundoff of the precision `K` was built in.
pub fn spectrum(kernel: &Kernel, epsilon: f64) -> crate::Result<Spectrum> {
    check_entries(kernel)?;
    let eigenvalues = in_range(kernel, &|k, _| match low_rank(k, epsilon)? {
        Some(eigenvalues) => Ok(eigenvalues),
        None => crate::linalg::sym_eigenvalues(&k.data, k.size),
    })?;
    Ok(classify(eigenvalues, epsilon))
}

/// What every route to a kernel's eigenvalues does first: an empty kernel or one with an
/// entry that is not finite is an error, and a kernel of low rank gets its whole spectrum
/// from [`low_rank`], classified; `None` when it is not of low rank (an eigensolver, full or
/// extreme, is needed).
pub fn checked_low_rank(kernel: &Kernel, epsilon: f64) -> crate::Result<Option<Spectrum>> {
    check_entries(kernel)?;
    let eigenvalues = in_range(
        kernel,
        &|k, _| Ok(low_rank(k, epsilon)?.unwrap_or_default()),
    )?;
    // None of them: not of low rank (a kernel has n >= 1 eigenvalues).
    Ok((!eigenvalues.is_empty()).then(|| classify(eigenvalues, epsilon)))
}

/// The largest magnitude of an entry [`in_range`] takes as it is: `2^400` (and its inverse
/// below). Between them no product or sum of squares the eigensolvers form overflows or
/// underflows, so a kernel of ordinary scale is solved bit for bit as given.
const SCALE_LIMIT: f64 = 2.5822498780869086e120;

/// The eigenvalues (ascending) that `solve` finds for `kernel`, found on the kernel scaled by
/// a power of two `2^-e` when its largest entry is outside `[1 / SCALE_LIMIT, SCALE_LIMIT]`
/// (`e` that entry's binary exponent: exact, every entry keeps its digits unless it falls
/// below f64's normal range, 2^-1022 of the largest) and scaled back; `solve` is given the
/// kernel and the factor `2^-e` (1 when not scaled). An eigenvalue that is not finite once
/// scaled back is [`crate::Error::SpectrumOverflow`]: `lambda_max` can be at most `n` times
/// the largest entry, past f64's largest number when the entries are within that factor of
/// it (round 99, D3: such a kernel was reported "singular, rank 0" with `lambda_max = inf`,
/// and its summary, `null` there, could not be read back).
fn in_range(
    kernel: &Kernel,
    solve: &dyn Fn(&Kernel, f64) -> crate::Result<Vec<f64>>,
) -> crate::Result<Vec<f64>> {
    let largest = kernel.data.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if largest == 0.0 || (1.0 / SCALE_LIMIT..=SCALE_LIMIT).contains(&largest) {
        return solve(kernel, 1.0);
    }
    let e = binary_exponent(largest);
    let by = times_pow2;
    let scaled = Kernel {
        size: kernel.size,
        data: kernel.data.iter().map(|&v| by(v, -e)).collect(),
    };
    let values = solve(&scaled, by(1.0, -e))?;
    let top = values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let back: Vec<f64> = values.iter().map(|&v| by(v, e)).collect();
    if back.iter().all(|v| v.is_finite()) {
        return Ok(back);
    }
    let decimal = top.log10() + f64::from(e) * std::f64::consts::LOG10_2;
    let exponent = decimal.floor();
    Err(crate::Error::SpectrumOverflow {
        largest_entry: largest,
        lambda_max: Some((10f64.powf(decimal - exponent), exponent as i32)),
    })
}

/// `e` with `2^e <= x < 2^(e + 1)` for a finite `x > 0` (give or take one where `log2`
/// rounds: a scale by `2^-e` need only bring `x` near 1).
pub fn binary_exponent(x: f64) -> i32 {
    x.log2().floor() as i32
}

/// `v 2^e`, exactly unless it leaves f64's normal range (`|e|` up to 2098): the scale as two
/// halves, each a normal power of two.
pub fn times_pow2(v: f64, e: i32) -> f64 {
    v * pow2(e / 2) * pow2(e - e / 2)
}

/// `2^e` for `|e| <= 1022` (a normal number), exactly.
fn pow2(e: i32) -> f64 {
    f64::from_bits(((1023 + i64::from(e)) as u64) << 52)
}

/// An empty kernel, or one with an entry that is not finite, is an error.
fn check_entries(kernel: &Kernel) -> crate::Result<()> {
    if kernel.size == 0 {
        return Err(crate::Error::EmptyKernel);
    }
    if kernel.data.iter().any(|v| !v.is_finite()) {
        return Err(crate::Error::NonFiniteKernel);
    }
    Ok(())
}

/// [`spectrum`] with the eigenvalues' absolute error known to be `tolerance` (a measured
/// error, [`classify_within`]) instead of the worst-case bound `n eps lambda_max`: the
/// low-rank shortcut stops where the residual's trace is at most `tolerance`
/// ([`low_rank_within`]), so that it zeroes no eigenvalue the tolerance resolves, else the
/// full eigensolver; classified within `tolerance`. [`spectrum`]'s low-rank shortcut stops at
/// `n eps max_diag`: its spectrum cannot be reclassified by a smaller tolerance, the
/// eigenvalues it reports as 0 may lie anywhere up to that stop.
pub fn spectrum_within(kernel: &Kernel, tolerance: f64) -> crate::Result<Spectrum> {
    check_entries(kernel)?;
    let eigenvalues = in_range(
        kernel,
        &|k, scale| match low_rank_within(k, tolerance * scale)? {
            Some(eigenvalues) => Ok(eigenvalues),
            None => crate::linalg::sym_eigenvalues(&k.data, k.size),
        },
    )?;
    Ok(classify_within(eigenvalues, tolerance))
}

/// The largest rank [`low_rank`] tries: its cost is `n r^2 / 2` multiply-adds, about 0.1%
/// of the eigensolver's `~4 n^3 / 3` at this rank (a full-rank kernel pays it in vain).
fn max_low_rank(n: usize) -> usize {
    (n / 16).clamp(1, 1024)
}

/// All eigenvalues (ascending) of a kernel of numerical rank at most [`max_low_rank`], from
/// a left-looking pivoted Cholesky factorization `K = L L^T + S`, or `None` when the kernel
/// is not that low in rank (the caller then runs the full eigensolver).
///
/// Stops at step `r` when the residual diagonal sums to at most `n eps max_diag(K)`, which is
/// at most `tau = n eps lambda_max` (`max_diag <= lambda_max`); `S` is positive
/// semi-definite up to rounding, so `||S|| <= trace(S) <= tau`. The eigenvalues are those
/// of the `r x r` matrix `L^T L` and `n - r` zeros.
pub fn low_rank(kernel: &Kernel, epsilon: f64) -> crate::Result<Option<Vec<f64>>> {
    let n = kernel.size;
    let max_diag = (0..n).map(|i| kernel.data[i * n + i]).fold(0.0, f64::max);
    low_rank_within(kernel, n as f64 * epsilon * max_diag)
}

/// [`low_rank`] stopping where the residual diagonal sums to at most `stop`: the `n - r`
/// eigenvalues reported as 0 then lie in `[-stop, stop]` (Weyl, `||S|| <= trace(S)`).
pub fn low_rank_within(kernel: &Kernel, stop: f64) -> crate::Result<Option<Vec<f64>>> {
    let n = kernel.size;
    let k = &kernel.data;
    let r_max = max_low_rank(n);
    let mut diag: Vec<f64> = (0..n).map(|i| k[i * n + i]).collect();
    let max_diag = diag.iter().cloned().fold(0.0, f64::max);
    if max_diag <= 0.0 {
        return Ok(Some(vec![0.0; n]));
    }
    // L row-major, n x r_max: row i holds L[i, 0..r].
    let mut l = vec![0.0f64; n * r_max];
    let mut rank = 0;
    loop {
        let residual: f64 = diag.iter().map(|d| d.max(0.0)).sum();
        if residual <= stop {
            break;
        }
        if rank == r_max {
            return Ok(None);
        }
        let (p, &dp) = diag
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .expect("n > 0");
        let root = dp.sqrt();
        let lp: Vec<f64> = l[p * r_max..p * r_max + rank].to_vec();
        // Column `rank` of L: (K[:, p] - L[:, :rank] L[p, :rank]^T) / sqrt(d_p); row p of K
        // is column p (symmetric, row-major).
        for i in 0..n {
            if diag[i] == f64::NEG_INFINITY {
                continue;
            }
            let row = &l[i * r_max..i * r_max + rank];
            let dot: f64 = row.iter().zip(&lp).map(|(a, b)| a * b).sum();
            let v = (k[p * n + i] - dot) / root;
            l[i * r_max + rank] = v;
            diag[i] -= v * v;
        }
        diag[p] = f64::NEG_INFINITY; // pivoted: out of the residual
        l[p * r_max + rank] = root;
        rank += 1;
    }
    // Pivoted rows carry -inf in `diag`; the residual ignored them (max(0)).
    let mut gram = vec![0.0f64; rank * rank];
    for row in l.chunks(r_max) {
        for a in 0..rank {
            for b in 0..=a {
                gram[a * rank + b] += row[a] * row[b];
            }
        }
    }
    for a in 0..rank {
        for b in 0..a {
            gram[b * rank + a] = gram[a * rank + b];
        }
    }
    let mut eigenvalues = vec![0.0; n - rank];
    eigenvalues.extend(crate::linalg::sym_eigenvalues(&gram, rank)?);
    eigenvalues.sort_by(f64::total_cmp);
    Ok(Some(eigenvalues))
}

/// Eigenvalues (ascending) of `X^T X` for the row-major `n x d` matrix `X`, in f64.
pub fn covariance_eigenvalues(x: &[f64], n: usize, d: usize) -> crate::Result<Vec<f64>> {
    let m = MatRef::from_row_major_slice(x, n, d);
    let cov = m.transpose() * m;
    let cov = Kernel {
        size: d,
        data: (0..d * d).map(|k| cov[(k / d, k % d)]).collect(),
    };
    finite_gram(&cov.data, x)?;
    in_range(&cov, &|k, _| {
        crate::linalg::sym_eigenvalues(&k.data, k.size)
    })
}

/// The spectrum of the inputs' Gram matrix `X X^T` (the depth-0 kernel) for the row-major
/// `n x d` inputs `x`, in f64: through the `d x d` matrix `X^T X` (and `n - d` zeros) when
/// `n > d`.
pub fn gram_spectrum(x: &[f64], n: usize, d: usize) -> crate::Result<Spectrum> {
    let epsilon = crate::backend::Precision::F64.epsilon();
    if n > d {
        let mut eigenvalues = vec![0.0; n - d];
        eigenvalues.extend(covariance_eigenvalues(x, n, d)?);
        eigenvalues.sort_by(f64::total_cmp);
        return Ok(classify(eigenvalues, epsilon));
    }
    let gram = Kernel::gram(x, n, d);
    finite_gram(&gram.data, x)?;
    spectrum(&gram, epsilon)
}

/// The binary exponent below which the inputs' largest magnitude is scaled up before their
/// Gram is formed ([`gram_spectrum_scaled`]): at `2^-240` the Gram's entries are about
/// `2^-480`, far above f64's smallest normal number `2^-1022`.
const SMALL_GRAM: i32 = 240;

/// The scale-free part of [`gram_spectrum`]: `(spectrum, e)` with `spectrum` that of
/// `(2^-e X)(2^-e X)^T`, whose condition number, rank and singularity are `X X^T`'s (a power
/// of two changes none of them; its eigenvalues are `4^-e` times `X X^T`'s). `e = 0` where
/// `||X||_F^2`, which bounds `X X^T`'s largest eigenvalue, is finite and the largest input
/// magnitude is at or above `2^-240`; else `e` is the binary exponent of the largest input
/// magnitude, so that every eigenvalue is in range (inputs far below unit scale, whose Gram
/// would underflow, scaled up). Inputs
/// whose Gram matrix has a diagonal entry `|x|^2` past f64's range are
/// [`crate::Error::NonFiniteGram`], as [`check_gram_finite`] refuses them: only there does the
/// depth-0 kernel itself overflow. Rows of norm 1e154 have a finite Gram matrix whose largest
/// eigenvalue passes f64's range, and an erf network's kernel of 1.37e154 on them: the
/// refusal of that eigenvalue, in the kernel's words, stopped a run whose kernel is in range
/// (hundred-and-twelfth hostile round, D2).
pub fn gram_spectrum_scaled(x: &[f64], n: usize, d: usize) -> crate::Result<(Spectrum, i32)> {
    check_gram_finite(x, n, d)?;
    let largest = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    // Far below unit scale the Gram's entries lose digits or vanish (rows of 1e-170: "rank 0
    // of 3"; hundred-and-twenty-second hostile round): scaled up as far as down.
    let small = largest > 0.0 && binary_exponent(largest) < -SMALL_GRAM;
    if !small && x.iter().map(|v| v * v).sum::<f64>().is_finite() {
        return Ok((gram_spectrum(x, n, d)?, 0));
    }
    let e = binary_exponent(largest);
    let scaled: Vec<f64> = x.iter().map(|&v| times_pow2(v, -e)).collect();
    Ok((gram_spectrum(&scaled, n, d)?, e))
}

/// Refuses inputs whose Gram matrix `X X^T` has an entry past f64's range, without forming
/// it: exactly when a row's sum of squares `|x|^2` (a diagonal entry) overflows, the other
/// entries being bounded by the diagonal's (Cauchy-Schwarz). The depth-0 kernel is then not
/// finite, and every route forms `|x|^2`. A Gram matrix in range whose largest eigenvalue
/// is not is left to [`gram_spectrum_scaled`]. A dry run calls it, so that it refuses what
/// the run would, in the same words.
pub fn check_gram_finite(x: &[f64], _n: usize, d: usize) -> crate::Result<()> {
    let overflows = x
        .chunks(d.max(1))
        .any(|row| !row.iter().map(|v| v * v).sum::<f64>().is_finite());
    if !overflows {
        return Ok(());
    }
    let largest = x.iter().map(|v| v.abs()).fold(0.0, f64::max);
    Err(crate::Error::NonFiniteGram { largest })
}

/// An inputs' Gram matrix (either side) that overflowed is an error naming the inputs'
/// largest magnitude, not an eigensolver failure.
fn finite_gram(gram: &[f64], x: &[f64]) -> crate::Result<()> {
    if gram.iter().all(|v| v.is_finite()) {
        return Ok(());
    }
    let largest = x.iter().map(|v| v.abs()).fold(0.0, f64::max);
    Err(crate::Error::NonFiniteGram { largest })
}

/// Condition number, rank and singularity from ascending eigenvalues.
pub fn classify(eigenvalues: Vec<f64>, epsilon: f64) -> Spectrum {
    let n = eigenvalues.len();
    let tolerance = n as f64 * epsilon * eigenvalues[n - 1].abs();
    classify_within(eigenvalues, tolerance)
}

/// [`classify`] with the eigenvalues' absolute error known: `tolerance`, e.g. a kernel's
/// measured distance `||K - K_ref||_2` from a second, more precise evaluation (Weyl: every
/// eigenvalue of `K` is within it of the reference's), instead of the worst-case bound
/// `n eps lambda_max`.
pub fn classify_within(eigenvalues: Vec<f64>, tolerance: f64) -> Spectrum {
    let n = eigenvalues.len();
    let lambda_min = eigenvalues[0];
    let lambda_max = eigenvalues[n - 1];
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

/// The spectral norm `||A - B||_2` of the difference of two symmetric `n x n` kernels (the
/// largest eigenvalue magnitude of `A - B`, host eigensolver, f64).
pub fn distance(a: &Kernel, b: &Kernel) -> crate::Result<f64> {
    let n = a.size;
    if b.size != n {
        return Err(crate::Error::KernelSizes { a: n, b: b.size });
    }
    let diff: Vec<f64> = a.data.iter().zip(&b.data).map(|(x, y)| x - y).collect();
    if diff.iter().any(|v| !v.is_finite()) {
        return Err(crate::Error::NonFiniteKernel);
    }
    let ev = crate::linalg::sym_eigenvalues(&diff, n)?;
    Ok(ev.iter().fold(0.0, |m: f64, v| m.max(v.abs())))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The measured tolerance decides where the worst-case bound cannot: a diagonal kernel
    /// with kappa 1e5 at n = 512 is singular under f32's `n eps lambda_max` (6.1e-5
    /// lambda_max) and resolved under an error of 1e-8; the distance of two kernels is the
    /// largest eigenvalue of their difference.
    #[test]
    fn a_measured_error_resolves_what_the_bound_cannot() {
        let n = 512;
        let eigenvalues: Vec<f64> = (0..n).map(|i| 1e-5 + i as f64 / (n - 1) as f64).collect();
        let f32_eps = f64::from(f32::EPSILON);
        assert!(classify(eigenvalues.clone(), f32_eps).singular);
        let s = classify_within(eigenvalues, 1e-8);
        assert!(!s.singular && s.rank == n, "{s:?}");
        assert!((s.kappa - (1.0 + 1e-5) / 1e-5).abs() < 1e-6 * s.kappa);
        let mut a = Kernel::gram(&[1.0, 0.0, 0.0, 2.0], 2, 2);
        let b = a.clone();
        a.data[3] += 0.5;
        a.data[1] += 0.25;
        a.data[2] += 0.25;
        // [[0, .25], [.25, .5]]: eigenvalues (0.5 +- sqrt(0.5)) / 2.
        let expected = (0.5 + 0.5f64.sqrt()) / 2.0;
        assert!((distance(&a, &b).unwrap() - expected).abs() < 1e-15);
    }

    /// The check without the Gram matrix refuses exactly the overflowing Gram matrices that
    /// `gram_spectrum` refuses, on both sides (n > d and n <= d), in the same words, up to
    /// f64's range (faer's eigensolver, the fallback without OpenBLAS, solves a copy scaled
    /// by a power of two, so it converges near the range too).
    /// A kernel of numerical rank 2 under f32's worst-case bound (`n eps_f32 max_diag` =
    /// 7.6e-6 over 64 samples, the residual's trace 6.2e-7) takes the low-rank shortcut,
    /// which reports its 62 small eigenvalues (1e-8) as 0; within a measured error of 1e-12
    /// they are resolved, so the spectrum within that tolerance is the kernel's own: regular,
    /// full rank, kappa 1e8. Within a tolerance above them it takes the shortcut again.
    #[test]
    fn a_measured_tolerance_is_not_undercut_by_the_low_rank_shortcut() {
        let n = 64;
        let mut values = vec![1e-8; n];
        values[10] = 1.0;
        values[40] = 0.5;
        // Rotated off the axes (a Householder reflection), so that no entry is zero.
        let v: Vec<f64> = (0..n).map(|i| ((i as f64) * 0.7).sin() + 0.1).collect();
        let vv: f64 = v.iter().map(|a| a * a).sum();
        let h = |i: usize, j: usize| f64::from(u8::from(i == j)) - 2.0 * v[i] * v[j] / vv;
        let mut k = Kernel::zeros(n);
        for i in 0..n {
            for j in 0..n {
                k.data[i * n + j] = (0..n).map(|l| h(i, l) * values[l] * h(j, l)).sum();
            }
        }
        let f32_eps = f64::from(f32::EPSILON);
        let bound = spectrum(&k, f32_eps).unwrap();
        assert!(bound.singular && bound.rank == 2, "{bound:?}");
        assert!(
            low_rank(&k, f32_eps).unwrap().is_some(),
            "the shortcut is taken"
        );
        let within = spectrum_within(&k, 1e-12).unwrap();
        assert!(!within.singular && within.rank == n, "{within:?}");
        assert!((within.kappa - 1e8).abs() < 1e-4 * 1e8, "{within:?}");
        let coarse = spectrum_within(&k, 1e-6).unwrap();
        assert!(coarse.singular && coarse.rank == 2, "{coarse:?}");
        assert!(low_rank_within(&k, 1e-6).unwrap().is_some());
    }

    /// The check without the Gram matrix refuses exactly the inputs whose scale-free Gram
    /// spectrum is refused (a row's `|x|^2` past f64's range), on both sides (n > d and n <=
    /// d), in the same words; below that the spectrum is the unscaled one's where that is
    /// in range, and the same kappa where its largest eigenvalue is not (rows of norm 1e154:
    /// hundred-and-twelfth hostile round, D2).
    #[test]
    fn the_gram_check_agrees_with_the_gram_spectrum() {
        for (n, d) in [(8, 3), (3, 8)] {
            let x: Vec<f64> = (0..n * d)
                .map(|i| (1 + i * 7919 % 113) as f64 / 113.0)
                .collect();
            let mut scaled = 0;
            let (at_one, e) = gram_spectrum_scaled(&x, n, d).unwrap();
            assert_eq!(e, 0);
            for scale in [1.0, 1e150, 1e153, 5e153, 6e153, 7e153, 1e154, 1e155, 1e160] {
                let x: Vec<f64> = x.iter().map(|v| v * scale).collect();
                let check = check_gram_finite(&x, n, d).map_err(|e| e.to_string());
                let full = gram_spectrum_scaled(&x, n, d);
                let spec = full.as_ref().ok().cloned();
                let full = full.map(|_| ()).map_err(|e| e.to_string());
                assert_eq!(check, full, "n {n} d {d} scale {scale:e}");
                if let Some((s, e)) = spec {
                    scaled += usize::from(e > 0);
                    assert_eq!((s.rank, s.singular), (at_one.rank, at_one.singular));
                    // Each eigenvalue, scaled back to the inputs' scale, is the unit inputs'
                    // times scale^2 (relative to the largest).
                    for (a, b) in s.eigenvalues.iter().zip(&at_one.eigenvalues) {
                        let back = a / (scale * scale) * 4f64.powi(e);
                        assert!(
                            (back - b).abs() <= 1e-9 * at_one.lambda_max,
                            "{scale:e}: {back} vs {b}"
                        );
                    }
                } else {
                    assert!(
                        check.unwrap_err().contains("not finite in f64"),
                        "{scale:e}"
                    );
                }
            }
            assert!(scaled > 0, "n {n} d {d}: no scale took the scaled route");
        }
        // The reviewer's rows: X X^T = [[1e308, 1e308, 0], [1e308, 1e308 + 1e292, 0], [0, 0,
        // 1]], lambda_max 2e308 and lambda_min 1: singular by f64's tolerance (`n u
        // lambda_max`), as the spectrum of X / 2^511 says.
        let x = [1e154, 0.0, 0.0, 1e154, 1e146, 0.0, 0.0, 0.0, 1.0];
        assert!(gram_spectrum(&x, 3, 3).is_err());
        let (s, e) = gram_spectrum_scaled(&x, 3, 3).unwrap();
        assert_eq!(e, 511);
        assert!(s.singular, "{s:?}");
    }

    /// Inputs far below unit scale (rows of 1e-170, whose Gram underflows to 0 in f64: "rank
    /// 0 of 3" in the hundred-and-twenty-second hostile round) have the unit rows' kappa and
    /// rank, from the rows scaled up by a power of two; at 2^-240 and above, as given.
    #[test]
    fn a_gram_of_tiny_inputs_is_scaled_up() {
        let (n, d) = (3, 3);
        let x = [2.0, 1.0, 0.0, 1.0, 3.0, 1.0, 0.0, 1.0, 4.0];
        let (unit, _) = gram_spectrum_scaled(&x, n, d).unwrap();
        assert!(!unit.singular, "{unit:?}");
        for scale in [2f64.powi(-239), 1e-100, 1e-170, 1e-300, 1e-320] {
            let tiny: Vec<f64> = x.iter().map(|v| v * scale).collect();
            let (s, e) = gram_spectrum_scaled(&tiny, n, d).unwrap();
            assert_eq!(e < 0, scale < 2f64.powi(-240), "{scale:e}: e {e}");
            assert_eq!(
                (s.rank, s.singular),
                (unit.rank, unit.singular),
                "{scale:e}"
            );
            // Subnormal inputs (1e-320) keep about 11 bits.
            let within = if scale < 1e-300 { 1e-2 } else { 1e-9 };
            assert!(
                ((s.kappa - unit.kappa) / unit.kappa).abs() < within,
                "{scale:e}: kappa {} against {}",
                s.kappa,
                unit.kappa
            );
        }
    }

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

    fn full_eigenvalues(k: &Kernel) -> Vec<f64> {
        crate::linalg::sym_eigenvalues(&k.data, k.size).unwrap()
    }

    /// The pivoted-Cholesky route recognizes a rank-d Gram matrix and gives the eigensolver's
    /// eigenvalues within tau; a full-rank kernel is left to the eigensolver.
    #[test]
    fn low_rank_kernels_are_recognized_and_their_spectrum_kept() {
        let (n, d) = (160, 5); // max_low_rank(160) = 10 >= d
        let x: Vec<f64> = (0..n * d)
            .map(|i| ((i * 7919 % 113) as f64 / 113.0 - 0.5) * (1.0 + (i % 3) as f64))
            .collect();
        let g = Kernel::gram(&x, n, d);
        let ev = low_rank(&g, f64::EPSILON).unwrap().expect("rank 5");
        let full = full_eigenvalues(&g);
        let tau = n as f64 * f64::EPSILON * full[n - 1];
        for (a, b) in ev.iter().zip(&full) {
            assert!((a - b).abs() <= tau, "{a} vs {b} (tau {tau})");
        }
        let s = spectrum(&g, f64::EPSILON).unwrap();
        assert!(s.singular && s.rank == d, "{s:?}");
        // Plus the identity: full rank, not low rank.
        let mut pd = g.clone();
        for i in 0..n {
            pd.data[i * n + i] += 1.0;
        }
        assert!(low_rank(&pd, f64::EPSILON).unwrap().is_none());
        let s = spectrum(&pd, f64::EPSILON).unwrap();
        assert!(!s.singular && (s.lambda_min - 1.0).abs() < 1e-10, "{s:?}");
    }

    /// `c (J + I)` for `n = 6`: eigenvalues `7 c` once and `c` five times, entries `2 c` and
    /// `c`.
    fn ones_plus_identity(c: f64) -> Kernel {
        let n = 6;
        let mut k = Kernel::zeros(n);
        for i in 0..n {
            for j in 0..n {
                k.data[i * n + j] = if i == j { 2.0 * c } else { c };
            }
        }
        k
    }

    /// The spectrum does not depend on the kernel's scale: at every scale from 1e-300 to
    /// 1e300 (the kernel scaled by a power of two past 2^400 and back, exactly) the full
    /// route (low rank and full eigensolver) and the within-tolerance route find `s` times the
    /// unit kernel's eigenvalues to a few ulps, and classify it alike (round 99, D3).
    #[test]
    fn the_spectrum_is_scale_free_across_f64s_range() {
        let unit = spectrum(&ones_plus_identity(1.0), f64::EPSILON).unwrap();
        let low = Kernel::gram(&[1.0, 2.0, 0.5, -1.0, 3.0, 0.25], 3, 2);
        let low_unit = spectrum(&low, f64::EPSILON).unwrap();
        for s in [1e-300, 1e-200, 1e-125, 1e-10, 1e10, 1e125, 1e200, 1e300] {
            let mut k = ones_plus_identity(1.0);
            k.data.iter_mut().for_each(|v| *v *= s);
            let sp = spectrum(&k, f64::EPSILON).unwrap();
            assert!(!sp.singular && sp.rank == 6, "{s}: {sp:?}");
            for (a, b) in sp.eigenvalues.iter().zip(&unit.eigenvalues) {
                assert!(
                    (a / (b * s) - 1.0).abs() < 64.0 * f64::EPSILON,
                    "{s}: {a} vs {b}"
                );
            }
            assert!(
                (sp.kappa / 7.0 - 1.0).abs() < 64.0 * f64::EPSILON,
                "{s}: {sp:?}"
            );
            let within = spectrum_within(&k, 1e-12 * s).unwrap();
            assert!(
                (within.kappa / 7.0 - 1.0).abs() < 64.0 * f64::EPSILON,
                "{s}"
            );
            let mut g = low.clone();
            g.data.iter_mut().for_each(|v| *v *= s);
            let sg = spectrum(&g, f64::EPSILON).unwrap();
            assert!(sg.singular && sg.rank == low_unit.rank, "{s}: {sg:?}");
            let top = |x: &Spectrum| x.lambda_max;
            assert!((top(&sg) / (top(&low_unit) * s) - 1.0).abs() < 64.0 * f64::EPSILON);
        }
    }

    /// A kernel whose entries are finite but whose `lambda_max` is not in f64 (`7 c` at `c =
    /// 5e307`) is refused by name with its value, never "singular, rank 0".
    #[test]
    fn a_lambda_max_past_f64s_range_is_an_error_with_its_value() {
        let k = ones_plus_identity(5e307);
        for e in [
            spectrum(&k, f64::EPSILON).unwrap_err(),
            spectrum_within(&k, 1.0).unwrap_err(),
        ] {
            let crate::Error::SpectrumOverflow {
                largest_entry,
                lambda_max: Some((m, x)),
            } = e
            else {
                panic!("{e:?}");
            };
            assert_eq!((largest_entry, x), (1e308, 308), "{e}");
            assert!((m - 3.5).abs() < 1e-12, "{e}");
            assert!(e.to_string().contains("lambda_max = 3.500e308"), "{e}");
        }
        // Just inside: 7 c = 1.75e308.
        let sp = spectrum(&ones_plus_identity(2.5e307), f64::EPSILON).unwrap();
        assert!(
            (sp.lambda_max / 1.75e308 - 1.0).abs() < 64.0 * f64::EPSILON,
            "{sp:?}"
        );
    }
}
