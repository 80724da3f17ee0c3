//! `ntk-train --config FILE` (or `run` / `sweep --config FILE`): SGD training runs and
//! sweeps with per-epoch metrics; `ntk-train collect DIR`, `ntk-train plot DIR`,
//! `ntk-train bench`. Each subcommand is a module of [`cmd`], as in `ntk-probe`; the flags
//! both tools share: `ntk_cli::args`.

/// This crate's `eprintln!` throughout ([`ntk_system::say`]: a failed write to standard error
/// loses the line, never the process). Defined before every module.
macro_rules! eprintln {
    ($($arg:tt)*) => {
        ::ntk_system::say(::std::format_args!($($arg)*))
    };
}

use clap::{Parser, Subcommand};
use ntk_cli::args::{CollectArgs, PlotArgs};

mod cmd;

use cmd::bench::BenchArgs;
use cmd::run::{Kind, RunArgs, SweepArgs};

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
    Plot(TrainPlotArgs),
    /// Training throughput of an MLP (samples per second, GFLOP/s, the floor).
    Bench(BenchArgs),
}

/// `ntk-train plot`'s arguments: `plot`'s of both tools, and `--allow-mixed` as `collect`
/// takes it: the figures are drawn from the runs themselves, merged as `collect` merges them.
#[derive(clap::Args, Debug)]
pub(crate) struct TrainPlotArgs {
    #[command(flatten)]
    pub plot: PlotArgs,
    /// Draw runs whose configs differ beyond the sweep axes as one configuration (refused
    /// by default, as by `collect`).
    #[arg(long)]
    pub allow_mixed: bool,
}

/// `--version`: the version and the features this binary was built with (`features: flex
/// cudnn`; [`ntk_cli::cli::long_version`]).
fn long_version() -> &'static str {
    let mut features = ntk_numerics::backend::features();
    if cfg!(feature = "cudnn") {
        features.push("cudnn");
    }
    let linalg = match ntk_numerics::linalg::load() {
        Ok(library) => library.report(),
        Err(e) => format!("error: {e}"),
    };
    ntk_cli::cli::long_version(env!("CARGO_PKG_VERSION"), &features, &linalg)
}

/// What the command returns: an error of the library (typed) or of the command line (a
/// message), printed as `error: MESSAGE` with exit code 2.
pub(crate) type CliResult<T> = Result<T, Box<dyn std::error::Error>>;

/// The system allocator, wrapped so that an allocation that still fails (under a limit the
/// memory guard did not foresee) is an error with exit code 2, not an abort
/// ([`ntk_cli::oom`]).
#[global_allocator]
static GLOBAL: ntk_cli::oom::ExitOnOom<std::alloc::System> =
    ntk_cli::oom::ExitOnOom(std::alloc::System);

fn main() {
    ntk_runs::budget::set_address_floor(
        ntk_runs::budget::TRAIN_ADDRESS_FLOOR,
        ntk_runs::budget::TRAIN_PROGRAM_BYTES,
    );
    ntk_cli::cli::refuse_small_address_space();
    ntk_cli::cli::refuse_absurd_thread_counts();
    // The host linear algebra (NTK_BLAS), chosen and loaded once; a bad choice ends here.
    if let Err(e) = ntk_numerics::linalg::load() {
        ntk_cli::cli::print_error(&e);
        ntk_cli::cli::exit(2);
    }
    // A Slurm task uses the cores it was given (SLURM_CPUS_PER_TASK), before any thread.
    ntk_runs::slurm::use_cpus_per_task(ntk_numerics::linalg::set_threads);
    ntk_cli::cli::quiet_sigpipe();
    ntk_cli::cli::set_panic_hook("ntk-train");
    let cli: Cli = ntk_cli::cli::parse();
    ntk_cli::cli::refuse_small_address_space();
    let result = match cli.command {
        None => cmd::run::train_cmd(cli.run, Kind::Either),
        Some(Command::Run(a)) => cmd::run::run_cmd(a),
        Some(Command::Sweep(a)) => cmd::run::train_cmd(a, Kind::Sweep),
        Some(Command::Collect(a)) => cmd::collect::collect_cmd(a),
        Some(Command::Plot(a)) => cmd::plot::plot_cmd(a),
        Some(Command::Bench(a)) => cmd::bench::bench_cmd(a),
    };
    // Everything is written: the process ends without the exit handlers (`cli::exit`).
    match result {
        Ok(()) => ntk_cli::cli::exit(0),
        Err(e) => {
            ntk_cli::cli::print_error(&e);
            ntk_cli::cli::exit(2)
        }
    }
}
