//! `s(x) = max(x, 0)^2`.

use burn::tensor::Tensor;
use std::f64::consts::PI;

use super::{ActivationFn, Cuda, Look, Moments, Shape};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReluSquared;

impl ActivationFn for ReluSquared {
    const LOOK: Look = Look {
        label: "ReLU²",
        rgb: (255, 127, 14),
        shape: Shape::Diamond,
    };
    fn with_param(_: Option<f64>) -> Self {
        Self
    }
    fn eval(&self, x: f64) -> f64 {
        x.max(0.0).powi(2)
    }
    fn derivative(&self, x: f64) -> f64 {
        2.0 * x.max(0.0)
    }
    fn forward<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        burn::tensor::activation::relu(x).square()
    }
    fn derivative_tensor<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        burn::tensor::activation::relu(x).mul_scalar(2.0)
    }
    fn kinks(&self) -> Vec<f64> {
        vec![0.0]
    }
    /// `E[relu^2] = 1/2`, `E[relu^4] = 3/2`, `E[Z relu^2] = E[Z^3; Z > 0] = 2 phi(0)`.
    fn closed_moments(&self) -> Option<Moments> {
        Some(Moments {
            mean: 0.5,
            second: 1.5,
            z_s: 2.0 / (2.0 * PI).sqrt(),
        })
    }
    fn cuda(&self) -> Option<Cuda> {
        Some(Cuda {
            value: "((z < 0.f ? 0.f : z) * (z < 0.f ? 0.f : z))".into(),
            slope: "(2.f * (z < 0.f ? 0.f : z))".into(),
        })
    }
}
