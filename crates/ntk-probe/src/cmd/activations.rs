//! `ntk-probe activations`: Agarwal et al.'s Fig. 2, the activations and their moments.

use super::figure_dir;
use super::parse_activations;
use crate::CliResult;
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub(crate) struct ActivationsArgs {
    /// Output directory (the committed figure: --out experiments/agarwal_fig2).
    #[arg(long, default_value = "runs/activations")]
    out: PathBuf,
    /// Activations to draw: any activation's name, or its words with a parameter
    /// (`leaky_relu(alpha=0.1)`).
    #[arg(long, default_value = "norm_relu,selu")]
    activations: Vec<String>,
    /// NormReLU's kink b (default: -1.5907658564, where its scale equals SELU's).
    #[arg(long, allow_hyphen_values = true, value_parser = ntk_cli::args::float)]
    kink: Option<f64>,
    /// Left end of the x grid.
    #[arg(
        long,
        default_value_t = -4.0,
        allow_hyphen_values = true,
        value_parser = ntk_cli::args::float
    )]
    x_min: f64,
    /// Right end of the x grid.
    #[arg(
        long,
        default_value_t = 3.0,
        allow_hyphen_values = true,
        value_parser = ntk_cli::args::float
    )]
    x_max: f64,
    /// Grid points.
    #[arg(long, default_value_t = 701)]
    points: usize,
}

pub(crate) fn activations_cmd(args: ActivationsArgs) -> CliResult<()> {
    use ntk_probe::activation_fig;
    activation_fig::check(args.x_min, args.x_max, args.points)?;
    // Cut at the commas outside parentheses: `leaky_relu(alpha=0.1)` keeps its own.
    let activations = ntk_cli::args::list_items(&args.activations);
    ntk_cli::args::distinct("--activations", &activations)?;
    let acts = parse_activations(&activations, args.kink)?;
    let xs = activation_fig::grid(args.x_min, args.x_max, args.points);
    let _lock = figure_dir(
        &args.out,
        &activation_fig::TABLES,
        &activation_fig::HEADS,
        &activation_fig::STEMS,
    )?;
    activation_fig::write(&args.out, &acts, &xs)?;
    for a in &acts {
        let (l, m) = (activation_fig::label(a), activation_fig::moments_line(a));
        println!("{l}; {m}");
    }
    println!(
        "wrote {}/activations.{{csv,png,svg,pdf}}",
        args.out.display()
    );
    Ok(())
}
