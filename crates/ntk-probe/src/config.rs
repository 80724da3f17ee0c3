//! The probe's TOML configuration: `[data]`, `[model]` (an [`MlpConfig`] whose `input_dim`
//! comes from the data) and `[probe]`. Unknown keys are refused with their line.

use std::path::{Path, PathBuf};

use ntk_data::{Scaling, Split};
use ntk_model::MlpConfig;
use serde::{Deserialize, Serialize};

use crate::backend::Precision;
use crate::kernel::OutputMode;

/// Where the inputs come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Dataset {
    /// n samples of N(0, I_d) (`input_dim`, default 5 as in the paper's text).
    Synthetic,
    Mnist,
    FashionMnist,
    #[serde(alias = "cifar10")]
    Cifar10,
    Digits,
}

impl Dataset {
    pub fn parse(s: &str) -> Option<Self> {
        serde_json::from_value(serde_json::Value::String(s.to_string())).ok()
    }
    pub fn name(self) -> &'static str {
        match self {
            Self::Synthetic => "synthetic",
            Self::Mnist => "mnist",
            Self::FashionMnist => "fashion-mnist",
            Self::Cifar10 => "cifar-10",
            Self::Digits => "digits",
        }
    }
}

/// How `n` samples are picked from an image set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SubsetRule {
    First,
    /// `n / classes` per class (the default for image sets).
    #[default]
    Balanced,
    /// Uniformly at random by `data.seed`.
    Random,
}

fn default_split() -> Split {
    Split::Train
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DataConfig {
    pub dataset: Dataset,
    pub n: usize,
    /// Synthetic only: the dimension d (default 5; the official code used 10).
    #[serde(default)]
    pub input_dim: Option<usize>,
    #[serde(default = "default_split")]
    pub split: Split,
    #[serde(default)]
    pub subset: SubsetRule,
    /// Pixel scaling (default: the official code's, `minus-one-one` or `cifar-per-channel`).
    #[serde(default)]
    pub scaling: Option<Scaling>,
    /// Scale every input to unit norm (Agarwal et al.'s assumption).
    #[serde(default)]
    pub unit_norm: bool,
    /// Seed of the synthetic draw or the random subset.
    #[serde(default)]
    pub seed: u64,
    /// Directory of the data set's files (default `datasets/data/<name>`).
    #[serde(default)]
    pub dir: Option<PathBuf>,
}

/// Which kernel protocol (`reference/conventions.md`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// The NTK of the whole set: one n x n kernel.
    #[default]
    Whole,
    /// The official code's: kappa of each block of `block_size` samples (a seeded random
    /// permutation, the last block possibly smaller), averaged over blocks.
    Blocks,
}

impl Protocol {
    pub fn name(self) -> &'static str {
        match self {
            Self::Whole => "whole",
            Self::Blocks => "blocks",
        }
    }
}

/// How the kernel is computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Structured for plain dense networks, autodiff otherwise.
    #[default]
    Auto,
    Structured,
    Autodiff,
    /// The infinite-width NTK of the same inputs (Jacot et al.'s recursion with the
    /// activation's dual kernel, `crate::theory`), written through the same files as a
    /// measurement so the two compare file to file. Paper convention, scalar output, no
    /// biases; the network's width and seed do not enter.
    Theory,
}

fn default_block_size() -> usize {
    512
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeSection {
    #[serde(default)]
    pub precision: Precision,
    #[serde(default)]
    pub protocol: Protocol,
    #[serde(default = "default_block_size")]
    pub block_size: usize,
    /// `sum` (default), `full`, or an output index.
    #[serde(default)]
    pub output: OutputMode,
    #[serde(default)]
    pub method: Method,
    /// Backend name when several are built in (also `--device`, `BURN_DEVICE`).
    #[serde(default)]
    pub device: Option<String>,
    /// Also compute the minimum embedding angle theta_l over the set at every layer (costs
    /// one Gram product per layer).
    #[serde(default)]
    pub embedding_angles: bool,
    /// A pair `[i, j]` whose embedding angles theta_0..theta_L are reported.
    #[serde(default)]
    pub pair: Option<[usize; 2]>,
}

impl Default for ProbeSection {
    fn default() -> Self {
        Self {
            precision: Precision::F32,
            protocol: Protocol::Whole,
            block_size: default_block_size(),
            output: OutputMode::Sum,
            method: Method::Auto,
            device: None,
            embedding_angles: false,
            pair: None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeConfig {
    pub data: DataConfig,
    pub model: MlpConfig,
    #[serde(default)]
    pub probe: ProbeSection,
}

/// Reads and parses a TOML config file; errors name the file, and for bad or unknown keys
/// the line and key (the toml crate's message).
pub fn load_toml<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read config: {e}", path.display()))?;
    toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

impl ProbeConfig {
    /// Reads and parses a TOML file; errors name the file, line and key.
    pub fn load(path: &Path) -> Result<Self, String> {
        load_toml(path)
    }

    pub fn parse(text: &str) -> Result<Self, String> {
        toml::from_str(text).map_err(|e| e.to_string())
    }

    /// Checks values the types cannot: errors name the key.
    pub fn validate(&self) -> Result<(), String> {
        if self.data.n == 0 {
            return Err("data.n = 0: need at least one sample".into());
        }
        if self.data.dataset == Dataset::Synthetic && self.data.input_dim == Some(0) {
            return Err("data.input_dim = 0: must be at least 1".into());
        }
        if self.data.dataset != Dataset::Synthetic && self.data.input_dim.is_some() {
            return Err(format!(
                "data.input_dim is only for the synthetic set; {} fixes its own dimension",
                self.data.dataset.name()
            ));
        }
        if self.probe.block_size < 2 {
            return Err(format!(
                "probe.block_size = {}: blocks need at least 2 samples",
                self.probe.block_size
            ));
        }
        if let Some([i, j]) = self.probe.pair
            && (i >= self.data.n || j >= self.data.n || i == j)
        {
            return Err(format!(
                "probe.pair = [{i}, {j}]: need two different indices below data.n = {}",
                self.data.n
            ));
        }
        if let OutputMode::Single(o) = self.probe.output
            && o >= self.model.output_dim
        {
            return Err(format!(
                "probe.output = {o}: the model has {} output(s)",
                self.model.output_dim
            ));
        }
        Ok(())
    }
}
