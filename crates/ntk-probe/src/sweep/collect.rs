//! `collect`: the finished points of a sweep merged into `results.csv` (every summary, one
//! row per point and protocol), `summary.csv` (means over seeds per protocol, setting,
//! activation and depth, with the infinite-width theory beside them) and the figures.

use ntk_names::spelled;
use ntk_plot::Layout;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ntk_data::inputs::{self, Inputs};
use ntk_model::{ActivationKind, MlpConfig, NtkConvention};
use ntk_numerics::kernel::Kernel;
use ntk_runs::provenance::{self, Provenance};
use ntk_runs::stats::{mean_std, standard_error};
use serde::{Deserialize, Serialize};

use super::figures::{SeedValue, figures};
use super::{AXES, SweepConfig, read_summaries_at};
use crate::config::Protocol;
use crate::run::Summary;
use ntk_kernel::theory::{TheoryValue, theory_value};

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
    backend: ntk_numerics::backend::Backend,
    method: String,
    engine: String,
    output: String,
    block_size: Option<usize>,
    blocks: Option<usize>,
    kernel_seconds: String,
    eigen_seconds: String,
    seconds: String,
    /// [`Summary::measured_error`]; last, so that every earlier column keeps its place.
    measured_error: String,
    /// [`Summary::kappa_low`] and [`Summary::kappa_high`] (`inf`: unbounded); empty where
    /// nothing was measured near the bound (eighty-ninth hostile round, D3).
    kappa_low: String,
    kappa_high: String,
}

impl From<&Summary> for ResultRow {
    fn from(s: &Summary) -> Self {
        Self {
            protocol: s.protocol.name().to_string(),
            activation: s.activation.clone(),
            depth: s.depth,
            seed: s.seed,
            width: s.width,
            n: s.n,
            input_dim: s.input_dim,
            kappa: fmt_kappa(s.kappa, s.singular),
            singular: s.singular,
            rank: s.rank,
            eigen: s.eigen.name().to_string(),
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
            precision: s.precision.to_string(),
            backend: s.backend,
            method: spelled(&s.method),
            engine: spelled(&s.engine),
            output: s.output.clone(),
            block_size: s.block_size,
            blocks: s.blocks,
            kernel_seconds: format!("{:.4}", s.kernel_seconds),
            eigen_seconds: format!("{:.4}", s.eigen_seconds),
            seconds: format!("{:.4}", s.seconds),
            measured_error: s
                .measured_error
                .map_or(String::new(), |e| format!("{e:.6e}")),
            kappa_low: fmt_opt(s.kappa_low),
            kappa_high: match s.kappa_low {
                Some(_) => fmt_kappa(s.kappa_high, s.kappa_high.is_none()),
                None => String::new(),
            },
        }
    }
}

/// Writes `results.csv`: one [`ResultRow`] per summary.
pub fn write_results_csv(path: &Path, rows: &[Summary]) -> crate::Result<()> {
    let rows: Vec<ResultRow> = rows.iter().map(ResultRow::from).collect();
    Ok(ntk_files::table::write_csv(path, &rows)?)
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
            protocol: s.protocol.name().to_string(),
            setting,
            activation: s.activation.clone(),
            depth: s.depth,
            kappa: s.kappa.filter(|_| !s.singular),
            min_grad_angle_deg: s.min_grad_angle_deg,
            blocks_of: s.block_size.map(|b| (b, s.n)),
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
    /// The standard error of `kappa_mean` (`kappa_std / sqrt(seeds - singular)`); NaN for
    /// fewer than two non-singular seeds, and when read from a file written before
    /// 2026-11-27, which has no such column.
    #[serde(default = "unknown")]
    pub kappa_se: f64,
    /// The range of kappa over the non-singular seeds (the band the figures shade);
    /// infinite when every seed is singular; NaN when read from a file written before
    /// 2026-11-26, which has no such columns.
    #[serde(default = "unknown")]
    pub kappa_min: f64,
    #[serde(default = "unknown")]
    pub kappa_max: f64,
    pub log10_kappa_mean: f64,
    pub min_grad_angle_mean_deg: f64,
    pub min_grad_angle_std_deg: f64,
    /// The standard error of `min_grad_angle_mean_deg`; NaN as `kappa_se`.
    #[serde(default = "unknown")]
    pub min_grad_angle_se_deg: f64,
    pub lambda_min_mean: f64,
    pub lambda_max_mean: f64,
    pub rank_min: usize,
    pub theory_min_grad_angle_deg: Option<f64>,
    pub theory_kappa: Option<f64>,
    /// Why a theory value is absent (empty when none is, or no theory was asked for).
    #[serde(default)]
    pub theory_note: String,
    /// The interval of `kappa_mean` that the seeds' measured f32 errors allow: the mean over
    /// its non-singular seeds of each seed's [`Summary::kappa_low`] and
    /// [`Summary::kappa_high`] (its own κ where not measured; `inf`: unbounded). Empty where
    /// no seed was measured near the bound, and in files written before 2026-12-04
    /// (eighty-ninth hostile round, D3: such a mean was shown as exact).
    #[serde(default)]
    pub kappa_mean_low: Option<f64>,
    #[serde(default)]
    pub kappa_mean_high: Option<f64>,
}

/// A value an older file does not hold.
fn unknown() -> f64 {
    f64::NAN
}

/// Infinite-width values per (convention, width, activation, depth), cached in
/// `out/theory.json`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TheoryCache {
    /// [`theory_key`] -> the values.
    pub values: BTreeMap<String, TheoryValue>,
    /// The data and model the cache was made for (the inputs' description and digest, the
    /// kink and the settings that the recursion depends on).
    pub data: String,
    /// SHA-256 (hex) of `values` as compact JSON ([`TheoryCache::values_digest`]): a cache
    /// whose values were edited or damaged, or that was written without one, is computed
    /// again, and left out by `collect` without the config (fifty-first hostile round, N2:
    /// a kappa of -5 and an angle of 400 degrees, hand-written, went into `summary.csv`).
    #[serde(default)]
    pub sha256: String,
}

impl TheoryCache {
    /// SHA-256 (hex) of `values` as compact JSON: the same for the values as written and as
    /// read back (`float_roundtrip` keeps every bit; the map is ordered).
    pub fn values_digest(&self) -> String {
        let json = serde_json::to_string(&self.values).expect("serializes");
        ntk_runs::provenance::sha256_hex(json.as_bytes())
    }

    /// Whether `sha256` is the digest of `values`.
    fn sealed(&self) -> bool {
        self.sha256 == self.values_digest()
    }
}

/// `"<convention> width=<m> <activation>/<depth>"`, the convention spelled as the config
/// spells it.
pub fn theory_key(
    convention: NtkConvention,
    width: usize,
    activation: &str,
    depth: usize,
) -> String {
    format!(
        "{} width={width} {activation}/{depth}",
        crate::config::spelled(&convention)
    )
}

/// The networks whose theory a collect of `cfg` computes on `inputs` (the first setting's
/// data): each setting's, activation's and depth's, with the inputs' dimension.
fn theory_models(cfg: &SweepConfig, inputs: &Inputs) -> Vec<(ActivationKind, usize, MlpConfig)> {
    let mut models = Vec::new();
    for setting in cfg.settings() {
        for &kind in &cfg.sweep.activations {
            for &depth in &cfg.sweep.depths {
                let point = super::Point {
                    setting,
                    activation: kind,
                    depth,
                    seed: 0,
                };
                let mut model = cfg
                    .probe_config(&point)
                    .model
                    .expect("a sweep's points are MLPs");
                model.input_dim = inputs.d;
                models.push((kind, depth, model));
            }
        }
    }
    models
}

/// Whether the theory of `cfg` on `inputs` may draw an angle on the angle's figure: some
/// network's may give one ([`ntk_kernel::theory::may_give_angle`]; forty-seventh hostile
/// round, D1: the sweep and collect refused what stood at the figure's name where biases,
/// the standard parameterization, normalization or tanh over 201 inputs of unequal norms
/// give none, and no point measured one).
pub(super) fn theory_may_draw_angle(cfg: &SweepConfig, inputs: &Inputs) -> bool {
    theory_models(cfg, inputs)
        .iter()
        .any(|(_, _, model)| ntk_kernel::theory::may_give_angle(model, inputs))
}

/// The version of the theory a `theory.json` was computed by, first in its `data` stamp: a
/// cache of another version is computed again with `--config` and not used without it
/// ([`theory_beside`]). v2: keyed by convention and width; v3: the theory's angles of round
/// 32, formed from the rows (thirty-third hostile round, D3); v4: ReLU's and leaky ReLU's
/// kernel and angles from each pair's own angle (rounds 47-49), whose older values a v3
/// cache kept (fiftieth hostile round, D2); v5: one rule for a pair's angle
/// (`ntk_kernel::theory::pair_grad_angle_deg`, rounds 106-108: an odd activation's nearly
/// opposite pair from its supplement, null with a note where the rule refuses, proportional
/// rows of different norms answered), whose values a v4 cache kept.
const THEORY_VERSION: &str = "v5";

/// What a `theory.json` was computed for, written first in it as its `data` stamp
/// ([`TheoryFor::stamp`]) and compared whole: the theory's version ([`THEORY_VERSION`]), the
/// inputs (their description and digest), and the network's settings the recursion depends
/// on (the sweep's axes, activation, depth, convention and width, are the cache's keys).
#[derive(Clone, Debug, PartialEq)]
struct TheoryFor<'a> {
    description: &'a str,
    digest: String,
    kink: Option<f64>,
    parameterization: String,
    bias: bool,
    normalization: String,
    activation_param: Option<f64>,
    /// The families the one parameter is for, where the sweep has more than one
    /// ([`parameter_families`]); `None` for one (and for a point).
    shared_by: Option<String>,
}

impl<'a> TheoryFor<'a> {
    /// The settings of `cfg`'s networks on `inputs`, the kink and parameter in the one form the points record them
    /// ([`ntk_model::spec::canonical_recorded`]; sixtieth hostile round, D3: a kink spelled
    /// `model.kink`, or a default given, made the cache another network's), of the sweep's
    /// activation that has a parameter (the one the config's parameter is for).
    fn of_config(cfg: &'a SweepConfig, inputs: &'a Inputs) -> Self {
        let m = &cfg.model;
        let families = parameter_families(cfg);
        Self {
            description: &inputs.description,
            digest: inputs.digest(),
            kink: None,
            parameterization: crate::config::spelled(&m.parameterization),
            bias: m.bias,
            normalization: crate::config::spelled(&m.normalization),
            activation_param: sweep_parameter(cfg),
            shared_by: (families.len() > 1).then(|| {
                let names: Vec<&str> = families.iter().map(|a| a.name()).collect();
                names.join(", ")
            }),
        }
    }

    /// The settings the point `s` records (its provenance's config); `None` where it does not
    /// record them all (an older version's point: its theory cannot be told apart). A kink
    /// or activation parameter it does not record is `None`, as builds before those keys
    /// had neither.
    fn of_point(s: &'a Summary) -> Option<Self> {
        // In the one form of its network, as a point of an earlier build may not be.
        let mut c = s.provenance.as_ref()?.config.clone();
        ntk_model::spec::canonical_recorded(&mut c);
        let number = |key: &str| c.get(key).and_then(|v| v.as_f64());
        Some(Self {
            description: &s.data,
            digest: c.get("data.digest")?.as_str()?.to_string(),
            kink: number("model.kink"),
            parameterization: c.get("model.parameterization")?.as_str()?.to_string(),
            bias: c.get("model.bias")?.as_bool()?,
            normalization: c.get("model.normalization")?.as_str()?.to_string(),
            activation_param: number("model.activation_param"),
            shared_by: None,
        })
    }

    /// `"v5; <description>; sha256 <digest>; kink <kink>; parameterization <p>; bias <b>;
    /// normalization <n>"`, then `"; activation_param <a>"` only where one is given, so that
    /// the caches written before that key existed stay valid, and `"; parameter of <f>, <g>"`
    /// where it is several families' (the stamps of earlier builds left the parameter out
    /// where it was the first family's default, whatever the others', so theirs never
    /// match these).
    fn stamp(&self) -> String {
        let mut param = self
            .activation_param
            .map(|p| format!("; activation_param {p:?}"))
            .unwrap_or_default();
        if let Some(families) = &self.shared_by {
            param.push_str(&format!("; {SHARED_BY}{families}"));
        }
        format!(
            "{THEORY_VERSION}; {}; sha256 {}; kink {:?}; parameterization {}; bias {}; normalization {}{param}",
            self.description,
            self.digest,
            self.kink,
            self.parameterization,
            self.bias,
            self.normalization,
        )
    }
}

/// The part of a stamp that names the families one parameter is for ([`TheoryFor::stamp`]).
const SHARED_BY: &str = "parameter of ";

/// The activation of `cfg`'s networks that the config's kink or parameter is for: the
/// sweep's first activation that has a parameter, else the model's.
pub(super) fn parameter_activation(cfg: &SweepConfig) -> ActivationKind {
    parameter_families(cfg)
        .first()
        .copied()
        .unwrap_or(cfg.model.activation)
}

/// The sweep's activations that have a parameter, in the axis' order: the config's one
/// parameter is each one's.
fn parameter_families(cfg: &SweepConfig) -> Vec<ActivationKind> {
    let mut families: Vec<ActivationKind> = Vec::new();
    for &a in &cfg.sweep.activations {
        if a.param().is_some() && !families.contains(&a) {
            families.push(a);
        }
    }
    families
}

/// The config's activation parameter (its kink folded in), left out only where it is the
/// default of every family it is for ([`parameter_families`]; the model's activation where
/// the sweep has none): a LeakyReLU's default slope of 0.01 is not NormReLU's default kink,
/// so beside NormReLU it is kept (sixty-third hostile round, D1: it was judged against the
/// first family alone, and NormReLU at b = 0.01 and at its default shared one theory cache).
pub(super) fn sweep_parameter(cfg: &SweepConfig) -> Option<f64> {
    let m = &cfg.model;
    let families = parameter_families(cfg);
    let families = if families.is_empty() {
        vec![m.activation]
    } else {
        families
    };
    families
        .into_iter()
        .find_map(|a| one_form(a, m.kink, m.activation_param).1)
}

/// The kink and activation parameter of an `activation` network in the one form the points
/// record them ([`ntk_model::spec::canonical_recorded`]): the kink folded into the parameter,
/// a family's default left out.
fn one_form(
    activation: ActivationKind,
    kink: Option<f64>,
    activation_param: Option<f64>,
) -> (Option<f64>, Option<f64>) {
    let mut flat = provenance::FlatConfig::from([
        ("model.activation".to_string(), activation.name().into()),
        ("model.kink".to_string(), kink.into()),
    ]);
    if let Some(p) = activation_param {
        flat.insert("model.activation_param".into(), p.into());
    }
    ntk_model::spec::canonical_recorded(&mut flat);
    let number = |key: &str| flat.get(key).and_then(|v| v.as_f64());
    (number("model.kink"), number("model.activation_param"))
}

/// A `theory.json`'s `data` stamp ([`TheoryFor::stamp`]) with its kink and activation
/// parameter read back and put in the one form of an `activation` network ([`one_form`]),
/// as the points' records are read (sixty-first hostile round, D1: a cache written by an
/// earlier build, `kink Some(-1.5)`, was compared as written and set aside as another
/// network's). `None` for a stamp that does not parse.
fn stamp_in_one_form(stamp: &str, activation: ActivationKind) -> Option<String> {
    let (head, tail) = stamp.split_at(stamp.rfind("; kink ")?);
    let (mut kink, mut param, mut rest) = (None, None, Vec::new());
    for part in tail.trim_start_matches("; ").split("; ") {
        if let Some(k) = part.strip_prefix("kink ") {
            kink = match k {
                "None" => None,
                k => Some(k.strip_prefix("Some(")?.strip_suffix(')')?.parse().ok()?),
            };
        } else if let Some(p) = part.strip_prefix("activation_param ") {
            param = Some(p.parse().ok()?);
        } else if part.starts_with(SHARED_BY) {
            // Read for one family: the point's.
        } else {
            rest.push(part);
        }
    }
    let (kink, param) = one_form(activation, kink, param);
    let param = param
        .map(|p| format!("; activation_param {p:?}"))
        .unwrap_or_default();
    Some(format!("{head}; kink {kink:?}; {}{param}", rest.join("; ")))
}

/// A [`TheoryFor::stamp`] without the activation's parameter (its kink, `activation_param`
/// and families parts).
fn without_parameter(stamp: &str) -> String {
    stamp
        .split("; ")
        .filter(|part| {
            !part.starts_with("kink ")
                && !part.starts_with("activation_param ")
                && !part.starts_with(SHARED_BY)
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Why a network of `kind` at `depth` under `convention` has no infinite-width theory at all
/// ([`ntk_kernel::theory::NotCovered::NoLimit`]: the `official` convention with an activation
/// that is not positively homogeneous), or `None`. A `theory.json` of an earlier build may
/// hold such a network's width-m recursion: [`theory_values`] forms it again and [`group`]
/// does not use it (seventy-third hostile round, D1).
fn no_limit(convention: NtkConvention, kind: ActivationKind, depth: usize) -> Option<String> {
    let model = MlpConfig::new(1, 1, depth, kind).with_convention(convention);
    match ntk_kernel::theory::Scaling::of(&model) {
        Err(why @ ntk_kernel::theory::NotCovered::NoLimit(_)) => Some(why.to_string()),
        _ => None,
    }
}

fn theory_values(cfg: &SweepConfig, out: &Path, inputs: &Inputs) -> crate::Result<TheoryCache> {
    let path = out.join("theory.json");
    // The cache holds for this version of the theory, these inputs and these networks
    // ([`TheoryFor`]); one of an earlier build is read in the one form, as
    // [`theory_beside`] reads it, and written again in this build's stamp.
    let made_for = TheoryFor::of_config(cfg, inputs).stamp();
    let activation = parameter_activation(cfg);
    let mut cache: TheoryCache = ntk_files::io::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .filter(|c: &TheoryCache| {
            c.sealed()
                && (c.data == made_for
                    || stamp_in_one_form(&c.data, activation).as_ref() == Some(&made_for))
        })
        .unwrap_or_default();
    let mut changed = cache.data != made_for && !cache.values.is_empty();
    cache.data = made_for;
    let gram = Kernel::gram(&inputs.x, inputs.n, inputs.d);
    let mut gram_kappa: Option<Option<f64>> = None;
    for (kind, depth, model) in theory_models(cfg, inputs) {
        let key = theory_key(model.convention, model.width, kind.name(), depth);
        // A value a build before the seventy-third hostile round kept for a network with no
        // infinite-width limit (its width-m recursion) is not the theory: formed again, to
        // nothing but the note.
        let stale = no_limit(model.convention, kind, depth).is_some()
            && cache
                .values
                .get(&key)
                .is_some_and(|v| v.kappa.is_some() || v.min_grad_angle_deg.is_some());
        if cache.values.contains_key(&key) && !stale {
            continue;
        }
        // The quadrature of a smooth activation takes minutes at a few hundred inputs: a
        // line per value, so that a log shows where it is.
        let start = std::time::Instant::now();
        let value = theory_value(&model, inputs, &gram, &mut gram_kappa)?;
        eprintln!(
            "theory: {} depth {depth}: {:.1} s",
            kind.name(),
            start.elapsed().as_secs_f64()
        );
        cache.values.insert(key, value);
        changed = true;
    }
    if changed {
        cache.sha256 = cache.values_digest();
        let json = serde_json::to_string_pretty(&cache).expect("serializes");
        ntk_files::io::atomic_write(&path, json.as_bytes()).map_err(|source| {
            ntk_files::Error::Write {
                path: path.clone(),
                source,
            }
        })?;
    }
    Ok(cache)
}

/// Groups the summaries by (protocol, setting, activation, depth), with the theory of each
/// group's convention and width (or `absent`: why there is none).
pub fn group(rows: &[Summary], theory: Result<&TheoryCache, &str>) -> Vec<GroupRow> {
    type Key = (String, String, String, usize);
    let mut groups: BTreeMap<Key, Vec<&Summary>> = BTreeMap::new();
    for (s, setting) in rows.iter().zip(summary_settings(rows)) {
        groups
            .entry((
                s.protocol.name().to_string(),
                setting,
                s.activation.clone(),
                s.depth,
            ))
            .or_default()
            .push(s);
    }
    groups
        .into_iter()
        .map(|((protocol, setting, activation, depth), v)| {
            let base = activation.split('(').next().unwrap_or(&activation);
            let limitless = crate::config::parse_convention(&v[0].convention)
                .zip(ActivationKind::parse(base))
                .and_then(|(c, k)| no_limit(c, k, depth));
            let th = match (theory, limitless) {
                (_, Some(note)) => TheoryValue {
                    note,
                    ..TheoryValue::default()
                },
                (Ok(t), None) => match crate::config::parse_convention(&v[0].convention) {
                    Some(c) => t
                        .values
                        .get(&theory_key(c, v[0].width, base, depth))
                        .cloned()
                        .unwrap_or_else(|| TheoryValue {
                            note: "no theory value recorded for this setting".into(),
                            ..TheoryValue::default()
                        }),
                    None => TheoryValue {
                        note: format!("unknown convention {:?}", v[0].convention),
                        ..TheoryValue::default()
                    },
                },
                (Err(why), None) => TheoryValue {
                    note: why.to_string(),
                    ..TheoryValue::default()
                },
            };
            let mut row = group_row(&v, &th);
            // The theory is of the whole-set kernel; blocks have their own (not computed).
            if protocol != "whole" && row.theory_kappa.take().is_some() {
                let why = "theory kappa is of the whole-set kernel, not of blocks";
                row.theory_note = match row.theory_note.as_str() {
                    "" => why.to_string(),
                    note => format!("{note}; {why}"),
                };
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
fn group_row(v: &[&Summary], th: &TheoryValue) -> GroupRow {
    let finite: Vec<f64> = v.iter().filter_map(|s| s.kappa).collect();
    let (kappa_mean, kappa_std) = if finite.is_empty() {
        (f64::INFINITY, f64::NAN)
    } else {
        mean_std(&finite)
    };
    let (kappa_min, kappa_max) = finite
        .iter()
        .fold(None, |r: Option<(f64, f64)>, &k| {
            Some(r.map_or((k, k), |(lo, hi)| (lo.min(k), hi.max(k))))
        })
        .unwrap_or((f64::INFINITY, f64::INFINITY));
    let (kappa_mean_low, kappa_mean_high) = mean_interval(v);
    let logs: Vec<f64> = finite.iter().map(|k| k.log10()).collect();
    // A seed whose smallest angle the kernel does not resolve has one below its
    // resolution: a mean over the others would be biased up, so there is none
    // (hundred-and-thirty-seventh hostile round, D1: 0.0 was averaged in).
    let angles: Vec<f64> = match v.iter().any(|s| s.min_grad_angle_unresolved.is_some()) {
        true => vec![],
        false => v.iter().filter_map(|s| s.min_grad_angle_deg).collect(),
    };
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
        kappa_se: standard_error(&finite).unwrap_or(f64::NAN),
        kappa_min,
        kappa_max,
        log10_kappa_mean: if logs.is_empty() {
            f64::INFINITY
        } else {
            mean_std(&logs).0
        },
        min_grad_angle_mean_deg: am,
        min_grad_angle_std_deg: asd,
        min_grad_angle_se_deg: standard_error(&angles).unwrap_or(f64::NAN),
        lambda_min_mean: mean_of(|s| s.lambda_min),
        lambda_max_mean: mean_of(|s| s.lambda_max),
        rank_min: v.iter().map(|s| s.rank).min().unwrap_or(0),
        theory_min_grad_angle_deg: th.min_grad_angle_deg,
        theory_kappa: th.kappa,
        theory_note: th.note.clone(),
        kappa_mean_low,
        kappa_mean_high,
    }
}

/// Where a summary of an f32 kernel resolved near its bound records no interval of κ
/// ([`Summary::kappa_low`]) though its measured error or its note gives one (a summary an
/// older build wrote, or one edited): the tables take its κ as exact, which is said (round
/// 91, N1: such a seed narrowed `kappa_mean_low`..`kappa_mean_high` with no word).
fn interval_unrecorded(path: &Path, s: &Summary) -> Option<String> {
    let noted = s.note.as_deref().is_some_and(|n| n.contains("(Weyl"));
    (s.kappa.is_some() && s.kappa_low.is_none() && (s.measured_error.is_some() || noted)).then(
        || {
            // Its config is this one: `--recompute` keeps it (ninety-second hostile round,
            // D1: that was the advice). Its directory removed, the sweep makes it again.
            format!(
                "records no interval of kappa (kappa_low, kappa_high), though its measured \
                 error or its note gives one (an older build's summary): the tables take its \
                 kappa as exact; remove {} and run the sweep again to record the interval",
                path.parent().unwrap_or(path).display()
            )
        },
    )
}

/// [`GroupRow::kappa_mean_low`] and [`GroupRow::kappa_mean_high`] of the summaries `v`.
fn mean_interval(v: &[&Summary]) -> (Option<f64>, Option<f64>) {
    let finite: Vec<&&Summary> = v.iter().filter(|s| s.kappa.is_some()).collect();
    if finite.is_empty() || finite.iter().all(|s| s.kappa_low.is_none()) {
        return (None, None);
    }
    let c = finite.len() as f64;
    let (mut low, mut high) = (0.0, 0.0);
    for s in finite {
        let kappa = s.kappa.unwrap_or(f64::INFINITY);
        low += s.kappa_low.unwrap_or(kappa);
        high += match s.kappa_low {
            Some(_) => s.kappa_high.unwrap_or(f64::INFINITY),
            None => kappa,
        };
    }
    (Some(low / c), Some(high / c))
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
    title: Option<&str>,
    allow_mixed: bool,
) -> crate::Result<Vec<GroupRow>> {
    collect_as(cfg, out, title, allow_mixed, Layout::Screen).map(|(groups, _)| groups)
}

/// Refuses `ntk-train`'s output ([`crate::Error::TrainingRuns`]): a run's `metrics.csv` in
/// `out` or in a directory of `out/runs`, which no probe point writes.
///
/// A `runs/` that also holds other entries (a probe sweep's activations, say) is said to mix
/// the two tools' output, which neither collect takes: the advice is to move the training
/// runs out, not to run `ntk-train collect` there (tenth hostile round: it wrote training
/// tables into the probe sweep's directory, warning of every probe point).
pub(super) fn refuse_training_runs(out: &Path) -> crate::Result<()> {
    let (found, beside_points) = if out.join("metrics.csv").is_file() {
        (Some("metrics.csv".to_string()), false)
    } else {
        let entries: Vec<std::fs::DirEntry> = std::fs::read_dir(out.join("runs"))
            .into_iter()
            .flatten()
            .flatten()
            .collect();
        let is_run = |e: &std::fs::DirEntry| e.path().join("metrics.csv").is_file();
        (
            entries
                .iter()
                .find(|e| is_run(e))
                .map(|e| format!("runs/{}/metrics.csv", e.file_name().to_string_lossy())),
            // A run killed before its first epoch has its config.toml, no metrics.csv yet.
            entries
                .iter()
                .any(|e| e.path().is_dir() && !is_run(e) && !e.path().join("config.toml").exists()),
        )
    };
    match found {
        Some(found) => Err(crate::Error::TrainingRuns {
            out: out.to_path_buf(),
            found,
            beside_points,
        }),
        None => Ok(()),
    }
}

/// Whether the points `rows` are on one input set: the theory is of one (it is left out
/// for points on several).
fn one_input_set(rows: &[&Summary]) -> bool {
    rows.iter()
        .all(|s| s.data == rows[0].data && s.n == rows[0].n)
}

/// Whether a collect of the points `rows` computes (or reads) the theory
/// ([`theory_rule`] of what they record).
fn theory_applies(rows: &[&Summary]) -> bool {
    let blocks_only = rows.iter().all(|s| s.protocol == Protocol::Blocks);
    theory_rule(one_input_set(rows), blocks_only, rows.first().map(|s| s.n))
}

/// The theory's rule, for collect (from the points found) and the sweep (from its config,
/// before any work) alike: points on one input set (`one_set`), and not blocks alone
/// (`blocks_only`) over more than [`crate::run::PER_BLOCK_ROWS`] rows (`n`), whose whole-set
/// theory would need its n x n kernel (a blocks protocol reports no theory: see `group`).
pub(super) fn theory_rule(one_set: bool, blocks_only: bool, n: Option<usize>) -> bool {
    let too_large = n.is_some_and(|n| n > crate::run::PER_BLOCK_ROWS);
    one_set && !(blocks_only && too_large)
}

/// Whether the `summary.csv` standing in `out` (an earlier collect's) has a theory value or
/// note in some row: the sweep asked for the theory.
fn had_theory(out: &Path) -> bool {
    ntk_files::table::read_csv::<GroupRow>(&out.join("summary.csv")).is_ok_and(|rows| {
        rows.iter().any(|r| {
            r.theory_kappa.is_some()
                || r.theory_min_grad_angle_deg.is_some()
                || !r.theory_note.is_empty()
        })
    })
}

/// Without the config, the `theory.json` beside the points in `out`, used only where it was
/// computed by this version of the theory ([`THEORY_VERSION`]) for the inputs and the
/// network settings every point of `points` records ([`TheoryFor::of_point`]): points
/// recomputed on other data must not be set beside the old data's theory, nor an older
/// build's values beside the points (fiftieth hostile round, D2), nor the theory of another
/// activation parameter, biases, parameterization or normalization (fifty-first, D1: alpha
/// 0.5's kappa beside points recomputed at alpha -0.5 with `sweep.theory = false`).
fn theory_beside(out: &Path, points: &[&Summary]) -> Result<TheoryCache, &'static str> {
    // No file: no theory was asked for. A file that is not a cache says so (eighty-third
    // hostile round, D2: `{}`, junk or a truncated cache left the cells empty with no note,
    // as if no theory had been asked for).
    const NOT_A_CACHE: &str = "theory.json is not a theory cache (damaged, cut short, or \
                               not the tools'); pass --config to compute it again";
    let text = match ntk_files::io::read_to_string(out.join("theory.json")) {
        Ok(text) => text,
        // Gone since a collect drew the theory from it: said, in the tables this collect
        // writes too, so that the next collect says it again (eighty-eighth hostile round,
        // N5: the cells emptied as for a sweep that asked no theory).
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && had_theory(out) => {
            return Err(
                "theory.json is missing, where the sweep's tables had its theory: removed \
                 since; pass --config to compute it again",
            );
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(""),
        Err(e) if e.kind() == std::io::ErrorKind::InvalidData => return Err(NOT_A_CACHE),
        Err(_) => {
            return Err(
                "theory.json cannot be read (permissions, or not a regular file); pass \
                 --config to compute it again",
            );
        }
    };
    let Ok(cache) = serde_json::from_str::<TheoryCache>(&text) else {
        return Err(NOT_A_CACHE);
    };
    if !cache.data.starts_with(&format!("{THEORY_VERSION}; ")) {
        return Err(
            "theory.json was computed by an older build of the theory; pass --config to \
             compute it again",
        );
    }
    if !cache.sealed() {
        return Err(
            "theory.json does not match its checksum (edited, damaged, or written by a build \
             without one); pass --config to compute it again",
        );
    }
    let made_for: Vec<Option<TheoryFor>> = points.iter().map(|s| TheoryFor::of_point(s)).collect();
    if made_for.iter().any(|f| {
        f.as_ref()
            .is_none_or(|f| !cache.data.contains(&format!("sha256 {};", f.digest)))
    }) {
        return Err(
            "theory.json was computed for other inputs than these points'; pass --config to \
             compute it again",
        );
    }
    // The cache's stamp is read in the one form of the point's network, as the point is. A
    // point whose activation has no parameter records none, where the sweep's config (and
    // so the cache) has the parameter of its other activations: its settings are the
    // cache's but for that parameter (sixtieth hostile round, D3: ReLU beside NormReLU at a
    // kink of its own emptied every theory cell).
    let activation = |s: &Summary| {
        s.provenance
            .as_ref()
            .and_then(|p| p.config.get("model.activation"))
            .and_then(|v| v.as_str())
            .and_then(ActivationKind::parse)
    };
    let mismatch = points.iter().zip(&made_for).any(|(s, f)| {
        f.as_ref().is_some_and(|f| match activation(s) {
            Some(k) if k.param().is_none() => {
                without_parameter(&f.stamp()) != without_parameter(&cache.data)
            }
            Some(k) => stamp_in_one_form(&cache.data, k).is_none_or(|c| f.stamp() != c),
            None => f.stamp() != cache.data,
        })
    });
    if mismatch {
        return Err(
            "theory.json was computed for other network settings than these points' (the \
             kink or activation parameter, biases, parameterization or normalization); pass \
             --config to compute it again",
        );
    }
    Ok(cache)
}

/// [`collect`] with the figures in `layout`, and what it drew.
pub fn collect_as(
    cfg: Option<&SweepConfig>,
    out: &Path,
    title: Option<&str>,
    allow_mixed: bool,
    layout: Layout,
) -> crate::Result<(Vec<GroupRow>, super::figures::Drawn)> {
    ntk_runs::sweep::refuse_linked_runs(out)?;
    refuse_training_runs(out)?;
    let found = read_summaries_at(out)?;
    // The places this collect writes, before the first write: the tables; theory.json only
    // where the config asks for the theory and it is computed (forty-fourth hostile round,
    // D1: otherwise it is only read; forty-sixth, D1: not for points on several input sets
    // or blocks alone over a large set); the figures of the protocols its points ran
    // (forty-fifth, D1), the angle's only where an angle was measured or the theory may draw
    // one (forty-sixth, D1: the theory computed from the config, by its own rules, or read
    // from theory.json made for these points' inputs; forty-seventh, D1). Then a dead
    // writer's leftovers of the sweep's own files (a killed collect's figure,
    // `kappa_vs_depth.png.ntk-tmp-PID.png`; round 27's N1).
    let summaries: Vec<&Summary> = found.iter().map(|(_, s)| s).collect();
    let one_set = one_input_set(&summaries);
    let theory_of_one_set = theory_applies(&summaries);
    let writes_theory = theory_of_one_set && cfg.is_some_and(|c| c.sweep.theory);
    // The theory's inputs (the config's first setting's data), read once, where it is
    // computed; without the config, theory.json where it was made for these points' inputs.
    let theory_inputs = match cfg {
        Some(c) if writes_theory && !summaries.is_empty() => {
            Some(inputs::load(&c.data_config(&c.settings()[0]))?)
        }
        _ => None,
    };
    let mut theory_read = (theory_of_one_set && cfg.is_none() && !summaries.is_empty())
        .then(|| theory_beside(out, &summaries));
    let theory_angles = match (cfg, &theory_inputs, &theory_read) {
        (Some(c), Some(inputs), _) => theory_may_draw_angle(c, inputs),
        (None, _, Some(Ok(cache))) => cache
            .values
            .values()
            .any(|v| v.min_grad_angle_deg.is_some_and(f64::is_finite)),
        _ => false,
    };
    let angles = theory_angles
        || summaries
            .iter()
            .any(|s| s.min_grad_angle_deg.is_some_and(f64::is_finite));
    let mut protocols: Vec<&str> = summaries.iter().map(|s| s.protocol.name()).collect();
    protocols.sort_unstable();
    protocols.dedup();
    ntk_files::places::check_replaced_in(out, &|n: &str| {
        super::writes_file_of(n, &protocols, writes_theory, angles)
    })?;
    ntk_files::outset::clean_dir(out, None, &super::writes_file);
    super::say_stale_figures(out, out, &|n: &str| {
        super::writes_file_of(n, &protocols, writes_theory, angles)
    });
    for (dir, why) in super::failures(out) {
        eprintln!(
            "warning: {}: failed: {}",
            dir.display(),
            ntk_runs::quote::message_escaped(&why)
        );
    }
    ntk_runs::sweep::warn_unreadable(&out.join("runs"), "summary.json");
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
    provenance::check_merge(out, &entries, &axes, allow_mixed, crate::run::ONE_FORM).map_err(
        |e| {
            let mixed = matches!(&e, ntk_runs::Error::At { source, .. }
            if matches!(**source, ntk_runs::Error::MixedConfigs { .. }));
            if mixed && cfg.is_none() {
                crate::Error::CollectWithoutConfig(Box::new(e))
            } else {
                e.into()
            }
        },
    )?;
    for (path, s) in &found {
        if let Some(why) = interval_unrecorded(path, s) {
            eprintln!("warning: {}: {why}", path.display());
        }
    }
    let rows: Vec<Summary> = found.into_iter().map(|(_, s)| s).collect();
    // Each distinct warning once, with how many points it concerns.
    let mut warnings: BTreeMap<&str, usize> = BTreeMap::new();
    for w in rows.iter().flat_map(|s| &s.warnings) {
        *warnings.entry(w).or_default() += 1;
    }
    for (w, count) in warnings {
        eprintln!("warning ({count} of {} results): {w}", rows.len());
    }
    write_results_csv(&out.join("results.csv"), &rows)?;
    // theory.json is this collect's where it computes (or keeps) the theory of its config.
    let mut theory_kept = false;
    let theory: Result<TheoryCache, &str> = match (cfg, theory_inputs) {
        _ if !one_set => Err("the theory is of one input set; these points are on several"),
        _ if !theory_of_one_set => {
            Err("the whole set's theory is not computed for blocks alone over this many inputs")
        }
        (Some(c), Some(inputs)) => {
            theory_kept = true;
            Ok(theory_values(c, out, &inputs)?)
        }
        (Some(_), None) => Err(""),
        (None, _) => theory_read.take().unwrap_or(Err("")),
    };
    let groups = group(&rows, theory.as_ref().map_err(|e| *e));
    ntk_files::table::write_csv(&out.join("summary.csv"), &groups)?;
    // The data sets as the points record them (their inputs' descriptions, every point's:
    // a sweep over `sweep.ns` or `sweep.datasets` has several; sixty-eighth hostile round,
    // D1).
    let data = ntk_data::inputs::title_of_all(rows.iter().map(|r| r.data.as_str()));
    let titles = super::figures::Titles {
        data: &data,
        given: title,
    };
    let drawn = figures((out, out), &groups, &seed_values(&rows), titles, layout).map_err(|e| {
        crate::Error::FiguresFailed {
            out: out.to_path_buf(),
            source: Box::new(e),
        }
    })?;
    // What this collect wrote, so that a later one removes what it no longer writes
    // (eighty-eighth hostile round, D5); an earlier caption beside a figure drawn without
    // one, as the record proves it (eighty-ninth, D5).
    ntk_runs::sweep::settle_captions(out, &drawn.uncaptioned);
    ntk_runs::sweep::record_reports(out, &|name: &str| {
        ["results.csv", "summary.csv"].contains(&name)
            || (name == "theory.json" && theory_kept)
            || drawn.wrote(name)
    });
    Ok((groups, drawn))
}
