//! The per-run tables: `metrics.csv` (one row per epoch), `ntk.csv` and
//! `representations.csv` (the probes during training), written atomically after every
//! epoch, pandas-ready.

use serde::{Deserialize, Serialize};

/// One row of `metrics.csv`. `test_*` are empty on epochs without evaluation; `lr` is the
/// rate of the epoch's first step; `seconds` and `samples_per_second` time the training
/// steps of the epoch (evaluation excluded).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct EpochMetrics {
    pub epoch: usize,
    /// SGD steps completed at the end of the epoch.
    pub iteration: usize,
    /// Mean training loss (`train.loss`) over the epoch's batches, weighted by batch size
    /// (each measured before its step, as PyTorch loops log it).
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

impl NtkRow {
    /// The row of a kernel of `n` samples measured after `epoch` epochs in `seconds`: its
    /// conditioning as the library reports it ([`ntk_kernel::api::Conditioning`]; a CSV row
    /// holds flat fields, so the values are copied, not nested).
    pub fn of(epoch: usize, n: usize, c: &ntk_kernel::api::Conditioning, seconds: f64) -> Self {
        Self {
            epoch,
            n,
            lambda_min: c.lambda_min,
            lambda_max: c.lambda_max,
            kappa: c.kappa,
            singular: c.singular,
            rank: c.rank,
            min_grad_angle_deg: c.min_grad_angle_deg,
            seconds,
        }
    }
}

/// One row of `representations.csv` (Agarwal et al., Fig. 1): the average normalized dot
/// product of the representations of the tracked test inputs at one layer after `epoch`
/// epochs (0: at init),
///
/// `mean_cosine = 2 / (n (n - 1)) sum_{i < j} <h_i, h_j> / (|h_i| |h_j|)`,
///
/// and the mean of its absolute values (`mean_abs_cosine`); a pair with a zero vector
/// counts as cosine 0.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RepresentationRow {
    pub epoch: usize,
    /// 0 for the inputs, then the layers in order (the last is the top representation).
    pub layer: usize,
    /// What the layer is: `input`, `hidden 3` (an MLP's `a_3`), `stem`, `block 7`,
    /// `pooled` (a ResNet's features before the classifier).
    pub name: String,
    pub n: usize,
    pub mean_cosine: f64,
    pub mean_abs_cosine: f64,
}

/// The tables of the probes during training, checkpointed with the metrics.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tracked {
    pub ntk: Vec<NtkRow>,
    pub representations: Vec<RepresentationRow>,
}

pub use ntk_files::table::{parse_csv, read_csv, write_csv};
