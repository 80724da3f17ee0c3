//! NormReLU, `s_b(x) = lambda_b (max(x, b) - mu_b)`: the ReLU with a kink at `b`, shifted and
//! scaled to mean 0 and second moment 1 under `N(0, 1)` (Agarwal, Awasthi, Kale), with
//! closed-form moments and transfer functions.

use burn::tensor::Tensor;

use super::{ActivationFn, Cuda, Look, Moments, Param, ScaledMoments, Shape, cuda_float};
use crate::normal;

/// The NormReLU kink that Agarwal et al. use: the `b` at which NormReLU's `lambda_b` equals
/// SELU's scale (`reference/theory.md`).
pub const NORM_RELU_DEFAULT_B: f64 = -1.590_765_856_4;

/// NormReLU's constants for kink `b` (closed forms of `reference/theory.md`):
/// `mu_b = b Phi(b) + phi(b)` (= `E[max(Z,b)]`),
/// `E[max(Z,b)^2] = b^2 Phi(b) + (1 - Phi(b)) + b phi(b)`,
/// `lambda_b = (E[max(Z,b)^2] - mu_b^2)^(-1/2)`,
/// so that `E[s_b(Z)] = 0` and `E[s_b(Z)^2] = 1`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NormRelu {
    pub b: f64,
    pub mu: f64,
    pub lambda: f64,
}

impl NormRelu {
    pub fn new(b: f64) -> Self {
        let (pdf, cdf) = (normal::pdf(b), normal::cdf(b));
        let mu = b * cdf + pdf;
        let second = b * b * cdf + (1.0 - cdf) + b * pdf;
        let lambda = (second - mu * mu).powf(-0.5);
        Self { b, mu, lambda }
    }
}

impl ActivationFn for NormRelu {
    const PARAM: Option<Param> = Some(Param {
        symbol: "b",
        meaning: "kink",
        default: NORM_RELU_DEFAULT_B,
        range: (-8.0, 8.0),
    });
    const LOOK: Look = Look {
        label: "NormReLU",
        rgb: (140, 86, 75),
        shape: Shape::Circle,
    };
    fn with_param(param: Option<f64>) -> Self {
        Self::new(param.unwrap_or(NORM_RELU_DEFAULT_B))
    }
    fn param(&self) -> Option<f64> {
        Some(self.b)
    }
    fn eval(&self, x: f64) -> f64 {
        self.lambda * (x.max(self.b) - self.mu)
    }
    fn derivative(&self, x: f64) -> f64 {
        self.lambda * f64::from(x > self.b)
    }
    fn forward<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        x.clamp_min(self.b)
            .sub_scalar(self.mu)
            .mul_scalar(self.lambda)
    }
    fn derivative_tensor<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        let on = x.clone().greater_elem(self.b);
        x.zeros_like().mask_fill(on, self.lambda)
    }
    fn kinks(&self) -> Vec<f64> {
        vec![self.b]
    }
    /// Normalized by construction; `E[Z max(Z, b)] = 1 - Phi(b)` (Stein: `E[1{Z > b}]`).
    fn closed_moments(&self) -> Option<Moments> {
        Some(Moments {
            mean: 0.0,
            second: 1.0,
            z_s: self.lambda * (1.0 - normal::cdf(self.b)),
        })
    }
    /// With `t = b / sqrt(q)`, `E max(Z, t) = t Phi(t) + phi(t)`,
    /// `E max(Z, t)^2 = t^2 Phi(t) + 1 - Phi(t) + t phi(t)`:
    /// `m(q) = lambda (sqrt(q) E max(Z, t) - mu)`,
    /// `N(q) = lambda^2 (q E max(Z, t)^2 - 2 mu sqrt(q) E max(Z, t) + mu^2)`,
    /// `N'(q) = lambda^2 (1 - Phi(t) + t phi(t) - mu phi(t) / sqrt(q))`.
    fn closed_scaled_moments(&self, q: f64) -> Option<ScaledMoments> {
        let t = self.b / q.sqrt();
        let (pdf, cdf) = (normal::pdf(t), normal::cdf(t));
        let first = t * cdf + pdf;
        let second = t * t * cdf + (1.0 - cdf) + t * pdf;
        let (l2, rq) = (self.lambda * self.lambda, q.sqrt());
        Some(ScaledMoments {
            mean: self.lambda * (rq * first - self.mu),
            second: l2 * (q * second - 2.0 * self.mu * rq * first + self.mu * self.mu),
            second_slope: l2 * ((1.0 - cdf) + t * pdf - self.mu * pdf / rq),
        })
    }
    /// Normalized by construction: `E[s(Z)] = 0`, `E[s(Z)^2] = 1`.
    fn is_normalized(&self) -> bool {
        true
    }
    fn cuda(&self) -> Option<Cuda> {
        Some(Cuda {
            value: format!(
                "(((z < {b} ? {b} : z) - {mu}) * {l})",
                b = cuda_float(self.b),
                mu = cuda_float(self.mu),
                l = cuda_float(self.lambda)
            ),
            slope: format!(
                "(z > {b} ? {l} : 0.f)",
                b = cuda_float(self.b),
                l = cuda_float(self.lambda)
            ),
        })
    }
}
