//! What can go wrong on the device: a library that does not load, a call that fails (with
//! the library's own status), a kernel too large for the libraries' 32-bit sizes.

/// The device solver's errors.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A shared library the solver loads at run time is not found (see [`crate::libraries`]).
    #[error("{0}")]
    Missing(#[from] ntk_cuda::Missing),
    /// A call into the CUDA driver, cuBLAS or cuSOLVER failed (for cuSOLVER also an `info`
    /// that names an illegal argument).
    #[error(transparent)]
    Call(#[from] ntk_cuda::CallError),
    /// `syevd` did not converge: `info` off-diagonal elements of the intermediate
    /// tridiagonal form did not go to zero.
    #[error("cuSOLVER: syevd did not converge ({info} off-diagonal elements left)")]
    NoConvergence { info: i32 },
    /// A kernel whose side or size does not fit the libraries' 32-bit arguments.
    #[error("a kernel of side {n}: cuBLAS and cuSOLVER take at most 46,340 (n^2 < 2^31)")]
    TooLarge { n: usize },
    /// A whole kernel that does not fit the device's free memory.
    #[error(
        "the whole kernel of {n} inputs needs {:.1} GB of device memory, {:.1} GB of {:.1} GB are free",
        *need as f64 / 1e9, *free as f64 / 1e9, *total as f64 / 1e9
    )]
    Memory {
        n: usize,
        need: usize,
        free: usize,
        total: usize,
    },
    /// A kernel with no rows, or whose data is not `n x n` values.
    #[error("a kernel of side {n} with {len} values; expected n^2 > 0")]
    Shape { n: usize, len: usize },
    /// What the shared algorithm reports (non-finite kernel, Lanczos failures).
    #[error(transparent)]
    Kernel(#[from] ntk_kernel::Error),
    /// What the host classification reports.
    #[error(transparent)]
    Numerics(#[from] ntk_numerics::Error),
}

pub type Result<T> = std::result::Result<T, Error>;

use ntk_cuda::Lib;

pub(crate) use ntk_cuda::call::{cublas, driver};

/// `Ok` or cuSOLVER's [`Error::Call`] naming `what`.
pub(crate) fn cusolver(
    what: &'static str,
    s: cudarc::cusolver::sys::cusolverStatus_t,
) -> Result<()> {
    let ok = cudarc::cusolver::sys::cusolverStatus_t::CUSOLVER_STATUS_SUCCESS;
    Ok(ntk_cuda::call::check(Lib::Cusolver, what, s, ok)?)
}

/// cuSOLVER's `info` after `what`: `Ok(0)` on success, `Ok(i > 0)` for the caller to read
/// (a pivot that is not positive, a run that did not converge), an [`Error::Call`] naming
/// the illegal argument when negative.
pub(crate) fn info(what: &'static str, info: i32) -> Result<i32> {
    if info < 0 {
        return Err(ntk_cuda::CallError {
            library: Lib::Cusolver,
            what,
            status: format!("argument {} is illegal", -info),
        }
        .into());
    }
    Ok(info)
}
