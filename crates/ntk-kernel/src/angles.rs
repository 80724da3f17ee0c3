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

/// Whether rows `i` and `j` of the row-major inputs `x` (`d` columns) are both there and
/// equal (`-0.0` equal to `0.0`, as `==` has it).
pub fn rows_equal(x: &[f64], d: usize, i: usize, j: usize) -> bool {
    let row = |k: usize| x.get(k * d..(k + 1) * d);
    d > 0 && row(i).is_some() && row(i) == row(j)
}

/// How finely a kernel resolves an angle near 0 or 180 degrees. Two roundings move it:
/// - the kernel's products, in `products`: the correlation `c = K_ij / sqrt(K_ii K_jj)` is
///   known to `u = terms` ulps of that precision, so the angle formed as `arccos(c)` lies
///   between the angles of `1 - |c| - u` and `1 - |c| + u` (about `u / sqrt(2 (1 - |c|))`
///   radians either way, and anywhere from 0 where `u` exceeds `1 - |c|`);
/// - the gradients, in `gradients`: each rounded by `terms` ulps relative, which turns them
///   by about that many radians (the whole error where the products are formed in f64 from
///   f32 gradients, the autodiff route's, which keeps angles far below `sqrt(eps_f32)`).
///
/// `terms` is the layers the rounding passes through (L + 1 for an MLP of L hidden layers, a
/// ResNet's depth; an estimate, as each layer's sums have more terms). An angle is resolved
/// where its interval's half-width is at most [`RESOLVED`] of it (one significant digit, held
/// firmly). The rule `pair_grad_angle_deg` and `min_grad_angle_deg` follow on every route.
/// Hundred-and-thirty-seventh hostile round, D1, D2: an f32 kernel's smallest angle read
/// 0.0, then 6.7 times its value, for inputs 0.003 degrees apart; hundred-and-thirty-eighth,
/// D1: the first rule, an error estimate below the angle, wrote 0.0291 degrees for 0.0026
/// (its estimate is no bound where the rounding reaches the gap), and D2: it nulled the
/// autodiff route's angles, resolved to 2e-4 of themselves, as if their products were f32.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Resolution {
    /// The precision of the kernel's products (the correlation's rounding).
    pub precision: Precision,
    /// The precision of the gradients (their own rounding).
    pub gradients: Precision,
    /// The ulps of each rounding (at least 1).
    pub terms: usize,
}

/// The largest half-width of a resolved angle's interval, relative to the angle.
pub const RESOLVED: f64 = 0.1;

impl Resolution {
    /// The rule for a kernel whose gradients and products are both in `precision` (the
    /// structured and host routes), through `terms` layers.
    pub fn new(precision: Precision, terms: usize) -> Self {
        Self::with_products(precision, precision, terms)
    }

    /// The rule for gradients in `gradients` whose products are formed in `products` (the
    /// autodiff route: f64 products of the gradients in the run's precision).
    pub fn with_products(gradients: Precision, products: Precision, terms: usize) -> Self {
        Self {
            precision: products,
            gradients,
            terms: terms.max(1),
        }
    }

    /// The rule for a kernel of `route` whose gradients are in `precision`
    /// ([`crate::compute::Route::products`]).
    pub fn of_route(route: crate::compute::Route, precision: Precision, terms: usize) -> Self {
        Self::with_products(precision, route.products(precision), terms)
    }

    /// The interval (radians) an angle at `distance` radians from its nearer end (0 or pi)
    /// may lie in: the angles of the correlation's gap `1 - cos(distance)` less and more its
    /// rounding, widened by the gradients' own. A correlation that rounds to 1 is at most
    /// half an ulp from it: its gap is taken as that (hundred-and-seventh hostile round, N4:
    /// "known to about inf degrees").
    pub fn interval_rad(&self, distance: f64) -> (f64, f64) {
        let eps = self.precision.epsilon();
        let u = self.terms as f64 * eps;
        let gap = (2.0 * (distance / 2.0).sin().powi(2)).max(eps / 2.0);
        let turn = self.terms as f64 * self.gradients.epsilon();
        let lo = crate::theory::relu::angle_from_one_minus_cos(gap - u);
        let hi = crate::theory::relu::angle_from_one_minus_cos(gap + u);
        ((lo - turn).max(0.0), hi + turn)
    }

    /// `phi` (degrees, formed as `arccos` of a kernel's correlation) where it is resolved,
    /// or why not, with the interval it may lie in. An angle that is not finite (a sample
    /// without a gradient) is passed through as it is.
    pub fn resolve(&self, phi: f64) -> Result<f64, Unresolved> {
        if !phi.is_finite() {
            return Ok(phi);
        }
        let distance = phi.min(180.0 - phi);
        let (lo, hi) = self.interval_rad(distance.to_radians());
        let (lo, hi) = (lo.to_degrees(), hi.to_degrees());
        if (hi - lo) / 2.0 <= RESOLVED * distance {
            return Ok(phi);
        }
        let near_180 = phi >= 90.0;
        Err(Unresolved {
            // The end the angle is near, from the angle (hundred-and-sixth hostile round,
            // D1: the sign of the correlation named the wrong one).
            near_180,
            gap: 2.0 * (distance.to_radians() / 2.0).sin().powi(2),
            // The interval, as angles (near 180: 180 less the distances).
            interval_deg: match near_180 {
                false => (lo, hi),
                true => (180.0 - hi, 180.0 - lo),
            },
            distance_deg: (lo, hi),
            error_deg: (hi - lo) / 2.0,
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
        let equal = rows.is_some_and(|(x, d)| rows_equal(x, d, min.i, min.j));
        if equal {
            return Ok(MinAngle { deg: 0.0, ..min });
        }
        self.resolve(min.deg).map(|_| min).map_err(|why| (min, why))
    }
}

/// Why an angle is not resolved ([`Resolution`]): the interval the roundings leave it is
/// wider than a tenth of the angle either way. Displayed as "too near 0 degrees for the
/// kernel's correlation (...) to resolve it: it lies between ... and ... degrees".
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Unresolved {
    /// Near 180 degrees (a correlation near -1) rather than 0.
    pub near_180: bool,
    /// The correlation's distance from 1 (or -1).
    pub gap: f64,
    /// The interval (degrees) the angle may lie in.
    pub interval_deg: (f64, f64),
    /// The same interval as distances (degrees) from the nearer end, 0 or 180, which near
    /// 180 keep the digits the angles cannot (hundred-and-thirty-ninth hostile round, D3:
    /// "between 1.80e2 and 1.80e2 degrees").
    pub distance_deg: (f64, f64),
    /// Its half-width (degrees).
    pub error_deg: f64,
    /// The precision of the kernel's products.
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
        let known = if gap > 0.0 {
            format!("within {gap:.1e} of {sign}1")
        } else {
            format!("{sign}1 in {}", self.precision)
        };
        let (lo, hi) = self.distance_deg;
        let interval = if self.near_180 {
            format!("{lo:.2e} to {hi:.2e} degrees short of 180")
        } else {
            format!("between {lo:.2e} and {hi:.2e} degrees")
        };
        write!(
            f,
            "too near {near} degrees for the kernel's correlation ({known}) to resolve it: the \
             roundings leave it anywhere {}{interval}",
            if self.near_180 { "from " } else { "" }
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
        // The correlation rounds to 1 in f32: anywhere from 0 to the angle of its ulps.
        assert_eq!(why.interval_deg.0, 0.0, "{why:?}");
        let said = why.to_string();
        assert!(
            said.starts_with("too near 0 degrees for the kernel's correlation (within ")
                && said.contains("to resolve it: the roundings leave it anywhere between"),
            "{said}"
        );
        // An angle whose correlation is a few ulps from 1 is not resolved either (round
        // 138, D1: 0.0291 degrees was written for 0.0026); 0.2 degrees (gap 6e-6, 17
        // times the 3 ulps) is.
        assert!(f32.angle_deg(&kernel(0.0291), 0, 1).is_err());
        assert!(f32.angle_deg(&kernel(0.2), 0, 1).is_ok());
        let near_180 = f32.angle_deg(&kernel(179.999), 0, 1).unwrap_err();
        assert!(
            near_180.to_string().contains("of -1) to resolve it"),
            "{near_180}"
        );
        assert!(near_180.interval_deg.1 <= 180.0 && near_180.interval_deg.0 < 179.999);
        // Its ends as distances from 180, which differ in print (round 139, D3: "between
        // 1.80e2 and 1.80e2 degrees").
        let (near, far) = near_180.distance_deg;
        assert!(near < 0.001 && 0.001 < far, "{near_180:?}");
        let said = near_180.to_string();
        assert!(
            said.ends_with(&format!(
                "anywhere from {near:.2e} to {far:.2e} degrees short of 180"
            )) && near != far,
            "{said}"
        );
        let f64 = Resolution::new(Precision::F64, 3);
        let deg = f64.angle_deg(&kernel(0.003), 0, 1).unwrap();
        assert!((deg - 0.003).abs() < 1e-8, "{deg}");
        // f32 gradients with f64 products (autodiff) resolve 0.003 degrees (round 138, D2),
        // not 1e-5 (3 ulps of f32 as radians is 2e-5 degrees).
        let autodiff = Resolution::with_products(Precision::F32, Precision::F64, 3);
        assert!(autodiff.angle_deg(&kernel(0.003), 0, 1).is_ok());
        assert!(autodiff.angle_deg(&kernel(1e-4), 0, 1).is_err());
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
