//! What can go wrong choosing or running an engine.

use crate::engine::{Engine, StateForm};

/// An engine that does not apply, cannot start, or failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `train.engine = "host"` for a network no host engine trains.
    #[error(
        "train.engine = \"host\": the host engines train MLPs without normalization layers \
         and CIFAR ResNets, not {model}; use \"auto\" or \"burn\""
    )]
    NoHostEngine { model: String },

    /// `train.engine = "cudnn"` where the cuDNN engine does not apply or cannot start, or a
    /// device that failed under it.
    #[error("train.engine = \"cudnn\": {reason}")]
    NoCudnnEngine { reason: String },

    /// `train.fp32_precision = "tf32"` under `auto` where the cuDNN engine, the only one with
    /// TF32, does not start.
    #[error(
        "train.fp32_precision = tf32: TF32 applies to the cuDNN engine only, and it does not \
         start here ({reason}); leave the key out to train in f32 on another engine"
    )]
    Tf32WithoutCudnn { reason: String },

    /// A setting the chosen engine cannot run: `key = value: reason`.
    #[error("{key} = {value}: {reason}")]
    Setting {
        key: &'static str,
        value: String,
        reason: &'static str,
    },

    /// Momentum buffers of another size than the network's parameters.
    #[error("momentum buffers hold {have} values, the network has {want} parameters")]
    MomentumSize { have: usize, want: usize },

    /// Optimizer state of another form than the engine keeps.
    #[error("the {engine} engine keeps {want} optimizer state, not {got}")]
    StateForm {
        engine: Engine,
        want: StateForm,
        got: StateForm,
    },
}

/// A result of the engine layer.
pub type Result<T> = std::result::Result<T, Error>;
