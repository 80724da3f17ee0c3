//! The layer embedding angles `theta_l` of a network's own layer outputs `alpha_l(x)`
//! (Liu & Hui, Eq. 7-9; `theta_0` is the inputs' own angle), each formed from its two
//! vectors by an atan2 that keeps the angle's digits
//! ([`crate::theory::row_angle::input_angle`]), not as `arccos` of a Gram matrix's
//! correlation, which keeps no angle below about `sqrt(eps)` radians
//! (hundred-and-thirty-seventh hostile round, D1: in f32, `theta_0` of inputs 0.008 degrees
//! apart read 2.5 times its value, `theta_1` 0; N3: in f64, `theta_2` of inputs 3e-8
//! degrees apart read 37 times its value).
//!
//! `theta_0` comes from the inputs as given (f64), not as rounded to the network's
//! precision. `theta_l` for `l >= 1` comes from the layer outputs as computed, in the
//! network's precision: an angle below their rounding error ([`error_rad`]) is not resolved
//! ([`EmbeddingAngle::Unresolved`]).

use burn::tensor::Tensor;
use faer::MatRef;
use ntk_model::Mlp;
use ntk_numerics::backend::Precision;
use ntk_numerics::linalg::gram_lower;

use crate::theory::row_angle::{input_angle, pairs};

/// One embedding angle.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum EmbeddingAngle {
    /// The angle in degrees.
    Deg(f64),
    /// A vector of the pair is zero (a zero input, or every unit of the layer off for a
    /// sample), or not finite: the angle is not defined.
    Undefined,
    /// Nearer 0 (or 180) degrees than the layer outputs' rounding error, about `error_deg`.
    Unresolved { error_deg: f64 },
}

impl EmbeddingAngle {
    /// The degrees, NaN where there is no angle (`null` in JSON).
    pub fn deg_or_nan(self) -> f64 {
        match self {
            Self::Deg(d) => d,
            Self::Undefined | Self::Unresolved { .. } => f64::NAN,
        }
    }
}

/// The error (radians) of the angle of two of layer `l`'s outputs computed in `precision`,
/// whose `l` layers have fan-ins of at most `fan_in`: each layer's dot products round its
/// entries by about `sqrt(fan_in)` ulps, the `l` layers' roundings add at random, and a
/// rounding of a vector's entries by `u` relative turns it by up to about `u` radians.
/// Taken as `sqrt(l fan_in) eps / 2`, which bounds the error measured against the same
/// network in f64 with a margin of 3.8 or more over widths 32 to 2048, input sizes 5 to 784,
/// depths 2 to 10, ReLU and tanh (measured 0.13 `sqrt(fan_in)` ulps at layer 1, growing
/// as `sqrt(l)`; `tests/kernel/embedding_angles.rs` holds it to a margin of 2.5). 0 for
/// `l = 0`: the inputs' angle is formed from the f64 inputs.
pub fn error_rad(precision: Precision, l: usize, fan_in: usize) -> f64 {
    (l as f64 * fan_in.max(1) as f64).sqrt() * precision.epsilon() / 2.0
}

/// `theta` (radians) of layer `l` of a pair of inputs, as an [`EmbeddingAngle`]:
/// undefined where not finite; for distinct inputs (`equal` false) and `l >= 1`, unresolved
/// where its error ([`error_rad`]) is more than [`crate::angles::RESOLVED`] of its distance
/// from 0 or 180 degrees (0 included: distinct inputs whose outputs round to the same
/// vector), as a kernel's angles are held. Equal inputs have equal outputs, at 0 exactly.
fn held(theta: f64, (precision, l, fan_in): Rounding, equal: bool) -> EmbeddingAngle {
    if !theta.is_finite() {
        return EmbeddingAngle::Undefined;
    }
    let error = error_rad(precision, l, fan_in);
    let distance = theta.min(std::f64::consts::PI - theta);
    if !equal && l > 0 && error > crate::angles::RESOLVED * distance {
        return EmbeddingAngle::Unresolved {
            error_deg: error.to_degrees(),
        };
    }
    EmbeddingAngle::Deg(theta.to_degrees())
}

/// What sets a layer's rounding error ([`error_rad`]): the precision, the layer `l` and the
/// largest fan-in of layers `1..=l`.
type Rounding = (Precision, usize, usize);

/// The host copies (f64) of `mlp`'s layer outputs `alpha_1 .. alpha_L` on the rows of `x`
/// (row-major `n x m_l`), with their widths.
fn layer_outputs(mlp: &Mlp, x: Tensor<2>) -> Vec<(usize, Vec<f64>)> {
    let trace = mlp.forward_trace(x);
    trace
        .inputs
        .into_iter()
        .skip(1)
        .map(|a| {
            let m = a.dims()[1];
            (m, a.try_into_vec_as().expect("reading a layer's outputs"))
        })
        .collect()
}

/// `theta_0 .. theta_L` of the two rows `pair` (f64, as given), whose outputs are formed by
/// `mlp` on `x` (the same two rows on its device, in its `precision`).
pub fn pair_angles(
    mlp: &Mlp,
    x: Tensor<2>,
    pair: (&[f64], &[f64]),
    precision: Precision,
) -> Vec<EmbeddingAngle> {
    let equal = pair.0 == pair.1;
    let mut fan_in = pair.0.len();
    let mut out = vec![held(
        input_angle(pair.0, pair.1),
        (precision, 0, fan_in),
        equal,
    )];
    for (l, (m, a)) in layer_outputs(mlp, x).into_iter().enumerate() {
        let theta = input_angle(&a[..m], &a[m..2 * m]);
        out.push(held(theta, (precision, l + 1, fan_in), equal));
        fan_in = fan_in.max(m);
    }
    out
}

/// `theta_0` of the rows `x` and `y` (f64, as given): their own angle in degrees, to its
/// digits; undefined for a zero or non-finite row.
pub fn input_angle_deg(x: &[f64], y: &[f64]) -> EmbeddingAngle {
    held(input_angle(x, y), (Precision::F64, 0, x.len()), x == y)
}

/// The smallest `theta_0` over the pairs of the rows of `inputs` (f64, row-major `n x d`),
/// as [`min_angles`] forms it.
pub fn min_input_angle_deg(inputs: &[f64], d: usize) -> EmbeddingAngle {
    let equal = |i: usize, j: usize| crate::angles::rows_equal(inputs, d, i, j);
    min_of_rows((inputs, d), &equal, (Precision::F64, 0, d))
}

/// For each layer `l = 0 .. L`, the smallest `theta_l` over the pairs of the rows of
/// `inputs` (f64, row-major `n x d`), whose outputs are formed by `mlp` on `x` (the same
/// rows on its device, in its `precision`). Samples whose vector is zero are passed over;
/// `Undefined` where no pair has an angle.
pub fn min_angles(
    mlp: &Mlp,
    x: Tensor<2>,
    (inputs, d): (&[f64], usize),
    precision: Precision,
) -> Vec<EmbeddingAngle> {
    let equal = |i: usize, j: usize| crate::angles::rows_equal(inputs, d, i, j);
    let mut fan_in = d;
    let mut out = vec![min_of_rows((inputs, d), &equal, (precision, 0, fan_in))];
    for (l, (m, a)) in layer_outputs(mlp, x).into_iter().enumerate() {
        out.push(min_of_rows((&a, m), &equal, (precision, l + 1, fan_in)));
        fan_in = fan_in.max(m);
    }
    out
}

/// The smallest angle over the pairs of the rows of `a` (row-major, `m` columns), layer
/// `l`'s, where `equal(i, j)` says whether samples `i` and `j` are equal inputs. The
/// candidates are the pairs whose cosine in the f64 Gram matrix is within
/// `4 (m + 2)` ulps of the largest: a cosine of `m`-term dot products is within about `m`
/// ulps of the rows' own, so no pair outside can be nearer parallel; each candidate's angle
/// is its rows' own ([`input_angle`]).
fn min_of_rows(
    (a, m): (&[f64], usize),
    equal: &dyn Fn(usize, usize) -> bool,
    rounding: Rounding,
) -> EmbeddingAngle {
    if m == 0 || a.len() < 2 * m {
        return EmbeddingAngle::Undefined;
    }
    let n = a.len() / m;
    let rows = MatRef::from_row_major_slice(a, n, m);
    let g = gram_lower(rows, 1.0);
    let norm = |i: usize| g[(i, i)].sqrt();
    let cosine = |i: usize, j: usize| {
        let (lo, hi) = (i.max(j), i.min(j));
        g[(lo, hi)] / (norm(i) * norm(j))
    };
    let with_angle = |&(i, j): &(usize, usize)| cosine(i, j).is_finite();
    let Some(c_max) = pairs(n)
        .filter(with_angle)
        .map(|(i, j)| cosine(i, j))
        .max_by(f64::total_cmp)
    else {
        return EmbeddingAngle::Undefined;
    };
    let tol = 4.0 * (m as f64 + 2.0) * f64::EPSILON;
    let row = |i: usize| &a[i * m..(i + 1) * m];
    let theta = pairs(n)
        .filter(with_angle)
        .filter(|&(i, j)| cosine(i, j) >= c_max - tol)
        .map(|(i, j)| (input_angle(row(i), row(j)), equal(i, j)))
        .filter(|(t, _)| t.is_finite())
        .min_by(|a, b| a.0.total_cmp(&b.0));
    theta.map_or(EmbeddingAngle::Undefined, |(t, eq)| held(t, rounding, eq))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A layer whose rows are three vectors, two of them 1e-9 radians apart: the smallest
    /// angle is theirs to its digits (arccos of the cosine reads 0 there), a zero row is
    /// passed over, and no pair with an angle is `Undefined`.
    #[test]
    fn the_smallest_angle_keeps_its_digits() {
        let t = 1e-9f64;
        let a = [1.0, 0.0, t.cos(), t.sin(), 0.0, 0.0, 0.0, 1.0];
        let distinct = |_: usize, _: usize| false;
        match min_of_rows((&a, 2), &distinct, (Precision::F64, 0, 2)) {
            EmbeddingAngle::Deg(d) => {
                assert!((d.to_radians() - t).abs() <= 1e-15 * t, "{d}");
            }
            other => panic!("{other:?}"),
        }
        let zeros = [0.0; 4];
        assert_eq!(
            min_of_rows((&zeros, 2), &distinct, (Precision::F64, 1, 2)),
            EmbeddingAngle::Undefined
        );
    }

    /// Within a layer's rounding error of 0 in f32 the angle of distinct inputs is not
    /// resolved, 0 included; equal inputs are at 0 exactly; in f64 the same angle is
    /// resolved.
    #[test]
    fn angles_below_the_rounding_are_unresolved() {
        let small = 5.0 * error_rad(Precision::F32, 2, 32);
        let unresolved = |a: EmbeddingAngle| matches!(a, EmbeddingAngle::Unresolved { .. });
        assert!(unresolved(held(small, (Precision::F32, 2, 32), false)));
        assert!(unresolved(held(0.0, (Precision::F32, 2, 32), false)));
        assert_eq!(
            held(0.0, (Precision::F32, 2, 32), true),
            EmbeddingAngle::Deg(0.0)
        );
        assert!(matches!(
            held(small, (Precision::F64, 2, 32), false),
            EmbeddingAngle::Deg(_)
        ));
        // The inputs' own angle (layer 0) is formed from f64 inputs: resolved at any size.
        assert!(matches!(
            held(1e-300, (Precision::F32, 0, 32), false),
            EmbeddingAngle::Deg(_)
        ));
    }
}
