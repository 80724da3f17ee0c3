//! The error type of the NTK library: the errors of the crates it builds on (their messages
//! unchanged) and its own, each carrying the values its message names.

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong computing a kernel, its extreme eigenvalues or its theory.
#[derive(Debug, thiserror::Error)]
/// The errors of the crates below are boxed (they are large; this keeps `Result` small).
pub enum Error {
    #[error(transparent)]
    Numerics(Box<ntk_numerics::Error>),
    #[error(transparent)]
    Model(Box<ntk_model::ModelError>),
    /// A config value the kernel cannot be computed with: `key = value: reason`.
    #[error("{key} = {value}: {reason}")]
    Config {
        key: &'static str,
        value: String,
        reason: String,
    },
    /// A request that fails a check beyond single values; the message names the keys.
    #[error("{0}")]
    Invalid(&'static str),
    /// A kernel the extreme eigensolver cannot take.
    #[error("extreme eigenvalues: a square non-empty kernel, got {rows} x {cols}")]
    NotSquare { rows: usize, cols: usize },
    /// A Cholesky factorization that breaks down at every shift.
    #[error(
        "the kernel is not positive semi-definite: the Cholesky factorization of K + \
         {shift:.3e} I (256 n eps lambda_max) breaks down at row {row}"
    )]
    NotPsd { shift: f64, row: usize },
    /// Lanczos on the inverse that gave no positive finite Ritz value.
    #[error("Lanczos on (K + {shift:.3e} I)^-1 gave the Ritz value {theta}")]
    RitzValue { shift: f64, theta: f64 },
    /// Lanczos that failed (its tridiagonal eigensolver, reading its coefficients off the
    /// device).
    #[error("{0}")]
    Lanczos(String),
    /// Lanczos whose operator produced a value that is not finite (an overflow: on `K`, its
    /// `lambda_max` passed the arithmetic's range; on `K^{-1}`, a tiny pivot).
    #[error("Lanczos: the operator produced non-finite values")]
    LanczosNonFinite,
    /// Lanczos on `(K + s I)^-1` that overflowed at every shift `s`: the kernel's smallest
    /// eigenvalue (plus the shift) is below what f64 inverts at the kernel's scale, a
    /// kernel whose largest entry is `largest` (about 1e-290 or less). Said, never taken for
    /// an invariant space (ninety-ninth hostile round, D4; the full route scales such a
    /// kernel by a power of two first).
    #[error(
        "the extreme eigenvalues of a kernel of scale {largest:.3e} (its largest entry): Lanczos \
         on its inverse (K + s I)^-1 overflowed f64 at every shift s, its smallest eigenvalue \
         being too small for f64 to invert at this scale; probe.eigen = \"full\" solves it, \
         or rescale the inputs up"
    )]
    InverseOverflow { largest: f64 },
    /// A device operation that failed (the backend's error).
    #[error("{0}")]
    Device(String),
    /// Inputs that are not `n` rows of one positive length.
    #[error("x has {len} values: not n = {n} rows of the same positive length")]
    Ragged { len: usize, n: usize },
}

impl From<ntk_numerics::Error> for Error {
    fn from(e: ntk_numerics::Error) -> Self {
        Self::Numerics(Box::new(e))
    }
}

impl From<ntk_model::ModelError> for Error {
    fn from(e: ntk_model::ModelError) -> Self {
        Self::Model(Box::new(e))
    }
}
