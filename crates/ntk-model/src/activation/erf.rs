//! `s(x) = erf(x)`: the sigmoid-like activation whose dual kernels Williams (1997) gave in
//! closed form (neural-tangents' `stax.Erf`).

use burn::tensor::Tensor;
use std::f64::consts::PI;

use super::{ActivationFn, Cuda, DualKernel, Look, Moments, Shape, cuda_float};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Erf;

/// `E[erf(Z)^2] = (2 / pi) arcsin(2 / 3)`, so `c = 1 / that ~ 1.3798`.
fn second_moment() -> f64 {
    2.0 / PI * (2.0_f64 / 3.0).asin()
}

impl ActivationFn for Erf {
    const LOOK: Look = Look {
        label: "erf",
        rgb: (23, 128, 128),
        shape: Shape::Triangle,
    };
    fn with_param(_: Option<f64>) -> Self {
        Self
    }
    fn eval(&self, x: f64) -> f64 {
        libm::erf(x)
    }
    /// `erf'(x) = 2 / sqrt(pi) e^{-x^2}`.
    fn derivative(&self, x: f64) -> f64 {
        2.0 / PI.sqrt() * (-x * x).exp()
    }
    fn forward<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        x.erf()
    }
    fn derivative_tensor<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        x.square().neg().exp().mul_scalar(2.0 / PI.sqrt())
    }
    /// `erf(u)` is `+-1` and `erf'(u)` 0 to within `5e-19` beyond `|u| = 6.5`.
    fn smooth_window(&self) -> f64 {
        6.5
    }
    /// Odd, so `E erf(Z) = 0`; `E[Z erf(Z)] = E[erf'(Z)] = 2 / sqrt(3 pi)` (Stein).
    fn closed_moments(&self) -> Option<Moments> {
        Some(Moments {
            mean: 0.0,
            second: second_moment(),
            z_s: 2.0 / (3.0 * PI).sqrt(),
        })
    }
    /// Williams (1997): `E[erf(u) erf(v)] = (2 / pi) arcsin(2 c12 / sqrt((1 + 2 q1)(1 + 2 q2)))`
    /// and `E[erf'(u) erf'(v)] = (4 / pi) / sqrt((1 + 2 q1)(1 + 2 q2) - 4 c12^2)`, both times
    /// `c`. The second root is written `1 + 2 q1 + 2 q2 + 4 (q1 q2 - c12^2)` (at least
    /// `1 + 2 q1 + 2 q2` by Cauchy-Schwarz).
    fn closed_dual(&self, q1: f64, q2: f64, c12: f64) -> Option<DualKernel> {
        let c = 1.0 / second_moment();
        let (a1, a2) = (1.0 + 2.0 * q1, 1.0 + 2.0 * q2);
        let arg = (2.0 * c12 / (a1.sqrt() * a2.sqrt())).clamp(-1.0, 1.0);
        let det = (1.0 + 2.0 * q1 + 2.0 * q2 + 4.0 * (q1 * q2 - c12 * c12)).max(0.0);
        Some(DualKernel {
            sigma: c * 2.0 / PI * arg.asin(),
            sigma_dot: c * 4.0 / PI / det.sqrt(),
        })
    }
    fn cuda(&self) -> Option<Cuda> {
        Some(Cuda {
            value: "erff(z)".into(),
            slope: format!("({} * expf(-z * z))", cuda_float(2.0 / PI.sqrt())),
        })
    }
}
