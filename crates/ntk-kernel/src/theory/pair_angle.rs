//! The infinite-width model-gradient angle `phi` of one pair of inputs as a network is fed
//! them, held to the digits `ntk-probe theory` answers with, or why it is not: one rule for
//! a theory run's `probe.pair` and a sweep's theory column (hundred-and-sixth hostile round:
//! D1, the run nulled ReLU's exact angles near 0 and 180 by a bound of the wrong end; D2, a
//! pair of equal inputs was 1.2e-6 degrees; D5, the sweep wrote tanh's angles near 180 that
//! `theory` refuses, 5.5e-7 degrees off).
//!
//! - Equal rows: 0, exactly (equal inputs have equal gradients).
//! - Depth 0, the identity: `phi = theta_in`, the rows' own angle
//!   ([`super::relu_angles::rows_angle`], held by its supplement near 180).
//! - ReLU, leaky ReLU: the angle recursion from the rows' angle ([`super::relu_angles::phi`]),
//!   exact at every angle (Thm 4.4 and its slope form).
//! - An odd activation (tanh, erf) at an obtuse input angle: `phi(x, y) = 180 - phi(x, -y)`
//!   ([`super::odd`]), answered where the mirror's bound
//!   ([`super::PairRecursion::angle_error_deg`]) is at most [`MAX_ANGLE_ERROR_DEG`], as
//!   `theory` answers near 180; exactly opposite rows `180`.
//! - Otherwise the NTK recursion of the pair, answered where every layer's correlation keeps
//!   six significant digits ([`super::PairRecursion::unresolved_layer`]), as `theory`
//!   answers near 0.

use std::f64::consts::PI;

use ntk_model::Activation;

use super::dual::DualEvaluator;
use super::ntk::{odd, pair_recursion_scaled};
use super::relu_angles::{phi, rows_angle, slope};
use super::row_angle::input_angle;
use super::scaling::Scaling;

/// The largest error of an angle near 180 degrees that is answered: a fifth of the half
/// unit of the sixth decimal `ntk-probe theory` prints.
pub const MAX_ANGLE_ERROR_DEG: f64 = 1e-7;

/// Why a pair's angle is not answered.
#[derive(Clone, Debug, PartialEq)]
pub enum Unresolved {
    /// Nearly parallel: at `layer` the pair's correlation is within `gap` of 1, where an
    /// angle formed by the recursion keeps fewer than six significant digits.
    NearlyParallel { layer: usize, gap: f64 },
    /// Nearly opposite under an odd activation: `phi` is 180 minus the angle of `x` and
    /// `-y`, whose correlation at `layer` is within `gap` of 1 (0: it rounds to 1), where that
    /// angle is known to about `error_deg` degrees, more than [`MAX_ANGLE_ERROR_DEG`].
    NearlyOpposite {
        layer: usize,
        gap: f64,
        error_deg: f64,
    },
}

impl std::fmt::Display for Unresolved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Unresolved::NearlyParallel { layer, gap } => {
                let near = if gap > 0.0 {
                    format!("is within {gap:.1e} of 1")
                } else {
                    "rounds to 1".to_string()
                };
                write!(
                    f,
                    "too near 0 degrees for the infinite-width recursion in f64: at layer \
                     {layer} the pair's correlation {near}, where an angle keeps fewer than \
                     six significant digits"
                )
            }
            Unresolved::NearlyOpposite {
                layer,
                gap,
                error_deg,
            } => {
                let near = if gap > 0.0 {
                    format!(
                        "is within {gap:.1e} of 1, where that angle is known to about \
                         {error_deg:.1e} degrees, more than"
                    )
                } else {
                    "rounds to 1 in f64, where that angle is not known to".to_string()
                };
                write!(
                    f,
                    "too near 180 degrees for the infinite-width recursion in f64: the \
                     activation is odd, so the angle is 180 minus that of the first input and \
                     the second negated, whose correlation at layer {layer} {near} the \
                     {MAX_ANGLE_ERROR_DEG:e} degrees an angle's six printed decimals allow"
                )
            }
        }
    }
}

/// The part of an angle its final layer's error may be and the angle still be answered
/// where an earlier layer's correlation is too near 1 to judge it by
/// ([`super::PairRecursion::final_angle_error_rad`]): far below the six significant digits
/// the rules keep, so that an angle near 0 or 180 degrees, whose final correlation is near
/// 1 too, is not answered by it (there the final error is at least a few 1e-7 of the angle:
/// `(L + 1) u / (2 d)` at `d <= (L + 1) 1e-9`, for the slopes of these activations).
pub const FINAL_ERROR_OF_ANGLE: f64 = 1e-8;

/// Whether the angle formed from `r`'s final layer keeps its digits by that layer alone:
/// its error at most [`FINAL_ERROR_OF_ANGLE`] of the angle (hundred-and-eighth hostile round,
/// D1: rows (1, 0.1), (3, 0.30000000000000004) were refused "too near 0 degrees" at 30.23
/// degrees under tanh, their input correlation rounding to 1).
fn well_within(r: &super::PairRecursion, dual: &DualEvaluator) -> bool {
    let phi = r.grad_angle();
    r.final_angle_error_rad(dual.is_closed_form()) <= FINAL_ERROR_OF_ANGLE * phi.min(PI - phi)
}

/// The infinite-width model-gradient angle (degrees) of the rows `x` and `y` as fed to a
/// network with dual kernel `dual` and constants `scaling` (module doc), or why it is not
/// resolved; NaN where a row is zeros or holds a value that is not finite and the angle has
/// no exact route.
pub fn pair_grad_angle_deg(
    dual: &DualEvaluator,
    scaling: &Scaling,
    x: &[f64],
    y: &[f64],
) -> Result<f64, Unresolved> {
    if x == y {
        return Ok(0.0);
    }
    let act = dual.activation();
    let depth = scaling.depth();
    if depth == 0 || matches!(act, Activation::Linear(_)) {
        return Ok(rows_angle(x, y).degrees());
    }
    if let Some(s) = slope(act) {
        return Ok(phi(rows_angle(x, y), depth, s).degrees());
    }
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(u, v)| u * v).sum::<f64>();
    let (mut qx, mut qy, mut c) = (dot(x, x), dot(y, y), dot(x, y));
    // ReLU^2's angle is free of the norms (`super::degree_two`): taken on unit variances,
    // which its recursion keeps at 1, where a row's own, one rounding off 1, went to 0 by
    // depth 63 (hundred-and-twelfth hostile round, D3).
    if super::degree_two::applies(dual, scaling) && qx > 0.0 && qy > 0.0 {
        c = crate::theory::dual::correlation(qx, qy, c);
        (qx, qy) = (1.0, 1.0);
    }
    // Exactly proportional rows (of different norms: equal ones returned above) have an
    // input correlation of exactly 1, no rounding of a cosine: the layers from the first
    // hidden one on are judged ([`super::PairRecursion::unresolved_layer_from`]).
    let from = |a: &[f64], b: &[f64]| usize::from(input_angle(a, b) == 0.0);
    if odd(act) && c < 0.0 {
        if x.iter().zip(y).all(|(a, b)| *a == -*b) {
            return Ok(180.0);
        }
        let negated: Vec<f64> = y.iter().map(|v| -v).collect();
        let mirror = pair_recursion_scaled(dual, scaling, qx, qy, -c);
        if let Some((layer, gap, error_deg)) =
            mirror.angle_error_deg_from(from(x, &negated), dual.is_closed_form())
            && (error_deg.is_nan() || error_deg > MAX_ANGLE_ERROR_DEG)
            && !well_within(&mirror, dual)
        {
            return Err(Unresolved::NearlyOpposite {
                layer,
                gap,
                error_deg,
            });
        }
        return Ok(180.0 - mirror.grad_angle().to_degrees());
    }
    let r = pair_recursion_scaled(dual, scaling, qx, qy, c);
    if let Some((layer, gap)) = r.unresolved_layer_from(from(x, y))
        && !well_within(&r, dual)
    {
        return Err(Unresolved::NearlyParallel { layer, gap });
    }
    Ok(r.grad_angle().to_degrees())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::theory::grad_angle_deg;
    use ntk_model::ActivationKind;

    /// The rows `(1, 0)` and `(cos t, sin t)` at `deg` degrees.
    fn rows(deg: f64) -> ([f64; 2], [f64; 2]) {
        let t = deg.to_radians();
        ([1.0, 0.0], [t.cos(), t.sin()])
    }

    fn angle(act: Activation, depth: usize, x: &[f64], y: &[f64]) -> Result<f64, Unresolved> {
        let scaling = Scaling::paper(&act, depth);
        pair_grad_angle_deg(&DualEvaluator::new(&act), &scaling, x, y)
    }

    fn of(kind: ActivationKind, param: Option<f64>) -> Activation {
        Activation::new(kind, param)
    }

    /// The hundred-and-sixth hostile round, D1: a theory run nulled, with a note naming the
    /// wrong end, ReLU's angle at 179.99999 degrees (90.0000016), leaky ReLU's, the
    /// identity's at 1e-6 degrees and GELU's at 179.9999 (87.3), all of which `ntk-probe
    /// theory` answers; each is `theory`'s answer now (mpmath at the rows' own angle: the
    /// round's independent numbers), and an odd activation's angle near 180 is answered or
    /// refused as `theory` answers or refuses it.
    #[test]
    fn a_pair_s_angle_is_answered_as_theory_answers_it() {
        use ActivationKind::*;
        #[allow(clippy::excessive_precision)] // mpmath's digits, as printed
        for (kind, param, depth, deg, want, tol) in [
            (Relu, None, 1, 179.99999, 90.00000159154943, 1e-12),
            (Relu, None, 4, 1e-8, 0.0008541150521275189, 1e-15),
            (Linear, None, 2, 1e-6, 1e-6, 1e-20),
            (
                LeakyRelu,
                Some(-1.0),
                1,
                179.99999,
                0.019098595873303463,
                1e-14,
            ),
            (Gelu, None, 3, 179.9999, 87.316181718308494, 1e-9),
            (Tanh, None, 1, 179.9999, 179.99988036806192, 1e-7),
        ] {
            let (x, y) = rows(deg);
            let got = angle(of(kind, param), depth, &x, &y).unwrap();
            assert!(
                (got - want).abs() <= tol,
                "{kind} {depth} {deg}: {got} vs {want}"
            );
        }
        // `theory`'s own at a typed angle agrees with the exact routes.
        let relu = of(Relu, None);
        let (x, y) = rows(179.99999);
        let typed = grad_angle_deg(&relu, 179.99999, 1);
        assert!((angle(relu, 1, &x, &y).unwrap() - typed).abs() < 1e-12);
        // tanh at depth 4 near 180, and at 1e-4 degrees: refused, naming the end.
        let (x, y) = rows(179.9999);
        let e = angle(of(Tanh, None), 4, &x, &y).unwrap_err();
        assert!(matches!(e, Unresolved::NearlyOpposite { .. }), "{e:?}");
        assert!(e.to_string().starts_with("too near 180 degrees"), "{e}");
        let (x, y) = rows(1e-4);
        let e = angle(of(Tanh, None), 2, &x, &y).unwrap_err();
        assert!(e.to_string().starts_with("too near 0 degrees"), "{e}");
    }

    /// The hundred-and-sixth hostile round, D2: equal inputs were 1.2e-6 degrees (one
    /// rounding of the correlation); 0 exactly, on every route, and exactly opposite inputs
    /// of an odd activation 180.
    #[test]
    fn equal_inputs_are_0_and_opposite_ones_of_an_odd_activation_180() {
        use ActivationKind::*;
        let x = [0.6, -0.8];
        for (kind, depth) in [(Linear, 1), (Erf, 2), (Tanh, 3), (Relu, 2), (Gelu, 0)] {
            assert_eq!(angle(of(kind, None), depth, &x, &x), Ok(0.0), "{kind}");
        }
        let y = [-0.6, 0.8];
        for kind in [Tanh, Erf] {
            assert_eq!(angle(of(kind, None), 3, &x, &y), Ok(180.0), "{kind}");
        }
        assert_eq!(angle(of(Linear, None), 3, &x, &y), Ok(180.0));
    }

    /// The hundred-and-seventh hostile round, D5: exactly proportional rows of different
    /// norms have an input correlation of exactly 1 (no cosine's rounding), and tanh turns
    /// them 30.2 degrees apart by depth 2 (opposite ones 160.7): they were refused "too near
    /// 0 (180) degrees"; answered now, equal to a 3001-point trapezoid's (the round's
    /// independent numbers) and to the network's own recursion.
    #[test]
    fn proportional_rows_of_different_norms_are_answered() {
        use ActivationKind::*;
        let tanh = of(Tanh, None);
        let got = angle(tanh, 2, &[1.0, 0.0], &[3.0, 0.0]).unwrap();
        assert!((got - 30.2040820053).abs() < 1e-9, "{got}");
        let got = angle(tanh, 2, &[1.0, 0.0], &[-2.0, 0.0]).unwrap();
        assert!((got - 160.6853261758).abs() < 1e-9, "{got}");
        let got = angle(of(Gelu, None), 2, &[1.0, 0.0], &[3.0, 0.0]).unwrap();
        assert!((got - 18.4705524655).abs() < 1e-9, "{got}");
        // The hundred-and-eighth round's D1: proportional up to rounding (3 x 0.1 is
        // 0.30000000000000004), the input correlation rounding to 1: answered by the final
        // layer's error, equal to scipy's adaptive quadrature over both Gaussian directions
        // of the same recursion, 30.230468377320356 (the round's Gauss-Hermite reference,
        // 30.2166, is off for unequal norms, as round 109 found).
        let got = angle(tanh, 2, &[1.0, 0.1], &[3.0, 3.0 * 0.1]).unwrap();
        assert!((got - 30.230468377320356).abs() < 1e-9, "{got}");
        // Near-opposite rows of different norms under an odd activation: the supplement's
        // final layer judges them too.
        let got = angle(of(Erf, None), 2, &[1.0, 0.1], &[-1.4, -1.4 * 0.1]).unwrap();
        assert!(got > 90.0 && got < 179.0, "{got}");
    }
}
