//! Angles from kernels: the model-gradient angle between two inputs is
//! `phi_ij = arccos(K_ij / sqrt(K_ii K_jj))` (Liu & Hui, Sec. 4), and the embedding angle
//! at layer l is the same formula on the Gram matrix of the layer's outputs `alpha_l`
//! (Eq. 7-9; `theta_0 = theta_in`).

use serde::Serialize;

use ntk_numerics::kernel::Kernel;

/// The angle in degrees between samples `i` and `j` of a kernel.
pub fn angle_deg(k: &Kernel, i: usize, j: usize) -> f64 {
    let c = k.get(i, j) / (k.get(i, i) * k.get(j, j)).sqrt();
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
}
