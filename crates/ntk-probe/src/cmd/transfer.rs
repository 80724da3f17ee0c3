//! `ntk-probe transfer`: Agarwal et al.'s Fig. 6, NormReLU's transfer functions.

use super::figure_dir;
use super::parse_activations;
use crate::CliResult;
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub(crate) struct TransferArgs {
    /// Output directory (the committed figure: --out experiments/agarwal_fig6).
    #[arg(long, default_value = "runs/transfer")]
    out: PathBuf,
    /// Activations to draw: any activation's name, or its words with a parameter (the
    /// transfer functions of Fact 1 concern normalized ones: norm_relu, selu).
    #[arg(long, default_value = "norm_relu")]
    activations: Vec<String>,
    /// NormReLU's kink b (default: -1.5907658564, where its scale equals SELU's).
    #[arg(long, allow_hyphen_values = true, value_parser = ntk_cli::args::float)]
    kink: Option<f64>,
    /// Left end of the variance grid (from f64's smallest normal number, 2.2250738585072014e-308, below
    /// --q-max; towards 0 NormReLU's bias B rises to 1).
    #[arg(
        long,
        default_value_t = 0.25,
        allow_hyphen_values = true,
        value_parser = ntk_cli::args::float
    )]
    q_min: f64,
    /// Right end of the variance grid (above --q-min, at most 10000).
    #[arg(
        long,
        default_value_t = 4.0,
        allow_hyphen_values = true,
        value_parser = ntk_cli::args::float
    )]
    q_max: f64,
    /// Grid points.
    #[arg(long, default_value_t = 376)]
    points: usize,
}

pub(crate) fn transfer_cmd(args: TransferArgs) -> CliResult<()> {
    use ntk_kernel::theory::transfer;
    use ntk_probe::transfer_fig;
    transfer_fig::check(args.q_min, args.q_max, args.points)?;
    // Cut at the commas outside parentheses: `leaky_relu(alpha=0.1)` keeps its own.
    let activations = ntk_cli::args::list_items(&args.activations);
    ntk_cli::args::distinct("--activations", &activations)?;
    let acts = parse_activations(&activations, args.kink)?;
    let qs = transfer::grid(args.q_min, args.q_max, args.points);
    let _lock = figure_dir(
        &args.out,
        &transfer_fig::TABLES,
        &transfer_fig::HEADS,
        &transfer_fig::STEMS,
    )?;
    let at_one = transfer_fig::write(&args.out, &acts, &qs)?;
    let names = ntk_probe::activation_fig::table_names(&acts);
    for (name, t) in names.iter().zip(at_one) {
        println!(
            "{}: m(1) = {:.3e}, N(1) = {:.6}, N'(1) = {:.6}, B(1) = {:.3e}",
            name, t.mean, t.norm, t.norm_slope, t.bias
        );
    }
    println!(
        "wrote {}/transfer.csv, transfer_{{norm,bias}}.{{png,svg,pdf}}",
        args.out.display()
    );
    Ok(())
}
