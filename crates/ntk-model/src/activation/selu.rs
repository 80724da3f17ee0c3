//! SELU (Klambauer et al. 2017): `s(x) = lambda x` for `x > 0`, `lambda alpha (e^x - 1)`
//! otherwise, with the constants that make mean 0 and variance 1 its fixed point.

use burn::tensor::Tensor;

use super::{ActivationFn, Cuda, Look, Shape, cuda_float};

/// SELU's scale `lambda` (Klambauer et al. 2017).
pub const SELU_LAMBDA: f64 = 1.050_700_987_355_480_5;
/// SELU's `alpha`.
pub const SELU_ALPHA: f64 = 1.673_263_242_354_377_2;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Selu;

impl ActivationFn for Selu {
    const LOOK: Look = Look {
        label: "SELU",
        rgb: (227, 119, 194),
        shape: Shape::Square,
    };
    fn with_param(_: Option<f64>) -> Self {
        Self
    }
    fn eval(&self, x: f64) -> f64 {
        if x > 0.0 {
            SELU_LAMBDA * x
        } else {
            SELU_LAMBDA * SELU_ALPHA * x.exp_m1()
        }
    }
    fn derivative(&self, x: f64) -> f64 {
        if x > 0.0 {
            SELU_LAMBDA
        } else {
            SELU_LAMBDA * SELU_ALPHA * x.exp()
        }
    }
    fn forward<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        let negative = x.clone().exp().sub_scalar(1.0).mul_scalar(SELU_ALPHA);
        let mask = x.clone().lower_equal_elem(0.0);
        x.mask_where(mask, negative).mul_scalar(SELU_LAMBDA)
    }
    fn derivative_tensor<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        let positive = x.clone().greater_elem(0.0);
        x.exp()
            .mul_scalar(SELU_LAMBDA * SELU_ALPHA)
            .mask_fill(positive, SELU_LAMBDA)
    }
    fn kinks(&self) -> Vec<f64> {
        vec![0.0]
    }
    /// The negative branch `lambda alpha (e^u - 1)` is constant to `e^{-40} ~ 4e-18` below
    /// `u = -40`.
    fn smooth_window(&self) -> f64 {
        40.0
    }
    /// Normalized by construction: `E[s(Z)] = 0`, `E[s(Z)^2] = 1`.
    fn is_normalized(&self) -> bool {
        true
    }
    fn cuda(&self) -> Option<Cuda> {
        Some(Cuda {
            value: format!(
                "(z > 0.f ? z * {l} : expm1f(z > 0.f ? 0.f : z) * {la})",
                l = cuda_float(SELU_LAMBDA),
                la = cuda_float(SELU_LAMBDA * SELU_ALPHA)
            ),
            slope: format!(
                "(z > 0.f ? {l} : s + {la})",
                l = cuda_float(SELU_LAMBDA),
                la = cuda_float(SELU_LAMBDA * SELU_ALPHA)
            ),
        })
    }
}
