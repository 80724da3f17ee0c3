//! NormReLU, `s_b(x) = lambda_b (max(x, b) - mu_b)`: the ReLU with a kink at `b`, shifted and
//! scaled to mean 0 and second moment 1 under `N(0, 1)` (Agarwal, Awasthi, Kale), with
//! closed-form moments and transfer functions.

use burn::tensor::Tensor;

use super::{ActivationFn, Cuda, Look, Moments, Param, ScaledMoments, Shape, cuda_float};
use crate::normal;

/// The NormReLU kink that Agarwal et al. use: the `b` at which NormReLU's `lambda_b` equals
/// SELU's scale (`reference/theory.md`).
pub const NORM_RELU_DEFAULT_B: f64 = -1.590_765_856_4;

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
    /// `mu_b - b = E[(Z - b)^+]`, kept apart: for a positive kink `mu_b - b` in f64 loses it.
    pub excess: f64,
}

impl NormRelu {
    /// The constants for kink `b`. For `b <= 0` from the closed forms above. For `b > 0` those
    /// cancel: `E[max(Z,b)^2] - mu_b^2` is a difference of two numbers near `b^2` whose true
    /// value, `~2 phi(b) / b^3`, fell below f64's resolution of `b^2` from `b ~ 7`, and
    /// `lambda_b` was noise (round 22's D7: the theory's angles collapsed to 0 from depth 2 at
    /// `b = 7.3`). There `max(Z, b) = b + Y` with `Y = (Z - b)^+`, so `mu_b = b + E[Y]` and
    /// `Var max(Z, b) = Var Y` ([`tail_moments`]), with no difference of large numbers.
    pub fn new(b: f64) -> Self {
        let (mu, excess, var) = if b <= 0.0 {
            let (pdf, cdf) = (normal::pdf(b), normal::cdf(b));
            let mu = b * cdf + pdf;
            let second = b * b * cdf + (1.0 - cdf) + b * pdf;
            (mu, mu - b, second - mu * mu)
        } else {
            let (m1, m2) = tail_moments(b);
            (b + m1, m1, m2 - m1 * m1)
        };
        Self {
            b,
            mu,
            lambda: var.powf(-0.5),
            excess,
        }
    }
}

/// `(E[Y], E[Y^2])` of `Y = (Z - t)^+`, `Z ~ N(0, 1)`, with `Q(t) = 1 - Phi(t)` from `erfc`
/// (accurate in the tail): `E[Y] = phi(t) - t Q(t)`, `E[Y^2] = (1 + t^2) Q(t) - t phi(t)`.
/// For `t > 0` each is a difference of terms of the same size, losing a factor of about `t^2`
/// and `t^4 / 2` of relative precision (at `t = 8`, 1e-14 and 3e-13): far from the total
/// loss of the forms in `max(Z, t)`.
fn tail_moments(t: f64) -> (f64, f64) {
    let (pdf, q) = (normal::pdf(t), normal::cdf(-t));
    (pdf - t * q, (1.0 + t * t) * q - t * pdf)
}

impl ActivationFn for NormRelu {
    const PARAM: Option<Param> = Some(Param {
        symbol: "b",
        meaning: "kink",
        default: NORM_RELU_DEFAULT_B,
        range: (-8.0, 8.0),
    });
    const LOOK: Look = Look {
        label: "NormReLU",
        rgb: (140, 86, 75),
        shape: Shape::Circle,
    };
    fn with_param(param: Option<f64>) -> Self {
        Self::new(param.unwrap_or(NORM_RELU_DEFAULT_B))
    }
    fn param(&self) -> Option<f64> {
        Some(self.b)
    }
    fn eval(&self, x: f64) -> f64 {
        if self.b > 0.0 {
            // `max(x, b) - mu` as `(x - b)^+ - (mu - b)`: no rounding of `mu` near `b`.
            return self.lambda * ((x - self.b).max(0.0) - self.excess);
        }
        self.lambda * (x.max(self.b) - self.mu)
    }
    fn derivative(&self, x: f64) -> f64 {
        self.lambda * f64::from(x > self.b)
    }
    fn forward<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        x.clamp_min(self.b)
            .sub_scalar(self.mu)
            .mul_scalar(self.lambda)
    }
    fn derivative_tensor<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        let on = x.clone().greater_elem(self.b);
        x.zeros_like().mask_fill(on, self.lambda)
    }
    fn kinks(&self) -> Vec<f64> {
        vec![self.b]
    }
    /// Normalized by construction; `E[Z max(Z, b)] = 1 - Phi(b)` (Stein: `E[1{Z > b}]`).
    fn closed_moments(&self) -> Option<Moments> {
        Some(Moments {
            mean: 0.0,
            second: 1.0,
            z_s: self.lambda * (1.0 - normal::cdf(self.b)),
        })
    }
    /// With `t = b / sqrt(q)`, `E max(Z, t) = t Phi(t) + phi(t)`,
    /// `E max(Z, t)^2 = t^2 Phi(t) + 1 - Phi(t) + t phi(t)`:
    /// `m(q) = lambda (sqrt(q) E max(Z, t) - mu)`,
    /// `N(q) = lambda^2 (q E max(Z, t)^2 - 2 mu sqrt(q) E max(Z, t) + mu^2)`,
    /// `N'(q) = lambda^2 (1 - Phi(t) + t phi(t) - mu phi(t) / sqrt(q))`.
    ///
    /// For a positive kink the same in `Y_t = (Z - t)^+` (as [`NormRelu::new`]):
    /// `s(sqrt(q) Z) = lambda (sqrt(q) Y_t - m)` with `m = mu - b = E[(Z - b)^+]`, so
    /// `m(q) = lambda (sqrt(q) E Y_t - m)`, `N(q) = lambda^2 (q E Y_t^2 - 2 m sqrt(q) E Y_t +
    /// m^2)`, `N'(q) = lambda^2 (Q(t) - m phi(t) / sqrt(q))`.
    fn closed_scaled_moments(&self, q: f64) -> Option<ScaledMoments> {
        let t = self.b / q.sqrt();
        let (l2, rq) = (self.lambda * self.lambda, q.sqrt());
        if self.b > 0.0 {
            let (y1, y2) = tail_moments(t);
            let m = self.excess;
            let (pdf, tail) = (normal::pdf(t), normal::cdf(-t));
            return Some(ScaledMoments {
                mean: self.lambda * (rq * y1 - m),
                second: l2 * (q * y2 - 2.0 * m * rq * y1 + m * m),
                second_slope: l2 * (tail - m * pdf / rq),
            });
        }
        let (pdf, cdf) = (normal::pdf(t), normal::cdf(t));
        let first = t * cdf + pdf;
        let second = t * t * cdf + (1.0 - cdf) + t * pdf;
        Some(ScaledMoments {
            mean: self.lambda * (rq * first - self.mu),
            second: l2 * (q * second - 2.0 * self.mu * rq * first + self.mu * self.mu),
            second_slope: l2 * ((1.0 - cdf) + t * pdf - self.mu * pdf / rq),
        })
    }
    /// Normalized by construction: `E[s(Z)] = 0`, `E[s(Z)^2] = 1`.
    fn is_normalized(&self) -> bool {
        true
    }
    fn cuda(&self) -> Option<Cuda> {
        Some(Cuda {
            value: format!(
                "(((z < {b} ? {b} : z) - {mu}) * {l})",
                b = cuda_float(self.b),
                mu = cuda_float(self.mu),
                l = cuda_float(self.lambda)
            ),
            slope: format!(
                "(z > {b} ? {l} : 0.f)",
                b = cuda_float(self.b),
                l = cuda_float(self.lambda)
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `integral_0^inf y^k phi(b + y) dy` by the composite Simpson rule on `[0, 40 / (1 + b)]`
    /// (the integrand falls like `exp(-b y)` there), written as `phi(b) int y^k
    /// exp(-b y - y^2 / 2)`: a route through no closed form.
    fn tail_integral(b: f64, k: i32) -> f64 {
        let (n, top) = (20_000, 40.0 / (1.0 + b.max(0.0)));
        let h = top / n as f64;
        let f = |y: f64| y.powi(k) * (-b * y - 0.5 * y * y).exp();
        let inner: f64 = (1..n)
            .map(|i| f(i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 })
            .sum();
        normal::pdf(b) * h / 3.0 * (f(0.0) + inner + f(top))
    }

    /// Round 22's D7: `s_b` has mean 0 and second moment 1 up to the kink range's end, by
    /// quadrature of the tail (`E[(Z - b)^+]`, `E[((Z - b)^+)^2]`): `lambda_b` was noise from
    /// `b ~ 7` (the variance a difference of numbers near `b^2`). The transfer moments at
    /// `q = 1` are the same ones.
    #[test]
    fn a_large_kink_keeps_unit_variance() {
        for b in [0.5, 2.0, 5.0, 7.0, 7.3, 7.4, 7.9, 8.0] {
            let a = NormRelu::new(b);
            let (m1, m2) = (tail_integral(b, 1), tail_integral(b, 2));
            let var = m2 - m1 * m1;
            assert!(
                (a.lambda * a.lambda * var - 1.0).abs() < 1e-8,
                "b {b}: lambda^2 var = {}",
                a.lambda * a.lambda * var
            );
            assert!((a.excess / m1 - 1.0).abs() < 1e-8, "b {b}");
            let s = a.closed_scaled_moments(1.0).unwrap();
            assert!(s.mean.abs() < 1e-6 && (s.second - 1.0).abs() < 1e-8, "b {b}: {s:?}");
        }
        // A negative kink keeps its closed forms (the committed figures' NormReLU).
        let a = NormRelu::new(NORM_RELU_DEFAULT_B);
        assert_eq!(a.excess, a.mu - a.b);
    }
}
