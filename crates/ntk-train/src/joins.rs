//! The runs a sweep (or one run brought into a collected sweep's `runs/`) adds, checked
//! before any is trained, dry run and run alike, against the runs already under `runs/` as
//! `collect` will merge them at the end ([`ntk_runs::provenance::check_merge`]): a run of a
//! point and seed another run there records already (the merge would count it twice), and, unless
//! `--allow-mixed`, runs of another config beyond the sweep's axes. Before this check the
//! sweep trained its new runs and then failed its own collect, the tables left stale, while
//! its dry run had said nothing (twenty-first hostile round, D1, D2).

use std::path::{Path, PathBuf};

use ntk_runs::provenance::{self, Provenance};

use crate::report::read_runs_except;

/// One run the caller would train: its directory and its provenance.
pub struct Joining<'a> {
    pub dir: PathBuf,
    pub provenance: &'a Provenance,
    /// Whether the caller trains it (again): its files there now are not read, as they may
    /// be what made it stale. A run kept as done is read as `collect` will read it.
    pub trains: bool,
}

/// The runs recorded under `sweep`'s `runs/` (as `collect` reads them) outside the
/// directories in `skip`, with their provenance: none when there is no `runs/` or no run.
/// The directories in `unread` (runs about to be trained again) are not read at all
/// (seventy-eighth hostile round, D1: a stale run's edited files refused its `--recompute`);
/// the others in `skip` are read, so that a kept run's faults are found before any training.
fn recorded(
    sweep: &Path,
    skip: &[PathBuf],
    unread: &[PathBuf],
) -> crate::Result<Vec<(PathBuf, Provenance)>> {
    if !sweep.join("runs").is_dir() {
        return Ok(Vec::new());
    }
    let runs = match read_runs_except(sweep, unread) {
        Ok(runs) => runs,
        Err(crate::Error::NoTrainingRuns { .. } | crate::Error::NoRun { .. }) => {
            return Ok(Vec::new());
        }
        Err(e) => return Err(e),
    };
    Ok(runs
        .into_iter()
        .filter_map(|r| {
            let dir = r.dir;
            let p = r.provenance?;
            (!skip.contains(&dir)).then_some((dir, p))
        })
        .collect())
}

/// A joining run of the point and seed of a run under `runs/` (or of another joining run),
/// or two runs there of one point and seed ([`crate::config::same_point_pair`], the
/// check `collect` makes): the same point and seed, not only the same config, since a run
/// differing in a key that changes no number would be counted as a second seed
/// (twenty-second round, D1).
fn same_point(joining: &[Joining<'_>], there: &[(PathBuf, Provenance)]) -> crate::Result<()> {
    let entries: Vec<(PathBuf, &Provenance)> = there
        .iter()
        .map(|(dir, p)| (dir.clone(), p))
        .chain(joining.iter().map(|j| (j.dir.clone(), j.provenance)))
        .collect();
    let Some((first, second)) = crate::config::same_point_pair(&entries) else {
        return Ok(());
    };
    let joins = joining.iter().find(|j| j.dir == second);
    let recorded = there.iter().find(|(dir, _)| dir == first).map(|(_, p)| p);
    // Only where the joining run's directory is a sweep's own name for it: a run of the
    // user's brought in under a name of their own is not where the run belongs.
    let sweeps_name = |d: &Path| {
        d.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(crate::run_dir::in_run_id_form)
    };
    let same_run = joins.filter(|j| {
        sweeps_name(&j.dir) && recorded.is_some_and(|p| p.fingerprint == j.provenance.fingerprint)
    });
    Err(
        // The run kept at its place, and a copy of it under another name (hundred-and-fifty-
        // first hostile round, D1: the copy was to be moved onto the intact original).
        if let Some(j) = same_run.filter(|j| !j.trains) {
            crate::Error::CopyOfRun {
                copy: first.to_path_buf(),
                run: j.dir.clone(),
            }
        } else if same_run.is_some_and(|j| std::fs::symlink_metadata(&j.dir).is_err()) {
            // The run itself, under another directory's name (hundred-and-fiftieth hostile
            // round, D1: a run moved aside within runs/ was to be removed, where moving it back
            // keeps it).
            crate::Error::ThisRunElsewhere {
                new: second.to_path_buf(),
                there: first.to_path_buf(),
                occupied: false,
            }
        } else if joins.is_some() {
            crate::Error::SameConfigThere {
                new: second.to_path_buf(),
                there: first.to_path_buf(),
            }
        } else {
            crate::Error::SamePointTwice {
                first: first.to_path_buf(),
                second: second.to_path_buf(),
            }
        },
    )
}

/// The check of a sweep writing its runs into `sweep`: `joining` are its runs this process
/// would train or keep, `replaced` the runs other processes will train again (the other
/// shards' under `--recompute`); the directories of both are left out of those read back.
pub fn check_sweep(
    sweep: &Path,
    joining: &[Joining<'_>],
    replaced: &[PathBuf],
    allow_mixed: bool,
) -> crate::Result<()> {
    let skip: Vec<PathBuf> = joining
        .iter()
        .map(|j| j.dir.clone())
        .chain(replaced.iter().cloned())
        .collect();
    let unread: Vec<PathBuf> = joining
        .iter()
        .filter(|j| j.trains)
        .map(|j| j.dir.clone())
        .chain(replaced.iter().cloned())
        .collect();
    let there = recorded(sweep, &skip, &unread)?;
    same_point(joining, &there)?;
    let mut entries: Vec<(PathBuf, Option<&Provenance>)> = there
        .iter()
        .map(|(dir, p)| (dir.clone(), Some(p)))
        .collect();
    // What collect refuses among the runs there already (an edited record, two copies).
    provenance::check_each(&entries, crate::run::ONE_FORM)?;
    if allow_mixed {
        return Ok(());
    }
    entries.extend(joining.iter().map(|j| (j.dir.clone(), Some(j.provenance))));
    one_sweep(&entries).map_err(|e| {
        crate::Error::from(ntk_runs::Error::At {
            path: sweep.to_path_buf(),
            source: Box::new(e),
        })
    })
}

/// The check of one run brought into a collected training sweep's `runs/` (the output
/// rule's exception, `ntk_files::outset::Output::TrainingRun`): its config must not be one
/// a run there records already. Another config is the user's to merge (`collect
/// --allow-mixed`). Nothing to check for a run elsewhere. With `claims` (the run), the check
/// is made under the sweep's join guard and the point is claimed for this process; without
/// (a dry run), the claims there are only read and nothing is made or removed
/// (forty-second hostile round, D2: the dry run made `.ntk-writers`, its guard and a claim,
/// and removed the user's files at claims' names).
pub fn check_single(out: &Path, joining: &Joining<'_>, claims: bool) -> crate::Result<()> {
    let Some(sweep) = out
        .parent()
        .filter(|p| p.file_name().is_some_and(|n| n == "runs"))
        .and_then(Path::parent)
    else {
        return Ok(());
    };
    if !sweep.join("sweep.csv").is_file() {
        return Ok(());
    }
    // A sweep being written now may reach this run's point after this check (twenty-second
    // hostile round, D3: both trained, and the sweep's collect failed).
    if let Some(holder) = ntk_files::lock::SweepClaim::live_writer(sweep) {
        return Err(crate::Error::SweepBeingWritten {
            sweep: sweep.to_path_buf(),
            holder,
        });
    }
    // The check and this run's claim of its point under one guard: two runs of one point
    // and seed started together both passed the check of the runs present (twenty-third
    // hostile round, D5).
    let _guard = if claims {
        Some(ntk_files::lock::PointClaim::guard(sweep)?)
    } else {
        None
    };
    let key = provenance::sha256_hex(
        serde_json::to_string(&crate::config::point_key(&joining.provenance.config))
            .expect("values serialize")
            .as_bytes(),
    );
    let key = &key[..16];
    let live = if claims {
        ntk_files::lock::PointClaim::live(sweep, key)
    } else {
        ntk_files::lock::PointClaim::holder(sweep, key)
    };
    if let Some(holder) = live {
        return Err(crate::Error::PointBeingTrained {
            sweep: sweep.to_path_buf(),
            holder,
        });
    }
    let this = std::slice::from_ref(&joining.dir);
    let there = recorded(sweep, this, if joining.trains { this } else { &[] })?;
    same_point(std::slice::from_ref(joining), &there)?;
    warn_mixed(sweep, joining, &there);
    if claims {
        ntk_files::lock::PointClaim::claim(sweep, key)?;
    }
    Ok(())
}

/// Says, without refusing, where a run brought into a collected sweep's `runs/` differs from
/// the runs there beyond the sweep's axes: the merge of the two is the user's, but from then
/// on the sweep's dry run, its run and `collect` refuse the mix until `--allow-mixed` or the
/// run is moved (ninety-third hostile round, N2: the dry run said "new" and nothing more).
fn warn_mixed(sweep: &Path, joining: &Joining<'_>, there: &[(PathBuf, Provenance)]) {
    let entries: Vec<(PathBuf, Option<&Provenance>)> = there
        .iter()
        .map(|(dir, p)| (dir.clone(), Some(p)))
        .chain(std::iter::once((
            joining.dir.clone(),
            Some(joining.provenance),
        )))
        .collect();
    if let Err(e) = one_sweep(&entries) {
        eprintln!(
            "warning: {}: this run and the runs there are not one sweep ({e}); from now on \
             the sweep's runs and `ntk-train collect {}` refuse them unless given \
             --allow-mixed (or move this run elsewhere)",
            sweep.display(),
            sweep.display()
        );
    }
}

/// Whether runs are one sweep's, as `collect` merges them: one base config beyond the
/// sweep's axes, and the trainer's own keys alike.
fn one_sweep(entries: &[crate::config::RecordedRun<'_>]) -> ntk_runs::Result<()> {
    provenance::check_one_base(entries, &crate::config::merge_axes(), crate::run::ONE_FORM)
        .and_then(|_| crate::config::own_keys_agree(entries))
}
