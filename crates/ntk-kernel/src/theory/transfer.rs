//! Agarwal, Awasthi & Kale, appendix I.1 (Fig. 6, Fact 1): the transfer functions of a
//! normalized activation `s` (`E s(Z) = 0`, `E s(Z)^2 = 1`, Eq. 2) when the pre-activation
//! variance `q` is not 1, as in a layer whose input norm has drifted from `sqrt(m)`:
//!
//! - the mean `m(q) = E[s(sqrt(q) Z)]` (0 at `q = 1`);
//! - the norm transfer `N(q) = E[s(sqrt(q) Z)^2]`, the next layer's variance: at infinite
//!   width `q_{l+1} = N(q_l)`, so `N(1) = 1` is a fixed point and `N'(1) < 1` makes it
//!   attracting (Fact 1.1: `N` non-decreasing and concave);
//! - its slope `N'(q) = E[s(sqrt(q) Z) s'(sqrt(q) Z) Z] / sqrt(q)` (differentiating under
//!   the expectation);
//! - the bias `B(q) = m(q)^2 / N(q)`: the constant (zeroth Hermite) term's share of the next
//!   layer's second moment, which adds to the correlation of two inputs' representations
//!   (`rho_{l+1} = (m^2 + sum_{i >= 1} a_i^2 rho^i) / N` for equal norms), so it pulls
//!   correlations towards 1 (Fact 1.2: convex, non-negative, minimum 0 at `q = 1`).
//!
//! Our copy of the paper has lost the formulas, so `B` is our reconstruction from the text
//! ("a form of bias which increases correlations over layers", minimum 0 at `q = 1`); the
//! table also carries `m(q)` for other normalizations.
//!
//! An activation with closed forms gives them ([`ntk_model::Activation::closed_scaled_moments`]:
//! NormReLU's, in `ntk_model::activation::norm_relu`);
//! every other activation is integrated by [`ntk_model::normal::expect`] (split at its
//! kinks, scaled by `1 / sqrt(q)`). The tests hold the two routes together and `N'` to a
//! finite difference of `N`.

use ntk_model::{Activation, normal};

/// The transfer functions at one pre-activation variance `q` (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transfer {
    pub q: f64,
    /// `m(q) = E[s(sqrt(q) Z)]`.
    pub mean: f64,
    /// `N(q) = E[s(sqrt(q) Z)^2]`.
    pub norm: f64,
    /// `N'(q)`.
    pub norm_slope: f64,
    /// `B(q) = m(q)^2 / N(q)` (0 where `N(q) = 0`).
    pub bias: f64,
}

impl Transfer {
    fn new(q: f64, mean: f64, norm: f64, norm_slope: f64) -> Self {
        let bias = if norm > 0.0 { mean * mean / norm } else { 0.0 };
        Self {
            q,
            mean,
            norm,
            norm_slope,
            bias,
        }
    }
}

/// The transfer functions of `act` at variance `q > 0`: in closed form where the activation
/// has one ([`Activation::closed_scaled_moments`]: NormReLU), by quadrature otherwise.
pub fn transfer(act: &Activation, q: f64) -> Transfer {
    match act.closed_scaled_moments(q) {
        Some(m) => Transfer::new(q, m.mean, m.second, m.second_slope),
        None => by_quadrature(act, q),
    }
}

/// The transfer functions by quadrature alone (the independent check of [`transfer`]).
pub fn by_quadrature(act: &Activation, q: f64) -> Transfer {
    let rq = q.sqrt();
    let kinks: Vec<f64> = act.kinks().iter().map(|k| k / rq).collect();
    let s = |z: f64| act.eval(rq * z);
    Transfer::new(
        q,
        normal::expect(s, &kinks),
        normal::expect(|z| s(z).powi(2), &kinks),
        normal::expect(|z| s(z) * act.derivative(rq * z) * z, &kinks) / rq,
    )
}

/// The grid `q_min, ..., q_max` of `points` variances (`q_min > 0`: `q = 0` is a limit the
/// closed forms reach only asymptotically; there `B -> 1` for NormReLU, whose input is then
/// all on the linear piece and its output the constant `-lambda mu`).
pub fn grid(q_min: f64, q_max: f64, points: usize) -> Vec<f64> {
    (0..points)
        .map(|i| q_min + (q_max - q_min) * i as f64 / (points - 1) as f64)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ntk_model::ActivationKind;

    fn norm_relu() -> Activation {
        Activation::new(ActivationKind::NormRelu, None)
    }

    /// The closed forms are the quadrature of the network's own activation to 1e-12, over
    /// variances from 0.01 to 10 and three kinks.
    #[test]
    fn normrelu_closed_forms_are_the_quadrature() {
        for b in [-1.5907658564, -0.5, 0.3] {
            let act = Activation::new(ActivationKind::NormRelu, Some(b));
            for q in [0.01, 0.1, 0.5, 0.9, 1.0, 1.7, 4.0, 10.0] {
                let (c, n) = (transfer(&act, q), by_quadrature(&act, q));
                let scale = 1.0 + q;
                for (what, x, y) in [
                    ("m", c.mean, n.mean),
                    ("N", c.norm, n.norm),
                    ("N'", c.norm_slope, n.norm_slope),
                    ("B", c.bias, n.bias),
                ] {
                    assert!(
                        (x - y).abs() < 1e-12 * scale,
                        "b {b} q {q} {what}: {x} vs {y}"
                    );
                }
            }
        }
    }

    /// `N'` is the derivative of `N` (central differences, step 1e-5: truncation ~1e-10,
    /// rounding ~1e-11), for NormReLU's closed form and SELU's and tanh's quadrature.
    #[test]
    fn the_slope_is_the_derivative_of_the_norm() {
        let acts = [
            norm_relu(),
            Activation::new(ActivationKind::Selu, None),
            Activation::new(ActivationKind::Tanh, None),
        ];
        let h = 1e-5;
        for act in &acts {
            for q in [0.2, 0.7, 1.0, 1.3, 3.0] {
                let fd = (transfer(act, q + h).norm - transfer(act, q - h).norm) / (2.0 * h);
                let slope = transfer(act, q).norm_slope;
                assert!((fd - slope).abs() < 1e-8, "{act:?} q {q}: {fd} vs {slope}");
            }
        }
    }

    /// A sample of 400,000 pre-activations of variance `q` (the network's own initializer)
    /// through NormReLU: the sample mean and second moment are `m(q)` and `N(q)` within five
    /// standard errors.
    #[test]
    fn the_sample_moments_are_the_transfer_functions() {
        let act = norm_relu();
        let z = ntk_model::init::gaussian(17, 0, 400_000, 1, 1.0);
        for q in [0.3_f64, 1.0, 2.5] {
            let s: Vec<f64> = z.iter().map(|v| act.eval(q.sqrt() * v)).collect();
            let n = s.len() as f64;
            let mean = s.iter().sum::<f64>() / n;
            let second = s.iter().map(|v| v * v).sum::<f64>() / n;
            let fourth = s.iter().map(|v| v.powi(4)).sum::<f64>() / n;
            let t = transfer(&act, q);
            let (se_m, se_n) = ((second / n).sqrt(), ((fourth - second * second) / n).sqrt());
            assert!(
                (mean - t.mean).abs() < 5.0 * se_m,
                "q {q}: m {mean} vs {}",
                t.mean
            );
            assert!(
                (second - t.norm).abs() < 5.0 * se_n,
                "q {q}: N {second} vs {}",
                t.norm
            );
        }
    }

    /// Fact 1 for NormReLU (its kink at SELU's scale): `m(1) = 0`, `N(1) = 1`; `N`
    /// increasing and concave on `[0.01, 4]`, `N'(1) < 1` (the fixed point attracts); `B >= 0`
    /// with its minimum 0 at `q = 1` and convex on `[0.1, 4]` (second differences, step 0.01).
    #[test]
    fn fact_1_holds_for_normrelu() {
        let act = norm_relu();
        let one = transfer(&act, 1.0);
        assert!(one.mean.abs() < 1e-12 && (one.norm - 1.0).abs() < 1e-12);
        assert!(one.bias < 1e-24 && one.norm_slope < 0.9 && one.norm_slope > 0.8);
        let qs = grid(0.01, 4.0, 400);
        let t: Vec<Transfer> = qs.iter().map(|&q| transfer(&act, q)).collect();
        for w in t.windows(2) {
            assert!(w[1].norm > w[0].norm, "N increasing at {}", w[0].q);
            assert!(
                w[1].norm_slope <= w[0].norm_slope + 1e-15,
                "N' at {}",
                w[0].q
            );
            assert!(w[0].bias >= 0.0);
        }
        for w in t.windows(3).filter(|w| w[0].q >= 0.1) {
            let second = w[0].bias - 2.0 * w[1].bias + w[2].bias;
            assert!(second > 0.0, "B convex at {}: {second:e}", w[1].q);
        }
        let argmin = t
            .iter()
            .min_by(|a, b| a.bias.total_cmp(&b.bias))
            .map(|x| x.q)
            .unwrap();
        assert!((argmin - 1.0).abs() < 1e-12, "B's minimum at {argmin}");
    }
}
