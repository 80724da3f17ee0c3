//! Angles from kernels: the model-gradient angle between two inputs is
//! `phi_ij = arccos(K_ij / sqrt(K_ii K_jj))` (Liu & Hui, Sec. 4), and the embedding angle
//! at layer l is the same formula on the Gram matrix of the layer's outputs `alpha_l`
//! (Eq. 7-9; `theta_0 = theta_in`).

use serde::Serialize;

use ntk_numerics::backend::Precision;
use ntk_numerics::kernel::Kernel;

/// The angle in degrees between samples `i` and `j` of a kernel. The cosine divides by
/// each norm `sqrt K_ii` separately, as [`min_angle`] does: the product `K_ii K_jj`
/// underflows to 0 once the diagonal is below about 1e-154, and the angle came out 0
/// degrees, as if the gradients were parallel (forty-fifth hostile round, D4: 1e-90 inputs
/// through a bias-free ReLU network, or depth 10,000).
pub fn angle_deg(k: &Kernel, i: usize, j: usize) -> f64 {
    let c = k.get(i, j) / (k.get(i, i).sqrt() * k.get(j, j).sqrt());
    c.clamp(-1.0, 1.0).acos().to_degrees()
}

/// The smallest pairwise angle over a set, and the pair that attains it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct MinAngle {
    pub deg: f64,
    pub i: usize,
    pub j: usize,
}

/// Minimum over `i < j` of the pairwise angle (largest cosine). A sample whose gradient
/// is zero (or whose cosine is not finite) has no angle to any other and is passed over;
/// `None` when no pair has an angle (fewer than two samples, all gradients zero), never NaN.
pub fn min_angle(k: &Kernel) -> Option<MinAngle> {
    let n = k.size;
    let norms: Vec<f64> = (0..n).map(|i| k.get(i, i).sqrt()).collect();
    let mut best: Option<(f64, usize, usize)> = None;
    for i in 0..n {
        for j in (i + 1)..n {
            let c = k.get(i, j) / (norms[i] * norms[j]);
            if !c.is_finite() {
                continue;
            }
            if best.is_none_or(|(b, _, _)| c > b) {
                best = Some((c, i, j));
            }
        }
    }
    best.map(|(c, i, j)| MinAngle {
        deg: c.clamp(-1.0, 1.0).acos().to_degrees(),
        i,
        j,
    })
}

/// [`min_angle`] of the kernel of the row-major `n x d` inputs `x` (one kernel row per
/// input), where two equal inputs (with a gradient) are at 0 exactly
/// ([`with_equal_rows_at_0`]).
pub fn min_angle_of_rows(k: &Kernel, x: &[f64], d: usize) -> Option<MinAngle> {
    let gradient = |i: usize| k.get(i, i) > 0.0 && k.get(i, i).is_finite();
    with_equal_rows_at_0(min_angle(k), x, d, gradient)
}

/// `min`, a smallest angle over the row-major `n x d` inputs `x`, or 0 at the first pair of
/// equal inputs that both have a gradient (`gradient(i)`: `K(x_i, x_i)` positive and
/// finite), the pair of the smallest second index: equal inputs have equal gradients, where
/// a kernel's correlation rounds to 1.2e-6 degrees or more (hundred-and-sixth hostile round,
/// D2). `min` as it is where `x` is not `n x d` for `n > 1`.
pub fn with_equal_rows_at_0(
    min: Option<MinAngle>,
    x: &[f64],
    d: usize,
    gradient: impl Fn(usize) -> bool,
) -> Option<MinAngle> {
    if d == 0 || !x.len().is_multiple_of(d) {
        return min;
    }
    let n = x.len() / d;
    let row = |i: usize| &x[i * d..(i + 1) * d];
    let mut seen: std::collections::HashMap<Vec<u64>, usize> =
        std::collections::HashMap::with_capacity(n);
    for j in (0..n).filter(|&j| gradient(j)) {
        let bits: Vec<u64> = row(j).iter().map(|v| (v + 0.0).to_bits()).collect();
        if let Some(&i) = seen.get(&bits) {
            return Some(MinAngle { deg: 0.0, i, j });
        }
        seen.insert(bits, j);
    }
    min
}

/// How finely a kernel formed in `precision` resolves an angle near 0 or 180 degrees: an
/// angle formed as `arccos(c)` of a correlation `c` within `1 - |c|` of 1 has an error of
/// about `u / sqrt(2 (1 - |c|))` radians for an error `u` of the correlation, here `terms`
/// ulps of the precision (`terms` = L + 1 for an MLP of L hidden layers, the kernel's sum
/// of per-layer terms; an estimate, as its sums have more terms). An angle is resolved where
/// that error is below its distance from 0 and 180 degrees (at least one significant
/// digit). The rule `pair_grad_angle_deg` and `min_grad_angle_deg` follow (hundred-and-
/// thirty-seventh hostile round, D1, D2: an f32 kernel's smallest angle read 0.0, then 6.7
/// times its value, for inputs 0.003 degrees apart).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Resolution {
    pub precision: Precision,
    /// The ulps of the correlation's error (at least 1).
    pub terms: usize,
}

impl Resolution {
    /// The rule for a kernel formed in `precision` as a sum of `terms` layers' terms.
    pub fn new(precision: Precision, terms: usize) -> Self {
        Self {
            precision,
            terms: terms.max(1),
        }
    }

    /// The error (radians) of an angle formed as `arccos(c)` of a correlation within `gap`
    /// of 1 or -1. A correlation that rounds to 1 is at most half an ulp from it: the bound
    /// at the smallest gap it may hide (hundred-and-seventh hostile round, N4: "known to
    /// about inf degrees").
    pub fn error_rad(&self, gap: f64) -> f64 {
        let eps = self.precision.epsilon();
        self.terms as f64 * eps / (2.0 * gap.max(eps / 2.0)).sqrt()
    }

    /// `phi` (degrees, formed as `arccos` of a kernel's correlation) where it is resolved,
    /// or why not. The correlation's distance from 1 (or -1) is the angle's own,
    /// `1 - |cos phi| = 2 sin^2(phi / 2)` at the nearer end. An angle that is not finite (a
    /// sample without a gradient) is passed through as it is.
    pub fn resolve(&self, phi: f64) -> Result<f64, Unresolved> {
        if !phi.is_finite() {
            return Ok(phi);
        }
        let distance = phi.min(180.0 - phi);
        let gap = 2.0 * (distance.to_radians() / 2.0).sin().powi(2);
        let error_deg = self.error_rad(gap).to_degrees();
        if error_deg < distance {
            return Ok(phi);
        }
        Err(Unresolved {
            // The end the angle is near, from the angle (hundred-and-sixth hostile round,
            // D1: the sign of the correlation named the wrong one).
            near_180: phi >= 90.0,
            gap,
            error_deg,
            precision: self.precision,
        })
    }

    /// The angle (degrees) between samples `i` and `j` of `k` ([`angle_deg`]) where it is
    /// resolved ([`Resolution::resolve`]), or why not.
    pub fn angle_deg(&self, k: &Kernel, i: usize, j: usize) -> Result<f64, Unresolved> {
        self.resolve(angle_deg(k, i, j))
    }

    /// A smallest angle `min` (of [`min_angle`] or [`min_angle_of_rows`]) where it is
    /// resolved, or why not. The pair of two equal rows of `rows` (row-major `n x d`; their
    /// gradients are equal) is at 0 exactly, and resolved.
    pub fn min_angle(
        &self,
        min: MinAngle,
        rows: Option<(&[f64], usize)>,
    ) -> Result<MinAngle, (MinAngle, Unresolved)> {
        let row = |x: &[f64], d: usize, i: usize| x.get(i * d..(i + 1) * d).map(<[f64]>::to_vec);
        let equal = rows.is_some_and(|(x, d)| {
            d > 0 && row(x, d, min.i).is_some() && row(x, d, min.i) == row(x, d, min.j)
        });
        if equal {
            return Ok(MinAngle { deg: 0.0, ..min });
        }
        self.resolve(min.deg).map(|_| min).map_err(|why| (min, why))
    }
}

/// Why an angle is not resolved ([`Resolution`]): it is nearer 0 (or 180) degrees than its
/// error. Displayed as "too near 0 degrees for the kernel's correlation (...) to resolve it,
/// known to about ... degrees, more than its distance from 0".
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Unresolved {
    /// Near 180 degrees (a correlation near -1) rather than 0.
    pub near_180: bool,
    /// The correlation's distance from 1 (or -1).
    pub gap: f64,
    /// The angle's error (degrees) by the rule.
    pub error_deg: f64,
    pub precision: Precision,
}

impl std::fmt::Display for Unresolved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (near, sign) = if self.near_180 {
            ("180", "-")
        } else {
            ("0", "")
        };
        let gap = self.gap;
        let (known, at_best) = if gap > 0.0 {
            (format!("within {gap:.1e} of {sign}1"), "")
        } else {
            (format!("{sign}1 in {}", self.precision), " at best")
        };
        write!(
            f,
            "too near {near} degrees for the kernel's correlation ({known}) to resolve it, \
             known to about {:.1e} degrees{at_best}, more than its distance from {near}",
            self.error_deg
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// All-zero gradients (all-zero inputs through a bias-free ReLU network) have no angle:
    /// `None`, where the comparison with NaN used to give a NaN minimum.
    #[test]
    fn zero_gradients_have_no_angle() {
        let mut k = Kernel::zeros(3);
        assert_eq!(min_angle(&k), None);
        // Samples 1 and 2 have gradients at 60 degrees; sample 0 has none.
        for (i, j, v) in [(1, 1, 1.0), (2, 2, 1.0), (1, 2, 0.5), (2, 1, 0.5)] {
            k.data[i * 3 + j] = v;
        }
        let m = min_angle(&k).unwrap();
        assert_eq!((m.i, m.j), (1, 2));
        assert!((m.deg - 60.0).abs() < 1e-12, "{m:?}");
    }

    /// A kernel's angles do not depend on its scale: scaled by 1e-200 (a diagonal whose
    /// product underflows) or 1e200 (whose product overflows) the same as unscaled, by
    /// [`angle_deg`] and [`min_angle`] alike (forty-fifth hostile round, D4: 0 degrees).
    #[test]
    fn angles_do_not_depend_on_the_kernels_scale() {
        let base = [4.0, 1.0, 1.0, 0.5];
        let of = |scale: f64| {
            let mut k = Kernel::zeros(2);
            for (slot, v) in k.data.iter_mut().zip(base) {
                *slot = v * scale;
            }
            k
        };
        // cos = 1 / sqrt(4 * 0.5) = 1 / sqrt 2: 45 degrees.
        for scale in [1.0, 1e-200, 1e200, 1e-300] {
            let k = of(scale);
            let deg = angle_deg(&k, 0, 1);
            assert!((deg - 45.0).abs() < 1e-12, "scale {scale}: {deg}");
            assert!((min_angle(&k).unwrap().deg - deg).abs() < 1e-12);
        }
    }

    /// The rule of a kernel's angles near 0 (hundred-and-thirty-seventh hostile round, D1,
    /// D2): an angle of 0.003 degrees is not resolved by a depth-2 MLP's f32 kernel (0.06
    /// degrees at best) and is by its f64 one; 0.2 degrees is resolved in f32; the note names
    /// the end; a pair of equal rows is 0 exactly, resolved, whatever the kernel read.
    #[test]
    fn angles_nearer_0_than_the_precision_resolves_are_not_resolved() {
        let kernel = |deg: f64| {
            let mut k = Kernel::zeros(2);
            k.data = vec![1.0, deg.to_radians().cos(), deg.to_radians().cos(), 1.0];
            k
        };
        let f32 = Resolution::new(Precision::F32, 3);
        let why = f32.angle_deg(&kernel(0.003), 0, 1).unwrap_err();
        assert!((why.error_deg - 0.0593).abs() < 1e-3, "{why:?}");
        let said = why.to_string();
        assert!(
            said.starts_with("too near 0 degrees for the kernel's correlation (within ")
                && said.ends_with("more than its distance from 0"),
            "{said}"
        );
        assert!(f32.angle_deg(&kernel(0.2), 0, 1).is_ok());
        let near_180 = f32.angle_deg(&kernel(179.999), 0, 1).unwrap_err();
        assert!(
            near_180.to_string().contains("of -1) to resolve it"),
            "{near_180}"
        );
        let f64 = Resolution::new(Precision::F64, 3);
        let deg = f64.angle_deg(&kernel(0.003), 0, 1).unwrap();
        assert!((deg - 0.003).abs() < 1e-8, "{deg}");
        // Equal rows: 0 whatever the kernel's correlation reads.
        let min = MinAngle {
            deg: 0.02,
            i: 0,
            j: 1,
        };
        let rows = [1.0, 2.0, 1.0, 2.0];
        assert_eq!(f32.min_angle(min, Some((&rows, 2))).unwrap().deg, 0.0);
        assert!(
            f32.min_angle(min, Some((&[1.0, 2.0, 1.0, 2.5], 2)))
                .is_err()
        );
    }
}
