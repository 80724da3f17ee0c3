//! LeakyReLU, `s(x) = x` for `x > 0`, `alpha x` otherwise (neural-tangents'
//! `stax.LeakyRelu(alpha)`): `alpha = 0` is ReLU, `alpha = 1` the identity, `alpha = -1` the
//! absolute value. Positively homogeneous, with dual kernels in closed form through ReLU's.

use burn::tensor::Tensor;
use ntk_numerics::linalg::Real;
use std::f64::consts::PI;

use super::relu::arc_cosine;
use super::{ActivationFn, Cuda, DualKernel, Look, Moments, Param, Shape, cuda_float};

/// The slope of the negative side, `alpha`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LeakyRelu {
    pub alpha: f64,
}

/// PyTorch's default negative slope.
pub const LEAKY_RELU_DEFAULT_ALPHA: f64 = 0.01;

impl ActivationFn for LeakyRelu {
    const PARAM: Option<Param> = Some(Param {
        symbol: "alpha",
        meaning: "negative slope",
        default: LEAKY_RELU_DEFAULT_ALPHA,
        range: (-1.0, 1.0),
    });
    const LOOK: Look = Look {
        label: "LeakyReLU",
        rgb: (188, 80, 144),
        shape: Shape::Circle,
    };
    fn with_param(param: Option<f64>) -> Self {
        Self {
            alpha: param.unwrap_or(LEAKY_RELU_DEFAULT_ALPHA),
        }
    }
    fn param(&self) -> Option<f64> {
        Some(self.alpha)
    }
    fn eval(&self, x: f64) -> f64 {
        if x > 0.0 { x } else { self.alpha * x }
    }
    fn derivative(&self, x: f64) -> f64 {
        if x > 0.0 { 1.0 } else { self.alpha }
    }
    fn forward<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        let negative = x.clone().lower_equal_elem(0.0);
        let scaled = x.clone().mul_scalar(self.alpha);
        x.mask_where(negative, scaled)
    }
    fn derivative_tensor<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        let negative = x.clone().lower_equal_elem(0.0);
        x.ones_like().mask_fill(negative, self.alpha)
    }
    fn kinks(&self) -> Vec<f64> {
        vec![0.0]
    }
    fn is_homogeneous(&self) -> bool {
        true
    }
    /// `E s(Z) = (1 - alpha) phi(0)`, `E s(Z)^2 = (1 + alpha^2) / 2`,
    /// `E[Z s(Z)] = (1 + alpha) / 2`.
    fn closed_moments(&self) -> Option<Moments> {
        let a = self.alpha;
        Some(Moments {
            mean: (1.0 - a) / (2.0 * PI).sqrt(),
            second: (1.0 + a * a) / 2.0,
            z_s: (1.0 + a) / 2.0,
        })
    }
    /// With `s(x) = alpha x + (1 - alpha) relu(x)` and `E[u relu(v)] = c12 / 2` (by the
    /// symmetry `(u, v) -> (-u, -v)`): `E[s(u) s(v)] = alpha c12 + (1 - alpha)^2 A1` and
    /// `E[s'(u) s'(v)] = alpha + (1 - alpha)^2 A0`, with ReLU's arc-cosine kernels
    /// `(A1, A0)` ([`arc_cosine`]), times `c = 2 / (1 + alpha^2)`. A zero input `u = 0` has
    /// `s'(0) = alpha` (the network's left derivative): `E[s'(0) s'(v)] = alpha (1 + alpha) / 2`.
    fn closed_dual(&self, q1: f64, q2: f64, c12: f64) -> Option<DualKernel> {
        let a = self.alpha;
        let c = 2.0 / (1.0 + a * a);
        let (a1, a0) = arc_cosine(q1, q2, c12);
        let b = (1.0 - a) * (1.0 - a);
        let slope = match (q1 > 0.0, q2 > 0.0) {
            (true, true) => a + b * a0,
            (false, false) => a * a,
            _ => a * (1.0 + a) / 2.0,
        };
        Some(DualKernel {
            sigma: c * (a * c12 + b * a1),
            sigma_dot: c * slope,
        })
    }
    fn activate_host<T: Real>(&self, gamma: f64, a: &mut [T], slope: &mut [T]) {
        let (g, ga) = (T::of(gamma), T::of(gamma * self.alpha));
        for (a, s) in a.iter_mut().zip(slope) {
            let on = *a > T::of(0.0);
            let k = if on { g } else { ga };
            *a *= k;
            *s = k;
        }
    }
    fn cuda(&self) -> Option<Cuda> {
        Some(Cuda {
            value: format!("(z > 0.f ? z : {} * z)", cuda_float(self.alpha)),
            slope: format!("(z > 0.f ? 1.f : {})", cuda_float(self.alpha)),
        })
    }
}
