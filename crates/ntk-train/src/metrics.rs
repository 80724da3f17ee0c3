//! The per-run tables: `metrics.csv` (one row per epoch) and `ntk.csv` (the probe during
//! training), written atomically after every epoch, pandas-ready.

use std::path::Path;

use serde::de::DeserializeOwned;
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

/// Writes rows as CSV, atomically (a reader never sees half a file).
pub fn write_csv<T: Serialize>(path: &Path, rows: &[T]) -> Result<(), String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.serialize(r)
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let bytes = w.into_inner().map_err(|e| e.to_string())?;
    ntk_core::io::atomic_write(path, &bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// Reads a CSV written by [`write_csv`]; a missing file is an empty table.
pub fn read_csv<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>, String> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("{}: cannot read: {e}", path.display())),
    };
    parse_csv(&bytes, &path.display().to_string())
}

/// Parses the bytes of a CSV written by [`write_csv`]; every row must parse (a bad row is
/// an error naming `name` and the row, never skipped).
pub fn parse_csv<T: DeserializeOwned>(bytes: &[u8], name: &str) -> Result<Vec<T>, String> {
    csv::Reader::from_reader(bytes)
        .deserialize()
        .map(|row| row.map_err(|e| format!("{name}: {e}")))
        .collect()
}
