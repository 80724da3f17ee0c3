//! The probe as an application: configs ([`config`]), one probe run that writes
//! pandas/numpy-ready files ([`run`]), the official protocol's blocks ([`blocks`]), sweeps
//! with their tables and figures ([`sweep`]), the papers' figures ([`fig1`], [`gmap`],
//! [`activation_fig`], [`transfer_fig`]) and the benchmark ([`bench`]). The kernel itself
//! is computed by `ntk-kernel`.

/// This crate's `eprintln!` throughout ([`ntk_system::say`]: a failed write to standard error
/// loses the line, never the process). Defined before every module.
macro_rules! eprintln {
    ($($arg:tt)*) => {
        ::ntk_system::say(::std::format_args!($($arg)*))
    };
}

pub mod activation_fig;
pub mod bench;
pub mod blocks;
pub mod config;
pub mod error;
pub mod fig1;
pub mod freed;
pub mod gmap;
pub mod onnx;
pub mod pages;
pub mod phases;
pub mod run;
pub mod solver;
pub mod sweep;
pub mod transfer_fig;

pub use error::{Error, Result};

/// This tool and version, as results record it (`provenance.tool`).
pub const TOOL: &str = concat!("ntk-probe ", env!("CARGO_PKG_VERSION"));
