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
pub fn g(z: f64) -> f64 {
    (((PI - z) * z.cos() + z.sin()) / PI)
        .clamp(-1.0, 1.0)
        .acos()
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
pub fn relu_grad_angle(theta_in: f64, depth: usize) -> f64 {
    let theta = relu_embedding_angles(theta_in, depth);
    let sum: f64 = (0..=depth)
        .map(|l| {
            let prod: f64 = (l..depth).map(|k| 1.0 - theta[k] / PI).product();
            theta[l].cos() * prod
        })
        .sum();
    (sum / (depth as f64 + 1.0)).clamp(-1.0, 1.0).acos()
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

/// `arccos` of [`relu_small_angle_cos_phi`], radians.
pub fn relu_small_angle_grad_angle(theta_in: f64, depth: usize) -> f64 {
    relu_small_angle_cos_phi(theta_in, depth)
        .clamp(-1.0, 1.0)
        .acos()
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
