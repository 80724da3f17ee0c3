//! What runs a network's forward and backward passes: the engine layer, between the models
//! (`ntk-model`) and the tools (`ntk-train`'s training runs, `ntk-kernel`'s Jacobians).
//!
//! - [`engine`]: the words: [`Engine`] (`burn`, `host`, `cudnn`), what a run asks for
//!   ([`EngineChoice`], `train.engine`), the form of a checkpoint's optimizer state
//!   ([`StateForm`]);
//! - [`mod@choose`]: the one choice ([`fn@choose`], [`check`], [`plan`]);
//! - [`stepper`]: the one interface a training run steps through ([`Stepper`]);
//! - [`burn`]: Burn's autodiff ([`burn::BurnStepper`]);
//! - [`host`]: the host engines on host GEMMs (MLP and CIFAR ResNet passes, per-sample
//!   Jacobians, SGD steps);
//! - `cudnn` (feature `cudnn`): the cuDNN engine for CIFAR ResNets on NVIDIA GPUs;
//! - [`loss`]: the training losses every engine computes, [`sgd`]: SGD's settings and rule;
//! - [`error`]: what can go wrong.

/// This crate's `eprintln!` throughout ([`ntk_system::say`]: a failed write to standard error
/// loses the line, never the process). Defined before every module.
macro_rules! eprintln {
    ($($arg:tt)*) => {
        ::ntk_system::say(::std::format_args!($($arg)*))
    };
}

pub mod burn;
pub mod choose;
#[cfg(feature = "cudnn")]
pub mod cudnn;
pub mod engine;
pub mod error;
#[doc(hidden)]
pub mod fixtures;
pub mod host;
pub mod loss;
pub mod sgd;
pub mod stepper;
#[cfg(test)]
mod tests;

pub use choose::{Setup, check, check_fp32, choose, describe, plan};
pub use engine::{Engine, EngineChoice, StateForm};
pub use error::{Error, Result};
pub use loss::Loss;
pub use sgd::Sgd;
pub use stepper::{Batch, Labelled, SavedOptim, Snapshot, StepResult, Stepper};
