//! The per-run tables: `metrics.csv` (one row per epoch) and `ntk.csv` (the probe during
//! training), written atomically after every epoch, pandas-ready.

use serde::{Deserialize, Serialize};

/// One row of `metrics.csv`. `test_*` are empty on epochs without evaluation; `lr` is the
/// rate of the epoch's first step; `seconds` and `samples_per_second` time the training
/// steps of the epoch (evaluation excluded).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct EpochMetrics {
    pub epoch: usize,
    /// SGD steps completed at the end of the epoch.
    pub iteration: usize,
    /// Mean cross-entropy over the epoch's batches, weighted by batch size (each measured
    /// before its step, as PyTorch loops log it).
    pub train_loss: f64,
    pub train_accuracy: f64,
    pub test_loss: Option<f64>,
    pub test_accuracy: Option<f64>,
    pub lr: f64,
    pub seconds: f64,
    pub samples_per_second: f64,
}

/// The columns of `metrics.csv`, in order.
pub const METRICS_COLUMNS: [&str; 9] = [
    "epoch",
    "iteration",
    "train_loss",
    "train_accuracy",
    "test_loss",
    "test_accuracy",
    "lr",
    "seconds",
    "samples_per_second",
];

/// One row of `ntk.csv`: the NTK of the probe subset after `epoch` epochs (0: at init).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct NtkRow {
    pub epoch: usize,
    pub n: usize,
    pub lambda_min: f64,
    pub lambda_max: f64,
    /// Empty when the kernel is numerically singular.
    pub kappa: Option<f64>,
    pub singular: bool,
    pub rank: usize,
    pub min_grad_angle_deg: Option<f64>,
    pub seconds: f64,
}

pub use ntk_core::table::{parse_csv, read_csv, write_csv};
