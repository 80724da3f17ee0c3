//! Depth sweeps (Liu & Hui, Fig. 2): every (activation, depth, seed) point of a grid, each
//! under both kernel protocols, with resume (finished points are skipped), sharding for job
//! arrays (`--shard i/N`: point p belongs to shard p mod N), and `collect`, which merges the
//! finished points into `results.csv` (one row per point and protocol, every summary field),
//! `summary.csv` (means and spreads over seeds, with the infinite-width theory beside them)
//! and the figures.
//!
//! A point counts as finished only when the summaries of all its protocols record the
//! fingerprint of the config about to compute it ([`ntk_core::provenance`]); a point made by
//! another config is an error naming the keys that differ (or, with `recompute`, is
//! computed again). Each point's directory is written as one output set
//! ([`ntk_core::outset`]): all its protocols or none.
//!
//! Layout of `out/`: `runs/<activation>/depth<LL>/seed<S>/<protocol>/{summary.json,
//! eigenvalues.npy}`, `theory.json` (cached theory values), `results.csv`, `summary.csv`,
//! `min_grad_angle_vs_depth.{png,svg}`, `kappa_vs_depth_<protocol>.{png,svg}`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use ntk_model::{Activation, ActivationKind, MlpConfig};
use serde::{Deserialize, Serialize};

use crate::angles;
use crate::config::{ProbeConfig, ProbeSection, Protocol};
use crate::run::{self, Summary};
use crate::theory;
use ntk_core::backend;
use ntk_core::kernel::Kernel;
use ntk_core::outset::{self, OutputSet};
use ntk_core::plot::{Dash, Figure, PALETTE, Series};
use ntk_core::provenance::{self, Provenance};
use ntk_core::spectrum;
use ntk_core::sweep::{MAX_POINTS, Shard};
use ntk_data::DataConfig;
use ntk_data::inputs::{self, Inputs};

fn default_protocols() -> Vec<Protocol> {
    vec![Protocol::Whole, Protocol::Blocks]
}
fn default_true() -> bool {
    true
}

/// The `[sweep]` table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepSection {
    pub depths: Vec<usize>,
    pub activations: Vec<ActivationKind>,
    pub seeds: Vec<u64>,
    #[serde(default = "default_protocols")]
    pub protocols: Vec<Protocol>,
    /// Output directory (`--out` overrides).
    pub out: PathBuf,
    /// Overlay the infinite-width theory (closed forms for relu and linear; quadrature for
    /// other activations only when n <= 200, as it costs n^2 bivariate quadratures a layer).
    #[serde(default = "default_true")]
    pub theory: bool,
}

/// A sweep file: `[sweep]`, and the `[data]`, `[model]`, `[probe]` of a probe config whose
/// activation, depth and seed the sweep overrides.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepConfig {
    pub sweep: SweepSection,
    pub data: DataConfig,
    pub model: MlpConfig,
    #[serde(default)]
    pub probe: ProbeSection,
}

impl SweepConfig {
    pub fn load(path: &Path) -> Result<Self, String> {
        // Sweeps vary an MLP's activation and depth; a [resnet] table would otherwise be
        // refused as an unknown key, which does not say why.
        if let Ok(text) = std::fs::read_to_string(path)
            && let Ok(table) = text.parse::<toml::Table>()
            && table.contains_key("resnet")
        {
            return Err(format!(
                "{}: [resnet]: sweeps run MLPs only ([model]); probe a ResNet one network at a \
                 time with `ntk-probe ntk --config FILE --out DIR`",
                path.display()
            ));
        }
        let cfg: Self = ntk_core::config_file::load_toml(path)?;
        cfg.validate()
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(cfg)
    }

    /// Parses and validates a sweep config's text.
    pub fn parse(text: &str) -> Result<Self, String> {
        let cfg: Self = toml::from_str(text).map_err(|e| e.to_string())?;
        cfg.validate()?;
        Ok(cfg)
    }

    fn validate(&self) -> Result<(), String> {
        let s = &self.sweep;
        if s.depths.is_empty() || s.activations.is_empty() || s.seeds.is_empty() {
            return Err("sweep.depths, sweep.activations and sweep.seeds must not be empty".into());
        }
        if s.protocols.is_empty() {
            return Err("sweep.protocols must not be empty".into());
        }
        let points = s.depths.len() as u128 * s.activations.len() as u128 * s.seeds.len() as u128;
        if points > MAX_POINTS as u128 {
            return Err(format!(
                "sweep: {points} points (depths x activations x seeds); at most {MAX_POINTS} \
                 in one sweep"
            ));
        }
        self.probe_config(ActivationKind::Relu, 1, 0).validate()
    }

    /// The probe config of one point.
    pub fn probe_config(&self, activation: ActivationKind, depth: usize, seed: u64) -> ProbeConfig {
        let mut model = self.model.clone();
        model.activation = activation;
        model.depth = depth;
        model.seed = seed;
        if activation != ActivationKind::NormRelu {
            model.kink = None;
        }
        ProbeConfig {
            data: self.data.clone(),
            model: Some(model),
            resnet: None,
            probe: self.probe.clone(),
        }
    }

    /// The probe config of one point under one protocol (what its summary records).
    pub fn point_config(&self, point: &Point, protocol: Protocol) -> ProbeConfig {
        let mut c = self.probe_config(point.activation, point.depth, point.seed);
        c.probe.protocol = protocol;
        c
    }

    /// Every point, in the fixed order that sharding uses.
    pub fn points(&self) -> Vec<Point> {
        let mut v = Vec::new();
        for &activation in &self.sweep.activations {
            for &depth in &self.sweep.depths {
                for &seed in &self.sweep.seeds {
                    v.push(Point {
                        activation,
                        depth,
                        seed,
                    });
                }
            }
        }
        v
    }
}

/// One grid point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub activation: ActivationKind,
    pub depth: usize,
    pub seed: u64,
}

impl Point {
    pub fn dir(&self, out: &Path) -> PathBuf {
        out.join("runs")
            .join(self.activation.name())
            .join(format!("depth{:02}", self.depth))
            .join(format!("seed{}", self.seed))
    }
}

/// How a sweep runs.
#[derive(Clone, Debug, Default)]
pub struct SweepOptions {
    /// Backend (overrides `probe.device`).
    pub device: Option<String>,
    /// Recompute points made by another config instead of refusing them.
    pub recompute: bool,
    /// The memory the work may plan for (`--max-memory`).
    pub max_memory: Option<String>,
    /// Add points to a directory whose points were made by a config that differs beyond
    /// the sweep axes (refused by default: the directory would mix two sweeps).
    pub allow_mixed: bool,
}

/// The keys in which the points of one sweep differ: `collect` requires the rest of the
/// recorded configs to agree ([`provenance::check_one_base`]).
pub const AXES: [&str; 5] = [
    "model.activation",
    "model.depth",
    "model.seed",
    "model.kink",
    "probe.protocol",
];

/// A point's results on disk.
#[derive(Clone, Debug, PartialEq)]
pub enum PointState {
    /// Not (completely) computed.
    New,
    /// Every protocol's summary records this config's fingerprint.
    Done,
    /// Made by another config, or unreadable: why.
    Stale(String),
}

/// Reads a summary.json; `None` when absent, an error naming the file when unreadable.
pub fn read_summary(path: &Path) -> Result<Option<Summary>, String> {
    provenance::read_json(path, "an ntk-probe summary")
}

/// The state of the point in `dir` whose protocols would be made by `provs`.
pub fn point_state(dir: &Path, provs: &[(Protocol, Provenance)]) -> PointState {
    let mut complete = true;
    for (protocol, prov) in provs {
        let path = dir.join(protocol.name()).join("summary.json");
        match read_summary(&path) {
            Ok(None) => complete = false,
            Ok(Some(s)) => {
                if let Err(e) = provenance::check_reuse(&path, s.provenance.as_ref(), prov) {
                    return PointState::Stale(e.to_string());
                }
            }
            Err(e) => {
                return PointState::Stale(format!(
                    "{e}; pass --recompute to compute the point again"
                ));
            }
        }
    }
    if complete {
        PointState::Done
    } else {
        PointState::New
    }
}

/// What a sweep needs before it runs: the backend, the inputs and their digest.
struct Prepared {
    compute: backend::Compute,
    inputs: Inputs,
    digest: String,
}

fn prepare(cfg: &SweepConfig, opts: &SweepOptions) -> Result<Prepared, String> {
    let device = opts.device.as_deref().or(cfg.probe.device.as_deref());
    let compute = backend::select(device, cfg.probe.precision)?;
    // The deepest network under each protocol bounds the memory of every point.
    let deepest = cfg.sweep.depths.iter().copied().max().unwrap_or(0);
    for &protocol in &cfg.sweep.protocols {
        let point = Point {
            activation: cfg.sweep.activations[0],
            depth: deepest,
            seed: cfg.sweep.seeds[0],
        };
        run::check_memory(
            &cfg.point_config(&point, protocol),
            inputs::expected_dim(&cfg.data),
            opts.max_memory.as_deref(),
        )?;
    }
    let inputs = inputs::load(&cfg.data)?;
    let digest = inputs.digest();
    Ok(Prepared {
        compute,
        inputs,
        digest,
    })
}

/// A point of this shard: its index in the sweep, what each protocol's summary will
/// record, and its state on disk.
struct PlannedPoint {
    index: usize,
    point: Point,
    provs: Vec<(Protocol, Provenance)>,
    state: PointState,
}

/// This shard's points, in sweep order.
fn states(cfg: &SweepConfig, out: &Path, shard: Shard, prep: &Prepared) -> Vec<PlannedPoint> {
    cfg.points()
        .into_iter()
        .enumerate()
        .filter(|(p, _)| shard.owns(*p))
        .map(|(index, point)| {
            let provs: Vec<(Protocol, Provenance)> = cfg
                .sweep
                .protocols
                .iter()
                .map(|&protocol| {
                    let pcfg = cfg.point_config(&point, protocol);
                    let prov = run::provenance(&pcfg, &prep.inputs, &prep.digest, &prep.compute);
                    (protocol, prov)
                })
                .collect();
            let state = point_state(&point.dir(out), &provs);
            PlannedPoint {
                index,
                point,
                provs,
                state,
            }
        })
        .collect()
}

/// Refuses to add points to a directory holding points of another sweep config (differing
/// beyond [`AXES`]); points about to be recomputed do not count.
fn check_same_sweep(out: &Path, points: &[PlannedPoint], recompute: bool) -> Result<(), String> {
    let Some((_, new)) = points.first().and_then(|p| p.provs.first()) else {
        return Ok(());
    };
    let replaced: Vec<PathBuf> = points
        .iter()
        .filter(|p| recompute && matches!(p.state, PointState::Stale(_)))
        .map(|p| p.point.dir(out))
        .collect();
    let mut entries = vec![(PathBuf::from("this config"), Some(new.clone()))];
    for (path, summary) in walk_summaries(out) {
        if let Ok(s) = summary
            && !replaced.iter().any(|r| path.starts_with(r))
        {
            entries.push((path, s.provenance));
        }
    }
    let refs: Vec<(PathBuf, Option<&Provenance>)> = entries
        .iter()
        .map(|(p, v)| (p.clone(), v.as_ref()))
        .collect();
    provenance::check_one_base(&refs, &AXES)
        .map(|_| ())
        .map_err(|e| format!("{}: {e}", out.display()))
}

/// Prints every point with its state (`--dry-run`); computes nothing.
pub fn dry_run(
    cfg: &SweepConfig,
    out: &Path,
    shard: Shard,
    opts: &SweepOptions,
) -> Result<(), String> {
    let prep = prepare(cfg, opts)?;
    let all = cfg.points().len();
    let mine = states(cfg, out, shard, &prep);
    println!(
        "{all} point(s) x {} protocol(s) in {}; this shard ({}/{}) owns {}:",
        cfg.sweep.protocols.len(),
        out.display(),
        shard.index,
        shard.count,
        mine.len()
    );
    let mut stale = Vec::new();
    for PlannedPoint {
        index: p,
        point,
        state,
        ..
    } in &mine
    {
        let label = match state {
            PointState::New => "new",
            PointState::Done => "done",
            PointState::Stale(why) => {
                stale.push(why.clone());
                "stale"
            }
        };
        println!(
            "{p:4} {label:6} {:>12} depth {:3} seed {:<6} {}",
            point.activation.name(),
            point.depth,
            point.seed,
            point.dir(out).display()
        );
    }
    for why in stale.iter().take(3) {
        println!("stale: {why}");
    }
    Ok(())
}

/// Runs this shard's unfinished points; returns (ran, skipped).
pub fn run_sweep(
    cfg: &SweepConfig,
    out: &Path,
    shard: Shard,
    opts: &SweepOptions,
) -> Result<(usize, usize), String> {
    ntk_core::outset::check_writable(out)?;
    outset::clean_tree(&out.join("runs"));
    outset::clean_dir(out, None, &|f: &str| {
        [".csv", ".json", ".png", ".svg"]
            .iter()
            .any(|e| f.ends_with(e))
    });
    let prep = prepare(cfg, opts)?;
    let (compute, inputs) = (&prep.compute, &prep.inputs);
    let gram = run::gram_spectrum(inputs)?;
    let mut points = states(cfg, out, shard, &prep);
    // Nothing is computed while a point made by another config is in the way.
    let stale: Vec<&String> = points
        .iter()
        .filter_map(|p| match &p.state {
            PointState::Stale(why) => Some(why),
            _ => None,
        })
        .collect();
    provenance::refuse_stale(&stale, opts.recompute, "point")?;
    if !opts.allow_mixed {
        check_same_sweep(out, &points, opts.recompute)?;
    }
    // Per (activation, seed), deepest first: the shallower networks share the deeper one's
    // hidden layers, whose forward and Grams the host engine then reuses (host::Forward).
    points.sort_by_key(|p| {
        (
            cfg.sweep
                .activations
                .iter()
                .position(|a| *a == p.point.activation),
            p.point.seed,
            std::cmp::Reverse(p.point.depth),
            p.index,
        )
    });
    let mut cache = crate::host::HostCache::default();
    let mut deepest: Option<ntk_model::Net> = None;
    let bar = indicatif::ProgressBar::new(points.len() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {msg} [{elapsed} < {eta}]")
            .expect("valid template"),
    );
    let (mut ran, mut skipped) = (0, 0);
    for PlannedPoint {
        point,
        provs,
        state,
        ..
    } in points
    {
        if state == PointState::Done {
            skipped += 1;
            bar.inc(1);
            continue;
        }
        bar.set_message(format!(
            "{} depth {} seed {}",
            point.activation, point.depth, point.seed
        ));
        let pcfg = cfg.probe_config(point.activation, point.depth, point.seed);
        // The family's deepest network comes first; the shallower ones truncate it.
        let net = match deepest
            .as_ref()
            .map(|d| run::truncate_net(&pcfg, inputs, compute, d))
            .transpose()?
            .flatten()
        {
            Some(net) => net,
            None => {
                let net = run::build_net(&pcfg, inputs, compute)?;
                deepest = Some(net.clone());
                net
            }
        };
        let t = Instant::now();
        let result = run::compute_kernel_net_cached(
            &net,
            inputs,
            compute,
            pcfg.probe.method,
            pcfg.probe.output,
            &mut cache,
        )?;
        let kernel_seconds = t.elapsed().as_secs_f64();
        let set = OutputSet::begin(&point.dir(out)).map_err(|e| e.to_string())?;
        for (protocol, prov) in provs {
            let (mut summary, eigenvalues) = run::summarize(
                &pcfg,
                protocol,
                inputs,
                compute,
                &net,
                &result,
                &gram,
                kernel_seconds,
            )?;
            summary.provenance = Some(prov);
            run::write_outputs(
                &set.path().join(protocol.name()),
                &summary,
                None,
                None,
                &eigenvalues,
                None,
            )?;
        }
        set.commit().map_err(|e| e.to_string())?;
        if !bar.is_hidden() {
            bar.inc(1);
        } else {
            println!(
                "[sweep] {} depth {} seed {}: {:.1} s",
                point.activation, point.depth, point.seed, kernel_seconds
            );
        }
        ran += 1;
    }
    bar.finish_and_clear();
    Ok((ran, skipped))
}

/// Every finished summary under `out/runs`, sorted.
pub fn read_summaries(out: &Path) -> Result<Vec<Summary>, String> {
    Ok(read_summaries_at(out)?
        .into_iter()
        .map(|(_, s)| s)
        .collect())
}

/// [`read_summaries`] with each summary's path. Hidden entries (output sets still being
/// written, see [`ntk_core::outset`]) are not read.
pub fn read_summaries_at(out: &Path) -> Result<Vec<(PathBuf, Summary)>, String> {
    let mut found = walk_summaries(out)
        .into_iter()
        .map(|(p, s)| s.map(|s| (p, s)))
        .collect::<Result<Vec<_>, String>>()?;
    found.sort_by(|(_, a), (_, b)| {
        (a.protocol.as_str(), a.activation.as_str(), a.depth, a.seed).cmp(&(
            b.protocol.as_str(),
            b.activation.as_str(),
            b.depth,
            b.seed,
        ))
    });
    Ok(found)
}

/// Every `summary.json` under `out/runs` (hidden entries skipped), read or not.
fn walk_summaries(out: &Path) -> Vec<(PathBuf, Result<Summary, String>)> {
    let mut found = Vec::new();
    let mut stack = vec![out.join("runs")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().is_some_and(|n| n == "summary.json") {
                match read_summary(&path) {
                    Ok(Some(s)) => found.push((path, Ok(s))),
                    Ok(None) => {}
                    Err(e) => found.push((path, Err(e))),
                }
            }
        }
    }
    found
}

fn fmt_opt(v: Option<f64>) -> String {
    v.map_or(String::new(), |v| format!("{v:.10e}"))
}

/// Writes `results.csv`: one row per summary, every field (lists joined by `;`; a singular
/// kernel's kappa is `inf`).
pub fn write_results_csv(path: &Path, rows: &[Summary]) -> Result<(), String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let err = |e: csv::Error| format!("{}: {e}", path.display());
    w.write_record([
        "protocol",
        "activation",
        "depth",
        "seed",
        "width",
        "n",
        "input_dim",
        "kappa",
        "singular",
        "rank",
        "eigen",
        "lambda_min",
        "lambda_max",
        "min_grad_angle_deg",
        "min_grad_angle_i",
        "min_grad_angle_j",
        "gram_kappa",
        "gram_rank",
        "embedding_min_angle_deg",
        "pair_embedding_angles_deg",
        "pair_grad_angle_deg",
        "convention",
        "parameterization",
        "data",
        "precision",
        "backend",
        "method",
        "engine",
        "output",
        "block_size",
        "blocks",
        "kernel_seconds",
        "eigen_seconds",
        "seconds",
    ])
    .map_err(err)?;
    let join = |v: &Option<Vec<f64>>| {
        v.as_ref()
            .map(|v| {
                v.iter()
                    .map(|x| format!("{x:.6}"))
                    .collect::<Vec<_>>()
                    .join(";")
            })
            .unwrap_or_default()
    };
    for s in rows {
        let kappa = if s.singular {
            "inf".to_string()
        } else {
            fmt_opt(s.kappa)
        };
        let gram_kappa = if s.gram_singular {
            "inf".to_string()
        } else {
            fmt_opt(s.gram_kappa)
        };
        let [i, j] = s
            .min_grad_angle_pair
            .map_or([String::new(), String::new()], |[i, j]| {
                [i.to_string(), j.to_string()]
            });
        w.write_record([
            s.protocol.clone(),
            s.activation.clone(),
            s.depth.to_string(),
            s.seed.to_string(),
            s.width.to_string(),
            s.n.to_string(),
            s.input_dim.to_string(),
            kappa,
            s.singular.to_string(),
            s.rank.to_string(),
            s.eigen.clone(),
            format!("{:.10e}", s.lambda_min),
            format!("{:.10e}", s.lambda_max),
            fmt_opt(s.min_grad_angle_deg),
            i,
            j,
            gram_kappa,
            s.gram_rank.to_string(),
            join(&s.embedding_min_angle_deg),
            join(&s.pair_embedding_angles_deg),
            fmt_opt(s.pair_grad_angle_deg),
            s.convention.clone(),
            s.parameterization.clone(),
            s.data.clone(),
            s.precision.clone(),
            s.backend.clone(),
            s.method.clone(),
            s.engine.clone(),
            s.output.clone(),
            s.block_size.map(|b| b.to_string()).unwrap_or_default(),
            s.blocks.map(|b| b.to_string()).unwrap_or_default(),
            format!("{:.4}", s.kernel_seconds),
            format!("{:.4}", s.eigen_seconds),
            format!("{:.4}", s.seconds),
        ])
        .map_err(err)?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    ntk_core::io::atomic_write(path, &bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// Mean and sample standard deviation.
fn mean_std(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = if v.len() > 1 {
        v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (mean, var.sqrt())
}

/// Means over seeds of one (protocol, activation, depth) group.
#[derive(Clone, Debug, Serialize)]
pub struct GroupRow {
    pub protocol: String,
    pub activation: String,
    pub depth: usize,
    pub seeds: usize,
    /// Seeds whose kernel was singular (their kappa is infinite and not in the mean).
    pub singular: usize,
    pub kappa_mean: f64,
    pub kappa_std: f64,
    pub log10_kappa_mean: f64,
    pub min_grad_angle_mean_deg: f64,
    pub min_grad_angle_std_deg: f64,
    pub lambda_min_mean: f64,
    pub lambda_max_mean: f64,
    pub rank_min: usize,
    pub theory_min_grad_angle_deg: Option<f64>,
    pub theory_kappa: Option<f64>,
}

/// Infinite-width values per (activation, depth), cached in `out/theory.json`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TheoryCache {
    /// `"<activation>/<depth>"` -> (min gradient angle in degrees, kappa or null if singular).
    pub values: BTreeMap<String, (f64, Option<f64>)>,
    /// The data the cache was made for (the inputs' description).
    pub data: String,
}

fn theory_values(cfg: &SweepConfig, out: &Path) -> Result<TheoryCache, String> {
    let path = out.join("theory.json");
    let inputs: Inputs = inputs::load(&cfg.data)?;
    // The cache holds for these inputs (their digest) and this kink only.
    let made_for = format!(
        "{}; sha256 {}; kink {:?}",
        inputs.description,
        inputs.digest(),
        cfg.model.kink
    );
    let mut cache: TheoryCache = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .filter(|c: &TheoryCache| c.data == made_for)
        .unwrap_or_default();
    cache.data = made_for;
    let gram = Kernel::gram(&inputs.x, inputs.n, inputs.d);
    let theta_min = angles::min_angle(&gram).map_or(f64::NAN, |a| a.deg.to_radians());
    let mut changed = false;
    for &kind in &cfg.sweep.activations {
        let act = Activation::new(kind, cfg.model.kink);
        let closed = matches!(kind, ActivationKind::Relu | ActivationKind::Linear);
        for &depth in &cfg.sweep.depths {
            let key = format!("{}/{}", kind.name(), depth);
            if cache.values.contains_key(&key) {
                continue;
            }
            let phi = theory::grad_angle(&act, theta_min, depth).to_degrees();
            let kappa = if closed || inputs.n <= 200 {
                let k = theory::infinite_width_ntk(&inputs.x, inputs.n, inputs.d, &act, depth);
                let s = spectrum::spectrum(&k, f64::EPSILON)?;
                (!s.singular).then_some(s.kappa)
            } else {
                None
            };
            cache.values.insert(key, (phi, kappa));
            changed = true;
        }
    }
    if changed {
        let json = serde_json::to_string_pretty(&cache).expect("serializes");
        ntk_core::io::atomic_write(&path, json.as_bytes())
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(cache)
}

/// Groups the summaries by (protocol, activation, depth).
pub fn group(rows: &[Summary], theory: Option<&TheoryCache>) -> Vec<GroupRow> {
    let mut groups: BTreeMap<(String, String, usize), Vec<&Summary>> = BTreeMap::new();
    for s in rows {
        groups
            .entry((s.protocol.clone(), s.activation.clone(), s.depth))
            .or_default()
            .push(s);
    }
    groups
        .into_iter()
        .map(|((protocol, activation, depth), v)| {
            let finite: Vec<f64> = v.iter().filter_map(|s| s.kappa).collect();
            let (kappa_mean, kappa_std) = if finite.is_empty() {
                (f64::INFINITY, f64::NAN)
            } else {
                mean_std(&finite)
            };
            let logs: Vec<f64> = finite.iter().map(|k| k.log10()).collect();
            let angles: Vec<f64> = v.iter().filter_map(|s| s.min_grad_angle_deg).collect();
            let (am, asd) = mean_std(&angles);
            let base = activation
                .split('(')
                .next()
                .unwrap_or(&activation)
                .to_string();
            let th = theory.and_then(|t| t.values.get(&format!("{base}/{depth}")));
            GroupRow {
                seeds: v.len(),
                singular: v.iter().filter(|s| s.singular).count(),
                kappa_mean,
                kappa_std,
                log10_kappa_mean: if logs.is_empty() {
                    f64::INFINITY
                } else {
                    mean_std(&logs).0
                },
                min_grad_angle_mean_deg: am,
                min_grad_angle_std_deg: asd,
                lambda_min_mean: mean_std(&v.iter().map(|s| s.lambda_min).collect::<Vec<_>>()).0,
                lambda_max_mean: mean_std(&v.iter().map(|s| s.lambda_max).collect::<Vec<_>>()).0,
                rank_min: v.iter().map(|s| s.rank).min().unwrap_or(0),
                theory_min_grad_angle_deg: th.map(|t| t.0),
                // The theory is of the whole-set kernel; blocks have their own (not computed).
                theory_kappa: if protocol == "whole" {
                    th.and_then(|t| t.1)
                } else {
                    None
                },
                protocol,
                activation,
                depth,
            }
        })
        .collect()
}

fn write_groups_csv(path: &Path, groups: &[GroupRow]) -> Result<(), String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for g in groups {
        w.serialize(g)
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    ntk_core::io::atomic_write(path, &bytes).map_err(|e| format!("{}: {e}", path.display()))
}

fn dash_for(activation: &str) -> Dash {
    if activation.starts_with("linear") {
        Dash::Dashed
    } else {
        Dash::Solid
    }
}

/// The figures of Fig. 2: minimum gradient angle and kappa (log scale) against depth, relu
/// solid and linear dashed as in the paper, theory dotted in the same colour.
pub fn figures(out: &Path, groups: &[GroupRow], title: &str) -> Result<Vec<PathBuf>, String> {
    let mut written = Vec::new();
    let mut acts: Vec<String> = groups.iter().map(|g| g.activation.clone()).collect();
    acts.sort();
    acts.dedup();
    let protocols: Vec<String> = {
        let mut p: Vec<String> = groups.iter().map(|g| g.protocol.clone()).collect();
        p.sort();
        p.dedup();
        p
    };
    // The minimum angle is a property of the whole kernel: one figure (from the first protocol).
    let first = protocols.first().cloned().unwrap_or_default();
    let mut angle = Figure {
        title: format!("{title}: minimum model-gradient angle"),
        x_label: "depth L".into(),
        y_label: "min pairwise gradient angle (deg)".into(),
        log_y: false,
        series: Vec::new(),
    };
    for (c, act) in acts.iter().enumerate() {
        let rows: Vec<&GroupRow> = groups
            .iter()
            .filter(|g| &g.activation == act && g.protocol == first)
            .collect();
        angle.series.push(Series {
            label: format!("{act} (measured, mean over seeds)"),
            points: rows
                .iter()
                .map(|g| (g.depth as f64, g.min_grad_angle_mean_deg))
                .collect(),
            errors: Some(rows.iter().map(|g| g.min_grad_angle_std_deg).collect()),
            color: PALETTE[c % PALETTE.len()],
            dash: dash_for(act),
            markers: true,
        });
        if rows.iter().any(|g| g.theory_min_grad_angle_deg.is_some()) {
            angle.series.push(Series {
                label: format!("{act} (infinite width)"),
                points: rows
                    .iter()
                    .filter_map(|g| g.theory_min_grad_angle_deg.map(|t| (g.depth as f64, t)))
                    .collect(),
                errors: None,
                color: PALETTE[c % PALETTE.len()],
                dash: Dash::Dotted,
                markers: false,
            });
        }
    }
    let stem = out.join("min_grad_angle_vs_depth");
    angle.save(&stem)?;
    written.push(stem);
    for protocol in &protocols {
        let mut fig = Figure {
            title: format!("{title}: NTK condition number ({protocol} protocol)"),
            x_label: "depth L".into(),
            y_label: "kappa (log scale)".into(),
            log_y: true,
            series: Vec::new(),
        };
        for (c, act) in acts.iter().enumerate() {
            let rows: Vec<&GroupRow> = groups
                .iter()
                .filter(|g| &g.activation == act && &g.protocol == protocol)
                .collect();
            let singular_all = rows.iter().all(|g| g.singular == g.seeds);
            let label = if singular_all {
                format!("{act}: singular at every depth (kappa = inf)")
            } else {
                format!("{act} (measured)")
            };
            fig.series.push(Series {
                label,
                points: rows
                    .iter()
                    .map(|g| (g.depth as f64, g.kappa_mean))
                    .collect(),
                errors: None,
                color: PALETTE[c % PALETTE.len()],
                dash: dash_for(act),
                markers: true,
            });
            if protocol == "whole" && rows.iter().any(|g| g.theory_kappa.is_some()) {
                fig.series.push(Series {
                    label: format!("{act} (infinite width)"),
                    points: rows
                        .iter()
                        .filter_map(|g| g.theory_kappa.map(|t| (g.depth as f64, t)))
                        .collect(),
                    errors: None,
                    color: PALETTE[c % PALETTE.len()],
                    dash: Dash::Dotted,
                    markers: false,
                });
            }
        }
        if fig
            .series
            .iter()
            .any(|s| s.points.iter().any(|p| p.1.is_finite()))
        {
            let stem = out.join(format!("kappa_vs_depth_{protocol}"));
            fig.save(&stem)?;
            written.push(stem);
        }
    }
    Ok(written)
}

/// Merges finished points into the tables and figures.
///
/// The points must have been made by one sweep config: their recorded configs may differ
/// in the sweep axes ([`AXES`]) only, unless `allow_mixed`. Summaries that record no
/// provenance (older versions) are merged with a warning.
pub fn collect(
    cfg: Option<&SweepConfig>,
    out: &Path,
    title: &str,
    allow_mixed: bool,
) -> Result<Vec<GroupRow>, String> {
    let found = read_summaries_at(out)?;
    if found.is_empty() {
        return Err(format!(
            "{}: no finished ntk-probe points under runs/",
            out.display()
        ));
    }
    let entries: Vec<(PathBuf, Option<&Provenance>)> = found
        .iter()
        .map(|(p, s)| (p.clone(), s.provenance.as_ref()))
        .collect();
    provenance::check_merge(out, &entries, &AXES, allow_mixed)?;
    let rows: Vec<Summary> = found.into_iter().map(|(_, s)| s).collect();
    write_results_csv(&out.join("results.csv"), &rows)?;
    let theory = match cfg {
        Some(c) if c.sweep.theory => Some(theory_values(c, out)?),
        _ => std::fs::read_to_string(out.join("theory.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok()),
    };
    let groups = group(&rows, theory.as_ref());
    write_groups_csv(&out.join("summary.csv"), &groups)?;
    figures(out, &groups, title)?;
    Ok(groups)
}
