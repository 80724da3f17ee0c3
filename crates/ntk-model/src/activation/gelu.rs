//! GELU, `s(x) = x Phi(x)` (the exact, erf form).

use burn::tensor::Tensor;
use std::f64::consts::{FRAC_1_SQRT_2, PI};

use super::{ActivationFn, Cuda, Look, Shape, cuda_float};
use crate::normal;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gelu;

impl ActivationFn for Gelu {
    const LOOK: Look = Look {
        label: "GELU",
        rgb: (44, 160, 44),
        shape: Shape::Triangle,
    };
    fn with_param(_: Option<f64>) -> Self {
        Self
    }
    fn eval(&self, x: f64) -> f64 {
        x * normal::cdf(x)
    }
    fn derivative(&self, x: f64) -> f64 {
        normal::cdf(x) + x * normal::pdf(x)
    }
    fn forward<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        burn::tensor::activation::gelu(x)
    }
    /// `Phi(x) + x phi(x)`, `Phi(x) = (1 + erf(x / sqrt 2)) / 2`.
    fn derivative_tensor<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        let cdf = x
            .clone()
            .mul_scalar(FRAC_1_SQRT_2)
            .erf()
            .add_scalar(1.0)
            .mul_scalar(0.5);
        let pdf = x
            .clone()
            .square()
            .mul_scalar(-0.5)
            .exp()
            .mul_scalar(1.0 / (2.0 * PI).sqrt());
        cdf + x * pdf
    }
    /// `gelu(u) - relu(u) = -|u| Phi(-|u|)` and `gelu'(u) - 1{u > 0}` are below `1e-18` for
    /// `|u| >= 9`.
    fn smooth_window(&self) -> f64 {
        9.0
    }
    fn cuda(&self) -> Option<Cuda> {
        Some(Cuda {
            value: "(z * normcdff(z))".into(),
            slope: format!(
                "(normcdff(z) + z * ({} * expf(-0.5f * z * z)))",
                cuda_float(1.0 / (2.0 * PI).sqrt())
            ),
        })
    }
}
