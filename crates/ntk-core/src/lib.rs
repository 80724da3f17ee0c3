//! Shared infrastructure of the NTK tools, with no knowledge of networks or data sets:
//!
//! - compute: [`backend`] (the device and float precision), [`linalg`] (host GEMM, SYRK
//!   and the symmetric eigensolver: OpenBLAS or faer);
//! - the kernel and its spectrum: [`kernel`] ([`kernel::Kernel`], [`kernel::OutputMode`]),
//!   [`spectrum`] (f64 eigenvalues, condition number, numerical rank);
//! - files: [`io`] (atomic writes), [`npy`], [`outset`] (output sets committed whole),
//!   [`lock`] (one writer per run or sweep directory), [`provenance`] (config
//!   fingerprints that decide whether a result may be reused),
//!   [`config_file`] (TOML configs), [`overrides`] (`--set KEY=VALUE` at dotted keys);
//! - runs: [`sweep`] (the sweep framework of both tools), [`slurm`] (job arrays), [`table`] (CSV rows), [`stats`],
//!   [`budget`] (memory estimates), [`oom`] (out of memory as an error), [`progress`],
//!   [`plot`] (publication figures), [`bench`] (peak and timers), [`cli`] (binary
//!   start-up).

pub mod backend;
pub mod bench;
pub mod budget;
pub mod cli;
pub mod config_file;
pub mod error;
pub mod expm1;
pub mod io;
pub mod kernel;
pub mod linalg;
pub mod lock;
pub mod npy;
pub mod oom;
pub mod outset;
pub mod overrides;
pub mod plot;
pub mod progress;
pub mod provenance;
pub mod slurm;
pub mod spectrum;
pub mod stats;
pub mod sweep;
pub mod table;

pub use error::{Error, Result};
