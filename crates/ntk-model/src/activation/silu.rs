//! SiLU (swish), `s(x) = x sigma(x)` with `sigma(x) = 1 / (1 + e^{-x})` (Elfwing, Uchibe &
//! Doya 2018; Ramachandran, Zoph & Le 2017): GELU's logistic cousin.

use burn::tensor::Tensor;

use super::{ActivationFn, Cuda, Look, Shape};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Silu;

/// `sigma(x) = 1 / (1 + e^{-x})`, without overflow for large `|x|`.
fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

impl ActivationFn for Silu {
    const LOOK: Look = Look {
        label: "SiLU",
        rgb: (110, 80, 20),
        shape: Shape::Diamond,
    };
    fn with_param(_: Option<f64>) -> Self {
        Self
    }
    fn eval(&self, x: f64) -> f64 {
        x * sigmoid(x)
    }
    /// `sigma(x) (1 + x (1 - sigma(x)))`.
    fn derivative(&self, x: f64) -> f64 {
        let s = sigmoid(x);
        s * (1.0 + x * (1.0 - s))
    }
    fn forward<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        burn::tensor::activation::silu(x)
    }
    fn derivative_tensor<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        let s = burn::tensor::activation::sigmoid(x.clone());
        let one_minus = s.clone().neg().add_scalar(1.0);
        s * (x * one_minus).add_scalar(1.0)
    }
    /// `silu(u) - relu(u) = -|u| sigma(-|u|)` and `silu'(u) - 1{u > 0}` are below `1e-17`
    /// in magnitude for `|u| >= 44` (`|u| e^{-|u|}`).
    fn smooth_window(&self) -> f64 {
        44.0
    }
    fn cuda(&self) -> Option<Cuda> {
        Some(Cuda {
            value: "(z / (1.f + expf(-z)))".into(),
            slope: "((1.f / (1.f + expf(-z))) * (1.f + z * (1.f - 1.f / (1.f + expf(-z)))))".into(),
        })
    }
}
