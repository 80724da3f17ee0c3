//! The neural tangent kernel of a network, as a library: one entry point for any network of
//! `ntk-model` ([`compute::compute_kernel_net`]; the probe's commands and the trainer's NTK
//! tracking both call it), the empirical NTK of any Burn module ([`api::empirical_ntk`],
//! per-sample autodiff, [`jacobian`]), the fast structured kernel of dense MLPs
//! ([`structured`] on Burn tensors, [`host`] on the host engine), the extreme eigenvalues
//! and condition number on the device ([`extreme`]), gradient and embedding angles
//! ([`angles`]), and the infinite-width theory ([`theory`]: dual kernels, the NTK
//! recursion, its limits). What a kernel says (`kappa`, rank, minimum angle):
//! [`api::Conditioning`]; what it predicts for gradient descent on the square loss (the
//! linearized training curve and test outputs): [`predict`].

/// This crate's `eprintln!` throughout ([`ntk_system::say`]: a failed write to standard error
/// loses the line, never the process). Defined before every module.
macro_rules! eprintln {
    ($($arg:tt)*) => {
        ::ntk_system::say(::std::format_args!($($arg)*))
    };
}

pub mod angles;
pub mod api;
pub mod batch_norm;
pub mod compute;
pub mod embedding;
pub mod error;
pub mod extreme;
pub mod host;
pub mod jacobian;
pub mod predict;
pub mod scale;
pub mod structured;
pub mod theory;
#[cfg(feature = "burn-train")]
pub mod train_metric;
pub mod underflow;

pub use error::{Error, Result};
