//! Sweeps: the Cartesian product of a config's `[sweep]` axes, one run directory per point
//! (`OUT/runs/<id>/`), shards for job arrays (`--shard i/N` runs points `p mod N = i`),
//! finished runs skipped, diverged runs recorded and passed over.
//!
//! A run counts as finished only when its summary records the fingerprint of the config
//! about to run it (`ntk_core::provenance`); a run made by another config is an error
//! naming the keys that differ, or, with `recompute`, is trained again from scratch.

use std::path::{Path, PathBuf};

use ntk_core::backend::Compute;
use ntk_core::provenance::{self, Provenance};
pub use ntk_core::sweep::Shard;
use ntk_model::{ActivationKind, Normalization};

use crate::config::TrainConfig;
use crate::progress::Reporter;
use crate::train::{self, Data, RunOptions, TrainSummary};

/// One run of a sweep.
#[derive(Clone, Debug)]
pub struct RunPoint {
    /// Directory name under `OUT/runs` (empty for a config without `[sweep]`).
    pub id: String,
    pub cfg: TrainConfig,
}

impl RunPoint {
    pub fn dir(&self, out: &Path) -> PathBuf {
        if self.id.is_empty() {
            out.to_path_buf()
        } else {
            out.join("runs").join(&self.id)
        }
    }
}

/// `0.01 -> "1e-2"`, `0.5 -> "5e-1"`: learning rates in directory names.
pub fn lr_tag(lr: f64) -> String {
    format!("{lr:e}")
}

/// The points of a config: one per element of the product of its sweep axes (empty axes
/// keep the base value), or the config itself without `[sweep]`.
pub fn expand(cfg: &TrainConfig) -> Result<Vec<RunPoint>, String> {
    let axes = match &cfg.sweep {
        Some(a) if !a.is_empty() => a.clone(),
        _ => {
            return Ok(vec![RunPoint {
                id: String::new(),
                cfg: cfg.clone(),
            }]);
        }
    };
    let base = cfg.spec()?;
    let or = |v: &[usize], d: usize| if v.is_empty() { vec![d] } else { v.to_vec() };
    let depths = or(&axes.depths, base.depth());
    // (activation, normalization) pairs: the families, or the product of the two axes.
    let pairs: Vec<(Option<ActivationKind>, Option<Normalization>)> = if axes.families.is_empty() {
        let acts: Vec<Option<ActivationKind>> = if axes.activations.is_empty() {
            vec![None]
        } else {
            axes.activations.iter().copied().map(Some).collect()
        };
        let norms: Vec<Option<Normalization>> = if axes.normalizations.is_empty() {
            vec![None]
        } else {
            axes.normalizations.iter().copied().map(Some).collect()
        };
        acts.iter()
            .flat_map(|&a| norms.iter().map(move |&n| (a, n)))
            .collect()
    } else {
        axes.families
            .iter()
            .map(|f| (Some(f.activation), Some(f.normalization)))
            .collect()
    };
    let variants = if axes.variants.is_empty() {
        vec![None]
    } else {
        axes.variants.iter().copied().map(Some).collect()
    };
    let lrs = if axes.lrs.is_empty() {
        vec![cfg.optim.lr]
    } else {
        axes.lrs.clone()
    };
    let seeds = if axes.seeds.is_empty() {
        vec![base.seed()]
    } else {
        axes.seeds.clone()
    };
    let total = [
        depths.len(),
        pairs.len(),
        variants.len(),
        lrs.len(),
        seeds.len(),
    ]
    .iter()
    .map(|&k| k as u128)
    .product::<u128>();
    if total > ntk_core::sweep::MAX_POINTS as u128 {
        return Err(format!(
            "sweep: {total} runs (the product of its axes); at most {} in one sweep",
            ntk_core::sweep::MAX_POINTS
        ));
    }
    let mut points = Vec::new();
    for &depth in &depths {
        for &(act, norm) in &pairs {
            for &variant in &variants {
                for &lr in &lrs {
                    for &seed in &seeds {
                        let mut spec = base.clone().with_depth(depth).with_seed(seed);
                        if let Some(a) = act {
                            spec = spec.with_activation(a)?;
                        }
                        if let Some(n) = norm {
                            spec = spec.with_normalization(n)?;
                        }
                        if let Some(v) = variant {
                            spec = spec.with_variant(v)?;
                        }
                        let mut c = cfg.clone();
                        c.set_spec(&spec);
                        c.optim.lr = lr;
                        c.sweep = None;
                        let id = format!(
                            "depth{depth:03}_{}_{}_lr{}_seed{seed}",
                            spec.activation_name(),
                            spec.normalization_name(),
                            lr_tag(lr)
                        );
                        c.validate().map_err(|e| format!("sweep point {id}: {e}"))?;
                        points.push(RunPoint { id, cfg: c });
                    }
                }
            }
        }
    }
    Ok(points)
}

/// What a sweep did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SweepOutcome {
    pub ran: usize,
    pub skipped: usize,
    pub diverged: usize,
    /// Points this process stopped early on purpose (`stop_after`).
    pub interrupted: usize,
}

/// The keys in which the runs of one sweep differ: `collect` requires the rest of the
/// recorded configs to agree (`ntk_core::provenance::check_one_base`).
pub const AXES: [&str; 8] = [
    "model.depth",
    "resnet.depth",
    "model.activation",
    "model.normalization",
    "resnet.variant",
    "optim.lr",
    "model.seed",
    "resnet.seed",
];

/// A run's summary, if it has one; an error naming the file when it cannot be read.
pub fn read_summary(dir: &Path) -> Result<Option<TrainSummary>, String> {
    provenance::read_json(&dir.join("summary.json"), "a training summary")
}

/// A finished (or diverged) run's summary; `None` when there is none or it is unreadable.
pub fn finished_summary(dir: &Path) -> Option<TrainSummary> {
    read_summary(dir).ok().flatten()
}

/// A run directory's state for a config whose provenance is `now`.
#[derive(Clone, Debug, PartialEq)]
pub enum RunState {
    /// No summary (new, or interrupted: its checkpoint is checked when it resumes).
    Open,
    /// Finished or diverged, by this config.
    Done,
    /// Made by another config, or an unreadable summary: why.
    Stale(String),
}

/// The state of the run in `dir` for the config with provenance `now`.
pub fn run_state(dir: &Path, now: &Provenance) -> RunState {
    match read_summary(dir) {
        Ok(None) => RunState::Open,
        Ok(Some(s)) => {
            match provenance::check_reuse(&dir.join("summary.json"), s.provenance.as_ref(), now) {
                Ok(()) => RunState::Done,
                Err(e) => RunState::Stale(e.to_string()),
            }
        }
        Err(e) => RunState::Stale(format!("{e}; pass --recompute to train the run again")),
    }
}

/// Removes a stale run's files so that it trains again from scratch.
fn clear_run(dir: &Path) -> Result<(), String> {
    for name in train::RUN_FILES {
        let p = dir.join(name);
        let r = if p.is_dir() {
            std::fs::remove_dir_all(&p)
        } else {
            std::fs::remove_file(&p)
        };
        match r {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(format!("{}: cannot remove: {e}", p.display()));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Every point of `cfg` with its provenance and state in `out`.
pub fn states(
    cfg: &TrainConfig,
    out: &Path,
    data: &Data,
    compute: &Compute,
) -> Result<Vec<(RunPoint, RunState)>, String> {
    Ok(expand(cfg)?
        .into_iter()
        .map(|point| {
            let prov = train::run_provenance(&point.cfg, data, compute);
            let state = run_state(&point.dir(out), &prov);
            (point, state)
        })
        .collect())
}

/// Runs this shard's points in `out`, skipping finished ones; a diverged run is recorded
/// and the sweep goes on.
/// How a sweep runs.
#[derive(Clone, Copy, Debug, Default)]
pub struct SweepOptions {
    /// How each run starts (resume, stop early).
    pub run: RunOptions,
    /// Train again the runs made by another config instead of refusing them.
    pub recompute: bool,
}

pub fn run(
    cfg: &TrainConfig,
    out: &Path,
    shard: Shard,
    compute: &Compute,
    opts: SweepOptions,
    reporter: &Reporter,
) -> Result<SweepOutcome, String> {
    let data = train::load_data(&cfg.data, cfg.train.test_n)?;
    let mine: Vec<(RunPoint, RunState)> = states(cfg, out, &data, compute)?
        .into_iter()
        .enumerate()
        .filter(|(p, _)| shard.owns(*p))
        .map(|(_, r)| r)
        .collect();
    // Nothing is trained while a run made by another config is in the way.
    let stale: Vec<&String> = mine
        .iter()
        .filter_map(|(_, s)| match s {
            RunState::Stale(why) => Some(why),
            _ => None,
        })
        .collect();
    provenance::refuse_stale(&stale, opts.recompute, "run")?;
    let bar = reporter.bar(mine.len() as u64, "runs".into());
    let mut outcome = SweepOutcome::default();
    for (point, state) in &mine {
        let dir = point.dir(out);
        match state {
            RunState::Done => {
                outcome.skipped += 1;
                bar.inc(1);
                continue;
            }
            RunState::Stale(_) => clear_run(&dir)?,
            RunState::Open => {}
        }
        bar.set_message(point.id.clone());
        let s = train::train(&point.cfg, &data, compute, &dir, opts.run, reporter)?;
        match s.status.as_str() {
            "diverged" => outcome.diverged += 1,
            "interrupted" => outcome.interrupted += 1,
            _ => {}
        }
        outcome.ran += 1;
        bar.inc(1);
        if !point.id.is_empty() {
            reporter.log(&format!(
                "[{}] {}: {}",
                point.id,
                s.status,
                s.final_train_loss
                    .map_or("-".into(), |l| format!("final train loss {l:.5}"))
            ));
        }
    }
    bar.finish_and_clear();
    Ok(outcome)
}
