//! What one run is, fixed before its first step: its config and network, the data and
//! backend, the output directory, the identity its directory and checkpoints record (the
//! config text and the provenance) and its step counts.

use std::path::Path;

use ntk_data::ImageAugment;
use ntk_engine::Sgd;
use ntk_model::NetSpec;
use ntk_numerics::backend::{Compute, Precision};
use ntk_runs::progress::Reporter;
use ntk_runs::provenance::{self, Provenance};

use crate::checkpoint::RunIdentity;
use crate::config::TrainConfig;
use crate::data::Data;

/// The config a run directory records and a resume must match (backend and output place
/// excluded: they do not change the numbers' meaning).
pub fn run_config_text(cfg: &TrainConfig) -> String {
    let mut c = cfg.clone();
    c.train.backend = None;
    c.train.out = None;
    c.sweep = None;
    toml::to_string(&c).expect("a config serializes")
}

/// The provenance of a run of `cfg` on `data` and `compute`: the config a run directory
/// records ([`run_config_text`]) with the data's input dimension filled in and the data
/// directory left out, `backend` and `data.digest` added (see `ntk_runs::provenance`); an
/// ONNX network's file by its SHA-256 (`onnx.digest`) in place of its location, as the
/// probe records it, so that a run whose file changed is not resumed or reused.
pub fn run_provenance(cfg: &TrainConfig, data: &Data, compute: &Compute) -> Provenance {
    let mut c = recorded_config(cfg);
    if let Some(m) = c.model.as_mut() {
        m.input_dim = data.train.d;
    }
    let mut flat = provenance::flatten_config(&c);
    flat.insert("backend".into(), compute.backend.name().into());
    flat.insert("data.digest".into(), data.digest().into());
    if let Some(read) = &cfg.onnx_read {
        flat.remove(ntk_onnx::section::FILE_KEY);
        flat.insert(
            ntk_onnx::section::DIGEST_KEY.into(),
            read.file.digest.clone().into(),
        );
    }
    if cfg.train.augment {
        // The padding of the crops: each channel's scaled black since 2026-11-27 (before,
        // the scaled zero, a mid-grey): augmented runs of earlier builds are not reused.
        flat.insert("train.augment_fill".into(), "black".into());
    }
    if let Some(k) = &cfg.ntk {
        // The tracked kernel's precision as resolved on this device (f64 on the CPU unless
        // the config says otherwise): runs tracked in another precision are not reused.
        let precision = serde_json::to_value(k.precision_on(compute)).expect("an enum");
        flat.insert("ntk.precision".into(), precision);
    }
    // One network, one recorded form, whichever spelling the config used.
    Provenance::new(crate::TOOL, flat, &ntk_numerics::linalg::describe())
        .with_canonical(ntk_model::spec::canonical_recorded)
        .with_defaults(ntk_model::spec::recorded_default)
}

/// The rule by which this tool records one network one way
/// ([`ntk_model::spec::canonical_recorded`]), for the checks that compare recorded results
/// with each other (a merge's one base, two copies of one run).
pub const ONE_FORM: provenance::Canonical =
    provenance::Canonical(Some(ntk_model::spec::canonical_recorded));

/// `cfg` as a run records it in its provenance, less what the run resolves from its data:
/// without the device, the output and data directories and the sweep (one run's config),
/// and without `train.engine`: who computes the steps is not what is computed, so a run
/// moves between engines whose checkpoints hold the same state (a GPU's cuDNN engine and
/// a CPU's host engine); a checkpoint of another form is refused by its engine
/// (`checkpoint::StateForm`), naming the engine that resumes it.
pub fn recorded_config(cfg: &TrainConfig) -> TrainConfig {
    let mut c = cfg.clone();
    c.train.backend = None;
    c.train.engine = crate::config::EngineChoice::Auto;
    c.train.out = None;
    c.sweep = None;
    c.data = c.data.without_locations();
    // An explicit default is the same config as none.
    if let Some(k) = c.ntk.as_mut()
        && k.batch_norm_statistics == Some(ntk_kernel::batch_norm::BnStatistics::Running)
    {
        k.batch_norm_statistics = None;
    }
    c
}

/// How a run starts.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions {
    /// Continue from the run directory's checkpoint.
    pub resume: bool,
    /// Stop after this many epochs of this process (tests simulate a kill with it).
    pub stop_after: Option<usize>,
}

/// What a run is, fixed before its first step: the config and its network, the data,
/// the backend, the output directory and the reporter, the identity checkpoints record
/// (config text and provenance), the step counts ([`TrainConfig::step_counts`]), and what
/// the config resolves to once for every later phase: the SGD settings every engine takes,
/// the tracked kernel's precision on this backend, the checked image augmentation.
pub(crate) struct Run<'a> {
    pub(crate) cfg: &'a TrainConfig,
    pub(crate) spec: NetSpec,
    /// The network in words ([`NetSpec::labels`]: its description for the log, the rest
    /// for the summary).
    pub(crate) labels: ntk_model::NetLabels,
    pub(crate) data: &'a Data,
    pub(crate) compute: &'a Compute,
    pub(crate) out: &'a Path,
    pub(crate) reporter: &'a Reporter,
    /// The config text and provenance its directory and checkpoints record.
    pub(crate) identity: RunIdentity,
    pub(crate) per_epoch: usize,
    pub(crate) total: usize,
    pub(crate) epochs: usize,
    /// The SGD settings ([`crate::config::OptimConfig::settings`]).
    pub(crate) sgd: Sgd,
    /// The tracked NTK's precision on this backend (`ntk.precision`, resolved), when the
    /// run tracks it.
    pub(crate) ntk_precision: Option<Precision>,
    /// The augmentation of every epoch's batches, as `data_checks::check_inputs` checked it.
    pub(crate) augment: Option<ImageAugment>,
}

impl<'a> Run<'a> {
    /// The run of `cfg` (its `spec` and the augmentation `augment` that
    /// `data_checks::check_inputs` checked) on `data` and `compute`, writing to `out`.
    pub(crate) fn new(
        (cfg, spec, augment): (&'a TrainConfig, NetSpec, Option<ImageAugment>),
        data: &'a Data,
        compute: &'a Compute,
        out: &'a Path,
        reporter: &'a Reporter,
    ) -> Self {
        let (per_epoch, total, epochs) = cfg.step_counts(data.train.n);
        let sgd = cfg.optim.settings();
        let ntk_precision = cfg.ntk.as_ref().map(|k| k.precision_on(compute));
        Self {
            cfg,
            labels: spec.labels(),
            spec,
            data,
            compute,
            out,
            reporter,
            identity: RunIdentity {
                config: run_config_text(cfg),
                provenance: run_provenance(cfg, data, compute),
                predicts: cfg.prediction.is_some(),
            },
            per_epoch,
            total,
            epochs,
            sgd,
            ntk_precision,
            augment,
        }
    }

    /// Whether the test set is evaluated after `epoch`: every `train.eval_every` epochs and
    /// after the last.
    pub(crate) fn evaluates(&self, epoch: usize) -> bool {
        epoch == self.epochs || epoch.is_multiple_of(self.cfg.train.eval_every)
    }

    /// The scheduled learning rate of step `iteration`.
    pub(crate) fn lr(&self, iteration: usize) -> f64 {
        let lr = self.cfg.optim.lr;
        self.cfg
            .schedule
            .lr(lr, iteration, self.per_epoch, self.total)
    }
}
