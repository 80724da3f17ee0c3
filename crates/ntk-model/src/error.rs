//! Errors of model construction and weight I/O.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum ModelError {
    /// A config field holds a value the model cannot be built with.
    #[error("invalid model config: field `{field}` = {value}: {reason}")]
    InvalidConfig {
        field: &'static str,
        value: String,
        reason: String,
    },
    #[error("{path}: {reason}")]
    Weights { path: String, reason: String },
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl ModelError {
    pub(crate) fn invalid(
        field: &'static str,
        value: impl ToString,
        reason: impl Into<String>,
    ) -> Self {
        Self::InvalidConfig {
            field,
            value: value.to_string(),
            reason: reason.into(),
        }
    }
}
