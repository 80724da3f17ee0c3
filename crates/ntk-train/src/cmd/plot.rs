//! `ntk-train plot DIR`: the figures again from the runs' metrics (elsewhere with `--out`).

use crate::{CliResult, TrainPlotArgs};
use ntk_files::shown::Shown;

/// `plot DIR`: the figures again from the runs' metrics, of runs `collect` would merge
/// ([`ntk_train::report::check_mergeable`]).
pub(crate) fn plot_cmd(
    TrainPlotArgs {
        plot: args,
        allow_mixed,
    }: TrainPlotArgs,
) -> CliResult<()> {
    let dir = &args.dir;
    let runs = ntk_train::report::read_runs(dir)?;
    ntk_train::report::check_mergeable(dir, &runs, allow_mixed)?;
    let out = match &args.out {
        Some(out) => &ntk_files::outset::check_figure_out(out, dir)?,
        None => dir,
    };
    let log = ntk_train::report::draws_log(out, args.style.log);
    let best = ntk_train::report::choose(&runs);
    let mut figures =
        ntk_train::report::plan_figures(dir, (&runs, &best), log, args.style.title.as_deref());
    // The convergence figure where a run predicts, as `collect` draws it.
    let convergence = ntk_train::convergence::rows(&runs);
    ntk_train::report::say_unrated(dir, &runs, "convergence_rate.*");
    figures.extend(ntk_train::report::convergence_figure(
        &runs,
        &convergence,
        args.style.title.as_deref(),
    ));
    // What the figures leave out, and why, as `collect` says it (fifty-fifth hostile round,
    // D1: a sweep's configuration whose seed was interrupted was missing from the figures
    // without a word); one run's own directory is drawn as it stands, and says so.
    match runs.as_slice() {
        [run] if run.id.is_empty() => {
            if best.is_empty() {
                eprintln!(
                    "warning: {}: the run is not finished ({}): its epochs are drawn as \
                     they stand",
                    dir.display(),
                    ntk_train::report::unended(run)
                );
            }
        }
        _ => {
            for ((depth, activation, normalization), why) in
                ntk_train::report::left_out(&runs, &best)
            {
                // The curves' figures: the convergence figure draws the runs that have
                // ended, and names those it leaves out (hundred-and-fifty-third hostile
                // round, D2: "not drawn" where convergence_rate.* drew it).
                eprintln!(
                    "warning: {}: depth {depth} {activation} {normalization} is not drawn in \
                     the figures of the curves (all but convergence_rate.*): {why}",
                    dir.display()
                );
            }
        }
    }
    // Exactly the figures this plot draws, checked before it writes the first (forty-fourth
    // hostile round, D1); then a dead writer's leftovers of the figures (twenty-ninth hostile
    // round, N1), as collect removes them.
    let names = ntk_train::files::ReportNames {
        tables: false,
        convergence: false,
        stems: figures.iter().map(|(stem, _)| *stem).collect(),
    };
    ntk_files::places::check_replaced_in(out, &|name: &str| names.writes(name))?;
    ntk_runs::sweep::check_proven_figures(out, dir, &|name: &str| names.writes(name))?;
    ntk_files::outset::clean_dir(out, None, &ntk_train::files::is_report_file);
    ntk_train::report::say_stale_of(out, dir, &names);
    // A plot that draws nothing leaves no directory it made.
    let written = ntk_files::outset::in_made_dir(out, || -> CliResult<_> {
        let drawn = ntk_train::report::save_figures(out, &figures, args.style.layout)?;
        let written = drawn.files();
        ntk_train::report::record_written(out, &written, &drawn);
        if written.is_empty() {
            let why = match runs.as_slice() {
                [run] if run.id.is_empty() => format!(
                    "the run has no finished epoch to draw ({})",
                    ntk_train::report::unended(run)
                ),
                _ => "no configuration has a rate chosen on finished runs (the warnings \
                      above say why)"
                    .into(),
            };
            return Err(format!("{}: nothing to draw: {why}", dir.display()).into());
        }
        Ok(written)
    })?;
    for p in written {
        println!("wrote {}", p.shown());
    }
    Ok(())
}
