//! `ntk-probe gmap`: Liu & Hui's Fig. 4, the ReLU embedding-angle map g.

use super::figure_dir;
use crate::CliResult;
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub(crate) struct GmapArgs {
    /// Output directory (the committed figure: --out experiments/fig4).
    #[arg(long, default_value = "runs/gmap")]
    out: PathBuf,
    /// Numbers of layers l of the iterates g^l drawn (1 is g itself).
    #[arg(long, value_delimiter = ',', default_value = "1,2,5,10")]
    depths: Vec<usize>,
}

pub(crate) fn gmap_cmd(args: GmapArgs) -> CliResult<()> {
    if args.depths.is_empty() || args.depths.iter().any(|&l| l == 0 || l > 10_000) {
        return Err(ntk_probe::Error::Config {
            key: "--depths",
            value: format!("{:?}", args.depths),
            reason: "need one or more numbers of layers in 1..=10000".into(),
        }
        .into());
    }
    ntk_cli::args::distinct("--depths", &args.depths)?;
    let _lock = figure_dir(
        &args.out,
        &ntk_probe::gmap::TABLES,
        &ntk_probe::gmap::HEADS,
        &ntk_probe::gmap::STEMS,
    )?;
    ntk_probe::gmap::write(&args.out, &args.depths, 721)?;
    println!("wrote {}/gmap.{{csv,png,svg,pdf}}", args.out.display());
    Ok(())
}
