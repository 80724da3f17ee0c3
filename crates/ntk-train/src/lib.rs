//! SGD training of ntk-model networks on the probe's data sets: a custom loop (Burn's
//! autodiff and burn-optim's SGD) that writes one metrics row per epoch.
//!
//! Why a custom loop and not burn-train's learner: the runs here need exact control of the
//! data order (seeded per epoch, identical across backends), of the divergence rule (a
//! non-finite loss ends the run and is recorded) and of the output format
//! (`metrics.csv`, `summary.json`), which is what the papers' training-speed comparisons
//! read; the loop is 100 lines.

pub mod config;
pub mod train;
