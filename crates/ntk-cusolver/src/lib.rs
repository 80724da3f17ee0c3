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
//! - [`device`]: the context, stream and handles, and device buffers.
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

pub use device::Gpu;
pub use error::{Error, Result};
pub use extreme::extreme;
pub use full::spectrum;
pub use libraries::Missing;
