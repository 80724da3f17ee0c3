//! `ntk-train --config FILE`: SGD training runs and sweeps with per-epoch metrics;
//! `ntk-train collect DIR`, `ntk-train plot DIR`, `ntk-train bench`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use ntk_core::backend::{self, Precision};
use ntk_core::overrides::{self, Assignment, Flags};
use ntk_core::sweep::Shard;
use ntk_model::NetSpec;
use ntk_model::{ActivationKind, ResNetConfig, ResNetVariant};
use ntk_train::config::{EngineChoice, TrainConfig};
use ntk_train::progress::Reporter;
use ntk_train::sweep;
use ntk_train::train::RunOptions;

#[derive(Parser)]
#[command(
    name = "ntk-train",
    version,
    about = "SGD training and depth sweeps of NTK-parameterized networks",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Args)]
struct RunArgs {
    /// The TOML config of a run or a sweep.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Output directory (default: train.out, else runs/train).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Continue interrupted runs from their checkpoints.
    #[arg(long)]
    resume: bool,
    /// Run the i-th of N disjoint parts of the sweep (0-based), e.g. 3/8; `slurm`: the part
    /// of this Slurm array task (SLURM_ARRAY_TASK_ID of the array's task count).
    #[arg(long)]
    shard: Option<String>,
    /// Print the expanded sweep, each run's state (new, partial, done, stale), and exit.
    #[arg(long)]
    dry_run: bool,
    /// Train again the runs whose recorded config fingerprint differs from this config
    /// (their old files are removed); without it such runs are an error naming the keys.
    #[arg(long)]
    recompute: bool,
    /// The memory a run may plan for (e.g. 64G; default: the available memory).
    #[arg(long)]
    max_memory: Option<String>,
    /// Override a config key: KEY=VALUE at a dotted key, typed and checked as in the file
    /// (repeatable; after the short flags). VALUE is TOML, other text a string:
    /// --set optim.momentum=0.9 --set schedule.kind=cosine --set data.unit_norm=true
    /// --set ntk.every=1 --set ntk.n=100.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// train.device: the backend, flex, ndarray, wgpu or cuda (also BURN_DEVICE).
    #[arg(long, env = "BURN_DEVICE")]
    device: Option<String>,
    /// train.precision: f32 or f64.
    #[arg(long, value_parser = parse_precision)]
    precision: Option<Precision>,
    /// train.engine: auto, burn or host.
    #[arg(long, value_parser = parse_engine)]
    engine: Option<EngineChoice>,
    /// train.epochs (removes train.iterations).
    #[arg(long, conflicts_with = "iterations")]
    epochs: Option<usize>,
    /// train.iterations (removes train.epochs).
    #[arg(long)]
    iterations: Option<usize>,
    /// optim.lr.
    #[arg(long)]
    lr: Option<f64>,
    /// train.batch_size.
    #[arg(long)]
    batch_size: Option<usize>,
    /// data.n.
    #[arg(long)]
    n: Option<usize>,
    /// train.test_n.
    #[arg(long)]
    test_n: Option<usize>,
    /// model.depth (resnet.depth).
    #[arg(long)]
    depth: Option<usize>,
    /// model.width (resnet.base_width).
    #[arg(long)]
    width: Option<usize>,
    /// model.activation (MLP only).
    #[arg(long, value_parser = parse_activation)]
    activation: Option<ActivationKind>,
    /// model.seed (resnet.seed).
    #[arg(long)]
    seed: Option<u64>,
}

#[derive(Subcommand)]
enum Command {
    /// Merge finished runs of a sweep into DIR/sweep.csv, DIR/best.csv and figures.
    Collect {
        /// The sweep's output directory.
        dir: PathBuf,
        /// Also draw the training loss on a log scale (train_loss_log).
        #[arg(long)]
        log: bool,
        /// Merge runs whose configs differ beyond the sweep axes (refused by default).
        #[arg(long)]
        allow_mixed: bool,
    },
    /// Figures from metrics.csv: training loss (one curve per depth), test accuracy, and the
    /// NTK during training when it was measured.
    Plot {
        /// A run's or a sweep's output directory.
        dir: PathBuf,
        /// Draw the training loss on a log scale.
        #[arg(long)]
        log: bool,
    },
    /// Training throughput of an MLP (samples per second, GFLOP/s, the floor).
    Bench {
        /// Backend: flex, ndarray, wgpu, cuda (also BURN_DEVICE).
        #[arg(long, env = "BURN_DEVICE")]
        device: Option<String>,
        /// f32 or f64.
        #[arg(long, default_value = "f32", value_parser = parse_precision)]
        precision: Precision,
        /// Input dimension of the MLP.
        #[arg(long, default_value_t = 784)]
        input_dim: usize,
        /// Hidden width of the MLP.
        #[arg(long, default_value_t = 512)]
        width: usize,
        /// Depth of the MLP.
        #[arg(long, default_value_t = 10)]
        depth: usize,
        /// Samples per SGD step.
        #[arg(long, default_value_t = 500)]
        batch: usize,
        /// Timed steps.
        #[arg(long, default_value_t = 20)]
        steps: usize,
        /// Time a CIFAR ResNet of this depth (6n+2) instead of the MLP (input 3x32x32).
        #[arg(long)]
        resnet: Option<usize>,
        /// The ResNet's variant: batch_norm, norm_relu, fixup, selu.
        #[arg(long, default_value = "batch_norm")]
        variant: String,
        /// Who computes the step: auto (the host engine for a dense MLP on a CPU backend),
        /// burn or host, as `train.engine`.
        #[arg(long, default_value = "auto", value_parser = parse_engine)]
        engine: EngineChoice,
    },
}

fn parse_precision(s: &str) -> Result<Precision, String> {
    Precision::parse(s).ok_or_else(|| format!("{s}: expected f32 or f64"))
}

fn parse_activation(s: &str) -> Result<ActivationKind, String> {
    ActivationKind::parse(s).ok_or_else(|| {
        let names: Vec<_> = ActivationKind::ALL.iter().map(|k| k.name()).collect();
        format!(
            "{s}: unknown activation; expected one of {}",
            names.join(", ")
        )
    })
}

/// The short flags as the `--set`s they stand for (keys of the network's table: `[model]`
/// or, when the file has one, `[resnet]`), then the `--set`s, in order.
fn assignments(args: &RunArgs, table: &toml::Table) -> CliResult<Vec<Assignment>> {
    let mut f = Flags::for_table(table);
    let usize_flag = |v: Option<usize>| v.map(|x| x as u64);
    f.int("train.epochs", "epochs", usize_flag(args.epochs))?;
    f.int(
        "train.iterations",
        "iterations",
        usize_flag(args.iterations),
    )?;
    f.int(
        "train.batch_size",
        "batch-size",
        usize_flag(args.batch_size),
    )?;
    f.int("data.n", "n", usize_flag(args.n))?;
    f.int("train.test_n", "test-n", usize_flag(args.test_n))?;
    f.network(
        usize_flag(args.depth),
        usize_flag(args.width),
        args.seed,
        args.activation.map(|a| a.name()),
    )?;
    // --epochs and --iterations replace each other.
    if let Some(e) = args.epochs {
        f.push(Assignment::remove(
            "train.iterations",
            format!("--epochs {e}"),
        ));
    }
    if let Some(i) = args.iterations {
        f.push(Assignment::remove(
            "train.epochs",
            format!("--iterations {i}"),
        ));
    }
    if let Some(lr) = args.lr {
        f.push(Assignment::set("optim.lr", lr, format!("--lr {lr}")));
    }
    f.text(
        "train.precision",
        "precision",
        args.precision.map(|p| p.name()),
    );
    let engine = args.engine.map(|e| match e {
        EngineChoice::Auto => "auto",
        EngineChoice::Burn => "burn",
        EngineChoice::Host => "host",
    });
    f.text("train.engine", "engine", engine);
    f.text("train.device", "device", args.device.as_deref());
    Ok(f.finish(&args.set)?)
}

/// The config of `--config` with the overrides applied, validated as the file is.
fn load(args: &RunArgs) -> CliResult<TrainConfig> {
    let path = args
        .config
        .as_ref()
        .ok_or("--config FILE is required (or a subcommand: collect, plot, bench)")?;
    let sets = assignments(args, &overrides::read_table(path)?)?;
    let cfg: TrainConfig = overrides::load(path, &sets)?;
    refuse_axis_overrides(&cfg, &sets, path)?;
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
            &["model.seed", "resnet.seed"],
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

fn run(args: RunArgs) -> CliResult<()> {
    let cfg = load(&args)?;
    let out = ntk_core::outset::resolve_out(&cfg.out_dir(args.out.as_deref()))?;
    let shard = match &args.shard {
        Some(s) => Shard::parse(s)?,
        None => Shard::all(),
    };
    let points = sweep::expand(&cfg)?;
    let dim = ntk_data::inputs::expected_dim(&cfg.data);
    for point in &points {
        ntk_train::train::check_memory(&point.cfg, dim, args.max_memory.as_deref())?;
    }
    // The directories must be the tools' own (a dry run fails here exactly as a run would).
    sweep::check_out(&out, &points)?;
    let compute = backend::select(cfg.train.device.as_deref(), cfg.train.precision)?;
    if args.dry_run {
        return Ok(sweep::dry_run(&cfg, &out, shard, &compute)?);
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
    ntk_core::outset::check_writable(&out)?;
    let _claim = ntk_core::lock::SweepClaim::acquire(
        &out,
        &sweep::fingerprint(&cfg),
        &format!(
            "config {}",
            args.config.as_deref().unwrap_or(Path::new("-")).display()
        ),
    )?;
    let reporter = Reporter::default();
    let opts = sweep::SweepOptions {
        run: RunOptions {
            resume: args.resume,
            stop_after: None,
        },
        recompute: args.recompute,
    };
    let mut outcome = sweep::run(&cfg, &out, shard, &compute, opts, &reporter)?;
    let written = match ntk_train::report::collect(&out, true, false) {
        // Runs failed: the sweep's error below names them; what collect says is a warning.
        Err(e) if outcome.check.is_some() => {
            eprintln!("warning: collect: {e}");
            Vec::new()
        }
        other => other?,
    };
    println!(
        "{} run(s) trained, {} already finished, {} diverged; backend {} {}; wrote {}",
        outcome.ran,
        outcome.skipped,
        outcome.diverged,
        compute.backend,
        compute.precision,
        written
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e != "svg"))
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
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
        None => run(cli.run),
        Some(Command::Collect {
            dir,
            log,
            allow_mixed,
        }) => {
            for p in ntk_train::report::collect(&dir, log, allow_mixed)? {
                println!("wrote {}", p.display());
            }
            Ok(())
        }
        Some(Command::Plot { dir, log }) => {
            let runs = ntk_train::report::read_runs(&dir)?;
            let written = ntk_train::report::figures(&dir, &runs, log)?;
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
            let peak = ntk_core::bench::peak_gflops(precision);
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
                ntk_core::linalg::BACKEND,
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

fn parse_engine(s: &str) -> Result<EngineChoice, String> {
    match s {
        "auto" => Ok(EngineChoice::Auto),
        "burn" => Ok(EngineChoice::Burn),
        "host" => Ok(EngineChoice::Host),
        other => Err(format!("{other}: expected auto, burn or host")),
    }
}

/// What the command returns: an error of the library (typed) or of the command line (a
/// message), printed as `error: MESSAGE` with exit code 2.
type CliResult<T> = Result<T, Box<dyn std::error::Error>>;

/// The system allocator, wrapped so that an allocation that still fails (under a limit the
/// memory guard did not foresee) is an error with exit code 2, not an abort
/// ([`ntk_core::oom`]).
#[global_allocator]
static GLOBAL: ntk_core::oom::ExitOnOom<std::alloc::System> =
    ntk_core::oom::ExitOnOom(std::alloc::System);

fn main() -> ExitCode {
    // A Slurm task uses the cores it was given (SLURM_CPUS_PER_TASK), before any thread.
    ntk_core::slurm::use_cpus_per_task();
    ntk_core::cli::restore_sigpipe();
    ntk_core::cli::set_panic_hook("ntk-train");
    match main_inner(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
