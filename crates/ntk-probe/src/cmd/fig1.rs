//! `ntk-probe fig1`: Liu & Hui's Fig. 1, phi against theta_in, theory and measurement.

use super::figure_dir;
use crate::CliResult;
use clap::Args;
use ntk_numerics::backend;
use ntk_numerics::backend::Precision;
use std::path::PathBuf;

#[derive(Args)]
pub(crate) struct Fig1Args {
    /// Output directory (the committed figure: --out experiments/fig1).
    #[arg(long, default_value = "runs/fig1")]
    out: PathBuf,
    /// Depths L of the theory curves and the measured points.
    #[arg(long, value_delimiter = ',', default_value = "1,2,5,10")]
    depths: Vec<usize>,
    /// Widths of the measured networks (at least 1).
    #[arg(long, value_delimiter = ',', default_value = "512,4096", value_parser = ntk_cli::args::count(1))]
    widths: Vec<usize>,
    /// Network seeds averaged per measured point.
    #[arg(long, value_delimiter = ',', default_value = "1,32,111,555,666")]
    seeds: Vec<u64>,
    /// Input angles theta_in in degrees.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "5,15,30,45,60,90,120,150,175",
        allow_hyphen_values = true,
        value_parser = ntk_cli::args::float
    )]
    thetas: Vec<f64>,
    /// Activation of the networks and the theory: relu (the paper's Fig. 1), gelu, tanh,
    /// relu_squared (the later version's Fig. 2), or any other activation, with its
    /// parameter where it has one (`leaky_relu(alpha=0.1)`).
    #[arg(long, default_value = "relu")]
    activation: String,
    /// Only redraw OUT/fig1.{png,svg,pdf} from OUT/fig1.csv (nothing measured; the depths and
    /// widths are the table's).
    #[arg(long, conflicts_with_all = ["depths", "widths", "seeds", "thetas", "activation", "max_memory"])]
    redraw: bool,
    /// The memory the measurements may plan for (e.g. 64G; default: the smallest of the
    /// available memory, the cgroup's limit and RLIMIT_AS; also NTK_MAX_MEMORY).
    #[arg(long)]
    max_memory: Option<String>,
}

pub(crate) fn fig1_cmd(args: Fig1Args) -> CliResult<()> {
    if args.redraw {
        let _lock = figure_dir(&args.out, &[], &[], &ntk_probe::fig1::STEMS)?;
        ntk_probe::fig1::redraw(&args.out)?;
        println!("wrote {}/fig1.{{png,svg,pdf}}", args.out.display());
        return Ok(());
    }
    let act = super::parse_activation("--activation", &args.activation, None)?;
    ntk_cli::args::distinct("--depths", &args.depths)?;
    ntk_cli::args::distinct("--widths", &args.widths)?;
    ntk_cli::args::distinct("--seeds", &args.seeds)?;
    ntk_cli::args::distinct("--thetas", &args.thetas)?;
    // Under the flags' names, before anything is measured (fifteenth hostile round, D5:
    // `--widths 0` was refused as the config field `width`).
    if let Some(d) = args.depths.iter().find(|&&d| d > ntk_model::MAX_DEPTH) {
        return Err(format!(
            "--depths {d}: at most {} hidden layers",
            ntk_model::MAX_DEPTH
        )
        .into());
    }
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
        need.check(&format!("--widths {w}"), args.max_memory.as_deref())?;
    }
    // The theory's curve must exist before any network is measured or file written.
    for &d in &args.depths {
        for &t in &args.thetas {
            ntk_probe::fig1::checked_theory_phi_deg(&act, t, d, "--thetas")?;
        }
    }
    // One writer at a time, claimed before the measurements, with the places it writes.
    let _lock = figure_dir(
        &args.out,
        &ntk_probe::fig1::TABLES,
        &ntk_probe::fig1::HEADS,
        &ntk_probe::fig1::STEMS,
    )?;
    let compute = backend::select(None, Precision::F64)?;
    let points = ntk_probe::fig1::measure(
        &compute,
        &act,
        &args.thetas,
        &args.depths,
        &args.widths,
        &args.seeds,
    )?;
    ntk_probe::fig1::write(&args.out, &act, &points, &args.depths, &args.widths)?;
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
                // θ as given: one decimal printed 1e-6 as 0.0 beside a theory of 0.004
                // (eighty-ninth hostile round, N8).
                println!(
                    "{:>6} {depth:>5} {width:>6} {m:>10.3} {th:>10.3} {:>8.3}",
                    t.to_string(),
                    m - th
                );
            }
        }
    }
    println!("wrote {}/fig1.{{csv,png,svg,pdf}}", args.out.display());
    Ok(())
}
