//! The identity `s(x) = x`, `c = 1`: the "linear network" of Liu & Hui Eq. (3).

use burn::tensor::Tensor;
use ntk_numerics::linalg::Real;

use super::{ActivationFn, Cuda, DualKernel, Look, Moments, Shape};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Linear;

impl ActivationFn for Linear {
    const LOOK: Look = Look {
        label: "linear",
        rgb: (31, 119, 180),
        shape: Shape::Square,
    };
    fn with_param(_: Option<f64>) -> Self {
        Self
    }
    fn eval(&self, x: f64) -> f64 {
        x
    }
    fn derivative(&self, _: f64) -> f64 {
        1.0
    }
    fn forward<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        x
    }
    fn derivative_tensor<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        x.ones_like()
    }
    fn is_homogeneous(&self) -> bool {
        true
    }
    fn closed_moments(&self) -> Option<Moments> {
        Some(Moments {
            mean: 0.0,
            second: 1.0,
            z_s: 1.0,
        })
    }
    /// `Sigma = c12`, `Sigma_dot = 1`.
    fn closed_dual(&self, _q1: f64, _q2: f64, c12: f64) -> Option<DualKernel> {
        Some(DualKernel {
            sigma: c12,
            sigma_dot: 1.0,
        })
    }
    fn activate_host<T: Real>(&self, gamma: f64, a: &mut [T], slope: &mut [T]) {
        let g = T::of(gamma);
        for (a, s) in a.iter_mut().zip(slope) {
            *a *= g;
            *s = g;
        }
    }
    fn cuda(&self) -> Option<Cuda> {
        Some(Cuda {
            value: "z".into(),
            slope: "1.f".into(),
        })
    }
}
