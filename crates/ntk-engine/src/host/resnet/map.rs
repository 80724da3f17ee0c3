//! Feature maps on the host: a batch of `n` images of `h x w` pixels and `c` channels in
//! NHWC order (channels fastest), how a batch is cut into chunks of whole images for the
//! threads, and the parameter-free maps between them: the option-A shortcut and global
//! average pooling.
//!
//! NHWC keeps a chunk of images contiguous (the threads write disjoint slices) and makes a
//! convolution one GEMM per chunk: the output rows are pixels, the columns channels
//! ([`super::conv`]).

use std::ops::Range;

use ntk_numerics::linalg::Real;
use rayon::prelude::*;

/// The shape of a batch of maps in NHWC order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dims {
    pub n: usize,
    pub h: usize,
    pub w: usize,
    pub c: usize,
}

impl Dims {
    pub fn new(n: usize, h: usize, w: usize, c: usize) -> Self {
        Self { n, h, w, c }
    }
    /// Pixels per image, `h w`.
    pub fn pixels(&self) -> usize {
        self.h * self.w
    }
    /// Values per image, `h w c`.
    pub fn image(&self) -> usize {
        self.h * self.w * self.c
    }
    /// Values in the batch.
    pub fn len(&self) -> usize {
        self.n * self.image()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The same maps for `n` images.
    pub fn with_n(self, n: usize) -> Self {
        Self { n, ..self }
    }
}

/// Output rows (pixels) a chunk aims at: its im2col matrix (`rows x 9 c_in`) then stays in
/// the cache between being written and being multiplied (2048 x 144 f32 values = 1.2 MB).
const CHUNK_ROWS: usize = 2048;

/// Whole images per chunk for maps of `pixels` pixels in a batch of `n`: at least one, at most
/// a quarter of the batch (so two threads share the work). It depends on the shapes only, so
/// every process cuts a batch the same way and the per-chunk partial sums are added in the
/// same order: the results do not depend on the thread count.
pub fn chunk_images(n: usize, pixels: usize) -> usize {
    (CHUNK_ROWS / pixels.max(1)).clamp(1, n.div_ceil(4).max(1))
}

/// The image ranges of the chunks of a batch of `n` (see [`chunk_images`]).
pub fn chunks(n: usize, pixels: usize) -> Vec<Range<usize>> {
    let per = chunk_images(n, pixels);
    (0..n.div_ceil(per))
        .map(|k| k * per..((k + 1) * per).min(n))
        .collect()
}

/// `f(&mut out[i], src[i])` for every element of two maps of the same shape, on rayon's
/// threads in blocks of whole images.
pub fn par_zip<T: Real>(out: &mut [T], src: &[T], d: Dims, f: impl Fn(&mut T, T) + Sync) {
    assert_eq!(out.len(), src.len(), "two maps of the same shape");
    let block = d.image().max(1) * 8;
    out.par_chunks_mut(block)
        .zip(src.par_chunks(block))
        .for_each(|(o, s)| o.iter_mut().zip(s).for_each(|(v, x)| f(v, *x)));
}

/// Per-channel sums of `f(i, ch)` over the flat NHWC indices `i` of a batch of `d` (`ch`, the
/// channel `i % c`), in f64, summed chunk by chunk in a fixed order: deterministic.
pub fn channel_sums(d: Dims, f: impl Fn(usize, usize) -> f64 + Sync) -> Vec<f64> {
    let parts: Vec<Vec<f64>> = chunks(d.n, d.pixels())
        .into_par_iter()
        .map(|r| {
            let mut acc = vec![0.0f64; d.c];
            for px in r.start * d.pixels()..r.end * d.pixels() {
                let base = px * d.c;
                for (ch, a) in acc.iter_mut().enumerate() {
                    *a += f(base + ch, ch);
                }
            }
            acc
        })
        .collect();
    let mut total = vec![0.0f64; d.c];
    for p in parts {
        total.iter_mut().zip(p).for_each(|(t, v)| *t += v);
    }
    total
}

/// Per-channel sums `(u, v)` that `f(base, a_px, b_px, u, v)` adds to, pixel by pixel, while
/// it writes the pixel's values `a_px` of `a` (and `b_px` of `b`, when given; `base` is the
/// flat index of the pixel's channel 0): a map pass and two channel sums in one pass over
/// memory, with the pixel's channels as slices so that `f`'s loops vectorize. The sums run
/// in [`channel_sums`]'s order (chunk by chunk, pixel by pixel, the chunks' parts added in
/// chunk order): deterministic.
pub fn map_sums2<T: Real>(
    a: &mut [T],
    b: Option<&mut [T]>,
    d: Dims,
    f: impl Fn(usize, &mut [T], Option<&mut [T]>, &mut [f64], &mut [f64]) + Sync,
) -> (Vec<f64>, Vec<f64>) {
    map_sums2_chunks(a, b, d, |base, ac, mut bc, u, v| {
        for (p, px) in ac.chunks_mut(d.c).enumerate() {
            let bp = bc.as_deref_mut().map(|b| &mut b[p * d.c..(p + 1) * d.c]);
            f(base + p * d.c, px, bp, u, v);
        }
    })
}

/// [`map_sums2`] a chunk at a time: `f(base, a_chunk, b_chunk, u, v)` runs over the chunk's
/// pixels itself (`base`: the flat index of its first value; `u`, `v` start at zero), so that
/// it can keep the sums in registers ([`super::wide`]).
pub fn map_sums2_chunks<T: Real>(
    a: &mut [T],
    b: Option<&mut [T]>,
    d: Dims,
    f: impl Fn(usize, &mut [T], Option<&mut [T]>, &mut [f64], &mut [f64]) + Sync,
) -> (Vec<f64>, Vec<f64>) {
    let per = chunk_images(d.n, d.pixels()) * d.image();
    let a = &mut a[..d.len()];
    let bs: Vec<Option<&mut [T]>> = match b {
        Some(b) => b[..d.len()].chunks_mut(per).map(Some).collect(),
        None => a.chunks(per).map(|_| None).collect(),
    };
    let parts: Vec<Vec<f64>> = a
        .par_chunks_mut(per)
        .zip(bs)
        .enumerate()
        .map(|(k, (ac, bc))| {
            let mut acc = vec![0.0f64; 2 * d.c];
            let (u, v) = acc.split_at_mut(d.c);
            f(k * per, ac, bc, u, v);
            acc
        })
        .collect();
    let mut total = vec![0.0f64; 2 * d.c];
    for p in parts {
        total.iter_mut().zip(p).for_each(|(t, v)| *t += v);
    }
    let second = total.split_off(d.c);
    (total, second)
}

/// `dst = src + shift` (a plain copy when `shift` is zero): the one rounding of `x + shift`
/// that a pass of its own would make, so a convolution of `x + shift` built from it is the
/// same bit for bit as one of the materialized sum (Fixup's scalar biases, folded into the
/// convolution's padded copy or im2col matrix).
#[inline]
pub fn copy_shifted<T: Real>(dst: &mut [T], src: &[T], shift: T) {
    if shift == T::of(0.0) {
        dst.copy_from_slice(src);
    } else {
        dst.iter_mut().zip(src).for_each(|(d, s)| *d = *s + shift);
    }
}

/// The sum of `f(i)` over all flat indices of `d` (deterministic, as [`channel_sums`]).
pub fn total_sum(d: Dims, f: impl Fn(usize) -> f64 + Sync) -> f64 {
    channel_sums(d, |i, _| f(i)).iter().sum()
}

/// He et al.'s option-A shortcut from `input` to `output` maps: the identity when the shapes
/// agree; otherwise every second pixel (from the first) with the channels zero-padded.
#[derive(Clone, Copy, Debug)]
pub struct Shortcut {
    pub input: Dims,
    pub output: Dims,
}

impl Shortcut {
    pub fn downsamples(&self) -> bool {
        self.input != self.output
    }

    /// The values of `x` that the output pixel at flat index `base` (its channel 0) reads:
    /// all its channels for the identity; for a downsampling shortcut the first
    /// [`Self::carried`] channels (the rest are zero padding), from input pixel `(2i, 2j)`.
    #[inline(always)]
    pub fn pixel<'a, T>(&self, x: &'a [T], base: usize) -> &'a [T] {
        if !self.downsamples() {
            return &x[base..base + self.output.c];
        }
        let (out, inp) = (self.output, self.input);
        let p = base / out.c;
        let (b, rest) = (p / out.pixels(), p % out.pixels());
        let (i, j) = (rest / out.w, rest % out.w);
        let at = ((b * inp.h + 2 * i) * inp.w + 2 * j) * inp.c;
        &x[at..at + inp.c]
    }

    /// Channels the shortcut carries (the rest are zero padding).
    pub fn carried(&self) -> usize {
        self.input.c
    }

    /// `dx (+)= S^T dy`: the shortcut's adjoint. `accumulate = false` overwrites `dx` (zero
    /// where nothing maps).
    pub fn adjoint<T: Real>(&self, dy: &[T], dx: &mut [T], accumulate: bool) {
        if !self.downsamples() {
            let image = self.input.image();
            dx.par_chunks_mut(image * 8)
                .zip(dy.par_chunks(image * 8))
                .for_each(|(x, y)| {
                    if accumulate {
                        x.iter_mut().zip(y).for_each(|(a, b)| *a += *b);
                    } else {
                        x.copy_from_slice(y);
                    }
                });
            return;
        }
        let (inp, out) = (self.input, self.output);
        dx.par_chunks_mut(inp.image())
            .enumerate()
            .for_each(|(b, img)| {
                if !accumulate {
                    img.iter_mut().for_each(|v| *v = T::of(0.0));
                }
                for i in 0..out.h {
                    for j in 0..out.w {
                        let src = ((b * out.h + i) * out.w + j) * out.c;
                        let dst = ((2 * i) * inp.w + 2 * j) * inp.c;
                        for ch in 0..inp.c {
                            img[dst + ch] += dy[src + ch];
                        }
                    }
                }
            });
    }
}

/// Global average pooling: `a[b][c] = (1 / hw) sum_p x[b][p][c]`, as `[n, c]` row-major.
pub fn pool<T: Real>(x: &[T], d: Dims) -> Vec<T> {
    let inv = 1.0 / d.pixels() as f64;
    let mut out = vec![T::of(0.0); d.n * d.c];
    out.par_chunks_mut(d.c).enumerate().for_each(|(b, row)| {
        let mut acc = vec![0.0f64; d.c];
        for p in 0..d.pixels() {
            let at = (b * d.pixels() + p) * d.c;
            acc.iter_mut()
                .zip(&x[at..at + d.c])
                .for_each(|(a, v)| *a += v.f64());
        }
        row.iter_mut()
            .zip(acc)
            .for_each(|(r, a)| *r = T::of(a * inv));
    });
    out
}

/// The adjoint of [`pool`]: `dx[b][p][c] = da[b][c] / hw`.
pub fn unpool<T: Real>(da: &[T], d: Dims, dx: &mut [T]) {
    let inv = T::of(1.0 / d.pixels() as f64);
    dx.par_chunks_mut(d.image())
        .enumerate()
        .for_each(|(b, img)| {
            let row = &da[b * d.c..(b + 1) * d.c];
            for px in img.chunks_mut(d.c) {
                px.iter_mut().zip(row).for_each(|(v, a)| *v = *a * inv);
            }
        });
}

/// Flat rows `[n, c h w]` (CHW per row, the data sets' layout) as NHWC maps in `T`.
pub fn from_rows<T: Real>(x: &[f64], d: Dims, out: &mut [T]) {
    let (hw, chw) = (d.pixels(), d.image());
    out.par_chunks_mut(chw).enumerate().for_each(|(b, img)| {
        let row = &x[b * chw..(b + 1) * chw];
        for p in 0..hw {
            for ch in 0..d.c {
                img[p * d.c + ch] = T::of(row[ch * hw + p]);
            }
        }
    });
}
