//! `s(x) = tanh(x)`.

use burn::tensor::Tensor;

use super::{ActivationFn, Cuda, Look, Shape};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tanh;

impl ActivationFn for Tanh {
    const LOOK: Look = Look {
        label: "tanh",
        rgb: (148, 103, 189),
        shape: Shape::Diamond,
    };
    fn with_param(_: Option<f64>) -> Self {
        Self
    }
    fn eval(&self, x: f64) -> f64 {
        x.tanh()
    }
    fn derivative(&self, x: f64) -> f64 {
        1.0 - x.tanh().powi(2)
    }
    fn forward<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        x.tanh()
    }
    fn derivative_tensor<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        x.tanh().square().neg().add_scalar(1.0)
    }
    /// `1 - tanh(u) = 2 e^{-2u} / (1 + e^{-2u}) < 1e-17` and `tanh'(u) < 4 e^{-2u}` for
    /// `u >= 20`.
    fn smooth_window(&self) -> f64 {
        20.0
    }
    fn cuda(&self) -> Option<Cuda> {
        Some(Cuda {
            value: "tanhf(z)".into(),
            slope: "(1.f - s * s)".into(),
        })
    }
}
