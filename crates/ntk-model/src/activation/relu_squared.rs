//! `s(x) = max(x, 0)^2`.

use burn::tensor::Tensor;
use std::f64::consts::PI;

use super::{ActivationFn, Cuda, DualKernel, Look, Moments, Shape, correlation};

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
    /// Cho & Saul's arc-cosine kernels of degrees 2 and 1, with `c = 2/3`:
    /// `E[s(u) s(v)] = q1 q2 J_2(t) / (2 pi)`, `J_2(t) = 3 sin t cos t + (pi - t)(1 + 2 cos^2 t)`,
    /// and `E[s'(u) s'(v)] = 4 E[relu(u) relu(v)] = 2 sqrt(q1 q2) J_1(t) / pi`, `J_1(t) = sin t +
    /// (pi - t) cos t`, `t = arccos(c12 / sqrt(q1 q2))`. Each `J` is written divided by its
    /// value at `t = 0` and `c` beside its moment (`c 3/2 = 1`, exactly in f64), so that a unit
    /// input's variance stays exactly 1 at every layer: the norm map `q -> q^2` doubles a
    /// relative error each layer (its fixed point 1 is unstable), and the quadrature's
    /// rounding grew to a kernel 136 orders of magnitude off at depth 60 (hundred-and-eleventh
    /// hostile round, D1). A zero input gives 0 (`s(0) = s'(0) = 0`).
    fn closed_dual(&self, q1: f64, q2: f64, c12: f64) -> Option<DualKernel> {
        if q1 <= 0.0 || q2 <= 0.0 {
            return Some(DualKernel {
                sigma: 0.0,
                sigma_dot: 0.0,
            });
        }
        let t = correlation(q1, q2, c12).acos();
        let (sin, cos) = (t.sin(), t.cos());
        // Both exactly 1 at t = 0 (pi 3 and 3 pi are one product).
        let j2 = (3.0 * sin * cos + (PI - t) * (1.0 + 2.0 * cos * cos)) / (3.0 * PI);
        let j1 = (sin + (PI - t) * cos) / PI;
        let c = 1.0 / 1.5;
        Some(DualKernel {
            sigma: (c * 1.5) * (q1 * q2) * j2,
            sigma_dot: (c * 2.0) * (q1.sqrt() * q2.sqrt()) * j1,
        })
    }
    fn cuda(&self) -> Option<Cuda> {
        Some(Cuda {
            value: "((z < 0.f ? 0.f : z) * (z < 0.f ? 0.f : z))".into(),
            slope: "(2.f * (z < 0.f ? 0.f : z))".into(),
        })
    }
}
