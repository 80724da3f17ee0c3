//! The direct 3x3 convolutions of [`super::simd`] on AVX-512 (16-lane registers, 32 of
//! them), where the CPU has AVX-512F: the same sums in the same order, lane for lane, so the
//! results are the AVX2 code's bit for bit (the tests hold them to that); only the
//! register blocking differs.
//!
//! - **Forward and input gradient** (`y (+)= conv(x_pad, wd)`): a block of up to
//!   [`PIXELS`] output pixels of one row x `16 V` output channels (`V = 2` when `c_out` is a
//!   multiple of 32, else 1) keeps `PIXELS V` accumulators; per input value and tap, one
//!   broadcast and `V` FMAs, per weight row `V` loads. At `V = 2` that is 16 FMAs per ten
//!   loads (the FMA units set the pace); at `V = 1` (16 channels) 8 FMAs per nine loads.
//!   AVX2's block was 12 FMAs of 8 lanes per eight loads: per cycle, the 16-lane FMAs do up
//!   to twice the work where the core has two 512-bit FMA units.
//! - **Weight gradient** (`dW[co, tap, ci] = sum_p x_pad[p + tap, ci] dy[p, co]`): per tap, a
//!   block of up to [`PIXELS`] input channels x `16 V` output channels summed over every
//!   pixel in registers (per pixel `V` loads of `dy`, one broadcast per input channel).
//!
//! `NTK_HOST_CONV=avx2` keeps the AVX2 code (for A/B runs); `NTK_HOST_CONV=im2col` turns
//! both off ([`super::simd::available`]).

/// Output pixels (forward) or input channels (weight gradient) per register block: `8 x 2`
/// accumulators, two weight (or `dy`) registers and one broadcast use 19 of the 32.
pub const PIXELS: usize = 8;

/// Whether the AVX-512 code runs here: x86-64 with AVX-512F, the direct convolution
/// [`super::simd::available`], and not held to AVX2 by `NTK_HOST_CONV=avx2`.
pub fn available() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        let held = std::env::var("NTK_HOST_CONV").is_ok_and(|v| v == "avx2");
        !held && super::cpu::available() && cpu_has_avx512()
    })
}

/// Whether the elementwise passes run their AVX-512 version ([`super::wide`]): x86-64 with
/// AVX-512F, not held to AVX2 by `NTK_HOST_CONV=avx2` (`NTK_HOST_CONV=im2col` leaves them
/// on: they are no convolution).
pub fn available_for_passes() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        let held = std::env::var("NTK_HOST_CONV").is_ok_and(|v| v == "avx2");
        !held && cpu_has_avx512()
    })
}

#[cfg(target_arch = "x86_64")]
fn cpu_has_avx512() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
}

#[cfg(not(target_arch = "x86_64"))]
fn cpu_has_avx512() -> bool {
    false
}

/// 16-lane registers per block: 2 when `c_out` is a multiple of 32.
fn vectors(c_out: usize) -> usize {
    if c_out.is_multiple_of(32) { 2 } else { 1 }
}

/// Calls `$f::<J, V>($args)` for the runtime `$j` in `1..=8` and `$v` in `1..=2`.
macro_rules! dispatch {
    ($f:ident, $j:expr, $v:expr, ($($arg:expr),*)) => {
        match ($j, $v) {
            (8, 2) => $f::<8, 2>($($arg),*),
            (7, 2) => $f::<7, 2>($($arg),*),
            (6, 2) => $f::<6, 2>($($arg),*),
            (5, 2) => $f::<5, 2>($($arg),*),
            (4, 2) => $f::<4, 2>($($arg),*),
            (3, 2) => $f::<3, 2>($($arg),*),
            (2, 2) => $f::<2, 2>($($arg),*),
            (1, 2) => $f::<1, 2>($($arg),*),
            (8, _) => $f::<8, 1>($($arg),*),
            (7, _) => $f::<7, 1>($($arg),*),
            (6, _) => $f::<6, 1>($($arg),*),
            (5, _) => $f::<5, 1>($($arg),*),
            (4, _) => $f::<4, 1>($($arg),*),
            (3, _) => $f::<3, 1>($($arg),*),
            (2, _) => $f::<2, 1>($($arg),*),
            _ => $f::<1, 1>($($arg),*),
        }
    };
}

/// The shapes of one call: `n` images of `h x w`, `c_in` to `c_out` channels.
#[derive(Clone, Copy)]
pub struct Shape {
    pub n: usize,
    pub h: usize,
    pub w: usize,
    pub c_in: usize,
    pub c_out: usize,
}

impl Shape {
    /// Checks that the AVX-512 code runs here and that the padded maps `pad`, the weights (or
    /// weight gradient) of `w_len` values and the output maps (or `dy`) of `y_len` values
    /// hold this shape.
    fn check(&self, pad: &[f32], w_len: usize, y_len: usize) {
        let Self {
            n,
            h,
            w,
            c_in,
            c_out,
        } = *self;
        assert!(available(), "the AVX-512 code runs here");
        assert!(pad.len() >= n * (h + 2) * (w + 2) * c_in, "padded maps");
        assert!(w_len >= 9 * c_in * c_out && y_len >= n * h * w * c_out);
        assert!(c_out.is_multiple_of(16));
    }
}

/// `y (+)= conv(x_pad, wd)` (see [`super::simd::conv`]) from the padded maps `pad`.
///
/// # Panics
/// If [`available`] is false or a buffer is too short for `s`.
pub fn conv(pad: &[f32], s: Shape, wd: &[f32], y: &mut [f32], accumulate: bool) {
    let Shape {
        n,
        h,
        w,
        c_in,
        c_out,
    } = s;
    s.check(pad, wd.len(), y.len());
    let (v, row) = (vectors(c_out), (w + 2) * c_in);
    for b in 0..n {
        for i in 0..h {
            for cb in (0..c_out).step_by(16 * v) {
                for j0 in (0..w).step_by(PIXELS) {
                    let xp = ((b * (h + 2) + i) * (w + 2) + j0) * c_in;
                    let yp = ((b * h + i) * w + j0) * c_out + cb;
                    let j = (w - j0).min(PIXELS);
                    // SAFETY: AVX-512F checked by `available()`; the block reads
                    // `pad[xp + kh row + (jj + kw) c_in + c]` for `kh, kw <= 2`, `jj < j`,
                    // `c < c_in` (inside image b's padded maps: `j0 + jj + kw <= w + 1`),
                    // `wd[(t c_in + c) c_out + cb + 16 v - 1]` for `t < 9` and writes
                    // `y[yp + jj c_out + 16 v - 1]` (inside pixel `j0 + jj` of row i), all
                    // within the lengths `Shape::check` asserted.
                    unsafe {
                        let (x, wt, yo) = (
                            pad.as_ptr().add(xp),
                            wd.as_ptr().add(cb),
                            y.as_mut_ptr().add(yp),
                        );
                        dispatch!(block, j, v, (x, row, c_in, wt, c_out, yo, accumulate));
                    }
                }
            }
        }
    }
}

/// `J` output pixels x `16 V` output channels: `y[jj c_out + o] (+)= sum_{kh, kw, c}
/// x[kh row + (jj + kw) c_in + c] wt[((kh 3 + kw) c_in + c) c_out + o]`, the sum in the
/// order (kh, kw, c) as [`super::simd`]'s AVX2 block.
///
/// # Safety
/// AVX-512F must be present and the pointers valid for the reads and writes above.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn block<const J: usize, const V: usize>(
    x: *const f32,
    row: usize,
    c_in: usize,
    wt: *const f32,
    c_out: usize,
    y: *mut f32,
    accumulate: bool,
) {
    use std::arch::x86_64::*;
    let mut acc = [[_mm512_setzero_ps(); V]; J];
    for kh in 0..3 {
        for kw in 0..3 {
            // SAFETY: AVX-512F is enabled for this fn (the caller checked it, as the `#
            // Safety` asks). By that contract `x` is valid for reads of `x[kh row + (jj +
            // kw) c_in + c]` (`kh, kw <= 2`, `jj < J`, `c < c_in`) and `wt` of `wt[((kh 3
            // + kw) c_in + c) c_out + 16 V - 1]`: exactly the offsets formed here.
            // Unaligned loads only.
            unsafe {
                let xr = x.add(kh * row + kw * c_in);
                let wr = wt.add((kh * 3 + kw) * c_in * c_out);
                for c in 0..c_in {
                    let mut wv = [_mm512_setzero_ps(); V];
                    for (k, r) in wv.iter_mut().enumerate() {
                        *r = _mm512_loadu_ps(wr.add(c * c_out + 16 * k));
                    }
                    for (jj, a) in acc.iter_mut().enumerate() {
                        let xv = _mm512_set1_ps(*xr.add(jj * c_in + c));
                        for (ak, wk) in a.iter_mut().zip(&wv) {
                            *ak = _mm512_fmadd_ps(xv, *wk, *ak);
                        }
                    }
                }
            }
        }
    }
    for (jj, a) in acc.iter().enumerate() {
        for (k, ak) in a.iter().enumerate() {
            // SAFETY: AVX-512F is enabled for this fn; by its `# Safety` contract `y` is
            // valid for reads and writes of `y[jj c_out + o]`, `jj < J`, `o < 16 V`, and
            // `p` covers `o` in `16 k..16 k + 16`, `k < V`. Unaligned loads and stores.
            unsafe {
                let p = y.add(jj * c_out + 16 * k);
                let v = if accumulate {
                    _mm512_add_ps(*ak, _mm512_loadu_ps(p))
                } else {
                    *ak
                };
                _mm512_storeu_ps(p, v);
            }
        }
    }
}

/// Never called: [`available`] is false off x86-64.
///
/// # Safety
/// None: it only panics; `unsafe` to match the x86-64 fn.
#[cfg(not(target_arch = "x86_64"))]
unsafe fn block<const J: usize, const V: usize>(
    _x: *const f32,
    _row: usize,
    _c_in: usize,
    _wt: *const f32,
    _c_out: usize,
    _y: *mut f32,
    _accumulate: bool,
) {
    unreachable!("the direct convolution is x86-64 only")
}

/// The weight gradient (see [`super::simd::weight_grad`]) from the padded maps `pad`, written
/// (overwritten) in the `[c_out, 3, 3, c_in]` layout.
///
/// # Panics
/// If [`available`] is false or a buffer is too short for `s`.
pub fn weight_grad(pad: &[f32], s: Shape, dy: &[f32], dw: &mut [f32]) {
    let Shape { w, c_in, c_out, .. } = s;
    s.check(pad, dw.len(), dy.len());
    let v = vectors(c_out);
    let mut sums = [[0.0f32; 32]; PIXELS];
    for t in 0..9 {
        let (kh, kw) = (t / 3, t % 3);
        for c0 in (0..c_in).step_by(PIXELS) {
            let cs = (c_in - c0).min(PIXELS);
            for cb in (0..c_out).step_by(16 * v) {
                // SAFETY: AVX-512F checked by `available()`; the block reads the padded maps
                // at `(b, i + kh, j + kw, c0 + cc)` with `i < h`, `j < w`, `cc < cs` and
                // `dy[.., cb..cb + 16 v]` per pixel, all within the lengths `Shape::check` asserted.
                unsafe {
                    let x = pad.as_ptr().add(kh * (w + 2) * c_in + kw * c_in + c0);
                    let d = dy.as_ptr().add(cb);
                    dispatch!(weight_block, cs, v, (x, d, s, &mut sums));
                }
                for (cc, lanes) in sums.iter().take(cs).enumerate() {
                    for (o, val) in lanes.iter().take(16 * v).enumerate() {
                        dw[((cb + o) * 9 + t) * c_in + c0 + cc] = *val;
                    }
                }
            }
        }
    }
}

/// `sums[cc][o] = sum_{b, i, j} x[(b (h + 2) + i) row + j c_in + cc] dy[((b h + i) w + j)
/// c_out + o]` for `cc < C`, `o < 16 V`, over the pixels in the order (b, i, j) as the AVX2
/// block.
///
/// # Safety
/// AVX-512F must be present and the pointers valid for those reads.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn weight_block<const C: usize, const V: usize>(
    x: *const f32,
    dy: *const f32,
    s: Shape,
    sums: &mut [[f32; 32]; PIXELS],
) {
    use std::arch::x86_64::*;
    let row = (s.w + 2) * s.c_in;
    let mut acc = [[_mm512_setzero_ps(); V]; C];
    for b in 0..s.n {
        for i in 0..s.h {
            // SAFETY: AVX-512F is enabled for this fn (the caller checked it, as the `#
            // Safety` asks). By that contract `x` is valid for reads of `x[(b (h + 2) + i)
            // row + j c_in + cc]` and `dy` of `dy[((b h + i) w + j) c_out + o]` (`b < n`,
            // `i < h`, `j < w`, `cc < C`, `o < 16 V`): exactly the offsets formed here.
            // Unaligned loads only.
            unsafe {
                let xr = x.add((b * (s.h + 2) + i) * row);
                let dr = dy.add((b * s.h + i) * s.w * s.c_out);
                for j in 0..s.w {
                    let mut dv = [_mm512_setzero_ps(); V];
                    for (k, r) in dv.iter_mut().enumerate() {
                        *r = _mm512_loadu_ps(dr.add(j * s.c_out + 16 * k));
                    }
                    let xj = xr.add(j * s.c_in);
                    for (cc, a) in acc.iter_mut().enumerate() {
                        let xv = _mm512_set1_ps(*xj.add(cc));
                        for (ak, dk) in a.iter_mut().zip(&dv) {
                            *ak = _mm512_fmadd_ps(xv, *dk, *ak);
                        }
                    }
                }
            }
        }
    }
    for (a, out) in acc.iter().zip(sums.iter_mut()) {
        for (k, ak) in a.iter().enumerate() {
            // SAFETY: `out` holds 32 values, `16 k + 16 <= 32`.
            unsafe { _mm512_storeu_ps(out.as_mut_ptr().add(16 * k), *ak) };
        }
    }
}

/// Never called: [`available`] is false off x86-64.
///
/// # Safety
/// None: it only panics; `unsafe` to match the x86-64 fn.
#[cfg(not(target_arch = "x86_64"))]
unsafe fn weight_block<const C: usize, const V: usize>(
    _x: *const f32,
    _dy: *const f32,
    _s: Shape,
    _sums: &mut [[f32; 32]; PIXELS],
) {
    unreachable!("the direct convolution is x86-64 only")
}
