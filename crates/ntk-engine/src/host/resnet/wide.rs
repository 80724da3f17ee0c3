//! The host ResNet's passes over pixels, with the channel count known at compile time and
//! the loop compiled a second time for AVX-512 where the CPU has it
//! ([`super::avx512::available_for_passes`]): [`map_sums2`] (a map written and two f64 sums
//! per channel in one sweep over memory: ReLU's backward with BatchNorm's or Fixup's sums),
//! [`channel_moments`] (BatchNorm's batch statistics of a chunk), and the pixel loops of
//! [`par_pixels`] and [`par_pixels2`] ([`pixels`], [`pixels2`]: BatchNorm's
//! normalization and backward, the activations), whose closures inline into each version.
//!
//! The build targets baseline x86-64 (SSE2), where the sums `u`, `v` (f64, one per channel)
//! go through memory at every pixel, two values an instruction; with `C` fixed and 512-bit
//! registers they stay in registers across a chunk's pixels. The arithmetic and its order
//! are the same in every version (per channel, pixel by pixel from the chunk's start, no
//! fused multiply-adds: Rust does not contract), so the results are bit for bit alike on
//! every CPU; the tests hold the two versions to that.

use ntk_numerics::linalg::Real;
use rayon::prelude::*;

use super::map::{self, Dims};

/// One pixel of a pass: writes `a` (its `c` channels; `b`, a second map's, when the pass
/// has one) and adds to the channel sums `u`, `v`; `base` is the flat index of the pixel's
/// channel 0. Implementations are `#[inline(always)]`, so that each version of the chunk
/// loop compiles them with its own instructions.
pub trait PixelPass<T: Real>: Sync {
    fn pixel(&self, base: usize, a: &mut [T], b: Option<&mut [T]>, u: &mut [f64], v: &mut [f64]);
}

/// [`map::map_sums2`] with `pass`: the sums `(u, v)` per channel, in its order.
pub fn map_sums2<T: Real, P: PixelPass<T>>(
    a: &mut [T],
    b: Option<&mut [T]>,
    d: Dims,
    pass: &P,
) -> (Vec<f64>, Vec<f64>) {
    let wide = super::avx512::available_for_passes();
    map::map_sums2_chunks(a, b, d, |base, ac, bc, u, v| match (wide, d.c) {
        // SAFETY: `available_for_passes` found AVX-512F on this CPU.
        (true, 16) => unsafe { chunk_avx512::<T, P, 16>(pass, base, ac, bc, u, v) },
        // SAFETY: as above.
        (true, 32) => unsafe { chunk_avx512::<T, P, 32>(pass, base, ac, bc, u, v) },
        // SAFETY: as above.
        (true, 64) => unsafe { chunk_avx512::<T, P, 64>(pass, base, ac, bc, u, v) },
        _ => chunk(pass, d.c, base, ac, bc, u, v),
    })
}

/// The chunk loop for any channel count `c`, in the build's instructions.
fn chunk<T: Real, P: PixelPass<T>>(
    pass: &P,
    c: usize,
    base: usize,
    a: &mut [T],
    mut b: Option<&mut [T]>,
    u: &mut [f64],
    v: &mut [f64],
) {
    for (p, px) in a.chunks_mut(c).enumerate() {
        let bp = b.as_deref_mut().map(|b| &mut b[p * c..(p + 1) * c]);
        pass.pixel(base + p * c, px, bp, u, v);
    }
}

/// The chunk loop for `C` channels, its sums in local arrays (registers).
#[inline(always)]
fn chunk_fixed<T: Real, P: PixelPass<T>, const C: usize>(
    pass: &P,
    base: usize,
    a: &mut [T],
    mut b: Option<&mut [T]>,
    u: &mut [f64],
    v: &mut [f64],
) {
    assert!(a.len().is_multiple_of(C), "whole pixels");
    let (mut su, mut sv) = ([0.0f64; C], [0.0f64; C]);
    su.copy_from_slice(&u[..C]);
    sv.copy_from_slice(&v[..C]);
    for (p, px) in a.chunks_exact_mut(C).enumerate() {
        let bp = b.as_deref_mut().map(|b| &mut b[p * C..(p + 1) * C]);
        pass.pixel(base + p * C, px, bp, &mut su, &mut sv);
    }
    u[..C].copy_from_slice(&su);
    v[..C].copy_from_slice(&sv);
}

/// [`chunk_fixed`] compiled for AVX-512.
///
/// # Safety
/// The CPU must have AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn chunk_avx512<T: Real, P: PixelPass<T>, const C: usize>(
    pass: &P,
    base: usize,
    a: &mut [T],
    b: Option<&mut [T]>,
    u: &mut [f64],
    v: &mut [f64],
) {
    chunk_fixed::<T, P, C>(pass, base, a, b, u, v);
}

/// Never called: AVX-512 is x86-64's ([`super::avx512::available_for_passes`] is false
/// elsewhere); the portable loop.
///
/// # Safety
/// None: `unsafe` to match the x86-64 fn.
#[cfg(not(target_arch = "x86_64"))]
unsafe fn chunk_avx512<T: Real, P: PixelPass<T>, const C: usize>(
    pass: &P,
    base: usize,
    a: &mut [T],
    b: Option<&mut [T]>,
    u: &mut [f64],
    v: &mut [f64],
) {
    chunk(pass, C, base, a, b, u, v);
}

/// Runs `f(pixel, base)` over every pixel of the maps in `out` (`pixel` its `c` values,
/// `base` the flat index of its channel 0), on rayon's threads in blocks of whole images.
pub fn par_pixels<T: Real>(out: &mut [T], d: Dims, f: impl Fn(&mut [T], usize) + Sync) {
    let block = d.image().max(1) * 8;
    out.par_chunks_mut(block)
        .enumerate()
        .for_each(|(k, part)| pixels(part, d.c, k * block, &f));
}

/// `f(a_pixel, b_pixel, base)` over the pixels of two maps of the same shape, `a` and `b`
/// mutable, on rayon's threads in blocks of whole images.
pub fn par_pixels2<T: Real>(
    a: &mut [T],
    b: &mut [T],
    d: Dims,
    f: impl Fn(&mut [T], &mut [T], usize) + Sync,
) {
    let block = d.image().max(1) * 8;
    a.par_chunks_mut(block)
        .zip(b.par_chunks_mut(block))
        .enumerate()
        .for_each(|(k, (pa, pb))| pixels2(pa, pb, d.c, k * block, &f));
}

/// `f(pixel, base)` over the pixels of `part` (`c` values each; `base`: the flat index of the
/// part's first value), the loop of [`par_pixels`].
pub fn pixels<T: Real, F: Fn(&mut [T], usize)>(part: &mut [T], c: usize, base: usize, f: &F) {
    assert!(part.len().is_multiple_of(c.max(1)), "whole pixels");
    let wide = super::avx512::available_for_passes();
    match (wide, c) {
        // SAFETY: `available_for_passes` found AVX-512F on this CPU.
        (true, 16) => unsafe { pixels_avx512::<T, F, 16>(part, base, f) },
        // SAFETY: as above.
        (true, 32) => unsafe { pixels_avx512::<T, F, 32>(part, base, f) },
        // SAFETY: as above.
        (true, 64) => unsafe { pixels_avx512::<T, F, 64>(part, base, f) },
        _ => {
            for (j, px) in part.chunks_mut(c).enumerate() {
                f(px, base + j * c);
            }
        }
    }
}

/// [`pixels`] for `C` channels, compiled for AVX-512.
///
/// # Safety
/// The CPU must have AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn pixels_avx512<T: Real, F: Fn(&mut [T], usize), const C: usize>(
    part: &mut [T],
    base: usize,
    f: &F,
) {
    for (j, px) in part.chunks_exact_mut(C).enumerate() {
        f(px, base + j * C);
    }
}

/// Never called off x86-64; the portable loop.
///
/// # Safety
/// None: `unsafe` to match the x86-64 fn.
#[cfg(not(target_arch = "x86_64"))]
unsafe fn pixels_avx512<T: Real, F: Fn(&mut [T], usize), const C: usize>(
    part: &mut [T],
    base: usize,
    f: &F,
) {
    for (j, px) in part.chunks_exact_mut(C).enumerate() {
        f(px, base + j * C);
    }
}

/// `f(a_pixel, b_pixel, base)` over the pixels of two parts of the same shape, the loop of
/// [`par_pixels2`].
pub fn pixels2<T: Real, F: Fn(&mut [T], &mut [T], usize)>(
    a: &mut [T],
    b: &mut [T],
    c: usize,
    base: usize,
    f: &F,
) {
    assert!(
        a.len() == b.len() && a.len().is_multiple_of(c.max(1)),
        "whole pixels"
    );
    let wide = super::avx512::available_for_passes();
    match (wide, c) {
        // SAFETY: `available_for_passes` found AVX-512F on this CPU.
        (true, 16) => unsafe { pixels2_avx512::<T, F, 16>(a, b, base, f) },
        // SAFETY: as above.
        (true, 32) => unsafe { pixels2_avx512::<T, F, 32>(a, b, base, f) },
        // SAFETY: as above.
        (true, 64) => unsafe { pixels2_avx512::<T, F, 64>(a, b, base, f) },
        _ => {
            for (j, (x, y)) in a.chunks_mut(c).zip(b.chunks_mut(c)).enumerate() {
                f(x, y, base + j * c);
            }
        }
    }
}

/// [`pixels2`] for `C` channels, compiled for AVX-512.
///
/// # Safety
/// The CPU must have AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn pixels2_avx512<T: Real, F: Fn(&mut [T], &mut [T], usize), const C: usize>(
    a: &mut [T],
    b: &mut [T],
    base: usize,
    f: &F,
) {
    for (j, (x, y)) in a.chunks_exact_mut(C).zip(b.chunks_exact_mut(C)).enumerate() {
        f(x, y, base + j * C);
    }
}

/// Never called off x86-64; the portable loop.
///
/// # Safety
/// None: `unsafe` to match the x86-64 fn.
#[cfg(not(target_arch = "x86_64"))]
unsafe fn pixels2_avx512<T: Real, F: Fn(&mut [T], &mut [T], usize), const C: usize>(
    a: &mut [T],
    b: &mut [T],
    base: usize,
    f: &F,
) {
    for (j, (x, y)) in a.chunks_exact_mut(C).zip(b.chunks_exact_mut(C)).enumerate() {
        f(x, y, base + j * C);
    }
}

/// The per-channel mean and sum of squared deviations `(mean, m2)` of NHWC maps `y` with `c`
/// channels: two passes, `mean_c = (1/m) sum y`, then `m2_c = sum (y - mean_c)^2`.
pub fn channel_moments<T: Real>(y: &[T], c: usize) -> (Vec<f64>, Vec<f64>) {
    let wide = super::avx512::available_for_passes();
    match (wide, c) {
        // SAFETY: `available_for_passes` found AVX-512F on this CPU.
        (true, 16) => unsafe { moments_avx512::<T, 16>(y) },
        // SAFETY: as above.
        (true, 32) => unsafe { moments_avx512::<T, 32>(y) },
        // SAFETY: as above.
        (true, 64) => unsafe { moments_avx512::<T, 64>(y) },
        _ => moments(y, c),
    }
}

/// [`channel_moments`] for any `c`, in the build's instructions.
fn moments<T: Real>(y: &[T], c: usize) -> (Vec<f64>, Vec<f64>) {
    let (mut mean, mut m2) = (vec![0.0f64; c], vec![0.0f64; c]);
    moments_into(y, &mut mean, &mut m2);
    (mean, m2)
}

/// [`moments`] for `C` channels, the sums in local arrays.
#[inline(always)]
fn moments_fixed<T: Real, const C: usize>(y: &[T]) -> (Vec<f64>, Vec<f64>) {
    let (mut mean, mut m2) = ([0.0f64; C], [0.0f64; C]);
    moments_into(y, &mut mean, &mut m2);
    (mean.to_vec(), m2.to_vec())
}

/// The two passes of [`channel_moments`] into `mean` and `m2` (zeros, one per channel): one
/// body for every version (inlined where the length is a constant, the sums then stay in
/// registers).
#[inline(always)]
fn moments_into<T: Real>(y: &[T], mean: &mut [f64], m2: &mut [f64]) {
    let c = mean.len();
    let count = (y.len() / c) as f64;
    for px in y.chunks_exact(c) {
        mean.iter_mut().zip(px).for_each(|(m, v)| *m += v.f64());
    }
    mean.iter_mut().for_each(|m| *m /= count);
    for px in y.chunks_exact(c) {
        for ((a, v), m) in m2.iter_mut().zip(px).zip(mean.iter()) {
            let d = v.f64() - m;
            *a += d * d;
        }
    }
}

/// [`moments_fixed`] compiled for AVX-512.
///
/// # Safety
/// The CPU must have AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn moments_avx512<T: Real, const C: usize>(y: &[T]) -> (Vec<f64>, Vec<f64>) {
    moments_fixed::<T, C>(y)
}

/// Never called off x86-64; the portable loop.
///
/// # Safety
/// None: `unsafe` to match the x86-64 fn.
#[cfg(not(target_arch = "x86_64"))]
unsafe fn moments_avx512<T: Real, const C: usize>(y: &[T]) -> (Vec<f64>, Vec<f64>) {
    moments(y, C)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `a <- a [y > 0]`, `u += a`, `v += a z` (ReLU's backward with BatchNorm's sums).
    struct Gate<'a> {
        y: &'a [f32],
        z: &'a [f32],
    }

    impl PixelPass<f32> for Gate<'_> {
        #[inline(always)]
        fn pixel(
            &self,
            base: usize,
            a: &mut [f32],
            _: Option<&mut [f32]>,
            u: &mut [f64],
            v: &mut [f64],
        ) {
            let r = base..base + a.len();
            for ((((g, y), z), u), v) in a
                .iter_mut()
                .zip(&self.y[r.clone()])
                .zip(&self.z[r])
                .zip(u)
                .zip(v)
            {
                *g = if *y > 0.0 { *g } else { 0.0 };
                *u += f64::from(*g);
                *v += f64::from(*g) * f64::from(*z);
            }
        }
    }

    #[test]
    fn every_version_gives_the_same_bits() {
        for c in [16, 32, 64, 24] {
            let d = Dims {
                n: 9,
                h: 5,
                w: 7,
                c,
            };
            let len = d.len();
            let wave = |k: usize, s: f64| ((k as f64 * s).sin() * 3.0) as f32;
            let y: Vec<f32> = (0..len).map(|k| wave(k, 0.37)).collect();
            let z: Vec<f32> = (0..len).map(|k| wave(k, 1.91)).collect();
            let g0: Vec<f32> = (0..len).map(|k| wave(k, 0.73) * 1e-3).collect();
            let pass = Gate { y: &y, z: &z };
            let mut g_wide = g0.clone();
            let wide = map_sums2(&mut g_wide, None, d, &pass);
            let mut g_plain = g0.clone();
            let plain = map::map_sums2_chunks(&mut g_plain, None, d, |base, a, b, u, v| {
                chunk(&pass, c, base, a, b, u, v)
            });
            let mut g_fixed = g0.clone();
            let fixed = map::map_sums2_chunks(&mut g_fixed, None, d, |base, a, b, u, v| match c {
                16 => chunk_fixed::<_, _, 16>(&pass, base, a, b, u, v),
                32 => chunk_fixed::<_, _, 32>(&pass, base, a, b, u, v),
                64 => chunk_fixed::<_, _, 64>(&pass, base, a, b, u, v),
                _ => chunk(&pass, c, base, a, b, u, v),
            });
            assert_eq!(g_wide, g_plain, "c = {c}");
            assert_eq!(g_fixed, g_plain, "c = {c}");
            let bits = |s: &(Vec<f64>, Vec<f64>)| {
                s.0.iter()
                    .chain(&s.1)
                    .map(|x| x.to_bits())
                    .collect::<Vec<_>>()
            };
            assert_eq!(bits(&wide), bits(&plain), "c = {c}");
            assert_eq!(bits(&fixed), bits(&plain), "c = {c}");
            let bits_of = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            let (m_wide, s_wide) = channel_moments(&y, c);
            let (m_plain, s_plain) = moments(&y, c);
            assert_eq!(bits_of(&m_wide), bits_of(&m_plain), "c = {c}");
            assert_eq!(bits_of(&s_wide), bits_of(&s_plain), "c = {c}");
            if let 16 | 32 | 64 = c {
                let (m_fixed, s_fixed) = match c {
                    16 => moments_fixed::<_, 16>(&y),
                    32 => moments_fixed::<_, 32>(&y),
                    _ => moments_fixed::<_, 64>(&y),
                };
                assert_eq!(bits_of(&m_fixed), bits_of(&m_plain), "c = {c}");
                assert_eq!(bits_of(&s_fixed), bits_of(&s_plain), "c = {c}");
            }
            // And the sums are the sums.
            let want: f64 = g_plain.iter().map(|&g| f64::from(g)).sum();
            let got: f64 = plain.0.iter().sum();
            assert!(
                (want - got).abs() <= 1e-9 * want.abs().max(1.0),
                "{want} {got}"
            );
        }
    }
}
