//! `ntk-train --config FILE` (or `run` / `sweep --config FILE`): SGD training runs and
//! sweeps with per-epoch metrics; `ntk-train collect DIR`, `ntk-train plot DIR`,
//! `ntk-train bench`. The flags both tools share: `ntk_runs::args`.

use std::path::Path;

use clap::{Args, Parser, Subcommand};
use ntk_model::NetSpec;
use ntk_model::{ResNetConfig, ResNetVariant};
use ntk_numerics::backend::{self, Precision};
use ntk_runs::args::{self, CollectArgs, PlotArgs, RunFlags, SweepFlags};
use ntk_runs::overrides::{self, Assignment};
use ntk_runs::sweep::Shard;
use ntk_train::config::{EngineChoice, Given, TrainConfig};
use ntk_train::progress::Reporter;
use ntk_train::sweep;
use ntk_train::train::RunOptions;

#[derive(Parser)]
#[command(
    name = "ntk-train",
    version,
    long_version = long_version(),
    about = "SGD training and depth sweeps of NTK-parameterized networks",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Without a subcommand: `run` or `sweep`, as the config says (`[sweep]` or not).
    #[command(flatten)]
    run: SweepArgs,
}

/// `ntk-train run`: one training run.
#[derive(Args)]
struct RunArgs {
    #[command(flatten)]
    run: RunFlags,
    #[command(flatten)]
    own: TrainFlags,
}

/// `ntk-train sweep`: the runs of a config's `[sweep]`.
#[derive(Args)]
struct SweepArgs {
    #[command(flatten)]
    sweep: SweepFlags,
    #[command(flatten)]
    own: TrainFlags,
}

/// The short flags of the trainer's own keys, beside those both tools take
/// ([`ntk_runs::args::KeyFlags`]).
#[derive(Args)]
struct TrainFlags {
    /// train.engine: auto, burn, host or cudnn.
    #[arg(long, value_parser = ntk_runs::names::parse_arg::<EngineChoice>)]
    engine: Option<EngineChoice>,
    /// train.epochs (removes train.iterations).
    #[arg(long, conflicts_with = "iterations")]
    epochs: Option<usize>,
    /// train.iterations (removes train.epochs).
    #[arg(long)]
    iterations: Option<usize>,
    /// optim.lr (a negative value is read, then refused as the config's check refuses it).
    #[arg(long, allow_negative_numbers = true)]
    lr: Option<f64>,
    /// train.batch_size.
    #[arg(long)]
    batch_size: Option<usize>,
    /// train.test_n.
    #[arg(long)]
    test_n: Option<usize>,
}

#[derive(Subcommand)]
enum Command {
    /// One training run: a config without `[sweep]`; writes OUT/summary.json, metrics.csv,
    /// checkpoints and figures.
    Run(RunArgs),
    /// The runs of a config's `[sweep]` (skipping those this config finished), then their
    /// tables (sweep.csv, best.csv) and figures.
    Sweep(SweepArgs),
    /// Merge finished runs of a sweep into DIR/sweep.csv, DIR/best.csv and figures.
    Collect(CollectArgs),
    /// Figures from metrics.csv: training loss (one curve per depth), test accuracy, and the
    /// NTK during training when it was measured.
    Plot(PlotArgs),
    /// Training throughput of an MLP (samples per second, GFLOP/s, the floor).
    Bench {
        /// Backend: flex, ndarray, wgpu, cuda (also BURN_DEVICE).
        #[arg(long, env = "BURN_DEVICE")]
        device: Option<String>,
        /// f32 or f64.
        #[arg(long, default_value = "f32", value_parser = ntk_runs::names::parse_arg::<Precision>)]
        precision: Precision,
        /// Input dimension of the MLP; at least 1.
        #[arg(long, default_value_t = 784, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
        input_dim: usize,
        /// Hidden width of the MLP; at least 1.
        #[arg(long, default_value_t = 512, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
        width: usize,
        /// Depth of the MLP.
        #[arg(long, default_value_t = 10)]
        depth: usize,
        /// Samples per SGD step; at least 1.
        #[arg(long, default_value_t = 500, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
        batch: usize,
        /// Timed steps; at least 1.
        #[arg(long, default_value_t = 20, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
        steps: usize,
        /// Time a CIFAR ResNet of this depth (6n+2) instead of the MLP (input 3x32x32).
        #[arg(long)]
        resnet: Option<usize>,
        /// The ResNet's variant: batch_norm, norm_relu, fixup, selu.
        #[arg(long, default_value = "batch_norm")]
        variant: String,
        /// Who computes the step, as `train.engine`: auto (the cuDNN device engine for a
        /// ResNet where it starts, else the host engine on a CPU backend), burn, host or
        /// cudnn (built with --features cudnn).
        #[arg(long, default_value = "auto", value_parser = ntk_runs::names::parse_arg::<EngineChoice>)]
        engine: EngineChoice,
    },
}

/// `--version`: the version and the features this binary was built with (`features: flex
/// cudnn`; [`ntk_runs::cli::long_version`]).
fn long_version() -> &'static str {
    let mut features = ntk_numerics::backend::features();
    if cfg!(feature = "cudnn") {
        features.push("cudnn");
    }
    ntk_runs::cli::long_version(env!("CARGO_PKG_VERSION"), &features)
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
            let engine = own.engine.map(|e| match e {
                EngineChoice::Auto => "auto",
                EngineChoice::Burn => "burn",
                EngineChoice::Host => "host",
                EngineChoice::Cudnn => "cudnn",
            });
            f.text("train.engine", "engine", engine);
            Ok(())
        },
    )?)
}

/// The config of `--config` with the overrides applied, validated as the file is.
fn load(flags: &RunFlags, own: &TrainFlags) -> CliResult<TrainConfig> {
    let path = flags
        .config
        .as_ref()
        .ok_or("--config FILE is required (or a subcommand: run, sweep, collect, plot, bench)")?;
    let sets = assignments(flags, own, &overrides::read_table(path)?)?;
    let cfg: TrainConfig = overrides::load_filled(path, &sets, ntk_data::config::fill_file_n)?;
    let cfg = cfg
        .with_data_defaults(Given::of_file(path, &sets)?)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    refuse_axis_overrides(&cfg, &sets, path)?;
    for w in cfg.warnings() {
        eprintln!("warning: {}: {w}", path.display());
    }
    cfg.validate().map_err(|e| {
        if sets.is_empty() {
            format!("{}: {e}", path.display())
        } else {
            format!("{} (with overrides): {e}", path.display())
        }
    })?;
    Ok(cfg)
}

/// An override of a key that a sweep axis sets for every run would be silently dropped: it
/// is an error naming the axis instead.
fn refuse_axis_overrides(
    cfg: &TrainConfig,
    sets: &[Assignment],
    path: &std::path::Path,
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
        (
            &["model.activation"],
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
            if *set && keys.contains(&a.key.as_str()) {
                let flag = a.origin.split(' ').next().unwrap_or_default();
                let what = if flag == "--set" { "override" } else { "flag" };
                return Err(format!(
                    "{}: {} sets this for every run of its sweep ({axis}), so the {what} would \
                     be ignored; edit {axis} instead",
                    if flag == "--set" { &a.origin } else { flag },
                    path.display()
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
enum Kind {
    Run,
    Sweep,
    Either,
}

fn run(args: SweepArgs, kind: Kind) -> CliResult<()> {
    let flags = &args.sweep.run;
    let cfg = load(flags, &args.own)?;
    let path = flags.config.as_deref().unwrap_or(Path::new("-"));
    match (kind, cfg.sweep.is_some()) {
        (Kind::Run, true) => {
            return Err(format!(
                "{}: has a [sweep] table: run it with `ntk-train sweep --config {0}`",
                path.display()
            )
            .into());
        }
        (Kind::Sweep, false) => {
            return Err(format!(
                "{}: has no [sweep] table: run it with `ntk-train run --config {0}`",
                path.display()
            )
            .into());
        }
        _ => {}
    }
    let out = ntk_runs::outset::resolve_out(&cfg.out_dir(flags.out.as_deref()))?;
    let shard = match &args.sweep.shard {
        Some(s) => Shard::parse(s)?,
        None => Shard::all(),
    };
    let points = sweep::expand(&cfg)?;
    let dim = ntk_data::inputs::expected_dim(&cfg.data)?;
    for point in &points {
        ntk_train::budget::check_memory(&point.cfg, dim, flags.max_memory.as_deref())?;
    }
    // The directories must be the tools' own (a dry run fails here exactly as a run would).
    sweep::check_out(&out, &points)?;
    let compute = backend::select(cfg.train.device.as_deref(), cfg.train.precision)?;
    if flags.dry_run {
        let dry = sweep::DryRunFlags {
            resume: flags.resume,
            recompute: flags.recompute,
        };
        return Ok(sweep::dry_run(&cfg, &out, shard, &compute, dry)?);
    }
    if !(0..points.len()).any(|p| shard.owns(p)) {
        println!(
            "shard {}/{} owns none of the {} run(s): nothing to do",
            shard.index,
            shard.count,
            points.len()
        );
        return Ok(());
    }
    ntk_runs::outset::check_writable(&out)?;
    let _claim = ntk_runs::lock::SweepClaim::acquire(
        &out,
        &sweep::fingerprint(&cfg),
        &format!("config {}", path.display()),
    )?;
    let reporter = Reporter::default();
    let opts = sweep::SweepOptions {
        run: RunOptions {
            resume: flags.resume,
            stop_after: None,
        },
        recompute: flags.recompute,
    };
    let mut outcome = sweep::run(&cfg, &out, shard, &compute, opts, &reporter)?;
    let written = match ntk_train::report::collect(&out, true, args.sweep.allow_mixed, None) {
        // Runs failed: the sweep's error below names them; what collect says is a warning.
        Err(e) if outcome.check.is_some() => {
            eprintln!("warning: collect: {e}");
            Vec::new()
        }
        other => other?,
    };
    let tables: Vec<String> = written
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e != "svg" && e != "pdf"))
        .map(|p| p.display().to_string())
        .collect();
    let wrote = if tables.is_empty() {
        "no tables or figures (collect failed: see its warning)".to_string()
    } else {
        tables.join(", ")
    };
    println!(
        "{} run(s) trained, {} already finished, {} diverged; backend {} {}; wrote {wrote}",
        outcome.ran, outcome.skipped, outcome.diverged, compute.backend, compute.precision,
    );
    if let Some(e) = outcome.check.take() {
        return Err(e.into());
    }
    if points.len() == 1
        && let Some(s) = sweep::finished_summary(&out)
    {
        println!(
            "{}: {}; final train loss {}, test accuracy {}",
            s.model,
            s.status,
            s.final_train_loss.map_or("-".into(), |l| format!("{l:.5}")),
            s.final_test_accuracy
                .map_or("-".into(), |a| format!("{a:.4}"))
        );
    }
    Ok(())
}

fn main_inner(cli: Cli) -> CliResult<()> {
    match cli.command {
        None => run(cli.run, Kind::Either),
        Some(Command::Run(a)) => run(
            SweepArgs {
                sweep: SweepFlags {
                    run: a.run,
                    shard: None,
                    allow_mixed: false,
                },
                own: a.own,
            },
            Kind::Run,
        ),
        Some(Command::Sweep(a)) => run(a, Kind::Sweep),
        Some(Command::Collect(a)) => collect(a),
        Some(Command::Plot(a)) => plot(a),
        Some(Command::Bench {
            device,
            precision,
            input_dim,
            width,
            depth,
            batch,
            steps,
            resnet,
            variant,
            engine,
        }) => {
            let compute = backend::select(device.as_deref(), precision)?;
            let peak = ntk_numerics::bench::peak_gflops(precision);
            let (spec, input_dim) = match resnet {
                Some(d) => {
                    let v: ResNetVariant = serde_json::from_value(serde_json::Value::String(
                        variant.clone(),
                    ))
                    .map_err(|_| {
                        format!(
                            "--variant {variant}: expected batch_norm, norm_relu, fixup or selu"
                        )
                    })?;
                    let r = ResNetConfig::new(d, v);
                    r.validate().map_err(|e| format!("--resnet {d}: {e}"))?;
                    let dim = r.input_dim();
                    (NetSpec::ResNet(r), dim)
                }
                None => (
                    ntk_train::bench::mlp_spec(input_dim, width, depth),
                    input_dim,
                ),
            };
            let r = ntk_train::bench::step(&compute, &spec, engine, input_dim, batch, steps, peak)?;
            println!(
                "{}, batch {}, {} {} ({} engine, host linear algebra {}): {:.4} s/step, {:.0} samples/s, {:.2} GFLOP/step, \
                 {:.1} GFLOP/s ({})",
                r.model,
                r.batch,
                r.backend,
                r.precision,
                r.engine,
                ntk_numerics::linalg::BACKEND,
                r.seconds_per_step,
                r.samples_per_second,
                r.gflop_per_step,
                r.gflops,
                r.floor_seconds_per_step
                    .map_or("no floor: peak of this device unknown".into(), |f| {
                        format!("floor {f:.4} s/step at {peak:.0} GFLOP/s peak")
                    })
            );
            println!("{}", serde_json::to_string(&r).expect("serializes"));
            Ok(())
        }
    }
}

/// `collect DIR`: with `--config`, the runs must be that config's (none made by another
/// config); then the tables and figures.
fn collect(args: CollectArgs) -> CliResult<()> {
    if let Some(path) = &args.config {
        let sets = overrides::parse_all(&args.set)?;
        let cfg: TrainConfig = overrides::load_filled(path, &sets, ntk_data::config::fill_file_n)?;
        let cfg = cfg
            .with_data_defaults(Given::of_file(path, &sets)?)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        cfg.validate()
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let compute = backend::select(cfg.train.device.as_deref(), cfg.train.precision)?;
        sweep::check_collect(&cfg, &args.dir, &compute)?;
    }
    for p in ntk_train::report::collect_as(
        &args.dir,
        args.style.log,
        args.allow_mixed,
        args.style.title.as_deref(),
        args.style.layout,
    )? {
        println!("wrote {}", p.display());
    }
    Ok(())
}

/// `plot DIR`: the figures again from the runs' metrics.
fn plot(args: PlotArgs) -> CliResult<()> {
    let dir = &args.dir;
    let runs = ntk_train::report::read_runs(dir)?;
    let out = args.out.as_deref().unwrap_or(dir);
    std::fs::create_dir_all(out).map_err(|e| format!("{}: cannot create: {e}", out.display()))?;
    let written = ntk_train::report::figures(
        (dir, out),
        &runs,
        args.style.log,
        args.style.title.as_deref(),
        args.style.layout,
    )?;
    if written.is_empty() {
        let statuses: Vec<String> = runs
            .iter()
            .map(|r| match &r.summary {
                Some(s) => format!("{} {}", s.status, s.model),
                None => "unfinished".into(),
            })
            .collect();
        return Err(format!(
            "{}: nothing to draw: no run has a finite epoch to plot ({})",
            dir.display(),
            statuses.join(", ")
        )
        .into());
    }
    for p in written {
        println!("wrote {}", p.display());
    }
    Ok(())
}

/// What the command returns: an error of the library (typed) or of the command line (a
/// message), printed as `error: MESSAGE` with exit code 2.
type CliResult<T> = Result<T, Box<dyn std::error::Error>>;

/// The system allocator, wrapped so that an allocation that still fails (under a limit the
/// memory guard did not foresee) is an error with exit code 2, not an abort
/// ([`ntk_runs::oom`]).
#[global_allocator]
static GLOBAL: ntk_runs::oom::ExitOnOom<std::alloc::System> =
    ntk_runs::oom::ExitOnOom(std::alloc::System);

fn main() {
    // A Slurm task uses the cores it was given (SLURM_CPUS_PER_TASK), before any thread.
    ntk_runs::slurm::use_cpus_per_task(ntk_numerics::linalg::set_threads);
    ntk_runs::cli::restore_sigpipe();
    ntk_runs::cli::set_panic_hook("ntk-train");
    let cli = Cli::parse();
    if let Err(e) = ntk_runs::budget::check_address_space() {
        eprintln!("error: {e}");
        ntk_runs::cli::exit(2);
    }
    // Everything is written: the process ends without the exit handlers (`cli::exit`).
    match main_inner(cli) {
        Ok(()) => ntk_runs::cli::exit(0),
        Err(e) => {
            eprintln!("error: {e}");
            ntk_runs::cli::exit(2)
        }
    }
}
