//! The normalized activation of a norm-free ResNet:
//!
//! `s_hat(z) = (s(z) - E[s(Z)]) / sd(s(Z))`, `Z ~ N(0, 1)`,
//!
//! so that `E[s_hat(Z)] = 0` and `E[s_hat(Z)^2] = 1`: the activations Agarwal, Awasthi &
//! Kale's theory assumes (Sec. 2, Eq. 2; their coefficient of non-linearity is defined on
//! it) and the condition the norm-free block's scaling rests on (see
//! `crate::resnet::norm_relu`). An activation normalized by construction (NormReLU, SELU:
//! [`super::ActivationFn::is_normalized`]) is applied as it is, bit for bit; any other is
//! shifted and scaled by its Gaussian moments ([`super::Activation::moments`]: closed form
//! where known, else quadrature).

use burn::tensor::Tensor;

use super::{Activation, Cuda, cuda_float};

/// `s_hat = (s - shift) * scale` with `shift = E[s(Z)]`, `scale = 1 / sd(s(Z))`; the
/// identity on `s` (`shift = 0`, `scale = 1`, no arithmetic) for a normalized `s`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Normalized {
    s: Activation,
    shift: f64,
    scale: f64,
}

impl Normalized {
    /// `s` normalized. The scale is not finite for an activation with no variance under
    /// `N(0, 1)` (none in the registry): [`Normalized::is_finite`] says so, and
    /// `ResNetConfig::validate` refuses it.
    pub fn new(s: Activation) -> Self {
        if s.is_normalized() {
            return Self {
                s,
                shift: 0.0,
                scale: 1.0,
            };
        }
        let m = s.moments();
        let var = m.second - m.mean * m.mean;
        Self {
            s,
            shift: m.mean,
            scale: 1.0 / var.sqrt(),
        }
    }

    /// The activation `s` it normalizes.
    pub fn activation(&self) -> Activation {
        self.s
    }

    /// `E[s(Z)]` (0 for a normalized `s`).
    pub fn shift(&self) -> f64 {
        self.shift
    }

    /// `1 / sd(s(Z))` (1 for a normalized `s`).
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// Whether `s_hat` is `s` itself (a normalized `s`).
    pub fn is_identity(&self) -> bool {
        self.s.is_normalized()
    }

    /// Whether the shift and scale are finite (the activation has variance under `N(0, 1)`).
    pub fn is_finite(&self) -> bool {
        self.shift.is_finite() && self.scale.is_finite() && self.scale > 0.0
    }

    /// `c = 1 / E[s_hat(Z)^2]`, the weights' gain: `s`'s own for a normalized `s` (its
    /// closed form, as before this type existed), else exactly 1.
    pub fn c(&self) -> f64 {
        if self.is_identity() { self.s.c() } else { 1.0 }
    }

    /// `g'(1)`, the slope at `q = 1` of the mean-square map `g(q) = E[s_hat(sqrt(q) Z)^2]`:
    /// `E[Z s_hat(Z) s_hat'(Z)]` (differentiate under the expectation). It decides whether the
    /// norm-free block keeps unit scale through depth at initialization: a deviation from
    /// unit mean square is multiplied by about `g'(1) (1 + g'(1)) / 2` per block
    /// (`crate::resnet::norm_relu`), so it shrinks for `g'(1) < 1` (NormReLU at its default
    /// kink 0.84, SELU 0.78, tanh 0.46) and grows otherwise (ReLU normalized 1.00, GELU
    /// 1.06: their networks' mean square grows block by block).
    pub fn mean_square_slope(&self) -> f64 {
        crate::normal::expect(|z| z * self.eval(z) * self.derivative(z), &self.s.kinks())
    }

    /// `s_hat(x)` on a scalar.
    pub fn eval(&self, x: f64) -> f64 {
        if self.is_identity() {
            self.s.eval(x)
        } else {
            (self.s.eval(x) - self.shift) * self.scale
        }
    }

    /// `s_hat'(x) = s'(x) * scale`.
    pub fn derivative(&self, x: f64) -> f64 {
        if self.is_identity() {
            self.s.derivative(x)
        } else {
            self.s.derivative(x) * self.scale
        }
    }

    /// `s_hat` elementwise on a tensor (keeps its dtype and autodiff graph).
    pub fn forward<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        let y = self.s.forward(x);
        if self.is_identity() {
            y
        } else {
            y.sub_scalar(self.shift).mul_scalar(self.scale)
        }
    }

    /// `s_hat` in CUDA C, where `s` has a CUDA form ([`Cuda`]). `slope`'s `s` is `s_hat(z)`,
    /// the value the kernels store; for a shifted `s` the slope recomputes `s(z)` from `z`
    /// where it needs it.
    pub fn cuda(&self) -> Option<Cuda> {
        let c = self.s.cuda()?;
        if self.is_identity() {
            return Some(c);
        }
        let (shift, scale) = (cuda_float(self.shift), cuda_float(self.scale));
        let slope = if uses_s(&c.slope) {
            replace_s(&c.slope, &c.value)
        } else {
            c.slope
        };
        Some(Cuda {
            value: format!("(({} - {shift}) * {scale})", c.value),
            slope: format!("({slope} * {scale})"),
        })
    }
}

/// Whether a CUDA expression reads the variable `s` (a lone `s`, not a letter of a name such
/// as `expf`).
fn uses_s(expr: &str) -> bool {
    s_positions(expr).next().is_some()
}

/// The byte offsets of every lone identifier `s` in `expr`.
fn s_positions(expr: &str) -> impl Iterator<Item = usize> + '_ {
    let b = expr.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    (0..b.len()).filter(move |&i| {
        b[i] == b's' && (i == 0 || !ident(b[i - 1])) && (i + 1 == b.len() || !ident(b[i + 1]))
    })
}

/// `expr` with every lone `s` replaced by `(value)`.
fn replace_s(expr: &str, value: &str) -> String {
    let mut out = String::with_capacity(expr.len() + value.len());
    let mut last = 0;
    for i in s_positions(expr) {
        out.push_str(&expr[last..i]);
        out.push('(');
        out.push_str(value);
        out.push(')');
        last = i + 1;
    }
    out.push_str(&expr[last..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::activation::ActivationKind;

    /// `E[f(Z)]` by the trapezoid rule on `[-12, 12]` with 240,001 points: a route
    /// independent of [`Activation::moments`]' quadrature (exact to ~1e-12 for these
    /// integrands; kinks cost O(h^2) = 1e-8 at most).
    fn trapezoid(f: impl Fn(f64) -> f64) -> f64 {
        let (n, a, b) = (240_000usize, -12.0f64, 12.0f64);
        let h = (b - a) / n as f64;
        let pdf = |z: f64| (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt();
        (0..=n)
            .map(|i| {
                let z = a + h * i as f64;
                let w = if i == 0 || i == n { 0.5 } else { 1.0 };
                w * f(z) * pdf(z)
            })
            .sum::<f64>()
            * h
    }

    #[test]
    fn every_activation_normalized_has_mean_zero_and_second_moment_one() {
        for kind in ActivationKind::all() {
            let n = Normalized::new(Activation::new(kind, None));
            assert!(n.is_finite(), "{kind}");
            let mean = trapezoid(|z| n.eval(z));
            let second = trapezoid(|z| n.eval(z).powi(2));
            assert!(mean.abs() < 1e-7, "{kind}: E s_hat = {mean}");
            assert!((second - 1.0).abs() < 1e-7, "{kind}: E s_hat^2 = {second}");
        }
    }

    #[test]
    fn a_normalized_activation_is_applied_as_it_is() {
        for kind in [ActivationKind::NormRelu, ActivationKind::Selu] {
            let s = Activation::new(kind, None);
            let n = Normalized::new(s);
            assert!(n.is_identity());
            assert_eq!(n.c(), s.c());
            assert_eq!(n.cuda(), s.cuda());
            for x in [-3.0, -0.5, 0.0, 0.7, 2.5] {
                assert_eq!(n.eval(x).to_bits(), s.eval(x).to_bits());
                assert_eq!(n.derivative(x).to_bits(), s.derivative(x).to_bits());
            }
        }
        let gelu = Normalized::new(Activation::new(ActivationKind::Gelu, None));
        assert!(!gelu.is_identity());
        assert_eq!(gelu.c(), 1.0);
    }

    #[test]
    fn the_slope_is_the_derivative_of_the_value() {
        for kind in ActivationKind::all() {
            let n = Normalized::new(Activation::new(kind, None));
            for x in [-2.3, -0.4, 0.3, 1.9] {
                let h = 1e-6;
                let fd = (n.eval(x + h) - n.eval(x - h)) / (2.0 * h);
                assert!(
                    (fd - n.derivative(x)).abs() < 1e-6 * (1.0 + fd.abs()),
                    "{kind} at {x}: {fd} vs {}",
                    n.derivative(x)
                );
            }
        }
    }

    /// `g'(1)` against a central difference of `g(q)` by the trapezoid rule, and against
    /// numpy's (a 100,001-point grid on [-12, 12]: GELU 1.0621, tanh 0.4611, ReLU 1.0000,
    /// SELU 0.7827).
    #[test]
    fn the_mean_square_slope_is_the_derivative_of_the_mean_square_map() {
        for (kind, numpy) in [
            (ActivationKind::Gelu, 1.0621),
            (ActivationKind::Tanh, 0.4611),
            (ActivationKind::Relu, 1.0000),
            (ActivationKind::Selu, 0.7827),
        ] {
            let n = Normalized::new(Activation::new(kind, None));
            let g = |q: f64| trapezoid(|z| n.eval(q.sqrt() * z).powi(2));
            let fd = (g(1.001) - g(0.999)) / 0.002;
            let slope = n.mean_square_slope();
            assert!((slope - fd).abs() < 1e-5, "{kind}: {slope} vs {fd}");
            assert!(
                (slope - numpy).abs() < 2e-4,
                "{kind}: {slope} vs numpy {numpy}"
            );
        }
    }

    #[test]
    fn the_cuda_slope_reads_the_raw_value_where_it_needs_it() {
        let tanh = Normalized::new(Activation::new(ActivationKind::Tanh, None));
        let c = tanh.cuda().expect("tanh has a CUDA form");
        assert!(
            c.slope.contains("(1.f - (tanhf(z)) * (tanhf(z)))"),
            "{}",
            c.slope
        );
        assert!(!uses_s(&c.slope), "{}", c.slope);
        let gelu = Normalized::new(Activation::new(ActivationKind::Gelu, None));
        assert!(gelu.cuda().expect("gelu").slope.contains("expf"));
        assert!(!uses_s("expf(z) + sqrtf(z)"));
        assert!(uses_s("(z > 0.f ? 1.f : s + 2.f)"));
    }
}
