//! `ntk-probe`: the empirical NTK of a configured network on a data set, its spectrum and
//! angles, and the benchmark. See the README for the commands.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use ntk_model::ActivationKind;
use ntk_probe::backend::{self, Precision};
use ntk_probe::bench;
use ntk_probe::config::{Dataset, ProbeConfig, Protocol};
use ntk_probe::inputs;
use ntk_probe::kernel::OutputMode;
use ntk_probe::run::{self, Summary};

#[derive(Parser)]
#[command(
    name = "ntk-probe",
    version,
    about = "Empirical NTK, its spectrum and angles"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Compute the NTK of one network on one data set and write DIR/summary.json,
    /// inputs.npy, ntk.npy, eigenvalues.npy.
    Ntk(NtkArgs),
    /// Time the structured NTK (n = 2000, d = 5, width 512) and the eigensolver.
    Bench(BenchArgs),
}

#[derive(Args)]
struct NtkArgs {
    /// TOML config with [data], [model], [probe].
    #[arg(long)]
    config: PathBuf,
    /// Output directory.
    #[arg(long)]
    out: PathBuf,
    /// Also write DIR/weights.safetensors.
    #[arg(long)]
    save_weights: bool,
    /// Print summary.json to stdout instead of the table.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    overrides: Overrides,
}

/// Command-line overrides of the common config keys.
#[derive(Args)]
struct Overrides {
    /// data.dataset: synthetic, mnist, fashion-mnist, cifar-10, digits.
    #[arg(long)]
    dataset: Option<String>,
    /// data.n.
    #[arg(long)]
    n: Option<usize>,
    /// data.input_dim (synthetic).
    #[arg(long)]
    input_dim: Option<usize>,
    /// model.width.
    #[arg(long)]
    width: Option<usize>,
    /// model.depth.
    #[arg(long)]
    depth: Option<usize>,
    /// model.activation.
    #[arg(long)]
    activation: Option<String>,
    /// model.seed.
    #[arg(long)]
    seed: Option<u64>,
    /// probe.precision: f32 or f64.
    #[arg(long)]
    precision: Option<String>,
    /// probe.protocol: whole or blocks.
    #[arg(long)]
    protocol: Option<String>,
    /// probe.output: sum, full or an output index.
    #[arg(long)]
    output: Option<String>,
    /// Backend (also BURN_DEVICE): one of those built in.
    #[arg(long)]
    device: Option<String>,
}

#[derive(Args)]
struct BenchArgs {
    #[arg(long, default_value_t = 2000)]
    n: usize,
    #[arg(long, default_value_t = 5)]
    input_dim: usize,
    #[arg(long, default_value_t = 512)]
    width: usize,
    #[arg(long, value_delimiter = ',', default_values_t = [1usize, 5, 10])]
    depths: Vec<usize>,
    #[arg(long, value_delimiter = ',', default_values = ["f32", "f64"])]
    precisions: Vec<String>,
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    #[arg(long)]
    device: Option<String>,
    /// Also write the rows as JSON here.
    #[arg(long)]
    out: Option<PathBuf>,
}

fn apply_overrides(cfg: &mut ProbeConfig, o: &Overrides) -> Result<(), String> {
    if let Some(s) = &o.dataset {
        cfg.data.dataset = Dataset::parse(s).ok_or_else(|| {
            format!("--dataset {s}: unknown; expected synthetic, mnist, fashion-mnist, cifar-10 or digits")
        })?;
    }
    if let Some(n) = o.n {
        cfg.data.n = n;
    }
    if let Some(d) = o.input_dim {
        cfg.data.input_dim = Some(d);
    }
    if let Some(w) = o.width {
        cfg.model.width = w;
    }
    if let Some(l) = o.depth {
        cfg.model.depth = l;
    }
    if let Some(a) = &o.activation {
        cfg.model.activation = ActivationKind::parse(a).ok_or_else(|| {
            let names: Vec<_> = ActivationKind::ALL.iter().map(|k| k.name()).collect();
            format!(
                "--activation {a}: unknown activation; expected one of {}",
                names.join(", ")
            )
        })?;
    }
    if let Some(s) = o.seed {
        cfg.model.seed = s;
    }
    if let Some(p) = &o.precision {
        cfg.probe.precision =
            Precision::parse(p).ok_or_else(|| format!("--precision {p}: expected f32 or f64"))?;
    }
    if let Some(p) = &o.protocol {
        cfg.probe.protocol = match p.as_str() {
            "whole" => Protocol::Whole,
            "blocks" => Protocol::Blocks,
            _ => return Err(format!("--protocol {p}: expected whole or blocks")),
        };
    }
    if let Some(s) = &o.output {
        cfg.probe.output = OutputMode::parse(s)
            .ok_or_else(|| format!("--output {s}: expected sum, full or an output index"))?;
    }
    if let Some(d) = &o.device {
        cfg.probe.device = Some(d.clone());
    }
    Ok(())
}

fn fmt_kappa(k: Option<f64>, rank: usize, n: usize) -> String {
    match k {
        Some(k) => format!("{k:.6e}"),
        None => format!("inf (singular: rank {rank} of {n})"),
    }
}

fn print_table(s: &Summary) {
    let size = if s.output == "full" {
        s.rank.max(s.n)
    } else {
        s.n
    };
    println!(
        "NTK  {} | depth {} width {} | {}",
        s.activation, s.depth, s.width, s.data
    );
    println!(
        "     {} {} on {} ({} path, output {}, protocol {})",
        s.precision, s.parameterization, s.backend, s.method, s.output, s.protocol
    );
    println!("  lambda_min          {:.6e}", s.lambda_min);
    println!("  lambda_max          {:.6e}", s.lambda_max);
    println!("  kappa               {}", fmt_kappa(s.kappa, s.rank, size));
    println!(
        "  gram kappa (L = 0)  {}",
        fmt_kappa(s.gram_kappa, s.gram_rank, s.n)
    );
    if let (Some(a), Some([i, j])) = (s.min_grad_angle_deg, s.min_grad_angle_pair) {
        println!("  min grad angle      {a:.4} deg (samples {i}, {j})");
    }
    if let Some(t) = &s.embedding_min_angle_deg {
        let v: Vec<String> = t.iter().map(|v| format!("{v:.3}")).collect();
        println!("  min theta_l (deg)   {}", v.join(" "));
    }
    if let Some(t) = &s.pair_embedding_angles_deg {
        let v: Vec<String> = t.iter().map(|v| format!("{v:.3}")).collect();
        println!("  pair theta_l (deg)  {}", v.join(" "));
    }
    if let Some(p) = s.pair_grad_angle_deg {
        println!("  pair grad angle     {p:.4} deg");
    }
    println!(
        "  seconds             {:.3} (kernel {:.3}, eigenvalues {:.3})",
        s.seconds, s.kernel_seconds, s.eigen_seconds
    );
}

fn ntk(args: NtkArgs) -> Result<(), String> {
    let mut cfg = ProbeConfig::load(&args.config)?;
    apply_overrides(&mut cfg, &args.overrides)?;
    cfg.validate()
        .map_err(|e| format!("{}: {e}", args.config.display()))?;
    run::check_writable(&args.out)?;
    let inputs = inputs::load(&cfg.data)?;
    let compute = backend::select(cfg.probe.device.as_deref(), cfg.probe.precision)?;
    let summary = run::run(&cfg, &inputs, &compute, Some(&args.out), args.save_weights)?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&summary).expect("serializes")
        );
    } else {
        print_table(&summary);
        println!(
            "  wrote {}/{{summary.json, inputs.npy, ntk.npy, eigenvalues.npy}}",
            args.out.display()
        );
    }
    Ok(())
}

fn bench_cmd(args: BenchArgs) -> Result<(), String> {
    let mut rows = Vec::new();
    println!(
        "{:>5} {:>4} {:>5} {:>5} {:>4} {:>8} {:>6} {:>8} {:>9} {:>8} {:>8} {:>9}",
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
        "eigen s"
    );
    for p in &args.precisions {
        let precision =
            Precision::parse(p).ok_or_else(|| format!("--precisions {p}: expected f32 or f64"))?;
        let compute = backend::select(args.device.as_deref(), precision)?;
        for &depth in &args.depths {
            let r = bench::bench_one(
                &compute,
                args.n,
                args.input_dim,
                args.width,
                depth,
                args.repeats,
            );
            println!(
                "{:>5} {:>4} {:>5} {:>5} {:>4} {:>8} {:>6} {:>8.2} {:>9.3} {:>8.1} {:>8.3} {:>9.3}",
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
                r.floor_seconds,
                r.eigen_seconds
            );
            rows.push(r);
        }
    }
    if let Some(path) = &args.out {
        let json = serde_json::to_string_pretty(&rows).expect("serializes");
        ntk_model::io::atomic_write(path, json.as_bytes())
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

fn main() -> ExitCode {
    // A bug must still end in one clear line and a non-zero exit, not a backtrace.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("ntk-probe: internal error: {info}");
    }));
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Ntk(a) => ntk(a),
        Command::Bench(a) => bench_cmd(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
