//! ReLU, `s(x) = max(x, 0)`, `c = 2`: Liu & Hui's activation, with the arc-cosine dual
//! kernels of Cho & Saul in closed form.

use burn::tensor::Tensor;
use ntk_numerics::linalg::Real;
use std::f64::consts::PI;

use super::{ActivationFn, Cuda, DualKernel, Look, Moments, Shape, correlation};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Relu;

/// `E[relu(u) relu(v)]` and `E[1{u>0} 1{v>0}]` for `(u, v)` of covariance
/// `[[q1, c12], [c12, q2]]` (Cho & Saul's arc-cosine kernels of degree 1 and 0), with
/// `t = arccos rho`: `sqrt(q1 q2) (sin t + (pi - t) cos t) / (2 pi)` and `(pi - t) / (2 pi)`;
/// 0 and 0 when an input is zero (`relu'(0) = 0`, as in the network).
pub fn arc_cosine(q1: f64, q2: f64, c12: f64) -> (f64, f64) {
    if q1 <= 0.0 || q2 <= 0.0 {
        return (0.0, 0.0);
    }
    let t = correlation(q1, q2, c12).acos();
    (
        q1.sqrt() * q2.sqrt() * (t.sin() + (PI - t) * t.cos()) / (2.0 * PI),
        (PI - t) / (2.0 * PI),
    )
}

impl ActivationFn for Relu {
    const LOOK: Look = Look {
        label: "ReLU",
        rgb: (214, 39, 40),
        shape: Shape::Circle,
    };
    fn with_param(_: Option<f64>) -> Self {
        Self
    }
    fn eval(&self, x: f64) -> f64 {
        x.max(0.0)
    }
    fn derivative(&self, x: f64) -> f64 {
        f64::from(x > 0.0)
    }
    fn forward<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        burn::tensor::activation::relu(x)
    }
    fn derivative_tensor<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        let on = x.clone().greater_elem(0.0);
        x.zeros_like().mask_fill(on, 1.0)
    }
    fn kinks(&self) -> Vec<f64> {
        vec![0.0]
    }
    fn is_homogeneous(&self) -> bool {
        true
    }
    /// `E[relu Z] = phi(0)`, `E[relu^2] = 1/2`, `E[Z relu Z] = 1/2`.
    fn closed_moments(&self) -> Option<Moments> {
        Some(Moments {
            mean: 1.0 / (2.0 * PI).sqrt(),
            second: 0.5,
            z_s: 0.5,
        })
    }
    /// With `c = 2`: `Sigma = sqrt(q1 q2) (sin t + (pi - t) cos t) / pi`,
    /// `Sigma_dot = (pi - t) / pi`, `t = arccos(c12 / sqrt(q1 q2))`. For unit inputs
    /// `Sigma = cos g(t)` (Liu & Hui Eq. 7-9). A zero input gives `Sigma = Sigma_dot = 0`.
    fn closed_dual(&self, q1: f64, q2: f64, c12: f64) -> Option<DualKernel> {
        let (a, b) = arc_cosine(q1, q2, c12);
        Some(DualKernel {
            sigma: 2.0 * a,
            sigma_dot: 2.0 * b,
        })
    }
    fn activate_host<T: Real>(&self, gamma: f64, a: &mut [T], slope: &mut [T]) {
        let g = T::of(gamma);
        for (a, s) in a.iter_mut().zip(slope) {
            let z = *a;
            let on = z > T::of(0.0);
            *a = if on { z * g } else { T::of(0.0) };
            *s = if on { g } else { T::of(0.0) };
        }
    }
    fn cuda(&self) -> Option<Cuda> {
        Some(Cuda {
            value: "(z < 0.f ? 0.f : z)".into(),
            slope: "(z > 0.f ? 1.f : 0.f)".into(),
        })
    }
}
