//! The kernel's spectrum on an NVIDIA GPU, in f64, through NVIDIA's libraries (loaded at run
//! time by cudarc; the build needs no CUDA toolkit):
//!
//! - [`extreme`]: `lambda_min`, `lambda_max` and `kappa` by `ntk_kernel::extreme::solve` (the
//!   algorithm every device shares: Lanczos on `K`, then on `(K + s I)^{-1}`, the shifts and
//!   the singularity rule) with the arithmetic here: the factorization by cuSOLVER's `potrf`,
//!   the solves by `potrs`, the products and the Lanczos basis by cuBLAS;
//! - [`full`]: every eigenvalue by cuSOLVER's `syevd`, classified as on the host
//!   (`ntk_numerics::spectrum::classify`: numerical rank, singular or not);
//! - [`libraries`]: which of libcuda, libcublas and libcusolver load, asked before any call
//!   (cudarc panics at the first call into a missing one);
//! - [`device`]: the context, stream and handles, and device buffers;
//! - [`staging`]: the host's parallel passes over a kernel on its way (f32 to f64, the largest
//!   magnitude);
//! - [`trace`]: each phase's time on stderr with `NTK_CUSOLVER_TRACE` set;
//! - [`whole`]: a whole set's MLP kernel formed on the device from the network's factors
//!   and solved there (`probe.eigen = "tiled"` on a GPU backend; whole MNIST);
//! - [`warm_up`]: the context, handles and the solvers' device code loaded before a timing.
//!
//! Cost at `n = 10,000` (`8 n^2` = 800 MB per copy of the kernel): `potrf` `n^3 / 3`
//! multiply-adds; each Lanczos step reads the kernel or its factor once (`n^2` values, a
//! quarter of a millisecond at an H100's 3.35 TB/s) and the basis twice; `syevd` about
//! `4 n^3 / 3`. The kernel travels from the host once per solve.

pub mod device;
pub mod error;
pub mod extreme;
pub mod full;
pub mod libraries;
pub mod staging;
pub mod trace;
pub mod whole;

pub use device::Gpu;
pub use error::{Error, Result};
pub use extreme::extreme;
pub use full::spectrum;
pub use libraries::Missing;

/// Opens the process's GPU ([`device::with_gpu`]) and runs both solvers once on a small
/// kernel (`diag(1, ..., 64)`), so that the context, the handles and the device code they load
/// lazily are in place before a measurement (as a benchmark warms its peer's solvers);
/// returns the device's name.
pub fn warm_up() -> Result<String> {
    let n = 64;
    let mut data = vec![0.0; n * n];
    for i in 0..n {
        data[i * n + i] = (i + 1) as f64;
    }
    let kernel = ntk_numerics::kernel::Kernel { size: n, data };
    extreme(
        &kernel,
        f64::EPSILON,
        &ntk_kernel::extreme::Options::default(),
    )?;
    spectrum(&kernel, f64::EPSILON)?;
    device::with_gpu(|g| Ok(g.name.clone()))
}
