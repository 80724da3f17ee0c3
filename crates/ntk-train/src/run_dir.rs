//! A run's directory and its lifecycle: what it may hold ([`RUN_FILES`], [`check_run_dir`]),
//! and how a run starts in it ([`open_run_dir`]: fresh, from its checkpoint, or done),
//! decided by what is there and `--resume` ([`resume_decision`]) and checked against the
//! recorded provenance.

use std::path::Path;

use ntk_files::lock::{DirLock, LOCK_FILE};
use ntk_runs::provenance;

use crate::checkpoint;
use crate::checkpoint::RunIdentity;
use crate::summary::{TrainSummary, read_summary};

/// What a run writes in its directory (`checkpoints` is a directory): what `recompute`
/// removes, and whose half-written leftovers a new start cleans.
pub const RUN_FILES: [&str; 10] = [
    "summary.json",
    "config.toml",
    "metrics.csv",
    "ntk.csv",
    "representations.csv",
    "predicted.csv",
    "predicted_spectrum.csv",
    "checkpoint.json",
    "checkpoints",
    ntk_runs::sweep::FAILED_FILE,
];

/// What a run directory holds and `--resume` decide, before the recorded provenance is
/// checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ResumeDecision {
    /// Nothing there: train from the initialization.
    Fresh,
    /// A run is there and `--resume` was not passed.
    Refuse,
    /// An interrupted run: continue from its checkpoint.
    FromCheckpoint,
    /// A finished (or diverged) run: its summary is the result.
    Finished,
    /// Epoch checkpoints but no checkpoint pointer: nothing says which checkpoint to trust,
    /// and starting over would delete them.
    NoPointer,
}

/// The decision for a directory with (or without) a `summary.json`, a checkpoint pointer
/// and epoch checkpoints (`checkpoints/epoch-NNNNN`).
pub(crate) fn resume_decision(
    resume: bool,
    has_summary: bool,
    has_checkpoint: bool,
    has_epochs: bool,
) -> ResumeDecision {
    match (resume, has_summary, has_checkpoint, has_epochs) {
        (false, false, false, false) => ResumeDecision::Fresh,
        (false, _, _, _) => ResumeDecision::Refuse,
        (true, true, _, _) => ResumeDecision::Finished,
        (true, false, true, _) => ResumeDecision::FromCheckpoint,
        (true, false, false, true) => ResumeDecision::NoPointer,
        (true, false, false, false) => ResumeDecision::Fresh,
    }
}

/// Removes the write leftovers of dead writers in the run directory `out`: of the run's
/// files and reports (`metrics.csv.ntk-tmp-PID`), and in its checkpoints. Nothing of
/// anyone else's, nor of a live writer.
pub(crate) fn clean_leftovers(out: &Path) {
    ntk_files::outset::clean_dir(out, None, &|f: &str| {
        RUN_FILES.contains(&f) || crate::files::is_report_file(f)
    });
    ntk_files::outset::clean_tree(&out.join("checkpoints"), &checkpoint::writes_file);
}

/// How `crate::train::train` goes on after [`open_run_dir`].
pub(crate) enum Start {
    Fresh,
    Resume(Box<checkpoint::Loaded>),
    /// The finished run's summary, made by this config.
    Done(Box<TrainSummary>),
}

/// Prepares the output directory: creates it, cleans half-written leftovers, finds a
/// verified checkpoint, decides ([`resume_decision`]), checks that a checkpoint or summary
/// to be reused was made by this config (its provenance), and records `config.toml` for a
/// run that trains.
pub(crate) fn open_run_dir(
    out: &Path,
    identity: &RunIdentity,
    resume: bool,
) -> crate::Result<(DirLock, Start)> {
    let (provenance, config_text) = (&identity.provenance, identity.config.as_str());
    check_run_dir(out)?;
    std::fs::create_dir_all(out).map_err(|source| ntk_files::Error::Write {
        path: out.to_path_buf(),
        source,
    })?;
    // One writer per run directory, from here to the end of the run.
    let lock = DirLock::acquire(out)?;
    // Asked before the dead writer's copy of the pointer is cleaned.
    let cut = checkpoint::pointer_cut(out);
    // One this user cannot remove is refused before anything is cleaned, its writer's copy of
    // the pointer kept (ninety-first hostile round, D2).
    if cut && let Some(why) = checkpoint::unrecorded_unremovable(out) {
        return Err(ntk_files::Error::OutputPath {
            path: out.join("checkpoints"),
            why: format!(
                "the run's first checkpoint was cut off before checkpoint.json recorded it, and \
                 this user cannot remove it ({why}): its owner removes it, then the run starts \
                 over"
            ),
        }
        .into());
    }
    clean_leftovers(out);
    checkpoint::remove_unfinished(out);
    if cut {
        checkpoint::remove_unrecorded(out);
        eprintln!(
            "note: {}: its first checkpoint was cut off before checkpoint.json recorded it \
             (the run was killed between the two): removed, and the run starts over",
            out.display()
        );
    }
    let summary_path = out.join("summary.json");
    let found = checkpoint::find(out)?;
    // Epoch checkpoints (a run killed before its first checkpoint has none: it starts over,
    // losing only epochs that no checkpoint held).
    let has_epochs = checkpoint::has_kept_epochs(out);
    let decision = resume_decision(resume, summary_path.exists(), found.is_some(), has_epochs);
    match decision {
        ResumeDecision::Refuse => {
            return Err(crate::Error::RunExists {
                out: out.to_path_buf(),
            });
        }
        ResumeDecision::NoPointer => {
            return Err(crate::Error::NoCheckpointPointer {
                out: out.to_path_buf(),
            });
        }
        _ => {}
    }
    if let Some(ck) = &found {
        let recorded = ck.pointer.provenance.as_ref();
        provenance::check_reuse(&out.join("checkpoint.json"), recorded, provenance)
            .map_err(ntk_runs::Error::from)?;
    }
    if decision == ResumeDecision::Finished
        && let Some(s) = read_summary(out)?
    {
        provenance::check_reuse(&summary_path, s.provenance.as_ref(), provenance)
            .map_err(ntk_runs::Error::from)?;
        return Ok((lock, Start::Done(Box::new(s))));
    }
    // Named as the file (eighty-eighth hostile round, D3: `t2: t2: No space left on device`).
    let config_path = out.join("config.toml");
    ntk_files::io::atomic_write(&config_path, config_text.as_bytes()).map_err(|source| {
        ntk_files::Error::Write {
            path: config_path.clone(),
            source,
        }
    })?;
    Ok((
        lock,
        found.map_or(Start::Fresh, |ck| Start::Resume(Box::new(ck))),
    ))
}

/// What proves a directory a run's: its lock (every run leaves it), its summary, its
/// checkpoint pointer, or a sweep's failure record of it.
const RUN_PROOFS: [&str; 4] = [
    LOCK_FILE,
    "summary.json",
    "checkpoint.json",
    ntk_runs::sweep::FAILED_FILE,
];

/// The first of a run's files ([`RUN_FILES`], the lock aside) in `dir` that is a symbolic
/// link, with why it is not read: a run's files are the ones it wrote, and a link leads to
/// another's (hundred-and-forty-fourth hostile round, N2; the hundred-and-forty-seventh,
/// D2: a linked `checkpoints/` was read through by the plans, and its model called
/// damaged, to be trained again where the sweep refused to).
pub fn linked_file(dir: &Path) -> Option<String> {
    RUN_FILES
        .iter()
        .map(|name| dir.join(name))
        .find(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink()))
        .map(|p| {
            format!(
                "{}: a symbolic link, never followed: a run's files are the ones it wrote \
                 (copy the file itself here, if it is this run's, or move the link away)",
                p.display()
            )
        })
}

/// Why the run in `dir` holds a summary but no `config.toml`: its results cannot be
/// labelled, and are not collected (hundred-and-forty-sixth hostile round, D2; the
/// hundred-and-forty-seventh, D1 and D3: collect warned and chose another rate in its
/// place, and plot said "no run here"). It ends with one remedy, restoring the file; each
/// caller adds the other in its own words (the plans' stale remedy, once: the hundred-and-
/// forty-eighth hostile round, second review, N4, had it twice).
pub fn missing_config(dir: &Path) -> Option<String> {
    let config = dir.join("config.toml");
    let gone = |p: &Path| {
        std::fs::symlink_metadata(p).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
    };
    (gone(&config) && !gone(&dir.join("summary.json"))).then(|| {
        format!(
            "{}: missing beside the run's summary.json, so the run is not collected: restore \
             it",
            config.display()
        )
    })
}

/// Refuses a run directory the tools did not make, before any work: a sweep's directory (a
/// `runs/` in it), an entry that is not a run's file ([`RUN_FILES`] and the report's tables
/// and figures, [`crate::files::is_report_file`]), a file at a run's name with no run beside
/// it (no lock, summary, checkpoint pointer or failure record, [`RUN_PROOFS`]: a user's
/// file, not ours to overwrite, nor to take for the run's: seventy-third hostile round, D5,
/// a user's `predicted.csv` stood for the prediction), a `summary.json` another tool wrote
/// (`--recompute` would replace it), or a `checkpoints` that is a symbolic link (old
/// checkpoints are deleted there).
pub fn check_run_dir(out: &Path) -> crate::Result<()> {
    // A sweep's directory (its runs under `runs/`) is no run's: a run there replaced the
    // sweep's tables and figures with its own (fourteenth hostile round, D7).
    crate::files::refuse_probe_sweep(out)?;
    if std::fs::symlink_metadata(out.join("runs")).is_ok() {
        return Err(ntk_files::Error::ForeignFiles {
            dir: out.to_path_buf(),
            files: vec![
                "runs/, a sweep's runs: a single run there would replace the sweep's tables; \
                 continue the sweep with `ntk-train sweep`"
                    .into(),
            ],
        }
        .into());
    }
    // A run's file that is a link, in a run's directory, is said as collect says it, with
    // its remedy, not as a foreign file to leave for a new --out (hundred-and-forty-eighth
    // hostile round, N3); in a directory no run made, it is the user's (named with its
    // target below).
    let a_runs = RUN_PROOFS
        .iter()
        .any(|n| std::fs::symlink_metadata(out.join(n)).is_ok());
    if a_runs && let Some(why) = linked_file(out) {
        return Err(crate::Error::NotItsRun(why));
    }
    // A run's directory moved inside this one: said as a run, to move out, not as a file to
    // leave for a new --out (hundred-and-fifty-first hostile round, D4).
    if let Some(nested) = std::fs::read_dir(out)
        .into_iter()
        .flatten()
        .flatten()
        .find(|e| {
            e.file_type().is_ok_and(|t| t.is_dir())
                && ["config.toml", "summary.json"]
                    .iter()
                    .any(|n| std::fs::symlink_metadata(e.path().join(n)).is_ok())
        })
    {
        return Err(crate::Error::NotItsRun(format!(
            "{}: a run's directory inside the run directory {}: each run has a directory of \
             its own, so neither is read as it is; move it out (a sweep's run to runs/, under \
             the name its summary.json records)",
            nested.path().display(),
            out.display()
        )));
    }
    ntk_files::outset::check_owned(out, &|n: &str| {
        RUN_FILES.contains(&n) || crate::files::is_report_file(n)
    })?;
    ntk_files::outset::check_proven(
        out,
        &RUN_PROOFS,
        &|n: &str| RUN_FILES.contains(&n) || crate::files::is_report_file(n),
        "with no run beside it",
    )?;
    if let Some(tool) =
        ntk_runs::provenance::recorded_tool(out).filter(|t| !t.starts_with("ntk-train"))
    {
        return Err(ntk_files::Error::ForeignFiles {
            dir: out.to_path_buf(),
            files: vec![format!(
                "summary.json, written by {tool}, not a training run's"
            )],
        }
        .into());
    }
    let checkpoints = out.join("checkpoints");
    if std::fs::symlink_metadata(&checkpoints).is_ok_and(|m| !m.is_dir()) {
        return Err(ntk_files::Error::OutputPath {
            path: checkpoints,
            why: "not a directory of the run's own (a symbolic link or a file); old \
                  checkpoints are deleted there, so it must not point elsewhere"
                .into(),
        }
        .into());
    }
    Ok(())
}

/// Refuses a table in the run directory `dir` that the run's config `cfg` does not write:
/// `ntk.csv` without `[ntk]`, `representations.csv` without `[representations]`,
/// `predicted.csv` or `predicted_spectrum.csv` without `[prediction]`. It is not the run's
/// (a user's, or another run's), so it is neither read into the run's tables nor written
/// over (seventy-sixth hostile round, D1: another run's `ntk.csv` beside a run killed before
/// its first checkpoint reached `sweep.csv`; D2: one beside a run without `[ntk]` was
/// emptied by `--resume`, then refused after the run trained). A table the run directory's
/// own `summary.json` records, as it records it, is the finished run's (of a config with
/// the table), and one its checkpoint records the interrupted run's
/// ([`checkpoint::records_table`]): not refused here, so that the run is one of another config, which
/// `--recompute` trains again (eighty-second hostile round, D9: it was refused as not the
/// run's, `--recompute` included).
pub fn check_untracked(dir: &Path, cfg: &crate::config::TrainConfig) -> crate::Result<()> {
    // Read only where a table the config does not write stands there (rare): not for every
    // run of every plan.
    let the_runs = |name: &str| {
        crate::summary::read_summary(dir)
            .ok()
            .flatten()
            .and_then(|s| s.files)
            .is_some_and(|f| ntk_runs::manifest::holds_as_recorded(dir, name, &f))
            || checkpoint::records_table(dir, name)
    };
    let tables = [
        ("ntk.csv", "[ntk]", cfg.ntk.is_some()),
        (
            "representations.csv",
            "[representations]",
            cfg.representations.is_some(),
        ),
        ("predicted.csv", "[prediction]", cfg.prediction.is_some()),
        (
            "predicted_spectrum.csv",
            "[prediction]",
            cfg.prediction.is_some(),
        ),
    ];
    for (name, section, written) in tables {
        let path = dir.join(name);
        if !written && std::fs::symlink_metadata(&path).is_ok() && !the_runs(name) {
            return Err(ntk_files::Error::OutputPath {
                path,
                why: format!(
                    "a table this run's config does not write (it has no {section}): not the \
                     run's; move it away"
                ),
            }
            .into());
        }
    }
    Ok(())
}

/// Whether `name` has [`crate::sweep::run_id`]'s form (`depthNNN_..._lr..._seedN`): a sweep's run
/// directory, which `collect` holds to its config's name (runs merged into an experiment
/// under names of their own are not).
pub fn in_run_id_form(name: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    name.strip_prefix("depth").is_some_and(|rest| {
        rest.split_once('_').is_some_and(|(depth, rest)| {
            // `run_id` writes the depth in three digits or more: a merged experiment's own
            // `depth1_...` is not a sweep's name (hundred-and-forty-fifth hostile round, N3:
            // it was refused, to be "moved back").
            digits(depth)
                && depth.len() >= 3
                && rest.contains("_lr")
                && rest
                    .rsplit_once("_seed")
                    .is_some_and(|(_, seed)| digits(seed))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_resume_decision_covers_every_directory_state() {
        use ResumeDecision::*;
        // (resume, summary, checkpoint, trained epochs)
        let cases = [
            ((false, false, false, false), Fresh),
            ((false, false, false, true), Refuse),
            ((false, false, true, true), Refuse),
            ((false, true, false, true), Refuse),
            ((false, true, true, true), Refuse),
            ((true, false, false, false), Fresh),
            ((true, false, false, true), NoPointer),
            ((true, false, true, true), FromCheckpoint),
            ((true, true, false, true), Finished),
            ((true, true, true, true), Finished),
        ];
        for ((resume, summary, ck, epochs), want) in cases {
            let got = resume_decision(resume, summary, ck, epochs);
            assert_eq!(
                got, want,
                "resume {resume} summary {summary} checkpoint {ck} epochs {epochs}"
            );
        }
    }
}
