//! The structured NTK on the CPU with host GEMMs ([`ntk_core::linalg`]: the system OpenBLAS by
//! default, faer without the `openblas` feature): the same algebra as
//! [`crate::structured`] (see its doc for the formula), with the Gram products computed into
//! the lower triangle only (SYRK, half the FLOPs) and the Hadamard accumulation done in
//! place on that triangle.
//!
//! Why a second engine: on this class of machine (2 cores, AVX-512) OpenBLAS's SGEMM runs at
//! ~190 GFLOP/s and faer's at ~100 where the Burn CPU backends' matmul runs at ~30 (see
//! `experiments/bench/README.md`), and the NTK is nothing but GEMMs. GPU backends keep the
//! device path. Both are tested against the autodiff reference.

use faer::Mat;
use ntk_model::{Activation, Mlp};

use ntk_core::kernel::Kernel;

mod linear;
pub use ntk_core::linalg::Real;
use ntk_core::linalg::{gemm, gram_lower_into};

/// A row-major `rows x cols` f64 buffer as a faer matrix in `T`.
fn mat<T: Real>(v: &[f64], rows: usize, cols: usize) -> Mat<T> {
    Mat::from_fn(rows, cols, |i, j| T::of(v[i * cols + j]))
}

/// `a = s(z) gamma` and `s = s'(z) gamma`, elementwise, column by column, into buffers of
/// `z`'s shape.
pub fn activate_into<T: Real>(
    z: &Mat<T>,
    act: &Activation,
    gamma: f64,
    a: &mut Mat<T>,
    s: &mut Mat<T>,
) {
    let g = T::of(gamma);
    for j in 0..z.ncols() {
        let zc = z.col_as_slice(j);
        let (ac, sc) = (a.col_as_slice_mut(j), s.col_as_slice_mut(j));
        let cols = zc.iter().zip(ac.iter_mut()).zip(sc.iter_mut());
        match act {
            Activation::Relu => {
                for ((z, a), s) in cols {
                    let on = *z > T::of(0.0);
                    *a = if on { *z * g } else { T::of(0.0) };
                    *s = if on { g } else { T::of(0.0) };
                }
            }
            Activation::Linear => {
                for ((z, a), s) in cols {
                    *a = *z * g;
                    *s = g;
                }
            }
            other => {
                for ((z, a), s) in cols {
                    let v = z.f64();
                    *a = T::of(other.eval(v) * gamma);
                    *s = T::of(other.derivative(v) * gamma);
                }
            }
        }
    }
}

/// The per-layer factors on the host: layer inputs `a_0..a_L` and, for the selected outputs
/// side by side, the backpropagated signals `D_1..D_L`.
pub struct HostFactors<T: Real> {
    pub inputs: Vec<Mat<T>>,
    pub deltas: Vec<Mat<T>>,
}

/// A network's parameters as read from the device, row-major f64.
struct Params {
    weights: Vec<Vec<f64>>,
    biases: Vec<Option<Vec<f64>>>,
}

impl Params {
    fn read(mlp: &Mlp) -> Self {
        let weights = mlp
            .layers
            .iter()
            .map(|l| l.weight.val().try_into_vec_as().expect("reading weights"))
            .collect();
        let biases = mlp
            .layers
            .iter()
            .map(|l| {
                l.bias
                    .as_ref()
                    .map(|b| b.val().try_into_vec_as().expect("reading biases"))
            })
            .collect();
        Self { weights, biases }
    }
}

/// Matrices of finished computations kept for the next one of the same shape: a sweep's
/// kernels need the same `n x m` and `n x n` buffers again and again, and a fresh one costs
/// page faults and zeroing (~15 ms per `2000 x 2000` f64 matrix here) where reuse costs
/// nothing. Every buffer taken is overwritten before it is read.
struct Pool<T: Real> {
    free: Vec<Mat<T>>,
}

impl<T: Real> Default for Pool<T> {
    fn default() -> Self {
        Self { free: Vec::new() }
    }
}

impl<T: Real> Pool<T> {
    /// A `rows x cols` matrix with unspecified contents.
    fn take(&mut self, rows: usize, cols: usize) -> Mat<T> {
        match self
            .free
            .iter()
            .position(|m| m.nrows() == rows && m.ncols() == cols)
        {
            Some(i) => self.free.swap_remove(i),
            None => Mat::zeros(rows, cols),
        }
    }

    fn give(&mut self, m: Mat<T>) {
        self.free.push(m);
    }
}

/// The forward half of the structured NTK: the hidden layers' inputs `a_0..a_k`, slopes
/// `gamma phi'(z)`, transposed weights, and (on demand) the lower-triangular Grams
/// `G_l = a_l a_l^T`.
///
/// It depends on the hidden layers only, so a depth sweep reuses it: with one seed, layer
/// `l`'s weights are drawn from stream `l` of that seed (`ntk_model::init`), so the depth-L
/// network's hidden layers are the first L of a deeper one's, and only the output layer
/// differs. [`Forward::covers`] checks that exactly (inputs, activation, scales and every
/// hidden weight and bias) before anything is reused; the kernel is then the same to the
/// last bit as a fresh computation (tested).
pub struct Forward<T: Real> {
    x: Vec<f64>,
    act: Activation,
    beta: Vec<f64>,
    gamma: Vec<f64>,
    hidden: Params,
    inputs: Vec<Mat<T>>,
    slopes: Vec<Mat<T>>,
    weights_t: Vec<Mat<T>>,
    grams: Vec<Option<Mat<T>>>,
    keep_grams: bool,
    /// Buffers between kernels: the signals, the kernel's `n x n` work matrices, and those
    /// of a replaced forward.
    pool: Pool<T>,
}

/// Grams are kept for reuse while they fit in this many bytes (n = 2000, depth 10 in f64:
/// 350 MB; n = 10,000: 8.8 GB, recomputed instead).
const GRAM_CACHE_BYTES: usize = 2 << 30;

impl<T: Real> Forward<T> {
    /// The forward of `mlp`'s hidden layers on the `n` rows of `x`, with the buffers of
    /// `old` (a replaced forward) where the shapes agree.
    fn new(mlp: &Mlp, params: &Params, x: &[f64], n: usize, old: Option<Self>) -> Self {
        let mut pool = old.map(Self::into_pool).unwrap_or_default();
        pool.free.retain(|m| m.nrows() == n);
        let cfg = mlp.config();
        let depth = cfg.depth;
        let scales = mlp.scales();
        let sizes = cfg.layer_sizes();
        let weights: Vec<Mat<T>> = (0..depth)
            .map(|l| mat(&params.weights[l], sizes[l], sizes[l + 1]))
            .collect();
        let mut inputs = vec![mat::<T>(x, n, sizes[0])];
        let mut slopes = Vec::with_capacity(depth);
        for l in 0..depth {
            let mut z = pool.take(n, sizes[l + 1]);
            gemm(
                z.as_mut(),
                inputs[l].as_ref(),
                weights[l].as_ref(),
                T::of(scales.beta[l]),
            );
            if let Some(b) = &params.biases[l] {
                for (j, bj) in b.iter().enumerate() {
                    z.col_as_slice_mut(j)
                        .iter_mut()
                        .for_each(|v| *v += T::of(*bj));
                }
            }
            let (mut a, mut s) = (pool.take(n, sizes[l + 1]), pool.take(n, sizes[l + 1]));
            activate_into(&z, mlp.activation(), scales.gamma[l], &mut a, &mut s);
            pool.give(z);
            inputs.push(a);
            slopes.push(s);
        }
        // W_l^T stored contiguously: faer's GEMM is ~30% slower with a transposed operand.
        let weights_t = weights.iter().map(|w| w.transpose().to_owned()).collect();
        let bytes = (depth + 1) * n * n * std::mem::size_of::<T>();
        Self {
            x: x.to_vec(),
            act: *mlp.activation(),
            beta: scales.beta.clone(),
            gamma: scales.gamma.clone(),
            hidden: Params {
                weights: params.weights[..depth].to_vec(),
                biases: params.biases[..depth].to_vec(),
            },
            inputs,
            slopes,
            weights_t,
            grams: (0..=depth).map(|_| None).collect(),
            keep_grams: bytes <= GRAM_CACHE_BYTES,
            pool,
        }
    }

    /// Every `n`-row buffer this forward holds, for the next one.
    fn into_pool(self) -> Pool<T> {
        let mut pool = self.pool;
        let grams = self.grams.into_iter().flatten();
        // The input x (a_0) is n x d: kept too, the next forward may have the same d.
        for m in self.inputs.into_iter().chain(self.slopes).chain(grams) {
            pool.give(m);
        }
        pool
    }

    /// The number of hidden layers this forward holds.
    pub fn depth(&self) -> usize {
        self.slopes.len()
    }

    /// Whether this forward is `mlp`'s on `x`: the same inputs, activation, scales, and
    /// hidden layers equal to this one's first `mlp.depth()`.
    fn covers(&self, mlp: &Mlp, params: &Params, x: &[f64]) -> bool {
        let depth = mlp.depth();
        let scales = mlp.scales();
        depth < self.inputs.len()
            && self.x == x
            && self.act == *mlp.activation()
            && self.beta[..depth] == scales.beta[..depth]
            && self.gamma[..depth] == scales.gamma[..depth]
            && self.hidden.weights[..depth] == params.weights[..depth]
            && self.hidden.biases[..depth] == params.biases[..depth]
    }

    /// `G_l`, lower triangle: the kept one, or computed (and kept when it fits the budget,
    /// else into `scratch`).
    fn gram<'a>(&'a mut self, l: usize, scratch: &'a mut Mat<T>) -> &'a Mat<T> {
        if self.grams[l].is_none() && self.keep_grams {
            let n = self.inputs[l].nrows();
            let mut g = self.pool.take(n, n);
            gram_lower_into(&mut g, self.inputs[l].as_ref(), T::of(1.0));
            self.grams[l] = Some(g);
        }
        match &self.grams[l] {
            Some(g) => g,
            None => {
                gram_lower_into(scratch, self.inputs[l].as_ref(), T::of(1.0));
                scratch
            }
        }
    }

    /// The backpropagated signals `D_1..D_L` of the depth-L network whose output layer is
    /// `w_out` (`[width, outputs]`, row-major), for the selected outputs side by side, in
    /// buffers from `pool`.
    fn deltas(
        &self,
        depth: usize,
        w_out: &[f64],
        k: usize,
        beta_out: f64,
        outputs: &[usize],
        pool: &mut Pool<T>,
    ) -> Vec<Mat<T>> {
        let n = self.inputs[0].nrows();
        let mut per_output: Vec<Vec<Mat<T>>> = Vec::with_capacity(outputs.len());
        for &o in outputs {
            let mut ds: Vec<Mat<T>> = Vec::with_capacity(depth);
            if depth > 0 {
                let m = self.slopes[depth - 1].ncols();
                // D_L = s'(Z_L) gamma_L .* (beta_out W_out[:, o])^T.
                let mut d = pool.take(n, m);
                for j in 0..m {
                    let w = T::of(beta_out * w_out[j * k + o]);
                    let (dc, sc) = (
                        d.col_as_slice_mut(j),
                        self.slopes[depth - 1].col_as_slice(j),
                    );
                    dc.iter_mut().zip(sc).for_each(|(d, s)| *d = *s * w);
                }
                for l in (0..depth - 1).rev() {
                    // D_l = beta_{l+1} (D_{l+1} W_{l+1}^T) .* s'(Z_l) gamma_l.
                    let mut back = pool.take(n, self.slopes[l].ncols());
                    gemm(
                        back.as_mut(),
                        d.as_ref(),
                        self.weights_t[l + 1].as_ref(),
                        T::of(self.beta[l + 1]),
                    );
                    for j in 0..back.ncols() {
                        let (bc, sc) = (back.col_as_slice_mut(j), self.slopes[l].col_as_slice(j));
                        bc.iter_mut().zip(sc).for_each(|(b, s)| *b *= *s);
                    }
                    ds.push(std::mem::replace(&mut d, back));
                }
                ds.push(d);
                ds.reverse();
            }
            per_output.push(ds);
        }
        // Several outputs: their signals side by side, so one Gram sums over them.
        if per_output.len() == 1 {
            return per_output.pop().expect("one output");
        }
        let cats = (0..depth)
            .map(|l| {
                let m = per_output[0][l].ncols();
                let mut cat = pool.take(n, m * per_output.len());
                for (slot, ds) in per_output.iter().enumerate() {
                    for j in 0..m {
                        cat.col_as_slice_mut(slot * m + j)
                            .copy_from_slice(ds[l].col_as_slice(j));
                    }
                }
                cat
            })
            .collect();
        per_output.into_iter().flatten().for_each(|d| pool.give(d));
        cats
    }
}

/// The reusable forwards of a sweep, one per precision (see [`Forward`], [`ntk_with`]).
#[derive(Default)]
pub struct HostCache {
    pub f32: Option<Forward<f32>>,
    pub f64: Option<Forward<f64>>,
}

/// One forward and the hand-written backward (see [`crate::structured`]).
pub fn factors<T: Real>(mlp: &Mlp, x: &[f64], n: usize, outputs: &[usize]) -> HostFactors<T> {
    let params = Params::read(mlp);
    let depth = mlp.depth();
    let fwd = Forward::<T>::new(mlp, &params, x, n, None);
    let k = mlp.config().output_dim;
    let deltas = fwd.deltas(
        depth,
        &params.weights[depth],
        k,
        mlp.scales().beta_out,
        outputs,
        &mut Pool::default(),
    );
    HostFactors {
        inputs: fwd.inputs,
        deltas,
    }
}

/// The structured NTK, summed over `outputs` (one output: that output's kernel), in `T`.
pub fn ntk<T: Real>(mlp: &Mlp, x: &[f64], n: usize, outputs: &[usize]) -> Kernel {
    ntk_with::<T>(mlp, x, n, outputs, &mut None)
}

/// [`ntk`] reusing `cache` when it holds this network's forward (see [`Forward`]); otherwise
/// the cache is replaced by this network's. Run a depth sweep deepest first. Linear networks
/// take their closed form through the inputs ([`linear`]) and leave the cache alone.
pub fn ntk_with<T: Real>(
    mlp: &Mlp,
    x: &[f64],
    n: usize,
    outputs: &[usize],
    cache: &mut Option<Forward<T>>,
) -> Kernel {
    let params = Params::read(mlp);
    if linear::applies(mlp) {
        return linear::ntk::<T>(mlp, &params, x, n, outputs);
    }
    layered(mlp, &params, x, n, outputs, cache)
}

/// The general structured kernel, layer by layer, from the (cached) forward.
fn layered<T: Real>(
    mlp: &Mlp,
    params: &Params,
    x: &[f64],
    n: usize,
    outputs: &[usize],
    cache: &mut Option<Forward<T>>,
) -> Kernel {
    if !cache.as_ref().is_some_and(|f| f.covers(mlp, params, x)) {
        let old = cache.take();
        *cache = Some(Forward::new(mlp, params, x, n, old));
    }
    let fwd = cache.as_mut().expect("set above");
    let scales = mlp.scales();
    let depth = mlp.depth();
    let bias = if mlp.config().bias { 1.0 } else { 0.0 };
    let copies = outputs.len() as f64;
    let k_out = mlp.config().output_dim;
    let mut pool = std::mem::take(&mut fwd.pool);
    let deltas = fwd.deltas(
        depth,
        &params.weights[depth],
        k_out,
        scales.beta_out,
        outputs,
        &mut pool,
    );
    fwd.pool = pool;

    // K = copies (beta_out^2 G_L + b) + sum_l (beta_l^2 G_{l-1} + b) .* H_l, lower triangle.
    // Work buffers from the pool, the previous network's (every entry read below is
    // written first).
    let [mut k, mut g, mut h] = std::array::from_fn(|_| fwd.pool.take(n, n));
    k.as_mut().copy_from(fwd.gram(depth, &mut g).as_ref());
    let (scale, shift) = (
        T::of(copies * scales.beta_out * scales.beta_out),
        T::of(copies * bias),
    );
    for j in 0..n {
        k.col_as_slice_mut(j)[j..]
            .iter_mut()
            .for_each(|v| *v = *v * scale + shift);
    }
    // Two n x n buffers for all layers: fresh ones per layer would cost page faults and
    // zeroing of 2L n^2 values.
    for (l, d) in deltas.iter().enumerate() {
        let g = fwd.gram(l, &mut g);
        gram_lower_into(&mut h, d.as_ref(), T::of(1.0));
        let (b2, b) = (T::of(scales.beta[l] * scales.beta[l]), T::of(bias));
        for j in 0..n {
            let (gc, hc) = (&g.col_as_slice(j)[j..], &h.col_as_slice(j)[j..]);
            let kc = &mut k.col_as_slice_mut(j)[j..];
            for i in 0..kc.len() {
                kc[i] += (gc[i] * b2 + b) * hc[i];
            }
        }
    }
    let cols: Vec<&[T]> = (0..n).map(|j| k.col_as_slice(j)).collect();
    let out = symmetric_kernel(n, |j, rows, col| col.copy_from_slice(&cols[j][rows]));
    deltas
        .into_iter()
        .chain([k, g, h])
        .for_each(|m| fwd.pool.give(m));
    out
}

/// The symmetric `n x n` kernel from its lower triangle: `fill(j, rows, col)` writes
/// `K_ij` for `i` in `rows` (all `>= j`) into `col`. Filled in 64 x 64 tiles, so that the
/// row-major writes of the transposed half reuse their cache lines (a plain column loop
/// stalls on every one of those writes: ~10x slower at n = 2000).
fn symmetric_kernel<T: Real>(
    n: usize,
    mut fill: impl FnMut(usize, std::ops::Range<usize>, &mut [T]),
) -> Kernel {
    const TILE: usize = 64;
    let mut out = Kernel::zeros(n);
    let mut col = [T::of(0.0); TILE];
    for jb in (0..n).step_by(TILE) {
        for ib in (jb..n).step_by(TILE) {
            for j in jb..(jb + TILE).min(n) {
                let rows = ib.max(j)..(ib + TILE).min(n);
                let col = &mut col[..rows.len()];
                fill(j, rows.clone(), col);
                for (i, v) in rows.zip(col.iter()) {
                    let v = v.f64();
                    out.data[i * n + j] = v;
                    out.data[j * n + i] = v;
                }
            }
        }
    }
    out
}
