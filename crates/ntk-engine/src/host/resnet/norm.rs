//! BatchNorm in training mode on NHWC maps (Ioffe & Szegedy 2015, Alg. 1 and its backward),
//! per channel `c` over the `m = n h w` values of the batch:
//!
//! `mu_c = (1/m) sum z`, `var_c = (1/m) sum (z - mu_c)^2` (biased),
//! `zhat = (z - mu_c) / sqrt(var_c + eps)`, `u = gamma_c zhat + beta_c`;
//!
//! backward, from `du`: `dgamma_c = sum du zhat`, `dbeta_c = sum du`,
//! `dz = gamma_c / sqrt(var_c + eps) (du - mean(du) - zhat mean(du zhat))`.
//!
//! In evaluation mode (`mu_c`, `var_c` given: the running statistics) the map is affine per
//! channel and the backward is `dz = gamma_c / sqrt(var_c + eps) du`, with the same
//! `dgamma_c` and `dbeta_c`: no sample depends on another (per-sample gradients, the NTK).
//!
//! The running statistics follow Burn 0.22's `BatchNorm` (momentum `m`, default 0.1):
//! `r_mu = (1 - m) r_mu + m mu`, `r_var = (1 - m) r_var + m var` with the *biased* batch
//! variance (PyTorch uses the unbiased one here).

use ntk_numerics::linalg::Real;

use super::map::{Dims, channel_sums};
use super::wide::{par_pixels, par_pixels2};

/// What the backward needs of one BatchNorm: `zhat` (in place of `z`) and `1 / sqrt(var + eps)`,
/// plus the batch statistics for the running ones.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub mean: Vec<f64>,
    pub var: Vec<f64>,
    pub inv_std: Vec<f64>,
    /// The statistics are constants (evaluation mode: the running ones), not functions of
    /// the batch: the backward is then the per-channel scale alone.
    pub fixed: bool,
}

/// The statistics a BatchNorm normalizes with: the batch's (training mode), or given ones
/// (evaluation mode: the running mean and variance).
#[derive(Clone, Copy, Debug)]
pub struct Source<'a> {
    pub eps: f64,
    /// `(mean, var)` per channel, or `None` for the batch's own.
    pub given: Option<(&'a [f64], &'a [f64])>,
    /// `given` holds the running statistics (evaluation mode), not the batch's computed
    /// elsewhere.
    pub fixed: bool,
}

/// Normalizes `z` in place (`z <- zhat`) and writes `out` by `epilogue(zhat_px, out_px,
/// base)` pixel by pixel in the same pass (`base`: the flat index of the pixel's channel 0);
/// returns the statistics used.
pub fn normalize<T: Real>(
    z: &mut [T],
    d: Dims,
    source: Source<'_>,
    out: &mut [T],
    epilogue: impl Fn(&[T], &mut [T], usize) + Sync,
) -> Stats {
    let eps = source.eps;
    let (mean, var) = match source.given {
        Some((m, v)) => (m.to_vec(), v.to_vec()),
        None => batch_stats(z, d),
    };
    let inv_std: Vec<f64> = var.iter().map(|v| 1.0 / (v + eps).sqrt()).collect();
    let (mu, is): (Vec<T>, Vec<T>) = (
        mean.iter().map(|&v| T::of(v)).collect(),
        inv_std.iter().map(|&v| T::of(v)).collect(),
    );
    // Inlined into the pixel loop's versions (`super::wide`), the AVX-512 one among them.
    par_pixels2(
        z,
        out,
        d,
        #[inline(always)]
        |zp, op, base| {
            for ((v, m), s) in zp.iter_mut().zip(&mu).zip(&is) {
                *v = (*v - *m) * *s;
            }
            epilogue(zp, op, base);
        },
    );
    Stats {
        mean,
        var,
        inv_std,
        fixed: source.fixed,
    }
}

/// The batch's per-channel mean and biased variance (two passes: the centred sum of
/// squares, not `E[z^2] - E[z]^2`).
fn batch_stats<T: Real>(z: &[T], d: Dims) -> (Vec<f64>, Vec<f64>) {
    let m = (d.n * d.pixels()) as f64;
    let mean: Vec<f64> = channel_sums(d, |i, _| z[i].f64())
        .into_iter()
        .map(|s| s / m)
        .collect();
    let var: Vec<f64> = channel_sums(d, |i, ch| {
        let v = z[i].f64() - mean[ch];
        v * v
    })
    .into_iter()
    .map(|s| s / m)
    .collect();
    (mean, var)
}

/// The backward from `du` (overwritten with `dz`), given `zhat` and the per-channel sums
/// `(dbeta, dgamma) = (sum du, sum du zhat)` (taken in the pass that made `du`:
/// [`super::map::map_sums2`]): returns `(dgamma, dbeta)`; evaluation mode's when the
/// statistics were [`Stats::fixed`].
pub fn backward<T: Real>(
    du: &mut [T],
    zhat: &[T],
    d: Dims,
    gamma: &[T],
    stats: &Stats,
    (dbeta, dgamma): (Vec<f64>, Vec<f64>),
) -> (Vec<f64>, Vec<f64>) {
    let m = (d.n * d.pixels()) as f64;
    let scale: Vec<T> = gamma
        .iter()
        .zip(&stats.inv_std)
        .map(|(g, s)| T::of(g.f64() * s))
        .collect();
    if stats.fixed {
        par_pixels(du, d, |px, _| {
            px.iter_mut().zip(&scale).for_each(|(v, s)| *v *= *s);
        });
        return (dgamma, dbeta);
    }
    let mean_du: Vec<T> = dbeta.iter().map(|s| T::of(s / m)).collect();
    let mean_duz: Vec<T> = dgamma.iter().map(|s| T::of(s / m)).collect();
    par_pixels(du, d, |px, base| {
        let z = &zhat[base..base + d.c];
        for ((((v, z), s), a), b) in px
            .iter_mut()
            .zip(z)
            .zip(&scale)
            .zip(&mean_du)
            .zip(&mean_duz)
        {
            *v = *s * (*v - *a - *z * *b);
        }
    });
    (dgamma, dbeta)
}
