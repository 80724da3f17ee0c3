//! `collect`: the finished points of a sweep merged into `results.csv` (every summary, one
//! row per point and protocol), `summary.csv` (means over seeds per protocol, setting,
//! activation and depth, with the infinite-width theory beside them) and the figures.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ntk_core::kernel::Kernel;
use ntk_core::provenance::{self, Provenance};
use ntk_core::spectrum;
use ntk_core::stats::mean_std;
use ntk_data::inputs::{self, Inputs};
use ntk_model::{Activation, ActivationKind};
use serde::{Deserialize, Serialize};

use super::figures::{SeedValue, figures};
use super::{AXES, SweepConfig, read_summaries_at};
use crate::angles;
use crate::run::Summary;
use crate::theory;

fn fmt_opt(v: Option<f64>) -> String {
    v.map_or(String::new(), |v| format!("{v:.10e}"))
}

/// kappa, or `inf` for a singular kernel.
fn fmt_kappa(kappa: Option<f64>, singular: bool) -> String {
    if singular {
        "inf".to_string()
    } else {
        fmt_opt(kappa)
    }
}

/// `a;b;c` with 6 decimals.
fn join(v: &Option<Vec<f64>>) -> String {
    v.as_ref()
        .map(|v| {
            v.iter()
                .map(|x| format!("{x:.6}"))
                .collect::<Vec<_>>()
                .join(";")
        })
        .unwrap_or_default()
}

/// One row of `results.csv`: a summary, every field, as text (lists joined by `;`, a
/// singular kernel's kappa `inf`, values to 10 significant digits, seconds to 0.1 ms).
#[derive(Serialize)]
pub struct ResultRow {
    protocol: String,
    activation: String,
    depth: usize,
    seed: u64,
    width: usize,
    n: usize,
    input_dim: usize,
    kappa: String,
    singular: bool,
    rank: usize,
    eigen: String,
    lambda_min: String,
    lambda_max: String,
    min_grad_angle_deg: String,
    min_grad_angle_i: Option<usize>,
    min_grad_angle_j: Option<usize>,
    gram_kappa: String,
    gram_rank: usize,
    embedding_min_angle_deg: String,
    pair_embedding_angles_deg: String,
    pair_grad_angle_deg: String,
    convention: String,
    parameterization: String,
    data: String,
    precision: String,
    backend: String,
    method: String,
    engine: String,
    output: String,
    block_size: Option<usize>,
    blocks: Option<usize>,
    kernel_seconds: String,
    eigen_seconds: String,
    seconds: String,
}

impl From<&Summary> for ResultRow {
    fn from(s: &Summary) -> Self {
        Self {
            protocol: s.protocol.clone(),
            activation: s.activation.clone(),
            depth: s.depth,
            seed: s.seed,
            width: s.width,
            n: s.n,
            input_dim: s.input_dim,
            kappa: fmt_kappa(s.kappa, s.singular),
            singular: s.singular,
            rank: s.rank,
            eigen: s.eigen.clone(),
            lambda_min: format!("{:.10e}", s.lambda_min),
            lambda_max: format!("{:.10e}", s.lambda_max),
            min_grad_angle_deg: fmt_opt(s.min_grad_angle_deg),
            min_grad_angle_i: s.min_grad_angle_pair.map(|p| p[0]),
            min_grad_angle_j: s.min_grad_angle_pair.map(|p| p[1]),
            gram_kappa: fmt_kappa(s.gram_kappa, s.gram_singular),
            gram_rank: s.gram_rank,
            embedding_min_angle_deg: join(&s.embedding_min_angle_deg),
            pair_embedding_angles_deg: join(&s.pair_embedding_angles_deg),
            pair_grad_angle_deg: fmt_opt(s.pair_grad_angle_deg),
            convention: s.convention.clone(),
            parameterization: s.parameterization.clone(),
            data: s.data.clone(),
            precision: s.precision.clone(),
            backend: s.backend.clone(),
            method: s.method.clone(),
            engine: s.engine.clone(),
            output: s.output.clone(),
            block_size: s.block_size,
            blocks: s.blocks,
            kernel_seconds: format!("{:.4}", s.kernel_seconds),
            eigen_seconds: format!("{:.4}", s.eigen_seconds),
            seconds: format!("{:.4}", s.seconds),
        }
    }
}

/// Writes `results.csv`: one [`ResultRow`] per summary.
pub fn write_results_csv(path: &Path, rows: &[Summary]) -> crate::Result<()> {
    let rows: Vec<ResultRow> = rows.iter().map(ResultRow::from).collect();
    Ok(ntk_core::table::write_csv(path, &rows)?)
}

/// The keys that may tell settings apart: the data set's name (the description's first
/// word; they differ in nothing else unless the merge was --allow-mixed), n, width and
/// convention.
pub(super) fn setting_keys(data: &str, n: usize, width: usize, convention: &str) -> [String; 4] {
    [
        data.split_whitespace()
            .next()
            .unwrap_or_default()
            .to_string(),
        format!("n={n}"),
        format!("width={width}"),
        convention.to_string(),
    ]
}

/// The setting of each row from its [`setting_keys`]: the values of the keys in which the
/// rows differ, `""` when they differ in none.
pub(super) fn settings(keys: &[[String; 4]]) -> Vec<String> {
    let varying: Vec<usize> = (0..4)
        .filter(|&k| keys.iter().any(|r| r[k] != keys[0][k]))
        .collect();
    keys.iter()
        .map(|r| {
            varying
                .iter()
                .map(|&k| r[k].as_str())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// The settings of the summaries ([`settings`]).
fn summary_settings(rows: &[Summary]) -> Vec<String> {
    let keys: Vec<[String; 4]> = rows
        .iter()
        .map(|s| setting_keys(&s.data, s.n, s.width, &s.convention))
        .collect();
    settings(&keys)
}

/// Each summary's values for the seed bands of the figures.
fn seed_values(rows: &[Summary]) -> Vec<SeedValue> {
    rows.iter()
        .zip(summary_settings(rows))
        .map(|(s, setting)| SeedValue {
            protocol: s.protocol.clone(),
            setting,
            activation: s.activation.clone(),
            depth: s.depth,
            kappa: s.kappa.filter(|_| !s.singular),
            min_grad_angle_deg: s.min_grad_angle_deg,
        })
        .collect()
}

/// Means over seeds of one (protocol, setting, activation, depth) group.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GroupRow {
    pub protocol: String,
    /// The values of the optional axes (data, n, width, convention) in which the group
    /// differs from others; absent (no column) for a sweep without them.
    #[serde(skip_serializing_if = "String::is_empty", default)]
    pub setting: String,
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

fn theory_values(cfg: &SweepConfig, out: &Path) -> crate::Result<TheoryCache> {
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
    // The linear network's infinite-width NTK is a positive multiple of the Gram matrix at
    // every depth (its dual is the identity: Sigma_l = G, Theta_L = (L + 1) G in the paper
    // convention), so its kappa and singularity are the Gram matrix's: one eigensolve, not
    // one per depth (each is ~4n^3/3 flops: a minute at n = 10,000 on 2 cores).
    let mut gram_kappa: Option<Option<f64>> = None;
    for &kind in &cfg.sweep.activations {
        let act = Activation::new(kind, cfg.model.kink);
        let closed = matches!(kind, ActivationKind::Relu | ActivationKind::Linear);
        for &depth in &cfg.sweep.depths {
            let key = format!("{}/{}", kind.name(), depth);
            if cache.values.contains_key(&key) {
                continue;
            }
            let phi = theory::grad_angle(&act, theta_min, depth).to_degrees();
            let kappa = if kind == ActivationKind::Linear {
                if gram_kappa.is_none() {
                    let s = spectrum::spectrum(&gram, f64::EPSILON)?;
                    gram_kappa = Some((!s.singular).then_some(s.kappa));
                }
                gram_kappa.flatten()
            } else if closed || inputs.n <= 200 {
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
        ntk_core::io::atomic_write(&path, json.as_bytes()).map_err(|source| {
            ntk_core::Error::Write {
                path: path.clone(),
                source,
            }
        })?;
    }
    Ok(cache)
}

/// Groups the summaries by (protocol, setting, activation, depth).
pub fn group(rows: &[Summary], theory: Option<&TheoryCache>) -> Vec<GroupRow> {
    type Key = (String, String, String, usize);
    let mut groups: BTreeMap<Key, Vec<&Summary>> = BTreeMap::new();
    for (s, setting) in rows.iter().zip(summary_settings(rows)) {
        groups
            .entry((s.protocol.clone(), setting, s.activation.clone(), s.depth))
            .or_default()
            .push(s);
    }
    groups
        .into_iter()
        .map(|((protocol, setting, activation, depth), v)| {
            let base = activation.split('(').next().unwrap_or(&activation);
            let th = theory.and_then(|t| t.values.get(&format!("{base}/{depth}")));
            let mut row = group_row(&v, th);
            // The theory is of the whole-set kernel; blocks have their own (not computed).
            if protocol != "whole" {
                row.theory_kappa = None;
            }
            GroupRow {
                protocol,
                setting,
                activation,
                depth,
                ..row
            }
        })
        .collect()
}

/// The means and spreads of one group's summaries, with its theory values `th`; the keys
/// (protocol, setting, activation, depth) are left empty.
fn group_row(v: &[&Summary], th: Option<&(f64, Option<f64>)>) -> GroupRow {
    let finite: Vec<f64> = v.iter().filter_map(|s| s.kappa).collect();
    let (kappa_mean, kappa_std) = if finite.is_empty() {
        (f64::INFINITY, f64::NAN)
    } else {
        mean_std(&finite)
    };
    let logs: Vec<f64> = finite.iter().map(|k| k.log10()).collect();
    let angles: Vec<f64> = v.iter().filter_map(|s| s.min_grad_angle_deg).collect();
    let (am, asd) = mean_std(&angles);
    let mean_of = |f: fn(&Summary) -> f64| mean_std(&v.iter().map(|s| f(s)).collect::<Vec<_>>()).0;
    GroupRow {
        protocol: String::new(),
        setting: String::new(),
        activation: String::new(),
        depth: 0,
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
        lambda_min_mean: mean_of(|s| s.lambda_min),
        lambda_max_mean: mean_of(|s| s.lambda_max),
        rank_min: v.iter().map(|s| s.rank).min().unwrap_or(0),
        theory_min_grad_angle_deg: th.map(|t| t.0),
        theory_kappa: th.and_then(|t| t.1),
    }
}

/// Merges finished points into the tables and figures.
///
/// The points must have been made by one sweep config: their recorded configs may differ
/// in the sweep axes ([`SweepConfig::axes`]; [`AXES`] without a config) only, unless
/// `allow_mixed`. Summaries that record no
/// provenance (older versions) are merged with a warning.
pub fn collect(
    cfg: Option<&SweepConfig>,
    out: &Path,
    title: &str,
    allow_mixed: bool,
) -> crate::Result<Vec<GroupRow>> {
    let found = read_summaries_at(out)?;
    if found.is_empty() {
        return Err(crate::Error::NoPoints {
            out: out.to_path_buf(),
        });
    }
    let entries: Vec<(PathBuf, Option<&Provenance>)> = found
        .iter()
        .map(|(p, s)| (p.clone(), s.provenance.as_ref()))
        .collect();
    let axes = cfg.map_or_else(|| AXES.to_vec(), SweepConfig::axes);
    provenance::check_merge(out, &entries, &axes, allow_mixed)?;
    let rows: Vec<Summary> = found.into_iter().map(|(_, s)| s).collect();
    write_results_csv(&out.join("results.csv"), &rows)?;
    // The theory is of one input set: not for points on several.
    let one_input_set = rows
        .iter()
        .all(|s| s.data == rows[0].data && s.n == rows[0].n);
    let theory = match cfg {
        _ if !one_input_set => None,
        Some(c) if c.sweep.theory => Some(theory_values(c, out)?),
        _ => std::fs::read_to_string(out.join("theory.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok()),
    };
    let groups = group(&rows, theory.as_ref());
    ntk_core::table::write_csv(&out.join("summary.csv"), &groups)?;
    figures(out, &groups, &seed_values(&rows), title)?;
    Ok(groups)
}
