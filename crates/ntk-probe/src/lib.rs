//! The probe as an application: configs ([`config`]), one probe run that writes
//! pandas/numpy-ready files ([`run`]), the official protocol's blocks ([`blocks`]), sweeps
//! with their tables and figures ([`sweep`]), the papers' figures ([`fig1`], [`gmap`],
//! [`activation_fig`], [`transfer_fig`]) and the benchmark ([`bench`]). The kernel itself
//! is computed by `ntk-kernel`.

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
