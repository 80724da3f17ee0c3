//! Whether a directory's `runs/` is a sweep's: what proves the tables and figures beside it
//! the tools' to replace, and the directory theirs to add runs to (hundred-and-twenty-sixth
//! hostile round, D3: an empty `runs/`, one holding a user's notes, or TensorBoard's default
//! `runs/` were each taken for a sweep's; a user's figure beside it was replaced with no
//! word, and ntk-train put its run among TensorBoard's logs). The proof is a run of the
//! tool's under it, as the tool reads its marker, or a collected sweep's table beside it
//! (hundred-and-twenty-seventh, D1: a claim, `.ntk-writers/`, left by a sweep refused before
//! its first point, and any file named `summary.json`, proved a user's folder a sweep's).

use std::path::{Path, PathBuf};

/// What stands at a directory's `runs/`, as [`check_runs`] finds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runs {
    /// No `runs/`, or one holding nothing but hidden entries and planned points' places:
    /// nothing proves the directory a sweep's, and nothing of a user's stands in it.
    Unproven,
    /// A sweep's: a run of the tool's is under it, but no collected sweep's table beside it
    /// (a sweep not collected yet; a user's tables and figures beside it are no collect's).
    Run,
    /// A collected sweep's: its table ([`ntk_files::outset::holds_sweep_table`]) is beside
    /// it, which a collect writes before its other tables and figures.
    Collected,
    /// Something other than a directory at `runs` (a file, a FIFO, a link): refused, before
    /// any work, by the directory's own check (a link) or the points' (where each makes its
    /// directory), whose refusals name it.
    NotADirectory,
}

/// How a tool tells a sweep's run in a directory (`is_run`: its marker read as the tool
/// reads it, the directory where a sweep puts a run) and where this sweep's own points go
/// (`planned`: their directories, under `out/runs`).
pub struct SweepRuns<'a> {
    pub is_run: &'a dyn Fn(&Path) -> bool,
    pub planned: &'a [PathBuf],
}

/// What `out/runs` is for the sweep `runs`: [`Runs::Collected`] where a collected sweep's
/// table is beside it, [`Runs::Run`] where a run of the tool's is under it (at a planned
/// point's place or not), [`Runs::Unproven`] where it is
/// missing or holds nothing but hidden entries and planned points' places (whose own checks
/// name what stands there); refused, before any work, where it is not proven and an entry is
/// not a planned point's place (a user's folder, TensorBoard's logs, a user's own
/// `summary.json`). In a sweep's `runs/` an entry of another kind is left to the sweep's own
/// checks and its collect's warnings (a run joined by `run --out SWEEP/runs/NAME`, another
/// config's results, a user's notes).
pub fn check_runs(out: &Path, runs: &SweepRuns) -> ntk_files::Result<Runs> {
    let root = out.join("runs");
    let Ok(meta) = std::fs::symlink_metadata(&root) else {
        return Ok(Runs::Unproven);
    };
    if !meta.is_dir() {
        return Ok(Runs::NotADirectory);
    }
    let entries: Vec<(String, PathBuf)> = std::fs::read_dir(&root)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .filter(|(name, _)| !name.starts_with('.') || VERSION_CONTROL.contains(&name.as_str()))
        .collect();
    if ntk_files::outset::holds_sweep_table(out) {
        return Ok(Runs::Collected);
    }
    if entries.iter().any(|(_, path)| holds_run(path, runs.is_run)) {
        return Ok(Runs::Run);
    }
    let foreign: Vec<String> = entries
        .into_iter()
        .filter(|(_, path)| !runs.planned.iter().any(|p| p.starts_with(path)))
        .map(|(name, _)| name)
        .collect();
    ntk_files::outset::refuse_listed(
        &root,
        foreign,
        Some(
            "not a sweep's run of this tool (its marker read as the tool reads it) nor a point \
             of this sweep, in a runs/ no sweep's run or table proves a sweep's",
        ),
    )?;
    Ok(Runs::Unproven)
}

/// Refuses, before any work, an `out` for the sweep `runs` where its `runs/` is no sweep's
/// ([`check_runs`]), or where a file that the sweep writes at its top (`writes`: its tables
/// and figures) stands with no sweep's `runs/` and collected table beside it and is not
/// recorded as a collect wrote it (seventy-third hostile round, D5: a user's `sweep.csv`
/// alone was replaced; hundred-and-twenty-sixth, D3: an empty `runs/` beside a user's figure
/// was taken for a sweep's; hundred-and-twenty-eighth, D2: a sweep whose collected table
/// was removed refused its own recorded figures). Both tools' sweeps.
pub fn check_sweep_out(
    out: &Path,
    runs: &SweepRuns,
    writes: &dyn Fn(&str) -> bool,
) -> ntk_files::Result<()> {
    match check_runs(out, runs)? {
        Runs::Collected | Runs::NotADirectory => Ok(()),
        // A table or figure is a collect's only beside the table it writes first: a run of
        // the tool's under `runs/` does not make a user's figure beside it the sweep's
        // (hundred-and-twenty-seventh hostile round, D2: one run beside TensorBoard's logs).
        // Beside a `runs/` a run of the tool's proves, a file the record proves a collect's
        // as written (its size and SHA-256) is the sweep's: one whose table was removed
        // (hundred-and-twenty-eighth hostile round, D2). A caption is not the sweep's to
        // replace there: its collect draws for a screen, writes none, and leaves one the
        // record does not prove where it stands, saying so ([`super::settle_captions`]).
        // A file the record lists, edited since, is the collect's too: its name is, as
        // beside a collected table, and the closing collect writes over it (hundred-and-
        // fifty-fifth hostile round, D1: a `--recompute` killed after retiring the tables
        // left an edited best.csv, and no sweep command would resume the directory).
        Runs::Run => {
            let record = super::reports::recorded(out);
            let unrecorded = |name: &str| {
                writes(name) && !name.ends_with(".caption.txt") && !record.contains_key(name)
            };
            ntk_files::outset::check_proven(
                out,
                &[],
                &unrecorded,
                "not recorded as a collect wrote it (.ntk-reports.json) and with no collected \
                 table (results.csv, sweep.csv) beside it",
            )
        }
        // With no `runs/` a run proves, the record proves no file a sweep's: it says a
        // collect wrote the bytes, not of which sweep (hundred-and-twenty-ninth hostile round,
        // D2: another sweep's figures and record, copied without their runs, were replaced
        // by a sweep of another config).
        Runs::Unproven => {
            ntk_files::outset::check_proven(out, &[], writes, "with no sweep's runs/ beside it")
        }
    }
}

/// The hidden entries that make `runs/` a user's work tree, not a place for a sweep's runs
/// (hundred-and-twenty-seventh hostile round, N2 of the second review: a `runs/` holding
/// only `.git` counted as empty and ntk-train wrote its run into it); other hidden entries
/// (`.DS_Store`, the tools' own temporary files) are passed over.
const VERSION_CONTROL: [&str; 4] = [".git", ".hg", ".svn", ".jj"];

/// Whether `entry` or a directory under it is a sweep's run (`is_run`).
fn holds_run(entry: &Path, is_run: &dyn Fn(&Path) -> bool) -> bool {
    let mut found = false;
    super::walk(
        entry,
        |n| n != "checkpoints",
        |dir, _| found = found || is_run(dir),
    );
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Missing or empty: unproven. A run of the tool's (as `is_run` reads it) or a sweep's
    /// table: a sweep's. TensorBoard's logs or a user's notes: refused by name but at a
    /// planned point's place; a leftover claim (`.ntk-writers/`) or a marker that does not
    /// read as the tool's proves nothing.
    #[test]
    fn only_a_run_or_a_table_proves_a_sweep() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path();
        let is_run =
            |d: &Path| std::fs::read_to_string(d.join("run.txt")).is_ok_and(|t| t == "ours");
        let none = SweepRuns {
            is_run: &is_run,
            planned: &[],
        };
        assert_eq!(check_runs(out, &none).unwrap(), Runs::Unproven);
        let runs = out.join("runs");
        std::fs::create_dir(&runs).unwrap();
        std::fs::write(runs.join(".DS_Store"), "").unwrap();
        std::fs::create_dir(out.join(".ntk-writers")).unwrap();
        assert_eq!(check_runs(out, &none).unwrap(), Runs::Unproven);
        // A user's work tree: named.
        std::fs::create_dir(runs.join(".git")).unwrap();
        let e = check_runs(out, &none).unwrap_err().to_string();
        assert!(e.contains(".git"), "{e}");
        std::fs::remove_dir(runs.join(".git")).unwrap();
        let logs = runs.join("Dec06_12-00-00_host");
        std::fs::create_dir(&logs).unwrap();
        std::fs::write(logs.join("events.out.tfevents.1733486400.host"), "x").unwrap();
        std::fs::write(runs.join("notes.txt"), "mine").unwrap();
        let refused = |r: &SweepRuns| check_runs(out, r).unwrap_err().to_string();
        let e = refused(&none);
        assert!(
            e.contains(
                "(Dec06_12-00-00_host, notes.txt; each not a sweep's run of this tool (its \
                 marker read as the tool reads it) nor a point of this sweep"
            ),
            "{e}"
        );
        // A planned point's place is the point's to check.
        let planned = [runs.join("Dec06_12-00-00_host/x"), runs.join("notes.txt")];
        let at_points = SweepRuns {
            is_run: &is_run,
            planned: &planned,
        };
        assert_eq!(check_runs(out, &at_points).unwrap(), Runs::Unproven);
        // A marker that is not the tool's proves nothing; the tool's does.
        let run = runs.join("a/b");
        std::fs::create_dir_all(&run).unwrap();
        std::fs::write(run.join("run.txt"), "a user's").unwrap();
        assert!(refused(&none).contains("(Dec06_12-00-00_host, a, notes.txt; each"));
        std::fs::write(run.join("run.txt"), "ours").unwrap();
        assert_eq!(check_runs(out, &none).unwrap(), Runs::Run);
        std::fs::remove_dir_all(runs.join("a")).unwrap();
        // A collected sweep's table beside runs/.
        std::fs::write(out.join("sweep.csv"), "id,status,depth,x\n").unwrap();
        assert_eq!(check_runs(out, &none).unwrap(), Runs::Collected);
        // A file at `runs` is left to the points' checks.
        let other = tempfile::tempdir().unwrap();
        std::fs::write(other.path().join("runs"), "mine").unwrap();
        assert_eq!(
            check_runs(other.path(), &none).unwrap(),
            Runs::NotADirectory
        );
    }
}
