//! The probe's TOML configuration: `[data]`, the network (either `[model]`, an [`MlpConfig`]
//! whose `input_dim` comes from the data, or `[resnet]`, a [`ResNetConfig`] whose
//! `in_channels * image_size^2` must match it) and `[probe]`. Unknown keys are refused with
//! their line.

use std::path::Path;

use ntk_core::overrides::Assignment;
use ntk_data::{DataConfig, Dataset};
use ntk_model::{MlpConfig, NetSpec, ResNetConfig};
use serde::{Deserialize, Serialize};

use ntk_core::backend::Precision;
use ntk_core::kernel::OutputMode;

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

/// Which eigenvalues of the kernel are computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Eigen {
    /// Every eigenvalue, by the host's symmetric eigensolver (LAPACK or faer): the exact
    /// numerical rank, `eigenvalues.npy` holds the spectrum.
    #[default]
    Full,
    /// `lambda_min` and `lambda_max` only, on the compute device (`crate::extreme`: blocked
    /// Cholesky and Lanczos, `n^3 / 3` against `~4 n^3 / 3`); a singular kernel's rank is a
    /// lower bound; `eigenvalues.npy` holds `[lambda_min, lambda_max]`. The whole-set
    /// protocol only (the blocks of the official protocol are small: full spectra).
    Extreme,
}

impl Eigen {
    pub fn is_full(&self) -> bool {
        *self == Self::Full
    }
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "full" => Some(Self::Full),
            "extreme" => Some(Self::Extreme),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Self::Full => "full",
            Self::Extreme => "extreme",
        }
    }
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
    /// `full` (default): every eigenvalue on the host; `extreme`: `lambda_min`,
    /// `lambda_max` and kappa on the compute device. Left out of the serialized config at
    /// its default, so the fingerprints of results recorded before this key existed (all
    /// `full`) still match ([`ntk_core::provenance`]).
    #[serde(default, skip_serializing_if = "Eigen::is_full")]
    pub eigen: Eigen,
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
            eigen: Eigen::Full,
            device: None,
            embedding_angles: false,
            pair: None,
        }
    }
}

/// A probe config: `[data]`, exactly one of `[model]` (an MLP) and `[resnet]` (a CIFAR
/// ResNet, whose NTK is taken through the autodiff path), and `[probe]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeConfig {
    pub data: DataConfig,
    /// The MLP (`[model]`); `None` when the config has `[resnet]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<MlpConfig>,
    /// The CIFAR ResNet (`[resnet]`); `None` when the config has `[model]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resnet: Option<ResNetConfig>,
    #[serde(default)]
    pub probe: ProbeSection,
}

impl ProbeConfig {
    /// Reads and parses a TOML file; errors name the file, line and key (and the file when
    /// it has neither or both of `[model]` and `[resnet]`).
    pub fn load(path: &Path) -> Result<Self, String> {
        Self::load_with(path, &[])
    }

    /// [`Self::load`] with `--set` overrides applied before the types are checked
    /// ([`ntk_core::overrides`]); errors in an override name it and its key. The caller
    /// validates the result ([`Self::validate`]) as it does a file.
    pub fn load_with(path: &Path, sets: &[Assignment]) -> Result<Self, String> {
        let cfg: Self = ntk_core::overrides::load(path, sets)?;
        cfg.net().map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(cfg)
    }

    pub fn parse(text: &str) -> Result<Self, String> {
        let cfg: Self = toml::from_str(text).map_err(|e| e.to_string())?;
        cfg.net()?;
        Ok(cfg)
    }

    /// The configured network: exactly one of `[model]` and `[resnet]`.
    pub fn net(&self) -> Result<NetSpec, String> {
        NetSpec::from_tables(self.model.as_ref(), self.resnet.as_ref())
    }

    /// The MLP of `[model]`; an error when the config describes a ResNet (or no network).
    pub fn mlp(&self) -> Result<&MlpConfig, String> {
        match (&self.model, self.net()?) {
            (Some(m), NetSpec::Mlp(_)) => Ok(m),
            _ => {
                Err("this needs an MLP ([model]); the config describes a ResNet ([resnet])".into())
            }
        }
    }

    /// The MLP of `[model]`, mutable; the same errors as [`Self::mlp`].
    pub fn mlp_mut(&mut self) -> Result<&mut MlpConfig, String> {
        self.mlp()?;
        Ok(self.model.as_mut().expect("checked by mlp()"))
    }

    /// Outputs of the network: `model.output_dim` or `resnet.num_classes`.
    pub fn output_dim(&self) -> Result<usize, String> {
        Ok(self.net()?.classes())
    }

    /// Checks values the types cannot: errors name the key.
    pub fn validate(&self) -> Result<(), String> {
        let net = self.net()?;
        if let NetSpec::ResNet(r) = &net {
            r.validate().map_err(|e| e.to_string())?;
            if matches!(self.probe.method, Method::Structured | Method::Theory) {
                return Err(format!(
                    "probe.method = {}: a ResNet's NTK is taken through the autodiff path \
                     (method = \"autodiff\" or \"auto\")",
                    serde_json::to_string(&self.probe.method).unwrap_or_default()
                ));
            }
            if self.probe.embedding_angles || self.probe.pair.is_some() {
                return Err(
                    "probe.embedding_angles and probe.pair (layer embedding angles) are \
                     implemented for MLPs ([model]) only, not for [resnet]"
                        .into(),
                );
            }
            if self.data.dataset == Dataset::Synthetic
                && let Some(d) = self.data.input_dim
            {
                net.check_input_dim(d, "data.input_dim")?;
            }
        }
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
        let outputs = self.output_dim()?;
        if let OutputMode::Single(o) = self.probe.output
            && o >= outputs
        {
            return Err(format!(
                "probe.output = {o}: the model has {outputs} output(s)"
            ));
        }
        Ok(())
    }
}
