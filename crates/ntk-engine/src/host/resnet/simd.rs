//! The 3x3, stride-1, padding-1 convolution of f32 NHWC maps as a direct register-blocked
//! loop (AVX2 + FMA), without the im2col matrix:
//!
//! `y[b, i, j, co] (+)= sum_{kh, kw, ci} x_pad[b, i + kh, j + kw, ci] wd[kh, kw, ci, co]`,
//!
//! with `x_pad` the input maps zero-padded by one pixel on every side (copied once per chunk
//! of images) and the weights laid out `wd[tap, c_in, c_out]` (`c_out` fastest, so sixteen
//! output channels are two 8-lane registers). A block of up to six output pixels of one row
//! keeps its `6 x 16` accumulators in twelve registers; each input value is broadcast once
//! per tap and multiplied into both halves of the weight row. That is 12 FMAs per two weight
//! loads and six broadcasts: the FMA units, not the loads, set the pace, where the im2col
//! route writes the input nine times, OpenBLAS packs it once more, and the skinny GEMM
//! (`rows x 144 x 16` at the first stage) keeps the FMA units half idle.
//!
//! The same code computes the input gradient of a stride-1 convolution: a convolution of
//! `dy` with the flipped filter, `wd'[t, co, ci] = W[co, 8 - t, ci]` ([`adjoint_weights`]).
//! The sums run in a fixed order (taps, then input channels), so results are deterministic.
//! [`available`] says whether this CPU runs it; otherwise (and for f64, stride 2, or output
//! channels not a multiple of 16) [`super::conv`] uses im2col. `NTK_HOST_CONV=im2col` in
//! the environment turns it off (for A/B benchmarks). Where the CPU has AVX-512F,
//! [`super::avx512`]'s 16-lane blocks compute the same sums in the same order instead (the
//! same bits; `NTK_HOST_CONV=avx2` keeps these).

use super::avx512::{self, Shape};

/// Output channels per register block: two 8-lane registers.
pub const LANES: usize = 16;
/// Output pixels per register block: `2 x 6` accumulators, two weight registers and one
/// broadcast fill 15 of the 16 AVX2 registers.
const PIXELS: usize = 6;

pub use super::cpu::available;

/// Whether a convolution to `c_out` channels at `stride` can take the direct convolution.
pub fn applies(stride: usize, c_out: usize) -> bool {
    stride == 1 && c_out.is_multiple_of(LANES) && c_out > 0 && available()
}

/// `wd[t, ci, co] = W[co, t, ci]` from the engine's `[c_out, 3, 3, c_in]` weights.
pub fn forward_weights(w: &[f32], c_in: usize, c_out: usize) -> Vec<f32> {
    let mut out = vec![0.0; w.len()];
    for co in 0..c_out {
        for t in 0..9 {
            for ci in 0..c_in {
                out[(t * c_in + ci) * c_out + co] = w[(co * 9 + t) * c_in + ci];
            }
        }
    }
    out
}

/// `wd'[t, co, ci] = W[co, 8 - t, ci]`: the filter whose convolution of `dy` is the input
/// gradient of a stride-1 convolution with `W` (maps `c_out` channels back to `c_in`).
pub fn adjoint_weights(w: &[f32], c_in: usize, c_out: usize) -> Vec<f32> {
    let mut out = vec![0.0; w.len()];
    for co in 0..c_out {
        for t in 0..9 {
            for ci in 0..c_in {
                out[((8 - t) * c_out + co) * c_in + ci] = w[(co * 9 + t) * c_in + ci];
            }
        }
    }
    out
}

/// Values of the padded copy of `n` maps of `h x w x c`.
pub fn padded_len(n: usize, h: usize, w: usize, c: usize) -> usize {
    n * (h + 2) * (w + 2) * c
}

/// `y (+)= conv(x + shift, wd)` for `n` images of `h x w x c_in` to `h x w x c_out` (stride
/// 1, zero padding 1: `shift` is added on the maps, not on their padding; Fixup's scalar
/// biases before a convolution), `wd` from [`forward_weights`] or [`adjoint_weights`], `pad`
/// scratch of [`padded_len`] values. Adds to `y` when `accumulate`, overwrites it otherwise.
///
/// # Panics
/// If the direct convolution is not [`available`], `c_out` is not a multiple of [`LANES`], or a buffer
/// has the wrong length.
#[allow(clippy::too_many_arguments)]
pub fn conv(
    x: &[f32],
    shift: f32,
    n: usize,
    h: usize,
    w: usize,
    c_in: usize,
    wd: &[f32],
    c_out: usize,
    y: &mut [f32],
    accumulate: bool,
    pad: &mut [f32],
) {
    let s = Shape {
        n,
        h,
        w,
        c_in,
        c_out,
    };
    let pad = checked_pad(x, shift, s, y.len(), wd.len(), pad);
    if avx512::available() {
        avx512::conv(pad, s, wd, y, accumulate);
    } else {
        conv_avx2(pad, s, wd, y, accumulate);
    }
}

/// [`conv`] on AVX2 from the padded maps `pad` (checked by the caller).
fn conv_avx2(pad: &[f32], s: Shape, wd: &[f32], y: &mut [f32], accumulate: bool) {
    let Shape {
        n,
        h,
        w,
        c_in,
        c_out,
    } = s;
    let row = (w + 2) * c_in;
    for b in 0..n {
        for i in 0..h {
            for cb in (0..c_out).step_by(LANES) {
                for j0 in (0..w).step_by(PIXELS) {
                    let xp = ((b * (h + 2) + i) * (w + 2) + j0) * c_in;
                    let yp = ((b * h + i) * w + j0) * c_out + cb;
                    let block = Block {
                        x: &pad[xp..],
                        row,
                        c_in,
                        wd: &wd[cb..],
                        c_out,
                    };
                    let y = &mut y[yp..];
                    // SAFETY: `available()` checked AVX2 and FMA above; the block reads
                    // `x[.. 2 row + (J + 1) c_in + c_in]` (inside the padded map: at most
                    // the pixel after the row's last, `(j0 + J + 1) <= w + 1`), `wd[..
                    // (8 c_in + c_in - 1) c_out + 16]` and writes `y[.. (J - 1) c_out + 16]`,
                    // all within the slices (asserted lengths above).
                    unsafe {
                        match (w - j0).min(PIXELS) {
                            6 => block.run::<6>(y, accumulate),
                            5 => block.run::<5>(y, accumulate),
                            4 => block.run::<4>(y, accumulate),
                            3 => block.run::<3>(y, accumulate),
                            2 => block.run::<2>(y, accumulate),
                            _ => block.run::<1>(y, accumulate),
                        }
                    }
                }
            }
        }
    }
}

/// The weight gradient of `y = conv(x + shift, W)` (stride 1, zero padding 1, `shift` on the
/// maps as in [`conv`]) from `dy`:
///
/// `dW[co, kh, kw, ci] = sum_{b, i, j} x_pad[b, i + kh, j + kw, ci] dy[b, i, j, co]`,
/// `x_pad` the padded maps of `x + shift`,
///
/// written (overwritten) in the engine's `[c_out, 3, 3, c_in]` layout. Per tap, a block of
/// up to six input channels x sixteen output channels stays in twelve registers while the
/// sum runs over every pixel of the `n` images (one `dy` pixel loaded into two registers,
/// six broadcasts, twelve FMAs). `pad` is scratch of [`padded_len`]`(n, h, w, c_in)` values.
///
/// # Panics
/// As [`conv`].
#[allow(clippy::too_many_arguments)]
pub fn weight_grad(
    x: &[f32],
    shift: f32,
    n: usize,
    h: usize,
    w: usize,
    c_in: usize,
    dy: &[f32],
    c_out: usize,
    dw: &mut [f32],
    pad: &mut [f32],
) {
    let s = Shape {
        n,
        h,
        w,
        c_in,
        c_out,
    };
    let pad = checked_pad(x, shift, s, dy.len(), dw.len(), pad);
    if avx512::available() {
        avx512::weight_grad(pad, s, dy, dw);
    } else {
        weight_grad_avx2(pad, s, dy, dw);
    }
}

/// [`weight_grad`] on AVX2 from the padded maps `pad` (checked by the caller).
fn weight_grad_avx2(pad: &[f32], s: Shape, dy: &[f32], dw: &mut [f32]) {
    let Shape {
        n,
        h,
        w,
        c_in,
        c_out,
    } = s;
    let mut sums = [[0.0f32; LANES]; PIXELS];
    for t in 0..9 {
        let (kh, kw) = (t / 3, t % 3);
        for c0 in (0..c_in).step_by(PIXELS) {
            let block = WeightBlock {
                x: &pad[kh * (w + 2) * c_in + kw * c_in + c0..],
                dy,
                n,
                h,
                w,
                c_in,
                c_out,
            };
            let cs = (c_in - c0).min(PIXELS);
            for cb in (0..c_out).step_by(LANES) {
                // SAFETY: `available()` checked AVX2 and FMA; the block reads the padded
                // maps at `(b, i + kh, j + kw, c0 + cc)` with `i < h`, `j < w`, `kh, kw <= 2`
                // and `c0 + cc < c_in`, and `dy[.., cb..cb + 16]` per pixel, all in bounds.
                unsafe {
                    match cs {
                        6 => block.run::<6>(cb, &mut sums),
                        5 => block.run::<5>(cb, &mut sums),
                        4 => block.run::<4>(cb, &mut sums),
                        3 => block.run::<3>(cb, &mut sums),
                        2 => block.run::<2>(cb, &mut sums),
                        _ => block.run::<1>(cb, &mut sums),
                    }
                }
                for (cc, lanes) in sums.iter().take(cs).enumerate() {
                    for (o, v) in lanes.iter().enumerate() {
                        dw[((cb + o) * 9 + t) * c_in + c0 + cc] = *v;
                    }
                }
            }
        }
    }
}

/// One register block of [`weight_grad`]: `x` at the padded pixel `(0, kh, kw)` and the
/// block's first input channel.
struct WeightBlock<'a> {
    x: &'a [f32],
    dy: &'a [f32],
    n: usize,
    h: usize,
    w: usize,
    c_in: usize,
    c_out: usize,
}

impl WeightBlock<'_> {
    /// `sums[cc][o] = sum_p x[p, cc] dy[p, cb + o]` for `cc < C`, `o < 16`.
    ///
    /// # Safety
    /// AVX2 and FMA must be present, and the slices long enough (see [`weight_grad`]).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn run<const C: usize>(&self, cb: usize, sums: &mut [[f32; LANES]; PIXELS]) {
        use std::arch::x86_64::*;
        let (xp, dp) = (self.x.as_ptr(), self.dy.as_ptr());
        let (row, w) = ((self.w + 2) * self.c_in, self.w);
        let mut acc = [[_mm256_setzero_ps(); 2]; C];
        for b in 0..self.n {
            for i in 0..self.h {
                // SAFETY: AVX2 and FMA are enabled for this fn (the caller checked them, as
                // its `# Safety` asks). By that contract `self.x` starts at padded value
                // `(0, kh, kw, c0)` and holds the padded maps to their end, so `xr + j c_in +
                // cc` (`b < n`, `i < h`, `j < w`, `cc < C`) is padded value `(b, i + kh, j +
                // kw, c0 + cc)`, inside them; `self.dy` holds `n h w c_out` values and `cb +
                // 16 <= c_out`, so `dr + j c_out + 16` ends inside it. Unaligned loads and
                // broadcasts only.
                unsafe {
                    let xr = xp.add((b * (self.h + 2) + i) * row);
                    let dr = dp.add(((b * self.h + i) * w) * self.c_out + cb);
                    for j in 0..w {
                        let d0 = _mm256_loadu_ps(dr.add(j * self.c_out));
                        let d1 = _mm256_loadu_ps(dr.add(j * self.c_out + 8));
                        let xj = xr.add(j * self.c_in);
                        for (cc, a) in acc.iter_mut().enumerate() {
                            let xv = _mm256_broadcast_ss(&*xj.add(cc));
                            a[0] = _mm256_fmadd_ps(xv, d0, a[0]);
                            a[1] = _mm256_fmadd_ps(xv, d1, a[1]);
                        }
                    }
                }
            }
        }
        for (a, out) in acc.iter().zip(sums.iter_mut()) {
            // SAFETY: AVX is enabled for this fn; `out` is a `[f32; 16]` borrowed mutably,
            // and the two unaligned stores write its values 0..8 and 8..16.
            unsafe {
                _mm256_storeu_ps(out.as_mut_ptr(), a[0]);
                _mm256_storeu_ps(out.as_mut_ptr().add(8), a[1]);
            }
        }
    }

    /// Never called: [`available`] is false off x86-64.
    ///
    /// # Safety
    /// None: it only panics; `unsafe` to match the x86-64 fn.
    #[cfg(not(target_arch = "x86_64"))]
    unsafe fn run<const C: usize>(&self, _cb: usize, _sums: &mut [[f32; LANES]; PIXELS]) {
        unreachable!("the direct convolution is x86-64 only")
    }
}

/// Checks what [`conv`] and [`weight_grad`] share (the direct convolution available, `c_out` a multiple
/// of 16, the lengths of the input maps `x` of shape `s`, of the output maps `y_len` and of
/// the weights `w_len`), then pads `x + shift` into `pad`: the padded maps.
fn checked_pad<'a>(
    x: &[f32],
    shift: f32,
    s: Shape,
    y_len: usize,
    w_len: usize,
    pad: &'a mut [f32],
) -> &'a mut [f32] {
    let Shape {
        n,
        h,
        w,
        c_in,
        c_out,
    } = s;
    assert!(
        available() && c_out.is_multiple_of(LANES),
        "the direct convolution applies"
    );
    assert_eq!(x.len(), n * h * w * c_in, "input maps");
    assert_eq!(y_len, n * h * w * c_out, "output maps");
    assert_eq!(w_len, 9 * c_in * c_out, "weights");
    let pad = &mut pad[..padded_len(n, h, w, c_in)];
    pad_maps(x, shift, [n, h, w, c_in], pad);
    pad
}

/// `pad[b, i + 1, j + 1, c] = x[b, i, j, c] + shift`, zero on the one-pixel border.
fn pad_maps(x: &[f32], shift: f32, [n, h, w, c]: [usize; 4], pad: &mut [f32]) {
    let (row_in, row_out) = (w * c, (w + 2) * c);
    for b in 0..n {
        let img = &mut pad[b * (h + 2) * row_out..(b + 1) * (h + 2) * row_out];
        img[..row_out].fill(0.0);
        img[(h + 1) * row_out..].fill(0.0);
        for i in 0..h {
            let dst = &mut img[(i + 1) * row_out..(i + 2) * row_out];
            dst[..c].fill(0.0);
            dst[(w + 1) * c..].fill(0.0);
            let src = &x[(b * h + i) * row_in..(b * h + i + 1) * row_in];
            super::map::copy_shifted(&mut dst[c..(w + 1) * c], src, shift);
        }
    }
}

/// One register block's operands: `x` at the padded pixel of tap (0, 0) of the block's first
/// output pixel, `row` values per padded row, `wd` at the block's first output channel.
struct Block<'a> {
    x: &'a [f32],
    row: usize,
    c_in: usize,
    wd: &'a [f32],
    c_out: usize,
}

impl Block<'_> {
    /// `J` output pixels x 16 output channels into `y` (at the block's first value, pixels
    /// `c_out` apart).
    ///
    /// # Safety
    /// AVX2 and FMA must be present, and the slices long enough (see [`conv`]).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn run<const J: usize>(&self, y: &mut [f32], accumulate: bool) {
        use std::arch::x86_64::*;
        let (xp, wp, yp) = (self.x.as_ptr(), self.wd.as_ptr(), y.as_mut_ptr());
        let mut acc = [[_mm256_setzero_ps(); 2]; J];
        for kh in 0..3 {
            for kw in 0..3 {
                // SAFETY: AVX2 and FMA are enabled for this fn (the caller checked them, as
                // its `# Safety` asks). By that contract `self.x` starts at the padded value
                // of tap (0, 0) of the block's first pixel, with at least two padded rows and
                // `J + 1` pixels after it, so `xr + jj c_in + c` (`kh, kw <= 2`, `jj < J`, `c
                // < c_in`) stays inside; `self.wd` starts at output channel `cb` with `cb +
                // 16 <= c_out`, so `wt + c c_out + 16` ends inside its `9 c_in c_out - cb`
                // values. Unaligned loads and broadcasts only.
                unsafe {
                    let xr = xp.add(kh * self.row + kw * self.c_in);
                    let wt = wp.add((kh * 3 + kw) * self.c_in * self.c_out);
                    for c in 0..self.c_in {
                        let w0 = _mm256_loadu_ps(wt.add(c * self.c_out));
                        let w1 = _mm256_loadu_ps(wt.add(c * self.c_out + 8));
                        for (jj, a) in acc.iter_mut().enumerate() {
                            let xv = _mm256_broadcast_ss(&*xr.add(jj * self.c_in + c));
                            a[0] = _mm256_fmadd_ps(xv, w0, a[0]);
                            a[1] = _mm256_fmadd_ps(xv, w1, a[1]);
                        }
                    }
                }
            }
        }
        for (jj, a) in acc.iter().enumerate() {
            // SAFETY: AVX is enabled for this fn; by its `# Safety` contract `y` holds the
            // block's `J` pixels `c_out` apart, 16 channels each, so `p + 16` for `jj < J`
            // ends inside `y`, borrowed mutably. Unaligned loads and stores.
            unsafe {
                let p = yp.add(jj * self.c_out);
                let (mut lo, mut hi) = (a[0], a[1]);
                if accumulate {
                    lo = _mm256_add_ps(lo, _mm256_loadu_ps(p));
                    hi = _mm256_add_ps(hi, _mm256_loadu_ps(p.add(8)));
                }
                _mm256_storeu_ps(p, lo);
                _mm256_storeu_ps(p.add(8), hi);
            }
        }
    }

    /// Never called: [`available`] is false off x86-64.
    ///
    /// # Safety
    /// None: it only panics; `unsafe` to match the x86-64 fn.
    #[cfg(not(target_arch = "x86_64"))]
    unsafe fn run<const J: usize>(&self, _y: &mut [f32], _accumulate: bool) {
        unreachable!("the direct convolution is x86-64 only")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic values in about [-1, 1].
    fn wave(len: usize, seed: usize) -> Vec<f32> {
        (0..len)
            .map(|i| (((i * 7919 + seed * 104_729) % 2003) as f32 / 1001.5 - 1.0) * 0.9)
            .collect()
    }

    /// The convolution summed directly in f64 from `W[co, 3, 3, ci]`.
    fn reference(
        x: &[f32],
        n: usize,
        h: usize,
        w: usize,
        ci: usize,
        wt: &[f32],
        co: usize,
    ) -> Vec<f64> {
        let mut y = vec![0.0; n * h * w * co];
        for b in 0..n {
            for i in 0..h {
                for j in 0..w {
                    for o in 0..co {
                        let mut acc = 0.0f64;
                        for kh in 0..3 {
                            for kw in 0..3 {
                                let (hi, wi) = ((i + kh) as isize - 1, (j + kw) as isize - 1);
                                if hi < 0 || wi < 0 || hi >= h as isize || wi >= w as isize {
                                    continue;
                                }
                                for c in 0..ci {
                                    let xv = x[((b * h + hi as usize) * w + wi as usize) * ci + c];
                                    acc += f64::from(wt[(o * 9 + kh * 3 + kw) * ci + c])
                                        * f64::from(xv);
                                }
                            }
                        }
                        y[((b * h + i) * w + j) * co + o] = acc;
                    }
                }
            }
        }
        y
    }

    /// `dW[co, kh, kw, ci] = sum_{b, i, j} x[b, i + kh - 1, j + kw - 1, ci] dy[b, i, j, co]`
    /// in f64 (zero outside the map).
    fn reference_weight_grad(
        x: &[f32],
        n: usize,
        h: usize,
        w: usize,
        ci: usize,
        dy: &[f32],
        co: usize,
    ) -> Vec<f64> {
        let mut dw = vec![0.0; 9 * ci * co];
        for b in 0..n {
            for i in 0..h {
                for j in 0..w {
                    for t in 0..9 {
                        let (hi, wi) = ((i + t / 3) as isize - 1, (j + t % 3) as isize - 1);
                        if hi < 0 || wi < 0 || hi >= h as isize || wi >= w as isize {
                            continue;
                        }
                        for c in 0..ci {
                            let xv =
                                f64::from(x[((b * h + hi as usize) * w + wi as usize) * ci + c]);
                            for o in 0..co {
                                dw[(o * 9 + t) * ci + c] +=
                                    xv * f64::from(dy[((b * h + i) * w + j) * co + o]);
                            }
                        }
                    }
                }
            }
        }
        dw
    }

    /// The direct convolution against the f64 sum, on map widths that leave every remainder block
    /// (1..6 pixels; 1..6 input channels for the weight gradient) and on 16, 32 and 48
    /// output channels; the adjoint weights by the dot-product identity
    /// `<conv(x, W), dy> = <x, conv(dy, W')>`; the weight gradient against `<conv(x, e_c), dy>`. f32 sums of up to
    /// 9 x 24 products of values below 1: relative errors of a few 1e-7, held to 1e-5.
    #[test]
    fn direct_convolution_matches_the_sum_and_its_adjoint() {
        if !available() {
            eprintln!("no AVX2 + FMA here: the direct convolution is not used, nothing to test");
            return;
        }
        for (n, h, w, ci, co) in [
            (2, 5, 7, 3, 16),
            (1, 6, 12, 16, 32),
            (3, 4, 11, 24, 48),
            (1, 1, 1, 5, 16),
        ] {
            let x = wave(n * h * w * ci, 1);
            let wt = wave(9 * ci * co, 2);
            let mut y = vec![0.0f32; n * h * w * co];
            let mut pad = vec![f32::NAN; padded_len(n, h, w, ci)];
            conv(
                &x,
                0.0,
                n,
                h,
                w,
                ci,
                &forward_weights(&wt, ci, co),
                co,
                &mut y,
                false,
                &mut pad,
            );
            let want = reference(&x, n, h, w, ci, &wt, co);
            let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            for (a, b) in y.iter().zip(&want) {
                assert!((f64::from(*a) - b).abs() <= 1e-5 * scale, "{a} vs {b}");
            }
            // Accumulating adds the same values again.
            let mut y2 = y.clone();
            conv(
                &x,
                0.0,
                n,
                h,
                w,
                ci,
                &forward_weights(&wt, ci, co),
                co,
                &mut y2,
                true,
                &mut pad,
            );
            for (a, b) in y2.iter().zip(&y) {
                assert!((a - 2.0 * b).abs() <= 1e-6 * scale as f32);
            }
            // The weight gradient against its defining sum in f64.
            let dy = wave(y.len(), 3);
            let mut dw = vec![f32::NAN; wt.len()];
            weight_grad(&x, 0.0, n, h, w, ci, &dy, co, &mut dw, &mut pad);
            let want = reference_weight_grad(&x, n, h, w, ci, &dy, co);
            let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            for (a, b) in dw.iter().zip(&want) {
                assert!((f64::from(*a) - b).abs() <= 1e-5 * scale, "dW: {a} vs {b}");
            }
            if ci.is_multiple_of(LANES) {
                let mut dx = vec![0.0f32; x.len()];
                let mut pad = vec![f32::NAN; padded_len(n, h, w, co)];
                conv(
                    &dy,
                    0.0,
                    n,
                    h,
                    w,
                    co,
                    &adjoint_weights(&wt, ci, co),
                    ci,
                    &mut dx,
                    false,
                    &mut pad,
                );
                let lhs: f64 = y
                    .iter()
                    .zip(&dy)
                    .map(|(a, b)| f64::from(*a) * f64::from(*b))
                    .sum();
                let rhs: f64 = x
                    .iter()
                    .zip(&dx)
                    .map(|(a, b)| f64::from(*a) * f64::from(*b))
                    .sum();
                assert!(
                    (lhs - rhs).abs() <= 1e-5 * lhs.abs().max(1.0),
                    "{lhs} vs {rhs}"
                );
            }
        }
    }

    /// A shift folded into the padded copy (`conv(x + b)`, `b` on the maps, zero padding)
    /// gives the same bits as the convolution of the materialized maps `x + b`, forward and
    /// weight gradient; and it differs from shifting the padding too (the border pixels see
    /// fewer shifted taps), so the test would see a shift applied in the wrong place.
    #[test]
    fn shift_in_the_padded_copy_is_the_materialized_sum() {
        if !available() {
            eprintln!("no AVX2 + FMA here: the direct convolution is not used, nothing to test");
            return;
        }
        let (n, h, w, ci, co, b) = (2, 5, 7, 16, 32, 0.3125f32);
        let x = wave(n * h * w * ci, 4);
        let xb: Vec<f32> = x.iter().map(|v| v + b).collect();
        let wd = forward_weights(&wave(9 * ci * co, 5), ci, co);
        let dy = wave(n * h * w * co, 6);
        let mut pad = vec![f32::NAN; padded_len(n, h, w, ci)];
        let (mut y1, mut y2) = (vec![0.0f32; dy.len()], vec![0.0f32; dy.len()]);
        conv(&x, b, n, h, w, ci, &wd, co, &mut y1, false, &mut pad);
        conv(&xb, 0.0, n, h, w, ci, &wd, co, &mut y2, false, &mut pad);
        assert_eq!(y1, y2, "forward");
        let (mut d1, mut d2) = (vec![0.0f32; wd.len()], vec![0.0f32; wd.len()]);
        weight_grad(&x, b, n, h, w, ci, &dy, co, &mut d1, &mut pad);
        weight_grad(&xb, 0.0, n, h, w, ci, &dy, co, &mut d2, &mut pad);
        assert_eq!(d1, d2, "weight gradient");
        // Against the f64 sum of the shifted maps (zero outside them).
        let want = reference(&xb, n, h, w, ci, &wave(9 * ci * co, 5), co);
        let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for (a, r) in y1.iter().zip(&want) {
            assert!((f64::from(*a) - r).abs() <= 1e-5 * scale, "{a} vs {r}");
        }
    }

    /// The AVX-512 blocks ([`avx512`]) compute the AVX2 blocks' sums in the same order: the
    /// same bits, forward (overwriting and accumulating) and weight gradient, on every
    /// remainder block (1..8 pixels, 1..8 input channels) and both register widths (16 and
    /// 32 output channels per block).
    #[test]
    fn avx512_blocks_are_the_avx2_blocks_bit_for_bit() {
        if !avx512::available() {
            eprintln!("no AVX-512F here (or NTK_HOST_CONV set): only the AVX2 code runs");
            return;
        }
        for (n, h, w, ci, co) in [
            (2, 5, 7, 3, 16),
            (1, 6, 13, 16, 32),
            (3, 4, 11, 24, 48),
            (1, 3, 9, 13, 64),
            (1, 1, 1, 5, 16),
        ] {
            let s = Shape {
                n,
                h,
                w,
                c_in: ci,
                c_out: co,
            };
            let x = wave(n * h * w * ci, 7);
            let wd = forward_weights(&wave(9 * ci * co, 8), ci, co);
            let dy = wave(n * h * w * co, 9);
            let mut pad = vec![f32::NAN; padded_len(n, h, w, ci)];
            let pad = checked_pad(&x, 0.25, s, dy.len(), wd.len(), &mut pad);
            let what = format!("{n}x{h}x{w}x{ci} -> {co}");
            for accumulate in [false, true] {
                let (mut y2, mut y5) = (dy.clone(), dy.clone());
                conv_avx2(pad, s, &wd, &mut y2, accumulate);
                avx512::conv(pad, s, &wd, &mut y5, accumulate);
                assert_eq!(y2, y5, "{what}: forward, accumulate {accumulate}");
            }
            let (mut d2, mut d5) = (vec![0.0f32; wd.len()], vec![1.0f32; wd.len()]);
            weight_grad_avx2(pad, s, &dy, &mut d2);
            avx512::weight_grad(pad, s, &dy, &mut d5);
            assert_eq!(d2, d5, "{what}: weight gradient");
        }
    }
}
