//! Angles from kernels: the model-gradient angle between two inputs is
//! `phi_ij = arccos(K_ij / sqrt(K_ii K_jj))` (Liu & Hui, Sec. 4), and the embedding angle
//! at layer l is the same formula on the Gram matrix of the layer's outputs `alpha_l`
//! (Eq. 7-9; `theta_0 = theta_in`).

use serde::Serialize;

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
}
