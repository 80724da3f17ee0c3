//! Sweeps: the Cartesian product of a config's `[sweep]` axes, one run directory per point
//! (`OUT/runs/<id>/`), shards for job arrays (`--shard i/N` runs points `p mod N = i`),
//! finished runs skipped, diverged runs recorded and passed over.
//!
//! A run counts as finished only when its summary records the fingerprint of the config
//! about to run it (`ntk_runs::provenance`); a run made by another config is an error
//! naming the keys that differ, or, with `recompute`, is trained again from scratch.

use std::path::{Path, PathBuf};

use ntk_model::{ActivationKind, NetSpec, Normalization, ResNetVariant};
use ntk_numerics::backend::Compute;
use ntk_runs::progress::Reporter;
use ntk_runs::provenance::Provenance;
use ntk_runs::sweep::{self, Planned, Recompute, Shard, State, Sweep};

use crate::config::{EngineChoice, SweepAxes, TrainConfig};
use crate::train::{self, Data, RunOptions, RunStatus, TrainSummary, read_summary};

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

pub use crate::config::lr_tag;

/// The points of a config: one per element of the product of its sweep axes (empty axes
/// keep the base value), or the config itself without `[sweep]`.
pub fn expand(cfg: &TrainConfig) -> crate::Result<Vec<RunPoint>> {
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
    let depths = sweep::or_base(&axes.depths, base.depth());
    let pairs = families(&axes);
    let variants = sweep::listed(&axes.variants);
    let lrs = sweep::or_base(&axes.lrs, cfg.optim.lr);
    let seeds = sweep::or_base(&axes.seeds, base.seed());
    // A listed seed is an independent run: the model's init and the data order (and
    // augmentation) both take it; without the axis `train.seed` stays the config's.
    let data_seeds = !axes.seeds.is_empty();
    sweep::check_size(
        &[
            depths.len(),
            pairs.len(),
            variants.len(),
            lrs.len(),
            seeds.len(),
        ],
        "the product of its axes",
    )?;
    let mut points = Vec::new();
    for &depth in &depths {
        for &(act, norm) in &pairs {
            for &variant in &variants {
                for &lr in &lrs {
                    for &seed in &seeds {
                        let values = (act, norm, variant);
                        let mut p = point(cfg, &base, depth, values, lr, seed)?;
                        if data_seeds {
                            p.cfg.train.seed = seed;
                        }
                        points.push(p);
                    }
                }
            }
        }
    }
    Ok(points)
}

/// The (activation, normalization) pairs of a sweep: its families, or the product of the
/// activation and normalization axes.
fn families(axes: &SweepAxes) -> Vec<(Option<ActivationKind>, Option<Normalization>)> {
    if !axes.families.is_empty() {
        return axes
            .families
            .iter()
            .map(|f| (Some(f.activation), Some(f.normalization)))
            .collect();
    }
    let norms = sweep::listed(&axes.normalizations);
    sweep::listed(&axes.activations)
        .into_iter()
        .flat_map(|a| norms.iter().map(move |&n| (a, n)))
        .collect()
}

/// A sweep run's directory name (under `runs/`): its network's depth, activation family and
/// normalization, its rate and its seed (the network's; an ONNX network's is `train.seed`,
/// its weights being the file's), `depth002_relu_none_lr1e-1_seed1`. `collect` holds a
/// run directory to it (eighty-eighth hostile round, N3: a run moved to `..._seed9` was
/// reported as seed 9's in `sweep.csv`'s id, seed 1 in its seed column).
pub fn run_id(spec: &NetSpec, lr: f64, seed: u64) -> String {
    id_of(
        spec.depth(),
        spec.activation_family(),
        &spec.normalization_name(),
        lr,
        seed,
    )
}

/// The [`run_id`] of the run a summary records (its depth, activation, normalization, rate
/// and network seed): a summary in another run's directory says so (hundred-and-forty-third
/// hostile round, second review, D1).
pub fn recorded_run_id(s: &crate::summary::TrainSummary) -> String {
    // The activation's label is its family's name, with `(symbol=value)` after it when
    // its parameter is not the default (`ntk_model::activation::Activation::label`).
    let family = s.activation.split('(').next().unwrap_or_default();
    // An ONNX network's run is named by `train.seed` (its weights are the file's), as
    // `report::network_labels` labels it.
    let seed = match family {
        ntk_model::spec::ONNX => s.data_seed,
        _ => s.model_seed,
    };
    id_of(s.depth, family, &s.normalization, s.lr, seed)
}

fn id_of(depth: usize, family: &str, normalization: &str, lr: f64, seed: u64) -> String {
    format!(
        "depth{depth:03}_{family}_{normalization}_lr{}_seed{seed}",
        lr_tag(lr)
    )
}

pub use crate::run_dir::in_run_id_form;

/// The run of one grid point: the base config with the point's values, validated, and its
/// directory name.
fn point(
    cfg: &TrainConfig,
    base: &NetSpec,
    depth: usize,
    (act, norm, variant): (
        Option<ActivationKind>,
        Option<Normalization>,
        Option<ResNetVariant>,
    ),
    lr: f64,
    seed: u64,
) -> crate::Result<RunPoint> {
    let mut spec = base.clone().with_depth(depth).with_seed(seed);
    // Each axis's value the network cannot take names its axis (sixty-fifth hostile round,
    // N2).
    let families = cfg.sweep.as_ref().is_some_and(|s| !s.families.is_empty());
    let on = |axis: &'static str| {
        move |e: ntk_model::ModelError| crate::Error::Axis {
            axis: if families { "sweep.families" } else { axis },
            source: Box::new(e.into()),
        }
    };
    // The variant first: it decides whether a ResNet takes an activation.
    if let Some(v) = variant {
        spec = spec.with_variant(v).map_err(on("sweep.variants"))?;
    }
    if let Some(a) = act {
        spec = spec.with_activation(a).map_err(on("sweep.activations"))?;
    }
    if let Some(n) = norm {
        spec = spec
            .with_normalization(n)
            .map_err(on("sweep.normalizations"))?;
    }
    let mut c = cfg.clone();
    c.set_spec(&spec);
    c.optim.lr = lr;
    c.sweep = None;
    // Fixup's rate of its scalars applies at the sweep's Fixup points only: elsewhere the
    // point has no scalars, and the key in its config.toml and fingerprint was refused by
    // the tool and made an identical run `stale` (sixty-fifth hostile round, D1). 1 is
    // its default (`OptimConfig::scalar_lr_scale`), which no config records.
    if matches!(&spec, NetSpec::ResNet(r) if r.variant != ResNetVariant::Fixup) {
        c.optim.scalar_lr_scale = 1.0;
    }
    let id = run_id(&spec, lr, seed);
    c.validate().map_err(|e| crate::Error::Point {
        id: id.to_string(),
        source: Box::new(e),
    })?;
    Ok(RunPoint { id, cfg: c })
}

/// Refuses an `--out` the tools did not make, before any work: each point's run
/// directory ([`train::check_run_dir`]) and, for a sweep, the directory above them (its
/// `runs/`, tables and figures only).
pub fn check_out(out: &Path, points: &[RunPoint]) -> crate::Result<()> {
    crate::files::refuse_probe_sweep(out)?;
    if points.iter().any(|p| !p.id.is_empty()) {
        ntk_files::outset::check_owned(out, &|n: &str| {
            n == "runs" || crate::files::is_report_file(n)
        })?;
        // A table or figure with no sweep's runs beside it is a user's (seventy-third
        // hostile round, D5: a lone sweep.csv was replaced without a word); a `runs/` that
        // holds entries but no run of the tools' nor a sweep's claim is a user's folder
        // (hundred-and-twenty-sixth, D3: TensorBoard's default `runs/`).
        let planned: Vec<std::path::PathBuf> = points.iter().map(|p| p.dir(out)).collect();
        let runs = ntk_runs::sweep::SweepRuns {
            is_run: &is_sweep_run,
            planned: &planned,
        };
        ntk_runs::sweep::check_sweep_out(out, &runs, &crate::files::is_report_file)?;
    }
    points
        .iter()
        .try_for_each(|p| train::check_run_dir(&p.dir(out)))
}

/// Whether `dir` holds a run of ntk-train's: a `config.toml` that reads as a training
/// config (a user's own `config.toml` does not).
fn is_sweep_run(dir: &Path) -> bool {
    let config = dir.join("config.toml");
    config.is_file() && ntk_runs::config_file::load_toml::<TrainConfig>(&config).is_ok()
}

/// Refuses, before any work, a table in a point's run directory that its config does not
/// write ([`crate::run_dir::check_untracked`]); after [`check_inputs_outside`], whose
/// refusal names the input a run would lose.
pub fn check_untracked(out: &Path, points: &[RunPoint]) -> crate::Result<()> {
    points
        .iter()
        .try_for_each(|p| crate::run_dir::check_untracked(&p.dir(out), &p.cfg))
}

/// Refuses a run whose inputs (the data's files, the ONNX file) lie inside `out`, which it
/// writes and replaces (`config.toml`, `metrics.csv`, checkpoints, a sweep's tables): the
/// file would be lost ([`ntk_files::apart::check_outside`]; `InsideOutput::consequence`).
pub fn check_inputs_outside(cfg: &TrainConfig, out: &Path) -> crate::Result<()> {
    let onnx = cfg.onnx.as_ref().map(|o| o.file.as_path());
    let inputs = cfg.data.files().into_iter().chain([("onnx.file", onnx)]);
    ntk_files::apart::check_outside(inputs, &[out.to_path_buf()]).map_err(|e| {
        crate::Error::Config {
            key: e.key,
            value: format!("{} ({}: {})", e.path.display(), e.how, e.consequence()),
            reason: "a run's inputs must lie outside the output directory it writes and \
                     replaces (--out)",
        }
    })
}

/// The fingerprint of a sweep, whichever shard, backend or output directory runs it: the
/// writers of one sweep directory must share it (`ntk_files::lock::SweepClaim`). Taken over
/// the runs the sweep makes (`points`, [`expand`]'s), each in the one recorded form of its
/// network as its runs are, in any order: two configs that make the same runs share it (two
/// spellings of one network are one sweep) and two that make other runs do not, whatever
/// the base a sweep's axes override (one `activation_param` is each swept family's own, and
/// the config's single form judged it against the base activation alone: a LeakyReLU base's
/// default slope and NormReLU's kink at 0.01 were one sweep's writers).
pub fn fingerprint(points: &[RunPoint]) -> String {
    let mut runs: Vec<String> = points
        .iter()
        .map(|p| {
            let mut c = p.cfg.clone();
            c.train.out = None;
            c.train.backend = None;
            let mut flat = ntk_runs::provenance::flatten_config(&c);
            ntk_model::spec::canonical_recorded(&mut flat);
            ntk_runs::provenance::fingerprint(&flat)
        })
        .collect();
    runs.sort();
    ntk_runs::provenance::sha256_hex(runs.join("\n").as_bytes())
}

/// What a sweep did.
#[derive(Debug, Default)]
pub struct SweepOutcome {
    pub ran: usize,
    pub skipped: usize,
    pub diverged: usize,
    /// Points this process stopped early on purpose (`stop_after`).
    pub interrupted: usize,
    /// Points whose training failed (recorded in their `failed.json`).
    pub failed: usize,
    /// [`ntk_runs::sweep::Outcome::left_to_other_shards`].
    pub left_to_other_shards: usize,
    /// [`ntk_runs::sweep::Outcome::unfinished_elsewhere`].
    pub unfinished_elsewhere: usize,
    /// The error the sweep ends with once it has been collected: points that failed or
    /// were busy ([`ntk_runs::sweep::Outcome::check`]).
    pub check: Option<ntk_runs::Error>,
}

impl sweep::Recorded for TrainSummary {
    const WHAT: &'static str = "a training summary";
    const SET_FILES: &'static [&'static str] = &crate::summary::RECORDED_FILES;
    const READ_FILES: &'static [&'static str] = &[crate::summary::METRICS_FILE, "config.toml"];
    fn provenance(&self) -> Option<&Provenance> {
        self.provenance.as_ref()
    }
    /// The run's recorded tables, where it wrote any (a record of none is checked by
    /// `collect`, [`crate::summary::check_recorded`]).
    fn files(&self) -> Option<&ntk_runs::manifest::Files> {
        self.files.as_ref().filter(|f| !f.is_empty())
    }
    /// Edited ([`crate::summary::edited`]), or in a sweep run directory named for another
    /// run than the one it records, said as `collect` says it ([`crate::report::misnamed`]:
    /// renamed, or copied in).
    fn not_its_own(&self, path: &Path) -> Option<String> {
        // And a config.toml beside it that is not the config it records: said both ways, as
        // `collect` says it (hundred-and-fifty-second hostile round, D4: a single run's
        // summary copied from another run was "made by a different config" in the plans).
        crate::summary::edited(self, path)
            .or_else(|| crate::report::misnamed(path.parent()?, self))
            .or_else(|| crate::report::config_edited(path.parent()?, self.provenance.as_ref()?))
    }
    /// Its own checksum ([`crate::summary::edited`]), its run's `config.toml` against the
    /// config it records ([`crate::report::config_edited`]), and its run's tables against it
    /// in `collect`'s order ([`crate::report::check_tables`]): a run that fails either is
    /// stale, so that `--recompute` trains it again (seventy-ninth hostile round, left open
    /// in round 78: a kept run's edited `metrics.csv` refused the sweep and its `--recompute`
    /// alike). A table that cannot be read is left to `collect`, which names it.
    fn check(&self, path: &Path) -> Option<String> {
        let config = || {
            let dir = path.parent()?;
            crate::report::config_edited(dir, self.provenance.as_ref()?)
        };
        crate::summary::edited(self, path)
            .or_else(config)
            .or_else(|| {
                let dir = path.parent()?;
                // A metrics.csv that cannot be read is left to `collect`, which names it
                // after what it reads first (config.toml): the run refuses as its plan does.
                let metrics = dir.join(crate::summary::METRICS_FILE);
                ntk_files::table::read_csv::<crate::metrics::EpochMetrics>(&metrics).ok()?;
                crate::report::check_tables(dir, self)
                    .err()
                    .map(|e| e.to_string())
            })
    }
}

/// A finished (or diverged) run's summary; `None` when there is none or it is unreadable.
pub fn finished_summary(dir: &Path) -> Option<TrainSummary> {
    read_summary(dir).ok().flatten()
}

/// The state of the run in `dir` for the config with provenance `now`: done (finished or
/// diverged, by this config), partial (a checkpoint to resume from), new, or stale. `holder`:
/// a sweep's point or a single run's `--out`, whose remedy for a file this user may not read
/// differs (hundred-and-fortieth hostile round, second review, N4: a single run was told to
/// move "the point out of runs/").
pub fn run_state(dir: &Path, now: &Provenance, holder: sweep::Holder) -> State {
    // A link among the run's files is not read through (hundred-and-forty-seventh hostile
    // round, D2: a linked checkpoints/ was hashed and called damaged, to be trained again).
    if let Some(why) = crate::run_dir::linked_file(dir) {
        return State::Blocked(why);
    }
    let expected = [(dir.join("summary.json"), now)];
    match sweep::state::<TrainSummary>(&expected, REDO, holder) {
        State::New if dir.join("checkpoint.json").exists() => checkpoint_state(dir, now, holder),
        State::Done => finished_state(dir, now, holder),
        state => state,
    }
}

/// The remedy every stale run's message ends with; `collect --config` says it too, which
/// takes no `--recompute` (hundred-and-forty-sixth hostile round, N3).
pub(crate) const REDO: &str = "pass --recompute to the run or sweep to train the run again";

/// A finished (or diverged) run's state: done where its model of record is there as the
/// run left it. Its checkpoint is verified as a resume verifies one (its config and every
/// file: fifty-eighth hostile round, N1), a finished run's must hold its last step (a
/// checkpoint is written after the last epoch: config.md's `train.checkpoint_every`), and
/// epoch checkpoints without their `checkpoint.json` cannot be verified (fifty-ninth, D1:
/// without the pointer, or with an earlier checkpoint of the same config, a damaged or
/// earlier model read `done`). Stale otherwise, so that the dry run says so and
/// `--recompute` trains the run again. A run with neither (removed to save space) is done:
/// its tables need no model.
fn finished_state(dir: &Path, now: &Provenance, holder: sweep::Holder) -> State {
    let pointer_path = dir.join("checkpoint.json");
    if !pointer_path.exists() {
        return if crate::checkpoint::has_kept_epochs(dir) {
            State::Stale(format!(
                "{}: missing beside the run's epoch checkpoints (checkpoints/), so its final \
                 model cannot be verified; {REDO}",
                pointer_path.display()
            ))
        } else {
            State::Done
        };
    }
    let pointer = match verified_pointer(dir, now, holder) {
        Ok(Some(loaded)) => loaded.pointer,
        Ok(None) => return State::Done,
        Err(stale) => return stale,
    };
    match finished_summary(dir) {
        Some(s)
            if s.status == RunStatus::Finished && pointer.iteration != s.iterations_completed =>
        {
            State::Stale(format!(
                "{}: holds the checkpoint of epoch {} (iteration {}), where the run finished \
                 at epoch {} (iteration {}): not its final model; {REDO}",
                pointer_path.display(),
                pointer.epoch,
                pointer.iteration,
                s.epochs_completed,
                s.iterations_completed
            ))
        }
        _ => State::Done,
    }
}

/// An interrupted run's state: partial when its checkpoint was made by this config and
/// passes the verification a resume makes ([`crate::checkpoint::find`]: the pointer's
/// checksum, every file's SHA-256, the epoch against its metrics) and its tables begin with
/// the checkpoint's copies ([`crate::report::check_as_kept`]), stale otherwise
/// (another config's, unreadable or damaged), so that `--dry-run` says so and
/// `--recompute` trains it again from scratch.
fn checkpoint_state(dir: &Path, now: &Provenance, holder: sweep::Holder) -> State {
    match verified_pointer(dir, now, holder) {
        // Its tables the checkpoint's copies up to its epoch, as collect holds them.
        Ok(Some(loaded)) => match crate::report::check_as_kept(dir, &loaded) {
            Ok(()) => State::Partial,
            Err(e) => State::Stale(sweep::with_remedy(&e.to_string(), REDO)),
        },
        Ok(None) => State::Partial,
        Err(stale) => stale,
    }
}

/// The checkpoint of the run in `dir`, loaded, when it passes the verification a resume
/// makes for the config with provenance `now`; `None` when another process is writing the
/// run now (its files are not read under its feet); the stale state naming why otherwise.
fn verified_pointer(
    dir: &Path,
    now: &Provenance,
    holder: sweep::Holder,
) -> Result<Option<crate::checkpoint::Loaded>, State> {
    if let Some(locked) = unreadable_checkpoint_part(dir) {
        return Err(sweep::unreadable_state(&locked, holder));
    }
    let path = dir.join("checkpoint.json");
    let text = match ntk_files::io::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => return Err(State::Stale(format!("{}: {e}; {REDO}", path.display()))),
    };
    let pointer = match crate::checkpoint::parse_pointer(&text, &path) {
        Ok(p) => p,
        // Its message names the remedy (fifteenth hostile round, N3: two in one line).
        Err(e @ crate::Error::Untrusted { .. }) => return Err(State::Stale(e.to_string())),
        Err(e) => return Err(State::Stale(format!("{e}; {REDO}"))),
    };
    if let Err(e) = ntk_runs::provenance::check_reuse(&path, pointer.provenance.as_ref(), now) {
        return Err(State::Stale(e.to_string()));
    }
    // A run another process is writing now replaces its checkpoint as it goes: its files
    // are not read under its feet (sixteenth hostile round, D3: a dry run read a velocity
    // file between its writer's removal and rename, and advised --recompute on a live run).
    // Its run is refused as busy ([`TrainSweep::foresee`]).
    if ntk_files::lock::DirLock::holder(dir).is_some() {
        return Ok(None);
    }
    match crate::checkpoint::find(dir) {
        Ok(loaded) => Ok(loaded),
        Err(e @ crate::Error::Untrusted { .. }) => Err(State::Stale(e.to_string())),
        Err(e) => Err(State::Stale(format!("{e}; {REDO}"))),
    }
}

/// The first part of the run's checkpoint in `dir` (its `checkpoint.json`, the directory
/// `checkpoints/`, an epoch's directory or file there) that this user may not read: the run
/// is as it was written, and is made readable or moved, not trained again over (ninety-eighth
/// hostile round, D4: an unreadable `checkpoint.json` sent a finished run to `--recompute`).
fn unreadable_checkpoint_part(dir: &Path) -> Option<PathBuf> {
    let pointer = dir.join("checkpoint.json");
    if ntk_runs::sweep::unreadable(&pointer) {
        return Some(pointer);
    }
    // The entries of `d`, or `d` itself when this user may not list it.
    let entries = |d: &Path| match std::fs::read_dir(d) {
        Ok(list) => Ok(list.flatten().map(|e| e.path()).collect::<Vec<_>>()),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => Err(d.to_path_buf()),
        Err(_) => Ok(Vec::new()),
    };
    let checkpoints = dir.join("checkpoints");
    if !std::fs::symlink_metadata(&checkpoints).is_ok_and(|m| m.is_dir()) {
        return None;
    }
    let epochs = match entries(&checkpoints) {
        Ok(list) => list,
        Err(locked) => return Some(locked),
    };
    for epoch in epochs {
        if !std::fs::symlink_metadata(&epoch).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        match entries(&epoch) {
            Err(locked) => return Some(locked),
            Ok(files) => {
                if let Some(f) = files.into_iter().find(|f| ntk_runs::sweep::unreadable(f)) {
                    return Some(f);
                }
            }
        }
    }
    None
}

/// Removes a stale run's files so that it trains again from scratch.
fn clear_run(dir: &Path) -> crate::Result<()> {
    // Never under a live writer's feet.
    let _lock = ntk_files::lock::DirLock::acquire(dir)?;
    for name in train::RUN_FILES {
        let p = dir.join(name);
        // The checkpoints as far as they are the run's: a user's file there stays.
        let r = if name == "checkpoints" {
            crate::checkpoint::remove_checkpoints(dir)
        } else if std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir()) {
            // Not a file the run wrote (refused before any work: `refuse_partial`).
            Err(std::io::Error::other(
                "a directory where the run writes a file; move it",
            ))
        } else {
            std::fs::remove_file(&p)
        };
        match r {
            Err(source) if source.kind() != std::io::ErrorKind::NotFound => {
                return Err(crate::Error::Remove { path: p, source });
            }
            _ => {}
        }
    }
    Ok(())
}

/// How a sweep runs.
#[derive(Clone, Copy, Debug, Default)]
pub struct SweepOptions {
    /// How each run starts (resume, stop early).
    pub run: RunOptions,
    /// Train again the runs made by another config instead of refusing them.
    pub recompute: bool,
    /// `--allow-mixed` ([`TrainSweep::allow_mixed`]).
    pub allow_mixed: bool,
}

/// A training sweep as the shared machinery sees it ([`ntk_runs::sweep::Sweep`]).
pub struct TrainSweep<'a> {
    pub out: &'a Path,
    pub data: &'a Data,
    pub compute: &'a Compute,
    pub run: RunOptions,
    pub reporter: &'a Reporter,
    /// Who computes the steps (`train.engine`), for the dry run's line.
    pub engine: EngineChoice,
    /// The engine each point would take ([`ntk_engine::plan`]: builds nothing), for the
    /// dry run's line.
    pub plans: Vec<ntk_engine::Engine>,
    /// `--allow-mixed`: runs of other configs under `runs/` are merged by the collect at
    /// the end, so they do not stop the sweep ([`crate::joins`]).
    pub allow_mixed: bool,
    /// The sweep config's fingerprint ([`fingerprint`]), under which its writers register.
    pub fingerprint: String,
    /// Whether the checks before the work take what they check under (a run joining a
    /// collected sweep claims its point: [`crate::joins::check_single`]), or only read it (a
    /// dry run, collect's check: they change nothing).
    pub claims: bool,
}

/// The engine each point's run would take on `compute` (in point order).
fn plans(points: &[RunPoint], compute: &Compute) -> crate::Result<Vec<ntk_engine::Engine>> {
    points
        .iter()
        .map(|p| {
            let t = &p.cfg.train;
            Ok(ntk_engine::plan(t.engine, &p.cfg.spec()?, compute))
        })
        .collect()
}

impl Sweep for TrainSweep<'_> {
    type Point = RunPoint;
    type Made = TrainSummary;
    type Error = crate::Error;

    fn label(&self, point: &RunPoint) -> String {
        let model = point
            .cfg
            .spec()
            .map_or_else(|e| e.to_string(), |s| s.describe());
        let name = if point.id.is_empty() {
            point.dir(self.out).display().to_string()
        } else {
            point.id.clone()
        };
        // As a number is written in a message (`1e-300`, not its 302 characters:
        // hundred-and-sixteenth hostile round, N1).
        let lr = ntk_files::table::number(point.cfg.optim.lr);
        format!("{model:40} lr {lr:<8} {name}")
    }

    fn state(&self, point: &RunPoint) -> crate::Result<State> {
        let prov = train::run_provenance(&point.cfg, self.data, self.compute);
        let holder = match point.id.is_empty() {
            true => sweep::Holder::Set,
            false => sweep::Holder::Point,
        };
        Ok(run_state(&point.dir(self.out), &prov, holder))
    }

    fn clear(&self, point: &RunPoint) -> crate::Result<()> {
        clear_run(&point.dir(self.out))
    }

    fn tidy(&self, point: &RunPoint) {
        crate::run_dir::clean_leftovers(&point.dir(self.out));
    }

    fn make(&mut self, point: &RunPoint) -> crate::Result<TrainSummary> {
        let dir = point.dir(self.out);
        let s = train::train(
            &point.cfg,
            self.data,
            self.compute,
            &dir,
            self.run,
            self.reporter,
        )?;
        if !point.id.is_empty() {
            self.reporter.log(&format!(
                "[{}] {}: {}",
                point.id,
                s.status,
                // A run with no finished epoch says so, not "-" (hundred-and-thirty-seventh
                // hostile round, second review, N2).
                s.final_train_loss.map_or_else(
                    || match s.diverged_epoch {
                        Some(e) => format!("in epoch {e}, with no finished epoch"),
                        None => "-".into(),
                    },
                    |l| format!("final train loss {}", crate::epoch::loss_text(l))
                )
            ));
        }
        Ok(s)
    }

    fn dir(&self, point: &RunPoint) -> PathBuf {
        point.dir(self.out)
    }

    fn refuse(
        &self,
        points: &[RunPoint],
        planned: &[Planned],
        recompute: &Recompute,
    ) -> crate::Result<()> {
        // A single run (its point is the output directory itself) that another process is
        // writing is refused before anything, dry run and run alike: the run would end busy
        // and write the sweep's tables into the live run's directory (sixteenth hostile
        // round, D3).
        for p in planned {
            let point = &points[p.index];
            let dir = point.dir(self.out);
            if point.id.is_empty()
                && let Some(holder) = ntk_files::lock::DirLock::holder(&dir)
            {
                return Err(ntk_files::Error::Locked { dir, holder }.into());
            }
        }
        refuse_partial(self, points, planned, self.run.resume)?;
        // A finished single run is read again by the collect at the run's end (its tables
        // and figures): what that read refuses, the dry run and the run refuse before any
        // work (forty-fifth hostile round, D3: a FIFO at metrics.csv, a garbled config.toml
        // were `done` in the dry run and refused by the run).
        for p in planned.iter().filter(|p| p.state == State::Done) {
            let point = &points[p.index];
            if point.id.is_empty() {
                crate::report::read_run(&point.dir(self.out), String::new())?;
            }
        }
        // What the collect at the end would refuse of the runs this adds (twenty-first
        // hostile round, D1, D2).
        let provs: Vec<(PathBuf, Provenance, bool)> = planned
            .iter()
            .map(|p| {
                let point = &points[p.index];
                let prov = train::run_provenance(&point.cfg, self.data, self.compute);
                (point.dir(self.out), prov, p.state != State::Done)
            })
            .collect();
        let joining: Vec<crate::joins::Joining<'_>> = provs
            .iter()
            .map(|(dir, provenance, trains)| crate::joins::Joining {
                dir: dir.clone(),
                provenance,
                trains: *trains,
            })
            .collect();
        match (points, joining.as_slice()) {
            ([single], [one]) if single.id.is_empty() => {
                crate::joins::check_single(self.out, one, self.claims)
            }
            _ => {
                // The other shards' runs of another config, which their own tasks train
                // again with --recompute, are not read back (sixty-first hostile round, D2).
                let elsewhere: Vec<PathBuf> = recompute
                    .elsewhere
                    .iter()
                    .map(|&i| points[i].dir(self.out))
                    .collect();
                crate::joins::check_sweep(self.out, &joining, &elsewhere, self.allow_mixed)
            }
        }
    }

    /// A point another process is writing now: the run would skip it as busy and end with
    /// that error, so its dry run says so (sixteenth hostile round, D3).
    fn foresee(&self, point: &RunPoint) -> crate::Result<Option<String>> {
        let dir = point.dir(self.out);
        if let Some(holder) = ntk_files::lock::DirLock::holder(&dir) {
            return Ok(Some(format!(
                "busy: another process is writing here ({holder})"
            )));
        }
        // A first checkpoint cut off before its pointer that this user cannot remove: the run
        // refuses it (ninety-first hostile round, D2).
        if crate::checkpoint::pointer_cut(&dir)
            && let Some(why) = crate::checkpoint::unrecorded_unremovable(&dir)
        {
            return Ok(Some(format!(
                "its first checkpoint was cut off before checkpoint.json recorded it, and this \
                 user cannot remove it ({why})"
            )));
        }
        // A run directory this user cannot write (another user's, `chattr +i`): a stale run
        // there cannot be cleared, nor a run written (eighty-fifth hostile round, D6: the dry
        // run said "made again" where the sweep stopped at once).
        if let Err(e) = ntk_files::outset::check_writable_unmade(&dir) {
            return Ok(Some(e.to_string()));
        }
        // Kernels at initialization that leave their precision's range: the run refuses them
        // before its first step ([`crate::foresee`]). Not for a run that resumes, which has
        // taken them.
        if self.run.resume && dir.join("checkpoint.json").exists() {
            return Ok(None);
        }
        crate::foresee::foresee(&point.cfg, self.data, self.compute)
    }

    fn record_failure(&self, point: &RunPoint, error: &crate::Error) -> crate::Result<()> {
        let dir = point.dir(self.out);
        std::fs::create_dir_all(&dir).map_err(|source| ntk_files::Error::CreateDir {
            dir: dir.clone(),
            source,
        })?;
        // Only while no one else writes the run.
        let _lock = ntk_files::lock::DirLock::acquire(&dir)?;
        let prov = train::run_provenance(&point.cfg, self.data, self.compute);
        let failure = sweep::Failure {
            reason: error.to_string(),
            fingerprint: prov.fingerprint.clone(),
            tool: prov.tool.clone(),
        };
        Ok(failure.write(&dir)?)
    }

    fn busy(error: &crate::Error) -> bool {
        matches!(error, crate::Error::Runs(e) if matches!(**e, ntk_runs::Error::Files(ntk_files::Error::Locked { .. })))
    }

    const UNIT: &'static str = "run";

    fn out(&self) -> &Path {
        self.out
    }

    /// `engine: <the choice in words>`, then the engines the runs it would train take:
    /// `; these runs: burn (2), host (4)`, or `; no run to train` when every run of this
    /// shard is done (a finished run is not trained again, whichever engine trained it).
    fn computes(&self, made: &[usize]) -> String {
        let mut taken: Vec<(ntk_engine::Engine, usize)> = Vec::new();
        for e in made.iter().filter_map(|&i| self.plans.get(i).copied()) {
            match taken.iter_mut().find(|(t, _)| *t == e) {
                Some((_, n)) => *n += 1,
                None => taken.push((e, 1)),
            }
        }
        let taken: Vec<String> = taken.iter().map(|(e, n)| format!("{e} ({n})")).collect();
        let mut line = format!("engine: {}", ntk_engine::describe(self.engine));
        if taken.is_empty() {
            line.push_str("; no run to train");
        } else {
            line.push_str(&format!("; these runs: {}", taken.join(", ")));
        }
        line
    }

    /// The report files the collect at the sweep's end no longer writes (those of what no
    /// run of this config measures: [`crate::places::reports_of`]; runs of another config
    /// stand beside only with `--allow-mixed`, which writes every name), and the runs whose
    /// first checkpoint was cut off, which start over.
    fn foreseen(&self, points: &[RunPoint], planned: &[Planned]) -> Vec<String> {
        let Some(point) = points.first() else {
            return Vec::new();
        };
        let names = crate::places::reports_of(&point.cfg, self.allow_mixed);
        let mut lines = sweep::foresee_stale_reports(self.out, "runs", &|name| {
            crate::report::stale_why(name, &names)
        });
        lines.extend(sweep::foresee_captions(self.out, &|stem| {
            names.writes(&format!("{stem}.png"))
        }));
        // A run whose first checkpoint was cut off before its pointer starts over, removing
        // it: said by the dry run as the run says it (ninetieth hostile round, D2).
        // This shard's runs that it makes (ninety-first hostile round, D1: another shard's
        // was said), and whose checkpoint it can remove (D2: [`Sweep::foresee`] says why
        // the others fail).
        for p in planned.iter().filter(|p| p.state != State::Done) {
            let dir = points[p.index].dir(self.out);
            if crate::checkpoint::pointer_cut(&dir)
                && !dir.join("summary.json").exists()
                && crate::checkpoint::unrecorded_unremovable(&dir).is_none()
            {
                lines.push(format!(
                    "cut: {}: its first checkpoint was cut off before checkpoint.json recorded \
                     it (the run was killed between the two): the run removes it \
                     (checkpoints/epoch-*) and starts over, writing its metrics and tables anew",
                    dir.display()
                ));
            }
        }
        lines
    }

    /// The run directories found: `OUT` itself for a config without `[sweep]`, else those
    /// under `OUT/runs` holding a `config.toml`.
    fn found(&self) -> crate::Result<Vec<PathBuf>> {
        let out = self.out;
        Ok(if out.join("config.toml").exists() {
            vec![out.to_path_buf()]
        } else {
            sweep::find_files(&out.join("runs"), "config.toml")
                .into_iter()
                .filter_map(|p| p.parent().map(Path::to_path_buf))
                .collect()
        })
    }

    /// A run directory of no point of this config, read as `collect` reads it
    /// ([`crate::report::read_run`]): a renamed one, or one holding another run's files, is
    /// said as `collect` says it.
    /// A run is its point's in the point's directory itself, not nested below it.
    fn owns(&self, point: &RunPoint, found: &Path) -> bool {
        found == point.dir(self.out)
    }

    fn check_found(&self, points: &[Self::Point], found: &Path) -> crate::Result<()> {
        let id = found
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let record = crate::report::read_run(found, id)?;
        // A run of this config under a name of the user's: where it belongs, or a copy of the
        // run there (hundred-and-fifty-first hostile round, D2: "not a point of this config",
        // where the plans said where it belongs).
        let Some(recorded) = record.provenance.as_ref() else {
            return Ok(());
        };
        for point in points {
            let prov = train::run_provenance(&point.cfg, self.data, self.compute);
            if prov.fingerprint != recorded.fingerprint {
                continue;
            }
            let place = point.dir(self.out);
            // A copy only where the run at its place is the same run (hundred-and-fifty-
            // second hostile round, D1: another run moved into the place made the only
            // result of this point "a copy", to remove).
            let same = finished_summary(&place)
                .and_then(|s| s.provenance)
                .is_some_and(|p| p.fingerprint == recorded.fingerprint);
            return Err(if same {
                crate::Error::CopyOfRun {
                    copy: found.to_path_buf(),
                    run: place,
                }
            } else {
                crate::Error::ThisRunElsewhere {
                    occupied: std::fs::symlink_metadata(&place).is_ok(),
                    new: place,
                    there: found.to_path_buf(),
                }
            });
        }
        Ok(())
    }
}

/// Runs this shard's points in `out`, skipping finished ones; a diverged run is recorded
/// and the sweep goes on.
pub fn run(
    cfg: &TrainConfig,
    out: &Path,
    shard: Shard,
    compute: &Compute,
    opts: SweepOptions,
    reporter: &Reporter,
) -> crate::Result<SweepOutcome> {
    let data = train::load_data(&cfg.data, cfg.train.test_n)?;
    let points = checked_points(cfg, &data)?;
    let mut sweep = TrainSweep {
        out,
        data: &data,
        compute,
        run: opts.run,
        reporter,
        engine: cfg.train.engine,
        plans: plans(&points, compute)?,
        allow_mixed: opts.allow_mixed,
        fingerprint: fingerprint(&points),
        claims: true,
    };
    let done = sweep::execute(&mut sweep, &points, shard, opts.recompute, reporter)?;
    let count = |status| done.made.iter().filter(|s| s.status == status).count();
    Ok(SweepOutcome {
        ran: done.made.len(),
        skipped: done.skipped,
        diverged: count(RunStatus::Diverged),
        interrupted: count(RunStatus::Interrupted),
        failed: done.failed.len(),
        left_to_other_shards: done.left_to_other_shards,
        unfinished_elsewhere: done.unfinished_elsewhere,
        check: done.check().err(),
    })
}

/// `collect DIR --config FILE`: every run of `cfg` found in `out` was made by `cfg` (its
/// recorded fingerprint); a run of another config is an error naming it (and how many more
/// are like it). Runs not yet made are named on stderr; the report waits for them where a
/// choice reads them ([`planned_runs`]).
pub fn check_collect(cfg: &TrainConfig, out: &Path, compute: &Compute) -> crate::Result<()> {
    with_sweep(
        cfg,
        out,
        compute,
        (RunOptions::default(), false),
        |s, points| sweep::check_collect(s, points),
    )
}

/// The runs `cfg` plans, as its tables label them, for its report to wait for those that
/// have no result ([`crate::report::collect_as`]).
pub fn planned_runs(cfg: &TrainConfig) -> crate::Result<Vec<crate::report::PlannedRun>> {
    expand(cfg)?
        .iter()
        .map(|p| crate::report::PlannedRun::of(&p.id, &p.cfg))
        .collect()
}

/// The runs of `cfg`, each checked against its data (labels beyond the outputs, inputs
/// beyond f32's range: [`crate::data_checks::check_inputs`]) before any is made: the run
/// refuses as its dry run does, writing nothing (seventh hostile round: inputs at 1e300 in an
/// f32 run were refused by the dry run, while the run made the output directory, recorded
/// the refusal in a failed.json and warned "collect: no run here").
fn checked_points(cfg: &TrainConfig, data: &Data) -> crate::Result<Vec<RunPoint>> {
    let points = expand(cfg)?;
    for p in &points {
        crate::data_checks::check_inputs(&p.cfg, &p.cfg.spec()?, data)
            .map_err(|e| crate::Error::AgainstData(Box::new(e)))?;
    }
    Ok(points)
}

/// Loads the data, expands the runs, checks each against its data (what a run checks once
/// its data are loaded: labels beyond the outputs, so that a dry run fails exactly when the
/// run would) and hands the sweep that plans them to `f`.
fn with_sweep<T>(
    cfg: &TrainConfig,
    out: &Path,
    compute: &Compute,
    (run, allow_mixed): (RunOptions, bool),
    f: impl FnOnce(&TrainSweep<'_>, &[RunPoint]) -> crate::Result<T>,
) -> crate::Result<T> {
    let data = train::load_data(&cfg.data, cfg.train.test_n)?;
    let points = checked_points(cfg, &data)?;
    let sweep = TrainSweep {
        out,
        data: &data,
        compute,
        run,
        reporter: &Reporter::silent(),
        engine: cfg.train.engine,
        plans: plans(&points, compute)?,
        allow_mixed,
        fingerprint: fingerprint(&points),
        claims: false,
    };
    f(&sweep, &points)
}

/// `--dry-run`: this shard's runs with their states and the engine; refuses what the run
/// would refuse, in its words; trains nothing.
pub fn dry_run(
    cfg: &TrainConfig,
    out: &Path,
    shard: Shard,
    compute: &Compute,
    flags: DryRunFlags,
) -> crate::Result<()> {
    let run = RunOptions {
        resume: flags.resume,
        ..RunOptions::default()
    };
    with_sweep(
        cfg,
        out,
        compute,
        (run, flags.allow_mixed),
        |sweep, points| sweep::dry_run(sweep, points, shard, flags.recompute).map(|_| ()),
    )
}

/// The flags a dry run answers for: those that decide what the run would refuse.
#[derive(Clone, Copy, Debug, Default)]
pub struct DryRunFlags {
    pub resume: bool,
    pub recompute: bool,
    pub allow_mixed: bool,
}

/// What the run and its dry run refuse of an interrupted run (partial, or failed with its
/// checkpoint), before any run of the sweep starts: without `--resume`, the run that is there
/// ([`crate::Error::Interrupted`]); with it, a checkpoint that fails its verification
/// ([`crate::checkpoint::find`]) or was written by another engine than this run's
/// ([`crate::Error::EngineMismatch`]); with or without it, epoch checkpoints without the
/// `checkpoint.json` that names one ([`crate::Error::NoCheckpointPointer`]). Then every place
/// the runs and the collect write ([`crate::places`]).
fn refuse_partial(
    sweep: &TrainSweep<'_>,
    points: &[RunPoint],
    planned: &[Planned],
    resume: bool,
) -> crate::Result<()> {
    for p in planned {
        let point = &points[p.index];
        let dir = point.dir(sweep.out);
        match p.state {
            // A run with epoch checkpoints but no checkpoint.json (removed by hand) looks
            // new, and the run refuses it as its directory's decision does (fifteenth hostile
            // round, D3: the dry run said `new`, the run failed and recorded the failure in
            // the run's directory). With or without --resume: the flag cannot continue it.
            State::New => {
                // A first checkpoint cut off before its pointer is the run's to start over
                // (eighty-ninth hostile round, D9).
                let orphans = !dir.join("checkpoint.json").exists()
                    && !dir.join("summary.json").exists()
                    && crate::checkpoint::has_kept_epochs(&dir)
                    && !crate::checkpoint::pointer_cut(&dir);
                if orphans && ntk_files::lock::DirLock::holder(&dir).is_none() {
                    return Err(crate::Error::NoCheckpointPointer { out: dir });
                }
            }
            // A failed point is tried again: with a checkpoint it meets the same refusals.
            State::Partial | State::Failed(_) => refuse_interrupted(sweep, point, p, resume)?,
            _ => {}
        }
    }
    let runs = planned
        .iter()
        .map(|p| (points[p.index].dir(sweep.out), &p.state));
    let reports = match points.first() {
        Some(p) => crate::places::reports_of(&p.cfg, sweep.allow_mixed),
        None => crate::files::ReportNames::all(),
    };
    ntk_files::places::check(&crate::places::planned(
        sweep.out,
        &sweep.fingerprint,
        &reports,
        runs,
    ))
}

/// [`refuse_partial`] for one partial or failed run `point` with a checkpoint.
fn refuse_interrupted(
    sweep: &TrainSweep<'_>,
    point: &RunPoint,
    p: &Planned,
    resume: bool,
) -> crate::Result<()> {
    let dir = point.dir(sweep.out);
    if !dir.join("checkpoint.json").is_file() || dir.join("summary.json").is_file() {
        return Ok(());
    }
    // A run another process is writing now is not interrupted: the run says so when it
    // meets the lock.
    if ntk_files::lock::DirLock::holder(&dir).is_some() {
        return Ok(());
    }
    let path = dir.join("checkpoint.json");
    let pointer = ntk_files::io::read_to_string(&path)
        .map_err(|source| {
            crate::Error::from(ntk_files::Error::Read {
                path: path.clone(),
                source,
            })
        })
        .and_then(|text| crate::checkpoint::parse_pointer(&text, &path));
    if !resume {
        // One sentence: where the run stopped and the flag that continues it.
        return Err(match pointer {
            Ok(p) => crate::Error::Interrupted {
                out: dir,
                epoch: p.epoch,
                epochs: point.cfg.step_counts(sweep.data.train.n).2,
            },
            Err(_) => crate::Error::RunExists { out: dir },
        });
    }
    let pointer = pointer?;
    // Verified as the run verifies it before resuming (every file's SHA-256, the epoch
    // against its metrics): a damaged checkpoint fails the dry run as it fails the run
    // (fourteenth hostile round, D6: the dry run said `partial`, the run refused). A partial
    // run's checkpoint passed that verification in its state ([`checkpoint_state`]); a
    // failed run's has not been read yet.
    if matches!(p.state, State::Failed(_)) && crate::checkpoint::find(&dir)?.is_none() {
        return Ok(());
    }
    let engine = crate::stepper::engine_of(&point.cfg, sweep.compute)?;
    crate::stepper::check_engine(&dir, pointer.engine, engine)
}
