//! Host-side, seeded weight initialization: the same seed gives the same weights on every
//! backend and at every precision (the draws are made in f64 on the host, then cast).

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

/// `rows x cols` i.i.d. `N(0, std^2)` draws in row-major order (PyTorch's `[out, in]`
/// layout), from ChaCha8 with `seed` on stream `layer`, so layer `l`'s weights do not
/// depend on how many layers the network has.
pub fn gaussian(seed: u64, layer: u64, rows: usize, cols: usize, std: f64) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(layer);
    (0..rows * cols)
        .map(|_| {
            let z: f64 = StandardNormal.sample(&mut rng);
            std * z
        })
        .collect::<Vec<f64>>()
}

/// [`gaussian`]'s draws laid out transposed (`cols x rows`, row-major: Burn's `[in, out]`
/// weight layout), made a panel of 32 rows at a time so that the draw is never held twice
/// (the draw and its transpose: 800 MB at once for a first layer of 3072 x 16384). Equal to
/// `transpose(&gaussian(..), rows, cols)`, value for value.
pub fn gaussian_transposed(seed: u64, layer: u64, rows: usize, cols: usize, std: f64) -> Vec<f64> {
    const PANEL: usize = 32;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(layer);
    let mut out = vec![0.0; rows * cols];
    let mut panel = vec![0.0; PANEL.min(rows) * cols];
    for r0 in (0..rows).step_by(PANEL) {
        let height = PANEL.min(rows - r0);
        for v in &mut panel[..height * cols] {
            let z: f64 = StandardNormal.sample(&mut rng);
            *v = std * z;
        }
        for c in 0..cols {
            let col = &mut out[c * rows..(c + 1) * rows];
            for r in 0..height {
                col[r0 + r] = panel[r * cols + c];
            }
        }
    }
    out
}

/// Transposes a row-major `rows x cols` matrix, 32 rows at a time: the strided writes of a
/// 32-row panel reuse their cache lines (a plain row loop misses on every write of a
/// 512 x 512 matrix).
pub fn transpose(data: &[f64], rows: usize, cols: usize) -> Vec<f64> {
    const PANEL: usize = 32;
    let mut out = vec![0.0; data.len()];
    for r0 in (0..rows).step_by(PANEL) {
        for c in 0..cols {
            let col = &mut out[c * rows..(c + 1) * rows];
            for r in r0..(r0 + PANEL).min(rows) {
                col[r] = data[r * cols + c];
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The panelled draw is the draw transposed, bit for bit, at shapes below, at and past
    /// the panel's 32 rows.
    #[test]
    fn the_transposed_draw_is_the_draw_transposed() {
        for (rows, cols) in [(1, 1), (5, 7), (32, 3), (33, 3), (64, 65), (70, 1), (1, 40)] {
            let direct = transpose(&gaussian(9, 2, rows, cols, 0.3), rows, cols);
            let panelled = gaussian_transposed(9, 2, rows, cols, 0.3);
            assert_eq!(
                direct.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                panelled.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                "{rows} x {cols}"
            );
        }
    }
}
