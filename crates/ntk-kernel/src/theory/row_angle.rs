//! The angle of two rows held to its digits at every angle and scale, and the helpers the
//! theory's pairwise routes share: `arccos` of a cosine keeps no angle below 8.5e-7 degrees,
//! and a Gram matrix's squares under- or overflow at norms 1e-160 or 1e160.

/// The pairs `(i, j)`, `0 <= i < j < n`.
pub fn pairs(n: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..n).flat_map(move |i| ((i + 1)..n).map(move |j| (i, j)))
}

/// The angle (radians) between the rows `x` and `y`, good to a few ulps of itself at every
/// angle: `atan2(||r||, c ||x||)` with `y = c x + r`, `r` orthogonal to `x`, by Gram-Schmidt
/// passes whose fused multiply-adds round each `r_i` once, on the rows scaled
/// by powers of two (exact; no square under- or overflows). `arccos` of the cosine keeps no
/// angle below `arccos(1 - 2^-53)` = 8.5e-7 degrees (thirty-second hostile round, D1: the
/// sweep's theory column took that for exactly parallel rows, and 0 at 1e-9 degrees).
/// Exactly proportional rows give 0; NaN for a row of zeros or of values that are not
/// finite.
pub fn input_angle(x: &[f64], y: &[f64]) -> f64 {
    let (Some((x, _)), Some((mut r, _))) = (pow2_scaled(x), pow2_scaled(y)) else {
        return f64::NAN;
    };
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(u, v)| u * v).sum::<f64>();
    let x_norm = dot(&x, &x).sqrt();
    // Each pass leaves about an ulp of what it removed along x; passes go on until that
    // is below an ulp of r (two at moderate angles, one more per 16 decades below).
    let mut c = 0.0;
    for _ in 0..MAX_PASSES {
        let ci = dot(&x, &r) / (x_norm * x_norm);
        for (ri, xi) in r.iter_mut().zip(&x) {
            *ri = (-ci).mul_add(*xi, *ri);
        }
        c += ci;
        if ci.abs() * x_norm <= norm(&r) {
            break;
        }
    }
    norm(&r).atan2(c * x_norm)
}

/// [`input_angle`]'s most Gram-Schmidt passes: each takes about 16 decades off the part
/// along `x`, and f64 spans about 630.
const MAX_PASSES: usize = 48;

/// `v` times the power of two that brings its largest magnitude into `[1, 2)`, or `None`
/// where that is 0 or not finite.
pub fn pow2_scaled(v: &[f64]) -> Option<(Vec<f64>, i32)> {
    let m = v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    if m == 0.0 || !m.is_finite() {
        return None;
    }
    let e = libm::ilogb(m);
    Some((v.iter().map(|x| libm::scalbn(*x, -e)).collect(), e))
}

/// The Euclidean norm of `v` without a square's under- or overflow: the norm of `v` scaled
/// by [`pow2_scaled`] (exact), scaled back; 0 for zeros, NaN where a value is not finite.
pub fn norm(v: &[f64]) -> f64 {
    match pow2_scaled(v) {
        Some((s, e)) => libm::scalbn(s.iter().map(|a| a * a).sum::<f64>().sqrt(), e),
        None if v.iter().all(|a| *a == 0.0) => 0.0,
        None => f64::NAN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows' angle against routes of their own: `atan(t)` for `(1, 0)` and `(1, t)`,
    /// exactly 0 and pi for proportional rows, the arccos of the cosine where that is well
    /// conditioned.
    #[test]
    fn input_angle_keeps_its_digits_at_every_angle() {
        for t in [1e-300, 1e-200, 1e-30, 1e-11, 1e-8, 1e-3, 0.5, 10.0] {
            let got = input_angle(&[1.0, 0.0], &[1.0, t]);
            assert!(
                (got / t.atan() - 1.0).abs() < 4.0 * f64::EPSILON,
                "{t}: {got}"
            );
            // Rows of very different scales (where 5e-150 t is a normal number).
            if t >= 1e-150 {
                let got = input_angle(&[3e150, 0.0, 0.0], &[5e-150, 5e-150 * t, 0.0]);
                assert!(
                    (got / t.atan() - 1.0).abs() < 4.0 * f64::EPSILON,
                    "{t} scaled: {got}"
                );
            }
        }
        assert_eq!(input_angle(&[1.0, 0.5, 0.0], &[3.0, 1.5, 0.0]), 0.0);
        assert_eq!(input_angle(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]), 0.0);
        assert_eq!(
            input_angle(&[1.0, 2.0, 3.0], &[-2.0, -4.0, -6.0]),
            std::f64::consts::PI
        );
        assert_eq!(input_angle(&[0.5, 0.75, -0.25], &[1.5, 2.25, -0.75]), 0.0);
        assert!(input_angle(&[0.0, 0.0], &[1.0, 0.0]).is_nan());
        assert!(input_angle(&[f64::NAN, 0.0], &[1.0, 0.0]).is_nan());
        for k in 0..50 {
            let x: Vec<f64> = (0..5)
                .map(|i| ((k * 7 + i * 13) % 11) as f64 - 5.0)
                .collect();
            let y: Vec<f64> = (0..5)
                .map(|i| ((k * 3 + i * 17) % 13) as f64 - 6.0)
                .collect();
            let norm = |v: &[f64]| v.iter().map(|a| a * a).sum::<f64>().sqrt();
            let dot: f64 = x.iter().zip(&y).map(|(a, b)| a * b).sum();
            if norm(&x) == 0.0 || norm(&y) == 0.0 {
                continue;
            }
            let want = (dot / (norm(&x) * norm(&y))).clamp(-1.0, 1.0).acos();
            if want.sin() > 0.1 {
                assert!((input_angle(&x, &y) - want).abs() < 1e-14, "{x:?} {y:?}");
            }
        }
    }
}
