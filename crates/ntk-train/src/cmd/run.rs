//! `ntk-train run` and `ntk-train sweep` (and `ntk-train --config FILE`, either as the
//! config says): the config with its flags and overrides, then its runs through the sweep
//! lifecycle both tools share ([`ntk_runs::sweep`]).

use std::path::Path;

use clap::Args;
use ntk_cli::args::{self, RunFlags, SweepFlags};
use ntk_numerics::backend;
use ntk_runs::overrides::{self, Assignment, ConfigName};
use ntk_runs::sweep::command::StepError;
use ntk_runs::sweep::{Invocation, Shard, SweepCommand, run_command};
use ntk_train::config::{EngineChoice, Given, TrainConfig};
use ntk_train::progress::Reporter;
use ntk_train::sweep;
use ntk_train::train::RunOptions;

use crate::CliResult;

/// `ntk-train run`: one training run.
#[derive(Args)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    run: RunFlags,
    #[command(flatten)]
    own: TrainFlags,
}

/// `ntk-train sweep`: the runs of a config's `[sweep]`.
#[derive(Args)]
pub(crate) struct SweepArgs {
    #[command(flatten)]
    sweep: SweepFlags,
    #[command(flatten)]
    own: TrainFlags,
}

/// The short flags of the trainer's own keys, beside those both tools take
/// ([`ntk_cli::args::KeyFlags`]).
#[derive(Args)]
struct TrainFlags {
    /// train.engine: auto, burn, host or cudnn.
    #[arg(long, value_parser = ntk_names::parse_arg::<EngineChoice>)]
    engine: Option<EngineChoice>,
    /// train.epochs (removes train.iterations).
    #[arg(long, conflicts_with = "iterations")]
    epochs: Option<usize>,
    /// train.iterations (removes train.epochs).
    #[arg(long)]
    iterations: Option<usize>,
    /// optim.lr (a negative value is read, then refused as the config's check refuses it).
    #[arg(long, allow_hyphen_values = true, value_parser = ntk_cli::args::float)]
    lr: Option<f64>,
    /// train.batch_size.
    #[arg(long)]
    batch_size: Option<usize>,
    /// train.test_n.
    #[arg(long)]
    test_n: Option<usize>,
}

/// The `--set`s that the flags stand for: both tools' short flags, the trainer's own, then
/// the `--set`s, in order.
fn assignments(
    flags: &RunFlags,
    own: &TrainFlags,
    table: &toml::Table,
) -> CliResult<Vec<Assignment>> {
    let wide = |v: Option<usize>| v.map(|x| x as u64);
    Ok(args::assignments(
        table,
        &flags.keys,
        "train",
        &flags.set,
        |f| {
            f.int("train.epochs", "epochs", wide(own.epochs))?;
            f.int("train.iterations", "iterations", wide(own.iterations))?;
            f.int("train.batch_size", "batch-size", wide(own.batch_size))?;
            f.int("train.test_n", "test-n", wide(own.test_n))?;
            // --epochs and --iterations replace each other.
            if let Some(e) = own.epochs {
                f.push(Assignment::remove(
                    "train.iterations",
                    format!("--epochs {e}"),
                ));
            }
            if let Some(i) = own.iterations {
                f.push(Assignment::remove(
                    "train.epochs",
                    format!("--iterations {i}"),
                ));
            }
            if let Some(lr) = own.lr {
                f.push(Assignment::set("optim.lr", lr, format!("--lr {lr}")));
            }
            f.text("train.engine", "engine", own.engine.map(EngineChoice::name));
            Ok(())
        },
    )?)
}

/// The config of `--config` with the flags and overrides applied ([`load_config`]).
/// The config, its backend where [`load_config`] chose it, and its name as messages give it.
type Loaded = (TrainConfig, Option<backend::Compute>, ConfigName);

fn load(flags: &RunFlags, own: &TrainFlags) -> CliResult<Loaded> {
    let path = flags
        .config
        .as_ref()
        .ok_or("--config FILE is required (or a subcommand: run, sweep, collect, plot, bench)")?;
    let src = overrides::Source::read(path)?;
    let sets = assignments(flags, own, src.table())?;
    let (cfg, compute) = load_config(&src, &sets, true)?;
    Ok((cfg, compute, src.name(&sets)))
}

/// The config of `src` with `sets` applied, validated as the file is, for `run`, `sweep` and
/// `collect --config` alike; with `[onnx]`, its file read on the run's backend (chosen here
/// then, and returned). Every message names the config as [`overrides::ConfigName`] does
/// (`F (with overrides)` when a key may have come from an assignment: sixth hostile round,
/// `F: onnx.file = ...` for a --set file; fifty-eighth, D1 and D2: the warnings and `collect
/// --config`'s errors named the file alone). `warn`: print the config's warnings.
pub(crate) fn load_config(
    src: &overrides::Source,
    sets: &[Assignment],
    warn: bool,
) -> CliResult<(TrainConfig, Option<backend::Compute>)> {
    let name = src.name(sets);
    let named = |e: &dyn std::fmt::Display| format!("{name}: {e}");
    let cfg: TrainConfig = src
        .load_filled(sets, ntk_train::config::fill_defaults)
        .map_err(|e| {
            TrainConfig::beside_onnx(src, sets).map_or_else(|| e.to_string(), |n| named(&n))
        })?;
    let mut cfg = cfg
        .with_data_defaults(Given::of_source(src, sets)?)
        .map_err(|e| named(&e))?;
    let compute = match cfg.onnx {
        Some(_) => {
            let t = &cfg.train;
            let compute = backend::select(t.backend.as_deref(), t.precision)?;
            cfg.read_onnx(&compute).map_err(|e| named(&e))?;
            Some(compute)
        }
        None => None,
    };
    refuse_axis_overrides(&cfg, sets, src)?;
    if warn {
        for w in cfg.warnings() {
            eprintln!("warning: {name}: {w}");
        }
    }
    cfg.validate_as_written().map_err(|e| named(&e))?;
    Ok((cfg, compute))
}

/// An override of a key that a sweep axis sets for every run would be silently dropped: it
/// is an error naming the axis instead (in `sweep`, `run` and `collect --config`: eleventh
/// hostile round, V03). The config is named alone only where its file sets the axis
/// (fifty-eighth hostile round, D4).
fn refuse_axis_overrides(
    cfg: &TrainConfig,
    sets: &[Assignment],
    src: &overrides::Source,
) -> CliResult<()> {
    let Some(axes) = &cfg.sweep else {
        return Ok(());
    };
    let families = !axes.families.is_empty();
    let clashes = [
        (
            &["model.depth", "resnet.depth"][..],
            "sweep.depths",
            !axes.depths.is_empty(),
        ),
        (&["optim.lr"], "sweep.lrs", !axes.lrs.is_empty()),
        (
            &["model.seed", "resnet.seed", "train.seed"],
            "sweep.seeds",
            !axes.seeds.is_empty(),
        ),
        // A ResNet's too (sixty-fifth hostile round: `--set resnet.activation`, and
        // `--activation` once it set it, were dropped under a normalized ResNet's axis).
        (
            &["model.activation", "resnet.activation"],
            "sweep.activations / sweep.families",
            !axes.activations.is_empty() || families,
        ),
        (
            &["model.normalization"],
            "sweep.normalizations / sweep.families",
            !axes.normalizations.is_empty() || families,
        ),
        (
            &["resnet.variant"],
            "sweep.variants",
            !axes.variants.is_empty(),
        ),
    ];
    for a in sets {
        for (keys, axis, set) in &clashes {
            // A table's `--set` sets each key in it (ninety-seventh hostile round, D1).
            if *set && a.leaves().iter().any(|k| keys.contains(&k.as_str())) {
                let flag = a.origin.split(' ').next().unwrap_or_default();
                let what = if flag == "--set" { "override" } else { "flag" };
                let name = overrides::ConfigName {
                    overridden: axis.split(" / ").any(|k| src.name_for(sets, k).overridden),
                    ..src.name(sets)
                };
                return Err(format!(
                    "{}: {name} sets this for every run of its sweep ({axis}), so the {what} \
                     would be ignored; edit {axis} instead",
                    if flag == "--set" { &a.origin } else { flag },
                )
                .into());
            }
        }
    }
    Ok(())
}

/// Which command runs a config: `run` (no `[sweep]`), `sweep` (a `[sweep]`), or either (no
/// subcommand: `ntk-train --config FILE`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Run,
    Sweep,
    Either,
}

/// `ntk-train run`: [`train_cmd`] for a config without `[sweep]`.
pub(crate) fn run_cmd(a: RunArgs) -> CliResult<()> {
    let sweep = SweepFlags {
        run: a.run,
        shard: None,
        allow_mixed: false,
    };
    train_cmd(SweepArgs { sweep, own: a.own }, Kind::Run)
}

/// `ntk-train run`, `sweep`, or `--config` alone: the config's runs planned and checked (the
/// command, the memory, the output directory), then shown (`--dry-run`) or trained, and the
/// sweep's tables and figures collected.
pub(crate) fn train_cmd(args: SweepArgs, kind: Kind) -> CliResult<()> {
    let flags = &args.sweep.run;
    let (cfg, compute, name) = load(flags, &args.own)?;
    let path = flags.config.as_deref().unwrap_or(Path::new("-"));
    check_kind(kind, cfg.sweep.is_some(), path, !flags.set.is_empty())?;
    let mut tool = TrainCommand {
        points: sweep::expand(&cfg).map_err(|e| format!("{name}: {e}"))?,
        cfg: &cfg,
        flags,
        allow_mixed: args.sweep.allow_mixed,
        compute,
        name,
    };
    let out_dir = cfg.out_dir(flags.out.as_deref());
    // One run may join a collected training sweep's runs/; a sweep may not.
    let output = match cfg.sweep {
        None => ntk_files::outset::Output::TrainingRun,
        Some(_) => ntk_files::outset::Output::Other,
    };
    let call = Invocation {
        out: &out_dir,
        output,
        shard: args.sweep.shard.as_deref(),
        dry_run: flags.dry_run,
        config: path,
    };
    run_command(&mut tool, call)?;
    Ok(())
}

/// The trainer's steps of the sweep command ([`run_command`]).
struct TrainCommand<'a> {
    cfg: &'a TrainConfig,
    points: Vec<sweep::RunPoint>,
    flags: &'a RunFlags,
    allow_mixed: bool,
    /// The backend and precision, chosen by [`SweepCommand::check`] (or by [`load`], which
    /// reads an ONNX file on it).
    compute: Option<backend::Compute>,
    /// The config as messages name it.
    name: ConfigName,
}

impl TrainCommand<'_> {
    fn compute(&self) -> &backend::Compute {
        self.compute.as_ref().expect("chosen by the checks")
    }

    /// An error of reading the data's files, or of the config against them, names the
    /// config, as its keys' errors do (sixty-fourth and sixty-fifth hostile rounds, N2);
    /// any other error is as it is.
    fn named(&self, e: ntk_train::Error) -> StepError {
        match e {
            ntk_train::Error::Data(_)
            | ntk_train::Error::TestSet { .. }
            | ntk_train::Error::AgainstData(_) => format!("{}: {e}", self.name).into(),
            e => e.into(),
        }
    }
}

impl SweepCommand for TrainCommand<'_> {
    type Ran = sweep::SweepOutcome;
    type Collected = Vec<std::path::PathBuf>;

    fn check(&mut self, out: &Path) -> Result<(), StepError> {
        let dim = ntk_data::inputs::expected_dim(&self.cfg.data)?;
        for point in &self.points {
            ntk_train::budget::check_memory(&point.cfg, dim, self.flags.max_memory.as_deref())?;
        }
        // The directories must be the tools' own (a dry run fails here exactly as a run would).
        sweep::check_out(out, &self.points)?;
        sweep::check_inputs_outside(self.cfg, out)?;
        sweep::check_untracked(out, &self.points)?;
        // Several outputs are predicted through their summed kernel, an approximation at
        // finite width that docs alone said (hundred-and-thirty-third hostile round, second
        // review, N2: 1.3-1.7x off in the first step's decrease, read as the theory failing).
        let outputs = self
            .points
            .iter()
            .filter(|p| p.cfg.prediction.is_some())
            .filter_map(|p| p.cfg.spec().ok())
            .map(|s| s.classes())
            .max();
        if let Some(k) = outputs.filter(|k| *k >= 2) {
            eprintln!(
                "note: [prediction]: the network has {k} outputs: each is predicted with the NTK \
                 summed over the outputs and divided by {k} (the block-diagonal approximation, \
                 exact at infinite width; at finite width the outputs' kernels differ and the \
                 prediction with them); predicted_spectrum.csv's outputs column says it"
            );
        }
        if self.compute.is_none() {
            let train = &self.cfg.train;
            self.compute = Some(backend::select(train.backend.as_deref(), train.precision)?);
        }
        Ok(())
    }

    fn dry_run(&self, out: &Path, shard: Shard) -> Result<(), StepError> {
        let dry = sweep::DryRunFlags {
            resume: self.flags.resume,
            recompute: self.flags.recompute,
            allow_mixed: self.allow_mixed,
        };
        sweep::dry_run(self.cfg, out, shard, self.compute(), dry).map_err(|e| self.named(e))?;
        // The run warns of a rate above the stability limit from the kernel it forms; the
        // dry run forms none, and says so (ninety-fourth hostile round, N8).
        if self.points.iter().any(|p| p.cfg.prediction.is_some()) {
            eprintln!(
                "note: [prediction]: the run checks optim.lr against the stability limit \
                 2n/lambda_max of the NTK at initialization, which a dry run does not form"
            );
        }
        Ok(())
    }

    fn size(&self) -> (usize, &'static str) {
        (self.points.len(), "run")
    }

    fn fingerprint(&self) -> String {
        sweep::fingerprint(&self.points)
    }

    fn run(
        &mut self,
        out: &Path,
        shard: Shard,
    ) -> Result<(Self::Ran, Option<StepError>), StepError> {
        let opts = sweep::SweepOptions {
            run: RunOptions {
                resume: self.flags.resume,
                stop_after: None,
            },
            recompute: self.flags.recompute,
            allow_mixed: self.allow_mixed,
        };
        let reporter = Reporter::default();
        let mut outcome = sweep::run(self.cfg, out, shard, self.compute(), opts, &reporter)
            .map_err(|e| self.named(e))?;
        let failed = outcome.check.take().map(StepError::from);
        Ok((outcome, failed))
    }

    fn left_to_other_shards(&self, ran: &Self::Ran) -> usize {
        ran.left_to_other_shards
    }

    /// The rate choice reads every seed's runs (hundred-and-forty-first hostile round, N1:
    /// a shard's note spoke of figures it had not drawn).
    fn waits_for_them(&self) -> Option<&'static str> {
        Some("best.csv, compare.csv and the figures (one curve per configuration at its chosen lr)")
    }

    fn unfinished_elsewhere(&self, ran: &Self::Ran) -> usize {
        ran.unfinished_elsewhere
    }

    fn collect(&self, out: &Path) -> Result<Self::Collected, StepError> {
        // The config's runs, so that best.csv waits for those of other shards or not made
        // yet, as `collect --config` does (hundred-and-fortieth hostile round, second
        // review, N1: a shard's tables chose on another seed than the whole sweep's).
        let planned = ntk_train::sweep::planned_runs(self.cfg)?;
        let style = (true, None, ntk_plot::Layout::Screen);
        Ok(ntk_train::report::collect_as(
            out,
            style,
            self.allow_mixed,
            &planned,
        )?)
    }

    fn report(
        &self,
        out: &Path,
        outcome: &Self::Ran,
        written: Option<Self::Collected>,
        failed: bool,
    ) {
        let compute = self.compute();
        println!(
            "{} run(s) trained, {} already finished, {} diverged; backend {} {}; wrote {}",
            outcome.ran,
            outcome.skipped,
            outcome.diverged,
            compute.backend,
            compute.precision,
            match written {
                None if outcome.left_to_other_shards > 0 => {
                    "no tables or figures (not collected yet: see the note)".to_string()
                }
                written => wrote(&written.unwrap_or_default()),
            }
        );
        if !failed && self.points.len() == 1 {
            print_single(out);
        }
    }
}

/// `run` takes a config without `[sweep]`, `sweep` one with it; `--config` alone either.
fn check_kind(kind: Kind, has_sweep: bool, path: &Path, overridden: bool) -> CliResult<()> {
    let p = path.display();
    // A [sweep] table may come from a `--set`, not the file.
    let name = overrides::ConfigName {
        path: path.to_path_buf(),
        overridden,
    };
    let same = if overridden {
        " and the same --set"
    } else {
        ""
    };
    match (kind, has_sweep) {
        (Kind::Run, true) => Err(format!(
            "{name}: has a [sweep] table: run it with `ntk-train sweep --config {p}`{same}"
        )
        .into()),
        (Kind::Sweep, false) => Err(format!(
            "{name}: has no [sweep] table: run it with `ntk-train run --config {p}`{same}"
        )
        .into()),
        _ => Ok(()),
    }
}

/// The tables and figures a sweep's collect wrote, for its last line (no SVG or PDF).
fn wrote(written: &[std::path::PathBuf]) -> String {
    let tables: Vec<String> = written
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e != "svg" && e != "pdf"))
        .map(|p| p.display().to_string())
        .collect();
    if tables.is_empty() {
        "no complete tables and figures (the collect did not finish: see its warning)".to_string()
    } else {
        tables.join(", ")
    }
}

/// A single run's result, in one line.
fn print_single(out: &Path) {
    if let Some(s) = sweep::finished_summary(out) {
        println!(
            "{}: {}; final train loss {}, test accuracy {}",
            s.model,
            s.status,
            s.final_train_loss
                .map_or("-".into(), ntk_train::epoch::loss_text),
            s.final_test_accuracy
                .map_or("-".into(), |a| format!("{a:.4}"))
        );
    }
}

#[cfg(test)]
mod tests {
    use super::wrote;

    /// The sweep's last line names the tables and figures its collect wrote (not the SVG or
    /// PDF copies), and says that none is complete where the collect failed (it may have
    /// written some before its error: eighty-seventh hostile round, D4).
    #[test]
    fn a_failed_collect_says_it_wrote_nothing() {
        assert_eq!(
            wrote(&[]),
            "no complete tables and figures (the collect did not finish: see its warning)"
        );
        let written = [
            "o/sweep.csv",
            "o/train_loss.png",
            "o/train_loss.svg",
            "o/x.pdf",
        ]
        .map(std::path::PathBuf::from);
        assert_eq!(wrote(&written), "o/sweep.csv, o/train_loss.png");
    }
}
