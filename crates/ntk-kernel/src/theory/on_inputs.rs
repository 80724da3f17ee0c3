//! What the infinite-width theory says of one network on one set of inputs, as a sweep's
//! table puts it beside the measurements: the smallest model-gradient angle over the pairs
//! of inputs and the condition number of the whole-set kernel, each computed by the
//! cheapest exact route the activation and the inputs allow ([`theory_value`]), or absent
//! with the reason.

use ntk_data::inputs::Inputs;
use ntk_model::{Activation, MlpConfig};
use ntk_numerics::kernel::Kernel;
use ntk_numerics::spectrum;
use serde::{Deserialize, Serialize};

use crate::angles;
use crate::theory;
use crate::theory::row_angle::{input_angle, pairs};

/// The infinite-width values of one network on one set of inputs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TheoryValue {
    /// The smallest model-gradient angle over the pairs of inputs, degrees.
    pub min_grad_angle_deg: Option<f64>,
    /// kappa of the whole-set infinite-width NTK (`None`: singular or not computed).
    pub kappa: Option<f64>,
    /// Why a value is absent (empty when both are present).
    #[serde(default)]
    pub note: String,
}

/// Beyond this many inputs the quadrature theory of a non-homogeneous activation is not
/// computed pair by pair (n^2 / 2 bivariate quadratures of 1-5 ms per layer).
const THEORY_PAIRWISE_MAX_N: usize = 200;
/// Beyond this many inputs not even with equal norms (each layer is then interpolated in
/// the correlation, but the eigensolve and the n^2 interpolations remain).
const THEORY_EQUAL_NORMS_MAX_N: usize = 2000;
/// The most candidate pairs the min-angle theory evaluates one by one.
const MAX_ANGLE_CANDIDATES: usize = 256;

/// The infinite-width values of the network `model` (its `input_dim` the inputs') on
/// `inputs`, taken as fed to it, under its own convention ([`theory::Scaling::of`]).
///
/// - ReLU and leaky ReLU (positively homogeneous): every convention and input norm changes
///   K by one global factor, so kappa is that of the paper-convention kernel over the
///   largest squared norm and the min angle the smallest of the pairs' `phi(theta_ij)`, both
///   formed from each pair's own angle ([`theory::relu_angles::homogeneous_ntk`]: exact at
///   every angle, near parallel and near opposite rows too).
/// - The identity, and ReLU or leaky ReLU with a row of zeros or of values that are not
///   finite: the min angle is `phi(theta_min)` (phi is increasing in `theta_in` and free of
///   the norms), kappa that of the paper-convention kernel (the Gram matrix's for the
///   identity).
/// - Other activations, with the whole kernel affordable (`n <= 200`, or equal input norms
///   and `n <= 2000`): the kernel of the network's recursion
///   ([`theory::infinite_width_kernels_scaled`]), its kappa and its smallest pairwise angle,
///   exactly the measurement's definition.
/// - Other activations, equal input norms, larger `n`: the min angle over candidate pairs
///   only. With every `||x_i||` equal, each layer's `Sigma`, `Sigma_dot` and hence
///   `Theta_L(x_i, x_j)` is a power series in the input correlation `rho_ij` with
///   non-negative coefficients (Hermite expansion of each dual kernel, closed under sums,
///   products and composition), so `F(rho) = Theta_L` satisfies `|F(rho)| <= F(|rho|)` and
///   is increasing on `[0, 1]`, and `cos phi_ij = F(rho_ij) / F(1)`. The largest `F` is at
///   the pair of largest correlation `rho_max` or at a pair with `rho < -rho_max`: those
///   are evaluated, exactly. kappa is not computed (noted).
/// - Otherwise (unequal norms, large n) both are absent, with the reason.
pub fn theory_value(
    model: &MlpConfig,
    inputs: &Inputs,
    gram: &Kernel,
    gram_kappa: &mut Option<Option<f64>>,
) -> crate::Result<TheoryValue> {
    let act = model.activation();
    let depth = model.depth;
    let scaling = match theory::Scaling::of(model) {
        Ok(s) => s,
        Err(why) => {
            return Ok(TheoryValue {
                note: why.to_string(),
                ..TheoryValue::default()
            });
        }
    };
    let (n, d) = (inputs.n, inputs.d);
    let singular = |k: &Kernel| -> crate::Result<Option<f64>> {
        let s = spectrum::spectrum(k, f64::EPSILON)?;
        Ok((!s.singular).then_some(s.kappa))
    };
    // A kernel the recursion overflowed: no kappa, no angle, the layer said (hundred-and-tenth
    // hostile round, D4: the sweep failed after its points with "the kernel has non-finite
    // entries", naming neither the theory nor the depth).
    let out_of_range = |k: &Kernel| -> Option<TheoryValue> {
        // Every entry finite, the largest eigenvalue not (inputs near 1e154 under SELU): a
        // note, not an error that stopped a sweep's whole collect naming no activation
        // (hundred-and-thirteenth hostile round, D4). Only where the trace, which bounds
        // lambda_max, is not finite is the spectrum tried.
        let trace: f64 = (0..k.size).map(|i| k.get(i, i)).sum();
        if k.data.iter().all(|v| v.is_finite())
            && !trace.is_finite()
            && let Err(ntk_numerics::Error::SpectrumOverflow { .. }) =
                spectrum::spectrum(k, f64::EPSILON)
        {
            return Some(TheoryValue {
                note: format!(
                    "the infinite-width kernel of {act} has every entry finite but its largest \
                     eigenvalue past f64's largest number: no kappa or angle; inputs nearer \
                     unit norm"
                ),
                ..TheoryValue::default()
            });
        }
        if k.data.iter().all(|v| v.is_finite()) {
            // An underflow of a nonzero input's K(x, x) likewise: no kappa of a kernel that
            // lost it (ReLU^2 at a row one rounding below unit norm from depth 63:
            // hundred-and-twelfth hostile round, D3).
            let under = crate::underflow::first_underflowing_sample::<()>(
                inputs,
                k,
                crate::underflow::Formed::Theory,
            );
            return under.ok().flatten().map(|u| TheoryValue {
                note: format!(
                    "the infinite-width kernel of {act} underflows f64 at input {} (K(x, x) = \
                     {:.3e}{}): no kappa or angle; inputs nearer unit norm, or a shallower \
                     network",
                    u.sample, u.value, u.why
                ),
                ..TheoryValue::default()
            });
        }
        let dual = theory::DualEvaluator::new(&act);
        let at = theory::layer_leaving_range_of(&dual, &scaling, &inputs.x, d)
            .map_or_else(String::new, |l| format!(" at layer {l} of {depth}"));
        Some(TheoryValue {
            note: format!(
                "the infinite-width recursion of {act} leaves f64's range{at} (the kernel is \
                 not finite): no kappa or angle; a shallower network"
            ),
            ..TheoryValue::default()
        })
    };
    let note_singular = |kappa: &Option<f64>| {
        if kappa.is_none() {
            format!("the infinite-width kernel of {act} is numerically singular (kappa infinite)")
        } else {
            String::new()
        }
    };
    // ReLU and leaky ReLU (any alpha): the kernel and every pair's angle from the pair's
    // own angle (forty-ninth hostile round, D1: at alpha < 0 the sweep took the cosines'
    // recursion, kappa 8.8e-4 off at rows 1e-5 degrees apart and 35% at depth 1,000, and
    // an angle 2.9% off at rows scaled by 1e-150, with no note).
    if let Some(h) = theory::relu_angles::slope(&act)
        .and_then(|s| theory::relu_angles::homogeneous_ntk(inputs, s, depth))
    {
        if let Some(v) = out_of_range(&h.ntk) {
            return Ok(v);
        }
        let kappa = singular(&h.ntk)?;
        return Ok(TheoryValue {
            min_grad_angle_deg: h
                .min_grad_angle
                .map(|(phi, ..)| phi.to_degrees())
                .filter(|p| p.is_finite()),
            note: note_singular(&kappa),
            kappa,
        });
    }
    if increasing_in_the_input_angle(&act) {
        // phi is increasing in theta_in and free of the norms: the pair of the smallest
        // input angle, formed from the rows (not from the Gram matrix's cosine, which holds
        // no angle below about 8.5e-7 degrees: thirty-second hostile round, D1).
        let theta_min = min_input_angle(inputs, gram).map_or(f64::NAN, |m| m.0);
        // ReLU, the identity and leaky ReLU are exact at every angle (the angle recursion,
        // `theory::grad_angle_exact_at_every_angle`): no pair's cosine recursion to resolve.
        // Parallel rows: 0 at every layer (the recursion's quadrature left 1e-6 degrees for
        // leaky ReLU: thirty-third hostile round, D1).
        let phi = if theta_min == 0.0 {
            0.0
        } else {
            theory::grad_angle(&act, theta_min, depth).to_degrees()
        };
        // The linear network's infinite-width NTK is a positive multiple of the Gram matrix
        // at every depth, so its kappa and singularity are the Gram matrix's: one
        // eigensolve, not one per depth.
        let kappa = if matches!(act, Activation::Linear(_)) {
            // The Gram matrix's kappa is scale-free: taken on the rows scaled by a power of
            // two where its largest eigenvalue alone leaves f64's range (hundred-and-twelfth
            // hostile round, D2), not an error that stops a sweep's collect.
            if gram_kappa.is_none() {
                let (s, _) = spectrum::gram_spectrum_scaled(&inputs.x, n, d)?;
                *gram_kappa = Some((!s.singular).then_some(s.kappa));
            }
            gram_kappa.flatten()
        } else {
            // ReLU and leaky ReLU formed from each pair's angle and the norms' ratios
            // (forty-seventh hostile round, D2, forty-eighth, D1: from the cosines kappa lost
            // up to 3e-3).
            // ReLU or leaky ReLU with a row of zeros or of values that are not finite
            // (the others took `homogeneous_ntk` above): the recursion on the rows as given.
            let k = theory::infinite_width_ntk(&inputs.x, n, d, &act, depth);
            if let Some(v) = out_of_range(&k) {
                return Ok(v);
            }
            singular(&k)?
        };
        return Ok(TheoryValue {
            min_grad_angle_deg: Some(phi).filter(|p| p.is_finite()),
            note: note_singular(&kappa),
            kappa,
        });
    }
    // Identical rows have angle 0 at every layer, for every activation, and at depth 0 phi
    // is the input angle itself: both without a correlation's rounding (thirty-third
    // hostile round, D1: 8.5e-7 degrees for identical rows).
    let direct = if depth == 0 {
        min_input_angle(inputs, gram).map(|m| m.0.to_degrees())
    } else {
        has_identical_rows(inputs).then_some(0.0)
    };
    let equal_norms = equal_norms(gram);
    let dual = theory::DualEvaluator::new(&act);
    if n <= THEORY_PAIRWISE_MAX_N || (equal_norms && n <= THEORY_EQUAL_NORMS_MAX_N) {
        let k =
            theory::infinite_width_kernels_scaled(&inputs.x, n, d, &dual, &scaling, &|_| {}).ntk;
        if let Some(v) = out_of_range(&k) {
            return Ok(v);
        }
        let kappa = singular(&k)?;
        if direct.is_some() {
            return Ok(TheoryValue {
                min_grad_angle_deg: direct,
                note: note_singular(&kappa),
                kappa,
            });
        }
        let min = angles::min_angle(&k);
        // The pair whose angle is reported, by the one rule of a pair's angle
        // ([`theory::pair_grad_angle_deg`]: an odd activation's near 180 by its supplement
        // within 1e-7 degrees, as `theory` answers; hundred-and-sixth hostile round, D5: tanh
        // at 179.99999 written 5.5e-7 degrees off), and the inputs nearest parallel: where
        // either's angle is not resolved, the smallest angle is not known.
        let (value, unresolved) = match &min {
            None => (None, None),
            Some(a) => {
                let (_, i, j) = max_correlation(gram);
                match theory::pair_grad_angle_deg(
                    &dual,
                    &scaling,
                    row(inputs, a.i),
                    row(inputs, a.j),
                ) {
                    Ok(v) => (
                        Some(if v.is_finite() { v } else { a.deg }),
                        unresolved_pair(&dual, &scaling, inputs, (i, j)),
                    ),
                    Err(why) => (None, Some(pair_note(a.i, a.j, &why))),
                }
            }
        };
        return Ok(TheoryValue {
            min_grad_angle_deg: value.filter(|_| unresolved.is_none()),
            note: joined(note_singular(&kappa), unresolved),
            kappa,
        });
    }
    if !equal_norms {
        return Ok(TheoryValue {
            min_grad_angle_deg: direct,
            note: format!(
                "{act} is not positively homogeneous (ReLU, leaky ReLU, the identity), or a \
                 row is zeros, and the inputs' norms differ: the min gradient angle \
                 and kappa need the whole infinite-width kernel, computed only for n <= \
                 {THEORY_PAIRWISE_MAX_N} (n^2/2 bivariate quadratures per layer), or for n <= \
                 {THEORY_EQUAL_NORMS_MAX_N} with data.unit_norm = true"
            ),
            ..TheoryValue::default()
        });
    }
    let kappa_note = format!(
        "kappa of the infinite-width kernel not computed for n > {THEORY_EQUAL_NORMS_MAX_N}"
    );
    if direct.is_some() {
        return Ok(TheoryValue {
            min_grad_angle_deg: direct,
            kappa: None,
            note: kappa_note,
        });
    }
    match min_angle_equal_norms(&dual, &scaling, inputs, gram) {
        Ok(Ok(phi)) => Ok(TheoryValue {
            min_grad_angle_deg: Some(phi),
            kappa: None,
            note: kappa_note,
        }),
        Ok(Err(why)) => Ok(TheoryValue {
            note: format!("{why}; {kappa_note}"),
            ..TheoryValue::default()
        }),
        Err(count) => Ok(TheoryValue {
            note: format!(
                "{} pairs are more anticorrelated than the most correlated pair is correlated: \
                 the min gradient angle would take that many pair recursions; {kappa_note}",
                count - 1
            ),
            ..TheoryValue::default()
        }),
    }
}

/// Whether [`theory_value`] of `model` on `inputs` may give a min gradient angle, decided
/// from the network and the inputs before any kernel, by its own rules: not where the
/// theory does not cover the network (biases, the standard parameterization,
/// normalization: [`theory::Scaling::of`]), nor for fewer than two inputs, nor for an
/// activation other than ReLU, the identity and leaky ReLU on more than
/// [`THEORY_PAIRWISE_MAX_N`] inputs of unequal norms at depth >= 1 without identical rows
/// (its note says why). Where it may, the angle can still be absent (a recursion that
/// cannot resolve it). A sweep and its collect check the angle's figure only where some
/// point's theory may draw one (forty-seventh hostile round, D1).
pub fn may_give_angle(model: &MlpConfig, inputs: &Inputs) -> bool {
    if theory::Scaling::of(model).is_err() || inputs.n < 2 {
        return false;
    }
    let act = model.activation();
    matches!(act, Activation::Linear(_))
        || theory::relu_angles::slope(&act).is_some()
        || inputs.n <= THEORY_PAIRWISE_MAX_N
        || model.depth == 0
        || norms_equal((0..inputs.n).map(|i| row(inputs, i).iter().map(|v| v * v).sum()))
        || has_identical_rows(inputs)
}

/// Whether the inputs of Gram matrix `gram` have equal norms, to a relative 1e-12.
fn equal_norms(gram: &Kernel) -> bool {
    norms_equal((0..gram.size).map(|i| gram.get(i, i)))
}

/// Whether the squared norms `sq` are all equal to a relative 1e-12 of the first.
fn norms_equal(mut sq: impl Iterator<Item = f64>) -> bool {
    let Some(q0) = sq.next() else {
        return true;
    };
    sq.all(|q| (q - q0).abs() <= 1e-12 * q0)
}

/// Whether the infinite-width phi of `act` is free of the input norms and increasing in the
/// input angle, so that the pair of the smallest input angle gives the smallest phi: ReLU,
/// the identity and leaky ReLU with `alpha >= 0` (positively homogeneous, the activation and
/// its derivative non-decreasing, so every layer's dual kernels increase with the
/// correlation on `[-1, 1]`). Not leaky ReLU with `alpha < 0`: at `alpha = -1` (`|x|`)
/// antiparallel inputs have phi 0 (thirty-third hostile round, D2: 70.49 degrees reported
/// from the nearest pair where 0 is right); such networks take the general route.
pub fn increasing_in_the_input_angle(act: &Activation) -> bool {
    match act {
        Activation::Relu(_) | Activation::Linear(_) => true,
        Activation::LeakyRelu(l) => l.alpha >= 0.0,
        _ => false,
    }
}

/// Whether two rows of `inputs` are equal (`-0.0` equal to `0.0`, as `==` has it), rows of
/// zeros aside: a bias-free network's gradient at a zero input is zero for every activation
/// that vanishes at 0, where the angle is undefined, not 0 (hundred-and-seventh hostile
/// round, D4: two zero rows gave the sweep's column 0.0 for tanh).
fn has_identical_rows(inputs: &Inputs) -> bool {
    let mut seen = std::collections::HashSet::with_capacity(inputs.n);
    (0..inputs.n).any(|i| {
        if row(inputs, i).iter().all(|v| *v == 0.0) {
            return false;
        }
        let bits: Vec<u64> = row(inputs, i).iter().map(|v| (v + 0.0).to_bits()).collect();
        !seen.insert(bits)
    })
}

/// Row `i` of `inputs`.
fn row(inputs: &Inputs, i: usize) -> &[f64] {
    &inputs.x[i * inputs.d..(i + 1) * inputs.d]
}

/// The input correlation `G_ij / sqrt(G_ii G_jj)` of inputs `i` and `j` (Gram matrix `gram`).
fn correlation(gram: &Kernel, i: usize, j: usize) -> f64 {
    gram.get(i, j) / (gram.get(i, i) * gram.get(j, j)).sqrt()
}

/// The largest input [`correlation`] over the pairs, and its pair `(i, j)`, `i < j` (the
/// first of ties); `(-inf, 0, 1)` for fewer than two inputs.
fn max_correlation(gram: &Kernel) -> (f64, usize, usize) {
    pairs(gram.size).fold((f64::NEG_INFINITY, 0, 1), |best, (i, j)| {
        let c = correlation(gram, i, j);
        if c > best.0 { (c, i, j) } else { best }
    })
}

/// `note` and `more`, joined by "; " where both are there.
fn joined(note: String, more: Option<String>) -> String {
    match more {
        Some(m) if note.is_empty() => m,
        Some(m) => format!("{note}; {m}"),
        None => note,
    }
}

/// The smallest angle (radians) over the pairs of rows of `inputs`, and its pair, formed
/// from the rows ([`input_angle`]). The candidates are the pairs whose cosine in the Gram
/// matrix `gram` is within `4 (d + 2)` ulps of the largest: a cosine of `d`-term dot
/// products is within about `d` ulps of the rows' own, so no pair outside can be nearer
/// parallel. `None` for fewer than two inputs.
fn min_input_angle(inputs: &Inputs, gram: &Kernel) -> Option<(f64, usize, usize)> {
    let (c_max, ..) = max_correlation(gram);
    let tol = 4.0 * (inputs.d as f64 + 2.0) * f64::EPSILON;
    let mut best: Option<(f64, usize, usize)> = None;
    for (i, j) in pairs(gram.size).filter(|&(i, j)| correlation(gram, i, j) >= c_max - tol) {
        let t = input_angle(row(inputs, i), row(inputs, j));
        if best.is_none_or(|b| t < b.0) {
            best = Some((t, i, j));
        }
        if t == 0.0 {
            break;
        }
    }
    best
}

/// Why the angle of inputs `i` and `j` is not resolved by the rule of a pair's angle
/// ([`theory::pair_grad_angle_deg`], as `ntk-probe theory` and a theory run's `probe.pair`
/// answer it), or `None` where it is. Identical inputs resolve: their angle is exactly 0 at
/// every layer.
fn unresolved_pair(
    dual: &theory::DualEvaluator,
    scaling: &theory::Scaling,
    inputs: &Inputs,
    (i, j): (usize, usize),
) -> Option<String> {
    theory::pair_grad_angle_deg(dual, scaling, row(inputs, i), row(inputs, j))
        .err()
        .map(|why| pair_note(i, j, &why))
}

/// The note of a smallest angle not resolved because the angle of inputs `i` and `j` is not.
fn pair_note(i: usize, j: usize, why: &theory::Unresolved) -> String {
    format!("the min gradient angle is not resolved: the angle of inputs {i} and {j} is {why}")
}

/// The smallest infinite-width model-gradient angle (degrees) over the pairs of inputs of
/// equal norms with Gram matrix `gram`, from the candidate pairs of [`theory_value`]'s doc
/// (the most correlated pair and those more anticorrelated than it is correlated), or why
/// it is not resolved ([`pair_note`]); `Err(count)` when there are more than
/// [`MAX_ANGLE_CANDIDATES`] candidates.
fn min_angle_equal_norms(
    dual: &theory::DualEvaluator,
    scaling: &theory::Scaling,
    inputs: &Inputs,
    gram: &Kernel,
) -> Result<Result<f64, String>, usize> {
    let (rho_max, i, j) = max_correlation(gram);
    let candidates: Vec<(usize, usize)> = std::iter::once((i, j))
        .chain(pairs(gram.size).filter(|&(i, j)| correlation(gram, i, j) < -rho_max))
        .collect();
    if candidates.len() > MAX_ANGLE_CANDIDATES {
        return Err(candidates.len());
    }
    let mut min: Result<f64, String> = Ok(f64::INFINITY);
    for (k, &(i, j)) in candidates.iter().enumerate() {
        match theory::pair_grad_angle_deg(dual, scaling, row(inputs, i), row(inputs, j)) {
            Ok(phi) => min = min.map(|m| m.min(phi)),
            // A nearly opposite pair's angle is within a hair of 180 degrees: not the
            // smallest, unless it is the most correlated pair.
            Err(theory::Unresolved::NearlyOpposite { .. }) if k > 0 => {}
            Err(why) => return Ok(Err(pair_note(i, j, &why))),
        }
    }
    Ok(min)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ntk_model::{ActivationKind, NtkConvention};

    /// The candidate pairs give the smallest angle of the whole infinite-width kernel, for
    /// unit inputs with strongly anticorrelated pairs (where the most anticorrelated pair
    /// can win for an even activation part), every non-homogeneous activation and
    /// convention.
    #[test]
    fn candidate_pairs_give_the_min_angle_of_the_whole_kernel() {
        let (n, d) = (24, 3);
        let mut x: Vec<f64> = (0..n * d)
            .map(|k| (k * 53 % 97) as f64 / 48.0 - 1.0)
            .collect();
        // Two almost antipodal pairs, more anticorrelated than any pair is correlated.
        for k in 0..d {
            x[d + k] = -x[k] + if k == 1 { 0.01 } else { 0.0 };
            x[3 * d + k] = -x[2 * d + k];
        }
        ntk_data::inputs::unit_rows(&mut x, d).unwrap();
        let gram = Kernel::gram(&x, n, d);
        let inputs = inputs(&x, n, d);
        for kind in [
            ActivationKind::Gelu,
            ActivationKind::Tanh,
            ActivationKind::NormRelu,
            ActivationKind::ReluSquared,
        ] {
            let act = Activation::new(kind, None);
            let dual = theory::DualEvaluator::new(&act);
            for convention in [
                NtkConvention::Paper,
                NtkConvention::Official,
                NtkConvention::UnitVariance,
            ] {
                for depth in [1, 3] {
                    let scaling = theory::Scaling::convention(convention, &act, d, 128, depth);
                    let k =
                        theory::infinite_width_kernels_scaled(&x, n, d, &dual, &scaling, &|_| {})
                            .ntk;
                    let want = angles::min_angle(&k).unwrap().deg;
                    let got = min_angle_equal_norms(&dual, &scaling, &inputs, &gram)
                        .unwrap()
                        .unwrap();
                    assert!(
                        (got - want).abs() < 1e-6,
                        "{kind} {convention:?} L{depth}: {got} vs {want}"
                    );
                }
            }
        }
    }

    /// The hundred-and-sixth hostile round, D5: the sweep's theory column wrote tanh's and
    /// erf's angles near 180 degrees that `ntk-probe theory` refuses (179.99998200987295 at
    /// depth 4, 5.5e-7 degrees from mpmath's 179.99998146288786), 17 digits and no note. The
    /// min pair's angle goes by [`theory::pair_grad_angle_deg`] now: absent with the reason
    /// where `theory` refuses, `theory`'s answer where it answers.
    #[test]
    fn an_odd_activation_s_angle_near_180_is_answered_as_theory_answers_it() {
        let t = 179.99999f64.to_radians();
        let x = [1.0, 0.0, t.cos(), t.sin()];
        let gram = Kernel::gram(&x, 2, 2);
        for kind in [ActivationKind::Tanh, ActivationKind::Erf] {
            for depth in [1, 4] {
                let model = MlpConfig::new(2, 64, depth, kind);
                let v = theory_value(&model, &inputs(&x, 2, 2), &gram, &mut None).unwrap();
                assert_eq!(v.min_grad_angle_deg, None, "{kind} {depth}: {v:?}");
                assert!(v.note.contains("too near 180 degrees"), "{v:?}");
            }
        }
        let t = 179.9999f64.to_radians();
        let x = [1.0, 0.0, t.cos(), t.sin()];
        let gram = Kernel::gram(&x, 2, 2);
        let model = MlpConfig::new(2, 64, 1, ActivationKind::Tanh);
        let v = theory_value(&model, &inputs(&x, 2, 2), &gram, &mut None).unwrap();
        let got = v.min_grad_angle_deg.unwrap();
        assert!((got - 179.99988036806192).abs() < 1e-7, "{v:?}");
    }

    /// The hundred-and-tenth hostile round, D4: a kernel the recursion overflowed failed the
    /// sweep after its points ("the kernel has non-finite entries"); it is a value with no
    /// kappa or angle and a note naming the layer, here GELU's and SiLU's `Theta_1`, about
    /// `|x|^2`, past f64's largest number for rows of norm 1e154 (ReLU's is formed from the
    /// angles and norms apart; tanh from unit rows leaves the range at layer 4326, too long
    /// a recursion for a test: by hand, the sweep's `theory_note` says so).
    #[test]
    fn an_overflowing_kernel_is_a_note_naming_the_layer() {
        let x = [1e154, 0.0, 0.0, 1e154];
        let gram = Kernel::gram(&[1.0, 0.0, 0.0, 1.0], 2, 2);
        for kind in [ActivationKind::Gelu, ActivationKind::Silu] {
            let model = MlpConfig::new(2, 64, 2, kind);
            let v = theory_value(&model, &inputs(&x, 2, 2), &gram, &mut None).unwrap();
            assert_eq!(
                (v.kappa, v.min_grad_angle_deg),
                (None, None),
                "{kind}: {v:?}"
            );
            assert!(
                v.note.contains("leaves f64's range at layer"),
                "{kind}: {v:?}"
            );
            assert!(v.note.contains("of 2"), "{kind}: {v:?}");
        }
    }

    /// The hundred-and-twelfth hostile round, D3: ReLU^2's kernel of a row one rounding below
    /// unit norm underflows to 0 from depth 63 (exactly 1.6e-459); the theory column is then a
    /// note, not the kappa of a kernel that lost a row (it was "singular" with no note).
    #[test]
    fn an_underflowing_kernel_is_a_note() {
        let t = 120f64.to_radians();
        let x = [1.0, 0.0, 0.0, t.cos(), t.sin(), 0.0, 0.0, 0.0, 1.0];
        let gram = Kernel::gram(&x, 3, 3);
        let model = |depth| MlpConfig::new(3, 64, depth, ActivationKind::ReluSquared);
        let v = theory_value(&model(63), &inputs(&x, 3, 3), &gram, &mut None).unwrap();
        assert_eq!((v.kappa, v.min_grad_angle_deg), (None, None), "{v:?}");
        assert!(v.note.contains("underflows f64 at input 1"), "{v:?}");
        // At depth 60 the row's 4.9e-51 beside 1.3e8 is numerically singular, said so, with
        // the angle (89.999999404077507 degrees by mpmath).
        let v = theory_value(&model(60), &inputs(&x, 3, 3), &gram, &mut None).unwrap();
        assert!(v.note.contains("numerically singular"), "{v:?}");
        let angle = v.min_grad_angle_deg.unwrap();
        assert!((angle - 89.999_999_404_077_5).abs() < 1e-9, "{v:?}");
    }

    /// The hundred-and-thirteenth hostile round, D4: SELU's kernel on rows of norm about
    /// 1e154 has every entry finite and its largest eigenvalue past f64's; its theory value
    /// is a note, not an error that stopped a sweep's collect.
    #[test]
    fn a_kernel_whose_spectrum_leaves_f64_is_a_note() {
        let x = [1e154, 0.0, 0.0, 9e153, 4.5e153, 0.0, 5e153, 3e153, 8e153];
        let gram = Kernel::gram(&[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0], 3, 3);
        let model = MlpConfig::new(3, 64, 1, ActivationKind::Selu);
        let v = theory_value(&model, &inputs(&x, 3, 3), &gram, &mut None).unwrap();
        assert_eq!((v.kappa, v.min_grad_angle_deg), (None, None), "{v:?}");
        assert!(v.note.contains("largest eigenvalue past f64"), "{v:?}");
    }

    fn inputs(x: &[f64], n: usize, d: usize) -> Inputs {
        Inputs {
            x: x.to_vec(),
            n,
            d,
            labels: vec![0; n],
            description: "test".into(),
            source_rows: None,
        }
    }

    /// Leaky ReLU below alpha 0 takes each pair's own angle too (forty-ninth hostile round,
    /// D1: the sweep's recursion on the cosines, kappa 8.8e-4 off, an angle 4.4e-4 off at rows
    /// scaled by 2^-300 and 2.9% at 1e-150, no note): at alpha -0.5 and rows 1e-5 degrees
    /// apart, and at alpha -1 (`|z|`) and rows 1e-5 degrees from opposite, the angle equals
    /// mpmath's NTK recursion on the cosine at 60 digits and keeps it, and kappa, at every
    /// scale of the rows; `x` and `-2 x` under `|z|` give a singular kernel and angle 0.
    #[test]
    fn homogeneous_networks_take_each_pairs_angle_at_every_scale() {
        let d = 3;
        let value = |alpha: f64, x: &[f64]| {
            let model =
                MlpConfig::new(d, 64, 7, ActivationKind::LeakyRelu).with_activation_param(alpha);
            let gram = Kernel::gram(x, 3, d);
            theory_value(&model, &inputs(x, 3, d), &gram, &mut None).unwrap()
        };
        let t = 1e-5f64.to_radians();
        let apart = [1.0, 0.0, 0.0, t.cos(), t.sin(), 0.0, 0.3, -0.2, 1.0];
        let opposite = [1.0, 0.0, 0.0, -t.cos(), t.sin(), 0.0, 0.3, -0.2, 1.0];
        #[allow(clippy::excessive_precision)] // mpmath's digits, as printed
        for (alpha, x, want) in [
            (-0.5, apart, 0.047937082859390562508),
            (-1.0, opposite, 0.050530121191363841937),
        ] {
            let at1 = value(alpha, &x);
            let got = at1.min_grad_angle_deg.unwrap();
            assert!((got / want - 1.0).abs() < 1e-12, "{alpha}: {got} vs {want}");
            assert_eq!(at1.note, "");
            let kappa = at1.kappa.unwrap();
            for scale in [2f64.powi(-300), 1e100, 1e-150] {
                let scaled: Vec<f64> = x.iter().map(|v| v * scale).collect();
                let v = value(alpha, &scaled);
                let angle = v.min_grad_angle_deg.unwrap();
                assert!((angle / got - 1.0).abs() < 1e-12, "{scale}: {v:?}");
                assert!(
                    (v.kappa.unwrap() / kappa - 1.0).abs() < 1e-9,
                    "{scale}: {v:?}"
                );
            }
        }
        let twice = [1.0, 0.2, -0.3, -2.0, -0.4, 0.6, 0.3, -0.2, 1.0];
        let v = value(-1.0, &twice);
        assert_eq!(v.kappa, None, "{v:?}");
        assert_eq!(v.min_grad_angle_deg, Some(0.0), "{v:?}");
        assert!(v.note.contains("numerically singular"), "{v:?}");
    }

    /// The theory column's min angle at nearly parallel inputs: ReLU's is Thm 4.4's closed
    /// form, exact (the recursion it took before was 97% off at 1e-7 degrees, depth 50); a
    /// quadrature activation's is absent, with the reason, where the recursion cannot resolve
    /// it, present above; identical inputs give exactly 0.
    #[test]
    fn nearly_parallel_inputs_are_exact_or_absent_with_the_reason() {
        let d = 3;
        let pair = |t: f64| vec![1.0, 0.0, 0.0, t.cos(), t.sin(), 0.0, 0.0, 0.0, 1.0];
        let model = |kind: ActivationKind, depth: usize| MlpConfig::new(d, 64, depth, kind);
        let value = |kind: ActivationKind, depth: usize, x: &[f64]| {
            let gram = Kernel::gram(x, 3, d);
            theory_value(&model(kind, depth), &inputs(x, 3, d), &gram, &mut None).unwrap()
        };
        // ReLU at 1e-3 degrees, depth 50: Thm 4.4 at the inputs' angle, where the recursion
        // is off by far more than 1e-12.
        let t = 1e-3f64.to_radians();
        let x = pair(t);
        let relu = value(ActivationKind::Relu, 50, &x);
        let theta_min = input_angle(&x[0..3], &x[3..6]);
        let want = theory::relu_grad_angle(theta_min, 50).to_degrees();
        let got = relu.min_grad_angle_deg.unwrap();
        assert!((got - want).abs() <= 1e-12 * want, "{got} vs {want}");
        let relu_act = Activation::new(ActivationKind::Relu, None);
        let by_recursion = theory::pair_recursion(
            &theory::DualEvaluator::new(&relu_act),
            1.0,
            1.0,
            theta_min.cos(),
            50,
        )
        .grad_angle()
        .to_degrees();
        assert!(
            (by_recursion - want).abs() > 1e-9 * want,
            "{by_recursion} vs {want}"
        );
        // Thirty-second hostile round, D1: below 8.5e-7 degrees the Gram matrix's cosine
        // holds no angle (the column was 15% off at 1e-6 degrees, 0 at 1e-9); the rows' own
        // angle against 80-digit mpmath (Thm 4.4's recursion, unit inputs at theta_in).
        #[allow(clippy::excessive_precision)] // mpmath's digits, as printed
        for (deg, depth, want) in [
            (1e-9, 1, 0.00013504744742729957386),
            (1e-9, 3, 0.00023390904037168091077),
            (1e-9, 50, 0.00095492965849073885285),
            (1e-6, 1, 0.0042705753785718648913),
            (1e-6, 3, 0.0073968533786412175179),
            (1e-6, 50, 0.030197525345303441337),
        ] {
            let x = pair(f64::to_radians(deg));
            let got = value(ActivationKind::Relu, depth, &x)
                .min_grad_angle_deg
                .unwrap();
            assert!(
                (got / want - 1.0).abs() < 1e-9,
                "relu {deg} deg, depth {depth}: {got}"
            );
            let got = value(ActivationKind::Linear, depth, &x)
                .min_grad_angle_deg
                .unwrap();
            assert!((got / deg - 1.0).abs() < 1e-9, "linear {deg} deg: {got}");
        }
        // Exactly parallel rows of different norms: 0, not arccos(1 - 2^-53).
        let x = [1.0, 0.5, 0.0, 3.0, 1.5, 0.0, 0.0, 0.0, 1.0];
        for kind in [
            ActivationKind::Relu,
            ActivationKind::Linear,
            ActivationKind::LeakyRelu,
        ] {
            assert_eq!(value(kind, 3, &x).min_grad_angle_deg, Some(0.0), "{kind}");
        }
        // Leaky ReLU (alpha 0.01) at 1e-6 degrees, depth 3: its angle recursion, against
        // mpmath's NTK recursion on the cosine at 60 digits (the f64 recursion answered 18%
        // off: thirty-third hostile round, D2; then it was left absent: forty-ninth, N1).
        #[allow(clippy::excessive_precision)] // mpmath's digits, as printed
        for (deg, want) in [
            (1e-6, 0.0073225187297868769772),
            (1.0, 7.3727501949047986439),
        ] {
            let leaky = value(ActivationKind::LeakyRelu, 3, &pair(f64::to_radians(deg)));
            let got = leaky.min_grad_angle_deg.unwrap();
            assert!((got / want - 1.0).abs() < 1e-12, "{deg}: {got} vs {want}");
            assert_eq!(leaky.note, "");
        }
        // At depth 0 phi is the input angle itself, for every activation.
        let at0 = value(ActivationKind::LeakyRelu, 0, &pair(1e-6f64.to_radians()));
        let got = at0.min_grad_angle_deg.unwrap();
        assert!((got / 1e-6 - 1.0).abs() < 1e-9, "{at0:?}");
        // tanh at 1e-7 degrees: the correlation rounds to 1, no angle is resolved.
        let t = 1e-7f64.to_radians();
        let tanh = value(ActivationKind::Tanh, 5, &pair(t));
        assert_eq!(tanh.min_grad_angle_deg, None, "{tanh:?}");
        assert!(
            tanh.note
                .contains("the angle of inputs 0 and 1 is too near 0 degrees for the"),
            "{}",
            tanh.note
        );
        // Resolved at a tenth of a degree: the pair's own recursion.
        let t = 0.1f64.to_radians();
        let act = Activation::new(ActivationKind::Tanh, None);
        let tanh = value(ActivationKind::Tanh, 5, &pair(t));
        let scaling = theory::Scaling::of(&model(ActivationKind::Tanh, 5)).unwrap();
        let want = theory::pair_recursion_scaled(
            &theory::DualEvaluator::new(&act),
            &scaling,
            1.0,
            1.0,
            t.cos(),
        )
        .grad_angle()
        .to_degrees();
        let got = tanh.min_grad_angle_deg.unwrap();
        assert!((got - want).abs() <= 1e-7 * want, "{got} vs {want}");
        // Identical inputs: exactly 0, at every depth, for every activation (thirty-third
        // hostile round, D1: tanh at depth 0 and leaky ReLU at depth 1 left 1e-6 degrees).
        let mut x = pair(0.3);
        x[3..6].copy_from_slice(&[1.0, 0.0, 0.0]);
        for kind in [
            ActivationKind::Tanh,
            ActivationKind::Gelu,
            ActivationKind::LeakyRelu,
        ] {
            for depth in [0, 1, 5] {
                let v = value(kind, depth, &x);
                assert_eq!(v.min_grad_angle_deg, Some(0.0), "{kind} {depth}: {v:?}");
            }
        }
        // Depth 0: the input angle itself, for every activation.
        let v = value(ActivationKind::Gelu, 0, &pair(1e-9f64.to_radians()));
        let got = v.min_grad_angle_deg.unwrap();
        assert!((got / 1e-9 - 1.0).abs() < 1e-9, "{v:?}");
    }

    /// Leaky ReLU with a negative slope: phi is not increasing in the input angle (at alpha
    /// = -1, `|x|`, antiparallel inputs have phi 0), so the pair of the smallest input angle
    /// is not the answer (thirty-third hostile round, D2: 70.49 and 72.57 degrees reported
    /// where 0 and 56.60 are right). References: the reviewer's 50-digit closed-form dual
    /// kernels, pair by pair (pairs.py).
    #[test]
    #[allow(clippy::excessive_precision)] // the reference's digits, as printed
    fn a_negative_slope_takes_every_pair() {
        let x = [1.0, 2.0, 3.0, -2.0, -4.0, -6.0, 0.3, -0.5, 0.1];
        let gram = Kernel::gram(&x, 3, 3);
        for (alpha, depth, want) in [
            (-0.3, 1, 56.60151153201276),
            (-0.3, 3, 67.45958601713289),
            (-1.0, 1, 0.0),
            (-1.0, 3, 0.0),
        ] {
            let model = MlpConfig::new(3, 64, depth, ActivationKind::LeakyRelu)
                .with_activation_param(alpha);
            let v = theory_value(&model, &inputs(&x, 3, 3), &gram, &mut None).unwrap();
            // At alpha = -1 the antiparallel pair's embeddings are parallel from layer 1
            // on: the recursion cannot tell 0 from a small angle, and says so.
            match v.min_grad_angle_deg {
                Some(got) => assert!(
                    (got - want).abs() < 1e-5,
                    "alpha {alpha} depth {depth}: {got}, {want}"
                ),
                None => assert!(
                    want == 0.0 && v.note.contains("inputs 0 and 1 are so nearly parallel"),
                    "alpha {alpha} depth {depth}: {v:?}"
                ),
            }
        }
    }
}
