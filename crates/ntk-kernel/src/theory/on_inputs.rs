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
        return Ok(TheoryValue {
            min_grad_angle_deg: angles::min_angle(&k).map(|a| a.deg),
            note: note_singular(&kappa),
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
    match min_angle_equal_norms(&dual, &scaling, gram) {
        Ok(phi) => Ok(TheoryValue {
            min_grad_angle_deg: Some(phi),
            kappa: None,
            note: kappa_note,
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

/// The smallest infinite-width model-gradient angle (degrees) over the pairs of inputs of
/// equal norms with Gram matrix `gram`, from the candidate pairs of [`theory_value`]'s doc
/// (the most correlated pair and those more anticorrelated than it is correlated);
/// `Err(count)` when there are more than [`MAX_ANGLE_CANDIDATES`] candidates.
fn min_angle_equal_norms(
    dual: &theory::DualEvaluator,
    scaling: &theory::Scaling,
    gram: &Kernel,
) -> Result<f64, usize> {
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
    Ok(candidates
        .iter()
        .map(|&(i, j)| {
            theory::pair_recursion_scaled(
                dual,
                scaling,
                gram.get(i, i),
                gram.get(j, j),
                gram.get(i, j),
            )
            .grad_angle()
            .to_degrees()
        })
        .fold(f64::INFINITY, f64::min))
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
                    let got = min_angle_equal_norms(&dual, &scaling, &gram).unwrap();
                    assert!(
                        (got - want).abs() < 1e-6,
                        "{kind} {convention:?} L{depth}: {got} vs {want}"
                    );
                }
            }
        }
    }
}
