//! The probe's TOML configuration: `[data]`, the network (either `[model]`, an [`MlpConfig`]
//! whose `input_dim` comes from the data, or `[resnet]`, a [`ResNetConfig`] whose
//! `in_channels * image_size^2` must match it) and `[probe]`. Unknown keys are refused with
//! their line.

use std::path::Path;

use ntk_data::{DataConfig, Dataset};
use ntk_model::{MlpConfig, ModelError, NetSpec, ResNetConfig};
use ntk_runs::overrides::{Assignment, ConfigName, Source};
use serde::{Deserialize, Serialize};

use ntk_numerics::backend::Precision;
use ntk_numerics::kernel::OutputMode;

use crate::Error;

/// Which kernel protocol (`reference/conventions.md`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// The NTK of the whole set: one n x n kernel.
    #[default]
    Whole,
    /// The official code's: kappa of each block of `block_size` samples (a seeded random
    /// permutation, the last block possibly smaller, one sample left over joining the block
    /// before it), averaged over blocks.
    Blocks,
}

impl Protocol {
    /// The config's name (the serde name: [`ntk_names`]).
    pub fn name(self) -> &'static str {
        ntk_names::name(&self)
    }
}

pub use ntk_kernel::batch_norm::BnStatistics;
pub use ntk_kernel::compute::Method;

impl std::fmt::Display for Protocol {
    /// The word configs and summaries use (the serde name).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&ntk_names::spelled(self))
    }
}

impl std::fmt::Display for Eigen {
    /// The word configs and summaries use (the serde name).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&ntk_names::spelled(self))
    }
}

/// Which eigenvalues of the kernel are computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Eigen {
    /// Every eigenvalue, by the host's symmetric eigensolver (LAPACK or faer): the exact
    /// numerical rank, `eigenvalues.npy` holds the spectrum.
    #[default]
    Full,
    /// `lambda_min` and `lambda_max` only, on the compute device (`ntk_kernel::extreme`: blocked
    /// Cholesky and Lanczos, `n^3 / 3` against `~4 n^3 / 3`); a singular kernel's rank is a
    /// lower bound; `eigenvalues.npy` holds `[lambda_min, lambda_max]`. The whole-set
    /// protocol only (the blocks of the official protocol are small: full spectra).
    Extreme,
    /// `lambda_min`, `lambda_max`, kappa and the minimum gradient angle of a kernel too
    /// large for the dense routes: its lower triangle formed tile by tile from the network's
    /// factors and factored in place, in f64 on the host (`ntk_kernel::extreme::tiled`);
    /// half the dense kernel's memory and no second copy, so all 60,000 MNIST images fit
    /// in 24 GB. Plain MLPs, the whole protocol, f64, outputs summed or one output; no
    /// `ntk.npy`; `eigenvalues.npy` holds `[lambda_min, lambda_max]`.
    Tiled,
}

impl Eigen {
    pub fn is_full(&self) -> bool {
        *self == Self::Full
    }
    pub fn parse(s: &str) -> Option<Self> {
        ntk_names::parse(s)
    }
    /// The config's name (the serde name: [`ntk_names`]).
    pub fn name(self) -> &'static str {
        ntk_names::name(&self)
    }
}

fn default_block_size() -> usize {
    512
}

pub use ntk_names::spelled;

/// A convention as an output spells it: the config's word (`unit_variance`), or the
/// `unitvariance` that summaries written before the spelling was fixed hold.
pub fn parse_convention(s: &str) -> Option<ntk_model::NtkConvention> {
    let s = if s == "unitvariance" {
        "unit_variance"
    } else {
        s
    };
    serde_json::from_value(serde_json::Value::String(s.to_string())).ok()
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
    /// `full`) still match ([`ntk_runs::provenance`]).
    #[serde(default, skip_serializing_if = "Eigen::is_full")]
    pub eigen: Eigen,
    /// BatchNorm networks only: normalize with the running statistics (`running`, the
    /// default: evaluation mode) or the probe batch's own (`batch`: the NTK of the batch
    /// map); see `ntk_kernel::batch_norm`. Absent from the serialized config when not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_norm_statistics: Option<BnStatistics>,
    /// Burn's backend when several are built in (also `--backend`, `BURN_DEVICE`); `device`,
    /// the key's name before 2026-11-29, is read as the same key. Not part of a result's
    /// identity (left out of the recorded config: `ntk_runs::provenance::RETIRED_KEYS`).
    #[serde(
        default,
        alias = "device",
        deserialize_with = "ntk_numerics::backend::de_name",
        skip_serializing_if = "Option::is_none"
    )]
    pub backend: Option<String>,
    /// Also compute the minimum embedding angle theta_l over the set at every layer (costs
    /// one Gram product per layer).
    #[serde(default)]
    pub embedding_angles: bool,
    /// A pair `[i, j]` whose embedding angles theta_0..theta_L are reported.
    #[serde(default)]
    pub pair: Option<[usize; 2]>,
    /// The network's weights from a safetensors file (the format of `--save-weights`, or
    /// PyTorch's under the same names) instead of the seeded draw; every name and shape is
    /// checked against the config's network both ways (each of its tensors in the file, each
    /// tensor of the file one it uses: `ntk_model::export::load`), and the file's SHA-256 is
    /// recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights: Option<std::path::PathBuf>,
    /// `protocol = "blocks"`: the blocks from a file (one block per line, row indices
    /// separated by commas or spaces, a partition of the samples: `blocks::read_given`)
    /// instead of the seeded permutation; the file's SHA-256 is recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocks: Option<std::path::PathBuf>,
}

impl ProbeSection {
    /// Refuses `probe.block_size` given (any value but its default) where the `protocols`
    /// a command runs form no blocks: `ntk-probe run` passes its one protocol, a sweep its
    /// `sweep.protocols` (its points' configs are checked under each protocol, so this is
    /// not part of [`ProbeConfig::validate`]).
    pub fn check_block_size_applies(&self, protocols: &[Protocol]) -> crate::Result<()> {
        if self.block_size != default_block_size() && !protocols.contains(&Protocol::Blocks) {
            return Err(Error::Config {
                key: "probe.block_size",
                value: self.block_size.to_string(),
                reason: "applies to protocol = \"blocks\" only, and this run forms no blocks: \
                         leave it out, or set the blocks protocol"
                    .into(),
            });
        }
        Ok(())
    }
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
            batch_norm_statistics: None,
            backend: None,
            embedding_angles: false,
            pair: None,
            weights: None,
            blocks: None,
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
    /// A single run's network seed (`model.seed`, `resnet.seed`) where it seeds nothing: no
    /// network is drawn (`probe.method = "theory"`, the infinite-width kernel, or given
    /// weights, `probe.weights`) and no samples are permuted (the whole protocol, or given
    /// blocks, `probe.blocks`). A seed other than the default would only give the one
    /// kernel another fingerprint and be recorded as a seed it is not (nineteenth hostile
    /// round D2, twentieth D6, twenty-first D3). A sweep's seeds and widths are checked by
    /// its own config (`sweep::grid`), which refuses given weights and blocks.
    pub fn check_seed_applies(&self) -> crate::Result<()> {
        let permutes = self.probe.protocol == Protocol::Blocks && self.probe.blocks.is_none();
        let no_draw = match (&self.probe.method, &self.probe.weights) {
            (Method::Theory, _) => {
                "probe.method = \"theory\" forms the infinite-width kernel, which draws no \
                 network"
                    .to_string()
            }
            (_, Some(w)) => format!(
                "the network's weights are given (probe.weights = {})",
                w.display()
            ),
            _ => return Ok(()),
        };
        let (key, seed) = match (&self.model, &self.resnet) {
            (Some(m), _) => ("model.seed", m.seed),
            (None, Some(r)) => ("resnet.seed", r.seed),
            (None, None) => return Ok(()),
        };
        if permutes || seed == 0 {
            return Ok(());
        }
        Err(Error::Config {
            key,
            value: seed.to_string(),
            reason: format!(
                "{no_draw}, and with the whole protocol or given blocks (probe.blocks) nothing \
                 is permuted: the seed would change nothing; leave {key} out"
            ),
        })
    }

    /// Reads and parses a TOML file; errors name the file, line and key (and the file when
    /// it has neither or both of `[model]` and `[resnet]`).
    pub fn load(path: &Path) -> crate::Result<Self> {
        Self::load_with(path, &[])
    }

    /// [`Self::load`] with `--set` overrides applied before the types are checked
    /// ([`ntk_runs::overrides`]); errors in an override name it and its key. The caller
    /// validates the result ([`Self::validate`]) as it does a file.
    pub fn load_with(path: &Path, sets: &[Assignment]) -> crate::Result<Self> {
        Self::load_from(&Source::read(path)?, sets)
    }

    /// [`Self::load_with`] of a file already read: every check and the load see this one
    /// reading.
    pub fn load_from(src: &Source, sets: &[Assignment]) -> crate::Result<Self> {
        let path = src.path();
        check_not_training(path, src.table(), sets)?;
        // An [onnx] table, in the file with the overrides applied, goes to `ntk-probe onnx`
        // ([`Error::OtherCommand`]; fifty-eighth hostile round, D3: the file's table was
        // judged, so `--set onnx=` with a `--set model={...}` was refused as an ONNX file).
        check_command(src, sets, false)?;
        let cfg: Self = src.load_filled(sets, ntk_data::config::fill_file_n)?;
        // Named as every error an override may cause (fifty-seventh hostile round, D2:
        // `--set model=` was blamed on the file, whose [model] table the override removed).
        cfg.net().map_err(|e| Error::Named {
            name: src.name(sets),
            source: Box::new(e.into()),
        })?;
        Ok(cfg)
    }

    pub fn parse(text: &str) -> crate::Result<Self> {
        let cfg: Self = toml::from_str(text)?;
        cfg.net()?;
        Ok(cfg)
    }

    /// The configured network: exactly one of `[model]` and `[resnet]`.
    pub fn net(&self) -> Result<NetSpec, ModelError> {
        NetSpec::from_tables(self.model.as_ref(), self.resnet.as_ref())
    }

    /// The MLP of `[model]`; an error when the config describes a ResNet (or no network).
    pub fn mlp(&self) -> crate::Result<&MlpConfig> {
        match (&self.model, self.net()?) {
            (Some(m), NetSpec::Mlp(_)) => Ok(m),
            _ => Err(Error::NeedsMlp),
        }
    }

    /// The MLP of `[model]`, mutable; the same errors as [`Self::mlp`].
    pub fn mlp_mut(&mut self) -> crate::Result<&mut MlpConfig> {
        self.mlp()?;
        Ok(self.model.as_mut().expect("checked by mlp()"))
    }

    /// Outputs of the network: `model.output_dim` or `resnet.num_classes`.
    pub fn output_dim(&self) -> crate::Result<usize> {
        Ok(self.net()?.classes())
    }

    /// Checks what the types cannot, and what the config alone says of its data and network
    /// together (what a run would refuse after reading the files); every problem is
    /// reported at once ([`Error::Problems`]), each naming its key.
    pub fn validate(&self) -> crate::Result<()> {
        let mut problems: Vec<Error> = self.validate_values().err().into_iter().collect();
        problems.extend(
            ntk_data::inputs::check(&self.data)
                .into_iter()
                .map(Into::into),
        );
        if let Ok(net) = self.net()
            && let Ok(Some(shape)) = ntk_data::inputs::expected_shape(&self.data)
            && let Err(e) = net.check_image_shape(
                shape,
                &format!("data.dataset = \"{}\"", self.data.dataset.name()),
            )
        {
            problems.push(e.into());
        }
        if let Ok(net) = self.net()
            && self.data.dataset != Dataset::Synthetic
            && let Ok(dim) = ntk_data::inputs::expected_dim(&self.data)
            && let Err(e) = net.check_input_dim(
                dim,
                &format!("data.dataset = \"{}\"", self.data.dataset.name()),
            )
        {
            problems.push(e.into());
        }
        match problems.len() {
            0 => Ok(()),
            1 => Err(problems.remove(0)),
            _ => Err(Error::Problems(problems)),
        }
    }

    /// Checks values the types cannot: errors name the key.
    fn validate_values(&self) -> crate::Result<()> {
        let net = self.net()?;
        net.validate()?;
        for (key, set) in [
            ("data.test_x", self.data.test_x.is_some()),
            ("data.test_labels", self.data.test_labels.is_some()),
        ] {
            if set {
                return Err(Error::Config {
                    key,
                    value: "(a file)".into(),
                    reason: "a held-out set is for ntk-train; the probe reads data.x (and \
                             data.labels) only"
                        .into(),
                });
            }
        }
        if self.probe.eigen == Eigen::Tiled {
            let why = if !matches!(net, NetSpec::Mlp(ref m) if m.normalization == ntk_model::Normalization::None)
            {
                Some(
                    "needs a plain MLP ([model] without normalization): its kernel is formed from the host engine's factors",
                )
            } else if self.probe.protocol != Protocol::Whole {
                Some("applies to the whole protocol only")
            } else if self.probe.precision != Precision::F64 {
                Some("computes in f64: set probe.precision = \"f64\"")
            } else if !matches!(self.probe.method, Method::Auto | Method::Structured) {
                Some("forms the structured kernel: probe.method = \"auto\" or \"structured\"")
            } else if self.probe.embedding_angles || self.probe.pair.is_some() {
                Some(
                    "measures kappa and the minimum gradient angle only: leave probe.embedding_angles and probe.pair out",
                )
            } else if self.probe.output == OutputMode::Full {
                Some(
                    "takes the kernel summed over the outputs or one output's, not probe.output = \"full\"",
                )
            } else {
                None
            };
            if let Some(reason) = why {
                return Err(Error::Config {
                    key: "probe.eigen",
                    value: "tiled".into(),
                    reason: reason.into(),
                });
            }
        }
        if self.probe.eigen == Eigen::Extreme && self.probe.protocol == Protocol::Blocks {
            return Err(Error::Config {
                key: "probe.eigen",
                value: "extreme".into(),
                reason: "applies to the whole protocol only: the blocks' small kernels always \
                         get every eigenvalue (leave probe.eigen out)"
                    .into(),
            });
        }
        if let Some(stats) = self.probe.batch_norm_statistics {
            let reason = if !net.has_batch_norm() {
                Some(
                    "only for BatchNorm networks (model.normalization = \"batch_norm\", \
                     resnet.variant = \"batch_norm\")",
                )
            } else if stats == BnStatistics::Batch
                && matches!(self.probe.method, Method::Structured | Method::Theory)
            {
                Some(
                    "the batch's statistics couple the samples: probe.method = \"auto\" or \"autodiff\"",
                )
            } else if stats == BnStatistics::Batch && self.probe.protocol == Protocol::Blocks {
                Some(
                    "with the blocks protocol a block's kernel would be cut from the whole \
                     batch's, not its own batch's: use protocol = \"whole\"",
                )
            } else {
                None
            };
            if let Some(reason) = reason {
                return Err(Error::Config {
                    key: "probe.batch_norm_statistics",
                    value: stats.to_string(),
                    reason: reason.into(),
                });
            }
        }
        // The methods' own prerequisites, in the words the run would refuse them with.
        if let NetSpec::Mlp(m) = &net {
            ntk_kernel::compute::check_method(m, self.probe.method)?;
        }
        if matches!(net, NetSpec::ResNet(_)) {
            if matches!(self.probe.method, Method::Structured | Method::Theory) {
                return Err(ntk_kernel::compute::resnet_method(self.probe.method).into());
            }
            if self.probe.embedding_angles || self.probe.pair.is_some() {
                return Err(Error::Invalid(
                    "probe.embedding_angles and probe.pair (layer embedding angles) are \
                     implemented for MLPs ([model]) only, not for [resnet]",
                ));
            }
            if self.data.dataset == Dataset::Synthetic
                && let Some(d) = self.data.input_dim
            {
                net.check_input_dim(d, "data.input_dim")?;
            }
        }
        if self.data.n < crate::error::MIN_SAMPLES {
            return Err(Error::too_few_samples(&self.data));
        }
        // `data.input_dim = 0` is refused with the data's checks (`ntk_data::inputs::check`).
        for (key, path) in [
            ("probe.weights", &self.probe.weights),
            ("probe.blocks", &self.probe.blocks),
        ] {
            if path.as_ref().is_some_and(|p| p.as_os_str().is_empty()) {
                return Err(Error::Config {
                    key,
                    value: "\"\"".into(),
                    reason: "an empty path: name the file, or leave the key out".into(),
                });
            }
        }
        // The theory's kernel is formed in f64 whatever the key says: a run that said f32
        // reported f32 beside an f64 kernel (twelfth hostile round, N6). As `eigen =
        // "tiled"`, the key is then to say f64.
        if self.probe.method == Method::Theory && self.probe.precision != Precision::F64 {
            return Err(Error::Config {
                key: "probe.precision",
                value: self.probe.precision.name().to_string(),
                reason: "probe.method = \"theory\" forms the infinite-width kernel in f64: set \
                         probe.precision = \"f64\""
                    .into(),
            });
        }
        if let Some(path) = &self.probe.weights
            && self.probe.method == Method::Theory
        {
            return Err(Error::Config {
                key: "probe.weights",
                value: path.display().to_string(),
                reason: "probe.method = \"theory\" is the infinite-width kernel, which has no \
                         weights: leave probe.weights out, or use \"auto\", \"autodiff\" or \
                         \"structured\""
                    .into(),
            });
        }
        if let Some(path) = &self.probe.blocks
            && self.probe.protocol != Protocol::Blocks
        {
            return Err(Error::Config {
                key: "probe.blocks",
                value: path.display().to_string(),
                reason: "given blocks apply to protocol = \"blocks\" only".into(),
            });
        }
        if let Some(path) = &self.probe.blocks
            && self.probe.block_size != default_block_size()
        {
            return Err(Error::Config {
                key: "probe.block_size",
                value: self.probe.block_size.to_string(),
                reason: format!(
                    "the blocks come from probe.blocks = {}, whose lines fix their sizes: \
                     leave probe.block_size out",
                    path.display()
                ),
            });
        }
        if self.probe.block_size < 2 {
            return Err(Error::Config {
                key: "probe.block_size",
                value: self.probe.block_size.to_string(),
                reason: "blocks need at least 2 samples".into(),
            });
        }
        if let Some([i, j]) = self.probe.pair
            && (i >= self.data.n || j >= self.data.n || i == j)
        {
            return Err(Error::Config {
                key: "probe.pair",
                value: format!("[{i}, {j}]"),
                reason: format!("need two different indices below data.n = {}", self.data.n),
            });
        }
        let outputs = self.output_dim()?;
        if let OutputMode::Single(o) = self.probe.output
            && o >= outputs
        {
            return Err(Error::Config {
                key: "probe.output",
                value: o.to_string(),
                reason: format!("the model has {outputs} output(s)"),
            });
        }
        Ok(())
    }
}

/// Refuses a training config (one of [`ntk_runs::config_file::TRAINING_TABLES`] in the file, and still there with
/// `sets` applied), naming `ntk-train` (round 10's T09: refused as "unknown field `optim`").
pub fn check_not_training(
    path: &Path,
    table: &toml::Table,
    sets: &[Assignment],
) -> crate::Result<()> {
    use ntk_runs::config_file::TRAINING_TABLES;
    let training = |t: &toml::Table| {
        TRAINING_TABLES
            .iter()
            .any(|k| t.get(*k).is_some_and(toml::Value::is_table))
    };
    // The file's tables, as the `--set`s leave them: a training table the overrides remove
    // is not named, one they add is named as theirs by the load (twenty-sixth hostile
    // round, D2).
    let mut applied = table.clone();
    let applies = sets.iter().all(|a| a.apply(&mut applied).is_ok());
    if training(table) && (!applies || training(&applied)) {
        return Err(Error::At {
            path: path.to_path_buf(),
            source: Box::new(Error::Invalid(
                "a config of ntk-train (its [optim], [train], [schedule], [ntk], \
                 [representations] or [prediction] table), which trains it: `ntk-train run \
                 --config FILE --out DIR` (with a [sweep]: `ntk-train sweep`); ntk-probe \
                 computes the NTK of a config of [probe]",
            )),
        });
    }
    Ok(())
}

/// Refuses a config meant for the other command ([`Error::OtherCommand`]): `run` wants no
/// `[sweep]` table, `sweep` one, in the file with `sets` applied. A training config is refused
/// naming `ntk-train` ([`check_not_training`]).
pub(crate) fn check_command(
    src: &Source,
    sets: &[Assignment],
    want_sweep: bool,
) -> crate::Result<()> {
    let path = src.path();
    let mut table = src.table().clone();
    check_not_training(path, &table, sets)?;
    let in_file = (
        table.contains_key("sweep"),
        table.get("onnx").is_some_and(toml::Value::is_table),
    );
    for a in sets {
        if a.apply(&mut table).is_err() {
            return Ok(());
        }
    }
    // Only a table is a [sweep]: a `--set sweep=1` is no table, and loading names its type
    // (tenth hostile round: `ntk-probe run` read "has a [sweep] table" for it).
    let has_sweep = match table.get("sweep") {
        None => false,
        Some(v) if v.is_table() => true,
        Some(_) => return Ok(()),
    };
    let has_onnx = table.get("onnx").is_some_and(toml::Value::is_table);
    let name = ConfigName {
        path: path.to_path_buf(),
        overridden: in_file != (has_sweep, has_onnx),
    };
    if has_sweep && has_onnx {
        return Err(Error::SweepOnnx { name });
    }
    if has_sweep == want_sweep && (has_sweep || !has_onnx) {
        return Ok(());
    }
    Err(Error::OtherCommand {
        // Thirty-first hostile round, N5: a `--set onnx={...}` was blamed on the file.
        name,
        has_sweep,
        has_onnx,
    })
}
