//! A whole set's MLP kernel formed on the GPU from the network's factors, then solved there:
//! the device half of `probe.eigen = "tiled"` (whole MNIST, `n = 60,000`: `K` is 28.8 GB in
//! f64, which an H100 or H200 holds twice).
//!
//! The factors ([`TileSource`]: the layer inputs `A_l` and backpropagated signals `D_l` of all
//! `n` inputs, formed once on the host) go to the device, and `K` is written column panel by
//! column panel `J` (width [`PANEL`]) as in [`TileSource::fill`]:
//!
//! ```text
//! K[:, J] = copies (beta_out^2 A_L A_L[J]^T + b)
//!         + sum_l (beta_l^2 A_{l-1} A_{l-1}[J]^T + b) .* (D_l D_l[J]^T),
//! ```
//!
//! two cuBLAS `gemm` per layer (`n x |J| x m`), the Hadamard product by `dgmm` (the panel as
//! one column times the diagonal of the other) and the sum by `axpy`: `4 n^2 m` flop a layer,
//! about `8e13` at `n = 60,000`, depth 10, width 512. The minimum gradient angle is read from
//! each panel as it is formed (`cos_ij = K_ij / sqrt(K_ii K_jj)`, the largest off the
//! diagonal by `amax` of `cos + 1`), then [`crate::extreme::DeviceKernel`] runs the shared
//! algorithm (`ntk_kernel::extreme::solve`) on `K` in place: nothing of size `n^2` travels.

use cudarc::cublas::sys as blas;
use faer::Mat;
use rayon::prelude::*;

use ntk_kernel::angles::MinAngle;
use ntk_kernel::extreme::{Extreme, Options};
use ntk_kernel::host::tiles::TileSource;

use crate::device::{Buffer, Gpu, with_gpu};
use crate::error::{Result, cublas};
use crate::extreme::DeviceKernel;
use crate::trace::Phases;

/// Columns of `K` formed at a time: two work panels of `n x PANEL` (2 GB at `n = 60,000`).
pub const PANEL: usize = 2048;

/// What [`solve`] measures: the extreme eigenvalues, the minimum gradient angle (`None` when
/// no pair has one) and the seconds the formation took (the rest is the solve's).
pub struct Whole {
    pub extreme: Extreme,
    pub min_angle: Option<MinAngle>,
    pub formation_seconds: f64,
    /// The device's name.
    pub device: String,
}

/// Bytes of device memory [`solve`] needs at its peak for `n` inputs, factors of
/// `factor_bytes` and Lanczos runs of up to `max_steps`: `K` and the factor of `K + s I`
/// (`16 n^2`) beside the basis, or during the formation `K`, the factors and three work
/// panels.
pub fn device_bytes(n: usize, factor_bytes: usize, max_steps: usize) -> usize {
    let panels = 3 * 8 * n * PANEL.min(n);
    let basis = 8 * n * (max_steps + 4);
    (16 * n * n + basis).max(8 * n * n + factor_bytes + panels)
}

/// `K` of `source` formed on the process's GPU, its minimum gradient angle, then
/// `lambda_min`, `lambda_max` and `kappa` there ([`crate::extreme`]).
pub fn solve(source: &TileSource, options: &Options) -> Result<Whole> {
    with_gpu(|gpu| {
        let n = source.size();
        let need = device_bytes(n, source.bytes(), options.max_steps);
        let (free, total) = gpu.memory()?;
        if need > free {
            return Err(crate::Error::Memory {
                n,
                need,
                free,
                total,
            });
        }
        let start = std::time::Instant::now();
        let phases = Phases::new();
        let (k, min_angle) = form(gpu, source, &phases)?;
        let max_abs = max_abs(gpu, &k, n * n)?;
        gpu.sync()?;
        let formation_seconds = start.elapsed().as_secs_f64();
        phases.mark(gpu, "the largest magnitude");
        let mut op = DeviceKernel::on_device(gpu, n, k, max_abs);
        let e = ntk_kernel::extreme::solve(&mut op, f64::EPSILON, options);
        let extreme = match op.failure.take() {
            Some(device) => return Err(device),
            None => e?,
        };
        Ok(Whole {
            extreme,
            min_angle,
            formation_seconds,
            device: gpu.name.clone(),
        })
    })
}

/// `m` column-major with leading dimension `nrows` on the device.
fn upload(gpu: &Gpu, m: &Mat<f64>) -> Result<Buffer> {
    let (r, c) = (m.nrows(), m.ncols());
    let mut values = vec![0.0; r * c];
    values
        .par_chunks_mut(r.max(1))
        .enumerate()
        .for_each(|(j, col)| {
            for (i, v) in col.iter_mut().enumerate() {
                *v = m[(i, j)];
            }
        });
    gpu.upload(&values)
}

/// `c (= alpha a[:, :] b[J, :]^T) + beta c` into `c` (`n x |J|`, leading dimension `n`):
/// `a` and `b` are `n x inner` column-major.
#[allow(clippy::too_many_arguments)]
fn gemm_panel(
    gpu: &Gpu,
    n: usize,
    width: usize,
    inner: usize,
    alpha: f64,
    a: &Buffer,
    b_rows: *const f64,
    beta: f64,
    c: *mut f64,
) -> Result<()> {
    let n64 = n as i64;
    // SAFETY: `gpu.cublas()` is the live handle on `gpu.stream`, where every buffer was
    // allocated, in the default host pointer mode (`&alpha`, `&beta` read during the call).
    // This private fn does not check its operands; its one caller, `form`, passes `a` of `n
    // inner` values (`inner = a.len / n`, read `n x inner` with leading dimension `n`),
    // `b_rows = a.at(j0)` with `j0 + width <= n` (so the `width x inner` rows end at
    // `(inner - 1) n + n - 1`, inside `a`), and `c` either column `j0` of `K` (`n^2`
    // values, `j0 + width <= n`) or a work panel of `n PANEL >= n width` values.
    Ok(cublas("a panel's gemm", unsafe {
        blas::cublasDgemm_v2_64(
            gpu.cublas(),
            blas::cublasOperation_t::CUBLAS_OP_N,
            blas::cublasOperation_t::CUBLAS_OP_T,
            n64,
            width as i64,
            inner as i64,
            &alpha,
            a.at(0),
            n64,
            b_rows,
            n64,
            &beta,
            c,
            n64,
        )
    })?)
}

/// `y += alpha x` over `len` values.
fn axpy(gpu: &Gpu, len: usize, alpha: f64, x: *const f64, y: *mut f64) -> Result<()> {
    // SAFETY: live handle, host pointer mode (`&alpha`). Not checked here: `form`, the only
    // caller, passes `len = n w` with `x` and `y` panels of at least `n w` values (a work
    // panel, `ones`, or column `j0` of `K` with `j0 + w <= n`).
    Ok(cublas("a panel's sum", unsafe {
        blas::cublasDaxpy_v2_64(gpu.cublas(), len as i64, &alpha, x, 1, y, 1)
    })?)
}

/// `c = diag(x) c` (`side` left, `x` of length `rows`) or `c diag(x)` (right, length
/// `cols`), `c` being `rows x cols` with leading dimension `rows`, in place.
fn scale(
    gpu: &Gpu,
    side: blas::cublasSideMode_t,
    rows: usize,
    cols: usize,
    x: *const f64,
    c: *mut f64,
) -> Result<()> {
    // SAFETY: live handle. Not checked here: `form`, the only caller, passes `c` of at
    // least `rows cols` values (a work panel: `len x 1` or `n x w`) and `x` of `rows`
    // (left: `h`'s `len`, or `inv`/`m` of `n`) or `cols` values (right: `inv`/`m` from
    // `j0`, `j0 + w <= n`); cuBLAS's `dgmm` allows `c` as both input and output.
    Ok(cublas("a panel's scaling", unsafe {
        blas::cublasDdgmm_64(
            gpu.cublas(),
            side,
            rows as i64,
            cols as i64,
            c,
            rows as i64,
            x,
            1,
            c,
            rows as i64,
        )
    })?)
}

/// The largest magnitude of `len` values of `b`.
fn max_abs(gpu: &Gpu, b: &Buffer, len: usize) -> Result<f64> {
    let mut at = 0i64;
    // SAFETY: live handle; in the default host pointer mode cuBLAS writes the index to
    // `at`, a live local, before returning. Not checked here: the one caller passes `K`
    // with `len = n^2`, its length.
    cublas("the largest magnitude", unsafe {
        blas::cublasIdamax_v2_64(gpu.cublas(), len as i64, b.at(0), 1, &mut at)
    })?;
    // 1-based; 0 only for an empty range.
    Ok(gpu.read_at(b, (at.max(1) - 1) as usize)?.abs())
}

/// `K` formed panel by panel, and the minimum gradient angle read from each panel.
fn form(gpu: &Gpu, source: &TileSource, phases: &Phases) -> Result<(Buffer, Option<MinAngle>)> {
    let n = source.size();
    let depth = source.deltas().len();
    let inputs = source
        .inputs()
        .iter()
        .map(|m| upload(gpu, m))
        .collect::<Result<Vec<_>>>()?;
    let deltas = source
        .deltas()
        .iter()
        .map(|m| upload(gpu, m))
        .collect::<Result<Vec<_>>>()?;
    phases.mark(gpu, "the factors to the device");
    let (beta2, bias, copies) = (source.beta2(), source.bias(), source.copies());
    // The angles' scales: 1 / sqrt(K_ii), 0 (and masked) for a sample with no gradient.
    let diagonal = source.diagonal();
    let valid: Vec<bool> = diagonal.iter().map(|&d| d > 0.0 && d.is_finite()).collect();
    let inv: Vec<f64> = diagonal
        .iter()
        .zip(&valid)
        .map(|(&d, &ok)| if ok { 1.0 / d.sqrt() } else { 0.0 })
        .collect();
    let inv = gpu.upload(&inv)?;
    let mask = if valid.iter().all(|&v| v) {
        None
    } else {
        let m: Vec<f64> = valid.iter().map(|&v| if v { 1.0 } else { 0.0 }).collect();
        Some(gpu.upload(&m)?)
    };

    let width = PANEL.min(n);
    let k = gpu.alloc_raw(n * n)?;
    let g = gpu.alloc_raw(n * width)?;
    let h = gpu.alloc_raw(n * width)?;
    let ones = gpu.upload(&vec![1.0; n * width])?;
    let zeros = gpu.alloc(width)?;
    let shift = copies * bias;
    let (left, right) = (
        blas::cublasSideMode_t::CUBLAS_SIDE_LEFT,
        blas::cublasSideMode_t::CUBLAS_SIDE_RIGHT,
    );
    // (cos + 1, row, column) of the largest cosine so far.
    let mut best: Option<(f64, usize, usize)> = None;
    for j0 in (0..n).step_by(width) {
        let w = width.min(n - j0);
        let len = n * w;
        let panel = k.at(j0 * n);
        // The output layer: copies (beta_out^2 A_L A_L[J]^T + b).
        let a = &inputs[depth];
        let out_scale = copies * beta2[depth];
        gemm_panel(gpu, n, w, a.len / n, out_scale, a, a.at(j0), 0.0, panel)?;
        for l in 0..depth {
            let (a, d) = (&inputs[l], &deltas[l]);
            gemm_panel(gpu, n, w, a.len / n, beta2[l], a, a.at(j0), 0.0, g.at(0))?;
            gemm_panel(gpu, n, w, d.len / n, 1.0, d, d.at(j0), 0.0, h.at(0))?;
            // (G + b) .* H = G .* H + b H.
            scale(gpu, left, len, 1, h.at(0), g.at(0))?;
            axpy(gpu, len, 1.0, g.at(0), panel)?;
            if bias != 0.0 {
                axpy(gpu, len, bias, h.at(0), panel)?;
            }
        }
        if shift != 0.0 {
            axpy(gpu, len, shift, ones.at(0), panel)?;
        }
        // The cosines of the panel, plus one (so that the largest magnitude is the largest
        // cosine), masked samples and the diagonal set to zero.
        // SAFETY: live handle on the stream of every buffer here; `panel` is column `j0` of
        // `K` with `n w = len` values to its end (`j0 + w <= n`), and `g` holds `n width >=
        // len`.
        cublas("copying a panel", unsafe {
            blas::cublasDcopy_v2_64(gpu.cublas(), len as i64, panel, 1, g.at(0), 1)
        })?;
        scale(gpu, left, n, w, inv.at(0), g.at(0))?;
        scale(gpu, right, n, w, inv.at(j0), g.at(0))?;
        axpy(gpu, len, 1.0, ones.at(0), g.at(0))?;
        if let Some(m) = &mask {
            scale(gpu, left, n, w, m.at(0), g.at(0))?;
            scale(gpu, right, n, w, m.at(j0), g.at(0))?;
        }
        // SAFETY: live handle; `zeros` holds `width >= w` values; the `w` targets `g[j0 + i
        // (n + 1)]`, `i < w`, are the panel's diagonal entries `(j0 + i, i)`, the last at
        // `j0 + w - 1 + (w - 1) n < n w`, inside `g`'s `n width`.
        cublas("the panel's diagonal", unsafe {
            blas::cublasDcopy_v2_64(
                gpu.cublas(),
                w as i64,
                zeros.at(0),
                1,
                g.at(j0),
                n as i64 + 1,
            )
        })?;
        let mut at = 0i64;
        // SAFETY: live handle; `g` holds at least `len = n w` values; in the default host
        // pointer mode cuBLAS writes the index to `at`, a live local, before returning.
        cublas("the panel's largest cosine", unsafe {
            blas::cublasIdamax_v2_64(gpu.cublas(), len as i64, g.at(0), 1, &mut at)
        })?;
        if at > 0 {
            let idx = (at - 1) as usize;
            let v = gpu.read_at(&g, idx)?;
            let (row, col) = (idx % n, j0 + idx / n);
            if v.is_finite() && v > 0.0 && best.is_none_or(|(b, _, _)| v > b) {
                best = Some((v, row, col));
            }
        }
    }
    phases.mark(gpu, &format!("K formed ({n} x {n}, panels of {width})"));
    let min_angle = best.map(|(v, r, c)| MinAngle {
        deg: (v - 1.0).clamp(-1.0, 1.0).acos().to_degrees(),
        i: r.min(c),
        j: r.max(c),
    });
    Ok((k, min_angle))
}
