//! A device as the GPU crates open it: its context (the primary one, shared with any other
//! CUDA user in the process), a stream of its own and its name.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaStream};

use crate::call::{CallError, driver};
use crate::version::{self, CudaVersion};

/// An opened device.
pub struct Opened {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    /// The compute capability (major, minor): `(9, 0)` on an H100.
    pub capability: (i32, i32),
    /// The device's name and compute capability, for logs and provenance:
    /// `NVIDIA H100 80GB HBM3 (sm_90)`.
    pub name: String,
    /// The newest CUDA version the driver supports (at least this build's major version:
    /// [`open`] checks).
    pub driver: CudaVersion,
}

/// Device `ordinal` with a stream of its own, on a driver that runs this build's CUDA
/// version ([`version::check_driver`]). The caller asks for the libraries first
/// ([`crate::libraries::probe`]): cudarc panics on a missing libcuda.
pub fn open(ordinal: usize) -> Result<Opened, CallError> {
    let driver_cuda = version::driver()?;
    version::check_driver(version::BUILT, driver_cuda)?;
    let ctx = driver("creating the context", CudaContext::new(ordinal))?;
    let stream = driver("creating a stream", ctx.new_stream())?;
    let (major, minor) = driver("reading the compute capability", ctx.compute_capability())?;
    let name = format!(
        "{} (sm_{major}{minor})",
        driver("reading the device name", ctx.name())?
    );
    Ok(Opened {
        ctx,
        stream,
        capability: (major, minor),
        name,
        driver: driver_cuda,
    })
}
