//! The error type of the numerics: each variant says what went wrong and carries the values
//! its message names; the messages are those the binaries print after `error: `.

use ntk_names::controls_escaped as shown;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong choosing a device or computing a spectrum.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    // --- devices ---
    /// A backend this binary does not have.
    #[error(
        "backend `{}` is not built into this binary (built: {built}); rebuild with \
         `--features {}`",
        shown(wanted),
        shown(wanted)
    )]
    DeviceNotBuilt { wanted: String, built: String },
    /// A name that is no backend.
    #[error(
        "unknown backend `{}`; expected one of {} (built into this binary: {built})",
        shown(wanted),
        ntk_names::list::<crate::backend::Backend>()
    )]
    UnknownDevice { wanted: String, built: String },
    /// A backend named by the `BURN_DEVICE` environment variable that cannot be used.
    #[error("BURN_DEVICE (in the environment): {0}")]
    FromEnvironment(Box<Error>),
    /// The cuda backend without an NVIDIA driver.
    #[error(
        "backend `cuda`: the NVIDIA driver library (libcuda.so.1) cannot be loaded on this \
         machine (no NVIDIA driver, or its directory is not on LD_LIBRARY_PATH); use \
         --backend flex or wgpu"
    )]
    CudaDriver,
    /// A precision the device lacks.
    #[error("the {backend} device does not support {precision}; use --precision f32")]
    Precision {
        backend: crate::backend::Backend,
        precision: crate::backend::Precision,
    },

    // --- numerics ---
    /// An output mode that is not sum, full or an index.
    #[error(
        "unknown output `{output}`: expected sum, full or an output index, an integer (0, 1, ...)"
    )]
    UnknownOutput { output: String },
    /// A kernel of size 0.
    #[error("empty kernel")]
    EmptyKernel,
    /// Two kernels compared entry by entry that are not the same size.
    #[error("kernels of sizes {a} and {b} compared: they must be the same size")]
    KernelSizes { a: usize, b: usize },
    /// A kernel with NaN or infinite entries.
    #[error("the kernel has non-finite entries (overflow or NaN in the network)")]
    NonFiniteKernel,
    /// A kernel whose every entry is finite (the largest `largest_entry`) but whose largest
    /// eigenvalue is not in f64 (at most `n` times the largest entry, so only a kernel within
    /// a factor `n` of f64's largest number): its spectrum cannot be written. `lambda_max`
    /// is its value where the route knows it (found on the kernel scaled by a power of two),
    /// as the decimal `(mantissa, exponent)`.
    #[error(
        "the kernel's largest eigenvalue lambda_max{} is past f64's largest number \
         (1.8e308), though its every entry is finite (the largest {largest_entry:.3e}): its \
         spectrum cannot be written in f64; rescale the inputs or the weights down (kappa \
         does not depend on the kernel's scale)",
        match lambda_max { Some((m, e)) => format!(" = {m:.3}e{e}"), None => String::new() }
    )]
    SpectrumOverflow {
        largest_entry: f64,
        lambda_max: Option<(f64, i32)>,
    },
    /// The inputs' Gram matrix `X X^T` (rows are samples), or the covariance `X^T X` formed
    /// in its place when it is smaller (their nonzero eigenvalues are one), overflows (or
    /// holds NaN): `largest` is the largest input magnitude (hundred-and-eleventh hostile
    /// round, N3: "Gram matrix X^T X").
    #[error(
        "the inputs' Gram matrix X X^T (or the covariance X^T X formed in its place) is not \
         finite in f64 (the largest input magnitude is {largest:e}): rescale the inputs"
    )]
    NonFiniteGram { largest: f64 },
    /// The eigensolver failed.
    #[error("{message}")]
    Eigensolver { message: String },
    /// The host linear algebra asked for (`NTK_BLAS`) cannot run.
    #[error("the host linear algebra (NTK_BLAS): {message}")]
    BlasChoice { message: String },
}
