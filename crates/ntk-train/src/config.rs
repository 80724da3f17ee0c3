//! The training config: `[data]` and `[model]` as in the probe, plus `[train]`.

use std::path::Path;

use ntk_model::MlpConfig;
use ntk_probe::backend::Precision;
use ntk_probe::config::DataConfig;
use serde::{Deserialize, Serialize};

fn default_momentum() -> f64 {
    0.0
}
fn default_test_n() -> usize {
    10000
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainSection {
    /// Learning rate of SGD.
    pub lr: f64,
    #[serde(default = "default_momentum")]
    pub momentum: f64,
    #[serde(default)]
    pub nesterov: bool,
    #[serde(default)]
    pub weight_decay: f64,
    pub batch_size: usize,
    pub epochs: usize,
    /// Seed of the data order (the model's seed is `model.seed`).
    #[serde(default)]
    pub seed: u64,
    /// Test samples evaluated after every epoch (first n of the test split; 0 for none).
    #[serde(default = "default_test_n")]
    pub test_n: usize,
    #[serde(default)]
    pub precision: Precision,
    #[serde(default)]
    pub device: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainConfig {
    pub data: DataConfig,
    pub model: MlpConfig,
    pub train: TrainSection,
}

impl TrainConfig {
    /// Reads a TOML file; errors name the file, line and key.
    pub fn load(path: &Path) -> Result<Self, String> {
        let cfg: Self = ntk_probe::config::load_toml(path)?;
        cfg.validate()
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(cfg)
    }

    pub fn validate(&self) -> Result<(), String> {
        let t = &self.train;
        if !(t.lr.is_finite() && t.lr > 0.0) {
            return Err(format!("train.lr = {}: must be positive", t.lr));
        }
        if !(0.0..1.0).contains(&t.momentum) {
            return Err(format!(
                "train.momentum = {}: must be in [0, 1)",
                t.momentum
            ));
        }
        if t.batch_size == 0 {
            return Err("train.batch_size = 0: must be at least 1".into());
        }
        if t.epochs == 0 {
            return Err("train.epochs = 0: must be at least 1".into());
        }
        if self.model.output_dim < 2 {
            return Err(format!(
                "model.output_dim = {}: classification needs one output per class",
                self.model.output_dim
            ));
        }
        Ok(())
    }
}
