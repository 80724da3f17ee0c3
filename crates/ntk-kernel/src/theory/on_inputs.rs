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
/// - ReLU and the identity (positively homogeneous): every convention and input norm
///   changes K by one global factor, so the min angle is Thm 4.4's `phi(theta_min)` (phi is
///   increasing in `theta_in` and free of the norms), and kappa that of the paper-convention
///   kernel (the Gram matrix's for the identity).
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
    let note_singular = |kappa: &Option<f64>| {
        if kappa.is_none() {
            "the infinite-width kernel is numerically singular (kappa infinite)".to_string()
        } else {
            String::new()
        }
    };
    if act.is_homogeneous() {
        let theta_min = angles::min_angle(gram).map_or(f64::NAN, |a| a.deg.to_radians());
        let phi = theory::grad_angle(&act, theta_min, depth).to_degrees();
        // The linear network's infinite-width NTK is a positive multiple of the Gram matrix
        // at every depth, so its kappa and singularity are the Gram matrix's: one
        // eigensolve, not one per depth.
        let kappa = if matches!(act, Activation::Linear(_)) {
            if gram_kappa.is_none() {
                *gram_kappa = Some(singular(gram)?);
            }
            gram_kappa.flatten()
        } else {
            singular(&theory::infinite_width_ntk(&inputs.x, n, d, &act, depth))?
        };
        return Ok(TheoryValue {
            min_grad_angle_deg: Some(phi).filter(|p| p.is_finite()),
            note: note_singular(&kappa),
            kappa,
        });
    }
    let q0 = gram.get(0, 0);
    let equal_norms = (0..n).all(|i| (gram.get(i, i) - q0).abs() <= 1e-12 * q0);
    let dual = theory::DualEvaluator::new(&act);
    if n <= THEORY_PAIRWISE_MAX_N || (equal_norms && n <= THEORY_EQUAL_NORMS_MAX_N) {
        let k =
            theory::infinite_width_kernels_scaled(&inputs.x, n, d, &dual, &scaling, &|_| {}).ntk;
        let kappa = singular(&k)?;
        let min = angles::min_angle(&k);
        // The pair whose angle is reported and the inputs nearest parallel: where either's
        // recursion cannot resolve its angle, the smallest angle is not known to six digits.
        let unresolved = min.as_ref().and_then(|a| {
            [(a.i, a.j), most_correlated_pair(gram)]
                .into_iter()
                .find_map(|pair| unresolved_pair(&dual, &scaling, inputs, gram, pair))
        });
        let mut note = note_singular(&kappa);
        if let Some(why) = &unresolved {
            note = [note.as_str(), why]
                .iter()
                .filter(|s| !s.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join("; ");
        }
        return Ok(TheoryValue {
            min_grad_angle_deg: min.filter(|_| unresolved.is_none()).map(|a| a.deg),
            note,
            kappa,
        });
    }
    if !equal_norms {
        return Ok(TheoryValue {
            note: format!(
                "{act} is not homogeneous and the inputs' norms differ: the min gradient angle \
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

/// The pair `(i, j)`, `i < j`, of the largest input correlation `G_ij / sqrt(G_ii G_jj)`.
fn most_correlated_pair(gram: &Kernel) -> (usize, usize) {
    let rho = |i: usize, j: usize| gram.get(i, j) / (gram.get(i, i) * gram.get(j, j)).sqrt();
    let mut best = (f64::NEG_INFINITY, 0, 1);
    for i in 0..gram.size {
        for j in (i + 1)..gram.size {
            if rho(i, j) > best.0 {
                best = (rho(i, j), i, j);
            }
        }
    }
    (best.1, best.2)
}

/// Why the recursion of inputs `i` and `j` (Gram matrix `gram`) cannot resolve their angle
/// ([`theory::PairRecursion::unresolved_layer`]), or `None` where it can. Identical inputs
/// resolve: their angle is exactly 0 at every layer.
fn unresolved_pair(
    dual: &theory::DualEvaluator,
    scaling: &theory::Scaling,
    inputs: &Inputs,
    gram: &Kernel,
    (i, j): (usize, usize),
) -> Option<String> {
    if identical(inputs, i, j) {
        return None;
    }
    unresolved_note(&inputs_recursion(dual, scaling, gram, i, j), i, j)
}

/// The recursion of inputs `i` and `j` of Gram matrix `gram` under `scaling`.
fn inputs_recursion(
    dual: &theory::DualEvaluator,
    scaling: &theory::Scaling,
    gram: &Kernel,
    i: usize,
    j: usize,
) -> theory::PairRecursion {
    theory::pair_recursion_scaled(
        dual,
        scaling,
        gram.get(i, i),
        gram.get(j, j),
        gram.get(i, j),
    )
}

/// Whether inputs `i` and `j` are the same row.
fn identical(inputs: &Inputs, i: usize, j: usize) -> bool {
    let d = inputs.d;
    inputs.x[i * d..(i + 1) * d] == inputs.x[j * d..(j + 1) * d]
}

/// [`unresolved_pair`]'s reason for a computed recursion.
fn unresolved_note(r: &theory::PairRecursion, i: usize, j: usize) -> Option<String> {
    r.unresolved_layer().map(|(l, d)| {
        format!(
            "the min gradient angle is not resolved in f64: inputs {i} and {j} are so nearly \
             parallel that at layer {l} their correlation is within {d:.1e} of 1, where an \
             angle formed by the recursion keeps fewer than six significant digits"
        )
    })
}

/// The smallest infinite-width model-gradient angle (degrees) over the pairs of inputs of
/// equal norms with Gram matrix `gram`, from the candidate pairs of [`theory_value`]'s doc
/// (the most correlated pair and those more anticorrelated than it is correlated), or why
/// it is not resolved ([`unresolved_note`]); `Err(count)` when there are more than
/// [`MAX_ANGLE_CANDIDATES`] candidates.
fn min_angle_equal_norms(
    dual: &theory::DualEvaluator,
    scaling: &theory::Scaling,
    inputs: &Inputs,
    gram: &Kernel,
) -> Result<Result<f64, String>, usize> {
    let n = gram.size;
    let q0 = gram.get(0, 0);
    let rho = |i: usize, j: usize| gram.get(i, j) / q0;
    let mut best = (f64::NEG_INFINITY, 0, 0);
    for i in 0..n {
        for j in (i + 1)..n {
            if rho(i, j) > best.0 {
                best = (rho(i, j), i, j);
            }
        }
    }
    let mut candidates = vec![(best.1, best.2)];
    for i in 0..n {
        for j in (i + 1)..n {
            if rho(i, j) < -best.0 {
                candidates.push((i, j));
            }
        }
    }
    if candidates.len() > MAX_ANGLE_CANDIDATES {
        return Err(candidates.len());
    }
    let mut min: Result<f64, String> = Ok(f64::INFINITY);
    for &(i, j) in &candidates {
        let r = inputs_recursion(dual, scaling, gram, i, j);
        if let Some(why) = unresolved_note(&r, i, j).filter(|_| !identical(inputs, i, j)) {
            return Ok(Err(why));
        }
        min = min.map(|m| m.min(r.grad_angle().to_degrees()));
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

    fn inputs(x: &[f64], n: usize, d: usize) -> Inputs {
        Inputs {
            x: x.to_vec(),
            n,
            d,
            labels: vec![0; n],
            description: "test".into(),
        }
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
        // ReLU at 1e-3 degrees, depth 50: Thm 4.4 at the inputs' angle (as the Gram matrix
        // gives it), where the recursion is off by far more than 1e-12.
        let t = 1e-3f64.to_radians();
        let x = pair(t);
        let relu = value(ActivationKind::Relu, 50, &x);
        let gram = Kernel::gram(&x, 3, d);
        let theta_min = angles::min_angle(&gram).unwrap().deg.to_radians();
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
        // tanh at 1e-7 degrees: the correlation rounds to 1, no angle is resolved.
        let t = 1e-7f64.to_radians();
        let tanh = value(ActivationKind::Tanh, 5, &pair(t));
        assert_eq!(tanh.min_grad_angle_deg, None, "{tanh:?}");
        assert!(
            tanh.note.contains("inputs 0 and 1 are so nearly parallel"),
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
        // Identical inputs: exactly 0.
        let mut x = pair(0.3);
        x[3..6].copy_from_slice(&[1.0, 0.0, 0.0]);
        let tanh = value(ActivationKind::Tanh, 5, &x);
        assert_eq!(tanh.min_grad_angle_deg, Some(0.0), "{tanh:?}");
    }
}
