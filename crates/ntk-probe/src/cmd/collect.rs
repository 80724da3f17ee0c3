//! `ntk-probe collect DIR`: the finished points of a sweep merged into its tables and figures.

use super::plot::refuse_log;
use super::sweep::load_sweep;
use super::sweep::print_groups;
use crate::CliResult;
use ntk_cli::args::CollectArgs;
use ntk_probe::sweep;
use ntk_runs::overrides;

pub(crate) fn collect_cmd(args: CollectArgs) -> CliResult<()> {
    refuse_log(args.style.log)?;
    super::plot::check_sweep_dir(&args.dir)?;
    let cfg = args
        .config
        .as_deref()
        .map(|p| -> CliResult<_> {
            let src = overrides::Source::read(p)?;
            let sets = overrides::parse_all(&args.set)?;
            Ok((load_sweep(&src, &sets)?, src.name(&sets)))
        })
        .transpose()?;
    if let Some((c, name)) = &cfg {
        // What the points recorded must be this config's, as the help promises.
        sweep::check_collect(c, name, &args.dir, args.allow_mixed)?;
    }
    let (groups, drawn) = sweep::collect_as(
        cfg.as_ref().map(|(c, _)| c),
        &args.dir,
        args.style.title.as_deref(),
        args.allow_mixed,
        args.style.layout,
    )?;
    print_groups(&groups);
    // What it wrote, as `plot` and ntk-train's collect say it (hundred-and-twenty-seventh
    // hostile round, N6: nothing was said).
    println!(
        "wrote {}",
        args.dir.join("{results.csv, summary.csv}").display()
    );
    for files in drawn.shown() {
        println!("wrote {files}");
    }
    Ok(())
}
