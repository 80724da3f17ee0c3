//! Infinite-width theory for ReLU and linear networks (Liu & Hui, Sec. 4).
//!
//! - Embedding angle recursion (Eq. 7-9): `theta_l = g(theta_{l-1})`,
//!   `g(z) = arccos(((pi - z) cos z + sin z) / pi)` (the arc-cosine kernel of degree 1,
//!   Cho & Saul), norms preserved.
//! - Model-gradient angle (Thm 4.4):
//!   `cos phi = 1/(L+1) sum_{l=0..L} cos theta_l prod_{k=l..L-1} (1 - theta_k / pi)`.
//! - Linear network: every angle equals `theta_in`.

use std::f64::consts::PI;

/// `g(z) = arccos(((pi - z) cos z + sin z) / pi)`, radians.
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
/// (Thm 4.4).
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Public check values of `reference/theory.md` (degrees).
    #[test]
    fn thm_4_4_check_values() {
        let cases = [
            (5.0, 1, 10.767),
            (5.0, 2, 14.300),
            (5.0, 5, 21.368),
            (5.0, 10, 28.913),
            (60.0, 1, 61.890),
            (60.0, 10, 68.069),
        ];
        for (theta, depth, phi) in cases {
            let got = relu_grad_angle(f64::to_radians(theta), depth).to_degrees();
            // The check values are printed to 3 decimals.
            assert!(
                (got - phi).abs() < 6e-4,
                "theta {theta} L {depth}: {got} vs {phi}"
            );
        }
    }
}
