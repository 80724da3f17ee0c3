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
