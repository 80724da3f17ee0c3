//! The shared libraries the engine loads at run time ([`ntk_cuda::libraries`]): libcuda,
//! libcudnn 9, libcublas 13 and libnvrtc 13, asked for before any call (cudarc loads each at
//! its first use and panics when one is missing).

pub use ntk_cuda::libraries::{Library, Missing, NotLoaded, load};

/// The libraries the engine needs.
pub const NEEDED: [Library; 4] = [
    Library::Driver,
    Library::Cudnn,
    Library::Cublas,
    Library::Nvrtc,
];

/// Every library of [`NEEDED`] that does not load.
pub fn probe() -> Result<(), Missing> {
    ntk_cuda::libraries::probe("the cuDNN engine", &NEEDED)
}
