//! One probe run: inputs, network, kernel, spectrum, angles, and the files of `--out DIR`;
//! its memory plan in [`memory`], each kernel route's numbers in [`measured`], the angles it reports
//! in [`reported`], the files in [`outputs`].

use std::path::Path;
use std::time::Instant;

use ntk_model::export::ExportDType;
use ntk_model::{Mlp, MlpConfig, Net, ResNetVariant};
use serde::Serialize;

use crate::Error;
use crate::blocks::BlockRow;
use crate::config::{Eigen, Method, ProbeConfig, Protocol, spelled};
use ntk_data::inputs::Inputs;
use ntk_files::npy;
use ntk_files::outset::OutputSet;
use ntk_kernel::angles::{self, MinAngle};
use ntk_kernel::batch_norm::BnStatistics;
use ntk_kernel::compute::{KernelResult, Route, to_tensor};
use ntk_kernel::host;
use ntk_model::NetSpec;
use ntk_numerics::backend::{Compute, Precision};
use ntk_numerics::kernel::{Kernel, OutputMode};
use ntk_numerics::spectrum::{self, Spectrum};
use ntk_runs::budget::Estimate;

use crate::phases::Place;
use ntk_runs::progress::Phase;
use ntk_runs::provenance::{self, Provenance};

pub mod existing;
pub mod given;
pub mod given_file;
mod measured;
mod memory;
mod outputs;
pub mod places;
mod reported;

pub use given::Given;
use measured::Measured;
pub use memory::{TILE, check_memory, memory_estimate};
use memory::{tiled_group_rows, tiled_plan};
/// What the host engine keeps beyond one kernel, as [`check_memory`] takes it.
pub use ntk_kernel::host::Reuse;
pub use outputs::{write_arrays, write_outputs};
use reported::Angles;
pub(crate) use reported::resolved_min;

/// Everything `summary.json` holds. `kappa` is `null` when the kernel is numerically
/// singular (`singular = true`, see [`ntk_numerics::spectrum`]); the same for `gram_kappa`.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct Summary {
    pub lambda_min: f64,
    pub lambda_max: f64,
    pub kappa: Option<f64>,
    pub singular: bool,
    /// The numerical rank; with `eigen = "extreme"` a singular kernel's rank is a lower
    /// bound ([`ntk_kernel::extreme`]).
    pub rank: usize,
    /// `full` (every eigenvalue, host) or `extreme` (lambda_min and lambda_max on the
    /// compute device); `full` in summaries written before the choice existed.
    #[serde(default)]
    pub eigen: Eigen,
    pub min_grad_angle_deg: Option<f64>,
    pub min_grad_angle_pair: Option<[usize; 2]>,
    /// The pair of the smallest gradient angle where `min_grad_angle_deg` is null because
    /// the kernel does not resolve it (the note says why; hundred-and-thirty-seventh hostile
    /// round, D1); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_grad_angle_unresolved: Option<[usize; 2]>,
    pub gram_kappa: Option<f64>,
    pub gram_singular: bool,
    pub gram_rank: usize,
    /// Minimum embedding angle theta_l over the set, l = 0..L (with `embedding_angles`);
    /// NaN (`null`) where there is none ([`degrees`]).
    #[serde(default, deserialize_with = "angles_or_null")]
    pub embedding_min_angle_deg: Option<Vec<f64>>,
    /// theta_0..theta_L of `pair` (with `pair`).
    #[serde(default, deserialize_with = "angles_or_null")]
    pub pair_embedding_angles_deg: Option<Vec<f64>>,
    pub pair_grad_angle_deg: Option<f64>,
    pub n: usize,
    pub input_dim: usize,
    /// The MLP's width; a ResNet's `base_width` (channels of its first stage).
    pub width: usize,
    /// The MLP's hidden layers; a ResNet's depth `6n + 2`.
    pub depth: usize,
    /// The activation (a ResNet's: `relu`, or `norm_relu(b=..)` for the norm_relu variant).
    pub activation: String,
    /// The MLP's scaling convention; a ResNet's variant (`batch_norm`, `norm_relu`, `fixup`).
    pub convention: String,
    /// `ntk` or `standard` (a ResNet is in the standard parameterization).
    pub parameterization: String,
    pub seed: u64,
    pub data: String,
    pub precision: Precision,
    pub backend: ntk_numerics::backend::Backend,
    /// How the kernel was computed (`structured`, `autodiff`, `theory`; never `auto`).
    pub method: Method,
    /// The route that formed the kernel ([`Route`]): `host` (OpenBLAS or faer), `device`
    /// (Burn tensors on the compute device), `autodiff` or `theory`. Written as `engine`, the
    /// column's name in every summary.json and results.csv already written.
    pub engine: Route,
    /// `sum`, `full` or `output_<o>`.
    pub output: String,
    pub protocol: Protocol,
    pub block_size: Option<usize>,
    pub blocks: Option<usize>,
    /// A whole-set f32 kernel's measured error, `||K_f32 - K_f64||_2`, where the worst-case
    /// bound called it singular and a second evaluation in f64 decided it instead
    /// ([`whole_measured`]): `rank` and `singular` are then held to the tolerance it gives,
    /// this error plus `n eps_f64 |lambda_max|` (eighty-fifth hostile round, D4: they were
    /// held to the bound and every reader called the summary edited). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_error: Option<f64>,
    /// The least κ of the exact kernel that an f32 kernel's measured error (or, unmeasured,
    /// its worst-case bound) allows, by Weyl's inequality `|λ_i(K_f32) - λ_i(K)| <= t`:
    /// `(λ_max - t) / (λ_min + t)`; for the blocks protocol, the mean over the blocks of each
    /// block's (its own κ where not measured). Absent where nothing was measured near the
    /// bound (eighty-ninth hostile round, D3: a sweep's tables showed such a κ as exact).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kappa_low: Option<f64>,
    /// The greatest: `(λ_max + t) / (λ_min - t)`; absent beside [`Summary::kappa_low`] where
    /// `λ_min <= t` (unbounded: the error does not resolve `λ_min`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kappa_high: Option<f64>,
    /// How the kernel was taken where that needs saying (BatchNorm: evaluation mode).
    pub note: Option<String>,
    /// Where the science is at risk: the inputs' scale decides kappa (a network that is
    /// not scale-invariant, inputs not at unit norm; [`ntk_kernel::scale`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    pub kernel_seconds: f64,
    pub eigen_seconds: f64,
    pub seconds: f64,
    /// The resolved config, its fingerprint, the tool, commit and command line
    /// ([`ntk_runs::provenance`]); absent in summaries written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
    /// The set's other files as written, by size and SHA-256 ([`ntk_runs::manifest`]),
    /// checked before the set is kept (`--resume`, a sweep's finished point); absent in
    /// summaries written before they were recorded (2026-12-01).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<ntk_runs::manifest::Files>,
    /// SHA-256 of this summary's JSON with `checksum` null
    /// (`ntk_runs::provenance::SelfChecksum`): a summary edited after it was written is not
    /// read as a result (seventy-fifth hostile round, D3: a point's activation, depth and width
    /// edited were collected as a setting the sweep never ran). Absent in summaries written
    /// before 2026-12-03.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checksum: Option<String>,
}

impl ntk_runs::provenance::SelfChecksum for Summary {
    fn checksum_field(&mut self) -> &mut Option<String> {
        &mut self.checksum
    }
}

/// The file names of one probe's output set (`ntk --out DIR`).
pub const OUTPUT_FILES: [&str; 7] = [
    "summary.json",
    "inputs.npy",
    "ntk.npy",
    "eigenvalues.npy",
    "weights.safetensors",
    "outputs.npy",
    crate::blocks::BLOCKS_FILE,
];

/// The provenance of a probe of `cfg` on `inputs` (whose [`Inputs::digest`] is `digest`)
/// on `compute`: the config with the data's input dimension filled in, the backend request
/// and data directory left out, `backend` and `data.digest` added, and the digests of the
/// files `given` read (`None` for configs without given files: a sweep's).
pub fn provenance(
    cfg: &ProbeConfig,
    inputs: &Inputs,
    digest: &str,
    compute: &Compute,
    given: Option<&Given>,
) -> Provenance {
    let mut c = cfg.clone();
    c.probe.backend = None;
    c.data = c.data.without_locations();
    // An explicit default is the same config as none.
    if c.probe.batch_norm_statistics == Some(BnStatistics::Running) {
        c.probe.batch_norm_statistics = None;
    }
    if let Some(m) = c.model.as_mut() {
        m.input_dim = inputs.d;
    }
    // Given weights and blocks are recorded by their content, not their location (as the
    // data is): moving the files keeps the results, changing them makes the results stale.
    // The digests come from the bytes the run read (`Given`), once.
    c.probe.weights = None;
    c.probe.blocks = None;
    let mut flat = provenance::flatten_config(&c);
    flat.insert("backend".into(), compute.backend.name().into());
    flat.insert("data.digest".into(), digest.into());
    for (key, d) in given.map(Given::digests).into_iter().flatten() {
        if let Some(d) = d {
            flat.insert(key.into(), d.into());
        }
    }
    let mut linalg = ntk_numerics::linalg::describe();
    // Only the whole protocol's spectrum goes through `solver` (blocks are solved on the host).
    if c.probe.protocol == Protocol::Whole
        && let Some(gpu) = crate::solver::describe(compute)
    {
        linalg = format!("{linalg}; {gpu}");
    }
    // One network, one recorded form, whichever spelling the config used.
    Provenance::new(crate::TOOL, flat, &linalg)
        .with_canonical(ntk_model::spec::canonical_recorded)
        .with_defaults(ntk_model::spec::recorded_default)
}

/// The rule by which this tool records one network one way
/// ([`ntk_model::spec::canonical_recorded`]), for the checks that compare recorded results
/// with each other (a merge's one base, two copies of one point).
pub const ONE_FORM: provenance::Canonical =
    provenance::Canonical(Some(ntk_model::spec::canonical_recorded));

/// Refuses inputs that `precision` cannot hold: in f32 a value beyond f32's range (the
/// run's kernel would be NaN); in any precision inputs whose Gram matrix overflows f64
/// ([`spectrum::check_gram_finite`]). Called where the inputs are loaded, before a dry run
/// answers, so that the dry run refuses what the run would.
pub fn check_inputs(precision: Precision, inputs: &Inputs) -> crate::Result<()> {
    // The depth-0 kernel's overflow, as `gram_spectrum` names it.
    spectrum::check_gram_finite(&inputs.x, inputs.n, inputs.d).map_err(|e| {
        crate::Error::Setting {
            setting: Some(inputs.description.clone()),
            source: Box::new(e.into()),
        }
    })?;
    check_f32_inputs(precision, inputs)
}

/// Refuses, in an f32 run, an input beyond f32's range (it would be infinite, the kernel
/// NaN), naming its row and column: [`check_inputs`]' check that holds for any network
/// (`ntk-probe onnx` calls it alone: seventh hostile round, its f32 run said only "the
/// kernel has non-finite entries" where its dry run said it would be computed).
pub fn check_f32_inputs(precision: Precision, inputs: &Inputs) -> crate::Result<()> {
    if precision != Precision::F32 {
        return Ok(());
    }
    match inputs.x.iter().position(|v| v.abs() > f64::from(f32::MAX)) {
        Some(i) => Err(Error::BeyondF32 {
            data: inputs.description.clone(),
            row: inputs.row_words(i / inputs.d.max(1)),
            column: i % inputs.d.max(1),
            value: inputs.x[i],
        }),
        None => Ok(()),
    }
}

/// Checks that `dir` may receive a probe's output set: absent, empty, or holding only a
/// probe's files (which the new set replaces as a whole); never a directory of something
/// else, whose files would be lost or mixed in.
pub fn check_replaceable(dir: &Path) -> crate::Result<()> {
    // What the set's move into place at the run's end cannot replace, refused before any
    // work and by the dry run alike (ninth hostile round: a mount point, an immutable
    // directory, `.`).
    ntk_files::outset::check_replaceable_target(dir).map_err(|source| Error::OutputDir {
        dir: dir.to_path_buf(),
        source,
    })?;
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(Error::OutputDir {
                dir: dir.to_path_buf(),
                source,
            });
        }
    };
    let names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    refuse_foreign(
        dir,
        names
            .iter()
            .filter(|n| !OUTPUT_FILES.contains(&n.as_str()))
            .cloned()
            .collect(),
    )?;
    if names.is_empty() {
        return Ok(());
    }
    // Files with a probe's names are a probe's only when its summary says so (written last,
    // with the tool's name in its provenance): a user's summary.json is never replaced.
    // An `onnx` set is a probe's too (`existing::state` then names it).
    let probe_made =
        ntk_runs::provenance::recorded_tool(dir).is_some_and(|tool| tool.starts_with("ntk-probe"));
    if probe_made {
        return Ok(());
    }
    // A summary this user cannot read is said as such, not called another tool's
    // (hundred-and-thirty-ninth hostile round, second review, D2: "no probe summary.json
    // beside it" of every file where summary.json was mode 000).
    // Opened only where it is a regular file (a FIFO's open would wait for a writer).
    let summary = dir.join("summary.json");
    if std::fs::symlink_metadata(&summary).is_ok_and(|m| m.is_file())
        && let Err(source) = std::fs::File::open(&summary)
    {
        return Err(ntk_files::Error::Read {
            path: summary,
            source,
        }
        .into());
    }
    refuse_foreign(
        dir,
        names
            .iter()
            .map(|n| match n.as_str() {
                // The summary itself: not a probe's (round 73, also seen: it read "no probe
                // summary.json beside it").
                "summary.json" => format!("{n} (not written by ntk-probe)"),
                _ => format!("{n} (no probe summary.json beside it)"),
            })
            .collect(),
    )
}

/// The entries of `dir`, each name with whether it is a directory (not following a link);
/// none where `dir` cannot be read.
pub(crate) fn entries(dir: &Path) -> Vec<(String, bool)> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| {
                    let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
                    (e.file_name().to_string_lossy().into_owned(), is_dir)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Refuses `dir` when `foreign` (what it holds that is not a probe's) is not empty, naming
/// the first three in order ([`Error::ForeignFiles`]).
pub(crate) fn refuse_foreign(dir: &Path, mut foreign: Vec<String>) -> crate::Result<()> {
    if foreign.is_empty() {
        return Ok(());
    }
    foreign.sort();
    Err(Error::ForeignFiles {
        dir: dir.to_path_buf(),
        more: foreign.len().saturating_sub(3),
        files: foreign.into_iter().take(3).collect(),
    })
}

/// Refuses an output directory `out` that holds one of the run's inputs (`probe.weights`,
/// `probe.blocks`, the data's files and directory), or whose phase directory does
/// ([`crate::phases`]): the run replaces `out` as a whole and removes its phase files, so
/// the input would be lost. Paths are compared resolved (links followed), and files by
/// device and inode, so that an input hard-linked to a file there is held there too; an
/// input or an `out` that does not exist yet holds nothing.
pub fn check_inputs_outside(cfg: &ProbeConfig, out: &Path) -> crate::Result<()> {
    let given = [
        ("probe.weights", cfg.probe.weights.as_deref()),
        ("probe.blocks", cfg.probe.blocks.as_deref()),
    ];
    let places = [out.to_path_buf(), crate::phases::dir_beside(out)];
    check_outside(
        given.into_iter().chain(cfg.data.files()),
        &places,
        "--out, its phase files",
    )
}

/// [`check_inputs_outside`] for a sweep's `--out` (which holds its points and tables) and
/// its data's files.
pub fn check_data_outside(data: &ntk_data::DataConfig, out: &Path) -> crate::Result<()> {
    check_outside(data.files(), &[out.to_path_buf()], "--out")
}

/// [`check_inputs_outside`] for `ntk-probe onnx`: its ONNX file (`onnx.file`) and its
/// data's files, none of them inside `out`, which the run replaces as one output set (a
/// file there under an output's name, `ntk.npy` or `inputs.npy`, would be overwritten).
pub fn check_onnx_inputs_outside(
    file: &Path,
    data: &ntk_data::DataConfig,
    out: &Path,
) -> crate::Result<()> {
    let file = std::iter::once(("onnx.file", Some(file)));
    check_outside(file.chain(data.files()), &[out.to_path_buf()], "--out")
}

/// Refuses an input (`key`, path) inside one of `places`, naming the key, the file and
/// the place, and saying what the places are (`what`: `--out`, with the tiled route's phase
/// files only where the command has them; forty-fifth hostile round, N1: `onnx` named phase
/// files it has none of).
fn check_outside<'a>(
    inputs: impl IntoIterator<Item = (&'static str, Option<&'a Path>)>,
    places: &[std::path::PathBuf],
    what: &str,
) -> crate::Result<()> {
    ntk_files::apart::check_outside(inputs, places).map_err(|e| Error::Config {
        key: e.key,
        value: e.path.display().to_string(),
        reason: format!(
            "{}, which this run writes and replaces ({what}): {}; keep the run's inputs \
             outside its output directory",
            e.how,
            e.consequence()
        ),
    })
}

/// What a run checks before any work beyond its config, data and given files
/// ([`Given::read`]): `NTK_PHASE_FILES`, which every route reads (the tiled route for its
/// own phase files, the others for another run's beside their output: [`unused_phases`];
/// eighty-second hostile round, D8: `yes` passed a dense run without a word, and was read
/// as unset). A dry run calls it too.
pub fn check_before_work() -> crate::Result<()> {
    crate::phases::check_variable()
}

/// Whether the run of `cfg` takes the host's tiled route, the one that keeps phase files.
fn tiled_on_host(cfg: &ProbeConfig, compute: &Compute) -> bool {
    cfg.probe.eigen == Eigen::Tiled
        && cfg.probe.protocol == Protocol::Whole
        && !crate::solver::gpu_here(compute)
}

/// The phase files the run of `cfg` into `out` (provenance `prov`) would find of its own
/// ([`crate::phases::kept`]), in words; `None` when it keeps none (not the host's tiled
/// route, `NTK_PHASE_FILES=0`, none there, or another run's).
pub fn kept_phases(
    cfg: &ProbeConfig,
    inputs: &Inputs,
    compute: &Compute,
    out: &Path,
    prov: &Provenance,
) -> Option<String> {
    match examine_phases(cfg, inputs, compute, out, prov) {
        crate::phases::Examined::Kept(words) | crate::phases::Examined::Dropped(_, Some(words)) => {
            Some(words)
        }
        _ => None,
    }
}

/// [`kept_phases`], with tiles the run would drop said ([`crate::phases::examine`]).
pub fn examine_phases(
    cfg: &ProbeConfig,
    inputs: &Inputs,
    compute: &Compute,
    out: &Path,
    prov: &Provenance,
) -> crate::phases::Examined {
    if !tiled_on_host(cfg, compute) {
        return crate::phases::Examined::Nothing;
    }
    crate::phases::examine(&Place::of_run(out, true, prov), (inputs.n, TILE))
}

/// Another run's phase files beside `out` ([`crate::phases::another_runs`]: another
/// config's, `n`'s or tile width's), which the run of `prov` over `n` inputs would remove,
/// whatever its route: refused without `--recompute` (eighty-eighth hostile round, D1).
pub fn another_phases(out: &Path, prov: &Provenance, n: usize) -> Option<String> {
    crate::phases::another_runs(&Place::of_run(out, true, prov), (n, TILE))
}

/// The room on disk phase files need beside the tiled route's results: the tiles
/// (`Tiled::bytes_for`) and the output set written while they stand (its `inputs.npy`, the
/// eigenvalues, the summary; 64 KiB beside the inputs), so that phase files are declined
/// where the disk could not also take the results (eighty-seventh hostile round, D3).
/// The results are [`results_bytes`]'s, of the tiled route's two extreme eigenvalues (the
/// weights `--save-weights` adds are not known before the network is drawn).
pub(crate) fn phase_room(inputs: &Inputs) -> u64 {
    let tiles = ntk_kernel::extreme::tiled::Tiled::bytes_for(inputs.n, TILE) as u64;
    tiles + results_bytes(Some(inputs.x.len()), &[0.0; 2], None)
}

/// What the run of `cfg` does before any work with the phase files beside `out` when it
/// takes the host's tiled route, for a dry run of a run that would compute, so that it
/// refuses what the run refuses and says what the run says: the refusal of
/// `NTK_PHASE_FILES=1` ([`crate::phases::check_required`]), else the warning or note of a
/// run that will go on without phase files ([`crate::phases::unkept`]; seventy-first
/// hostile round, N1).
pub fn check_phase_place(
    cfg: &ProbeConfig,
    inputs: &Inputs,
    compute: &Compute,
    out: &Path,
    prov: &Provenance,
    resume: bool,
) -> crate::Result<Option<String>> {
    if !tiled_on_host(cfg, compute) {
        // Another route: a probe's phase files there are removed once its results are in.
        return Ok(unused_phases(cfg, compute, out, false));
    }
    let place = Place::of_run(out, resume, prov);
    let bytes = phase_room(inputs);
    crate::phases::check_required(&place, (inputs.n, TILE), bytes)?;
    let replaced = crate::phases::replaced(&place, (inputs.n, TILE));
    let unkept = crate::phases::unkept(&place, (inputs.n, TILE), bytes);
    Ok(match (replaced, unkept) {
        (Some(a), Some(b)) => Some(format!("{a}\n{b}")),
        (a, b) => a.or(b),
    })
}

/// Runs a configured probe; writes the files to `out` when given, as one output set
/// ([`OutputSet`]: the directory then holds this run's complete set, replacing any earlier
/// probe's set as a whole, or is left as it was). The tiled route keeps its finished phases
/// beside `out` ([`crate::phases`]) and, with `resume`, continues from them.
///
/// `given` is the run's network and given blocks ([`Given::read`]), read and checked
/// before: a dry run checks the same.
pub fn run(
    cfg: &ProbeConfig,
    inputs: &Inputs,
    compute: &Compute,
    given: Given,
    out: Option<&Path>,
    (save_weights, resume): (bool, bool),
) -> crate::Result<Summary> {
    let start = Instant::now();
    check_before_work()?;
    let set = match out {
        Some(dir) => {
            check_inputs_outside(cfg, dir)?;
            check_replaceable(dir)?;
            let parent = dir.parent().filter(|p| !p.as_os_str().is_empty());
            let name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
            ntk_files::outset::clean_dir(
                parent.unwrap_or(Path::new(".")),
                Some(name.as_deref().unwrap_or_default()),
                &|_| false,
            );
            Some(OutputSet::begin(dir).map_err(Error::Io)?)
        }
        None => None,
    };
    // The run's identity, once: recorded in the summary, and what phase files must match.
    let prov = provenance(cfg, inputs, &inputs.digest(), compute, Some(&given));
    let Given { net, blocks, .. } = given;
    let blocks = blocks.as_deref();
    // The network as exported: its weights and its outputs on the inputs.
    let outputs = save_weights.then(|| ntk_kernel::compute::outputs(&net, inputs, compute));
    let weights = outputs.as_deref().map(|y| (&net, y));
    let gram = gram_spectrum(inputs)?;
    let probed = Probed {
        cfg,
        inputs,
        compute,
        net: &net,
        gram: &gram,
    };
    let set_dir = set.as_ref().map(|s| s.path());
    let computed = || -> crate::Result<(Option<KernelResult>, Summarized)> {
        Ok(if per_block(cfg, &[cfg.probe.protocol], inputs.n) {
            let cache = &mut host::HostCache::default();
            let source = Source::PerBlock { cache, blocks };
            let done = summarize_from(probed, Protocol::Blocks, source)?;
            (None, done)
        } else if cfg.probe.eigen == Eigen::Tiled {
            let phases = out.map(|dir| Place::of_run(dir, resume, &prov));
            let done = summarize_tiled(probed, phases.as_ref())?;
            (None, done)
        } else {
            let phase = Phase::start("kernel");
            let result = probe_kernel(cfg, &net, inputs, compute, &mut host::HostCache::default())?;
            let kernel_seconds = phase.finish();
            let source = Source::Whole {
                result: &result,
                kernel_seconds,
                blocks,
            };
            let protocol = cfg.probe.protocol;
            // The inputs' and the kernel's files are written while the spectrum is computed
            // (on two cores the writer's copies overlap LAPACK's memory-bound passes: ~0.1 s
            // of a 1.5 s run at n = 2000); the set commits only after both.
            let (done, written) = std::thread::scope(|scope| {
                let writer = set_dir.map(|dir| {
                    let kernel = &result.kernel;
                    scope.spawn(move || write_arrays(dir, Some(inputs), Some(kernel)))
                });
                let done = summarize_from(probed, protocol, source);
                let written =
                    writer.map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
                (done, written)
            });
            let done = done?;
            written.transpose().map_err(|e| match &set {
                Some(set) => e.in_set(set),
                None => e,
            })?;
            (Some(result), done)
        })
    };
    let (result, summarized) = computed().map_err(|e| trace_non_finite(e, cfg, inputs, compute))?;
    let Summarized {
        mut summary,
        eigenvalues,
        blocks,
    } = summarized;
    summary.seconds = start.elapsed().as_secs_f64();
    summary.provenance = Some(prov.clone());
    let n = inputs.n;
    if let Some(set) = set {
        // The whole protocol's kernel and inputs are written already (above).
        let (inputs, kernel) = match &result {
            Some(_) => (None, None),
            None => (Some(inputs), None),
        };
        let mut write = || {
            write_outputs(
                set.path(),
                &mut summary,
                inputs,
                kernel,
                &eigenvalues,
                blocks.as_deref(),
                weights,
            )
        };
        let written = match (write(), out) {
            // The tiled route's phase files give way to its results where the disk cannot
            // hold both (eighty-seventh hostile round, D3).
            (Err(e), Some(dir)) if tiled_on_host(cfg, compute) && disk_full(&e) => {
                let place = Place::of_run(dir, true, &prov);
                let needed = results_bytes(inputs.map(|i| i.x.len()), &eigenvalues, weights);
                match crate::phases::give_way(&place, (n, TILE), &e.to_string(), needed) {
                    true => write(),
                    false => Err(e),
                }
            }
            (written, _) => written,
        };
        written.map_err(|e| e.in_set(&set))?;
        if let Some(warning) = set.commit().map_err(Error::Io)? {
            eprintln!("warning: {warning}");
        }
        if let Some(dir) = out {
            settle_phases(cfg, compute, dir, &prov, n);
        }
    }
    Ok(summary)
}

/// About the bytes a probe's output set takes on disk: its inputs (`inputs` values), its
/// eigenvalues, the network's tensors and outputs where saved, and 64 KiB for the summary
/// and the tables ([`crate::phases::give_way`]).
fn results_bytes(
    inputs: Option<usize>,
    eigenvalues: &[f64],
    weights: Option<(&Net, &[f64])>,
) -> u64 {
    use ntk_model::export::Named;
    let saved = weights.map_or(0, |(net, outputs)| {
        let tensors: usize = net.tensors().iter().map(|(_, _, v)| v.len()).sum();
        tensors + outputs.len()
    });
    8 * (inputs.unwrap_or(0) + eigenvalues.len() + saved) as u64 + (1 << 16)
}

/// Whether `e` (or an error it wraps) is a disk without room (`ENOSPC`, `EDQUOT`).
fn disk_full(e: &Error) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e as _);
    while let Some(c) = cause {
        if let Some(io) = c.downcast_ref::<std::io::Error>()
            && matches!(
                io.kind(),
                std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
            )
        {
            return true;
        }
        cause = c.source();
    }
    false
}

/// The phase files beside `out` once the run's results are in place there: the tiled
/// route's own removed ([`crate::phases::finish`]; only now, so that a failed commit leaves
/// them to resume from), another route's said and removed ([`crate::phases::unused`]).
pub fn settle_phases(
    cfg: &ProbeConfig,
    compute: &Compute,
    out: &Path,
    prov: &Provenance,
    n: usize,
) {
    if tiled_on_host(cfg, compute) {
        crate::phases::finish(&Place::of_run(out, true, prov), (n, TILE));
    } else if let Some(note) = unused_phases(cfg, compute, out, true) {
        eprintln!("{note}");
    }
}

/// A probe's phase files beside `out` where the run of `cfg` keeps none (not the host's
/// tiled route): said, and removed where `remove` ([`crate::phases::unused`]); `None` for
/// the tiled route, whose own are its to use.
pub fn unused_phases(
    cfg: &ProbeConfig,
    compute: &Compute,
    out: &Path,
    remove: bool,
) -> Option<String> {
    match tiled_on_host(cfg, compute) {
        true => None,
        false => crate::phases::unused(out, remove),
    }
}

/// A kernel that is not finite, traced to what made it: its weights (the file of
/// `probe.weights`, or the seeded draw) and its inputs, in the run's precision. The weights
/// and inputs are finite ([`Given::read`], the data's checks): the network overflowed.
fn trace_non_finite(e: Error, cfg: &ProbeConfig, inputs: &Inputs, compute: &Compute) -> Error {
    let non_finite = |n: &ntk_numerics::Error| matches!(n, ntk_numerics::Error::NonFiniteKernel);
    let traced = match &e {
        Error::Numerics(n) => non_finite(n),
        Error::Kernel(k) => matches!(&**k, ntk_kernel::Error::Numerics(n) if non_finite(n)),
        _ => false,
    };
    if !traced {
        return e;
    }
    let weights = match &cfg.probe.weights {
        Some(p) => format!("the weights of probe.weights = {}", p.display()),
        None => "the seeded network's weights".into(),
    };
    Error::Setting {
        setting: Some(format!(
            "{weights} on {} in {} (weights and inputs finite: the network's values overflowed)",
            inputs.description, compute.precision
        )),
        source: Box::new(e),
    }
}

/// The configured network: the MLP of `[model]` (input dimension from the data; a
/// `model.input_dim` must agree with it) or the ResNet of `[resnet]`, whose
/// `in_channels * image_size^2` must equal the data's dimension; with `probe.weights`, those
/// weights, every name, shape and value checked ([`Given::read`], which also reads
/// `probe.blocks`).
pub fn build_net(cfg: &ProbeConfig, inputs: &Inputs, compute: &Compute) -> crate::Result<Net> {
    match cfg.probe.weights {
        Some(_) => Ok(Given::read(cfg, inputs, compute)?.net),
        None => seeded_net(cfg, inputs, compute),
    }
}

/// [`build_net`]'s seeded draw, whatever `probe.weights` says.
fn seeded_net(cfg: &ProbeConfig, inputs: &Inputs, compute: &Compute) -> crate::Result<Net> {
    let spec = cfg.net()?;
    spec.check_input_dim(inputs.d, &inputs.description)?;
    Ok(spec.build(inputs.d, &compute.device, compute.dtype())?)
}

/// [`build_net`], but from `deeper` when that is the same MLP at a depth at least the
/// configured one (a depth sweep's deepest network, on the same device and dtype): its
/// truncation ([`Mlp::truncated`]) is the configured network without drawing the hidden
/// layers again. `None` when `deeper` does not fit.
pub fn truncate_net(
    cfg: &ProbeConfig,
    inputs: &Inputs,
    compute: &Compute,
    deeper: &Net,
) -> crate::Result<Option<Net>> {
    let (NetSpec::Mlp(model), Net::Mlp(deep)) = (cfg.net()?, deeper) else {
        return Ok(None);
    };
    let wanted = MlpConfig {
        input_dim: inputs.d,
        depth: deep.depth(),
        ..model.clone()
    };
    let weight = deep.layers[0].weight.val();
    let fits = wanted == *deep.config()
        && model.depth <= deep.depth()
        && weight.device() == compute.device
        && weight.dtype() == compute.dtype();
    if !fits {
        return Ok(None);
    }
    Ok(deep.truncated(model.depth).map(|m| Some(Net::Mlp(m)))?)
}

/// What a summary reports about the network.
struct NetFacts {
    width: usize,
    depth: usize,
    activation: String,
    convention: String,
    parameterization: String,
    seed: u64,
    output_dim: usize,
    note: Option<String>,
}

impl NetFacts {
    fn of(net: &Net, stats: BnStatistics) -> Self {
        // How BatchNorm normalizes in this kernel (`ntk_kernel::batch_norm`).
        let bn = match stats {
            BnStatistics::Running => "evaluation mode (running statistics)",
            BnStatistics::Batch => {
                "the probe batch's own statistics (training mode: the NTK of the batch map, \
                 its rows coupled through the statistics)"
            }
        };
        let spec = net.spec();
        let (convention, parameterization, note) = match net {
            Net::Mlp(mlp) => {
                let c = mlp.config();
                let note = (c.normalization == ntk_model::Normalization::BatchNorm).then(|| {
                    format!("BatchNorm couples the samples of a batch: the NTK is taken with {bn}")
                });
                (spelled(&c.convention), spelled(&c.parameterization), note)
            }
            Net::ResNet(r) => {
                let c = r.config();
                let note = match c.variant {
                    ResNetVariant::BatchNorm => {
                        format!("ResNet NTK from per-sample gradients; BatchNorm with {bn}")
                    }
                    _ => format!(
                        "ResNet NTK from per-sample gradients ({}: no normalization layers)",
                        c.describe()
                    ),
                };
                (
                    c.variant.name().to_string(),
                    "standard".to_string(),
                    Some(note),
                )
            }
            // `ntk-probe onnx` measures ONNX files (`crate::onnx`), not `run`; described
            // here all the same.
            Net::Onnx(_) => (
                "onnx".to_string(),
                "the file's".to_string(),
                Some("ONNX graph: NTK from per-sample gradients".to_string()),
            ),
        };
        Self {
            width: spec.width(),
            depth: spec.depth(),
            activation: net
                .activation()
                .map_or_else(|| spec.activation_name(), ToString::to_string),
            convention,
            parameterization,
            seed: spec.seed(),
            output_dim: spec.output_dim(),
            note,
        }
    }
}

/// The MLP of `net`, for the measurements only MLPs have.
fn mlp_only(net: &Net) -> crate::Result<&Mlp> {
    net.as_mlp().ok_or(Error::Invalid(
        "probe.embedding_angles and probe.pair are implemented for MLPs only",
    ))
}

/// The spectrum of the inputs' Gram matrix `X X^T` (the depth-0 kernel), in f64.
///
/// With more samples than dimensions (`n > d`), `X X^T` has the `d` nonzero eigenvalues of
/// the `d x d` covariance `X^T X` and `n - d` exact zeros, so the spectrum is taken from the
/// small matrix (`O(n d^2 + d^3)` instead of `O(n^3)`: for 10,000 MNIST images, a 784 x 784
/// eigenproblem instead of a 10,000 x 10,000 one).
///
/// Only its condition number, rank and singularity are read (the summary's `gram_kappa`,
/// `gram_rank`, `gram_singular`), so where `X X^T`'s largest eigenvalue passes f64's range
/// though its entries do not, the spectrum is that of the inputs scaled by a power of two
/// ([`spectrum::gram_spectrum_scaled`]): the network's kernel is checked on its own (erf's at
/// rows of norm 1e154 is about 1.37e154; hundred-and-twelfth hostile round, D2).
pub fn gram_spectrum(inputs: &Inputs) -> crate::Result<Spectrum> {
    // An error of the inputs' own scale names them (inputs near 1e155 overflow |x|^2).
    spectrum::gram_spectrum_scaled(&inputs.x, inputs.n, inputs.d)
        .map(|(s, _)| s)
        .map_err(|e| crate::Error::Setting {
            setting: Some(inputs.description.clone()),
            source: Box::new(e.into()),
        })
}

/// What one protocol makes of a computed kernel: the summary, the eigenvalues to save
/// (`eigenvalues.npy`), and for the blocks protocol its blocks (`blocks.csv`).
pub struct Summarized {
    pub summary: Summary,
    pub eigenvalues: Vec<f64>,
    pub blocks: Option<Vec<BlockRow>>,
}

/// What a kernel's summary is of: the probe's config, its inputs, where it computes, the
/// network, and the inputs' Gram spectrum (the depth-0 kernel, [`gram_spectrum`]).
#[derive(Clone, Copy)]
pub struct Probed<'a> {
    pub cfg: &'a ProbeConfig,
    pub inputs: &'a Inputs,
    pub compute: &'a Compute,
    pub net: &'a Net,
    pub gram: &'a Spectrum,
}

/// The summary of a computed kernel under one protocol, the eigenvalues to save and the
/// blocks.
pub fn summarize(
    probed: Probed<'_>,
    protocol: Protocol,
    result: &KernelResult,
    kernel_seconds: f64,
) -> crate::Result<Summarized> {
    let source = Source::Whole {
        result,
        kernel_seconds,
        blocks: None,
    };
    summarize_from(probed, protocol, source)
}

/// Kernel rows above which the blocks protocol (alone: no `whole` beside it) computes each
/// block's kernel from the block's own samples instead of cutting the blocks from the whole
/// set's kernel: 16,384 rows, a 2 GiB kernel in f64. Up to it the whole kernel is formed
/// (`ntk.npy`, and the minimum gradient angle over every pair). Each block's kernel is the
/// same either way (samples do not interact; BatchNorm is taken in evaluation mode).
pub const PER_BLOCK_ROWS: usize = 16_384;

/// Whether a probe under `protocols` on `n` samples takes the blocks protocol block by
/// block ([`PER_BLOCK_ROWS`]).
pub fn per_block(cfg: &ProbeConfig, protocols: &[Protocol], n: usize) -> bool {
    let per_sample = match cfg.probe.output {
        OutputMode::Full => cfg.net().map_or(1, |s| s.output_dim()),
        _ => 1,
    };
    protocols.iter().all(|&p| p == Protocol::Blocks) && n * per_sample > PER_BLOCK_ROWS
}

/// The blocks protocol one block at a time ([`per_block`]): each block's kernel is that of
/// its own samples, through [`compute_kernel_net_cached`]; nothing of size `n x n` is formed.
/// The minimum gradient angle and the embedding angles (pairs over the whole set) are not
/// measured; `probe.pair`'s angles are, from the pair's own kernel.
pub fn summarize_per_block(
    probed: Probed<'_>,
    cache: &mut host::HostCache,
) -> crate::Result<Summarized> {
    let source = Source::PerBlock {
        cache,
        blocks: None,
    };
    summarize_from(probed, Protocol::Blocks, source)
}

/// The whole protocol's summary by the tiled route (`probe.eigen = "tiled"`): the kernel
/// formed in tiles of its lower triangle, never whole.
pub fn summarize_tiled(probed: Probed<'_>, phases: Option<&Place>) -> crate::Result<Summarized> {
    summarize_from(probed, Protocol::Whole, Source::Tiled { phases })
}

/// Where a summary's kernel comes from.
enum Source<'a> {
    /// The whole set's kernel, computed once (in `kernel_seconds`); the blocks protocol's
    /// given `blocks` ([`Given::blocks`]).
    Whole {
        result: &'a KernelResult,
        kernel_seconds: f64,
        blocks: Option<&'a [Vec<usize>]>,
    },
    /// Each block's kernel from its own samples (the blocks protocol only), of the given
    /// `blocks` when there are.
    PerBlock {
        cache: &'a mut host::HostCache,
        blocks: Option<&'a [Vec<usize>]>,
    },
    /// The whole set's kernel in tiles of its lower triangle (`probe.eigen = "tiled"`), its
    /// finished phases kept in `phases` ([`crate::phases`]).
    Tiled { phases: Option<&'a Place> },
}

/// [`summarize`] from either source.
fn summarize_from(
    probed: Probed<'_>,
    protocol: Protocol,
    source: Source,
) -> crate::Result<Summarized> {
    let Probed {
        cfg,
        inputs,
        compute,
        net,
        gram: gram_spec,
    } = probed;
    let start = Instant::now();
    let mode = cfg.probe.output;
    let facts = NetFacts::of(net, cfg.probe.batch_norm_statistics.unwrap_or_default());
    let Measured {
        eigen,
        spec,
        eigenvalues: eigen_out,
        blocks,
        angles,
        route,
        kernel_seconds,
        eigen_seconds,
        before,
        note,
        measured_error,
        interval,
    } = match source {
        Source::Whole {
            result,
            kernel_seconds,
            blocks,
        } => Measured::whole(
            cfg,
            protocol,
            inputs,
            compute,
            net,
            &facts,
            (result, kernel_seconds, blocks),
        )?,
        Source::PerBlock { cache, blocks } => {
            Measured::per_block(cfg, inputs, compute, net, &facts, (cache, blocks))?
        }
        Source::Tiled { phases } => Measured::tiled(cfg, inputs, compute, net, phases)?,
    };
    // A pair's angle is undefined where one of its vectors is zero (a zero input, or a layer
    // with every unit off for a sample): said, where it read "NaN" on the terminal and null
    // in summary.json without a word (twelfth hostile round).
    let pair_note = cfg
        .probe
        .pair
        .filter(|_| {
            angles
                .pair_embedding
                .iter()
                .flatten()
                .any(|a| *a == ntk_kernel::embedding::EmbeddingAngle::Undefined)
                || angles.pair_grad.is_some_and(f64::is_nan)
        })
        .map(|[i, j]| {
            format!(
                "probe.pair = [{i}, {j}]: an angle of the pair is undefined (null) where the \
                 representation or the gradient of one of its samples is the zero vector (a \
                 zero input, or every unit of a layer off for it)"
            )
        });
    // The blocks' mean κ and the interval their measured errors allow (eighty-ninth hostile
    // round, D3), beside the whole kernel's.
    let (blocks_note, blocks_interval) = blocks
        .as_deref()
        .and_then(crate::blocks::mean_interval)
        .map_or((None, None), |(note, interval)| {
            (Some(note), Some(interval))
        });
    let interval = interval.or(blocks_interval);
    // Embedding angles below their layer outputs' rounding are null, and said
    // (hundred-and-thirty-seventh hostile round, D1).
    let theory = cfg.probe.method == Method::Theory;
    let unresolved = |what: &str, theta: &Option<Vec<_>>| {
        theta
            .as_deref()
            .and_then(|t| reported::unresolved_embedding_note(what, t, (compute.precision, theory)))
    };
    let embedding_min_note = unresolved("embedding_min_angle_deg", &angles.embedding_min);
    let pair_embedding_note = cfg
        .probe
        .pair
        .and_then(|[i, j]| unresolved(&format!("probe.pair = [{i}, {j}]"), &angles.pair_embedding));
    let note = [
        facts.note,
        note,
        pair_note,
        angles.pair_grad_note,
        angles.min_note,
        embedding_min_note,
        pair_embedding_note,
        blocks_note,
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>();
    let summary = Summary {
        lambda_min: spec.lambda_min,
        lambda_max: spec.lambda_max,
        kappa: spec.kappa,
        singular: spec.singular,
        rank: spec.rank,
        eigen,
        min_grad_angle_deg: angles.min.map(|a| a.deg),
        min_grad_angle_pair: angles.min.map(|a| [a.i, a.j]),
        min_grad_angle_unresolved: angles.min_unresolved,
        gram_kappa: (!gram_spec.singular).then_some(gram_spec.kappa),
        gram_singular: gram_spec.singular,
        gram_rank: gram_spec.rank,
        embedding_min_angle_deg: degrees(angles.embedding_min),
        pair_embedding_angles_deg: degrees(angles.pair_embedding),
        pair_grad_angle_deg: angles.pair_grad,
        n: inputs.n,
        input_dim: inputs.d,
        width: facts.width,
        depth: facts.depth,
        activation: facts.activation,
        convention: facts.convention,
        parameterization: facts.parameterization,
        seed: facts.seed,
        data: inputs.description.clone(),
        precision: compute.precision,
        backend: compute.backend,
        method: route.0,
        engine: route.1,
        output: mode.name(),
        protocol,
        // Blocks given by `probe.blocks` have their own sizes: probe.block_size made none of
        // them (ninety-fourth hostile round, N7: 512 was recorded).
        block_size: (protocol == Protocol::Blocks && cfg.probe.blocks.is_none())
            .then_some(cfg.probe.block_size),
        blocks: blocks.as_ref().map(Vec::len),
        measured_error,
        kappa_low: interval.map(|i| i.0),
        kappa_high: interval.and_then(|i| i.1),
        note: (!note.is_empty()).then(|| note.join("; ")),
        warnings: ntk_kernel::scale::input_scale_warning(net, inputs)
            .into_iter()
            .collect(),
        kernel_seconds,
        eigen_seconds,
        seconds: before + start.elapsed().as_secs_f64(),
        provenance: None,
        files: None,
        checksum: None,
    };
    Ok(Summarized {
        summary,
        eigenvalues: eigen_out,
        blocks,
    })
}

/// The kernel of `net` on `inputs` as the probe's config asks for it (its method, output
/// and BatchNorm statistics): the whole set's, a block's, or a block's second evaluation.
/// A list of angles as `summary.json` holds it, read back: `null` (a NaN written) as NaN,
/// where serde refused a `null` for an f64 and the summary could not be read (a sweep's
/// collect, `--resume`).
fn angles_or_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Vec<f64>>, D::Error> {
    use serde::Deserialize;
    let v: Option<Vec<Option<f64>>> = Option::deserialize(d)?;
    Ok(v.map(|v| v.into_iter().map(|a| a.unwrap_or(f64::NAN)).collect()))
}

/// Embedding angles as `summary.json` holds them: degrees, NaN (`null`) where there is no
/// angle (undefined, or not resolved; the notes say which).
fn degrees(theta: Option<Vec<ntk_kernel::embedding::EmbeddingAngle>>) -> Option<Vec<f64>> {
    theta.map(|t| t.into_iter().map(|a| a.deg_or_nan()).collect())
}

fn probe_kernel(
    cfg: &ProbeConfig,
    net: &Net,
    inputs: &Inputs,
    compute: &Compute,
    cache: &mut host::HostCache,
) -> crate::Result<KernelResult> {
    Ok(ntk_kernel::batch_norm::compute_kernel_net_stats(
        net,
        inputs,
        compute,
        (cfg.probe.method, cfg.probe.output),
        cfg.probe.batch_norm_statistics.unwrap_or_default(),
        cache,
    )?)
}

/// The second evaluation of an f32 block's kernel in f64 ([`crate::blocks::block_spectrum`]):
/// the same network with its parameters widened to f64 (exactly), on the same device, over
/// the block's samples. `None` for kernels already in f64.
struct F64Blocks<'a> {
    cfg: &'a ProbeConfig,
    inputs: &'a Inputs,
    compute: Compute,
    net: Option<Net>,
    cache: host::HostCache,
}

impl<'a> F64Blocks<'a> {
    fn new(cfg: &'a ProbeConfig, inputs: &'a Inputs, compute: &Compute, net: &Net) -> Self {
        let coarse = compute.precision != Precision::F64;
        Self {
            cfg,
            inputs,
            compute: Compute {
                precision: Precision::F64,
                ..compute.clone()
            },
            net: coarse.then(|| ntk_kernel::compute::with_precision(net, Precision::F64)),
            cache: host::HostCache::default(),
        }
    }

    /// This evaluation for the blocks protocol: `None` for kernels already in f64.
    fn recheck(&mut self) -> crate::blocks::Recheck<'_> {
        let coarse = self.net.is_some();
        coarse.then_some(self as &mut dyn crate::blocks::SecondEvaluation)
    }
}

impl crate::blocks::SecondEvaluation for F64Blocks<'_> {
    fn kernel_f64(&mut self, samples: &[usize]) -> crate::Result<Kernel> {
        let net = self.net.as_ref().expect("only made for coarse kernels");
        let sub = self.inputs.select(samples);
        Ok(probe_kernel(self.cfg, net, &sub, &self.compute, &mut self.cache)?.kernel)
    }
}

/// The eigenvalue route, summary, saved eigenvalues and blocks of [`protocol_spectrum`].
type ProtocolSpectrum = (
    Eigen,
    ntk_numerics::spectrum::Summary,
    Vec<f64>,
    Option<Vec<BlockRow>>,
    Decided,
);

/// How a whole-set kernel's singularity was decided beyond the worst-case bound
/// ([`whole_measured`]): the note that says it, and the measured error it was decided by.
#[derive(Clone, Debug, Default)]
pub(crate) struct Decided {
    pub(crate) note: Option<String>,
    pub(crate) measured_error: Option<f64>,
    /// The interval of κ that the measured error or the bound allows (Weyl):
    /// ([`Summary::kappa_low`], [`Summary::kappa_high`]).
    pub(crate) interval: Option<(f64, Option<f64>)>,
}

impl Decided {
    /// The verdict of the worst-case bound `n eps λ_max` on an f32 kernel `s` whose error
    /// could not be measured (`why`): singular by it, or resolved by less than
    /// [`crate::blocks::NEAR_BOUND`] and κ given within the interval the bound allows
    /// (Weyl; eighty-eighth hostile round, D6).
    pub(crate) fn unmeasured(s: &ntk_numerics::spectrum::Spectrum, why: &str) -> Self {
        Self::by_bound(&s.summary(), s.tolerance, why)
    }

    /// [`Decided::unmeasured`] for the summary `s` of a kernel whose worst-case bound is
    /// `bound` (the extreme route, which has no full spectrum).
    pub(crate) fn by_bound(s: &ntk_numerics::spectrum::Summary, bound: f64, why: &str) -> Self {
        let (low, high) = crate::blocks::kappa_interval(s.lambda_min, s.lambda_max, bound);
        // The least kappa the bound allows, also where it calls the kernel singular, as the
        // measured error's (ninety-third hostile round, D3: columns.md promised it).
        let interval = low.map(|low| (low, high));
        let verdict = match s.singular {
            true => {
                let least = low.map_or(String::new(), |v| {
                    format!("; kappa at least {v:.6e} (Weyl)")
                });
                format!(
                    "singular by the worst-case bound n eps lambda_max of f32 ({bound:.3e}){least}"
                )
            }
            false => {
                let at = |v: Option<f64>| v.map_or("unbounded".to_string(), |v| format!("{v:.6e}"));
                format!(
                    "lambda_min ({:.3e}) within a factor {} of the worst-case bound n eps \
                     lambda_max of f32 ({bound:.3e}): kappa between {} and {} by that bound \
                     (Weyl)",
                    s.lambda_min,
                    crate::blocks::NEAR_BOUND,
                    at(low),
                    at(high)
                )
            }
        };
        Self {
            note: Some(format!("{verdict}; {why}")),
            measured_error: None,
            interval,
        }
    }
}

/// The kernel's conditioning under `protocol`: the eigenvalue route used (the blocks of
/// the official protocol are small: their spectra are always full), its summary, the
/// eigenvalues written to `eigenvalues.npy`, and the blocks ([`crate::blocks`]).
fn protocol_spectrum(
    cfg: &ProbeConfig,
    protocol: Protocol,
    kernel: &Kernel,
    (n, recheck, given): (usize, crate::blocks::Recheck, Option<&[Vec<usize>]>),
    compute: &Compute,
    facts: &NetFacts,
) -> crate::Result<ProtocolSpectrum> {
    let eps = compute.precision.epsilon();
    Ok(match protocol {
        Protocol::Whole if cfg.probe.eigen == Eigen::Extreme => {
            let e = crate::solver::extreme(kernel, compute, eps)?;
            let ev = vec![e.lambda_min, e.lambda_max];
            // The extreme route has no full spectrum to decide by a measured error: its
            // verdict is the bound's, said (eighty-fifth hostile round, D3).
            // Near the bound its kappa is given within the interval the bound allows (eighty-
            // eighth hostile round, D6).
            let summary = e.summary();
            let bound = e.tolerance;
            let near = crate::blocks::needs_measuring(&summary, bound);
            let decided = match near && eps > f64::EPSILON {
                true => Decided::by_bound(
                    &summary,
                    bound,
                    "eigen = \"extreme\" does not measure the kernel's error; eigen = \"full\" \
                     (up to 4,096 rows) or f64 resolves it",
                ),
                false => Decided::default(),
            };
            (Eigen::Extreme, summary, ev, None, decided)
        }
        Protocol::Whole => {
            let s = crate::solver::full(kernel, compute, eps)?;
            let (s, decided) = whole_measured(kernel, (s, eps), (n, recheck))?;
            let ev = s.eigenvalues.clone();
            (Eigen::Full, s.summary(), ev, None, decided)
        }
        Protocol::Blocks => {
            let b = crate::blocks::spectra(
                kernel,
                crate::blocks::members(cfg, given, n, facts.seed)?,
                (eps, recheck),
                cfg.probe.output,
                facts.output_dim,
            )?;
            (
                Eigen::Full,
                b.summary,
                b.eigenvalues,
                Some(b.rows),
                Decided::default(),
            )
        }
    })
}

/// The largest whole-set kernel (rows) evaluated again in f64 to measure an f32 kernel's
/// error ([`whole_measured`]): 4,096 rows, 128 MiB in f64 beside the kernel itself.
pub(crate) const MEASURED_ROWS: usize = 4096;

/// The whole set's f32 kernel `s` (its spectrum in precision `eps`) that the worst-case
/// bound `n eps λ_max` calls singular, decided as the blocks protocol decides a block
/// ([`crate::blocks::measured_spectrum`]): its error measured against a second evaluation
/// of the kernel in f64, and the kernel singular only where `λ_min` is at or below that
/// error (Weyl); the note says the error and the interval of κ it allows, or that the
/// verdict is the bound's (a kernel of more than [`MEASURED_ROWS`] rows). Eighty-fourth
/// hostile round, D3: the whole protocol in f32 called singular (rank 7 of 8) a kernel that
/// the blocks protocol, on the same inputs as one block, resolved (κ within 8% of f64's).
/// `ntk-probe onnx` decides its f32 kernels by the same rule (eighty-sixth round, D5).
pub(crate) fn whole_measured(
    kernel: &Kernel,
    (s, eps): (ntk_numerics::spectrum::Spectrum, f64),
    (n, mut recheck): (usize, crate::blocks::Recheck),
) -> crate::Result<(ntk_numerics::spectrum::Spectrum, Decided)> {
    if !crate::blocks::needs_measuring(&s.summary(), s.tolerance) || recheck.is_none() {
        return Ok((s, Decided::default()));
    }
    let bound = s.tolerance;
    if kernel.size > MEASURED_ROWS {
        let why = format!(
            "a kernel of more than {MEASURED_ROWS} rows is not evaluated again in f64 to \
             measure its error: probe in f64, or take the blocks protocol, to resolve it"
        );
        return Ok((s.clone(), Decided::unmeasured(&s, &why)));
    }
    let all: Vec<usize> = (0..n).collect();
    let (singular, lambda_min) = (s.singular, s.lambda_min);
    let (w, measured) = crate::blocks::measured_spectrum(kernel, &all, (s, eps), &mut recheck)?;
    let Some(m) = measured else {
        return Ok((w, Decided::default()));
    };
    let (low, high) = crate::blocks::kappa_interval(w.lambda_min, w.lambda_max, m.tolerance);
    let what = if w.singular {
        // The least kappa the error allows, as an unresolved block's `kappa_low` (eighty-
        // seventh hostile round, N9).
        let least = low.map_or(String::new(), |v| {
            format!("; kappa at least {v:.6e} (Weyl)")
        });
        format!(
            "does not resolve lambda_min: singular, rank {} at the tolerance {:.3e}{least}",
            w.rank, m.tolerance
        )
    } else {
        let at = |v: Option<f64>| v.map_or("unbounded".to_string(), |v| format!("{v:.6e}"));
        format!(
            "resolves it: rank {}, kappa between {} and {} (Weyl, with f64's own bound)",
            w.rank,
            at(low),
            at(high)
        )
    };
    let called = match singular {
        true => "called the kernel singular".to_string(),
        false => format!(
            "lay within a factor {} of lambda_min ({lambda_min:.3e})",
            crate::blocks::NEAR_BOUND
        ),
    };
    let note = format!(
        "f32: the worst-case bound n eps lambda_max ({bound:.3e}) {called}; its error measured \
         against the same network's kernel in f64, ||K_f32 - K_f64||_2 = {:.3e}, {what}",
        m.error
    );
    Ok((
        w,
        Decided {
            note: Some(note),
            measured_error: Some(m.error),
            interval: low.map(|low| (low, high)),
        },
    ))
}
