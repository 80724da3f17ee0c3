//! What can go wrong on the device: a library that does not load, a call that fails (with the
//! library's own status), a kernel that does not compile, a network the engine does not run.

/// The cuDNN engine's errors.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A shared library the engine loads at run time is not found (see [`crate::cudnn::libraries`]).
    #[error("{0}")]
    Missing(#[from] ntk_cuda::Missing),
    /// A call into the CUDA driver, cuDNN or cuBLAS failed.
    #[error(transparent)]
    Call(#[from] ntk_cuda::CallError),
    /// NVRTC did not compile the engine's kernels.
    #[error("NVRTC: the engine's kernels did not compile: {0}")]
    Compile(String),
    /// The network's activation has no CUDA form in the registry.
    #[error(
        "the cuDNN engine runs an activation through its CUDA form in the registry, and \
         {activation} has none (ntk_model::activation::ActivationFn::cuda): add one there, \
         or train with train.engine = \"host\" or \"burn\""
    )]
    NoCudaForm { activation: String },
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
    /// An environment setting of the engine with a value it does not take.
    #[error("{name}={value:?}: expected {expected}")]
    Setting {
        name: &'static str,
        value: String,
        expected: &'static str,
    },
    /// A copy between host and device of more values than the device buffer holds (a bug
    /// in the engine: its buffers are sized from its own layout).
    #[error("a copy {direction} of {values} values, into or from a device buffer of {room}")]
    Copy {
        direction: &'static str,
        values: usize,
        room: usize,
    },
    /// Momentum buffers of the wrong length.
    #[error("{have} momentum values for a network of {want} parameters")]
    MomentumSize { have: usize, want: usize },
}

pub type Result<T> = std::result::Result<T, Error>;

use ntk_cuda::Lib;

pub(crate) use ntk_cuda::call::{cublas, driver};

/// `Ok` or cuDNN's [`Error::Call`] naming `what`.
pub(crate) fn cudnn(what: &'static str, s: cudarc::cudnn::sys::cudnnStatus_t) -> Result<()> {
    let ok = cudarc::cudnn::sys::cudnnStatus_t::CUDNN_STATUS_SUCCESS;
    Ok(ntk_cuda::call::check(Lib::Cudnn, what, s, ok)?)
}
