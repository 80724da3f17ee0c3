//! `ntk-probe`: the empirical NTK of a configured network on a data set, its spectrum and
//! angles, sweeps, the papers' figures and the benchmark. See the README for the commands;
//! each subcommand is a module of [`cmd`].

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

use cmd::activations::ActivationsArgs;
use cmd::bench::BenchArgs;
use cmd::fig1::Fig1Args;
use cmd::gmap::GmapArgs;
use cmd::onnx::OnnxArgs;
use cmd::run::NtkArgs;
use cmd::sweep::SweepArgs;
use cmd::theory::TheoryArgs;
use cmd::transfer::TransferArgs;

#[derive(Parser)]
#[command(
    name = "ntk-probe",
    version,
    long_version = long_version(),
    about = "Empirical NTK, its spectrum and angles"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// `--version`: the version and the features this binary was built with (`features: flex
/// wgpu cusolver`; [`ntk_cli::cli::long_version`]).
fn long_version() -> &'static str {
    let mut features = ntk_numerics::backend::features();
    if cfg!(feature = "cusolver") {
        features.push("cusolver");
    }
    let linalg = match ntk_numerics::linalg::load() {
        Ok(library) => library.report(),
        Err(e) => format!("error: {e}"),
    };
    ntk_cli::cli::long_version(env!("CARGO_PKG_VERSION"), &features, &linalg)
}

#[derive(Subcommand)]
enum Command {
    /// Compute the NTK of one network on one data set and write OUT/summary.json,
    /// inputs.npy, ntk.npy, eigenvalues.npy (`ntk` is the same command).
    #[command(visible_alias = "ntk")]
    Run(NtkArgs),
    /// Compute the NTK of a network given as an ONNX file (`[onnx] file = "net.onnx"`, a
    /// file from torch.onnx.export with its weights) on one data set; writes
    /// OUT/summary.json, inputs.npy, ntk.npy, eigenvalues.npy.
    Onnx(OnnxArgs),
    /// Time the structured NTK (n = 2000, d = 5, width 512) and the eigensolver.
    Bench(BenchArgs),
    /// Run a depth sweep (Fig. 2): every (activation, depth, seed), both protocols; skips
    /// finished points; then merges into results.csv, summary.csv and the figures.
    Sweep(SweepArgs),
    /// Merge the finished points of a sweep directory into its tables and figures.
    Collect(CollectArgs),
    /// Redraw the figures of a collected sweep from its summary.csv and results.csv alone
    /// (no per-point directories needed, nothing recomputed, the tables left as they are).
    Plot(PlotArgs),
    /// Infinite-width theory: the model-gradient angle phi (Thm 4.4) for theta_in and depth.
    Theory(TheoryArgs),
    /// Fig. 1: phi vs theta_in, theory for L = 1, 2, 5, 10 and measured finite-width points.
    Fig1(Fig1Args),
    /// Agarwal et al.'s Fig. 2: the activations (NormReLU beside SELU by default) on a grid,
    /// with their Gaussian moments and coefficient of non-linearity; writes
    /// OUT/activations.{csv,png,svg,pdf}.
    Activations(ActivationsArgs),
    /// Liu & Hui's Fig. 4: the ReLU embedding-angle map g and its iterates; writes
    /// OUT/gmap.{csv,png,svg,pdf}.
    Gmap(GmapArgs),
    /// Agarwal et al.'s Fig. 6: NormReLU's transfer functions off unit variance (the norm
    /// N(q), its slope, the bias B(q)); writes OUT/transfer.csv and
    /// OUT/transfer_{norm,bias}.{png,svg,pdf}.
    Transfer(TransferArgs),
}

/// mimalloc, keeping freed memory for reuse ([`ntk_probe::freed::keep`]): a sweep allocates and
/// frees the same n x n buffers (kernels, eigensolver copies) for every network, and with
/// glibc each fresh one costs page faults (~15 ms per 2000 x 2000 f64 matrix on the 2-core
/// VM of `experiments/bench`). The synthetic Fig. 2 sweep: ~985k page faults with glibc,
/// ~2k with this. mimalloc also backs its arenas with transparent huge pages, which halved
/// the kernel time of the n = 10,000 NTK (experiments/bench/README.md has the times).
/// Wrapped so that an allocation that still fails (under a limit the memory guard did not
/// foresee) is an error with exit code 2, not an abort ([`ntk_cli::oom`]).
#[global_allocator]
static GLOBAL: ntk_cli::oom::ExitOnOom<mimalloc::MiMalloc> =
    ntk_cli::oom::ExitOnOom(mimalloc::MiMalloc);

/// `mi_option_arena_reserve` (in KiB) in the bundled mimalloc 3 (`mi_option_e`, unnamed by
/// the sys crate). The test below checks its default (1 GiB).
const MI_OPTION_ARENA_RESERVE: libmimalloc_sys::mi_option_t = 23;

/// The arena mimalloc reserves under a finite `RLIMIT_AS`: 64 MiB, whatever the limit.
const ARENA_RESERVE_UNDER_LIMIT_KIB: std::ffi::c_long = 64 * 1024;

/// Under a finite `RLIMIT_AS` (`ulimit -v`), mimalloc reserves its arenas 64 MiB at a time
/// instead of 1 GiB. It reserves 1 GiB at its first allocation only where the limit leaves
/// room for it, so the address space mapped at start grew with the limit itself (201 MiB
/// under `ulimit -v 300000`, 1.2 GiB under 1500000): the `ulimit -v N` that
/// `check_address_space` advised was never enough once followed. Without a limit nothing
/// changes. It runs as a constructor ([`FIXED_ARENA`]): the Rust runtime allocates before
/// `main`, and mimalloc reserves its first arena at the first allocation.
extern "C" fn fixed_arena_under_rlimit() {
    if ntk_runs::budget::rlimit_as().is_some() {
        // SAFETY: setting a mimalloc option is a plain store into its option table.
        unsafe {
            libmimalloc_sys::mi_option_set(MI_OPTION_ARENA_RESERVE, ARENA_RESERVE_UNDER_LIMIT_KIB)
        }
    }
}

/// [`fixed_arena_under_rlimit`] among the process's constructors, before the Rust runtime
/// starts and allocates.
// SAFETY: `.init_array` holds pointers to `extern "C" fn()`s that the loader calls once, with
// no arguments, before `main`: this static is such a pointer. The function it names allocates
// nothing and uses no Rust runtime state: `getrlimit` into a stack struct, then a store into
// mimalloc's option table.
#[used]
#[unsafe(link_section = ".init_array")]
static FIXED_ARENA: extern "C" fn() = fixed_arena_under_rlimit;

/// What a subcommand returns: an error of the library (typed) or of the command line (a
/// message), printed as `error: MESSAGE` with exit code 2.
pub(crate) type CliResult<T> = Result<T, Box<dyn std::error::Error>>;

fn main() {
    ntk_probe::pages::small_pages();
    ntk_probe::freed::keep();
    ntk_runs::budget::set_address_floor(
        ntk_runs::budget::PROBE_ADDRESS_FLOOR,
        ntk_runs::budget::PROBE_PROGRAM_BYTES,
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
    // A bug must still end in one clear line and a non-zero exit, not a backtrace.
    ntk_cli::cli::set_panic_hook("ntk-probe");
    let cli: Cli = ntk_cli::cli::parse();
    ntk_cli::cli::refuse_small_address_space();
    let result = match cli.command {
        Command::Run(a) => cmd::run::ntk(a),
        Command::Onnx(a) => cmd::onnx::onnx_cmd(a),
        Command::Bench(a) => cmd::bench::bench_cmd(a),
        Command::Sweep(a) => cmd::sweep::sweep_cmd(a),
        Command::Collect(a) => cmd::collect::collect_cmd(a),
        Command::Plot(a) => cmd::plot::plot_cmd(a),
        Command::Theory(a) => cmd::theory::theory_cmd(a),
        Command::Fig1(a) => cmd::fig1::fig1_cmd(a),
        Command::Activations(a) => cmd::activations::activations_cmd(a),
        Command::Gmap(a) => cmd::gmap::gmap_cmd(a),
        Command::Transfer(a) => cmd::transfer::transfer_cmd(a),
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

#[cfg(test)]
mod tests {
    #[test]
    fn the_purge_delay_option_is_the_one_we_set() {
        // SAFETY: reading a mimalloc option.
        let delay =
            unsafe { libmimalloc_sys::mi_option_get(ntk_probe::freed::MI_OPTION_PURGE_DELAY) };
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            assert_eq!(delay, 1000, "mimalloc's option numbering changed");
        }
    }

    #[test]
    fn the_arena_reserve_option_is_the_one_we_set() {
        // SAFETY: reading a mimalloc option.
        let kib = unsafe { libmimalloc_sys::mi_option_get(super::MI_OPTION_ARENA_RESERVE) };
        if std::env::var_os("MIMALLOC_ARENA_RESERVE").is_none() {
            assert_eq!(kib, 1024 * 1024, "mimalloc's option numbering changed");
        }
    }
}
