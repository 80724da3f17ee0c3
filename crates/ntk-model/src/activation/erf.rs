//! `s(x) = erf(x)`: the sigmoid-like activation whose dual kernels Williams (1997) gave in
//! closed form (neural-tangents' `stax.Erf`).

use burn::tensor::Tensor;
use std::f64::consts::PI;

use super::{ActivationFn, Cuda, DualKernel, Look, Moments, Shape, cuda_float};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Erf;

/// `E[erf(Z)^2] = (2 / pi) arcsin(2 / 3)`, so `c = 1 / that ~ 2.1526`.
fn second_moment() -> f64 {
    2.0 / PI * (2.0_f64 / 3.0).asin()
}

impl ActivationFn for Erf {
    const LOOK: Look = Look {
        label: "erf",
        rgb: (23, 128, 128),
        shape: Shape::Triangle,
    };
    fn with_param(_: Option<f64>) -> Self {
        Self
    }
    fn eval(&self, x: f64) -> f64 {
        libm::erf(x)
    }
    /// `erf'(x) = 2 / sqrt(pi) e^{-x^2}`.
    fn derivative(&self, x: f64) -> f64 {
        2.0 / PI.sqrt() * (-x * x).exp()
    }
    fn forward<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        x.erf()
    }
    fn derivative_tensor<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        x.square().neg().exp().mul_scalar(2.0 / PI.sqrt())
    }
    /// `erf(u)` is `+-1` and `erf'(u)` 0 to within `5e-19` beyond `|u| = 6.5`.
    fn smooth_window(&self) -> f64 {
        6.5
    }
    /// Odd, so `E erf(Z) = 0`; `E[Z erf(Z)] = E[erf'(Z)] = 2 / sqrt(3 pi)` (Stein).
    fn closed_moments(&self) -> Option<Moments> {
        Some(Moments {
            mean: 0.0,
            second: second_moment(),
            z_s: 2.0 / (3.0 * PI).sqrt(),
        })
    }
    /// Williams (1997): `E[erf(u) erf(v)] = (2 / pi) arcsin(2 c12 / sqrt((1 + 2 q1)(1 + 2 q2)))`
    /// and `E[erf'(u) erf'(v)] = (4 / pi) / sqrt((1 + 2 q1)(1 + 2 q2) - 4 c12^2)`, both times
    /// `c`. The root `D = (1 + 2 q1)(1 + 2 q2) - 4 c12^2` is written `1 + 2 q1 + 2 q2 +
    /// 4 (q1 q2 - c12^2)` (at least `1 + 2 q1 + 2 q2` by Cauchy-Schwarz), and the arcsine
    /// `arcsin(2 c12 / sqrt((1 + 2 q1)(1 + 2 q2))) = atan2(2 c12, sqrt(D))`: the same angle
    /// without a ratio near 1, where one ulp below 1 costs arcsin `sqrt(2 eps)`, 1.5e-8
    /// (ninety-fifth hostile round, N4: inputs of norm 1e19 put kappa 4e-9 off from depth 2;
    /// the error grew like `eps sqrt(q)` from `q` of 1e4 on).
    ///
    /// Past a variance of 1, every term is divided by the larger variance `m` first, and the
    /// root formed as `m sqrt(D / m^2)`: `q1 q2` passed f64's range from variances of 1.3e154
    /// (inputs of norm 1.2e77), and the kernel, about `1.37 |x|`, was refused as an overflow
    /// (hundred-and-eleventh hostile round, D5). At variances up to 1 nothing is divided,
    /// bit for bit as before.
    fn closed_dual(&self, q1: f64, q2: f64, c12: f64) -> Option<DualKernel> {
        let c = 1.0 / second_moment();
        let m = q1.max(q2).max(1.0);
        let (a, b, ab) = (q1 / m, q2 / m, c12 / m);
        let scaled = (1.0 / m / m + 2.0 * a / m + 2.0 * b / m + 4.0 * (a * b - ab * ab))
            .max(0.0)
            .sqrt();
        let root = m * scaled;
        Some(DualKernel {
            sigma: c * 2.0 / PI * (2.0 * ab).atan2(scaled),
            sigma_dot: c * 4.0 / PI / root,
        })
    }
    fn cuda(&self) -> Option<Cuda> {
        Some(Cuda {
            value: "erff(z)".into(),
            slope: format!("({} * expf(-z * z))", cuda_float(2.0 / PI.sqrt())),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The arcsine as an angle: equal to Williams' ratio form where that is well
    /// conditioned, and exact on the diagonal at any scale, where the ratio form lost
    /// `sqrt(2 eps)` (ninety-fifth hostile round, N4). Values at 1e16 and 2^126 from mpmath
    /// at 60 digits, `c (2 / pi) arcsin(2q / (1 + 2q))` = 2.1525788469038559042 and
    /// 2.1525788606075985464, here rounded to f64.
    #[test]
    fn the_dual_kernel_keeps_its_precision_at_any_scale() {
        let c = 1.0 / second_moment();
        let cases: [(f64, f64, f64); 4] = [(1.0, 1.0, 0.3), (0.5, 2.0, -0.9), (3.0, 0.25, 0.8), (1.0, 1.0, 1.0)];
        for (q1, q2, c12) in cases {
            let ratio = 2.0 * c12 / ((1.0 + 2.0 * q1) * (1.0 + 2.0 * q2)).sqrt();
            let want = c * 2.0 / PI * ratio.asin();
            let got = Erf.closed_dual(q1, q2, c12).unwrap().sigma;
            assert!((got - want).abs() <= 8.0 * f64::EPSILON * want.abs(), "{got} {want}");
        }
        for (q, want) in [
            (1e16, 2.152_578_846_903_856),
            (2f64.powi(126), 2.152_578_860_607_598_6),
        ] {
            let got = Erf.closed_dual(q, q, q).unwrap().sigma;
            assert!(
                (got - want).abs() <= 4.0 * f64::EPSILON * want,
                "q {q}: {got} against {want}"
            );
        }
        assert!((c - 2.152_578_860_607_598_6).abs() < 1e-15);
    }

    /// Past variances whose product leaves f64's range (1.3e154), the kernel is still formed
    /// (hundred-and-eleventh hostile round, D5: refused as an overflow at inputs of norm
    /// 1e78): `Sigma -> c` and `q Sigma_dot = c (4 / pi) q / sqrt(1 + 4 q) -> (2 c / pi)
    /// sqrt(q)` (Williams' forms in closed form, `1 / sqrt(1 + 1 / (4 q))` to the first order
    /// in `1 / q`), and off the diagonal the angle's arcsine as at unit scale.
    #[test]
    fn the_dual_kernel_is_formed_at_variances_past_f64_s_square_range() {
        let c = 1.0 / second_moment();
        for q in [1e156, 1e300, 1e307] {
            let d = Erf.closed_dual(q, q, q).unwrap();
            let big = (2.0 * c / PI) * q.sqrt() * (1.0 - 1.0 / (8.0 * q));
            let want_sigma = c * 2.0 / PI * (PI / 2.0 - (1.0 / q).sqrt());
            assert!((d.sigma_dot * q - big).abs() <= 1e-14 * big, "{q}: {d:?}");
            assert!((d.sigma - want_sigma).abs() <= 1e-14 * c, "{q}: {d:?}");
            // At correlation 0.5 the arcsine's argument is 2 c12 / (2 q) = 0.5 in the limit.
            let half = Erf.closed_dual(q, q, q / 2.0).unwrap().sigma;
            assert!((half - c * 2.0 / PI * 0.5f64.asin()).abs() <= 1e-12, "{q}: {half}");
        }
    }
}
