//! Activation functions `s`, their derivatives `s'`, and the Gaussian moments that fix the
//! NTK parameterization's scale constant `c = 1 / E[s(Z)^2]` (Liu & Hui, Eq. 1).
//!
//! Each activation is applied to tensors (model forward), differentiated on tensors (the
//! probe's hand-written backward), evaluated on scalars (quadrature and theory), and knows
//! its moments under `Z ~ N(0, 1)`: in closed form where one exists, otherwise by
//! quadrature ([`crate::normal::expect`]).

use burn::tensor::Tensor;
use serde::{Deserialize, Serialize};
use std::f64::consts::PI;
use std::fmt;

use crate::normal;

/// SELU's scale `lambda` (Klambauer et al. 2017).
pub const SELU_LAMBDA: f64 = 1.050_700_987_355_480_5;
/// SELU's `alpha`.
pub const SELU_ALPHA: f64 = 1.673_263_242_354_377_2;
/// The NormReLU kink that Agarwal et al. use: the `b` at which NormReLU's `lambda_b` equals
/// SELU's scale (`reference/theory.md`).
pub const NORM_RELU_DEFAULT_B: f64 = -1.590_765_856_4;

/// The activation family, by name as it appears in configs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActivationKind {
    Relu,
    /// The identity: the "linear network" of Liu & Hui Eq. (3).
    Linear,
    /// Normalized ReLU with a kink at `b` (Agarwal, Awasthi, Kale).
    NormRelu,
    /// `x Phi(x)`, the exact (erf) GELU.
    Gelu,
    Tanh,
    /// `max(x, 0)^2`.
    ReluSquared,
    Selu,
}

impl ActivationKind {
    /// Every family, in declaration order.
    pub fn all() -> Vec<Self> {
        ntk_runs::names::all()
    }

    /// The config's name (the serde name: [`ntk_runs::names`]).
    pub fn name(self) -> &'static str {
        ntk_runs::names::name(&self)
    }

    pub fn parse(name: &str) -> Option<Self> {
        ntk_runs::names::parse(name)
    }
}

impl fmt::Display for ActivationKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Gaussian moments of an activation, `Z ~ N(0, 1)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Moments {
    /// `E[s(Z)]`.
    pub mean: f64,
    /// `E[s(Z)^2]`.
    pub second: f64,
    /// `E[Z s(Z)]`, the first Hermite coefficient.
    pub z_s: f64,
}

impl Moments {
    /// The NTK scale constant `c = 1 / E[s(Z)^2]` (Liu & Hui, Eq. 1): 2 for ReLU, 1 for the
    /// identity and for any normalized activation.
    pub fn c(&self) -> f64 {
        1.0 / self.second
    }

    /// Agarwal et al.'s coefficient of non-linearity of the normalized activation
    /// `(s - E s) / sd(s)`: `mu = 1 - E[Z s(Z)]^2 / Var s(Z)`, the share of the Hermite
    /// energy above degree one: 0 for the identity, `1 - pi / (2 (pi - 1)) ~ 0.2665` for ReLU,
    /// always in `[0, 1]`.
    pub fn nonlinearity(&self) -> f64 {
        let var = self.second - self.mean * self.mean;
        1.0 - self.z_s * self.z_s / var
    }
}

/// A concrete activation `s`, with NormReLU's kink resolved.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Activation {
    Relu,
    Linear,
    /// `s_b(x) = lambda_b (max(x, b) - mu_b)`.
    NormRelu(NormRelu),
    Gelu,
    Tanh,
    ReluSquared,
    Selu,
}

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

impl Activation {
    /// Resolves a kind; `kink` is NormReLU's `b` (default [`NORM_RELU_DEFAULT_B`]).
    pub fn new(kind: ActivationKind, kink: Option<f64>) -> Self {
        match kind {
            ActivationKind::Relu => Self::Relu,
            ActivationKind::Linear => Self::Linear,
            ActivationKind::NormRelu => {
                Self::NormRelu(NormRelu::new(kink.unwrap_or(NORM_RELU_DEFAULT_B)))
            }
            ActivationKind::Gelu => Self::Gelu,
            ActivationKind::Tanh => Self::Tanh,
            ActivationKind::ReluSquared => Self::ReluSquared,
            ActivationKind::Selu => Self::Selu,
        }
    }

    pub fn kind(&self) -> ActivationKind {
        match self {
            Self::Relu => ActivationKind::Relu,
            Self::Linear => ActivationKind::Linear,
            Self::NormRelu(_) => ActivationKind::NormRelu,
            Self::Gelu => ActivationKind::Gelu,
            Self::Tanh => ActivationKind::Tanh,
            Self::ReluSquared => ActivationKind::ReluSquared,
            Self::Selu => ActivationKind::Selu,
        }
    }

    /// True for positively homogeneous activations (`s(a x) = a s(x)`, `a > 0`): for these a
    /// per-layer constant factors out of the NTK and leaves kappa and all angles unchanged.
    pub fn is_homogeneous(&self) -> bool {
        matches!(self, Self::Relu | Self::Linear)
    }

    /// Points where `s` or `s'` is not smooth (quadrature splits there).
    pub fn kinks(&self) -> Vec<f64> {
        match self {
            Self::Relu | Self::ReluSquared | Self::Selu => vec![0.0],
            Self::NormRelu(n) => vec![n.b],
            Self::Linear | Self::Gelu | Self::Tanh => vec![],
        }
    }

    /// `s(x)` on a scalar.
    pub fn eval(&self, x: f64) -> f64 {
        match self {
            Self::Relu => x.max(0.0),
            Self::Linear => x,
            Self::NormRelu(n) => n.lambda * (x.max(n.b) - n.mu),
            Self::Gelu => x * normal::cdf(x),
            Self::Tanh => x.tanh(),
            Self::ReluSquared => x.max(0.0).powi(2),
            Self::Selu => {
                if x > 0.0 {
                    SELU_LAMBDA * x
                } else {
                    SELU_LAMBDA * SELU_ALPHA * x.exp_m1()
                }
            }
        }
    }

    /// `s'(x)` on a scalar (the right-continuous choice at a kink is irrelevant: kinks have
    /// probability zero under a Gaussian pre-activation).
    pub fn derivative(&self, x: f64) -> f64 {
        match self {
            Self::Relu => f64::from(x > 0.0),
            Self::Linear => 1.0,
            Self::NormRelu(n) => n.lambda * f64::from(x > n.b),
            Self::Gelu => normal::cdf(x) + x * normal::pdf(x),
            Self::Tanh => 1.0 - x.tanh().powi(2),
            Self::ReluSquared => 2.0 * x.max(0.0),
            Self::Selu => {
                if x > 0.0 {
                    SELU_LAMBDA
                } else {
                    SELU_LAMBDA * SELU_ALPHA * x.exp()
                }
            }
        }
    }

    /// `s` applied elementwise to a tensor (keeps its dtype and autodiff graph).
    pub fn forward<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        use burn::tensor::activation as act;
        match self {
            Self::Relu => act::relu(x),
            Self::Linear => x,
            Self::NormRelu(n) => x.clamp_min(n.b).sub_scalar(n.mu).mul_scalar(n.lambda),
            Self::Gelu => act::gelu(x),
            Self::Tanh => x.tanh(),
            Self::ReluSquared => act::relu(x).square(),
            Self::Selu => {
                let negative = x.clone().exp().sub_scalar(1.0).mul_scalar(SELU_ALPHA);
                let mask = x.clone().lower_equal_elem(0.0);
                x.mask_where(mask, negative).mul_scalar(SELU_LAMBDA)
            }
        }
    }

    /// `s'` applied elementwise to a tensor (the probe's backward; no autodiff involved).
    pub fn derivative_tensor<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        match self {
            Self::Relu => {
                let on = x.clone().greater_elem(0.0);
                x.zeros_like().mask_fill(on, 1.0)
            }
            Self::Linear => x.ones_like(),
            Self::NormRelu(n) => {
                let on = x.clone().greater_elem(n.b);
                x.zeros_like().mask_fill(on, n.lambda)
            }
            Self::Gelu => {
                // Phi(x) + x phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2.
                let cdf = x
                    .clone()
                    .mul_scalar(std::f64::consts::FRAC_1_SQRT_2)
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
            Self::Tanh => x.tanh().square().neg().add_scalar(1.0),
            Self::ReluSquared => burn::tensor::activation::relu(x).mul_scalar(2.0),
            Self::Selu => {
                let positive = x.clone().greater_elem(0.0);
                x.exp()
                    .mul_scalar(SELU_LAMBDA * SELU_ALPHA)
                    .mask_fill(positive, SELU_LAMBDA)
            }
        }
    }

    /// The moments in closed form where one is known, else by quadrature.
    pub fn moments(&self) -> Moments {
        let inv_sqrt_2pi = 1.0 / (2.0 * PI).sqrt();
        match self {
            // E[relu Z] = phi(0); E[relu^2] = 1/2; E[Z relu Z] = 1/2.
            Self::Relu => Moments {
                mean: inv_sqrt_2pi,
                second: 0.5,
                z_s: 0.5,
            },
            Self::Linear => Moments {
                mean: 0.0,
                second: 1.0,
                z_s: 1.0,
            },
            // Normalized by construction; E[Z max(Z, b)] = 1 - Phi(b) (Stein: E[1{Z > b}]).
            Self::NormRelu(n) => Moments {
                mean: 0.0,
                second: 1.0,
                z_s: n.lambda * (1.0 - normal::cdf(n.b)),
            },
            // E[relu^2] = 1/2, E[relu^4] = 3/2, E[Z relu^2] = E[Z^3; Z > 0] = 2 phi(0).
            Self::ReluSquared => Moments {
                mean: 0.5,
                second: 1.5,
                z_s: 2.0 * inv_sqrt_2pi,
            },
            Self::Gelu | Self::Tanh | Self::Selu => self.moments_by_quadrature(),
        }
    }

    /// The moments by quadrature alone (the independent check of [`Self::moments`]).
    pub fn moments_by_quadrature(&self) -> Moments {
        let kinks = self.kinks();
        Moments {
            mean: normal::expect(|z| self.eval(z), &kinks),
            second: normal::expect(|z| self.eval(z).powi(2), &kinks),
            z_s: normal::expect(|z| z * self.eval(z), &kinks),
        }
    }

    /// `c = 1 / E[s(Z)^2]`.
    pub fn c(&self) -> f64 {
        self.moments().c()
    }

    /// `Var[c s(Z)^2]`, the per-unit variance of the squared-norm ratio
    /// `||alpha_l||^2 / ||alpha_{l-1}||^2` for unit-variance pre-activations: the relative
    /// fluctuation of a width-`m` layer's norm is `sqrt(this / m)`.
    pub fn norm_ratio_variance(&self) -> f64 {
        let c = self.c();
        normal::expect(|z| (c * self.eval(z).powi(2) - 1.0).powi(2), &self.kinks())
    }
}

impl fmt::Display for Activation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NormRelu(n) => write!(f, "norm_relu(b={})", n.b),
            other => f.write_str(other.kind().name()),
        }
    }
}
