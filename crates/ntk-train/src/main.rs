//! `ntk-train --config FILE`: SGD training runs and sweeps with per-epoch metrics;
//! `ntk-train collect DIR`, `ntk-train plot DIR`, `ntk-train bench`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use ntk_core::backend::{self, Precision};
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
    /// Run the i-th of N disjoint parts of the sweep (0-based), e.g. 3/8.
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
    /// Backend: flex, ndarray, wgpu, cuda (also BURN_DEVICE).
    #[arg(long, env = "BURN_DEVICE")]
    device: Option<String>,
    /// Override train.precision (f32 or f64).
    #[arg(long, value_parser = parse_precision)]
    precision: Option<Precision>,
    /// Override train.engine (auto, burn or host).
    #[arg(long, value_parser = parse_engine)]
    engine: Option<EngineChoice>,
    /// Override train.epochs.
    #[arg(long, conflicts_with = "iterations")]
    epochs: Option<usize>,
    /// Override train.iterations.
    #[arg(long)]
    iterations: Option<usize>,
    /// Override optim.lr.
    #[arg(long)]
    lr: Option<f64>,
    /// Override train.batch_size.
    #[arg(long)]
    batch_size: Option<usize>,
    /// Override data.n.
    #[arg(long)]
    n: Option<usize>,
    /// Override train.test_n.
    #[arg(long)]
    test_n: Option<usize>,
    /// Override the model's depth.
    #[arg(long)]
    depth: Option<usize>,
    /// Override model.width.
    #[arg(long)]
    width: Option<usize>,
    /// Override model.activation.
    #[arg(long, value_parser = parse_activation)]
    activation: Option<ActivationKind>,
    /// Override the model's seed.
    #[arg(long)]
    seed: Option<u64>,
}

#[derive(Subcommand)]
enum Command {
    /// Merge finished runs of a sweep into DIR/sweep.csv, DIR/best.csv and figures.
    Collect {
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
        dir: PathBuf,
        #[arg(long)]
        log: bool,
    },
    /// Training throughput of an MLP (samples per second, GFLOP/s, the floor).
    Bench {
        #[arg(long, env = "BURN_DEVICE")]
        device: Option<String>,
        #[arg(long, default_value = "f32", value_parser = parse_precision)]
        precision: Precision,
        #[arg(long, default_value_t = 784)]
        input_dim: usize,
        #[arg(long, default_value_t = 512)]
        width: usize,
        #[arg(long, default_value_t = 10)]
        depth: usize,
        #[arg(long, default_value_t = 500)]
        batch: usize,
        #[arg(long, default_value_t = 20)]
        steps: usize,
        /// Time a CIFAR ResNet of this depth (6n+2) instead of the MLP (input 3x32x32).
        #[arg(long)]
        resnet: Option<usize>,
        /// The ResNet's variant: batch_norm, norm_relu, fixup.
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

fn load(args: &RunArgs) -> Result<TrainConfig, String> {
    let path = args
        .config
        .as_ref()
        .ok_or("--config FILE is required (or a subcommand: collect, plot, bench)")?;
    let mut cfg = TrainConfig::load(path)?;
    refuse_axis_overrides(&cfg, args)?;
    let t = &mut cfg.train;
    if let Some(e) = args.engine {
        t.engine = e;
    }
    if let Some(p) = args.precision {
        t.precision = p;
    }
    if let Some(e) = args.epochs {
        (t.epochs, t.iterations) = (Some(e), None);
    }
    if let Some(i) = args.iterations {
        (t.epochs, t.iterations) = (None, Some(i));
    }
    if let Some(b) = args.batch_size {
        t.batch_size = b;
    }
    if let Some(lr) = args.lr {
        cfg.optim.lr = lr;
    }
    if let Some(n) = args.n {
        cfg.data.n = n;
    }
    if let Some(n) = args.test_n {
        cfg.train.test_n = n;
    }
    let mut spec = cfg.spec()?;
    if let Some(d) = args.depth {
        spec = spec.with_depth(d);
    }
    if let Some(a) = args.activation {
        spec = spec.with_activation(a)?;
    }
    if let Some(s) = args.seed {
        spec = spec.with_seed(s);
    }
    if let Some(w) = args.width {
        spec = spec.with_width(w)?;
    }
    cfg.set_spec(&spec);
    cfg.validate()
        .map_err(|e| format!("{} (with overrides): {e}", path.display()))?;
    Ok(cfg)
}

/// A flag for a key that a sweep axis sets for every run would be silently dropped: it is
/// an error naming the axis instead.
fn refuse_axis_overrides(cfg: &TrainConfig, args: &RunArgs) -> Result<(), String> {
    let Some(axes) = &cfg.sweep else {
        return Ok(());
    };
    let clashes = [
        (
            args.depth.is_some(),
            "--depth",
            "sweep.depths",
            !axes.depths.is_empty(),
        ),
        (args.lr.is_some(), "--lr", "sweep.lrs", !axes.lrs.is_empty()),
        (
            args.seed.is_some(),
            "--seed",
            "sweep.seeds",
            !axes.seeds.is_empty(),
        ),
        (
            args.activation.is_some(),
            "--activation",
            "sweep.activations / sweep.families",
            !axes.activations.is_empty() || !axes.families.is_empty(),
        ),
    ];
    for (given, flag, axis, set) in clashes {
        if given && set {
            return Err(format!(
                "{flag}: {} sets this for every run of its sweep ({axis}), so the flag would \
                 be ignored; edit {axis} instead",
                args.config
                    .as_ref()
                    .map_or(String::new(), |p| p.display().to_string())
            ));
        }
    }
    Ok(())
}

fn run(args: RunArgs) -> Result<(), String> {
    let cfg = load(&args)?;
    let out = cfg.out_dir(args.out.as_deref());
    let shard = match &args.shard {
        Some(s) => Shard::parse(s)?,
        None => Shard::all(),
    };
    let points = sweep::expand(&cfg)?;
    let dim = ntk_data::inputs::expected_dim(&cfg.data);
    for point in &points {
        ntk_train::train::check_memory(&point.cfg, dim, args.max_memory.as_deref())?;
    }
    let compute = backend::select(
        args.device.as_deref().or(cfg.train.device.as_deref()),
        cfg.train.precision,
    )?;
    if args.dry_run {
        return sweep::dry_run(&cfg, &out, shard, &compute);
    }
    ntk_core::outset::check_writable(&out)?;
    let reporter = Reporter::default();
    let opts = sweep::SweepOptions {
        run: RunOptions {
            resume: args.resume,
            stop_after: None,
        },
        recompute: args.recompute,
    };
    let outcome = sweep::run(&cfg, &out, shard, &compute, opts, &reporter)?;
    let written = ntk_train::report::collect(&out, true, false)?;
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

fn main_inner(cli: Cli) -> Result<(), String> {
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
            for p in ntk_train::report::figures(&dir, &runs, log)? {
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
                    let v: ResNetVariant =
                        serde_json::from_value(serde_json::Value::String(variant.clone()))
                            .map_err(|_| {
                                format!(
                                    "--variant {variant}: expected batch_norm, norm_relu or fixup"
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

fn main() -> ExitCode {
    ntk_core::cli::restore_sigpipe();
    std::panic::set_hook(Box::new(|info| {
        eprintln!("ntk-train: internal error: {info}")
    }));
    match main_inner(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
