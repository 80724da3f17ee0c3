//! The structured NTK on the CPU with host GEMMs ([`ntk_numerics::linalg`]: the system OpenBLAS by
//! default, faer without the `openblas` feature): the same algebra as
//! [`crate::structured`] (see its doc for the formula), on the host MLP engine
//! [`ntk_engine::host::mlp`] (the forward to each layer's input and slope, the backward of the
//! cotangents `e_o`), with the Gram products computed into the lower triangle only (SYRK,
//! half the FLOPs) and the Hadamard accumulation done in place on that triangle.
//!
//! Why a second engine: on this class of machine (2 cores, AVX-512) OpenBLAS's SGEMM runs at
//! ~190 GFLOP/s and faer's at ~100 where the Burn CPU backends' matmul runs at ~30 (see
//! `experiments/bench/README.md`), and the NTK is nothing but GEMMs. GPU backends keep the
//! device path. Both are tested against the autodiff reference.

use std::sync::Arc;

use faer::Mat;
use ntk_engine::host::mlp::{Cotangent, Layer, Params, Pool, Trace, backprop, from_rows};
use ntk_model::Mlp;
use ntk_numerics::kernel::Kernel;
use ntk_numerics::linalg::gram_lower_into;

pub mod diagonal;
mod linear;
pub mod resnet;
pub mod tiles;
pub use ntk_numerics::linalg::Real;

/// The per-layer factors on the host: layer inputs `a_0..a_L` and, for the selected outputs
/// side by side, the backpropagated signals `D_1..D_L`.
pub struct HostFactors<T: Real> {
    pub inputs: Vec<Mat<T>>,
    pub deltas: Vec<Mat<T>>,
}

/// The forward half of the structured NTK ([`ntk_engine::host::mlp`]): the hidden layers' inputs
/// `a_0..a_k` and slopes `gamma phi'(z)`, the parameters with their transposes stored, and
/// (on demand) the lower-triangular Grams `G_l = a_l a_l^T`.
///
/// It depends on the hidden layers only, so a depth sweep reuses it: with one seed, layer
/// `l`'s weights are drawn from stream `l` of that seed (`ntk_model::init`), so the depth-L
/// network's hidden layers are the first L of a deeper one's, and only the output layer
/// differs. [`Forward::covers`] checks that exactly (inputs, activation, scales and every
/// hidden weight and bias) before anything is reused; the kernel is then the same to the
/// last bit as a fresh computation (tested).
pub struct Forward<T: Real> {
    x: Vec<f64>,
    /// The network's parameters, their transposes stored, shared with the caller: a copy
    /// here held a wide first layer twice (hundred-and-thirty-second hostile round, D2).
    params: Arc<Params<T>>,
    /// `a_0 = x`, `[n, d]`.
    input: Mat<T>,
    trace: Trace<T>,
    grams: Vec<Option<Mat<T>>>,
    keep_grams: bool,
    /// Buffers between kernels: the signals, the kernel's `n x n` work matrices, and those
    /// of a replaced forward.
    pool: Pool<T>,
}

/// Grams are kept for reuse while they fit in this many bytes (n = 2000, depth 10 in f64:
/// 350 MB; n = 10,000: 8.8 GB, recomputed instead).
pub const GRAM_CACHE_BYTES: usize = 2 << 30;

impl<T: Real> Forward<T> {
    /// The forward of the hidden layers of `params` on the `n` rows of `x`, with the buffers
    /// of `old` (a replaced forward) where the shapes agree.
    /// `params` are copied only where their transposes are not stored yet ([`shared`] stores
    /// them).
    fn new(
        mut params: Arc<Params<T>>,
        x: &[f64],
        n: usize,
        old: Option<Self>,
        reuse: Reuse,
    ) -> Self {
        let mut pool = old.map(Self::into_pool).unwrap_or_default();
        pool.retain_rows(n);
        if !params.transposes_stored() {
            Arc::make_mut(&mut params).store_transposes();
        }
        let depth = params.depth();
        let input = from_rows::<T>(x, n, params.layer(0).fan_in());
        let mut trace = Trace::new(&params, n, &mut pool);
        params.forward(input.as_ref(), &mut trace);
        let bytes = (depth + 1) * n * n * std::mem::size_of::<T>();
        Self {
            x: x.to_vec(),
            params,
            input,
            trace,
            grams: (0..=depth).map(|_| None).collect(),
            keep_grams: reuse == Reuse::DepthSweep && bytes <= GRAM_CACHE_BYTES,
            pool,
        }
    }

    /// Every `n`-row buffer this forward holds, for the next one.
    fn into_pool(self) -> Pool<T> {
        let mut pool = self.pool;
        let grams = self.grams.into_iter().flatten();
        // The input x (a_0) is n x d: kept too, the next forward may have the same d.
        let buffers = std::iter::once(self.input)
            .chain(self.trace.acts)
            .chain(self.trace.slopes);
        for m in buffers.chain(grams) {
            pool.give(m);
        }
        pool
    }

    /// The number of hidden layers this forward holds.
    pub fn depth(&self) -> usize {
        self.trace.depth()
    }

    /// Whether this forward is that of the network of `params` on `x`: the same inputs,
    /// activation, scales, and hidden layers equal to this one's first `params.depth()`.
    fn covers(&self, params: &Params<T>, x: &[f64]) -> bool {
        let depth = params.depth();
        depth <= self.depth()
            && self.x == x
            && self.params.activation() == params.activation()
            && self.params.gamma()[..depth] == params.gamma()[..depth]
            && (self.params.hidden().iter())
                .zip(params.hidden())
                .all(|(a, b)| a.same(b))
    }

    /// `a_l`, the input of layer `l + 1`.
    fn input(&self, l: usize) -> &Mat<T> {
        if l == 0 {
            &self.input
        } else {
            &self.trace.acts[l - 1]
        }
    }

    /// `G_l`, lower triangle: the kept one, or computed (and kept when it fits the budget,
    /// else into `scratch`).
    fn gram<'a>(&'a mut self, l: usize, scratch: &'a mut Mat<T>) -> &'a Mat<T> {
        if self.grams[l].is_none() && self.keep_grams {
            let n = self.input.nrows();
            let mut g = self.pool.take(n, n);
            gram_lower_into(&mut g, self.input(l).as_ref(), T::of(1.0));
            self.grams[l] = Some(g);
        }
        match &self.grams[l] {
            Some(g) => g,
            None => {
                gram_lower_into(scratch, self.input(l).as_ref(), T::of(1.0));
                scratch
            }
        }
    }

    /// The backpropagated signals `D_1..D_L` of the depth-L network (`L <= self.depth()`)
    /// whose output layer is `output`, for the selected outputs side by side (the cotangent
    /// `e_o` for each), in buffers from `pool`.
    fn deltas(
        &self,
        depth: usize,
        output: &Layer<T>,
        outputs: &[usize],
        pool: &mut Pool<T>,
    ) -> Vec<Mat<T>> {
        let n = self.input.nrows();
        let hidden = &self.params.hidden()[..depth];
        let mut per_output: Vec<Vec<Mat<T>>> = Vec::with_capacity(outputs.len());
        for &o in outputs {
            let mut ds: Vec<Mat<T>> = hidden.iter().map(|l| pool.take(n, l.fan_out())).collect();
            let x = self.input.as_ref();
            backprop(
                hidden,
                output,
                x,
                &self.trace,
                Cotangent::Unit(o),
                &mut ds,
                None,
            );
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

/// The reusable forwards of a sweep, one per precision (see [`Forward`], [`ntk_with`]), and
/// what they keep for the kernels after the first ([`Reuse`]).
#[derive(Default)]
pub struct HostCache {
    pub f32: Option<Forward<f32>>,
    pub f64: Option<Forward<f64>>,
    pub reuse: Reuse,
}

impl HostCache {
    /// The cache of a depth sweep: the forward's Grams kept for the shallower networks.
    pub fn for_depth_sweep() -> Self {
        Self {
            reuse: Reuse::DepthSweep,
            ..Self::default()
        }
    }
}

/// What a [`Forward`] keeps beyond the kernel it is formed for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reuse {
    /// One kernel (a single run, a tracked measurement): each Gram `G_l` is formed once into
    /// a work buffer. Keeping them cost one `n x n` buffer per layer for nothing (352 MB of
    /// first-touch page faults at n = 2000, depth 10 in f64: ~0.1 s of a 1.6 s run).
    #[default]
    OneKernel,
    /// A depth sweep, deepest first: the Grams `G_l` are kept (within [`GRAM_CACHE_BYTES`])
    /// for the shallower networks, which share the hidden layers.
    DepthSweep,
}

/// One forward and the hand-written backward (see [`crate::structured`]).
pub fn factors<T: Real>(mlp: &Mlp, x: &[f64], n: usize, outputs: &[usize]) -> HostFactors<T> {
    let params = shared::<T>(mlp);
    let fwd = Forward::new(params.clone(), x, n, None, Reuse::OneKernel);
    let deltas = fwd.deltas(
        params.depth(),
        params.output(),
        outputs,
        &mut Pool::default(),
    );
    HostFactors {
        inputs: std::iter::once(fwd.input).chain(fwd.trace.acts).collect(),
        deltas,
    }
}

/// The structured NTK, summed over `outputs` (one output: that output's kernel), in `T`.
pub fn ntk<T: Real>(mlp: &Mlp, x: &[f64], n: usize, outputs: &[usize]) -> Kernel {
    ntk_with::<T>(mlp, x, n, outputs, &mut None, Reuse::OneKernel)
}

/// [`ntk`] reusing `cache` when it holds this network's forward (see [`Forward`]); otherwise
/// the cache is replaced by this network's, keeping what `reuse` says. Run a depth sweep
/// deepest first. Linear networks take their closed form through the inputs ([`linear`]) and
/// leave the cache alone.
pub fn ntk_with<T: Real>(
    mlp: &Mlp,
    x: &[f64],
    n: usize,
    outputs: &[usize],
    cache: &mut Option<Forward<T>>,
    reuse: Reuse,
) -> Kernel {
    if linear::applies(mlp) {
        return linear::ntk::<T>(mlp, &Params::read(mlp), x, n, outputs);
    }
    layered(mlp, &shared(mlp), x, n, outputs, (cache, reuse))
}

/// The parameters of `mlp` in `T` with the transposes the backward uses stored, to share
/// between the caller and the [`Forward`]s it forms: one copy of the network on the host
/// beside the model's own.
pub(crate) fn shared<T: Real>(mlp: &Mlp) -> Arc<Params<T>> {
    let mut params = Params::<T>::read(mlp);
    params.store_transposes();
    Arc::new(params)
}

/// The general structured kernel, layer by layer, from the (cached) forward.
fn layered<T: Real>(
    mlp: &Mlp,
    params: &Arc<Params<T>>,
    x: &[f64],
    n: usize,
    outputs: &[usize],
    (cache, reuse): (&mut Option<Forward<T>>, Reuse),
) -> Kernel {
    if !cache.as_ref().is_some_and(|f| f.covers(params, x)) {
        let old = cache.take();
        *cache = Some(Forward::new(Arc::clone(params), x, n, old, reuse));
    }
    let fwd = cache.as_mut().expect("set above");
    let depth = params.depth();
    let bias = if mlp.config().bias { 1.0 } else { 0.0 };
    let copies = outputs.len() as f64;
    let mut pool = std::mem::take(&mut fwd.pool);
    let deltas = fwd.deltas(depth, params.output(), outputs, &mut pool);
    fwd.pool = pool;

    // K = copies (beta_out^2 G_L + b) + sum_l (beta_l^2 G_{l-1} + b) .* H_l, lower triangle.
    // Work buffers from the pool, the previous network's (every entry read below is
    // written first).
    let beta_out = params.output().beta();
    let [mut k, mut g, mut h] = std::array::from_fn(|_| fwd.pool.take(n, n));
    k.as_mut().copy_from(fwd.gram(depth, &mut g).as_ref());
    let (scale, shift) = (T::of(copies * beta_out * beta_out), T::of(copies * bias));
    for j in 0..n {
        k.col_as_slice_mut(j)[j..]
            .iter_mut()
            .for_each(|v| *v = *v * scale + shift);
    }
    // Two n x n buffers for all layers: fresh ones per layer would cost page faults and
    // zeroing of 2L n^2 values.
    for (l, d) in deltas.iter().enumerate() {
        let beta = params.hidden()[l].beta();
        // A factor far from unit scale: its Gram at a power of two, so that a term in range
        // is not lost to a factor's under- or overflow (hundred-and-twentieth hostile round,
        // D4: |delta|^2 = 1.25e-326 beside |x|^2 = 3e306 dropped a term of 7e-20).
        // Each row at its own power of two: one exponent for all rows took the small ones
        // out of range (hundred-and-twenty-first hostile round, D1).
        let (ea, ed) = (far_exponents(fwd.input(l)), far_exponents(d));
        if ea.iter().chain(&ed).any(|e| *e != 0) {
            let mut scaled = fwd.pool.take(n, fwd.input(l).ncols());
            scaled_into(&mut scaled, fwd.input(l), &ea);
            gram_lower_into(&mut g, scaled.as_ref(), T::of(1.0));
            fwd.pool.give(scaled);
            let mut scaled = fwd.pool.take(n, d.ncols());
            scaled_into(&mut scaled, d, &ed);
            gram_lower_into(&mut h, scaled.as_ref(), T::of(1.0));
            fwd.pool.give(scaled);
            for j in 0..n {
                let (gc, hc) = (&g.col_as_slice(j)[j..], &h.col_as_slice(j)[j..]);
                let kc = &mut k.col_as_slice_mut(j)[j..];
                for (r, kv) in kc.iter_mut().enumerate() {
                    let i = j + r;
                    let (gv, hv) = (gc[r].f64(), hc[r].f64());
                    let (sa, sd) = (ea[i] + ea[j], ed[i] + ed[j]);
                    let weights = libm::scalbn(gv * hv * beta * beta, sa + sd);
                    let biases = libm::scalbn(bias * hv, sd);
                    *kv = T::of(kv.f64() + weights + biases);
                }
            }
            continue;
        }
        let g = fwd.gram(l, &mut g);
        gram_lower_into(&mut h, d.as_ref(), T::of(1.0));
        let (b2, b) = (T::of(beta * beta), T::of(bias));
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

/// For each row of `m`, the binary exponent of its largest magnitude where it is far from
/// unit scale (past `2^±240` in f64, `2^±30` in f32: its Gram entries could leave the
/// precision's normal range), for a Gram formed with each row at its own power of two; 0
/// otherwise, and for a zero or non-finite row.
pub(crate) fn far_exponents<T: Real>(m: &Mat<T>) -> Vec<i32> {
    let f32 = std::mem::size_of::<T>() == 4;
    (0..m.nrows())
        .map(|i| {
            let largest = (0..m.ncols()).fold(0.0f64, |t, j| t.max(m[(i, j)].f64().abs()));
            far_exponent(largest, f32)
        })
        .collect()
}

/// The binary exponent of a row's largest magnitude `largest` where it is far from unit
/// scale (past `2^±240` in f64, `2^±30` in f32 where `f32`); 0 otherwise, and for 0 or a
/// non-finite value: the one rule of every route that forms a factor's Gram with its rows at
/// powers of two ([`far_exponents`], the device route's `structured`, the range check's
/// diagonal).
pub(crate) fn far_exponent(largest: f64, f32: bool) -> i32 {
    let limit = if f32 { 30 } else { 240 };
    if largest == 0.0 || !largest.is_finite() {
        return 0;
    }
    let e = libm::ilogb(largest);
    if e.abs() > limit { e } else { 0 }
}

/// `m` with each row `i` times `2^-e_i`, into `out` (of `m`'s shape), exactly (powers of two
/// round only below the normal range, where the Gram's entries are lost anyway).
fn scaled_into<T: Real>(out: &mut Mat<T>, m: &Mat<T>, e: &[i32]) {
    for j in 0..m.ncols() {
        let (o, v) = (out.col_as_slice_mut(j), m.col_as_slice(j));
        for ((o, v), e) in o.iter_mut().zip(v).zip(e) {
            *o = T::of(libm::scalbn(v.f64(), -e));
        }
    }
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
