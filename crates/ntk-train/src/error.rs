//! The error type of the training library: the errors of the crates it builds on (their
//! messages unchanged) and its own, each carrying the values its message names. A diverged
//! run is not an error (its summary says so).

use std::path::PathBuf;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in a training run, a sweep or a report.
#[derive(Debug, thiserror::Error)]
/// The errors of the crates below are boxed (they are large; this keeps `Result` small).
pub enum Error {
    #[error(transparent)]
    Runs(Box<ntk_runs::Error>),
    #[error(transparent)]
    Numerics(Box<ntk_numerics::Error>),
    #[error(transparent)]
    Data(Box<ntk_data::DataError>),
    #[error(transparent)]
    Model(Box<ntk_model::ModelError>),
    #[error(transparent)]
    Kernel(Box<ntk_kernel::Error>),

    /// A config value the trainer cannot use: `key = value: reason`.
    #[error("{key} = {value}: {reason}")]
    Config {
        key: &'static str,
        value: String,
        reason: &'static str,
    },
    /// Several problems of one config, each its own error.
    #[error("{} problems:{}", .0.len(), ntk_runs::error::bullets(.0))]
    Problems(Vec<Error>),
    /// A config that fails a check beyond single values (keys that do not go together, a
    /// missing key, an unsupported combination); the message names the keys.
    #[error("{0}")]
    Invalid(String),
    /// A config text that does not parse.
    #[error(transparent)]
    Toml(#[from] toml::de::Error),
    /// An error of the config file or run directory `path`.
    #[error("{}: {source}", .path.display())]
    At {
        path: PathBuf,
        #[source]
        source: Box<Error>,
    },
    /// A sweep point whose config is invalid.
    #[error("sweep point {id}: {source}")]
    Point {
        id: String,
        #[source]
        source: Box<Error>,
    },
    /// The held-out set of `train.test_n` samples cannot be loaded.
    #[error("train.test_n = {test_n}: {source}")]
    TestSet {
        test_n: usize,
        #[source]
        source: Box<Error>,
    },
    /// The NTK tracked during training cannot be computed.
    #[error("ntk during training, epoch {epoch}: {source}")]
    Ntk {
        epoch: usize,
        #[source]
        source: Box<Error>,
    },

    // --- files and checkpoints ---
    /// A file of an earlier run cannot be removed.
    #[error("{}: cannot remove: {source}", .path.display())]
    Remove {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A model or optimizer record (or momentum buffer) that cannot be saved or loaded: the
    /// recorder's message.
    #[error("{}: {message}", .path.display())]
    Record { path: PathBuf, message: String },
    /// A record error that names no file.
    #[error("{0}")]
    Recorder(String),
    /// A `checkpoint.json` that does not parse.
    #[error("{}: not a checkpoint pointer: {source}", .path.display())]
    NotPointer {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// A checkpoint whose pointer or files show it cannot be trusted.
    #[error(
        "{}: {why}; the checkpoint cannot be trusted (start the run again in a new --out)",
        .path.display()
    )]
    Untrusted { path: PathBuf, why: String },
    /// An output set that cannot be begun or committed (the message names its directory).
    #[error("{0}")]
    Io(#[source] std::io::Error),
}

impl From<ntk_runs::Error> for Error {
    fn from(e: ntk_runs::Error) -> Self {
        Self::Runs(Box::new(e))
    }
}

impl From<ntk_numerics::Error> for Error {
    fn from(e: ntk_numerics::Error) -> Self {
        Self::Numerics(Box::new(e))
    }
}

impl From<ntk_data::DataError> for Error {
    fn from(e: ntk_data::DataError) -> Self {
        Self::Data(Box::new(e))
    }
}

impl From<ntk_model::ModelError> for Error {
    fn from(e: ntk_model::ModelError) -> Self {
        Self::Model(Box::new(e))
    }
}

impl From<ntk_kernel::Error> for Error {
    fn from(e: ntk_kernel::Error) -> Self {
        Self::Kernel(Box::new(e))
    }
}
