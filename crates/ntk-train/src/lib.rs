//! SGD training of ntk-model networks on the probe's data sets, in sweeps over depth,
//! activation, normalization, learning rate and seed: the training-speed side of the NTK
//! conditioning story (Liu & Hui, Fig. 3; Agarwal et al.'s normalization comparisons).
//!
//! Layout: [`config`] (the TOML file), [`model`] (what is trained), [`schedule`] (learning
//! rates), [`train`] (one run: the epoch loop, evaluation, tracking, divergence),
//! [`run_dir`] (a run's directory: what it may hold, how a run starts or resumes there),
//! [`summary`] (`summary.json`), [`budget`] (the memory a run needs), [`stepper`] (the step
//! engines: Burn's autodiff with [`sgd`], or [`host`]), [`checkpoint`], [`metrics`] (the CSV
//! tables), [`track`] (the NTK during training), [`sweep`] (expansion, shards), [`report`]
//! (tables and figures from run directories) with [`files`] (their names), [`progress`],
//! [`bench`].
//! Why a custom loop rather than burn-train's learner is said in [`train`].

pub mod bench;
pub mod budget;
pub mod checkpoint;
pub mod config;
pub mod error;
pub mod files;
pub mod host;
pub mod metrics;
pub mod model;
/// The reporter of long runs lives in ntk-runs (shared with the probe's sweeps).
pub use ntk_runs::progress;
pub mod report;
pub mod run_dir;
pub mod schedule;
pub mod sgd;
pub mod stepper;
pub mod summary;
pub mod sweep;
pub mod track;
pub mod train;

pub use error::{Error, Result};

/// This tool and version, as results record it (`provenance.tool`).
pub const TOOL: &str = concat!("ntk-train ", env!("CARGO_PKG_VERSION"));
