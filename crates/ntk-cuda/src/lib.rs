//! NVIDIA's run-time libraries as the GPU crates use them (`ntk-engine`'s cuDNN engine,
//! `ntk-cusolver`'s eigensolver), with no kernels of its own:
//!
//! - [`libraries`]: which of libcuda, libcudnn, libcublas, libnvrtc and libcusolver load,
//!   asked with `dlopen` before any call into them (cudarc loads each at its first use and
//!   panics when one is missing), and where a researcher gets each;
//! - [`call`]: a library call that failed, as an error naming the library, the call and the
//!   status it returned;
//! - [`context`]: a device's context, a stream of its own, and its name;
//! - [`version`]: the CUDA version of this build's bindings (CUDA 13 or 12, chosen at build
//!   time by `CUDARC_CUDA_VERSION`), the driver's, and whether they and NVRTC's PTX go
//!   together.

pub mod call;
pub mod context;
pub mod libraries;
pub mod version;

pub use call::{CallError, Lib};
pub use context::{Opened, open};
pub use libraries::{Library, Missing, NotLoaded};
pub use version::CudaVersion;
