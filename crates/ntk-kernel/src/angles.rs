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
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct MinAngle {
    pub deg: f64,
    pub i: usize,
    pub j: usize,
}

/// Minimum over `i < j` of the pairwise angle (largest cosine). `None` for fewer than two
/// samples.
pub fn min_angle(k: &Kernel) -> Option<MinAngle> {
    let n = k.size;
    let norms: Vec<f64> = (0..n).map(|i| k.get(i, i).sqrt()).collect();
    let mut best: Option<(f64, usize, usize)> = None;
    for i in 0..n {
        for j in (i + 1)..n {
            let c = k.get(i, j) / (norms[i] * norms[j]);
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
