//! SGD training of ntk-model networks on the probe's data sets, in sweeps over depth,
//! activation, normalization, learning rate and seed: the training-speed side of the NTK
//! conditioning story (Liu & Hui, Fig. 3; Agarwal et al.'s normalization comparisons).
//!
//! Layout: [`config`] (the TOML file), [`model`] (what is trained), [`schedule`] (learning
//! rates), [`train`] (one run's lifecycle: checks, start or resume, the step engine, the
//! summary), [`run`] (what a run is before its first step: identity, provenance, step
//! counts), [`data`] (the sets, each epoch's order, batches, evaluation), [`epoch`] (the
//! epoch loop: steps, metrics rows, checkpoints), [`divergence`] (when a run has diverged), [`run_dir`] (a run's
//! directory: what it may hold, how a run starts or resumes there), [`summary`]
//! (`summary.json`), [`budget`] (the memory a run needs), [`stepper`] (the step engines:
//! Burn's autodiff with [`sgd`], or [`host`]) and their [`loss`], [`checkpoint`], [`metrics`] (the CSV tables),
//! [`track`] (the probes during training: the NTK and the representations), [`predict`]
//! (what the NTK at initialization predicts for the run), [`sweep`]
//! (expansion, shards), [`report`] (tables and figures from run directories; [`convergence`] for runs that predicted
//! themselves) with [`files`]
//! (their names), [`progress`], [`bench`].
//! Why a custom loop rather than burn-train's learner is said in [`train`].

/// This crate's `eprintln!` throughout ([`ntk_system::say`]: a failed write to standard error
/// loses the line, never the process). Defined before every module.
macro_rules! eprintln {
    ($($arg:tt)*) => {
        ::ntk_system::say(::std::format_args!($($arg)*))
    };
}

pub mod bench;
pub mod budget;
pub mod checkpoint;
pub mod config;
pub mod convergence;
pub mod data;
pub mod data_checks;
pub mod divergence;
pub mod epoch;
pub mod error;
pub mod files;
pub mod foresee;
pub mod joins;
pub mod metrics;
pub mod model;
pub mod places;
pub mod predict;
/// The reporter of long runs lives in ntk-runs (shared with the probe's sweeps).
pub use ntk_runs::progress;
pub mod report;
pub mod run;
pub mod run_dir;
pub mod schedule;
pub mod seeds;
pub mod stepper;
pub mod summary;
pub mod sweep;
pub mod track;
pub mod train;

pub use error::{Error, Result};

/// This tool and version, as results record it (`provenance.tool`).
pub const TOOL: &str = concat!("ntk-train ", env!("CARGO_PKG_VERSION"));
