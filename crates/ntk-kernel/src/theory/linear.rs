//! The linear network (identity activation, `c = 1`; Liu & Hui Eq. 3) at infinite width.
//!
//! With `s(x) = x` the dual kernel is `Sigma_l = Sigma_{l-1}` and `Sigma_dot_l = 1`
//! ([`super::dual::linear_dual_kernel`]), so every layer's Gram matrix equals the input's,
//! `Sigma_l = G = X X^T`, every embedding angle equals `theta_in`, and the NTK recursion
//! `Theta_l = Theta_{l-1} * 1 + G` gives `Theta_L = (L + 1) G`: the model-gradient angle
//! equals `theta_in` and `kappa(K) = kappa(G)` at every depth. Equivalently
//! `||grad f(x)||^2 = (L + 1) ||x||^2`: each of the `L + 1` weight matrices contributes
//! `||x||^2`.
//!
//! The v1 text prints `(L + 1)^2 G` and `||grad f|| = (L + 1) ||x||`; the recursion (and the
//! empirical kernel, `tests/kernel/theory_vs_measurement.rs`) give `(L + 1) G` and
//! `||grad f|| = sqrt(L + 1) ||x||`. Either way the factor is global and kappa is unchanged.

use ntk_numerics::kernel::Kernel;

/// Every embedding angle equals `theta_in`: `[theta_in; L + 1]` (radians).
pub fn linear_embedding_angles(theta_in: f64, depth: usize) -> Vec<f64> {
    vec![theta_in; depth + 1]
}

/// The model-gradient angle of the linear network: `phi = theta_in` at every depth.
pub fn linear_grad_angle(theta_in: f64, _depth: usize) -> f64 {
    theta_in
}

/// The infinite-width NTK of the linear network, `K = (L + 1) G` with `G = X X^T` of the
/// row-major `n x d` inputs (see the module doc for the v1 text's `(L + 1)^2` misprint).
pub fn linear_ntk(x: &[f64], n: usize, d: usize, depth: usize) -> Kernel {
    let mut k = Kernel::gram(x, n, d);
    let scale = depth as f64 + 1.0;
    k.data.iter_mut().for_each(|v| *v *= scale);
    k
}
