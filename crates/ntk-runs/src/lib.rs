//! Runs and their files, shared by both tools, with no numerics, networks or data sets
//! (it builds on neither Burn nor faer nor plotters):
//!
//! - files: [`io`] (atomic writes), [`npy`], [`outset`] (output sets committed whole),
//!   [`lock`] (one writer per run or sweep directory), [`provenance`] (config
//!   fingerprints that decide whether a result may be reused, data digests),
//!   [`config_file`] (TOML configs), [`names`] (the names of fixed choices, from serde), [`overrides`] (`--set KEY=VALUE` at dotted keys);
//! - runs: [`sweep`] (the sweep framework of both tools), [`slurm`] (job arrays), [`table`]
//!   (CSV rows), [`stats`], [`budget`] (memory estimates and limits), [`oom`] (out of
//!   memory as an error), [`progress`], [`cli`] (binary start-up), `args` (with the
//!   feature `cli`: the command-line vocabulary both tools share), [`figure`] (a figure's
//!   layout).

#[cfg(feature = "cli")]
pub mod args;
pub mod budget;
pub mod cli;
pub mod config_file;
pub mod error;
pub mod figure;
pub mod io;
pub mod lock;
pub mod names;
pub mod npy;
pub mod oom;
pub mod outset;
pub mod overrides;
pub mod progress;
pub mod provenance;
pub mod slurm;
pub mod stats;
pub mod sweep;
pub mod table;

pub use error::{Error, Result};
