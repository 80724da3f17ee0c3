//! The numerics under the NTK tools, with no knowledge of networks, data sets or files:
//!
//! - compute: [`backend`] (the Burn device and float precision), [`linalg`] (host GEMM,
//!   SYRK and the symmetric eigensolver: OpenBLAS or faer), [`expm1`] (a vectorizable
//!   `e^x - 1` in f32), [`symmetric`] (a dense symmetric matrix's product, Cholesky factor
//!   and solves: the level-2 arithmetic of Lanczos);
//! - the kernel and its spectrum: [`kernel`] ([`kernel::Kernel`], [`kernel::OutputMode`]),
//!   [`spectrum`] (f64 eigenvalues, condition number, numerical rank);
//! - [`bench`]: peak FLOP rates and best-of timers for the benchmarks.

/// This crate's `eprintln!` throughout ([`ntk_system::say`]: a failed write to standard error
/// loses the line, never the process). Defined before every module.
macro_rules! eprintln {
    ($($arg:tt)*) => {
        ::ntk_system::say(::std::format_args!($($arg)*))
    };
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
