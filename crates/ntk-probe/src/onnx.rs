//! The NTK of a network given as an ONNX file (`[onnx] file = "net.onnx"`, a file from
//! `torch.onnx.export` with its weights): the config, the keys that do not apply to it,
//! the run and its files. The network is read by [`ntk_onnx`] into a Burn graph and its
//! kernel formed by per-sample autodiff (`ntk_kernel::api::empirical_ntk`) over every
//! initializer of the file (BatchNorm's running statistics held fixed).
//!
//! A config has `[onnx]` (`ntk_onnx::OnnxSection`, the table `ntk-train` reads too),
//! `[data]` and an optional `[probe]` with `precision`, `output` and `backend`. The file's
//! path is read as `data.x` is (from the current directory), once, within bounds
//! (`ntk_onnx::OnnxFile::read`); the file's SHA-256 goes into the run's provenance as
//! `onnx.digest` (the file's location does not, as for `probe.weights`). The data's values per sample must be the model
//! input's (`3 x 32 x 32` images for an input of shape `[N, 3, 32, 32]`); a synthetic set
//! without `data.input_dim` takes the model's.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use burn::tensor::{Tensor, TensorData};
use ntk_data::{DataConfig, Dataset, inputs::Inputs};
use ntk_kernel::api::empirical_ntk;
use ntk_numerics::backend::{Compute, Precision};
use ntk_numerics::kernel::OutputMode;
use ntk_numerics::spectrum;
pub use ntk_onnx::OnnxSection;
use ntk_onnx::section::{DIGEST_KEY, FILE_KEY};
use ntk_onnx::{OnnxError, OnnxModel};
use ntk_runs::overrides::{Assignment, Source};
use ntk_runs::provenance::{self, Provenance};
use serde::{Deserialize, Serialize};

use crate::Error;

/// `[probe]` of an ONNX config: the keys that apply to a file's network.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OnnxProbe {
    /// f32 or f64: the file's weights are cast to it.
    #[serde(default)]
    pub precision: Precision,
    /// `sum` (default), `full`, or an output index.
    #[serde(default)]
    pub output: OutputMode,
    /// Burn's backend, when several are built in (`device`, the key's name before
    /// 2026-11-29, is read as the same key).
    #[serde(default, alias = "device", skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
}

/// A probe config whose network is an ONNX file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OnnxConfig {
    pub onnx: OnnxSection,
    pub data: DataConfig,
    #[serde(default)]
    pub probe: OnnxProbe,
}

/// The probe keys a network from a file has no use for: its architecture, weights and
/// parameterization are the file's, and its kernel is per-sample autodiff on the whole set.
const NOT_FOR_ONNX: &[&str] = &[
    "model",
    "resnet",
    "sweep",
    "probe.protocol",
    "probe.block_size",
    "probe.method",
    "probe.eigen",
    "probe.batch_norm_statistics",
    "probe.embedding_angles",
    "probe.pair",
    "probe.weights",
    "probe.blocks",
];

/// Reads an ONNX config with `sets` applied; keys of [`NOT_FOR_ONNX`] are one error naming
/// every one present, unknown keys an error naming theirs.
pub fn load_config(src: &Source, sets: &[Assignment]) -> crate::Result<OnnxConfig> {
    let table = src.applied(sets)?;
    if !table.get("onnx").is_some_and(toml::Value::is_table) {
        // Overridden where the file has one that an assignment removed (fifty-eighth hostile
        // round, D3).
        return Err(Error::NoOnnxTable(src.name_for(sets, "onnx")));
    }
    let present: Vec<&str> = NOT_FOR_ONNX
        .iter()
        .copied()
        .filter(|key| match key.split_once('.') {
            Some((section, k)) => table
                .get(section)
                .and_then(toml::Value::as_table)
                .is_some_and(|t| t.contains_key(k)),
            None => table.contains_key(*key),
        })
        .collect();
    // The config named as the other commands name it: `F (with overrides)` when a key
    // may have come from `--set` (sixth hostile round: `F: probe.eigen` for a --set key).
    let at = |source: Error| Error::Named {
        name: src.name(sets),
        source: Box::new(source),
    };
    if !present.is_empty() {
        return Err(at(Error::NotForOnnx(present.join(", "))));
    }
    let cfg: OnnxConfig = src.load_filled(sets, ntk_data::config::fill_file_n)?;
    if cfg.data.n < crate::error::MIN_SAMPLES {
        return Err(at(Error::too_few_samples(&cfg.data)));
    }
    Ok(cfg)
}

/// What one ONNX probe measured (`summary.json`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OnnxSummary {
    /// The ONNX file as the config names it.
    pub onnx: PathBuf,
    /// The graph input's shape per sample.
    pub input_shape: Vec<usize>,
    /// The number of trainable parameters (the file's initializers, BatchNorm's running
    /// statistics excepted).
    pub parameters: usize,
    pub n: usize,
    /// The kernel's rows: `n`, or `n` times the outputs with `output = "full"`.
    pub kernel_size: usize,
    pub data: String,
    pub precision: Precision,
    pub backend: String,
    pub output: OutputMode,
    pub lambda_min: f64,
    pub lambda_max: f64,
    /// `None` when the kernel is numerically singular.
    pub kappa: Option<f64>,
    pub rank: usize,
    /// How an f32 kernel that the worst-case bound `n eps λ_max` calls singular was decided:
    /// its measured error and the interval of κ it allows, or that the verdict is the
    /// bound's (`crate::run::whole_measured`, as `ntk-probe run`'s whole set). Absent
    /// otherwise, and in summaries written before 2026-12-04.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// ‖K_f32 − K_f64‖₂ where an f32 kernel was decided by a second evaluation of the same
    /// file's network in f64 (eighty-sixth hostile round, D5: the bound alone called a kernel
    /// singular, rank 7 of 8, that this error resolves); `rank` is held to it. Absent
    /// otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_error: Option<f64>,
    /// The least κ of the exact kernel that the measured error (or the worst-case bound)
    /// allows, as `ntk-probe run`'s summary records it (`crate::run::Summary::kappa_low`;
    /// ninetieth hostile round, N3: the interval was only in `note`'s text). Absent where
    /// nothing was decided near the bound, and in summaries written before 2026-12-05.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kappa_low: Option<f64>,
    /// The greatest; absent beside `kappa_low` where the error does not resolve `λ_min`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kappa_high: Option<f64>,
    pub min_grad_angle_deg: Option<f64>,
    pub min_grad_angle_pair: Option<[usize; 2]>,
    pub kernel_seconds: f64,
    pub eigen_seconds: f64,
    pub seconds: f64,
    pub provenance: Provenance,
    /// The set's other files as written, by size and SHA-256 ([`ntk_runs::manifest`]),
    /// checked before the set is kept; absent in summaries written before they were
    /// recorded (2026-12-01).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<ntk_runs::manifest::Files>,
    /// SHA-256 of this summary's JSON with `checksum` null
    /// (`ntk_runs::provenance::SelfChecksum`), as `ntk-probe run`'s: an ONNX set whose
    /// summary was edited after it was written is not kept (seventy-ninth hostile round,
    /// D1: `--resume` kept and reprinted an edited kappa). Absent in summaries written
    /// before 2026-12-03.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checksum: Option<String>,
}

impl ntk_runs::provenance::SelfChecksum for OnnxSummary {
    fn checksum_field(&mut self) -> &mut Option<String> {
        &mut self.checksum
    }
}

impl ntk_runs::sweep::Recorded for OnnxSummary {
    const WHAT: &'static str = "an ntk-probe onnx summary";
    fn provenance(&self) -> Option<&Provenance> {
        Some(&self.provenance)
    }
    const SET_FILES: &'static [&'static str] = &[OUTPUT_FILES[1], OUTPUT_FILES[2], OUTPUT_FILES[3]];
    fn files(&self) -> Option<&ntk_runs::manifest::Files> {
        self.files.as_ref()
    }
    /// Its own checksum, its recorded config included ([`crate::sweep::summary_edited`]).
    fn not_its_own(&self, path: &Path) -> Option<String> {
        crate::sweep::summary_edited(self, path)
    }
    /// Its numbers against its `eigenvalues.npy` (`lambda_min`, `lambda_max`, `kappa`, and
    /// `rank` at the tolerance it was decided by) and
    /// its own checksum, as a probe run's summary is held ([`crate::sweep::check_numbers`]);
    /// a summary that records no files (written before 2026-12-01) is not checked.
    fn check(&self, path: &Path) -> Option<String> {
        self.files.as_ref()?;
        let what = crate::sweep::recorded_eigenvalues(path)
            .and_then(|(eigenvalues, least, greatest)| {
                let recorded = (self.lambda_min, self.lambda_max, self.kappa);
                crate::sweep::extremes_disagree(recorded, least, greatest).or_else(|| {
                    // At the tolerance the kernel was decided by (eighty-sixth round, D5).
                    crate::sweep::rank_disagrees(
                        (&eigenvalues, least, greatest),
                        (self.precision, self.measured_error),
                        (self.rank, self.kappa.is_none()),
                    )
                })
            })
            .or_else(|| {
                crate::sweep::interval_disagrees(
                    (self.kappa, self.kappa_low, self.kappa_high),
                    self.checksum.is_some(),
                )
            })
            .or_else(|| {
                ntk_runs::provenance::SelfChecksum::edited(self, Some(&self.provenance))
                    .then(|| "its fields do not match the checksum it was written with".into())
            })?;
        Some(
            Error::SummaryEdited {
                path: path.to_path_buf(),
                what,
            }
            .to_string(),
        )
    }
}

/// The files of an ONNX probe's output set.
pub const OUTPUT_FILES: [&str; 4] = ["summary.json", "inputs.npy", "ntk.npy", "eigenvalues.npy"];

/// An ONNX probe's network and the SHA-256 of its file (the provenance's `onnx.digest`).
pub struct LoadedModel {
    pub model: OnnxModel,
    pub digest: String,
    /// The file as read, for the network again in f64 ([`F64Onnx`]).
    file: Arc<ntk_onnx::OnnxFile>,
}

/// Reads the model of `cfg` on `compute`, its file read once (a regular file of at most 2
/// GiB: a FIFO or a device such as /dev/zero is refused, never read; `OnnxSection::read`)
/// and hashed from the same bytes; a synthetic set without `data.input_dim` is given the
/// model's.
pub fn load_model(cfg: &mut OnnxConfig, compute: &Compute) -> crate::Result<LoadedModel> {
    let file = Arc::new(cfg.onnx.read()?);
    let digest = file.digest.clone();
    let model = OnnxModel::new(Arc::clone(&file), &compute.device, compute.dtype())?;
    if cfg.data.dataset == Dataset::Synthetic && cfg.data.input_dim.is_none() {
        cfg.data.input_dim = Some(model.input_dim());
    }
    Ok(LoadedModel {
        model,
        digest,
        file,
    })
}

/// Refuses a run whose memory (the program, the inputs, the per-sample gradient rows of one
/// output, `n x P` f64, and three kernels: the accumulator, the result and the eigensolver's
/// copy) exceeds the limit (`--max-memory`, `NTK_MAX_MEMORY`, else what the system has).
pub fn check_memory(
    cfg: &OnnxConfig,
    model: &OnnxModel,
    n: usize,
    max_memory: Option<&str>,
) -> crate::Result<()> {
    let rows = match cfg.probe.output {
        OutputMode::Full => n * model.output_dim(),
        _ => n,
    };
    let mut estimate = ntk_runs::budget::Estimate::default();
    estimate
        .add(
            "the program itself",
            ntk_runs::budget::PROBE_PROGRAM_BYTES,
            1.0,
        )
        .add("inputs", n as f64 * model.input_dim() as f64, 8.0)
        .add(
            "per-sample gradients",
            rows as f64 * model.num_params_total() as f64,
            8.0,
        )
        .add("kernels", 3.0 * (rows as f64).powi(2), 8.0);
    estimate.check(
        &format!(
            "data.n = {n}, {} parameters in {}",
            model.num_params_total(),
            cfg.onnx.file.display()
        ),
        max_memory,
    )?;
    Ok(())
}

/// Checks that `probe.output` names one of the model's outputs, for the dry run as for the
/// run (ninth hostile round: `--set probe.output=1` on a one-output file was "it would be
/// computed" in the dry run, refused by the run).
pub fn check_output(cfg: &OnnxConfig, model: &OnnxModel) -> crate::Result<()> {
    let outputs = model.output_dim();
    match cfg.probe.output {
        OutputMode::Single(o) if o >= outputs => Err(Error::Config {
            key: "probe.output",
            value: o.to_string(),
            reason: format!(
                "{} has {outputs} output(s), counted from 0",
                cfg.onnx.file.display()
            ),
        }),
        _ => Ok(()),
    }
}

/// Checks that `inputs` have the model's values per sample.
pub fn check_width(cfg: &OnnxConfig, model: &OnnxModel, inputs: &Inputs) -> crate::Result<()> {
    if inputs.d == model.input_dim() {
        return Ok(());
    }
    Err(OnnxError::InputShape {
        path: cfg.onnx.file.clone(),
        input: model.input_name().to_string(),
        shape: model.sample_dims().to_vec(),
        expected: model.input_dim(),
        got: inputs.d,
        data: format!("the data ({})", inputs.description),
    }
    .into())
}

/// The provenance: the config without locations, the ONNX file's digest (`digest`, of the
/// bytes the model was read from) and the data's, the backend.
pub fn provenance(
    cfg: &OnnxConfig,
    digest: &str,
    inputs: &Inputs,
    compute: &Compute,
) -> Provenance {
    let mut c = cfg.clone();
    c.probe.backend = None;
    c.data = c.data.without_locations();
    c.onnx.file = PathBuf::new();
    let mut flat = provenance::flatten_config(&c);
    flat.remove(FILE_KEY);
    flat.insert(DIGEST_KEY.into(), digest.to_string().into());
    flat.insert("backend".into(), compute.backend.name().into());
    flat.insert("data.digest".into(), inputs.digest().into());
    Provenance::new(crate::TOOL, flat, &ntk_numerics::linalg::describe())
}

/// The NTK of `model` on `inputs`, its spectrum and minimum gradient angle; writes
/// `summary.json`, `inputs.npy`, `ntk.npy` and `eigenvalues.npy` into `out` when given.
pub fn run(
    cfg: &OnnxConfig,
    loaded: &LoadedModel,
    inputs: &Inputs,
    compute: &Compute,
    out: Option<&Path>,
) -> crate::Result<OnnxSummary> {
    let model = &loaded.model;
    check_width(cfg, model, inputs)?;
    // The set is made beside `out` under its lock and moved into place whole at the end, as
    // `run`'s (round 23's D1: files written one by one into `out` left a partial or mixed
    // set after a kill or a failed write, and two commands wrote into one `out` at once).
    let set = out
        .map(|dir| ntk_files::outset::OutputSet::begin(dir).map_err(Error::Io))
        .transpose()?;
    let start = Instant::now();
    let precision = cfg.probe.precision;
    let x = Tensor::<2>::from_data(
        TensorData::new(inputs.x.clone(), [inputs.n, inputs.d]),
        (&compute.device, compute.dtype()),
    );
    check_output(cfg, model)?;
    let kernel = empirical_ntk(
        model,
        |m: &OnnxModel, x| m.forward(x),
        x,
        cfg.probe.output,
        precision,
    );
    let kernel_seconds = start.elapsed().as_secs_f64();
    let eigen_start = Instant::now();
    let first = spectrum::spectrum(&kernel, precision.epsilon())?;
    let (spectrum, decided) = decide(&kernel, first, (loaded, inputs, cfg.probe.output), compute)?;
    let summary = spectrum.summary();
    // Between samples' gradients: with every output's rows (`full`) the kernel's rows are
    // (sample, output) pairs, whose angles are not the samples' (eighty-ninth hostile round,
    // D4: "samples 5, 65" for 8 samples); empty there, as `ntk-probe run` leaves it.
    let angle = match cfg.probe.output {
        OutputMode::Full => None,
        _ => ntk_kernel::angles::min_angle_of_rows(&kernel, &inputs.x, inputs.d),
    };
    // Held to the rule of `ntk-probe run`'s angles: null, with a note, where the kernel's
    // precision does not resolve it (hundred-and-thirty-seventh hostile round, D1).
    // Per-sample gradients in the run's precision, their Gram in f64 (the autodiff route).
    let terms = model.params.len();
    let route = ntk_kernel::compute::Route::Autodiff;
    let resolution = ntk_kernel::angles::Resolution::of_route(route, precision, terms);
    let (angle, angle_note, _) = crate::run::resolved_min(angle, inputs, resolution);
    let eigen_seconds = eigen_start.elapsed().as_secs_f64();
    let mut result = OnnxSummary {
        onnx: cfg.onnx.file.clone(),
        input_shape: model.sample_dims().to_vec(),
        parameters: model.num_params_total(),
        n: inputs.n,
        kernel_size: kernel.size,
        data: inputs.description.clone(),
        precision,
        backend: compute.backend.name().to_string(),
        output: cfg.probe.output,
        lambda_min: summary.lambda_min,
        lambda_max: summary.lambda_max,
        kappa: summary.kappa,
        rank: summary.rank,
        note: [decided.note, angle_note]
            .into_iter()
            .flatten()
            .reduce(|a, b| format!("{a}; {b}")),
        measured_error: decided.measured_error,
        kappa_low: decided.interval.map(|i| i.0),
        kappa_high: decided.interval.and_then(|i| i.1),
        min_grad_angle_deg: angle.map(|a| a.deg),
        min_grad_angle_pair: angle.map(|a| [a.i, a.j]),
        kernel_seconds,
        eigen_seconds,
        seconds: start.elapsed().as_secs_f64(),
        provenance: provenance(cfg, &loaded.digest, inputs, compute),
        files: None,
        checksum: None,
    };
    if let Some(set) = set {
        write(
            set.path(),
            &mut result,
            inputs,
            &kernel.data,
            kernel.size,
            &spectrum.eigenvalues,
        )
        .map_err(|e| e.in_set(&set))?;
        if let Some(warning) = set.commit().map_err(Error::Io)? {
            eprintln!("warning: {warning}");
        }
    }
    Ok(result)
}

/// The spectrum `s` of an f32 kernel that the worst-case bound calls singular, decided by
/// its measured error against the same file's network evaluated again in f64 on the same
/// device (`crate::run::whole_measured`, the rule of `ntk-probe run`'s whole set: the
/// kernel singular only where `λ_min` is at or below that error, and the note gives the
/// interval of κ it allows). A kernel of more than `MEASURED_ROWS` rows, or a backend without
/// f64, keeps the bound's verdict, and the note says so.
fn decide(
    kernel: &ntk_numerics::kernel::Kernel,
    s: spectrum::Spectrum,
    (loaded, inputs, output): (&LoadedModel, &Inputs, OutputMode),
    compute: &Compute,
) -> crate::Result<(spectrum::Spectrum, crate::run::Decided)> {
    let eps = compute.precision.epsilon();
    if !crate::blocks::needs_measuring(&s.summary(), s.tolerance)
        || compute.precision == Precision::F64
    {
        return Ok((s, crate::run::Decided::default()));
    }
    let wide = Compute {
        precision: Precision::F64,
        ..compute.clone()
    };
    if kernel.size <= crate::run::MEASURED_ROWS
        && !wide.device.supports_dtype(burn::tensor::FloatDType::F64)
    {
        let why = format!(
            "the {} backend has no f64 to measure the kernel's error: probe in f64 on a \
             backend that has it to resolve it",
            compute.backend
        );
        return Ok((s.clone(), crate::run::Decided::unmeasured(&s, &why)));
    }
    let mut second = F64Onnx {
        model: None,
        loaded,
        inputs,
        output,
        compute: wide,
    };
    let recheck: crate::blocks::Recheck = Some(&mut second);
    crate::run::whole_measured(kernel, (s, eps), (inputs.n, recheck))
}

/// The second evaluation of an ONNX network's f32 kernel: the file's network read again in
/// f64 (its weights cast from the file's, not from the f32 copy), made when first asked.
struct F64Onnx<'a> {
    model: Option<OnnxModel>,
    loaded: &'a LoadedModel,
    inputs: &'a Inputs,
    output: OutputMode,
    compute: Compute,
}

impl crate::blocks::SecondEvaluation for F64Onnx<'_> {
    fn kernel_f64(&mut self, samples: &[usize]) -> crate::Result<ntk_numerics::kernel::Kernel> {
        let model = match &mut self.model {
            Some(model) => model,
            none => none.insert(OnnxModel::new(
                Arc::clone(&self.loaded.file),
                &self.compute.device,
                self.compute.dtype(),
            )?),
        };
        let sub = self.inputs.select(samples);
        let x = Tensor::<2>::from_data(
            TensorData::new(sub.x, [sub.n, sub.d]),
            (&self.compute.device, self.compute.dtype()),
        );
        Ok(empirical_ntk(
            &*model,
            |m: &OnnxModel, x| m.forward(x),
            x,
            self.output,
            Precision::F64,
        ))
    }
}

/// The output set: the arrays first, `summary.json` last (its presence marks the run done),
/// recording the arrays by size and SHA-256 (`summary.files`, [`ntk_runs::manifest`]).
fn write(
    dir: &Path,
    summary: &mut OnnxSummary,
    inputs: &Inputs,
    kernel: &[f64],
    size: usize,
    eigenvalues: &[f64],
) -> crate::Result<()> {
    let npy = |action: &'static str, name: &str, data: &[f64], shape: &[u64]| {
        std::fs::create_dir_all(dir)
            .and_then(|()| ntk_files::npy::write_f64(&dir.join(name), data, shape))
            .map_err(|source| Error::CannotWrite {
                dir: dir.to_path_buf(),
                action,
                source,
            })
    };
    let (n, d) = (inputs.n as u64, inputs.d as u64);
    npy("write inputs.npy", "inputs.npy", &inputs.x, &[n, d])?;
    npy(
        "write ntk.npy",
        "ntk.npy",
        kernel,
        &[size as u64, size as u64],
    )?;
    let len = eigenvalues.len() as u64;
    npy(
        "write eigenvalues.npy",
        "eigenvalues.npy",
        eigenvalues,
        &[len],
    )?;
    summary.files = Some(ntk_runs::manifest::record(dir, &OUTPUT_FILES[1..]).map_err(
        |source| Error::CannotWrite {
            dir: dir.to_path_buf(),
            action: "record the set's files",
            source,
        },
    )?);
    ntk_runs::provenance::SelfChecksum::seal(summary);
    let json = serde_json::to_vec_pretty(summary).map_err(|e| Error::CannotWrite {
        dir: dir.to_path_buf(),
        action: "write summary.json",
        source: std::io::Error::other(e),
    })?;
    ntk_files::io::write_into(dir, "summary.json", &json)?;
    Ok(())
}
