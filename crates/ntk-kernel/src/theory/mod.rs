//! Infinite-width theory of the NTK at initialization (Liu & Hui, Sec. 4; Jacot et al.;
//! Agarwal, Awasthi & Kale), written in the paper convention of
//! [`ntk_model::NtkConvention::Paper`]: `alpha_0 = x`,
//! `alpha_l = sqrt(c/m) s(W_l alpha_{l-1})`, `f = W_{L+1} alpha_L`, all weights N(0, 1),
//! `c = 1 / E[s(Z)^2]`, no biases, scalar output; every convention of the networks
//! (`paper`, `official`, `unit_variance`) is the same recursion with other per-layer
//! constants and the input scaled ([`scaling`]: derived from the forward of
//! `ntk_model::Mlp`; [`infinite_width_kernels_scaled`], [`pair_recursion_scaled`]).
//!
//! - [`dual`]: one layer's kernels `Sigma_l = c E[s(u) s(v)]` and
//!   `Sigma_dot_l = c E[s'(u) s'(v)]`, in closed form for ReLU and the identity, by a
//!   kink-aware quadrature otherwise.
//! - [`ntk`]: the NTK recursion `Theta_l = Theta_{l-1} Sigma_dot_l + Sigma_l`,
//!   `Theta_0 = Sigma_0 = x.y`, for a pair of inputs ([`pair_recursion`]) and a whole data
//!   set ([`infinite_width_ntk`], [`infinite_width_embedding_gram`]), and the generic
//!   embedding and model-gradient angles ([`embedding_angles`], [`grad_angle`]).
//!   `Theta_L` is the limit of the paper-convention network's empirical NTK with no extra
//!   constant (derivation in [`ntk`]; checked against width 8192 in `tests/kernel/theory.rs`).
//! - [`relu`]: Liu & Hui's closed forms (`g`, Thm 4.4, Thm 4.5, the infinite-depth limits
//!   `phi -> arccos(1/4)` and `kappa -> (n + 3)/3`).
//! - [`linear`]: the linear network (`K = (L + 1) G`, every angle `theta_in`).
//! - [`relu_angles`]: a positively homogeneous network's kernel (ReLU, leaky ReLU) formed
//!   from each pair's angle (the recursion's cosines hold few digits of small angles: nearly
//!   parallel or opposite inputs, depth).
//! - [`row_angle`]: the angle of two rows to its digits at every angle and scale.
//! - [`on_inputs`]: what the theory says of one network on one set of inputs (its min
//!   gradient angle and kappa, [`theory_value`]), as a sweep's table puts it beside the
//!   measurements.
//! - [`transfer`]: Agarwal et al.'s transfer functions of a normalized activation off unit
//!   variance (norm `N(q)`, its slope, the bias `B(q)`; appendix I.1, Fig. 6).
//!
//! Angles are in radians unless a name says `_deg`.

mod degree_two;
pub mod dual;
pub mod linear;
#[cfg(test)]
mod measured;
pub mod ntk;
pub mod on_inputs;
pub mod pair_angle;
pub mod relu;
pub mod relu_angles;
pub mod row_angle;
pub mod scaling;
pub mod transfer;

pub use dual::{
    DualEvaluator, DualKernel, Quadrature, dual_kernel, linear_dual_kernel, relu_dual_kernel,
};
pub use linear::{linear_embedding_angles, linear_grad_angle, linear_ntk};
pub use ntk::{
    EQUAL_NORMS, InfiniteWidth, MIN_ONE_MINUS_RHO_PER_LAYER, PairRecursion, embedding_angles,
    grad_angle, grad_angle_deg, grad_angle_exact_at_every_angle, infinite_width_embedding_gram,
    infinite_width_kernels, infinite_width_kernels_scaled, infinite_width_layer_grams_scaled,
    infinite_width_ntk, layer_leaving_range, layer_leaving_range_of, odd, pair_recursion,
    pair_recursion_observed, pair_recursion_scaled, recursion_evaluations, row_leaving_range_of,
};
pub use on_inputs::{TheoryValue, may_give_angle, theory_value};
pub use pair_angle::{MAX_ANGLE_ERROR_DEG, Unresolved, pair_grad_angle_deg};
pub use relu::{
    RELU_LIMIT_COS_PHI, RELU_LIMIT_PHI_DEG, g, relu_embedding_angles, relu_grad_angle,
    relu_limit_kappa, relu_limit_kernel, relu_small_angle_cos_phi, relu_small_angle_grad_angle,
};
pub use scaling::{NotCovered, Scaling};

use ntk_model::Activation;

/// Agarwal et al.'s coefficient of non-linearity `mu = 1 - E[Z s(Z)]^2 / Var s(Z)` of the
/// normalized activation (the Hermite energy above degree one; 0 for the identity, ~0.2665
/// for ReLU), which sets the exponential rate at which the top-layer kernel and the NTK
/// become well conditioned with depth. Delegates to [`ntk_model::Moments::nonlinearity`].
pub fn nonlinearity(act: &Activation) -> f64 {
    act.moments().nonlinearity()
}

/// `f` over `items` on `threads` threads (contiguous chunks), in order.
pub(crate) fn par_map<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    if threads <= 1 || items.len() < 2 {
        return items.iter().map(&f).collect();
    }
    let chunk = items.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|part| {
                let f = &f;
                scope.spawn(move || part.iter().map(f).collect::<Vec<R>>())
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("kernel thread panicked"))
            .collect()
    })
}
