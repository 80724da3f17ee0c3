//! Every eigenvalue of a kernel on the GPU by cuSOLVER's `syevd` (divide and conquer, values
//! only) in f64, classified as on the host (`ntk_numerics::spectrum::classify`: `tau = n eps
//! lambda_max`, the numerical rank, singular or not).

use cudarc::cusolver::sys as lapack;

use ntk_numerics::kernel::Kernel;
use ntk_numerics::spectrum::{Spectrum, classify};

use crate::device::{Gpu, side, with_gpu};
use crate::error::{Result, cusolver};

/// The spectrum of `kernel` (symmetric; sent to the device in f64) on the process's GPU;
/// `epsilon` is the unit roundoff of the precision the kernel was built in.
pub fn spectrum(kernel: &Kernel, epsilon: f64) -> Result<Spectrum> {
    let n = kernel.size;
    if n == 0 || n.checked_mul(n) != Some(kernel.data.len()) {
        return Err(crate::Error::Shape {
            n,
            len: kernel.data.len(),
        });
    }
    // NaN or infinite anywhere (one parallel pass: `crate::staging`).
    if !crate::staging::max_abs(&kernel.data).is_finite() {
        return Err(ntk_numerics::Error::NonFiniteKernel.into());
    }
    let eigenvalues = with_gpu(|gpu| eigenvalues(gpu, &kernel.data, n))?;
    Ok(classify(eigenvalues, epsilon))
}

/// The eigenvalues (ascending) of the symmetric `n x n` matrix `data` (an error unless
/// `data` holds exactly `n^2` values).
pub fn eigenvalues(gpu: &Gpu, data: &[f64], n: usize) -> Result<Vec<f64>> {
    // syevd reads and overwrites `n^2` values of the copy of `data` on the device.
    if n.checked_mul(n) != Some(data.len()) {
        return Err(crate::Error::Shape { n, len: data.len() });
    }
    let n32 = side(n)?;
    let phases = crate::trace::Phases::new();
    let a = gpu.upload(data)?;
    phases.mark(gpu, "the kernel to the device");
    let w = gpu.alloc(n)?;
    let job = lapack::cusolverEigMode_t::CUSOLVER_EIG_MODE_NOVECTOR;
    let fill = crate::device::TRIANGLE;
    let mut lwork = 0;
    // SAFETY: `gpu.solver` is the process's live cuSOLVER handle on `gpu.stream`, the
    // stream `a` and `w` were allocated on; `a` holds `data.len() = n^2` values (checked
    // above), read with leading dimension `n`, and `w` holds `n`; the query writes one
    // `int` through `&mut lwork`, a local.
    cusolver("syevd workspace", unsafe {
        lapack::cusolverDnDsyevd_bufferSize(
            gpu.solver.cu(),
            job,
            fill,
            n32,
            a.at(0),
            n32,
            w.at(0),
            &mut lwork,
        )
    })?;
    let work = gpu.alloc(lwork.max(1) as usize)?;
    let info = gpu.alloc(1)?;
    // SAFETY: as for the query: live handle, `a` of `n^2` values with leading dimension
    // `n`, `w` of `n`; the workspace holds `lwork.max(1)` f64, the `lwork` values the query
    // asked for; `info` holds one 8-byte value, whose first 4 bytes take the `int`. Every
    // buffer is freed on drop only after its stream is synchronized, so none goes away
    // while the call runs.
    cusolver("syevd", unsafe {
        lapack::cusolverDnDsyevd(
            gpu.solver.cu(),
            job,
            fill,
            n32,
            a.at(0),
            n32,
            w.at(0),
            work.at(0),
            lwork,
            info.at(0) as *mut i32,
        )
    })?;
    let info = gpu.read_info(&info)?;
    phases.mark(gpu, "syevd");
    match crate::error::info("syevd", info)? {
        0 => gpu.read(&w),
        i => Err(crate::Error::NoConvergence { info: i }),
    }
}
