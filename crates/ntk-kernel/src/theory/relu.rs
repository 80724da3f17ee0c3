//! Infinite-width theory of ReLU networks in closed form (Liu & Hui, Sec. 4).
//!
//! - Embedding angle recursion (Eq. 7-9): `theta_l = g(theta_{l-1})`,
//!   `g(z) = arccos(((pi - z) cos z + sin z) / pi)` (the arc-cosine kernel of degree 1,
//!   Cho & Saul), norms preserved (`Sigma_l(x,x) = ||x||^2`, since `c E[relu(Z)^2] = 1`).
//! - Model-gradient angle (Thm 4.4):
//!   `cos phi = 1/(L+1) sum_{l=0..L} cos theta_l prod_{k=l..L-1} (1 - theta_k / pi)`.
//!   This is the NTK recursion `Theta_l = Theta_{l-1} Sigma_dot_l + Sigma_l`
//!   ([`super::ntk`]) unrolled for unit inputs, with `Sigma_l = cos theta_l` and
//!   `Sigma_dot_l = 1 - theta_{l-1} / pi`, normalized by `Theta_L(x,x) = L + 1`.
//! - Small angles (Thm 4.5) and infinite depth: see [`relu_small_angle_cos_phi`],
//!   [`RELU_LIMIT_PHI_DEG`], [`relu_limit_kappa`].

use std::f64::consts::PI;

use ntk_numerics::kernel::Kernel;

/// `g(z) = arccos(((pi - z) cos z + sin z) / pi)`, radians: the embedding angle after one
/// ReLU layer given the angle `z` before it (Eq. 7-9).
///
/// Formed from `1 - cos g(z) = (1 - cos z) - (sin z - z cos z) / pi` ([`one_minus_cos`],
/// [`sin_minus_z_cos`]) as `2 arcsin(sqrt((1 - cos g) / 2))`, which keeps every digit at small
/// angles: the arccos of a cosine near 1 loses half of them (`arccos(1 - e) ~ sqrt(2 e)`,
/// `e` known to an ulp of 1), and the loss compounds layer by layer (thirty-first hostile
/// round, D3: `phi` 97% off at `theta_in` = 1e-7 deg, depth 50).
///
/// Below [`G_TINY`] radians `1 - cos z` underflows (about `z^2 / 2`; thirty-second hostile
/// round, D3: `g` returned 0 at 1e-200 degrees, so every deeper layer's angle was lost): there
/// `g(z) = z - z^2 / (3 pi) + O(z^3)` (the expansion of [`relu_small_angle_cos_phi`]'s
/// derivation), which is `z` to the last bit.
pub fn g(z: f64) -> f64 {
    next_angle(z, 1.0 / PI)
}

/// The angle after one layer of a positively homogeneous activation of slope `k`
/// ([`super::relu_angles::slope`]; ReLU's [`g`] at `k = 1 / pi`) given the angle `z` before
/// it: from `1 - cos z' = (1 - cos z) - k (sin z - z cos z)`, as [`g`] is; below [`G_TINY`]
/// its expansion `z - k z^2 / 3`.
pub fn next_angle(z: f64, k: f64) -> f64 {
    if z.abs() < G_TINY {
        return z - k * z * z / 3.0;
    }
    angle_from_one_minus_cos(one_minus_cos(z) - k * sin_minus_z_cos(z))
}

/// Where [`g`] takes its expansion: `z^2` is far above f64's smallest normal number
/// (2.2e-308) above it and the expansion's next term, `O(z^3)`, is below an ulp of `z`.
pub const G_TINY: f64 = 1e-100;

/// `1 - cos z = 2 sin^2(z / 2)`, without the cancellation of `1 - z.cos()`.
pub fn one_minus_cos(z: f64) -> f64 {
    let s = (0.5 * z).sin();
    2.0 * s * s
}

/// `sin z - z cos z`, by its series `z^3/3 - z^5/30 + z^7/840 - ...` (term `k`:
/// `(-1)^(k+1) 2k z^(2k+1) / (2k+1)!`) for `|z| < 1`, where the two terms cancel, and
/// directly beyond.
pub fn sin_minus_z_cos(z: f64) -> f64 {
    if z.abs() >= 1.0 {
        return z.sin() - z * z.cos();
    }
    let z2 = z * z;
    let mut term = z * z2 / 3.0;
    let mut sum = term;
    for k in 1..30 {
        // term_{k+1} / term_k = -z^2 / (2k (2k + 3)).
        term *= -z2 / ((2 * k) as f64 * (2 * k + 3) as f64);
        sum += term;
        if term.abs() <= 1e-18 * sum.abs() {
            break;
        }
    }
    sum
}

/// The angle in `[0, pi]` whose `1 - cos` is `d`: `2 arcsin(sqrt(d / 2))`, well conditioned
/// where `arccos(1 - d)` is not (small `d`).
pub fn angle_from_one_minus_cos(d: f64) -> f64 {
    2.0 * (0.5 * d.clamp(0.0, 2.0)).sqrt().asin()
}

/// `theta_0 = theta_in, ..., theta_L` in radians for a ReLU network.
pub fn relu_embedding_angles(theta_in: f64, depth: usize) -> Vec<f64> {
    let mut t = vec![theta_in];
    for l in 0..depth {
        t.push(g(t[l]));
    }
    t
}

/// The model-gradient angle phi (radians) of a depth-L ReLU network at infinite width
/// (Thm 4.4): `cos phi = 1/(L+1) sum_{l=0..L} cos theta_l prod_{k=l..L-1} (1 - theta_k/pi)`.
///
/// Formed from `1 - cos phi = 1/(L+1) sum_l (1 - cos theta_l P_l)`, each term `(1 - cos
/// theta_l) + cos theta_l (1 - P_l)` with `1 - P_l = -expm1(sum_k ln(1 - theta_k/pi))`: a sum
/// of terms at least 0, so `phi` keeps its digits at small angles (see [`g`]).
///
/// Depth 0 is `theta_in` itself (the identity's kernel is the Gram matrix): formed through
/// `1 - cos` it lost digits near 180 degrees (179.999999 printed as 180) and underflowed to
/// 0 below about 1e-152 degrees (thirty-second hostile round, D3).
pub fn relu_grad_angle(theta_in: f64, depth: usize) -> f64 {
    if depth == 0 {
        return theta_in;
    }
    let theta = relu_embedding_angles(theta_in, depth);
    let sum: f64 = (0..=depth)
        .map(|l| {
            let log_prod: f64 = (l..depth).map(|k| (-theta[k] / PI).ln_1p()).sum();
            one_minus_cos(theta[l]) - theta[l].cos() * log_prod.exp_m1()
        })
        .sum();
    angle_from_one_minus_cos(sum / (depth as f64 + 1.0))
}

/// The small-angle expansion of Thm 4.5 without its `o(theta_in)`:
/// `cos phi ~ (1 - L theta_in / (2 pi)) cos theta_in`.
///
/// Derivation: `cos g(z) = 1 - z^2/2 + z^3/(3 pi) + O(z^4)`, so `g(z) = z - z^2/(3 pi) +
/// O(z^3)` and every `theta_l = theta_in + O(theta_in^2)`. In Thm 4.4 the product is
/// `1 - (L - l) theta_in / pi + O(theta_in^2)`, and
/// `1/(L+1) sum_{l=0..L} (L - l) = L/2` gives `cos phi = 1 - L theta_in / (2 pi) +
/// O(theta_in^2)`; the factor `cos theta_in = 1 + O(theta_in^2)` is the paper's form. The
/// remainder is `O(theta_in^2)` with a constant that grows with `L` (the products expand to
/// second order in `L theta_in`): the expansion is useful for `L theta_in << 1`.
pub fn relu_small_angle_cos_phi(theta_in: f64, depth: usize) -> f64 {
    (1.0 - depth as f64 * theta_in / (2.0 * PI)) * theta_in.cos()
}

/// `arccos` of [`relu_small_angle_cos_phi`], radians (formed from `1 - cos phi = (1 - cos
/// theta_in) + a cos theta_in`, `a = L theta_in / (2 pi)`, as [`relu_grad_angle`]).
pub fn relu_small_angle_grad_angle(theta_in: f64, depth: usize) -> f64 {
    let a = depth as f64 * theta_in / (2.0 * PI);
    angle_from_one_minus_cos(one_minus_cos(theta_in) + a * theta_in.cos())
}

/// `lim_{L -> inf} cos phi = 1/4` for every pair of non-parallel inputs.
///
/// Derivation: `g(z) = z - z^2/(3 pi) + ...` drives `theta_l -> 0` like `3 pi / l`, so
/// `prod_{k=l..L-1} (1 - theta_k / pi) ~ prod (1 - 3/k) ~ (l / L)^3` and
/// `cos phi ~ 1/(L+1) sum_l (l/L)^3 -> int_0^1 t^3 dt = 1/4`. The approach is slow (the
/// corrections decay like a power of `1/L` with logarithms): about 74.7 deg at `L = 10^4`
/// for `theta_in = 1 deg`.
pub const RELU_LIMIT_COS_PHI: f64 = 0.25;

/// `arccos(1/4)` in degrees: 75.5225 (see [`RELU_LIMIT_COS_PHI`]).
pub const RELU_LIMIT_PHI_DEG: f64 = 75.522_487_814_070_08;

/// The infinite-depth limit of the normalized ReLU NTK of `n` unit-norm, pairwise
/// non-parallel inputs: `K / (L+1) -> (3/4) I + (1/4) J` (unit diagonal, every
/// off-diagonal entry `cos phi = 1/4`). The paper-convention kernel is `(L+1)` times this
/// (other conventions add a global constant); kappa does not see such a factor.
pub fn relu_limit_kernel(n: usize) -> Kernel {
    let mut k = Kernel::zeros(n);
    for i in 0..n {
        for j in 0..n {
            k.data[i * n + j] = if i == j { 1.0 } else { RELU_LIMIT_COS_PHI };
        }
    }
    k
}

/// kappa of the infinite-depth limit matrix `(3/4) I + (1/4) J`: `(n + 3) / 3`.
///
/// `J = 1 1^T` has eigenvalue `n` on `1` and 0 on its orthogonal complement, so the matrix
/// has eigenvalues `3/4 + n/4 = (n + 3)/4` (once, on `1`: the unit diagonal plus `n - 1`
/// off-diagonal quarters) and `3/4` (`n - 1` times), and `kappa = (n + 3) / 3`
/// (n = 2: 5/3). The later paper's summary prints `(n + 4)/3`: that is the ratio
/// `(1 + n/4) / (3/4)`, i.e. the top eigenvalue taken as the unit diagonal plus `n` (instead
/// of `n - 1`) off-diagonal quarters. The paper's own limit matrix gives `(n + 3)/3`, and
/// that is what is implemented (checked against the eigenvalues in `tests/kernel/theory.rs`).
pub fn relu_limit_kappa(n: usize) -> f64 {
    (n as f64 + 3.0) / 3.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Thirty-first hostile round, D3: the angles at small `theta_in` against the recursion
    /// at 60 digits (mpmath: `k1(r) = (sqrt(1 - r^2) + (pi - arccos r) r) / pi`, `k0(r) = (pi
    /// - arccos r) / pi`, `Theta_l = Sigma_{l+1} + Theta_l k0(Sigma_l)`; degrees). Before,
    /// `phi` was 7.6% off at 1e-6 deg and 97% at 1e-7 deg, depth 50.
    #[test]
    #[allow(clippy::excessive_precision)] // mpmath's digits, as printed
    fn small_angles_keep_their_digits() {
        let rel = |a: f64, b: f64| ((a - b) / b).abs();
        for (t, want) in [
            (1e-7, 9.999999998148148148e-8),
            (1e-5, 9.9999998148148131001e-6),
            (1e-3, 0.00099999814814643342973),
            (30.0, 28.25580488842581456),
        ] {
            let got = g(f64::to_radians(t)).to_degrees();
            assert!(rel(got, want) < 1e-14, "g({t} deg) = {got}, want {want}");
        }
        for (t, depth, want) in [
            (1e-8, 1, 0.00042705752616837503967),
            (1e-7, 2, 0.0019098593195144259405),
            (1e-8, 10, 0.0013504744741163782128),
            (1e-7, 10, 0.0042705752567310693685),
            (1e-5, 10, 0.042705748833037924115),
            (1e-3, 10, 0.42705375408590391659),
            (30.0, 10, 58.236477468815937339),
            (1e-8, 50, 0.0030197527243518331745),
            (1e-7, 50, 0.0095492965248805588544),
            (1e-5, 50, 0.095492905222022695084),
            (1e-3, 50, 0.95486903011505285085),
            (30.0, 50, 70.408323022363045275),
        ] {
            let got = relu_grad_angle(f64::to_radians(t), depth).to_degrees();
            assert!(
                rel(got, want) < 1e-13,
                "phi({t} deg, depth {depth}) = {got}, want {want}"
            );
        }
        assert_eq!(relu_grad_angle(0.0, 10), 0.0);
        // Thirty-second hostile round, D3: below about 1e-152 degrees `1 - cos` underflows
        // (depth 2 was 42% off at 1e-200, depth 10 87%); mpmath at 40 + 2 x the exponent
        // digits.
        for (t, depth, want) in [
            (1e-200, 1, 4.2705752605030623509e-100),
            (1e-200, 2, 6.0395054525384442043e-100),
            (1e-200, 10, 1.3504744742356591043e-99),
            (1e-300, 3, 7.3968533287379976668e-150),
            (1e-300, 100, 4.2705752605030623509e-149),
            (1e-120, 5, 9.5492965855137201461e-60),
        ] {
            let got = relu_grad_angle(f64::to_radians(t), depth).to_degrees();
            assert!(
                rel(got, want) < 1e-13,
                "phi({t} deg, depth {depth}) = {got}, want {want}"
            );
        }
        // Depth 0 is theta_in, at both ends (179.999999 printed as 180 before).
        for t in [179.999999f64, 179.9999999999, 1e-200, 1e-300, 45.0] {
            assert_eq!(relu_grad_angle(t.to_radians(), 0), t.to_radians());
        }
        // The series and the direct formula meet at 1.
        let below = sin_minus_z_cos(1.0 - 1e-12);
        assert!(rel(below, 1f64.sin() - 1f64.cos()) < 1e-11);
    }

    #[test]
    fn limit_constants() {
        assert!((RELU_LIMIT_PHI_DEG - 0.25f64.acos().to_degrees()).abs() < 1e-12);
        assert!((RELU_LIMIT_PHI_DEG - 75.5225).abs() < 5e-5);
        assert!((relu_limit_kappa(2) - 5.0 / 3.0).abs() < 1e-15);
    }

    /// `g` fixes 0 and is below the identity elsewhere: embedding angles shrink with depth.
    #[test]
    fn g_contracts() {
        assert!(g(0.0).abs() < 1e-7);
        for deg in [1.0, 30.0, 90.0, 150.0, 180.0] {
            let z = f64::to_radians(deg);
            assert!(g(z) < z, "{deg}");
        }
        // g(pi/2) = arccos(1/pi).
        assert!((g(PI / 2.0) - (1.0 / PI).acos()).abs() < 1e-15);
    }
}
