//! The shared libraries the solver loads at run time ([`ntk_cuda::libraries`]): libcuda,
//! libcublas 13 and libcusolver 12 (CUDA 13's), asked for before any call (cudarc loads each
//! at its first use and panics when one is missing).

pub use ntk_cuda::libraries::{Library, Missing};

/// The libraries the solver needs.
pub const NEEDED: [Library; 3] = [Library::Driver, Library::Cublas, Library::Cusolver];

/// Every library of [`NEEDED`] that does not load.
pub fn probe() -> Result<(), Missing> {
    ntk_cuda::libraries::probe("the cuSOLVER eigensolver", &NEEDED)
}
