//! `ntk-train collect DIR`: the finished runs of a sweep merged into its tables
//! (sweep.csv, best.csv, compare.csv) and figures.

use ntk_cli::args::CollectArgs;
use ntk_files::shown::Shown;
use ntk_numerics::backend;
use ntk_runs::overrides;
use ntk_train::sweep;

use crate::CliResult;

/// `collect DIR`: with `--config`, the runs must be that config's (none made by another
/// config); then the tables and figures.
pub(crate) fn collect_cmd(args: CollectArgs) -> CliResult<()> {
    // The runs the config plans, which best.csv's choices wait for where they have no result.
    let planned = if let Some(path) = &args.config {
        let sets = overrides::parse_all(&args.set)?;
        let src = overrides::Source::read(path)?;
        // The loader of `run` and `sweep`, so that its messages name the config as theirs do
        // (fifty-eighth hostile round, D2: `F: train.epochs = 0` for a --set value).
        let (cfg, compute) = crate::cmd::run::load_config(&src, &sets, false)?;
        // A config without [sweep] plans one run in DIR itself, not the runs under
        // DIR/runs/, so nothing would be checked (twenty-sixth hostile round, D3): refused,
        // as `ntk-probe collect` refuses it.
        if cfg.sweep.is_none() {
            return Err(format!(
                "{}: has no [sweep] table: `collect --config` checks a sweep's runs against the \
                 sweep's config; a single run records its own config (its summary.json)",
                src.name_for(&sets, "sweep")
            )
            .into());
        }
        let compute = match compute {
            Some(c) => c,
            None => backend::select(cfg.train.backend.as_deref(), cfg.train.precision)?,
        };
        sweep::check_collect(&cfg, &args.dir, &compute)?;
        sweep::planned_runs(&cfg)?
    } else {
        Vec::new()
    };
    let style = (
        args.style.log,
        args.style.title.as_deref(),
        args.style.layout,
    );
    for p in ntk_train::report::collect_as(&args.dir, style, args.allow_mixed, &planned)? {
        println!("wrote {}", p.shown());
    }
    Ok(())
}
