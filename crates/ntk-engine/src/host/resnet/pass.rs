//! The training-mode forward of a [`HostResNet`] (its trace kept for the backward) and the
//! backward from the logits' cotangent to the gradient of every parameter (the chain rule
//! of each layer is in its doc: [`super::conv`], [`super::norm`], [`super::map`]).
//!
//! Per block the trace keeps what the backward reads:
//! - batch_norm: `a = zhat1`, `b = h = relu(gamma1 zhat1 + beta1)`, `c = zhat2`, `y`;
//! - norm_relu and selu: `a = z1`, `b = h = s(z1)`, `c = m = merge(S x, z2)`, `y = s(m)`;
//! - fixup: `a = xa = x + b1a` (downsampling blocks only, whose shortcut reads it),
//!   `b = a1 = relu(conv1 xa + b1b)`, `c = z2 = conv2 xb`, `y`; `xa` elsewhere and
//!   `xb = a1 + b2a` are not stored: the convolutions add the scalar as they read their
//!   input ([`super::conv::Conv::forward_shifted`]).

use std::f64::consts::FRAC_1_SQRT_2;

use faer::{MatMut, MatRef};
use ntk_numerics::linalg::{Real, gemm_acc};

use super::map::{self, Dims, par_zip, total_sum};
use super::norm::{self, Stats};
use super::wide::par_pixels;
use super::{BlockKind, HostResNet, StemKind, update_running, wide};
use ntk_model::activation::{Activation, Normalized, SELU_ALPHA, SELU_LAMBDA};

/// One block's trace (see the module docs for what each buffer holds per variant).
#[derive(Clone)]
struct BlockTrace<T> {
    a: Vec<T>,
    b: Vec<T>,
    c: Vec<T>,
    y: Vec<T>,
    s1: Stats,
    s2: Stats,
}

/// The buffers of a forward and backward for one batch size, reused across steps.
#[derive(Clone)]
pub struct Workspace<T> {
    n: usize,
    /// The batch as NHWC maps.
    input: Vec<T>,
    /// The stem: batch_norm `zhat`, norm_relu and selu `z`, fixup unused.
    stem_a: Vec<T>,
    /// The stem's output.
    stem_h: Vec<T>,
    stem_stats: Stats,
    blocks: Vec<BlockTrace<T>>,
    /// Pooled features `[n, features]` (fixup: plus `bias2`).
    pooled: Vec<T>,
    logits: Vec<T>,
    /// Backward scratch, each as large as the largest map.
    g_out: Vec<T>,
    g_in: Vec<T>,
    dz: Vec<T>,
    dh: Vec<T>,
}

fn zeros<T: Real>(len: usize) -> Vec<T> {
    vec![T::of(0.0); len]
}

#[inline(always)]
fn relu<T: Real>(v: T) -> T {
    // NaN stays NaN (a diverged step must reach the loss).
    if v < T::of(0.0) { T::of(0.0) } else { v }
}

/// The normalized activation in `T`, with the slope its backward needs.
///
/// - NormReLU `s(z) = lambda (max(z, b) - mu)`, slope `lambda [z > b]`;
/// - SELU `s(z) = lambda z` for `z > 0`, `lambda alpha (e^z - 1)` otherwise, slope `lambda`
///   for `z > 0` and `lambda alpha e^z = s(z) + lambda alpha` otherwise: read off the stored
///   output, so the backward evaluates no exponential;
/// - any other activation of the registry, normalized ([`Normalized`]): `s_hat(z)` and
///   `s_hat'(z)` through its `f64` definition, whatever it is (slower than the two loops
///   above, which vectorize in `T`; the results round once from `f64`).
#[derive(Clone, Copy)]
enum Act<T> {
    NormRelu { b: T, mu: T, lambda: T },
    Selu { lambda: T, lambda_alpha: T },
    Registry(Normalized),
}

impl<T: Real> Act<T> {
    fn new(n: Normalized) -> Self {
        match n.activation() {
            Activation::NormRelu(r) if n.is_identity() => Self::NormRelu {
                b: T::of(r.b),
                mu: T::of(r.mu),
                lambda: T::of(r.lambda),
            },
            Activation::Selu(_) if n.is_identity() => Self::Selu {
                lambda: T::of(SELU_LAMBDA),
                lambda_alpha: T::of(SELU_LAMBDA * SELU_ALPHA),
            },
            _ => Self::Registry(n),
        }
    }
    /// `out = s(src)` over a map, one loop per activation (each vectorizes; SELU's
    /// exponential is [`Real::exp_m1`]).
    fn map(&self, out: &mut [T], src: &[T], d: Dims) {
        match *self {
            Self::NormRelu { b, mu, lambda } => {
                par_zip(out, src, d, |v, z| *v = norm_relu(b, mu, lambda, z));
            }
            Self::Selu {
                lambda,
                lambda_alpha,
            } => par_zip(out, src, d, |v, z| *v = selu(lambda, lambda_alpha, z)),
            Self::Registry(n) => par_zip(out, src, d, |v, z| *v = T::of(n.eval(z.f64()))),
        }
    }
    /// Runs `f` with `s'` as a function of `(z, s(z))`, one monomorphic closure per
    /// activation (the loops that call it vectorize).
    fn with_slope<R>(&self, f: impl SlopeUser<T, R>) -> R {
        match *self {
            Self::NormRelu { b, lambda, .. } => {
                f.call(move |z: T, _: T| if z > b { lambda } else { T::of(0.0) })
            }
            Self::Selu {
                lambda,
                lambda_alpha,
            } => f.call(move |z: T, s: T| {
                if z > T::of(0.0) {
                    lambda
                } else {
                    s + lambda_alpha
                }
            }),
            Self::Registry(n) => f.call(move |z: T, _: T| T::of(n.derivative(z.f64()))),
        }
    }

    /// `dh *= s'(z)` over a map, given `z` and `h = s(z)`.
    fn scale_by_slope(&self, dh: &mut [T], z: &[T], h: &[T], d: Dims) {
        struct Scale<'a, T> {
            dh: &'a mut [T],
            z: &'a [T],
            h: &'a [T],
            d: Dims,
        }
        impl<T: Real> SlopeUser<T, ()> for Scale<'_, T> {
            fn call(self, slope: impl Fn(T, T) -> T + Sync + Copy) {
                let (z, h) = (self.z, self.h);
                par_pixels(self.dh, self.d, |px, base| {
                    let (z, h) = (&z[base..base + px.len()], &h[base..base + px.len()]);
                    for ((v, z), s) in px.iter_mut().zip(z).zip(h) {
                        *v *= slope(*z, *s);
                    }
                });
            }
        }
        self.with_slope(Scale { dh, z, h, d });
    }

    /// The merge's and the activation's adjoint: `dz = dy s'(m)`, times `1 / sqrt 2` on the
    /// `carried` channels, given `m` and `y = s(m)`.
    fn merge_backward(&self, dz: &mut [T], dy: &[T], m: &[T], y: &[T], d: Dims, carried: usize) {
        struct Merge<'a, T> {
            dz: &'a mut [T],
            dy: &'a [T],
            m: &'a [T],
            y: &'a [T],
            d: Dims,
            carried: usize,
        }
        impl<T: Real> SlopeUser<T, ()> for Merge<'_, T> {
            fn call(self, slope: impl Fn(T, T) -> T + Sync + Copy) {
                let (dy, m, y, carried) = (self.dy, self.m, self.y, self.carried);
                let r = T::of(FRAC_1_SQRT_2);
                par_pixels(self.dz, self.d, |px, base| {
                    for (ch, v) in px.iter_mut().enumerate() {
                        let i = base + ch;
                        let dm = dy[i] * slope(m[i], y[i]);
                        *v = if ch < carried { dm * r } else { dm };
                    }
                });
            }
        }
        self.with_slope(Merge {
            dz,
            dy,
            m,
            y,
            d,
            carried,
        });
    }
}

/// A computation generic over the activation's slope `s'(z, s(z))` ([`Act::with_slope`]).
trait SlopeUser<T, R> {
    fn call(self, slope: impl Fn(T, T) -> T + Sync + Copy) -> R;
}

#[inline(always)]
fn norm_relu<T: Real>(b: T, mu: T, lambda: T, z: T) -> T {
    let m = if z < b { b } else { z };
    (m - mu) * lambda
}

/// Both branches computed, then selected: straight-line code that vectorizes. NaN takes the
/// negative branch and stays NaN (a diverged step must reach the loss).
#[inline(always)]
fn selu<T: Real>(lambda: T, lambda_alpha: T, z: T) -> T {
    let zero = T::of(0.0);
    let negative = (if z > zero { zero } else { z }).exp_m1() * lambda_alpha;
    if z > zero { z * lambda } else { negative }
}

impl<T: Real> HostResNet<T> {
    fn workspace(&mut self, n: usize) -> Workspace<T> {
        match self.ws.take().filter(|w| w.n == n) {
            Some(ws) => ws,
            None => self.new_workspace(n),
        }
    }

    pub(super) fn new_workspace(&self, n: usize) -> Workspace<T> {
        let input = self.stem.input.with_n(n).len();
        let stem = self.stem.output.with_n(n).len();
        let largest = self
            .blocks
            .iter()
            .map(|b| b.conv1.output.with_n(n).len())
            .chain([stem])
            .max()
            .unwrap_or(0);
        let blocks = self
            .blocks
            .iter()
            .map(|b| {
                let len = b.conv1.output.with_n(n).len();
                let fixup = matches!(b.kind, BlockKind::Fixup { .. });
                BlockTrace {
                    a: zeros(match (fixup, b.shortcut.downsamples()) {
                        (true, true) => b.conv1.input.with_n(n).len(),
                        (true, false) => 0,
                        (false, _) => len,
                    }),
                    b: zeros(len),
                    c: zeros(len),
                    y: zeros(len),
                    s1: Stats::default(),
                    s2: Stats::default(),
                }
            })
            .collect();
        Workspace {
            n,
            input: zeros(input),
            stem_a: zeros(stem),
            stem_h: zeros(stem),
            stem_stats: Stats::default(),
            blocks,
            pooled: zeros(n * self.head.features),
            logits: zeros(n * self.head.classes),
            g_out: zeros(largest),
            g_in: zeros(largest),
            dz: zeros(largest),
            dh: zeros(largest),
        }
    }

    /// The training-mode forward of `n` flat CHW rows `x` (BatchNorm with the batch's
    /// statistics): the logits `[n, classes]`, row-major. The batch statistics are staged;
    /// [`Self::commit_running`] applies them to the running ones.
    pub fn forward(&mut self, x: &[f64], n: usize) -> &[T] {
        let mut ws = self.workspace(n);
        self.forward_into(x, &mut ws, None);
        self.ws = Some(ws);
        &self.ws.as_ref().expect("just stored").logits
    }

    /// Evaluation-mode logits (BatchNorm with its running statistics, as Burn's `valid()`
    /// network) of the `n` flat CHW rows `x`, `batch` rows at a time: `f(logits, rows)` per
    /// batch (logits `[rows.len(), classes]`, row-major).
    pub fn eval_logits(
        &self,
        x: &[f64],
        n: usize,
        batch: usize,
        mut f: impl FnMut(&[T], std::ops::Range<usize>),
    ) {
        let d = self.stem.input.image();
        let running: Vec<f64> = self.running.iter().map(|v| v.f64()).collect();
        let mut ws: Option<Workspace<T>> = None;
        for start in (0..n).step_by(batch.max(1)) {
            let rows = start..(start + batch.max(1)).min(n);
            let mut w = match ws.take().filter(|w| w.n == rows.len()) {
                Some(w) => w,
                None => self.new_workspace(rows.len()),
            };
            self.forward_into(&x[rows.start * d..rows.end * d], &mut w, Some(&running));
            f(&w.logits, rows);
            ws = Some(w);
        }
    }

    /// The forward into `ws`: training mode with `running = None` (batch statistics),
    /// evaluation mode with the running statistics.
    pub(super) fn forward_into(&self, x: &[f64], ws: &mut Workspace<T>, running: Option<&[f64]>) {
        let n = ws.n;
        let theta = &self.theta;
        let nr = self.normalized.map(Act::<T>::new);
        map::from_rows(x, self.stem.input.with_n(n), &mut ws.input);
        let training_bn = running.is_none() && matches!(self.stem_kind, StemKind::BatchNorm(_));
        let batch = self.stem.forward_moments(
            n,
            &ws.input,
            &theta[self.stem_w.range()],
            &mut ws.stem_a,
            training_bn,
        );
        let d = self.stem.output.with_n(n);
        let (a, h) = (&mut ws.stem_a, &mut ws.stem_h);
        match &self.stem_kind {
            StemKind::BatchNorm(bn) => {
                let (g, b) = (&theta[bn.gamma.range()], &theta[bn.beta.range()]);
                ws.stem_stats = norm::normalize(a, d, bn.given(running, &batch), h, |z, o, _| {
                    affine_relu(z, g, b, o);
                });
            }
            StemKind::Normalized => {
                nr.expect("a normalized activation").map(h, a, d);
            }
            StemKind::Fixup { bias } => {
                let b = theta[bias.at];
                let a: &[T] = a;
                par_zip(h, a, d, |v, z| *v = relu(z + b));
            }
        }
        for k in 0..self.blocks.len() {
            let (before, rest) = ws.blocks.split_at_mut(k);
            let x = before.last().map_or(&ws.stem_h, |t| &t.y);
            self.block_forward(k, x, &mut rest[0], n, nr, running);
        }
        let last = ws.blocks.last().map_or(&ws.stem_h, |t| &t.y);
        let d = self.blocks.last().map_or(d, |b| b.conv2.output.with_n(n));
        ws.pooled = map::pool(last, d);
        if let Some(b2) = self.head.bias2 {
            let b = theta[b2.at];
            ws.pooled.iter_mut().for_each(|v| *v += b);
        }
        let (f, k) = (self.head.features, self.head.classes);
        // logits^T (k x n, column-major = logits row-major) = W^T (k x f) pooled^T (f x n).
        gemm_acc(
            MatMut::from_column_major_slice_mut(&mut ws.logits, k, n),
            MatRef::from_row_major_slice(&theta[self.head.w.range()], f, k).transpose(),
            MatRef::from_row_major_slice(&ws.pooled, n, f).transpose(),
            T::of(1.0),
            T::of(0.0),
        );
        let bias = &theta[self.head.b.range()];
        for row in ws.logits.chunks_mut(k) {
            row.iter_mut().zip(bias).for_each(|(v, b)| *v += *b);
        }
    }

    fn block_forward(
        &self,
        k: usize,
        x: &[T],
        t: &mut BlockTrace<T>,
        n: usize,
        nr: Option<Act<T>>,
        running: Option<&[f64]>,
    ) {
        let blk = &self.blocks[k];
        let theta = &self.theta;
        let (w1, w2) = (&theta[blk.w1.range()], &theta[blk.w2.range()]);
        let out = blk.conv1.output.with_n(n);
        let sc = blk.shortcut;
        match &blk.kind {
            BlockKind::BatchNorm { bn1, bn2 } => {
                let training = running.is_none();
                let batch = blk.conv1.forward_moments(n, x, w1, &mut t.a, training);
                let (g1, b1) = (&theta[bn1.gamma.range()], &theta[bn1.beta.range()]);
                t.s1 = norm::normalize(
                    &mut t.a,
                    out,
                    bn1.given(running, &batch),
                    &mut t.b,
                    |z, o, _| affine_relu(z, g1, b1, o),
                );
                let batch = blk.conv2.forward_moments(n, &t.b, w2, &mut t.c, training);
                let (g, be) = (&theta[bn2.gamma.range()], &theta[bn2.beta.range()]);
                t.s2 = norm::normalize(
                    &mut t.c,
                    out,
                    bn2.given(running, &batch),
                    &mut t.y,
                    |z, o, base| {
                        for (v, (zv, (gv, bv))) in o.iter_mut().zip(z.iter().zip(g.iter().zip(be)))
                        {
                            *v = *gv * *zv + *bv;
                        }
                        add_relu(o, sc.pixel(x, base));
                    },
                );
            }
            BlockKind::Normalized => {
                let nr = nr.expect("a normalized activation");
                blk.conv1.forward(n, x, w1, &mut t.a);
                nr.map(&mut t.b, &t.a, out);
                blk.conv2.forward(n, &t.b, w2, &mut t.c);
                let r = T::of(FRAC_1_SQRT_2);
                par_pixels(&mut t.c, out, |px, base| {
                    px.iter_mut()
                        .zip(sc.pixel(x, base))
                        .for_each(|(v, s)| *v = (*s + *v) * r);
                });
                nr.map(&mut t.y, &t.c, out);
            }
            BlockKind::Fixup {
                b1a,
                b1b,
                b2a,
                scale,
                b2b,
            } => {
                let (b1a, b1b, b2a) = (theta[b1a.at], theta[b1b.at], theta[b2a.at]);
                let (scale, b2b) = (theta[scale.at], theta[b2b.at]);
                if sc.downsamples() {
                    // The shortcut reads `xa` too: kept as a map.
                    let inp = blk.conv1.input.with_n(n);
                    par_zip(&mut t.a, x, inp, |v, xv| *v = xv + b1a);
                    blk.conv1.forward(n, &t.a, w1, &mut t.b);
                } else {
                    // `xa = x + b1a` only as conv1 reads it (its padded copy).
                    blk.conv1.forward_shifted(n, x, b1a, w1, &mut t.b);
                }
                // a1 = relu(z1 + b1b) in place; `xb = a1 + b2a` only as conv2 reads it.
                let a1: &mut [T] = &mut t.b;
                par_pixels(a1, out, |px, _| {
                    px.iter_mut().for_each(|a| *a = relu(*a + b1b));
                });
                blk.conv2.forward_shifted(n, &t.b, b2a, w2, &mut t.c);
                let (z2, xs): (&[T], &[T]) = (&t.c, if sc.downsamples() { &t.a } else { x });
                par_pixels(&mut t.y, out, |px, base| {
                    let z2 = &z2[base..base + px.len()];
                    px.iter_mut()
                        .zip(z2)
                        .for_each(|(v, z)| *v = *z * scale + b2b);
                    add_relu(px, sc.pixel(xs, base));
                });
            }
        }
    }

    /// Applies the batch statistics of the last [`Self::forward`] to the running ones
    /// (Burn's rule, see [`super::norm`]); a step whose loss is not finite skips it.
    pub fn commit_running(&mut self) {
        let Some(ws) = self.ws.as_ref() else { return };
        let mut running = std::mem::take(&mut self.running);
        if let StemKind::BatchNorm(bn) = &self.stem_kind {
            update_running(&mut running, bn, &ws.stem_stats);
        }
        for (b, t) in self.blocks.iter().zip(&ws.blocks) {
            if let BlockKind::BatchNorm { bn1, bn2 } = &b.kind {
                update_running(&mut running, bn1, &t.s1);
                update_running(&mut running, bn2, &t.s2);
            }
        }
        self.running = running;
    }

    /// The gradient of the loss with respect to `theta` into `grad` (same layout, every
    /// entry overwritten), from `dlogits = dL/dlogits` (`[n, classes]`, row-major) of the
    /// last [`Self::forward`].
    pub fn backward(&mut self, dlogits: &[T], grad: &mut [T]) {
        let mut ws = self.ws.take().expect("backward after forward");
        self.backward_from(dlogits, grad, &mut ws);
        self.ws = Some(ws);
    }

    pub(super) fn backward_from(&self, dl: &[T], grad: &mut [T], ws: &mut Workspace<T>) {
        assert_eq!(
            grad.len(),
            self.theta.len(),
            "gradient buffer of theta's length"
        );
        let n = ws.n;
        let theta = &self.theta;
        let (f, k) = (self.head.features, self.head.classes);
        // dW^T (k x f, column-major = dW row-major) = dl^T (k x n) pooled (n x f).
        gemm_acc(
            MatMut::from_column_major_slice_mut(&mut grad[self.head.w.range()], k, f),
            MatRef::from_row_major_slice(dl, n, k).transpose(),
            MatRef::from_row_major_slice(&ws.pooled, n, f),
            T::of(1.0),
            T::of(0.0),
        );
        for (j, g) in grad[self.head.b.range()].iter_mut().enumerate() {
            *g = T::of((0..n).map(|i| dl[i * k + j].f64()).sum());
        }
        // da^T (f x n, column-major = da row-major) = W (f x k) dl^T (k x n).
        let mut da = zeros::<T>(n * f);
        gemm_acc(
            MatMut::from_column_major_slice_mut(&mut da, f, n),
            MatRef::from_row_major_slice(&theta[self.head.w.range()], f, k),
            MatRef::from_row_major_slice(dl, n, k).transpose(),
            T::of(1.0),
            T::of(0.0),
        );
        if let Some(b2) = self.head.bias2 {
            grad[b2.at] = T::of(da.iter().map(|v| v.f64()).sum());
        }
        let stem_d = self.stem.output.with_n(n);
        let last = self
            .blocks
            .last()
            .map_or(stem_d, |b| b.conv2.output.with_n(n));
        map::unpool(&da, last, &mut ws.g_out[..last.len()]);
        for k in (0..self.blocks.len()).rev() {
            self.block_backward(k, ws, grad);
            std::mem::swap(&mut ws.g_out, &mut ws.g_in);
        }
        self.stem_backward(ws, grad);
    }

    fn block_backward(&self, k: usize, ws: &mut Workspace<T>, grad: &mut [T]) {
        let n = ws.n;
        let blk = &self.blocks[k];
        let theta = &self.theta;
        let (w1, w2) = (&theta[blk.w1.range()], &theta[blk.w2.range()]);
        let (inp, out) = (blk.conv1.input.with_n(n), blk.conv1.output.with_n(n));
        let sc = blk.shortcut;
        let (before, rest) = ws.blocks.split_at(k);
        let t = &rest[0];
        let x: &[T] = before.last().map_or(&ws.stem_h, |p| &p.y);
        let dy = &mut ws.g_out[..out.len()];
        let g_in = &mut ws.g_in[..inp.len()];
        let dz = &mut ws.dz[..out.len()];
        let dh = &mut ws.dh[..out.len()];
        match &blk.kind {
            BlockKind::BatchNorm { bn1, bn2 } => {
                // ReLU's backward `dz = dy [y > 0]` and BatchNorm's sums in one pass.
                let sums = relu_sums(dz, Some(dy), &t.y, &t.c, out);
                sc.adjoint(dz, g_in, false);
                self.bn_backward(bn2, dz, &t.c, &t.s2, out, sums, grad);
                blk.conv2.backward(
                    n,
                    &t.b,
                    w2,
                    dz,
                    &mut grad[blk.w2.range()],
                    Some((dh, false)),
                );
                let sums = relu_sums(dh, None, &t.b, &t.a, out);
                self.bn_backward(bn1, dh, &t.a, &t.s1, out, sums, grad);
                blk.conv1
                    .backward(n, x, w1, dh, &mut grad[blk.w1.range()], Some((g_in, true)));
            }
            BlockKind::Normalized => {
                let nr = Act::<T>::new(self.normalized.expect("a normalized activation"));
                nr.merge_backward(dz, dy, &t.c, &t.y, out, sc.carried());
                sc.adjoint(dz, g_in, false);
                blk.conv2.backward(
                    n,
                    &t.b,
                    w2,
                    dz,
                    &mut grad[blk.w2.range()],
                    Some((dh, false)),
                );
                nr.scale_by_slope(dh, &t.a, &t.b, out);
                blk.conv1
                    .backward(n, x, w1, dh, &mut grad[blk.w1.range()], Some((g_in, true)));
            }
            BlockKind::Fixup {
                b1a,
                b1b,
                b2a,
                scale,
                b2b,
            } => {
                // ReLU's backward (in place on dy, which the shortcut reads later), the
                // scalars' sums and `dz = scale dy`, in one pass.
                let pass = FixupGate {
                    y: &t.y,
                    z2: &t.c,
                    scale: theta[scale.at],
                };
                let (ds, db) = wide::map_sums2(dy, Some(dz), out, &pass);
                grad[scale.at] = T::of(ds.iter().sum());
                grad[b2b.at] = T::of(db.iter().sum());
                blk.conv2.backward_shifted(
                    n,
                    &t.b,
                    theta[b2a.at],
                    w2,
                    dz,
                    &mut grad[blk.w2.range()],
                    Some((dh, false)),
                );
                // dh summed before (b2a) and after (b1b) ReLU's backward, in one pass.
                let (before, after) = wide::map_sums2(dh, None, out, &SumsAroundGate { a: &t.b });
                grad[b2a.at] = T::of(before.iter().sum());
                grad[b1b.at] = T::of(after.iter().sum());
                let (xa, shift) = if sc.downsamples() {
                    (&t.a[..], T::of(0.0))
                } else {
                    (x, theta[b1a.at])
                };
                blk.conv1.backward_shifted(
                    n,
                    xa,
                    shift,
                    w1,
                    dh,
                    &mut grad[blk.w1.range()],
                    Some((g_in, false)),
                );
                if sc.downsamples() {
                    sc.adjoint(dy, g_in, true);
                    let gr: &[T] = g_in;
                    grad[b1a.at] = T::of(total_sum(inp, |i| gr[i].f64()));
                } else {
                    let gr: &[T] = g_in;
                    grad[b1a.at] = T::of(total_sum(inp, |i| gr[i].f64()));
                    sc.adjoint(dy, g_in, true);
                }
            }
        }
    }

    /// BatchNorm's backward in place (`du` -> `dz`) given `sums = (sum du, sum du zhat)` per
    /// channel, its `dgamma`, `dbeta` into `grad`.
    #[allow(clippy::too_many_arguments)]
    fn bn_backward(
        &self,
        bn: &super::Bn,
        du: &mut [T],
        zhat: &[T],
        s: &Stats,
        d: Dims,
        sums: (Vec<f64>, Vec<f64>),
        grad: &mut [T],
    ) {
        let (dg, db) = norm::backward(du, zhat, d, &self.theta[bn.gamma.range()], s, sums);
        grad[bn.gamma.range()]
            .iter_mut()
            .zip(dg)
            .for_each(|(g, v)| *g = T::of(v));
        grad[bn.beta.range()]
            .iter_mut()
            .zip(db)
            .for_each(|(g, v)| *g = T::of(v));
    }

    fn stem_backward(&self, ws: &mut Workspace<T>, grad: &mut [T]) {
        let n = ws.n;
        let d = self.stem.output.with_n(n);
        let dh = &mut ws.g_out[..d.len()];
        match &self.stem_kind {
            StemKind::BatchNorm(bn) => {
                let sums = relu_sums(dh, None, &ws.stem_h, &ws.stem_a, d);
                self.bn_backward(bn, dh, &ws.stem_a, &ws.stem_stats, d, sums, grad);
            }
            StemKind::Normalized => {
                let nr = Act::<T>::new(self.normalized.expect("a normalized activation"));
                nr.scale_by_slope(dh, &ws.stem_a, &ws.stem_h, d);
            }
            StemKind::Fixup { bias } => {
                let h: &[T] = &ws.stem_h;
                let (sums, _) = map::map_sums2(dh, None, d, |base, px, _, u, _| {
                    let h = &h[base..base + px.len()];
                    for ((g, h), u) in px.iter_mut().zip(h).zip(u) {
                        *g = gate(*g, *h);
                        *u += g.f64();
                    }
                });
                grad[bias.at] = T::of(sums.iter().sum());
            }
        }
        self.stem.backward(
            n,
            &ws.input,
            &self.theta[self.stem_w.range()],
            dh,
            &mut grad[self.stem_w.range()],
            None,
        );
    }
}

/// `o = relu(g zhat + b)` per channel of one pixel.
#[inline(always)]
fn affine_relu<T: Real>(zhat: &[T], g: &[T], b: &[T], o: &mut [T]) {
    for (v, (z, (g, b))) in o.iter_mut().zip(zhat.iter().zip(g.iter().zip(b))) {
        *v = relu(*g * *z + *b);
    }
}

/// Whether ReLU's output `y` passes gradient: `y > 0` (a NaN output passes none).
#[inline(always)]
fn passes<T: Real>(y: T) -> bool {
    y > T::of(0.0)
}

/// `g [y > 0]`: ReLU's backward through its output `y` ([`passes`]), as a select, not a
/// branch: the signs of a layer's outputs are a coin toss per value, and a conditional store
/// there mispredicted about every other value (a quarter of a ResNet-20 step on an Intel
/// Xeon went to that branch in the pass below, `perf annotate`).
#[inline(always)]
fn gate<T: Real>(g: T, y: T) -> T {
    if passes(y) { g } else { T::of(0.0) }
}

/// `g = from [y > 0]` (ReLU's backward through its output `y`, from the cotangent `from`, or
/// in place on `g` when `from` is `None`; NaN outputs pass no gradient either), returning
/// BatchNorm's sums `(sum g, sum g zhat)` per channel of the result, taken in the same pass.
fn relu_sums<T: Real>(
    g: &mut [T],
    from: Option<&[T]>,
    y: &[T],
    zhat: &[T],
    d: Dims,
) -> (Vec<f64>, Vec<f64>) {
    wide::map_sums2(g, None, d, &ReluSums { from, y, zhat })
}

/// [`relu_sums`]' pixel.
struct ReluSums<'a, T> {
    from: Option<&'a [T]>,
    y: &'a [T],
    zhat: &'a [T],
}

impl<T: Real> wide::PixelPass<T> for ReluSums<'_, T> {
    #[inline(always)]
    fn pixel(&self, base: usize, px: &mut [T], _: Option<&mut [T]>, u: &mut [f64], v: &mut [f64]) {
        let r = base..base + px.len();
        if let Some(from) = self.from {
            px.copy_from_slice(&from[r.clone()]);
        }
        let (y, z) = (&self.y[r.clone()], &self.zhat[r]);
        for ((((g, y), z), u), v) in px.iter_mut().zip(y).zip(z).zip(u).zip(v) {
            *g = gate(*g, *y);
            *u += g.f64();
            *v += g.f64() * z.f64();
        }
    }
}

/// A Fixup block's merge backward, per pixel: ReLU's backward in place on `dy` through the
/// block's output `y`, `dz = scale dy` into the second map, and the sums `(sum dy z2, sum
/// dy)` of the scale's and the last bias's gradients (`z2`: the second convolution's output).
struct FixupGate<'a, T> {
    y: &'a [T],
    z2: &'a [T],
    scale: T,
}

impl<T: Real> wide::PixelPass<T> for FixupGate<'_, T> {
    #[inline(always)]
    fn pixel(&self, base: usize, px: &mut [T], dz: Option<&mut [T]>, u: &mut [f64], v: &mut [f64]) {
        let r = base..base + px.len();
        let (y, z2, dz) = (&self.y[r.clone()], &self.z2[r], dz.expect("dz given"));
        for (((((g, y), z), o), u), v) in px.iter_mut().zip(y).zip(z2).zip(dz).zip(u).zip(v) {
            *g = gate(*g, *y);
            *o = *g * self.scale;
            *u += g.f64() * z.f64();
            *v += g.f64();
        }
    }
}

/// A Fixup block's inner ReLU backward, per pixel, in place on `dh` through that ReLU's
/// output `a`, with the sums of `dh` before it (the bias after the ReLU) and after it (the
/// bias before).
struct SumsAroundGate<'a, T> {
    a: &'a [T],
}

impl<T: Real> wide::PixelPass<T> for SumsAroundGate<'_, T> {
    #[inline(always)]
    fn pixel(&self, base: usize, px: &mut [T], _: Option<&mut [T]>, u: &mut [f64], v: &mut [f64]) {
        let a = &self.a[base..base + px.len()];
        for (((g, a), u), v) in px.iter_mut().zip(a).zip(u).zip(v) {
            *u += g.f64();
            *g = gate(*g, *a);
            *v += g.f64();
        }
    }
}

/// `o = relu(o + s)` over the channels `s` covers (the shortcut's carried ones), `relu(o)`
/// beyond them: the merge at the end of a block.
#[inline(always)]
fn add_relu<T: Real>(o: &mut [T], s: &[T]) {
    o.iter_mut().zip(s).for_each(|(v, s)| *v += *s);
    o.iter_mut().for_each(|v| *v = relu(*v));
}
