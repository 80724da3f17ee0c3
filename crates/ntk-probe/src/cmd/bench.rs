//! `ntk-probe bench`: the structured NTK and the eigensolver timed.

use crate::CliResult;
use clap::Args;
use ntk_numerics::backend;
use ntk_numerics::backend::Precision;
use ntk_probe::bench;
use ntk_probe::config::Eigen;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub(crate) struct BenchArgs {
    /// Samples (the kernel is n x n); at least 2.
    #[arg(long, default_value_t = 2000, value_parser = ntk_cli::args::count(2))]
    n: usize,
    /// Input dimension of the synthetic inputs; at least 1.
    #[arg(long, default_value_t = 5, value_parser = ntk_cli::args::count(1))]
    input_dim: usize,
    /// Hidden width of the MLP; at least 1.
    #[arg(long, default_value_t = 512, value_parser = ntk_cli::args::count(1))]
    width: usize,
    /// Depths timed, one row each (comma-separated, each once).
    #[arg(long, value_delimiter = ',', default_value = "1,5,10", value_parser = ntk_cli::args::count(0))]
    depths: Vec<usize>,
    /// Precisions timed: f32, f64 (comma-separated, each once).
    #[arg(long, value_delimiter = ',', default_value = "f32,f64")]
    precisions: Vec<String>,
    /// Timed repetitions per row (the best is reported); at least 1.
    #[arg(long, default_value_t = 3, value_parser = ntk_cli::args::count(1))]
    repeats: usize,
    /// Burn's backend (also BURN_DEVICE): one of those built in (`--device`, its name
    /// before 2026-11-29, is the same flag).
    #[arg(long, visible_alias = "device")]
    backend: Option<String>,
    /// `full`: every eigenvalue on the host; `extreme`: lambda_min, lambda_max and kappa
    /// on the compute device (the kernel stays there on GPU backends).
    #[arg(long, default_value = "full")]
    eigen: String,
    /// Also write the rows as JSON here (a new file, or one holding a bench's rows, replaced; never a device,
    /// FIFO or socket, nor a file in a run's, sweep's or output set's directory).
    #[arg(long)]
    out: Option<PathBuf>,
    /// The memory the work may plan for (e.g. 64G; default: the smallest of the available
    /// memory, the cgroup's limit and RLIMIT_AS; also NTK_MAX_MEMORY).
    #[arg(long)]
    max_memory: Option<String>,
}

pub(crate) fn bench_cmd(args: BenchArgs) -> CliResult<()> {
    // The output path is checked before the work (a device or FIFO is never replaced).
    if let Some(path) = &args.out {
        let shown = ntk_runs::quote::controls_escaped(&path.to_string_lossy());
        // A control character (a newline, a tab, an escape) would break every line that
        // names the file, as `plot --out` and a run's `--out` refuse it (hundred-and-ninth
        // hostile round, D3: a newline printed raw in the refusal of a missing directory).
        if path
            .to_string_lossy()
            .chars()
            .any(ntk_files::shown::escaped)
        {
            return Err(format!("--out {shown}: {}", ntk_files::outset::HIDDEN_IN_NAME).into());
        }
        // A trailing slash names a directory, which a file cannot be: said now, not after
        // every row was timed (sixteenth hostile round, D5).
        if path.as_os_str().as_encoded_bytes().ends_with(b"/") {
            return Err(format!(
                "--out {shown}: ends with '/', a directory's name; give the JSON file's path"
            )
            .into());
        }
        ntk_files::io::check_target(path)?;
        // Never a file of a run's, sweep's or output set's directory (fifteenth hostile
        // round, D8: a probe run's summary.json was replaced by the bench's rows).
        ntk_files::outset::check_not_inside_made(path)?;
        check_replaces_bench_rows(path)?;
        // Its directory too: a missing one failed the write after every row was timed
        // (fourteenth hostile round, D2).
        let dir = out_dir(path);
        if !dir.is_dir() {
            // One that exists is no directory to create (hundred-and-tenth hostile round, N4).
            let what = match std::fs::symlink_metadata(dir) {
                Ok(_) => "exists and is not a directory",
                Err(_) => "is not a directory (create it first)",
            };
            return Err(format!("--out {shown}: {} {what}", dir.display()).into());
        }
        // And one this user may write (the file is made there and moved into place), said
        // before the rows are timed (hundred-and-ninth hostile round, N4: "Permission
        // denied" after the whole bench, the flag not named).
        if let Err(e) = ntk_files::outset::check_writable_unmade(dir) {
            let source = match e {
                ntk_files::Error::NotWritable { source, .. }
                | ntk_files::Error::NotWritableAbove { source, .. } => source.to_string(),
                other => other.to_string(),
            };
            return Err(format!(
                "--out {shown}: the directory {} is not writable: {source}",
                dir.display()
            )
            .into());
        }
    }
    let eigen = Eigen::parse(&args.eigen)
        .filter(|e| *e != Eigen::Tiled)
        .ok_or_else(|| {
            format!(
                "--eigen {}: expected full or extreme",
                ntk_runs::quote::controls_escaped(&args.eigen)
            )
        })?;
    ntk_cli::args::distinct("--depths", &args.depths)?;
    // Every depth before the first row is timed, under the flag's name (a depth beyond the
    // limit was refused after the rows before it, as the config field `depth`; fourteenth
    // hostile round, D3).
    if let Some(d) = args.depths.iter().find(|&&d| d > ntk_model::MAX_DEPTH) {
        return Err(format!(
            "--depths {d}: at most {} hidden layers",
            ntk_model::MAX_DEPTH
        )
        .into());
    }
    ntk_cli::args::distinct("--precisions", &args.precisions)?;
    let mut precisions = Vec::new();
    for p in &args.precisions {
        precisions.push(Precision::parse(p).ok_or_else(|| {
            format!(
                "--precisions {}: expected f32 or f64",
                ntk_runs::quote::controls_escaped(p)
            )
        })?);
    }
    // Every row's backend and memory before the first is timed (and before the header: a
    // backend refused after it left a table with no rows; eighth hostile round, B03).
    let mut computes = Vec::new();
    for &precision in &precisions {
        // The flag named, as a run names it (hundred-and-eighth hostile round, N1).
        computes.push(
            backend::select(args.backend.as_deref(), precision).map_err(|e| {
                match &args.backend {
                    Some(flag) => {
                        format!("--backend {}: {e}", ntk_runs::quote::controls_escaped(flag))
                    }
                    None => e.to_string(),
                }
            })?,
        );
        for &depth in &args.depths {
            let size = bench::BenchSize {
                n: args.n,
                d: args.input_dim,
                width: args.width,
                depth,
            };
            bench::check_memory(&size, precision, eigen, args.max_memory.as_deref())?;
        }
    }
    let mut rows = Vec::new();
    println!(
        "host linear algebra: {} (engine host: the structured NTK's GEMMs and the \
         eigensolver)",
        ntk_numerics::linalg::library().describe()
    );
    println!(
        "floor s: the GFLOP at this CPU's peak, measured ({}): {}",
        ntk_numerics::bench::peak_method(),
        precisions
            .iter()
            .map(|&p| format!("{p} {:.0} GFLOP/s", ntk_numerics::bench::peak_gflops(p)))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "{:>6} {:>4} {:>5} {:>5} {:>4} {:>8} {:>6} {:>8} {:>9} {:>8} {:>8} {:>8} {:>9} {:>10}",
        "n",
        "d",
        "width",
        "depth",
        "prec",
        "backend",
        "engine",
        "GFLOP",
        "seconds",
        "GFLOP/s",
        "floor s",
        "eigen",
        "eigen s",
        "kappa"
    );
    for compute in &computes {
        for &depth in &args.depths {
            let r = bench::bench_one(
                compute,
                args.n,
                args.input_dim,
                args.width,
                depth,
                args.repeats,
                eigen,
            )?;
            println!(
                "{:>6} {:>4} {:>5} {:>5} {:>4} {:>8} {:>6} {:>8.2} {:>9.3} {:>8.1} {:>8} {:>8} {:>9.3} {:>10}",
                r.n,
                r.d,
                r.width,
                r.depth,
                r.precision,
                r.backend,
                r.engine,
                r.gflop,
                r.seconds,
                r.gflops_per_s,
                r.floor_seconds.map_or("-".into(), |f| format!("{f:.3}")),
                r.eigen,
                r.eigen_seconds,
                r.kappa.map_or("singular".into(), |k| format!("{k:.4e}"))
            );
            // An f32 kappa with the interval its worst-case bound allows (ninety-fourth
            // hostile round, N9).
            if let Some(low) = r.kappa_low {
                let high = r
                    .kappa_high
                    .map_or("unbounded".into(), |h| format!("{h:.4e}"));
                println!(
                    "       kappa in [{low:.4e}, {high}] by the f32 bound n eps lambda_max \
                     (Weyl; the probe measures the error: ntk-probe run)"
                );
            }
            rows.push(r);
        }
    }
    if let Some(path) = &args.out {
        // A dead writer's leftover of this very file (`rows.json.ntk-tmp-PID`; twenty-ninth
        // hostile round, N1).
        if let Some(name) = path.file_name() {
            ntk_files::outset::clean_dir(out_dir(path), None, &|f: &str| name == f);
        }
        let json = serde_json::to_string_pretty(&rows).expect("serializes");
        ntk_files::io::atomic_write(path, json.as_bytes())
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// The directory `--out FILE` lies in (`.` for a bare file name).
fn out_dir(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// An existing `--out` file is replaced only when it holds a bench's rows (a JSON array of
/// objects with the bench's `gflops_per_s`, or an empty array): a config, a table or any
/// other file given there by mistake stays (twenty-fifth hostile round, N6: a TOML config
/// was replaced by the rows).
fn check_replaces_bench_rows(path: &std::path::Path) -> CliResult<()> {
    let Ok(bytes) = ntk_files::io::read_limited(path, ntk_files::io::TEXT_LIMIT) else {
        return Ok(());
    };
    let rows = serde_json::from_slice::<serde_json::Value>(&bytes).ok();
    let bench = rows
        .as_ref()
        .and_then(serde_json::Value::as_array)
        .is_some_and(|rows| {
            rows.iter()
                .all(|r| r.get("gflops_per_s").is_some() && r.get("seconds").is_some())
        });
    match bench {
        true => Ok(()),
        false => Err(format!(
            "--out {}: holds a file that is not a bench's rows (a JSON array of them); give a \
             new path, or remove the file first",
            path.display()
        )
        .into()),
    }
}
