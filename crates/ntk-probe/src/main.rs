//! `ntk-probe`: the empirical NTK of a configured network on a data set, its spectrum and
//! angles, and the benchmark. See the README for the commands.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use ntk_data::inputs;
use ntk_model::ActivationKind;
use ntk_numerics::backend::{self, Precision};
use ntk_probe::bench;
use ntk_probe::config::{Eigen, ProbeConfig};
use ntk_probe::run::{self, Summary};
use ntk_probe::sweep::{self, SweepConfig};
use ntk_runs::args::{self, CollectArgs, PlotArgs, RunFlags, SweepFlags};
use ntk_runs::overrides::{self, Assignment};
use ntk_runs::sweep::Shard;

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
    /// Compute the NTK of one network on one data set and write OUT/summary.json,
    /// inputs.npy, ntk.npy, eigenvalues.npy (`ntk` is the same command).
    #[command(visible_alias = "ntk")]
    Run(NtkArgs),
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
    /// OUT/activations.{csv,png,svg}.
    Activations(ActivationsArgs),
    /// Liu & Hui's Fig. 4: the ReLU embedding-angle map g and its iterates; writes
    /// OUT/gmap.{csv,png,svg}.
    Gmap(GmapArgs),
    /// Agarwal et al.'s Fig. 6: NormReLU's transfer functions off unit variance (the norm
    /// N(q), its slope, the bias B(q)); writes OUT/transfer.csv and
    /// OUT/transfer_{norm,bias}.{png,svg}.
    Transfer(TransferArgs),
}

#[derive(Args)]
struct TransferArgs {
    /// Output directory (the committed figure: --out experiments/agarwal_fig6).
    #[arg(long, default_value = "runs/transfer")]
    out: PathBuf,
    /// Activations to draw: norm_relu, selu, tanh, gelu, relu, linear, relu_squared (the
    /// transfer functions of Fact 1 concern normalized ones: norm_relu, selu).
    #[arg(long, value_delimiter = ',', default_values_t = ["norm_relu".to_string()])]
    activations: Vec<String>,
    /// NormReLU's kink b (default: -1.5907658564, where its scale equals SELU's).
    #[arg(long, allow_negative_numbers = true)]
    kink: Option<f64>,
    /// Left end of the variance grid (> 0; towards 0 NormReLU's bias B rises to 1).
    #[arg(long, default_value_t = 0.25)]
    q_min: f64,
    /// Right end of the variance grid.
    #[arg(long, default_value_t = 4.0)]
    q_max: f64,
    /// Grid points.
    #[arg(long, default_value_t = 376)]
    points: usize,
}

#[derive(Args)]
struct GmapArgs {
    /// Output directory (the committed figure: --out experiments/fig4).
    #[arg(long, default_value = "runs/gmap")]
    out: PathBuf,
    /// Numbers of layers l of the iterates g^l drawn (1 is g itself).
    #[arg(long, value_delimiter = ',', default_values_t = [1usize, 2, 5, 10])]
    depths: Vec<usize>,
}

#[derive(Args)]
struct ActivationsArgs {
    /// Output directory (the committed figure: --out experiments/agarwal_fig2).
    #[arg(long, default_value = "runs/activations")]
    out: PathBuf,
    /// Activations to draw: relu, linear, norm_relu, gelu, tanh, relu_squared, selu.
    #[arg(long, value_delimiter = ',', default_values_t = ["norm_relu".to_string(), "selu".to_string()])]
    activations: Vec<String>,
    /// NormReLU's kink b (default: -1.5907658564, where its scale equals SELU's).
    #[arg(long, allow_negative_numbers = true)]
    kink: Option<f64>,
    /// Left end of the x grid.
    #[arg(long, default_value_t = -4.0, allow_negative_numbers = true)]
    x_min: f64,
    /// Right end of the x grid.
    #[arg(long, default_value_t = 3.0, allow_negative_numbers = true)]
    x_max: f64,
    /// Grid points.
    #[arg(long, default_value_t = 701)]
    points: usize,
}

#[derive(Args)]
struct Fig1Args {
    /// Output directory (the committed figure: --out experiments/fig1).
    #[arg(long, default_value = "runs/fig1")]
    out: PathBuf,
    /// Depths L of the theory curves and the measured points.
    #[arg(long, value_delimiter = ',', default_values_t = [1usize, 2, 5, 10])]
    depths: Vec<usize>,
    /// Widths of the measured networks.
    #[arg(long, value_delimiter = ',', default_values_t = [512usize, 4096])]
    widths: Vec<usize>,
    /// Network seeds averaged per measured point.
    #[arg(long, value_delimiter = ',', default_values_t = [1u64, 32, 111, 555, 666])]
    seeds: Vec<u64>,
    /// Input angles theta_in in degrees.
    #[arg(long, value_delimiter = ',', default_values_t = [5.0f64, 15.0, 30.0, 45.0, 60.0, 90.0, 120.0, 150.0, 175.0])]
    thetas: Vec<f64>,
    /// Activation of the networks and the theory: relu (the paper's Fig. 1), or gelu, tanh,
    /// relu_squared (the later version's Fig. 2), linear, norm_relu, selu.
    #[arg(long, default_value = "relu")]
    activation: String,
    /// Only redraw OUT/fig1.{png,svg} from OUT/fig1.csv (nothing measured; the depths and
    /// widths are the table's).
    #[arg(long, conflicts_with_all = ["depths", "widths", "seeds", "thetas", "activation"])]
    redraw: bool,
}

#[derive(Args)]
struct SweepArgs {
    #[command(flatten)]
    sweep: SweepFlags,
    #[command(flatten)]
    own: ProbeFlags,
}

#[derive(Args)]
struct TheoryArgs {
    /// Input angle(s) theta_in in degrees: one value, a list `5,30,60`, or a range `start:stop:step`.
    #[arg(long, default_value = "5")]
    theta_deg: String,
    /// Depth(s) L: one value, a list, or a range `start:stop:step` (inclusive).
    #[arg(long, default_value = "1")]
    depth: String,
    /// The activation: relu, norm_relu, linear, ... (as model.activation).
    #[arg(long, default_value = "relu")]
    activation: String,
    /// NormReLU's kink b.
    #[arg(long, allow_negative_numbers = true)]
    kink: Option<f64>,
    /// JSON output (key `phi_deg`); several values give CSV unless --json.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct NtkArgs {
    #[command(flatten)]
    run: RunFlags,
    #[command(flatten)]
    own: ProbeFlags,
    /// Also write OUT/weights.safetensors.
    #[arg(long)]
    save_weights: bool,
    /// Print summary.json to stdout instead of the table.
    #[arg(long)]
    json: bool,
}

/// The short flags of the probe's own keys, beside those both tools take
/// ([`ntk_runs::args::KeyFlags`]).
#[derive(Args)]
struct ProbeFlags {
    /// probe.protocol: whole or blocks.
    #[arg(long)]
    protocol: Option<String>,
    /// probe.output: sum, full or an output index.
    #[arg(long)]
    output: Option<String>,
}

impl ProbeFlags {
    /// The `--set`s that `run` (both tools' flags, then these, then `--set`) stands for.
    fn assignments(&self, run: &RunFlags, table: &toml::Table) -> CliResult<Vec<Assignment>> {
        Ok(args::assignments(
            table,
            &run.keys,
            "probe",
            &run.set,
            |f| {
                f.text("probe.protocol", "protocol", self.protocol.as_deref());
                f.text("probe.output", "output", self.output.as_deref());
                Ok(())
            },
        )?)
    }
}

#[derive(Args)]
struct BenchArgs {
    /// Samples (the kernel is n x n).
    #[arg(long, default_value_t = 2000)]
    n: usize,
    /// Input dimension of the synthetic inputs.
    #[arg(long, default_value_t = 5)]
    input_dim: usize,
    /// Hidden width of the MLP.
    #[arg(long, default_value_t = 512)]
    width: usize,
    /// Depths timed, one row each.
    #[arg(long, value_delimiter = ',', default_values_t = [1usize, 5, 10])]
    depths: Vec<usize>,
    /// Precisions timed: f32, f64.
    #[arg(long, value_delimiter = ',', default_values = ["f32", "f64"])]
    precisions: Vec<String>,
    /// Timed repetitions per row (the best is reported).
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    /// Backend (also BURN_DEVICE): one of those built in.
    #[arg(long)]
    device: Option<String>,
    /// `full`: every eigenvalue on the host; `extreme`: lambda_min, lambda_max and kappa
    /// on the compute device (the kernel stays there on GPU backends).
    #[arg(long, default_value = "full")]
    eigen: String,
    /// Also write the rows as JSON here.
    #[arg(long)]
    out: Option<PathBuf>,
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
    if let Some(note) = &s.note {
        println!("  note                {note}");
    }
    println!(
        "  seconds             {:.3} (kernel {:.3}, eigenvalues {:.3})",
        s.seconds, s.kernel_seconds, s.eigen_seconds
    );
}

fn ntk(args: NtkArgs) -> CliResult<()> {
    let flags = &args.run;
    let path = flags.config()?;
    let sets = args.own.assignments(flags, &overrides::read_table(path)?)?;
    let cfg = ProbeConfig::load_with(path, &sets)?;
    cfg.validate()
        .map_err(|e| format!("{}{}: {e}", path.display(), with_overrides(&sets)))?;
    let out_arg = flags
        .out
        .as_deref()
        .ok_or("--out DIR is required: the directory the NTK's files go to")?;
    let out = ntk_runs::outset::resolve_out(out_arg)?;
    run::check_replaceable(&out)?;
    run::check_memory(
        &cfg,
        inputs::expected_dim(&cfg.data),
        flags.max_memory.as_deref(),
    )?;
    let inputs = inputs::load(&cfg.data)?;
    let compute = backend::select(cfg.probe.device.as_deref(), cfg.probe.precision)?;
    if flags.dry_run || flags.resume {
        let prov = run::provenance(&cfg, &inputs, &inputs.digest(), &compute);
        let summary_path = out.join("summary.json");
        let state = ntk_runs::sweep::state::<Summary>(
            &[(summary_path.clone(), &prov)],
            "pass --recompute to compute it again",
        );
        if let ntk_runs::sweep::State::Stale(why) = &state
            && flags.resume
            && !flags.recompute
        {
            return Err(why.clone().into());
        }
        if flags.dry_run {
            let why = match &state {
                ntk_runs::sweep::State::Stale(why) | ntk_runs::sweep::State::Failed(why) => {
                    format!(": {why}")
                }
                _ => String::new(),
            };
            let then = match (&state, flags.resume) {
                (ntk_runs::sweep::State::Done, true) => "--resume keeps it",
                (ntk_runs::sweep::State::New, _) => "it would be computed",
                _ => "it would be computed again",
            };
            println!(
                "{}: {}{why} (the NTK of n = {} inputs on {} {}; {then})",
                out.display(),
                state.label(),
                inputs.n,
                compute.backend,
                compute.precision,
            );
            return Ok(());
        }
        if matches!(state, ntk_runs::sweep::State::Done) {
            let summary = ntk_probe::sweep::read_summary(&summary_path)?
                .ok_or_else(|| format!("{}: vanished", summary_path.display()))?;
            println!("{}: made by this config; kept (--resume)", out.display());
            return report_ntk(&summary, &args, &out, "kept");
        }
    }
    let summary = run::run(&cfg, &inputs, &compute, Some(&out), args.save_weights)?;
    report_ntk(&summary, &args, &out, "wrote")
}

/// Prints a probe's summary: as JSON with `--json`, else as a table and the files written.
fn report_ntk(summary: &Summary, args: &NtkArgs, out: &Path, verb: &str) -> CliResult<()> {
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&summary).expect("serializes")
        );
    } else {
        print_table(summary);
        let blocks = if summary.blocks.is_some() {
            ", blocks.csv"
        } else {
            ""
        };
        println!(
            "  {verb} {}/{{summary.json, inputs.npy, ntk.npy, eigenvalues.npy{blocks}}}",
            out.display()
        );
    }
    Ok(())
}

fn bench_cmd(args: BenchArgs) -> CliResult<()> {
    let eigen = Eigen::parse(&args.eigen)
        .ok_or_else(|| format!("--eigen {}: expected full or extreme", args.eigen))?;
    let mut rows = Vec::new();
    println!(
        "host linear algebra: {} (engine host: the structured NTK's GEMMs and the \
         eigensolver)",
        ntk_numerics::linalg::BACKEND
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
            rows.push(r);
        }
    }
    if let Some(path) = &args.out {
        let json = serde_json::to_string_pretty(&rows).expect("serializes");
        ntk_runs::io::atomic_write(path, json.as_bytes())
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// ` (with overrides)` after a config's name in a validation error, when there were some.
fn with_overrides(sets: &[Assignment]) -> &'static str {
    if sets.is_empty() {
        ""
    } else {
        " (with overrides)"
    }
}

fn load_sweep(path: &Path, sets: &[Assignment]) -> CliResult<SweepConfig> {
    Ok(SweepConfig::load_with(path, sets)?)
}

fn sweep_cmd(args: SweepArgs) -> CliResult<()> {
    let flags = &args.sweep.run;
    let path = flags.config()?;
    // The device is the sweep's to choose, not part of its config (`SweepOptions::device`).
    let mut keys_flags = flags.clone();
    keys_flags.keys.device = None;
    let sets = args
        .own
        .assignments(&keys_flags, &overrides::read_table(path)?)?;
    let cfg = load_sweep(path, &sets)?;
    let out = ntk_runs::outset::resolve_out(flags.out.as_deref().unwrap_or(&cfg.sweep.out))?;
    sweep::check_out(&out)?;
    let shard = match &args.sweep.shard {
        Some(s) => Shard::parse(s)?,
        None => Shard::all(),
    };
    let opts = sweep::SweepOptions {
        device: flags.keys.device.clone(),
        recompute: flags.recompute,
        max_memory: flags.max_memory.clone(),
        allow_mixed: args.sweep.allow_mixed,
    };
    if flags.dry_run {
        return Ok(sweep::dry_run(&cfg, &out, shard, &opts)?);
    }
    let points = cfg.points().len();
    if !(0..points).any(|p| shard.owns(p)) {
        println!(
            "shard {}/{} owns none of the {points} point(s): nothing to do",
            shard.index, shard.count
        );
        return Ok(());
    }
    let start = std::time::Instant::now();
    let _claim = ntk_runs::lock::SweepClaim::acquire(
        &out,
        &sweep::fingerprint(&cfg),
        &format!("config {}", path.display()),
    )?;
    let ran = sweep::run_sweep(&cfg, &out, shard, &opts)?;
    println!(
        "sweep: {} point(s) computed, {} already finished, {:.1} s",
        ran.made,
        ran.skipped,
        start.elapsed().as_secs_f64()
    );
    let title = cfg.data.dataset.name();
    match sweep::collect(Some(&cfg), &out, title, args.sweep.allow_mixed) {
        Ok(groups) => {
            print_groups(&groups);
            println!(
                "wrote {}/{{results.csv, summary.csv, *.png, *.svg}}",
                out.display()
            );
        }
        // Points failed: the sweep's error below names them; what collect says is a
        // warning.
        Err(e) if ran.check.is_some() => eprintln!("warning: collect: {e}"),
        Err(e) => return Err(e.into()),
    }
    match ran.check {
        Some(e) => Err(e.into()),
        None => Ok(()),
    }
}

fn print_groups(groups: &[sweep::GroupRow]) {
    let width = groups.iter().map(|g| g.setting.len()).max().unwrap_or(0);
    println!(
        "{:>8} {:width$} {:>16} {:>5} {:>6} {:>14} {:>14} {:>10} {:>10}",
        "protocol",
        "",
        "activation",
        "depth",
        "seeds",
        "kappa",
        "theory kappa",
        "min angle",
        "theory"
    );
    for g in groups {
        let k = if g.singular == g.seeds {
            "inf".to_string()
        } else {
            format!("{:.4e}", g.kappa_mean)
        };
        let tk = g
            .theory_kappa
            .map_or("-".to_string(), |v| format!("{v:.4e}"));
        let ta = g
            .theory_min_grad_angle_deg
            .map_or("-".to_string(), |v| format!("{v:.3}"));
        // Not measured (blocks run block by block): "-", as an absent theory value.
        let a = Some(g.min_grad_angle_mean_deg)
            .filter(|v| v.is_finite())
            .map_or("-".to_string(), |v| format!("{v:.3}"));
        println!(
            "{:>8} {:width$} {:>16} {:>5} {:>6} {:>14} {:>14} {:>10} {:>10}",
            g.protocol, g.setting, g.activation, g.depth, g.seeds, k, tk, a, ta
        );
    }
    // Why theory values are absent, once per reason.
    let mut notes: Vec<&str> = groups
        .iter()
        .map(|g| g.theory_note.as_str())
        .filter(|n| !n.is_empty())
        .collect();
    notes.sort_unstable();
    notes.dedup();
    for n in notes {
        println!("theory: {n}");
    }
}

fn collect_cmd(args: CollectArgs) -> CliResult<()> {
    refuse_log(args.style.log)?;
    let cfg = args
        .config
        .as_deref()
        .map(|p| load_sweep(p, &overrides::parse_all(&args.set)?))
        .transpose()?;
    let title = args
        .style
        .title
        .as_deref()
        .unwrap_or_else(|| cfg.as_ref().map_or("sweep", |c| c.data.dataset.name()));
    let groups = sweep::collect(cfg.as_ref(), &args.dir, title, args.allow_mixed)?;
    print_groups(&groups);
    Ok(())
}

fn plot_cmd(args: PlotArgs) -> CliResult<()> {
    refuse_log(args.style.log)?;
    for stem in sweep::redraw(&args.dir, args.style.title.as_deref())? {
        println!("wrote {}.{{png,svg}}", stem.display());
    }
    Ok(())
}

/// `--log` is the trainer's (its loss axes); the probe's kappa axes are always logarithmic.
fn refuse_log(log: bool) -> CliResult<()> {
    if log {
        return Err(
            "--log: the probe's kappa axes are always on a log scale (the flag sets \
                    ntk-train's loss axes)"
                .into(),
        );
    }
    Ok(())
}

/// The most values one `theory` call computes.
const MAX_THEORY_VALUES: f64 = 100_000.0;
/// The deepest network `theory` computes (each layer is one step of the recursion).
const MAX_THEORY_DEPTH: f64 = 10_000.0;

/// Parses `x`, `a,b,c` or `start:stop:step` (inclusive) of finite numbers, at most
/// [`MAX_THEORY_VALUES`] of them.
fn parse_values(s: &str, what: &str) -> CliResult<Vec<f64>> {
    let bad =
        || format!("--{what} {s}: expected a number, a list a,b,c or a range start:stop:step");
    let num = |t: &str| match t.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(format!("--{what} {s}: {} is not a finite number", t.trim())),
        Err(_) => Err(bad()),
    };
    let values: Vec<f64> = if let Some((a, rest)) = s.split_once(':') {
        let (b, step) = rest.split_once(':').ok_or_else(bad)?;
        let (a, b, step) = (num(a)?, num(b)?, num(step)?);
        if step <= 0.0 || b < a {
            return Err(format!(
                "--{what} {s}: a range start:stop:step needs step > 0 and stop >= start"
            )
            .into());
        }
        let count = ((b - a) / step + 1e-9).floor();
        // NaN (inf / inf) fails this test too.
        if !count.is_finite() || count >= MAX_THEORY_VALUES {
            return Err(format!(
                "--{what} {s}: {count:.3e} values; at most {MAX_THEORY_VALUES} per call"
            )
            .into());
        }
        (0..=count as usize).map(|i| a + step * i as f64).collect()
    } else {
        s.split(',').map(num).collect::<Result<_, _>>()?
    };
    if values.len() as f64 > MAX_THEORY_VALUES {
        return Err(format!(
            "--{what}: {} values; at most {MAX_THEORY_VALUES} per call",
            values.len()
        )
        .into());
    }
    Ok(values)
}

fn theory_cmd(args: TheoryArgs) -> CliResult<()> {
    let kind = ActivationKind::parse(&args.activation)
        .ok_or_else(|| format!("--activation {}: unknown activation", args.activation))?;
    if let Some(b) = args.kink {
        // The config's own rule for the kink (finite, in range, norm_relu only).
        ntk_model::MlpConfig::new(1, 1, 1, kind)
            .with_kink(b)
            .validate()
            .map_err(|e| format!("--kink {b}: {e}"))?;
    }
    let act = ntk_model::Activation::new(kind, args.kink);
    let thetas = parse_values(&args.theta_deg, "theta-deg")?;
    let depths = parse_values(&args.depth, "depth")?;
    if thetas.len() * depths.len() > MAX_THEORY_VALUES as usize {
        return Err(format!(
            "--theta-deg {} --depth {}: {} values; at most {MAX_THEORY_VALUES} per call",
            args.theta_deg,
            args.depth,
            thetas.len() * depths.len()
        )
        .into());
    }
    for t in &thetas {
        if !(0.0..=180.0).contains(t) {
            return Err(format!("--theta-deg {t}: must be in [0, 180]").into());
        }
    }
    let mut rows = Vec::new();
    for &d in &depths {
        if d < 0.0 || d.fract() != 0.0 {
            return Err(format!("--depth {d}: must be a non-negative integer").into());
        }
        if d > MAX_THEORY_DEPTH {
            return Err(format!(
                "--depth {d}: at most {MAX_THEORY_DEPTH} (the recursion takes one step per layer)"
            )
            .into());
        }
        for &t in &thetas {
            let phi = ntk_probe::theory::grad_angle(&act, t.to_radians(), d as usize).to_degrees();
            rows.push((t, d as usize, phi));
        }
    }
    if rows.len() == 1 && !args.json {
        println!("{:.6}", rows[0].2);
    } else if args.json {
        let v: Vec<serde_json::Value> = rows
            .iter()
            .map(|(t, d, phi)| {
                serde_json::json!({"theta_in_deg": t, "depth": d, "activation": act.to_string(), "phi_deg": phi})
            })
            .collect();
        let out = if v.len() == 1 {
            v[0].clone()
        } else {
            serde_json::Value::Array(v)
        };
        println!(
            "{}",
            serde_json::to_string_pretty(&out).expect("serializes")
        );
    } else {
        println!("theta_in_deg,depth,activation,phi_deg");
        for (t, d, phi) in rows {
            println!("{t},{d},{act},{phi:.6}");
        }
    }
    Ok(())
}

fn gmap_cmd(args: GmapArgs) -> CliResult<()> {
    if args.depths.is_empty() || args.depths.iter().any(|&l| l == 0 || l > 10_000) {
        return Err(ntk_probe::Error::Config {
            key: "--depths",
            value: format!("{:?}", args.depths),
            reason: "need one or more numbers of layers in 1..=10000".into(),
        }
        .into());
    }
    let _lock = figure_dir(&args.out)?;
    ntk_probe::gmap::write(&args.out, &args.depths, 721)?;
    println!("wrote {}/gmap.{{csv,png,svg}}", args.out.display());
    Ok(())
}

fn activations_cmd(args: ActivationsArgs) -> CliResult<()> {
    use ntk_probe::activation_fig;
    activation_fig::check(args.x_min, args.x_max, args.points)?;
    let acts = parse_activations(&args.activations, args.kink)?;
    let xs = activation_fig::grid(args.x_min, args.x_max, args.points);
    let _lock = figure_dir(&args.out)?;
    activation_fig::write(&args.out, &acts, &xs)?;
    for a in &acts {
        let (l, m) = (activation_fig::label(a), activation_fig::moments_line(a));
        println!("{l}; {m}");
    }
    println!("wrote {}/activations.{{csv,png,svg}}", args.out.display());
    Ok(())
}

fn transfer_cmd(args: TransferArgs) -> CliResult<()> {
    use ntk_probe::{theory::transfer, transfer_fig};
    transfer_fig::check(args.q_min, args.q_max, args.points)?;
    let acts = parse_activations(&args.activations, args.kink)?;
    let qs = transfer::grid(args.q_min, args.q_max, args.points);
    let _lock = figure_dir(&args.out)?;
    let at_one = transfer_fig::write(&args.out, &acts, &qs)?;
    for (a, t) in acts.iter().zip(at_one) {
        println!(
            "{}: m(1) = {:.3e}, N(1) = {:.6}, N'(1) = {:.6}, B(1) = {:.3e}",
            a.kind().name(),
            t.mean,
            t.norm,
            t.norm_slope,
            t.bias
        );
    }
    println!(
        "wrote {}/transfer.csv, transfer_{{norm,bias}}.{{png,svg}}",
        args.out.display()
    );
    Ok(())
}

/// The activations named on the command line (`--activations`), NormReLU with `kink`.
fn parse_activations(names: &[String], kink: Option<f64>) -> CliResult<Vec<ntk_model::Activation>> {
    if let Some(b) = kink {
        // The config's own rule for the kink (finite, in range).
        ntk_model::MlpConfig::new(1, 1, 1, ActivationKind::NormRelu)
            .with_kink(b)
            .validate()
            .map_err(|e| format!("--kink {b}: {e}"))?;
    }
    let mut acts = Vec::new();
    for name in names {
        let kind =
            ntk_model::ActivationKind::parse(name).ok_or_else(|| ntk_probe::Error::Config {
                key: "--activations",
                value: name.clone(),
                reason:
                    "not an activation (relu, linear, norm_relu, gelu, tanh, relu_squared, selu)"
                        .into(),
            })?;
        acts.push(ntk_model::Activation::new(kind, kink));
    }
    Ok(acts)
}

/// The output directory of a figure command, created and locked for this process (one
/// writer at a time, `ntk_runs::lock`; the commands write only their own named files, each
/// atomically, beside whatever else the directory holds, such as a README).
fn figure_dir(out: &Path) -> CliResult<ntk_runs::lock::DirLock> {
    let out = ntk_runs::outset::resolve_out(out)?;
    ntk_runs::outset::check_writable(&out)?;
    Ok(ntk_runs::lock::DirLock::acquire(&out)?)
}

fn fig1_cmd(args: Fig1Args) -> CliResult<()> {
    if args.redraw {
        let _lock = figure_dir(&args.out)?;
        ntk_probe::fig1::redraw(&args.out)?;
        println!("wrote {}/fig1.{{png,svg}}", args.out.display());
        return Ok(());
    }
    let kind = ntk_model::ActivationKind::parse(&args.activation).ok_or_else(|| {
        ntk_probe::Error::Config {
            key: "--activation",
            value: args.activation.clone(),
            reason: "not an activation (relu, linear, norm_relu, gelu, tanh, relu_squared, selu)"
                .into(),
        }
    })?;
    if let Some(t) = args.thetas.iter().find(|t| !(0.0..=180.0).contains(*t)) {
        return Err(format!("--thetas {t}: must be an angle in [0, 180] degrees").into());
    }
    // Each measured network: depth x width^2 weights, with its Jacobian and gradient of
    // the same size (two inputs), in f64.
    let deepest = args.depths.iter().copied().max().unwrap_or(0).max(1) as f64;
    for &w in &args.widths {
        let mut need = ntk_runs::budget::Estimate::default();
        need.add(
            "weights, gradients and the Jacobian",
            4.0 * deepest * (w as f64).powi(2),
            8.0,
        );
        need.check(&format!("--widths {w}"), None)?;
    }
    // One writer at a time, claimed before the measurements.
    let _lock = figure_dir(&args.out)?;
    let act = ntk_model::Activation::new(kind, None);
    let compute = backend::select(None, Precision::F64)?;
    let points = ntk_probe::fig1::measure(
        &compute,
        &act,
        &args.thetas,
        &args.depths,
        &args.widths,
        &args.seeds,
    )?;
    ntk_probe::fig1::write(&args.out, &points, &args.depths, &args.widths)?;
    println!(
        "{:>6} {:>5} {:>6} {:>10} {:>10} {:>8}",
        "theta", "L", "width", "phi mean", "theory", "gap"
    );
    for &depth in &args.depths {
        for &width in &args.widths {
            for &t in &args.thetas {
                let (m, _) = ntk_probe::fig1::mean_sd(&points, depth, width, t);
                let th = points
                    .iter()
                    .find(|p| p.depth == depth && p.theta_in_deg == t)
                    .map_or(f64::NAN, |p| p.theory_phi_deg);
                println!(
                    "{t:>6.1} {depth:>5} {width:>6} {m:>10.3} {th:>10.3} {:>8.3}",
                    m - th
                );
            }
        }
    }
    println!("wrote {}/fig1.{{csv,png,svg}}", args.out.display());
    Ok(())
}

/// mimalloc, keeping freed memory for reuse ([`keep_freed_memory`]): a sweep allocates and
/// frees the same n x n buffers (kernels, eigensolver copies) for every network, and with
/// glibc each fresh one costs page faults (~15 ms per 2000 x 2000 f64 matrix on the 2-core
/// VM of `experiments/bench`). The synthetic Fig. 2 sweep: ~985k page faults with glibc,
/// ~2k with this. mimalloc also backs its arenas with transparent huge pages, which halved
/// the kernel time of the n = 10,000 NTK (experiments/bench/README.md has the times).
/// Wrapped so that an allocation that still fails (under a limit the memory guard did not
/// foresee) is an error with exit code 2, not an abort ([`ntk_runs::oom`]).
#[global_allocator]
static GLOBAL: ntk_runs::oom::ExitOnOom<mimalloc::MiMalloc> =
    ntk_runs::oom::ExitOnOom(mimalloc::MiMalloc);

/// `mi_option_purge_delay` in the bundled mimalloc 3 (`mimalloc.h`'s `mi_option_e`; the
/// sys crate does not name it). The test below checks its default (1000 ms).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Never return freed memory to the OS (purge delay -1): it is reused by the next buffer
/// instead of faulted in again. The process keeps its peak footprint until it exits.
fn keep_freed_memory() {
    // SAFETY: setting a mimalloc option is a plain store into its option table.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) }
}

/// What a subcommand returns: an error of the library (typed) or of the command line (a
/// message), printed as `error: MESSAGE` with exit code 2.
type CliResult<T> = Result<T, Box<dyn std::error::Error>>;

fn main() -> ExitCode {
    keep_freed_memory();
    // A Slurm task uses the cores it was given (SLURM_CPUS_PER_TASK), before any thread.
    ntk_runs::slurm::use_cpus_per_task(ntk_numerics::linalg::set_threads);
    ntk_runs::cli::restore_sigpipe();
    // A bug must still end in one clear line and a non-zero exit, not a backtrace.
    ntk_runs::cli::set_panic_hook("ntk-probe");
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(a) => ntk(a),
        Command::Bench(a) => bench_cmd(a),
        Command::Sweep(a) => sweep_cmd(a),
        Command::Collect(a) => collect_cmd(a),
        Command::Plot(a) => plot_cmd(a),
        Command::Theory(a) => theory_cmd(a),
        Command::Fig1(a) => fig1_cmd(a),
        Command::Activations(a) => activations_cmd(a),
        Command::Gmap(a) => gmap_cmd(a),
        Command::Transfer(a) => transfer_cmd(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_purge_delay_option_is_the_one_we_set() {
        // SAFETY: reading a mimalloc option.
        let delay = unsafe { libmimalloc_sys::mi_option_get(super::MI_OPTION_PURGE_DELAY) };
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            assert_eq!(delay, 1000, "mimalloc's option numbering changed");
        }
    }
}
