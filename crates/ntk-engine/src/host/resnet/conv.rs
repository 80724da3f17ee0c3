//! The 3x3, zero-padding-1 convolution of the CIFAR ResNets on host GEMMs (im2col), with
//! the optional border gain of the norm_relu variant.
//!
//! For a chunk of images in NHWC order the convolution is one GEMM: with the im2col matrix
//! `X_col[(b, i, j), (kh, kw, ci)] = x[b, s i + kh - 1, s j + kw - 1, ci]` (zero outside
//! the map) and the weights `W[co, (kh, kw, ci)]`,
//!
//! `y = X_col W^T` (`rows x c_out`, the output chunk in NHWC order), then `y *= g[pixel]`;
//!
//! and its adjoints from `dy` (after `dy *= g`):
//! - weights: `dW = dy^T X_col` (per chunk, the chunks' parts added in a fixed order);
//! - input, stride 1: the convolution of `dy` with the flipped, transposed filter
//!   `W'[ci, (kh, kw, co)] = W[co, (2 - kh, 2 - kw, ci)]`, one more forward GEMM;
//! - input, stride 2: `dX_col = dy W`, scattered back onto the map (col2im).
//!
//! The chunks run on rayon's threads with the BLAS single-threaded inside
//! ([`ntk_numerics::linalg::single_threaded`], set by the caller for the whole step).
//! Weights are stored `[c_out, 3, 3, c_in]` (row-major `c_out x 9 c_in`); Burn's and
//! PyTorch's `[c_out, c_in, 3, 3]` is converted by [`to_hwc`] and [`from_hwc`].

use faer::{MatMut, MatRef};
use ntk_numerics::linalg::{Real, gemm_acc};
use rayon::prelude::*;

use std::any::TypeId;

use super::map::{Dims, chunks, copy_shifted};
use super::simd;

thread_local! {
    /// Each thread's im2col buffer, kept between calls (a fresh one per chunk cost page
    /// faults and a zeroing pass).
    static SCRATCH: std::cell::Cell<Vec<f64>> = const { std::cell::Cell::new(Vec::new()) };
    /// The buffer of the weight gradient's per-chunk parts, kept between calls: fresh ones
    /// (a few MB per convolution) came from `mmap` each time, and the operating system's clearing of
    /// their pages took 7% of a ResNet-56 step.
    static PARTS: std::cell::Cell<Vec<f64>> = const { std::cell::Cell::new(Vec::new()) };
}

type Buffer = std::thread::LocalKey<std::cell::Cell<Vec<f64>>>;

/// Runs `f` on this thread's scratch buffer of at least `len` values of `T` (contents
/// unspecified: `f` writes before it reads).
fn with_scratch<T: Real, R>(len: usize, f: impl FnOnce(&mut [T]) -> R) -> R {
    with_taken(&SCRATCH, len, f)
}

/// As [`with_scratch`], on this thread's [`PARTS`].
fn with_parts<T: Real, R>(len: usize, f: impl FnOnce(&mut [T]) -> R) -> R {
    with_taken(&PARTS, len, f)
}

/// Runs `f` on a buffer of `len` values of `T` taken out of this thread's `key` and put back
/// afterwards. No borrow is held while `f` runs, so a nested call on this thread (rayon's
/// work stealing inside `f`, as when faer's parallel GEMM waits in a join) gets a buffer of
/// its own instead of a conflict.
fn with_taken<T: Real, R>(key: &'static Buffer, len: usize, f: impl FnOnce(&mut [T]) -> R) -> R {
    let size = std::mem::size_of::<T>();
    assert!(size == 4 || size == 8, "f32 or f64");
    let mut buf = key.with(std::cell::Cell::take);
    let words = (len * size).div_ceil(8);
    if buf.len() < words {
        buf.resize(words, 0.0);
    }
    // SAFETY: the buffer holds at least `len * size` initialized bytes, 8-byte aligned
    // (>= T's alignment), and f32/f64 accept every bit pattern.
    let slice = unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr().cast::<T>(), len) };
    let out = f(slice);
    key.with(|cell| cell.set(buf));
    out
}

/// A 3x3 convolution of stride 1 or 2 between fixed map shapes (the batch size is taken
/// from the data).
#[derive(Clone, Debug)]
pub struct Conv<T> {
    /// Input maps (per image: `h x w x c_in`).
    pub input: Dims,
    /// Output maps (per image: `h_out x w_out x c_out`).
    pub output: Dims,
    pub stride: usize,
    /// `sqrt(9 / taps(p))` per output pixel (the border gain), or `None`.
    pub gain: Option<Vec<T>>,
}

impl<T: Real> Conv<T> {
    /// A convolution from `c_in` channels of `h x w` maps to `c_out` channels, stride
    /// `stride`; `gain` switches the border gain on ([`ntk_model::resnet::layers::border_gain`]).
    pub fn new(c_in: usize, h: usize, w: usize, c_out: usize, stride: usize, gain: bool) -> Self {
        let (ho, wo) = ((h - 1) / stride + 1, (w - 1) / stride + 1);
        let gain = gain.then(|| {
            ntk_model::resnet::layers::border_gains([h, w], stride)
                .into_iter()
                .map(T::of)
                .collect()
        });
        Self {
            input: Dims::new(0, h, w, c_in),
            output: Dims::new(0, ho, wo, c_out),
            stride,
            gain,
        }
    }

    /// The direct convolution's weights ([`simd`]) when it applies: `T` is f32, stride 1, and
    /// its output channels (`c_out`, or `c_in` for the input gradient, `adjoint`)
    /// a multiple of 16 on a CPU with AVX2 and FMA.
    fn direct_weights(&self, w: &[T], adjoint: bool) -> Option<Vec<f32>> {
        let (ci, co) = (self.input.c, self.output.c);
        let w = as_f32(w)?;
        if adjoint {
            self.direct(ci).then(|| simd::adjoint_weights(w, ci, co))
        } else {
            self.direct(co).then(|| simd::forward_weights(w, ci, co))
        }
    }

    /// Whether a product of this convolution with `outputs` output channels (`c_out` for
    /// the forward and the weight gradient, `c_in` for the input gradient) takes the direct
    /// convolution: `T` is f32 and [`simd::applies`].
    fn direct(&self, outputs: usize) -> bool {
        TypeId::of::<T>() == TypeId::of::<f32>() && simd::applies(self.stride, outputs)
    }

    /// `9 c_in`, the columns of the im2col matrix.
    pub fn k(&self) -> usize {
        9 * self.input.c
    }

    /// Weights in the layer: `c_out 9 c_in`.
    pub fn num_weights(&self) -> usize {
        self.output.c * self.k()
    }

    /// `y = conv(x) (* g)` for a batch of `n` images: `x` input maps, `y` output maps.
    pub fn forward(&self, n: usize, x: &[T], w: &[T], y: &mut [T]) {
        self.forward_moments(n, x, w, y, false);
    }

    /// `y = conv(x + shift) (* g)`, the scalar `shift` added on the input maps (not on their
    /// zero padding) as the convolution reads them: Fixup's `bias1a` and `bias2a` without a
    /// pass of their own over memory, the same values bit for bit ([`copy_shifted`]).
    pub fn forward_shifted(&self, n: usize, x: &[T], shift: T, w: &[T], y: &mut [T]) {
        self.forward_impl(n, x, shift, w, y, false);
    }

    /// [`Self::forward`], and with `moments` the per-channel mean and biased variance of `y`
    /// over the batch (BatchNorm's statistics), computed chunk by chunk while the chunk is in
    /// the cache and combined in chunk order (Chan et al.'s pairwise update: no
    /// `E[y^2] - E[y]^2` cancellation).
    pub fn forward_moments(
        &self,
        n: usize,
        x: &[T],
        w: &[T],
        y: &mut [T],
        moments: bool,
    ) -> Option<(Vec<f64>, Vec<f64>)> {
        self.forward_impl(n, x, T::of(0.0), w, y, moments)
    }

    /// [`Self::forward_moments`] of the maps `x + shift`.
    fn forward_impl(
        &self,
        n: usize,
        x: &[T],
        shift: T,
        w: &[T],
        y: &mut [T],
        moments: bool,
    ) -> Option<(Vec<f64>, Vec<f64>)> {
        let out = self.output.with_n(n);
        let (k, co) = (self.k(), out.c);
        let ranges = chunks(n, out.pixels());
        let per = ranges[0].len();
        let direct = self.direct_weights(w, false);
        y.par_chunks_mut(per * out.image())
            .zip(ranges)
            .map(|(yc, r)| {
                let rows = r.len() * out.pixels();
                if let Some(wd) = &direct {
                    let img = self.input.image();
                    let (inp, xc) = (self.input, &x[r.start * img..r.end * img]);
                    let len = simd::padded_len(r.len(), inp.h, inp.w, inp.c);
                    with_scratch(len, |pad: &mut [f32]| {
                        let (xc, yc) = (as_f32(xc).expect("f32"), as_f32_mut(yc).expect("f32"));
                        let sh = shift.f64() as f32;
                        simd::conv(xc, sh, r.len(), inp.h, inp.w, inp.c, wd, co, yc, false, pad);
                    });
                } else {
                    with_scratch(rows * k, |col: &mut [T]| {
                        self.input_col(x, shift, &r, col);
                        // y^T (c_out x rows, column-major = y row-major) = W (c_out x k) X_col^T.
                        gemm_acc(
                            MatMut::from_column_major_slice_mut(yc, co, rows),
                            MatRef::from_row_major_slice(w, co, k),
                            MatRef::from_row_major_slice(col, rows, k).transpose(),
                            T::of(1.0),
                            T::of(0.0),
                        );
                    });
                }
                self.apply_gain(yc, out.c);
                moments.then(|| chunk_moments(yc, co))
            })
            .collect::<Vec<_>>()
            .into_iter()
            .flatten()
            .reduce(|a, b| a.merge(&b))
            .map(|m| m.mean_var())
    }

    /// The im2col matrix of the input images `r` of the batch `x + shift` (forward and
    /// weight gradient alike).
    fn input_col(&self, x: &[T], shift: T, r: &std::ops::Range<usize>, col: &mut [T]) {
        let img = self.input.image();
        let chunk = self.input.with_n(r.len());
        im2col(
            &x[r.start * img..r.end * img],
            shift,
            chunk,
            self.stride,
            self.output,
            col,
        );
    }

    /// `y *= g[pixel]` on a chunk of whole output images.
    fn apply_gain(&self, y: &mut [T], c: usize) {
        if let Some(g) = &self.gain {
            for (px, v) in y.chunks_mut(c).enumerate() {
                let s = g[px % g.len()];
                v.iter_mut().for_each(|v| *v *= s);
            }
        }
    }

    /// The adjoints for a batch of `n` images, given `dy` (overwritten with `dy * g`):
    /// `dw = dy^T X_col` (overwritten) and, when `dx` is given, `dx = conv^T(dy)` (added to
    /// `dx` when `accumulate`, overwriting it otherwise).
    pub fn backward(
        &self,
        n: usize,
        x: &[T],
        w: &[T],
        dy: &mut [T],
        dw: &mut [T],
        dx: Option<(&mut [T], bool)>,
    ) {
        self.backward_shifted(n, x, T::of(0.0), w, dy, dw, dx);
    }

    /// [`Self::backward`] of the convolution of the maps `x + shift`
    /// ([`Self::forward_shifted`]): `dw` reads `x + shift`, `dx` is the same.
    #[allow(clippy::too_many_arguments)]
    pub fn backward_shifted(
        &self,
        n: usize,
        x: &[T],
        shift: T,
        w: &[T],
        dy: &mut [T],
        dw: &mut [T],
        dx: Option<(&mut [T], bool)>,
    ) {
        let (inp, out) = (self.input.with_n(n), self.output.with_n(n));
        let (k, co, ci) = (self.k(), out.c, inp.c);
        let ranges = chunks(n, out.pixels());
        let per = ranges[0].len();
        // The gain first: every later product reads dy * g.
        dy.par_chunks_mut(per * out.image())
            .for_each(|d| self.apply_gain(d, out.c));
        let dy: &[T] = dy;
        // Per-chunk weight gradients (each overwritten by its chunk's product), added in
        // chunk order below.
        let adjoint = match (self.stride, dx.is_some()) {
            (1, true) => match self.direct_weights(w, true) {
                Some(wd) => Adjoint::Direct(wd),
                None => Adjoint::Flipped(flip(w, ci, co)),
            },
            _ => Adjoint::Col2im,
        };
        let body =
            |part: &mut [T], r: &std::ops::Range<usize>, dxc: Option<&mut [T]>, acc: bool| {
                let rows = r.len() * out.pixels();
                with_scratch(rows * k.max(9 * co), |col: &mut [T]| {
                    self.backward_chunk((x, shift), w, dy, &adjoint, part, r, dxc, acc, col)
                })
            };
        with_parts(ranges.len() * k * co, |parts: &mut [T]| {
            match dx {
                Some((dx, acc)) => {
                    parts
                        .par_chunks_mut(k * co)
                        .zip(dx.par_chunks_mut(per * inp.image()))
                        .zip(ranges.par_iter())
                        .for_each(|((part, dxc), r)| body(part, r, Some(dxc), acc));
                }
                None => {
                    parts
                        .par_chunks_mut(k * co)
                        .zip(ranges.par_iter())
                        .for_each(|(part, r)| body(part, r, None, false));
                }
            }
            dw.copy_from_slice(&parts[..k * co]);
            for part in parts.chunks(k * co).skip(1) {
                dw.iter_mut().zip(part).for_each(|(d, p)| *d += *p);
            }
        });
    }

    /// One chunk's share of [`Self::backward`]: its part of `dw`, and its images of `dx`;
    /// `col` is scratch for `rows x max(9 c_in, 9 c_out)` values.
    #[allow(clippy::too_many_arguments)]
    fn backward_chunk(
        &self,
        (x, shift): (&[T], T),
        w: &[T],
        dy: &[T],
        adjoint: &Adjoint<T>,
        part: &mut [T],
        r: &std::ops::Range<usize>,
        dxc: Option<&mut [T]>,
        acc: bool,
        col: &mut [T],
    ) {
        let (inp, out) = (self.input, self.output);
        let (k, co, ci) = (self.k(), out.c, inp.c);
        let rows = r.len() * out.pixels();
        let dyc = &dy[r.start * out.image()..r.end * out.image()];
        if self.direct(co) {
            // dW on the direct convolution, from the padded input chunk.
            let img = inp.image();
            let xc = as_f32(&x[r.start * img..r.end * img]).expect("f32");
            let len = simd::padded_len(r.len(), inp.h, inp.w, ci);
            let pad = as_f32_mut(&mut col[..len]).expect("f32");
            let (dyc, part) = (as_f32(dyc).expect("f32"), as_f32_mut(part).expect("f32"));
            let sh = shift.f64() as f32;
            simd::weight_grad(xc, sh, r.len(), inp.h, inp.w, ci, dyc, co, part, pad);
        } else {
            let col = &mut col[..rows * k];
            self.input_col(x, shift, r, col);
            // dW^T (k x c_out, column-major = dW row-major) = X_col^T dy.
            gemm_acc(
                MatMut::from_column_major_slice_mut(part, k, co),
                MatRef::from_row_major_slice(col, rows, k).transpose(),
                MatRef::from_row_major_slice(dyc, rows, co),
                T::of(1.0),
                T::of(0.0),
            );
        }
        let Some(dxc) = dxc else { return };
        let beta = T::of(if acc { 1.0 } else { 0.0 });
        match adjoint {
            Adjoint::Direct(wd) => {
                // dx = conv(dy, W') on the direct convolution; the padded dy fits in `col`:
                // `(h + 2)(w + 2) c_out <= 9 h w c_out` since `h + 2 <= 3 h` for `h >= 1`.
                let len = simd::padded_len(r.len(), out.h, out.w, co);
                let pad = as_f32_mut(&mut col[..len]).expect("f32");
                let (dyc, dxc) = (as_f32(dyc).expect("f32"), as_f32_mut(dxc).expect("f32"));
                simd::conv(dyc, 0.0, r.len(), out.h, out.w, co, wd, ci, dxc, acc, pad);
            }
            Adjoint::Flipped(wf) => {
                // dx = conv(dy, W'): stride 1, same map size.
                let col = &mut col[..rows * 9 * co];
                im2col(
                    dyc,
                    T::of(0.0),
                    out.with_n(r.len()),
                    1,
                    inp.with_n(r.len()),
                    col,
                );
                gemm_acc(
                    MatMut::from_column_major_slice_mut(dxc, ci, rows),
                    MatRef::from_row_major_slice(wf, ci, 9 * co),
                    MatRef::from_row_major_slice(col, rows, 9 * co).transpose(),
                    T::of(1.0),
                    beta,
                );
            }
            Adjoint::Col2im => {
                // dX_col^T (k x rows) = W^T dy^T, then col2im.
                let col = &mut col[..rows * k];
                gemm_acc(
                    MatMut::from_column_major_slice_mut(&mut col[..rows * k], k, rows),
                    MatRef::from_row_major_slice(w, co, k).transpose(),
                    MatRef::from_row_major_slice(dyc, rows, co).transpose(),
                    T::of(1.0),
                    T::of(0.0),
                );
                col2im(col, inp.with_n(r.len()), self.stride, out, dxc, acc);
            }
        }
    }
}

/// How the input gradient of a convolution is computed.
enum Adjoint<T> {
    /// Stride 1 on the direct convolution: `conv(dy, W')` with [`simd::adjoint_weights`].
    Direct(Vec<f32>),
    /// Stride 1 on im2col: `conv(dy, W')` with the [`flip`]ped filter, one more GEMM.
    Flipped(Vec<T>),
    /// Stride 2 (or no input gradient wanted): `dX_col = dy W`, then [`col2im`].
    Col2im,
}

/// `x` as f32 values when `T` is f32.
fn as_f32<T: Real>(x: &[T]) -> Option<&[f32]> {
    // SAFETY: `T` is `f32` (same type id): the same values.
    (TypeId::of::<T>() == TypeId::of::<f32>())
        .then(|| unsafe { std::slice::from_raw_parts(x.as_ptr().cast::<f32>(), x.len()) })
}

/// `x` as mutable f32 values when `T` is f32.
fn as_f32_mut<T: Real>(x: &mut [T]) -> Option<&mut [f32]> {
    // SAFETY: as in `as_f32`.
    (TypeId::of::<T>() == TypeId::of::<f32>())
        .then(|| unsafe { std::slice::from_raw_parts_mut(x.as_mut_ptr().cast::<f32>(), x.len()) })
}

/// Per-channel count, mean and sum of squared deviations of a chunk of maps.
struct Moments {
    count: f64,
    mean: Vec<f64>,
    m2: Vec<f64>,
}

impl Moments {
    /// Chan, Golub & LeVeque's combination of two disjoint parts.
    fn merge(self, b: &Self) -> Self {
        let count = self.count + b.count;
        let (wa, wb) = (self.count / count, b.count / count);
        let mut out = Self {
            count,
            mean: Vec::with_capacity(self.mean.len()),
            m2: Vec::with_capacity(self.mean.len()),
        };
        for ch in 0..self.mean.len() {
            let delta = b.mean[ch] - self.mean[ch];
            out.mean.push(self.mean[ch] * wa + b.mean[ch] * wb);
            out.m2
                .push(self.m2[ch] + b.m2[ch] + delta * delta * self.count * wb);
        }
        out
    }

    fn mean_var(self) -> (Vec<f64>, Vec<f64>) {
        let var = self.m2.iter().map(|m| m / self.count).collect();
        (self.mean, var)
    }
}

/// The moments of a chunk of NHWC maps with `c` channels (two passes over the cached chunk,
/// [`super::wide::channel_moments`]).
fn chunk_moments<T: Real>(y: &[T], c: usize) -> Moments {
    let count = (y.len() / c) as f64;
    let (mean, m2) = super::wide::channel_moments(y, c);
    Moments { count, mean, m2 }
}

/// The im2col matrix of a chunk (maps `x + shift`, shape `d`) for output maps `out` at
/// stride `stride`: row `(b, i, j)`, columns `(kh, kw, ci)`, zero where the window leaves
/// the map (the shift is on the maps, not on their zero padding).
pub fn im2col<T: Real>(x: &[T], shift: T, d: Dims, stride: usize, out: Dims, col: &mut [T]) {
    let c = d.c;
    let k = 9 * c;
    assert_eq!(
        col.len(),
        d.n * out.pixels() * k,
        "im2col buffer of rows x 9 c"
    );
    let zero = T::of(0.0);
    for b in 0..d.n {
        for i in 0..out.h {
            for j in 0..out.w {
                let row = ((b * out.h + i) * out.w + j) * k;
                // The window's three columns are consecutive pixels: one copy of 3c values
                // per filter row when all three lie inside the map.
                let w0 = (j * stride).wrapping_sub(1);
                let inside = j * stride >= 1 && j * stride + 1 < d.w;
                for kh in 0..3 {
                    let dst = &mut col[row + kh * 3 * c..row + (kh + 1) * 3 * c];
                    let hi = (i * stride + kh).wrapping_sub(1);
                    if hi >= d.h {
                        dst.fill(zero);
                    } else if inside {
                        let src = ((b * d.h + hi) * d.w + w0) * c;
                        copy_shifted(dst, &x[src..src + 3 * c], shift);
                    } else {
                        for (kw, tap) in dst.chunks_exact_mut(c).enumerate() {
                            let wi = (j * stride + kw).wrapping_sub(1);
                            if wi < d.w {
                                let src = ((b * d.h + hi) * d.w + wi) * c;
                                copy_shifted(tap, &x[src..src + c], shift);
                            } else {
                                tap.fill(zero);
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The adjoint of [`im2col`]: `dx (+)= col2im(dcol)` on maps `d` (`accumulate = false`
/// overwrites `dx`).
pub fn col2im<T: Real>(
    dcol: &[T],
    d: Dims,
    stride: usize,
    out: Dims,
    dx: &mut [T],
    accumulate: bool,
) {
    let c = d.c;
    let k = 9 * c;
    if !accumulate {
        dx[..d.len()].iter_mut().for_each(|v| *v = T::of(0.0));
    }
    for b in 0..d.n {
        for i in 0..out.h {
            for j in 0..out.w {
                let row = ((b * out.h + i) * out.w + j) * k;
                for kh in 0..3 {
                    let hi = (i * stride + kh).wrapping_sub(1);
                    if hi >= d.h {
                        continue;
                    }
                    for kw in 0..3 {
                        let wi = (j * stride + kw).wrapping_sub(1);
                        if wi >= d.w {
                            continue;
                        }
                        let src = &dcol[row + (kh * 3 + kw) * c..row + (kh * 3 + kw + 1) * c];
                        let at = ((b * d.h + hi) * d.w + wi) * c;
                        dx[at..at + c]
                            .iter_mut()
                            .zip(src)
                            .for_each(|(a, s)| *a += *s);
                    }
                }
            }
        }
    }
}

/// `W'[ci, (kh, kw, co)] = W[co, (2 - kh, 2 - kw, ci)]`: the filter of the stride-1
/// convolution's input adjoint.
pub fn flip<T: Real>(w: &[T], c_in: usize, c_out: usize) -> Vec<T> {
    let mut out = vec![T::of(0.0); w.len()];
    for co in 0..c_out {
        for t in 0..9 {
            for ci in 0..c_in {
                out[ci * 9 * c_out + (8 - t) * c_out + co] = w[co * 9 * c_in + t * c_in + ci];
            }
        }
    }
    out
}

/// Burn's `[c_out, c_in, 3, 3]` as `[c_out, 3, 3, c_in]`.
pub fn to_hwc(w: &[f64], c_in: usize, c_out: usize) -> Vec<f64> {
    let mut out = vec![0.0; w.len()];
    for co in 0..c_out {
        for ci in 0..c_in {
            for t in 0..9 {
                out[co * 9 * c_in + t * c_in + ci] = w[(co * c_in + ci) * 9 + t];
            }
        }
    }
    out
}

/// `[c_out, 3, 3, c_in]` back to Burn's `[c_out, c_in, 3, 3]`.
pub fn from_hwc(w: &[f64], c_in: usize, c_out: usize) -> Vec<f64> {
    let mut out = vec![0.0; w.len()];
    for co in 0..c_out {
        for ci in 0..c_in {
            for t in 0..9 {
                out[(co * c_in + ci) * 9 + t] = w[co * 9 * c_in + t * c_in + ci];
            }
        }
    }
    out
}
