//! The structured NTK of an MLP one tile at a time, for a kernel held in tiles
//! ([`crate::extreme::tiled`]): the per-layer factors of all `n` inputs are formed once
//! (one forward and one backward, `n (d + 2 L m)` values), and tile `(I, J)` is then
//!
//! ```text
//! K_IJ = copies (beta_out^2 A_L[I] A_L[J]^T + b)
//!      + sum_l (beta_l^2 A_{l-1}[I] A_{l-1}[J]^T + b) .* (D_l[I] D_l[J]^T),
//! ```
//!
//! the formula of [`super::ntk`] restricted to rows `I` and columns `J` (two GEMMs of
//! `|I| x |J| x m` per layer), so the `n x n` kernel is never formed densely. Its diagonal
//! (each input's squared gradient norm) comes from the factors alone, for the gradient
//! angles.

use faer::{Mat, MatMut, MatRef};
use ntk_model::Mlp;
use ntk_model::host::Params;
use ntk_numerics::linalg::gemm;

/// Rows `range` of `m`.
fn block<'a>(m: &'a Mat<f64>, range: &std::ops::Range<usize>) -> MatRef<'a, f64> {
    m.as_ref().subrows(range.start, range.len())
}

/// An MLP's factors on all inputs, in f64, and the constants of its kernel.
pub struct TileSource {
    /// `A_0..A_L` (`n x fan_in` each).
    inputs: Vec<Mat<f64>>,
    /// `D_1..D_L`, the selected outputs side by side.
    deltas: Vec<Mat<f64>>,
    /// `beta_l^2` of the hidden layers, then `beta_out^2`.
    beta2: Vec<f64>,
    /// The bias term `b` (1 with biases, 0 without).
    bias: f64,
    /// The number of outputs summed.
    copies: f64,
}

impl TileSource {
    /// The factors of `mlp` on the row-major `n x d` inputs `x`, for the kernel summed over
    /// `outputs`.
    pub fn new(mlp: &Mlp, x: &[f64], n: usize, outputs: &[usize]) -> Self {
        let params = Params::<f64>::read(mlp);
        let f = super::factors::<f64>(mlp, x, n, outputs);
        let mut beta2: Vec<f64> = params
            .hidden()
            .iter()
            .map(|l| l.beta() * l.beta())
            .collect();
        beta2.push(params.output().beta() * params.output().beta());
        Self {
            inputs: f.inputs,
            deltas: f.deltas,
            beta2,
            bias: if mlp.config().bias { 1.0 } else { 0.0 },
            copies: outputs.len() as f64,
        }
    }

    /// `n`.
    pub fn size(&self) -> usize {
        self.inputs[0].nrows()
    }

    /// `A_0..A_L`, `n x fan_in` each.
    pub fn inputs(&self) -> &[Mat<f64>] {
        &self.inputs
    }

    /// `D_1..D_L`, `n x (m |outputs|)` each.
    pub fn deltas(&self) -> &[Mat<f64>] {
        &self.deltas
    }

    /// `beta_l^2` of the hidden layers, then `beta_out^2`.
    pub fn beta2(&self) -> &[f64] {
        &self.beta2
    }

    /// The bias term `b` (1 with biases, 0 without).
    pub fn bias(&self) -> f64 {
        self.bias
    }

    /// The number of outputs summed.
    pub fn copies(&self) -> f64 {
        self.copies
    }

    /// Bytes the factors take.
    pub fn bytes(&self) -> usize {
        self.inputs
            .iter()
            .chain(&self.deltas)
            .map(|m| 8 * m.nrows() * m.ncols())
            .sum()
    }

    /// Writes `K[rows, cols]` into `tile` (`|rows| x |cols|`).
    pub fn fill(
        &self,
        rows: std::ops::Range<usize>,
        cols: std::ops::Range<usize>,
        mut tile: MatMut<'_, f64>,
    ) {
        let (r, c) = (rows.len(), cols.len());
        let depth = self.deltas.len();
        // The output layer: copies (beta_out^2 A_L A_L^T + b).
        let a = &self.inputs[depth];
        gemm(
            tile.as_mut(),
            block(a, &rows),
            block(a, &cols).transpose(),
            self.copies * self.beta2[depth],
        );
        let shift = self.copies * self.bias;
        let (mut g, mut h) = (Mat::<f64>::zeros(r, c), Mat::<f64>::zeros(r, c));
        for l in 0..depth {
            let (a, d) = (&self.inputs[l], &self.deltas[l]);
            gemm(
                g.as_mut(),
                block(a, &rows),
                block(a, &cols).transpose(),
                self.beta2[l],
            );
            gemm(
                h.as_mut(),
                block(d, &rows),
                block(d, &cols).transpose(),
                1.0,
            );
            for j in 0..c {
                for i in 0..r {
                    tile[(i, j)] += (g[(i, j)] + self.bias) * h[(i, j)];
                }
            }
        }
        if shift != 0.0 {
            for j in 0..c {
                for i in 0..r {
                    tile[(i, j)] += shift;
                }
            }
        }
    }

    /// The kernel's diagonal `K_ii`, from the factors' row norms.
    pub fn diagonal(&self) -> Vec<f64> {
        let n = self.size();
        let depth = self.deltas.len();
        let sq =
            |m: &Mat<f64>, i: usize| (0..m.ncols()).map(|j| m[(i, j)] * m[(i, j)]).sum::<f64>();
        (0..n)
            .map(|i| {
                let mut k =
                    self.copies * (self.beta2[depth] * sq(&self.inputs[depth], i) + self.bias);
                for l in 0..depth {
                    k += (self.beta2[l] * sq(&self.inputs[l], i) + self.bias)
                        * sq(&self.deltas[l], i);
                }
                k
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::{DType, Device};
    use ntk_model::{ActivationKind, MlpConfig};

    /// Every tile, and the diagonal, equal the host engine's dense kernel (the same
    /// arithmetic in another order: 1e-12 of the kernel's scale), with biases and several
    /// outputs, for tiles that straddle the diagonal and rectangular ones.
    #[test]
    fn tiles_are_the_dense_kernels() {
        let (n, d) = (37, 5);
        let x = ntk_model::init::gaussian(3, 1234, n, d, 1.0);
        for (bias, outputs) in [(false, vec![0]), (true, vec![0, 1])] {
            let cfg = MlpConfig::new(d, 16, 3, ActivationKind::Tanh)
                .with_seed(4)
                .with_bias(bias)
                .with_output_dim(2);
            let mlp = Mlp::new(&cfg, &Device::flex(), DType::F64).unwrap();
            let dense = super::super::ntk::<f64>(&mlp, &x, n, &outputs);
            let src = TileSource::new(&mlp, &x, n, &outputs);
            let scale = (0..n).map(|i| dense.get(i, i)).fold(0.0f64, f64::max);
            for (rows, cols) in [(0..37, 0..37), (10..25, 3..17), (30..37, 0..9)] {
                let mut t = Mat::<f64>::zeros(rows.len(), cols.len());
                src.fill(rows.clone(), cols.clone(), t.as_mut());
                for (ii, i) in rows.clone().enumerate() {
                    for (jj, j) in cols.clone().enumerate() {
                        let e = (t[(ii, jj)] - dense.get(i, j)).abs();
                        assert!(e < 1e-12 * scale, "bias {bias}: ({i}, {j}) off by {e:e}");
                    }
                }
            }
            for (i, k) in src.diagonal().into_iter().enumerate() {
                assert!((k - dense.get(i, i)).abs() < 1e-12 * scale, "diagonal {i}");
            }
        }
    }
}
