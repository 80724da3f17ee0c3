//! `ntk-probe plot DIR`: the figures again from a collected sweep's tables.

use crate::CliResult;
use ntk_cli::args::PlotArgs;
use ntk_files::shown::Shown;
use ntk_probe::sweep;

pub(crate) fn plot_cmd(args: PlotArgs) -> CliResult<()> {
    refuse_log(args.style.log)?;
    check_sweep_dir(&args.dir)?;
    let out = match &args.out {
        Some(out) => &ntk_files::outset::check_figure_out(out, &args.dir)?,
        None => &args.dir,
    };
    let drawn = ntk_files::outset::in_made_dir(out, || -> CliResult<_> {
        Ok(sweep::redraw(
            &args.dir,
            out,
            args.style.title.as_deref(),
            args.style.layout,
        )?)
    })?;
    for files in drawn.shown() {
        println!("wrote {files}");
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

/// A sweep's directory as `collect` and `plot` take it: there and a directory (not through
/// a symbolic link's target being anything else). A missing path, a file or a FIFO is named
/// as such, not "no finished ntk-probe points under runs/" or "summary.csv: missing (run
/// ntk-probe collect first)" (eighty-second hostile round, D7).
pub(crate) fn check_sweep_dir(dir: &std::path::Path) -> CliResult<()> {
    // A directory this user may not list or enter: said as such, not as one without a
    // sweep's files, which it may well hold (ninety-eighth hostile round, D6).
    if std::fs::metadata(dir).is_ok_and(|m| m.is_dir())
        && let Err(e) = std::fs::read_dir(dir).and_then(|_| std::fs::metadata(dir.join(".")))
        && e.kind() == std::io::ErrorKind::PermissionDenied
    {
        return Err(format!(
            "{}: this user may not read the directory ({e}): make it readable to this user",
            dir.shown()
        )
        .into());
    }
    // A training run's directory is named as such by the commands' own refusal.
    let training = dir.join("metrics.csv").exists();
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() && training => Ok(()),
        // A single run's output set, or a directory with no sweep's files at all, is said to
        // be no sweep (eighty-seventh hostile round, N6: "summary.csv: missing (run ntk-probe
        // collect first)", whose collect then found no points).
        Ok(m) if m.is_dir() && dir.join("summary.json").is_file() && !dir.join("runs").exists() => {
            Err(format!(
                "{}: a single run's output set (its summary.json), not a sweep's directory: \
                 collect and plot take the --out of `ntk-probe sweep`",
                dir.shown()
            )
            .into())
        }
        Ok(m) if m.is_dir() && !dir.join("runs").exists() && !dir.join("summary.csv").exists() => {
            Err(format!(
                "{}: no sweep here (no runs/, summary.csv missing): collect and plot take the \
                 --out of `ntk-probe sweep`",
                dir.shown()
            )
            .into())
        }
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(format!(
            "{}: not a directory (a file, a FIFO or a device): give a sweep's output \
             directory (its --out)",
            dir.shown()
        )
        .into()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(format!(
            "{}: no such directory: give a sweep's output directory (its --out)",
            dir.shown()
        )
        .into()),
        Err(e) => Err(format!(
            "{}: {e}: give a sweep's output directory (its --out)",
            dir.shown()
        )
        .into()),
    }
}
