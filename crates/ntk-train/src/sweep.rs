//! Sweeps: the Cartesian product of a config's `[sweep]` axes, one run directory per point
//! (`OUT/runs/<id>/`), shards for job arrays (`--shard i/N` runs points `p mod N = i`),
//! finished runs skipped, diverged runs recorded and passed over.

use std::path::{Path, PathBuf};

use ntk_model::{ActivationKind, Normalization};
use ntk_probe::backend::Compute;
pub use ntk_probe::sweep::Shard;

use crate::config::TrainConfig;
use crate::progress::Reporter;
use crate::train::{self, RunOptions, TrainSummary};

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

/// Reads a finished run's summary, if there is one.
pub fn finished_summary(dir: &Path) -> Option<TrainSummary> {
    let text = std::fs::read_to_string(dir.join("summary.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// Runs this shard's points in `out`, skipping finished ones; a diverged run is recorded
/// and the sweep goes on.
pub fn run(
    cfg: &TrainConfig,
    out: &Path,
    shard: Shard,
    compute: &Compute,
    opts: RunOptions,
    reporter: &Reporter,
) -> Result<SweepOutcome, String> {
    let points = expand(cfg)?;
    let data = train::load_data(&cfg.data, cfg.train.test_n)?;
    let mine: Vec<&RunPoint> = points
        .iter()
        .enumerate()
        .filter(|(p, _)| shard.owns(*p))
        .map(|(_, r)| r)
        .collect();
    let bar = reporter.bar(mine.len() as u64, "runs".into());
    let mut outcome = SweepOutcome::default();
    for point in mine {
        let dir = point.dir(out);
        if finished_summary(&dir).is_some() {
            outcome.skipped += 1;
            bar.inc(1);
            continue;
        }
        bar.set_message(point.id.clone());
        let s = train::train(&point.cfg, &data, compute, &dir, opts, reporter)?;
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
