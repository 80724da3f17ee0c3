//! `ntk-probe plot DIR`: the figures again from a collected sweep's tables.

use crate::CliResult;
use ntk_cli::args::PlotArgs;
use ntk_probe::sweep;

pub(crate) fn plot_cmd(args: PlotArgs) -> CliResult<()> {
    refuse_log(args.style.log)?;
    let out = match &args.out {
        Some(out) => &ntk_files::outset::check_figure_out(out, &args.dir)?,
        None => &args.dir,
    };
    let stems = ntk_files::outset::in_made_dir(out, || -> CliResult<_> {
        Ok(sweep::redraw(
            &args.dir,
            out,
            args.style.title.as_deref(),
            args.style.layout,
        )?)
    })?;
    for stem in stems {
        println!("wrote {}.{{png,svg,pdf}}", stem.display());
    }
    Ok(())
}

/// `--log` is the trainer's (its loss axes); the probe's kappa axes are always logarithmic.
pub(crate) fn refuse_log(log: bool) -> CliResult<()> {
    if log {
        return Err(
            "--log: the probe's kappa axes are always on a log scale (the flag sets \
                    ntk-train's loss axes)"
                .into(),
        );
    }
    Ok(())
}
