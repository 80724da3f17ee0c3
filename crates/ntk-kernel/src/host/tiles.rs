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
use ntk_engine::host::mlp::Params;
use ntk_model::Mlp;
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
    /// The rows' binary exponents of `A_0..A_L` and of `D_1..D_L` where far from unit scale
    /// (else 0, [`super::far_exponents`]): their Grams are formed with each row at `2^-e` and
    /// scaled back, so that a term in range is not lost to one factor's under- or overflow
    /// (hundred-and-twentieth hostile round, D4; per row: hundred-and-twenty-first, D1).
    input_exps: Vec<Vec<i32>>,
    delta_exps: Vec<Vec<i32>>,
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
            input_exps: f.inputs.iter().map(super::far_exponents).collect(),
            delta_exps: f.deltas.iter().map(super::far_exponents).collect(),
            inputs: f.inputs,
            deltas: f.deltas,
            beta2,
            bias: if mlp.config().bias { 1.0 } else { 0.0 },
            copies: outputs.len() as f64,
        }
    }

    /// Whether a factor has a row far from unit scale ([`super::far_exponent`]): its Grams
    /// are formed at powers of two here, which a route that forms them as they are (cuBLAS's,
    /// `ntk_cusolver::whole`) does not.
    pub fn far(&self) -> bool {
        self.input_exps
            .iter()
            .chain(&self.delta_exps)
            .any(|e| e.iter().any(|e| *e != 0))
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
        tile: MatMut<'_, f64>,
    ) {
        fill_pair(self, rows, self, cols, tile);
    }

    /// The kernel's diagonal `K_ii`, from the factors' row norms (each at its factor's
    /// power of two, scaled back).
    pub fn diagonal(&self) -> Vec<f64> {
        let n = self.size();
        let depth = self.deltas.len();
        // A row's square norm at `2^-e` (a row at unit scale as it is).
        let sq = |m: &Mat<f64>, i: usize, e: i32| {
            let at = |j: usize| match e {
                0 => m[(i, j)],
                _ => libm::scalbn(m[(i, j)], -e),
            };
            (0..m.ncols()).map(at).map(|v| v * v).sum::<f64>()
        };
        (0..n)
            .map(|i| {
                let ea = self.input_exps[depth][i];
                let top = libm::scalbn(self.beta2[depth] * sq(&self.inputs[depth], i, ea), 2 * ea);
                let mut k = self.copies * (top + self.bias);
                for l in 0..depth {
                    let (ea, ed) = (self.input_exps[l][i], self.delta_exps[l][i]);
                    let (a, d) = (sq(&self.inputs[l], i, ea), sq(&self.deltas[l], i, ed));
                    k += libm::scalbn(self.beta2[l] * a * d, 2 * (ea + ed))
                        + self.bias * libm::scalbn(d, 2 * ed);
                }
                k
            })
            .collect()
    }
}

/// `K[rows, cols]` into `tile`, the rows' factors from `a` and the columns' from `b` (two
/// sources of the same network over different inputs: [`GroupedSource`]'s groups; `rows`
/// index `a`'s inputs, `cols` `b`'s).
fn fill_pair(
    a: &TileSource,
    rows: std::ops::Range<usize>,
    b: &TileSource,
    cols: std::ops::Range<usize>,
    mut tile: MatMut<'_, f64>,
) {
    let (r, c) = (rows.len(), cols.len());
    let depth = a.deltas.len();
    // `m[range]` with each row at its `2^-e` (a copy only where one is not 0).
    let at = |m: &Mat<f64>, range: &std::ops::Range<usize>, e: &[i32]| -> Option<Mat<f64>> {
        e[range.clone()].iter().any(|e| *e != 0).then(|| {
            Mat::from_fn(range.len(), m.ncols(), |i, j| {
                libm::scalbn(m[(range.start + i, j)], -e[range.start + i])
            })
        })
    };
    // `dst = alpha m_a[rows] m_b[cols]^T` with the rows at their powers of two; whether any
    // was scaled.
    let product = |dst: MatMut<'_, f64>,
                   (ma, ea): (&Mat<f64>, &[i32]),
                   (mb, eb): (&Mat<f64>, &[i32]),
                   alpha: f64| {
        let (sa, sb) = (at(ma, &rows, ea), at(mb, &cols, eb));
        let left = sa.as_ref().map_or_else(|| block(ma, &rows), |m| m.as_ref());
        let right = sb.as_ref().map_or_else(|| block(mb, &cols), |m| m.as_ref());
        gemm(dst, left, right.transpose(), alpha);
        sa.is_some() || sb.is_some()
    };
    // The power of two of entry (i, j) of a product of `ea`'s and `eb`'s rows.
    let shift_of =
        |ea: &[i32], eb: &[i32], i: usize, j: usize| ea[rows.start + i] + eb[cols.start + j];
    // The output layer: copies (beta_out^2 A_L A_L^T + b).
    let (ea, eb) = (&a.input_exps[depth], &b.input_exps[depth]);
    if product(
        tile.as_mut(),
        (&a.inputs[depth], ea),
        (&b.inputs[depth], eb),
        a.copies * a.beta2[depth],
    ) {
        for j in 0..c {
            for i in 0..r {
                tile[(i, j)] = libm::scalbn(tile[(i, j)], shift_of(ea, eb, i, j));
            }
        }
    }
    let shift = a.copies * a.bias;
    let (mut g, mut h) = (Mat::<f64>::zeros(r, c), Mat::<f64>::zeros(r, c));
    for l in 0..depth {
        let (ea, eb) = (&a.input_exps[l], &b.input_exps[l]);
        let (da, db) = (&a.delta_exps[l], &b.delta_exps[l]);
        let sg = product(
            g.as_mut(),
            (&a.inputs[l], ea),
            (&b.inputs[l], eb),
            a.beta2[l],
        );
        let sh = product(h.as_mut(), (&a.deltas[l], da), (&b.deltas[l], db), 1.0);
        for j in 0..c {
            for i in 0..r {
                tile[(i, j)] += if !sg && !sh {
                    (g[(i, j)] + a.bias) * h[(i, j)]
                } else {
                    let (eg, eh) = (shift_of(ea, eb, i, j), shift_of(da, db, i, j));
                    libm::scalbn(g[(i, j)] * h[(i, j)], eg + eh)
                        + a.bias * libm::scalbn(h[(i, j)], eh)
                };
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

/// Bytes the factors of `mlp`'s kernel on `n` inputs, summed over `outputs` outputs, take:
/// `8 n (d + L m (1 + outputs))` for the layer inputs `A_0..A_L` and the signals
/// `D_1..D_L`.
pub fn factor_bytes(mlp: &Mlp, n: usize, outputs: usize) -> usize {
    let c = mlp.config();
    factor_bytes_of(n, c.input_dim, c.depth, c.width, outputs)
}

/// [`factor_bytes`] of an MLP of input dimension `d`, `depth` hidden layers of `width`
/// (for a plan made before the network is built).
pub fn factor_bytes_of(n: usize, d: usize, depth: usize, width: usize, outputs: usize) -> usize {
    8 * n * (d + depth * width * (1 + outputs))
}

/// The factors of a group of inputs take at most about this many bytes (805 MB;
/// [`GroupedSource::group_rows`]): two groups are held at a time. All 60,000 MNIST images
/// at depth 10 (5.3 GB of factors) make 7 groups of 9,216 (rounded to whole tiles), 1.6 GB
/// held.
pub const GROUP_BYTES: usize = 3 << 28;

/// [`TileSource`] one group of rows at a time, for the host's tiles of a whole set too large
/// for all its factors beside the tiles (all 60,000 MNIST images at depth 10: 5.3 GB of
/// factors beside 14.7 GB of tiles). The inputs are cut into groups of
/// [`Self::group_rows`] rows (a multiple of the tile width, so a tile lies in one group);
/// a tile of groups `(I, J)` is formed from the factors of those two groups, each group's
/// formed by its own forward and backward (every input's factors are its own: an MLP
/// without normalization treats each input alone) and at most two held at once. Filled in
/// group order ([`crate::extreme::tiled::Tiled::from_grouped`]), the `g` groups' factors are
/// formed about `g (g + 3) / 2` times (the diagonal's pass included), against once for
/// [`TileSource`]: 35 group formations, 5 times the whole set's, at 60,000 images in 7
/// groups, for 3.7 GB less at the peak.
pub struct GroupedSource<'a> {
    mlp: &'a Mlp,
    x: &'a [f64],
    n: usize,
    d: usize,
    outputs: Vec<usize>,
    rows: usize,
    /// The two groups held, most recently used first.
    held: Vec<(usize, TileSource)>,
    diagonal: Vec<f64>,
}

impl<'a> GroupedSource<'a> {
    /// The source of `mlp`'s kernel on the row-major `n x d` inputs `x`, summed over
    /// `outputs`, in groups of at most `rows` inputs (rounded up to a multiple of `block`,
    /// the tile width). Forms every group's factors once for the kernel's diagonal.
    pub fn new(
        mlp: &'a Mlp,
        x: &'a [f64],
        n: usize,
        outputs: &[usize],
        rows: usize,
        block: usize,
    ) -> Self {
        let block = block.max(1);
        let rows = rows.max(1).div_ceil(block) * block;
        let d = x.len().checked_div(n).unwrap_or(0);
        let mut s = Self {
            mlp,
            x,
            n,
            d,
            outputs: outputs.to_vec(),
            rows,
            held: Vec::new(),
            diagonal: Vec::with_capacity(n),
        };
        for g in 0..s.groups() {
            let diag = s.group(g).diagonal();
            s.diagonal.extend(diag);
        }
        s
    }

    /// The group size for the factors of `n` inputs that take `factor_bytes` in all: every
    /// input in one group when they fit [`GROUP_BYTES`], else groups of about that size.
    pub fn group_rows(n: usize, factor_bytes: usize) -> usize {
        let groups = factor_bytes.div_ceil(GROUP_BYTES).max(1);
        n.div_ceil(groups).max(1)
    }

    /// `n`.
    pub fn size(&self) -> usize {
        self.n
    }

    /// Bytes the factors of the groups held at a time take at most (two groups).
    pub fn held_bytes(&self) -> usize {
        let held = (2 * self.rows).min(self.n);
        factor_bytes(self.mlp, held, self.outputs.len())
    }

    /// The rows of a group.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The number of groups.
    pub fn groups(&self) -> usize {
        self.n.div_ceil(self.rows)
    }

    /// The kernel's diagonal `K_ii`.
    pub fn diagonal(&self) -> &[f64] {
        &self.diagonal
    }

    /// Group `g`'s factors: held, or formed (dropping the least recently used of two).
    fn group(&mut self, g: usize) -> &TileSource {
        if let Some(i) = self.held.iter().position(|(h, _)| *h == g) {
            let held = self.held.remove(i);
            self.held.insert(0, held);
        } else {
            // Free the evicted group before forming the next one.
            self.held.truncate(1);
            let start = g * self.rows;
            let len = self.rows.min(self.n - start);
            let x = &self.x[start * self.d..(start + len) * self.d];
            let src = TileSource::new(self.mlp, x, len, &self.outputs);
            self.held.insert(0, (g, src));
        }
        &self.held[0].1
    }

    /// Writes `K[rows, cols]` into `tile`; `rows` lie in one group, `cols` in one group.
    pub fn fill(
        &mut self,
        rows: std::ops::Range<usize>,
        cols: std::ops::Range<usize>,
        tile: MatMut<'_, f64>,
    ) {
        let (gi, gj) = (rows.start / self.rows, cols.start / self.rows);
        assert!(
            rows.is_empty() || (rows.end - 1) / self.rows == gi,
            "tile rows {rows:?} span two groups of {}",
            self.rows
        );
        assert!(
            cols.is_empty() || (cols.end - 1) / self.rows == gj,
            "tile columns {cols:?} span two groups of {}",
            self.rows
        );
        self.group(gi);
        self.group(gj);
        let find = |g: usize| &self.held.iter().find(|(h, _)| *h == g).expect("held").1;
        let (oi, oj) = (gi * self.rows, gj * self.rows);
        fill_pair(
            find(gi),
            rows.start - oi..rows.end - oi,
            find(gj),
            cols.start - oj..cols.end - oj,
            tile,
        );
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

    /// The grouped source's tiles and diagonal equal the whole source's (the same
    /// arithmetic: 1e-12 of the kernel's scale), for groups of 10 rows (tiles of 5) across
    /// every group pair, with biases and two outputs.
    #[test]
    fn grouped_tiles_are_the_whole_sources() {
        let (n, d) = (37, 5);
        let x = ntk_model::init::gaussian(3, 1234, n, d, 1.0);
        let cfg = MlpConfig::new(d, 16, 3, ActivationKind::Tanh)
            .with_seed(4)
            .with_bias(true)
            .with_output_dim(2);
        let mlp = Mlp::new(&cfg, &Device::flex(), DType::F64).unwrap();
        let outputs = [0, 1];
        let whole = TileSource::new(&mlp, &x, n, &outputs);
        let mut grouped = GroupedSource::new(&mlp, &x, n, &outputs, 9, 5);
        assert_eq!((grouped.rows(), grouped.groups()), (10, 4));
        let scale = whole.diagonal().into_iter().fold(0.0f64, f64::max);
        for (a, b) in whole.diagonal().iter().zip(grouped.diagonal()) {
            assert!((a - b).abs() < 1e-12 * scale, "diagonal");
        }
        for j in (0..n).step_by(5) {
            for i in (j..n).step_by(5) {
                let (rows, cols) = (i..(i + 5).min(n), j..(j + 5).min(n));
                let mut a = Mat::<f64>::zeros(rows.len(), cols.len());
                let mut b = Mat::<f64>::zeros(rows.len(), cols.len());
                whole.fill(rows.clone(), cols.clone(), a.as_mut());
                grouped.fill(rows.clone(), cols.clone(), b.as_mut());
                for jj in 0..cols.len() {
                    for ii in 0..rows.len() {
                        let e = (a[(ii, jj)] - b[(ii, jj)]).abs();
                        assert!(e < 1e-12 * scale, "tile ({i}, {j}) off by {e:e}");
                    }
                }
            }
        }
        assert_eq!(GroupedSource::group_rows(60_000, 5_280_000_000), 8_572);
        assert_eq!(GroupedSource::group_rows(10_000, 800_000_000), 10_000);
    }
}
