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

/// Standard error written so that a failed write (a log on a full disk, `2>/dev/full`) loses
/// the line and never ends the process, where std's `eprintln!` panics (eighty-seventh hostile
/// round, D6: a tiled run died at its first progress line, leaving its lock and temporary set).
/// Defined before every module, so it is this crate's `eprintln!` throughout.
macro_rules! eprintln {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let _ = ::std::writeln!(::std::io::stderr(), $($arg)*);
    }};
}

pub mod angles;
pub mod api;
pub mod batch_norm;
pub mod compute;
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

pub use error::{Error, Result};
