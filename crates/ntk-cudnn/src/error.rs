//! What can go wrong on the device: a library that does not load, a call that fails (with the
//! library's own status), a kernel that does not compile, a network the engine does not run.

/// The device engine's errors.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A shared library the engine loads at run time is not found (see [`crate::libraries`]).
    #[error("{0}")]
    Missing(#[from] crate::libraries::Missing),
    /// A CUDA driver call failed.
    #[error("CUDA driver: {what}: {status}")]
    Driver { what: &'static str, status: String },
    /// A cuDNN call failed.
    #[error("cuDNN: {what}: {status}")]
    Cudnn { what: &'static str, status: String },
    /// A cuBLAS call failed.
    #[error("cuBLAS: {what}: {status}")]
    Cublas { what: &'static str, status: String },
    /// NVRTC did not compile the engine's kernels.
    #[error("NVRTC: the engine's kernels did not compile: {0}")]
    Compile(String),
    /// No convolution algorithm of cuDNN runs this shape in f32 without tensor cores.
    #[error("cuDNN: no {pass} algorithm for the convolution {shape} (f32, FMA math)")]
    NoAlgorithm { pass: &'static str, shape: String },
    /// A batch larger than the engine's buffers, or of a different image size.
    #[error("a batch of {rows} rows of {d} values; the engine holds at most {cap} rows of {want}")]
    Batch {
        rows: usize,
        d: usize,
        cap: usize,
        want: usize,
    },
    /// Momentum buffers of the wrong length.
    #[error("{have} momentum values for a network of {want} parameters")]
    MomentumSize { have: usize, want: usize },
}

pub type Result<T> = std::result::Result<T, Error>;

/// `Ok` or [`Error::Driver`] naming `what`.
pub(crate) fn driver<T>(
    what: &'static str,
    r: std::result::Result<T, cudarc::driver::DriverError>,
) -> Result<T> {
    r.map_err(|e| Error::Driver {
        what,
        status: format!("{e:?}"),
    })
}

/// `Ok` or [`Error::Cudnn`] naming `what`.
pub(crate) fn cudnn(what: &'static str, s: cudarc::cudnn::sys::cudnnStatus_t) -> Result<()> {
    if s == cudarc::cudnn::sys::cudnnStatus_t::CUDNN_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(Error::Cudnn {
            what,
            status: format!("{s:?}"),
        })
    }
}

/// `Ok` or [`Error::Cublas`] naming `what`.
pub(crate) fn cublas(what: &'static str, s: cudarc::cublas::sys::cublasStatus_t) -> Result<()> {
    if s == cudarc::cublas::sys::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(Error::Cublas {
            what,
            status: format!("{s:?}"),
        })
    }
}
