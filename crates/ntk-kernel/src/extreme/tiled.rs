//! A kernel too large for two dense copies, held once as its lower triangle in square tiles
//! on the host (f64), with the extreme-eigenvalue algorithm of [`super::solve`] running on it
//! ([`Tiled`] is an [`Operand`]): `n = 60,000` is 14.4 GB of tiles where the dense kernel is
//! 28.8 GB, and nothing else of size `n^2` is ever allocated.
//!
//! - **Storage**: tile `(i, j)`, `i >= j`, is the `b_i x b_j` block of rows `i b..` and columns
//!   `j b..` (the last tile row and column are shorter), column-major; tiles are grouped by
//!   tile column, so that the factorization's updates of column `j` borrow column `k < j`
//!   immutably beside them.
//! - **`K v`** (Lanczos on `K`): each off-diagonal tile is applied twice, as itself and
//!   transposed; a diagonal tile's strict upper part is read from its lower part.
//! - **`K + s I = L L^T`** in place (right-looking, blocked, level 3): for each tile column
//!   `k`, the diagonal tile's own Cholesky (faer), the tiles below it solved against it
//!   (`L_ik = A_ik L_kk^{-T}`), then every trailing tile updated (`A_ij -= L_ik L_jk^T`, GEMMs
//!   on the host BLAS). About `n^3 / 3` multiply-adds, as the dense factorization.
//! - **`(L L^T)^{-1} v`** (Lanczos on the inverse): blocked forward and back substitution,
//!   `2 n^2` multiply-adds.
//!
//! The factorization overwrites the kernel. [`super::solve`] computes `lambda_max` first
//! (on `K`), then factors; when a shift has to be tried again after a breakdown, the tiles are
//! filled anew by the [`Fill`] the store was made with (a copy of a given matrix in tests,
//! the kernel's formation from a network's factors in the probe), never from a second copy.

use faer::linalg::cholesky::llt::factor::{
    LltParams, cholesky_in_place, cholesky_in_place_scratch,
};
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_upper_triangular_in_place,
};
use faer::{Mat, MatMut, Par, Spec};
use ntk_numerics::linalg::gemm_acc;

use super::{Operand, cholesky, lanczos};

/// Writes the kernel's entries of rows `rows` and columns `cols` into a tile.
pub type Fill<'a> =
    Box<dyn FnMut(std::ops::Range<usize>, std::ops::Range<usize>, MatMut<'_, f64>) + 'a>;

/// The lower triangle of an `n x n` symmetric kernel in `b x b` tiles (see the module doc).
pub struct Tiled<'a> {
    n: usize,
    b: usize,
    /// `cols[j][i - j]` is tile `(i, j)`.
    cols: Vec<Vec<Mat<f64>>>,
    fill: Fill<'a>,
    /// The tiles hold a factor (not the kernel).
    factored: bool,
    /// Tiles are filled in groups of this many tile rows and columns: every tile of group
    /// column `J` and group row `I` before the next group row (a [`GroupedSource`]'s groups,
    /// so that it forms each pair's factors once); the whole side when not grouped.
    ///
    /// [`GroupedSource`]: crate::host::tiles::GroupedSource
    group: usize,
    /// Progress bars (with ETA) of the formation, the factorization and Lanczos.
    progress: ntk_system::progress::Reporter,
}

impl<'a> Tiled<'a> {
    /// Allocates the tiles of an `n x n` kernel with tile width `block` and fills them,
    /// silently.
    pub fn new(n: usize, block: usize, fill: Fill<'a>) -> Self {
        Self::with_progress(n, block, fill, ntk_system::progress::Reporter::silent())
    }

    /// [`Self::new`], reporting each phase (formation, factorization, Lanczos) on `progress`
    /// as a bar with its ETA.
    pub fn with_progress(
        n: usize,
        block: usize,
        fill: Fill<'a>,
        progress: ntk_system::progress::Reporter,
    ) -> Self {
        Self::build(n, block, fill, progress, (None, true))
    }

    /// The tiles allocated and, with `fill_now`, filled, in groups of `group_rows` rows and
    /// columns (whole tiles; `None`: the whole side, tile column by tile column).
    fn build(
        n: usize,
        block: usize,
        fill: Fill<'a>,
        progress: ntk_system::progress::Reporter,
        (group_rows, fill_now): (Option<usize>, bool),
    ) -> Self {
        let b = block.clamp(1, n.max(1));
        let nt = n.div_ceil(b);
        let group = match group_rows {
            Some(rows) if rows < n => {
                assert_eq!(rows % b, 0, "groups of whole tiles");
                rows / b
            }
            _ => nt,
        };
        let width = |t: usize| (n - t * b).min(b);
        let cols = (0..nt)
            .map(|j| (j..nt).map(|i| Mat::zeros(width(i), width(j))).collect())
            .collect();
        let mut t = Self {
            n,
            b,
            cols,
            fill,
            factored: false,
            group: group.max(1),
            progress,
        };
        if fill_now {
            t.refill();
        }
        t
    }

    /// A tiled copy of the dense row-major `n x n` matrix `k` (its lower triangle).
    pub fn from_dense(k: &'a [f64], n: usize, block: usize) -> Self {
        let fill: Fill<'a> = Box::new(move |rows, cols, mut tile| {
            for (jj, c) in cols.clone().enumerate() {
                for (ii, r) in rows.clone().enumerate() {
                    tile[(ii, jj)] = k[r * n + c];
                }
            }
        });
        Self::new(n, block, fill)
    }

    /// The NTK of an MLP, tile by tile from its factors ([`crate::host::tiles::TileSource`]).
    pub fn from_source(
        src: &'a crate::host::tiles::TileSource,
        block: usize,
        progress: ntk_system::progress::Reporter,
    ) -> Self {
        let fill: Fill<'a> = Box::new(move |rows, cols, tile| src.fill(rows, cols, tile));
        Self::with_progress(src.size(), block, fill, progress)
    }

    /// The NTK of an MLP from its factors one group of inputs at a time
    /// ([`crate::host::tiles::GroupedSource`], whose group size is a multiple of `block`),
    /// filled group pair by group pair.
    pub fn from_grouped(
        src: &'a mut crate::host::tiles::GroupedSource<'a>,
        block: usize,
        progress: ntk_system::progress::Reporter,
    ) -> Self {
        Self::grouped(src, block, progress, true)
    }

    /// [`Self::from_grouped`] with its tiles allocated but not filled: they are read from a
    /// file ([`Self::read_tiles`]) instead, and `src` fills them only if the kernel is needed
    /// again (a factorization that broke down).
    pub fn from_grouped_unfilled(
        src: &'a mut crate::host::tiles::GroupedSource<'a>,
        block: usize,
        progress: ntk_system::progress::Reporter,
    ) -> Self {
        Self::grouped(src, block, progress, false)
    }

    fn grouped(
        src: &'a mut crate::host::tiles::GroupedSource<'a>,
        block: usize,
        progress: ntk_system::progress::Reporter,
        fill_now: bool,
    ) -> Self {
        let (n, rows) = (src.size(), src.rows());
        let fill: Fill<'a> = Box::new(move |rows, cols, tile| src.fill(rows, cols, tile));
        Self::build(n, block, fill, progress, (Some(rows), fill_now))
    }

    /// The bytes of the tiles of an `n x n` kernel in tiles of `block` ([`Self::bytes`]
    /// before allocating them): tile column `j`, `w_j` wide, holds the `n - j b` rows from
    /// its diagonal down.
    pub fn bytes_for(n: usize, block: usize) -> usize {
        let b = block.clamp(1, n.max(1));
        (0..n.div_ceil(b))
            .map(|j| 8 * (n - j * b).min(b) * (n - j * b))
            .sum()
    }

    /// Whether the tiles hold a factor `L` of `K + s I` (else the kernel).
    pub fn holds_factor(&self) -> bool {
        self.factored
    }

    /// Writes every tile's values to `w`: f64 little-endian, tile column by tile column
    /// (tile `(j, j)`, `(j + 1, j)`, ...), each tile column-major; [`Self::bytes`] bytes in
    /// all, what [`Self::read_tiles`] reads back.
    pub fn write_tiles(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        let mut buf = Vec::new();
        for tile in self.cols.iter().flatten() {
            for j in 0..tile.ncols() {
                buf.clear();
                for i in 0..tile.nrows() {
                    buf.extend_from_slice(&tile[(i, j)].to_le_bytes());
                }
                w.write_all(&buf)?;
            }
        }
        Ok(())
    }

    /// Reads the tiles [`Self::write_tiles`] wrote for a store of the same `n` and tile
    /// width: the kernel, or with `factor` the factor of `K + s I` that
    /// [`super::Operand::inverse_largest`] then applies. A short file is an error.
    pub fn read_tiles(&mut self, r: &mut dyn std::io::Read, factor: bool) -> std::io::Result<()> {
        let mut buf = Vec::new();
        for tile in self.cols.iter_mut().flatten() {
            let rows = tile.nrows();
            buf.resize(8 * rows, 0);
            for j in 0..tile.ncols() {
                r.read_exact(&mut buf)?;
                for (i, v) in buf.chunks_exact(8).enumerate() {
                    tile[(i, j)] = f64::from_le_bytes(v.try_into().expect("8 bytes"));
                }
            }
        }
        self.factored = factor;
        Ok(())
    }

    /// The number of tiles along a side.
    fn tiles(&self) -> usize {
        self.cols.len()
    }

    /// The rows of tile row `t`.
    fn range(&self, t: usize) -> std::ops::Range<usize> {
        t * self.b..((t + 1) * self.b).min(self.n)
    }

    /// Fills every tile with the kernel (again): also the way back for tiles a file could
    /// not fill ([`Self::read_tiles`] failing part-way, or tiles read and then found not to
    /// be the kernel's).
    pub fn refill(&mut self) {
        let ranges: Vec<_> = (0..self.tiles()).map(|t| self.range(t)).collect();
        let count = self.cols.iter().map(Vec::len).sum::<usize>();
        let bar = self.progress.long_bar(count as u64, "tiles".into());
        let (nt, g) = (self.tiles(), self.group);
        for gj in (0..nt).step_by(g) {
            for gi in (gj..nt).step_by(g) {
                for j in gj..(gj + g).min(nt) {
                    for i in gi.max(j)..(gi + g).min(nt) {
                        let tile = &mut self.cols[j][i - j];
                        (self.fill)(ranges[i].clone(), ranges[j].clone(), tile.as_mut());
                        bar.inc(1);
                    }
                }
            }
        }
        bar.finish_and_clear();
        self.factored = false;
    }

    /// Bytes the tiles take: `8 (n^2 + sum of the diagonal tiles' areas) / 2`, about
    /// `4 n (n + b)`.
    pub fn bytes(&self) -> usize {
        self.cols
            .iter()
            .flatten()
            .map(|t| 8 * t.nrows() * t.ncols())
            .sum()
    }

    /// The minimum pairwise gradient angle ([`crate::angles::min_angle`]'s rules) from the
    /// lower tiles and the kernel's diagonal `diag`: the largest `K_ij / sqrt(K_ii K_jj)`
    /// over `i != j`, passing over samples without a gradient. Reads the kernel, so the
    /// tiles are filled anew first when they hold a factor.
    pub fn min_angle(&mut self, diag: &[f64]) -> Option<crate::angles::MinAngle> {
        if self.factored {
            self.refill();
        }
        let norms: Vec<f64> = diag.iter().map(|d| d.sqrt()).collect();
        let mut best: Option<(f64, usize, usize)> = None;
        for (j, col) in self.cols.iter().enumerate() {
            let cj = self.range(j);
            for (o, tile) in col.iter().enumerate() {
                let ri = self.range(j + o);
                for (jj, c) in cj.clone().enumerate() {
                    for (ii, r) in ri.clone().enumerate() {
                        if r <= c {
                            continue;
                        }
                        let cos = tile[(ii, jj)] / (norms[r] * norms[c]);
                        if cos.is_finite() && best.is_none_or(|(b, _, _)| cos > b) {
                            best = Some((cos, c, r));
                        }
                    }
                }
            }
        }
        best.map(|(cos, i, j)| crate::angles::MinAngle {
            deg: cos.clamp(-1.0, 1.0).acos().to_degrees(),
            i,
            j,
        })
    }

    /// `y = K v` from the lower tiles.
    fn apply(&self, v: &[f64]) -> Vec<f64> {
        let mut y = vec![0.0; self.n];
        for (j, col) in self.cols.iter().enumerate() {
            let cj = self.range(j);
            for (o, tile) in col.iter().enumerate() {
                let i = j + o;
                let ri = self.range(i);
                if i == j {
                    // The diagonal tile's lower part, read as a full symmetric block.
                    for (jj, c) in cj.clone().enumerate() {
                        for (ii, r) in ri.clone().enumerate() {
                            let a = if ii >= jj {
                                tile[(ii, jj)]
                            } else {
                                tile[(jj, ii)]
                            };
                            y[r] += a * v[c];
                        }
                    }
                } else {
                    for (jj, c) in cj.clone().enumerate() {
                        let (vc, mut acc) = (v[c], 0.0);
                        for (ii, r) in ri.clone().enumerate() {
                            let a = tile[(ii, jj)];
                            y[r] += a * vc;
                            acc += a * v[r];
                        }
                        y[c] += acc;
                    }
                }
            }
        }
        y
    }

    /// `x = (L L^T)^{-1} v` through the factor held in the tiles.
    fn solve_factor(&self, v: &[f64]) -> Vec<f64> {
        let nt = self.tiles();
        let mut x = v.to_vec();
        // Forward: L z = v, tile row by tile row.
        for i in 0..nt {
            let ri = self.range(i);
            for j in 0..i {
                let rj = self.range(j);
                let tile = &self.cols[j][i - j];
                for (jj, c) in rj.clone().enumerate() {
                    let xc = x[c];
                    for (ii, r) in ri.clone().enumerate() {
                        x[r] -= tile[(ii, jj)] * xc;
                    }
                }
            }
            let mut seg = Mat::from_fn(ri.len(), 1, |ii, _| x[ri.start + ii]);
            solve_lower_triangular_in_place(self.cols[i][0].as_ref(), seg.as_mut(), Par::Seq);
            for ii in 0..ri.len() {
                x[ri.start + ii] = seg[(ii, 0)];
            }
        }
        // Back: L^T x = z, from the last tile row up.
        for i in (0..nt).rev() {
            let ri = self.range(i);
            for (o, tile) in self.cols[i].iter().enumerate().skip(1) {
                let rk = self.range(i + o);
                // x_i -= L_ki^T x_k.
                for (jj, c) in ri.clone().enumerate() {
                    let mut acc = 0.0;
                    for (kk, r) in rk.clone().enumerate() {
                        acc += tile[(kk, jj)] * x[r];
                    }
                    x[c] -= acc;
                }
            }
            let mut seg = Mat::from_fn(ri.len(), 1, |ii, _| x[ri.start + ii]);
            solve_upper_triangular_in_place(
                self.cols[i][0].as_ref().transpose(),
                seg.as_mut(),
                Par::Seq,
            );
            for ii in 0..ri.len() {
                x[ri.start + ii] = seg[(ii, 0)];
            }
        }
        x
    }

    /// Factors the tiles in place: `K + shift I = L L^T`; the error names the first row whose
    /// pivot is not positive.
    fn factor_in_place(&mut self, shift: f64) -> Result<(), cholesky::Breakdown> {
        let nt = self.tiles();
        // Column k's work is about (nt - k)^2 tile GEMMs: the bar counts that work.
        let work = |k: usize| ((nt - k) * (nt - k)) as u64;
        let bar = self
            .progress
            .long_bar((0..nt).map(work).sum(), "cholesky".into());
        for k in 0..nt {
            bar.inc(work(k));
            let (left, right) = self.cols.split_at_mut(k + 1);
            let col_k = &mut left[k];
            // The diagonal tile: its own Cholesky (lower).
            {
                let d = &mut col_k[0];
                for t in 0..d.nrows() {
                    d[(t, t)] += shift;
                }
                let n = d.nrows();
                let mut mem = faer::dyn_stack::MemBuffer::new(cholesky_in_place_scratch::<f64>(
                    n,
                    Par::Seq,
                    Spec::<LltParams, f64>::default(),
                ));
                let stack = faer::dyn_stack::MemStack::new(&mut mem);
                if let Err(e) = cholesky_in_place(
                    d.as_mut(),
                    Default::default(),
                    Par::Seq,
                    stack,
                    Spec::<LltParams, f64>::default(),
                ) {
                    let faer::linalg::cholesky::llt::factor::LltError::NonPositivePivot { index } =
                        e;
                    bar.finish_and_clear();
                    return Err(cholesky::Breakdown {
                        row: k * self.b + index,
                    });
                }
            }
            // The tiles below it: L_ik = A_ik L_kk^{-T}, i.e. L_kk L_ik^T = A_ik^T.
            let (diag, below) = col_k.split_at_mut(1);
            let lkk = diag[0].as_ref();
            for tile in below.iter_mut() {
                solve_lower_triangular_in_place(lkk, tile.as_mut().transpose_mut(), Par::Seq);
            }
            // The trailing tiles: A_ij -= L_ik L_jk^T for j > k, i >= j.
            let col_k = &left[k];
            for (dj, col_j) in right.iter_mut().enumerate() {
                let ljk = col_k[dj + 1].as_ref();
                for (o, tile) in col_j.iter_mut().enumerate() {
                    let lik = col_k[dj + 1 + o].as_ref();
                    gemm_acc(tile.as_mut(), lik, ljk.transpose(), -1.0, 1.0);
                }
            }
        }
        bar.finish_and_clear();
        self.factored = true;
        Ok(())
    }
}

impl Operand for Tiled<'_> {
    fn size(&self) -> usize {
        self.n
    }

    fn epsilon(&self) -> f64 {
        f64::EPSILON
    }

    fn max_abs(&mut self) -> crate::Result<f64> {
        if self.factored {
            self.refill();
        }
        let mut m = 0.0f64;
        for tile in self.cols.iter().flatten() {
            for j in 0..tile.ncols() {
                for i in 0..tile.nrows() {
                    let a = tile[(i, j)].abs();
                    if !a.is_finite() {
                        return Ok(f64::NAN);
                    }
                    m = m.max(a);
                }
            }
        }
        Ok(m)
    }

    fn largest(
        &mut self,
        max_steps: usize,
        seed: u64,
        tolerance: &dyn Fn(f64) -> f64,
    ) -> crate::Result<lanczos::Ritz> {
        if self.factored {
            self.refill();
        }
        lanczos::host_largest(
            self.n,
            &|v| self.apply(v),
            (max_steps, seed),
            tolerance,
            &self.progress,
        )
    }

    fn factor(&mut self, shift: f64) -> crate::Result<Result<(), cholesky::Breakdown>> {
        if self.factored {
            self.refill();
        }
        let r = self.factor_in_place(shift);
        if r.is_err() {
            // A partial factor is neither the kernel nor a factor.
            self.refill();
        }
        Ok(r)
    }

    fn inverse_largest(
        &mut self,
        max_steps: usize,
        seed: u64,
        tolerance: &dyn Fn(f64) -> f64,
    ) -> crate::Result<lanczos::Ritz> {
        if !self.factored {
            return Err(crate::Error::Lanczos(
                "Lanczos on the inverse before a factorization".into(),
            ));
        }
        lanczos::host_largest(
            self.n,
            &|v| self.solve_factor(v),
            (max_steps, seed),
            tolerance,
            &self.progress,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extreme::{Options, solve};

    /// A symmetric positive definite matrix with known eigenvalues `ev`: `Q diag(ev) Q^T`
    /// for a seeded orthogonal `Q` (row-major).
    fn with_spectrum(ev: &[f64], seed: u64) -> Vec<f64> {
        let n = ev.len();
        let g = ntk_model::init::gaussian(seed, 7, n, n, 1.0);
        let a = Mat::from_fn(n, n, |i, j| g[i * n + j]);
        let q = a.qr().compute_Q();
        let mut k = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                k[i * n + j] = (0..n).map(|t| q[(i, t)] * ev[t] * q[(j, t)]).sum();
            }
        }
        k
    }

    /// The tiled route finds the extreme eigenvalues of a matrix whose spectrum is known, at
    /// tile widths that divide `n` and that do not, to the precision of Lanczos (1e-9).
    #[test]
    fn known_extremes_at_any_tile_width() {
        let n = 150;
        let ev: Vec<f64> = (0..n).map(|i| 1e-3 * 1.05f64.powi(i as i32)).collect();
        let k = with_spectrum(&ev, 3);
        let (lo, hi) = (ev[0], ev[n - 1]);
        for block in [16, 50, 64, 150, 400] {
            let mut t = Tiled::from_dense(&k, n, block);
            let e = solve(&mut t, f64::EPSILON, &Options::default()).unwrap();
            assert!(!e.singular, "block {block}: {e:?}");
            assert!(
                (e.lambda_max / hi - 1.0).abs() < 1e-9,
                "block {block}: {e:?}"
            );
            assert!(
                (e.lambda_min / lo - 1.0).abs() < 1e-9,
                "block {block}: {e:?}"
            );
            assert!((e.kappa / (hi / lo) - 1.0).abs() < 1e-8, "block {block}");
        }
    }

    /// The products and the factor against dense arithmetic: `K v` and `(L L^T)^{-1} K v =
    /// v`, and the tiles take half the dense matrix plus half the diagonal tiles.
    #[test]
    fn products_and_solves_are_the_dense_ones() {
        let n = 97;
        let ev: Vec<f64> = (0..n).map(|i| 0.5 + i as f64).collect();
        let k = with_spectrum(&ev, 5);
        let mut t = Tiled::from_dense(&k, n, 20);
        let v: Vec<f64> = (0..n).map(|i| ((i * 7 % 13) as f64) - 6.0).collect();
        let kv = t.apply(&v);
        for i in 0..n {
            let want: f64 = (0..n).map(|j| k[i * n + j] * v[j]).sum();
            assert!(
                (kv[i] - want).abs() < 1e-10 * want.abs().max(1.0),
                "row {i}"
            );
        }
        t.factor(0.0).unwrap().unwrap();
        let back = t.solve_factor(&kv);
        for i in 0..n {
            assert!(
                (back[i] - v[i]).abs() < 1e-10,
                "row {i}: {} vs {}",
                back[i],
                v[i]
            );
        }
        // Half the dense matrix plus half the diagonal tiles: 8 (n^2 + sum w_t^2) / 2 bytes.
        let diag: usize = (0..n.div_ceil(20))
            .map(|t| (n - 20 * t).min(20).pow(2))
            .sum();
        assert_eq!(t.bytes(), 8 * (n * n + diag) / 2);
        assert_eq!(Tiled::bytes_for(n, 20), t.bytes());
    }

    /// Tiles written and read back are the same store: the kernel (its products), and a
    /// factor (its solves, with `holds_factor` set), byte for byte; a short file is an error.
    #[test]
    fn tiles_written_and_read_back_are_the_same() {
        let n = 61;
        let ev: Vec<f64> = (0..n).map(|i| 1.0 + i as f64).collect();
        let k = with_spectrum(&ev, 9);
        let mut t = Tiled::from_dense(&k, n, 16);
        let mut kernel = Vec::new();
        t.write_tiles(&mut kernel).unwrap();
        assert_eq!(kernel.len(), t.bytes());
        t.factor(0.0).unwrap().unwrap();
        let mut factor = Vec::new();
        t.write_tiles(&mut factor).unwrap();
        let v: Vec<f64> = (0..n).map(|i| (i as f64 * 0.7).cos()).collect();

        let zeros = vec![0.0; n * n];
        let mut back = Tiled::from_dense(&zeros, n, 16);
        back.read_tiles(&mut kernel.as_slice(), false).unwrap();
        assert!(!back.holds_factor());
        assert_eq!(back.apply(&v), Tiled::from_dense(&k, n, 16).apply(&v));
        back.read_tiles(&mut factor.as_slice(), true).unwrap();
        assert!(back.holds_factor());
        assert_eq!(back.solve_factor(&v), t.solve_factor(&v));
        let mut again = Vec::new();
        back.write_tiles(&mut again).unwrap();
        assert_eq!(again, factor);
        assert!(back.read_tiles(&mut &factor[..100], true).is_err());
    }

    /// An MLP's NTK formed tile by tile and solved in its tiles: the extreme eigenvalues of
    /// the host engine's dense kernel (LAPACK or faer, every eigenvalue) to 1e-9.
    #[test]
    fn a_networks_kernel_in_tiles_has_the_dense_extremes() {
        use burn::tensor::{DType, Device};
        use ntk_model::{ActivationKind, Mlp, MlpConfig};
        let (n, d) = (230, 8);
        let x = ntk_model::init::gaussian(1, 99, n, d, 1.0);
        let cfg = MlpConfig::new(d, 64, 4, ActivationKind::Relu).with_seed(2);
        let mlp = Mlp::new(&cfg, &Device::flex(), DType::F64).unwrap();
        let dense = crate::host::ntk::<f64>(&mlp, &x, n, &[0]);
        let full = ntk_numerics::spectrum::spectrum(&dense, f64::EPSILON).unwrap();
        let src = crate::host::tiles::TileSource::new(&mlp, &x, n, &[0]);
        for block in [64, 100] {
            let mut t = Tiled::from_source(&src, block, ntk_system::progress::Reporter::silent());
            let e = solve(&mut t, f64::EPSILON, &Options::default()).unwrap();
            assert!(
                (e.lambda_max / full.lambda_max - 1.0).abs() < 1e-9,
                "{e:?} {full:?}"
            );
            assert!(
                (e.lambda_min / full.lambda_min - 1.0).abs() < 1e-9,
                "{e:?} {full:?}"
            );
            assert!((e.kappa / full.kappa - 1.0).abs() < 1e-9);
            let angle = t.min_angle(&src.diagonal()).unwrap();
            let want = crate::angles::min_angle(&dense).unwrap();
            assert!((angle.deg - want.deg).abs() < 1e-9, "{angle:?} {want:?}");
        }
        // One group of inputs at a time (groups of 64 rows, tiles of 32: three groups, the
        // last short), filled group pair by group pair: the same extremes and angle.
        let mut grouped = crate::host::tiles::GroupedSource::new(&mlp, &x, n, &[0], 64, 32);
        let diag = grouped.diagonal().to_vec();
        let mut t = Tiled::from_grouped(&mut grouped, 32, ntk_system::progress::Reporter::silent());
        let e = solve(&mut t, f64::EPSILON, &Options::default()).unwrap();
        assert!((e.lambda_max / full.lambda_max - 1.0).abs() < 1e-9, "{e:?}");
        assert!((e.lambda_min / full.lambda_min - 1.0).abs() < 1e-9, "{e:?}");
        let angle = t.min_angle(&diag).unwrap();
        let want = crate::angles::min_angle(&dense).unwrap();
        assert!((angle.deg - want.deg).abs() < 1e-9, "{angle:?} {want:?}");
    }

    /// A singular kernel (rank 40 of 120): the factorization breaks down, the tiles are
    /// filled anew for the shifted one, and the kernel is reported singular with a rank
    /// bound at most its rank; the same as the dense device route says.
    #[test]
    fn a_singular_kernel_is_reported_singular() {
        let n = 120;
        let ev: Vec<f64> = (0..n)
            .map(|i| if i < 80 { 0.0 } else { 1.0 + i as f64 })
            .collect();
        let k = with_spectrum(&ev, 9);
        let mut t = Tiled::from_dense(&k, n, 32);
        let e = solve(&mut t, f64::EPSILON, &Options::default()).unwrap();
        assert!(e.singular, "{e:?}");
        assert!(e.rank_lower_bound <= 40, "{e:?}");
        assert!((e.lambda_max / ev[n - 1] - 1.0).abs() < 1e-9, "{e:?}");
    }
}
