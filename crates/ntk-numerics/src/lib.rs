//! The numerics under the NTK tools, with no knowledge of networks, data sets or files:
//!
//! - compute: [`backend`] (the Burn device and float precision), [`linalg`] (host GEMM,
//!   SYRK and the symmetric eigensolver: OpenBLAS or faer), [`expm1`] (a vectorizable
//!   `e^x - 1` in f32), [`symmetric`] (a dense symmetric matrix's product, Cholesky factor
//!   and solves: the level-2 arithmetic of Lanczos);
//! - the kernel and its spectrum: [`kernel`] ([`kernel::Kernel`], [`kernel::OutputMode`]),
//!   [`spectrum`] (f64 eigenvalues, condition number, numerical rank);
//! - [`bench`]: peak FLOP rates and best-of timers for the benchmarks.

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

pub mod backend;
pub mod bench;
pub mod error;
pub mod expm1;
pub mod kernel;
pub mod linalg;
pub mod spectrum;
pub mod symmetric;

pub use error::{Error, Result};
