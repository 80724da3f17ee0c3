//! Whether a directory's `runs/` is a sweep's: what proves the tables and figures beside it
//! the tools' to replace, and the directory theirs to add runs to (hundred-and-twenty-sixth
//! hostile round, D3: an empty `runs/`, one holding a user's notes, or TensorBoard's default
//! `runs/` were each taken for a sweep's; a user's figure beside it was replaced with no
//! word, and ntk-train put its run among TensorBoard's logs).

use std::path::{Path, PathBuf};

use ntk_files::lock::WRITERS_DIR;

/// What stands at a directory's `runs/`, as [`check_runs`] finds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runs {
    /// No `runs/`, or an empty one (hidden entries aside): nothing proves the directory a
    /// sweep's, and nothing of a user's stands in it.
    Unproven,
    /// A sweep's: a run of the tool's under it (a directory holding the tool's marker file)
    /// or a sweep's claim ([`WRITERS_DIR`], which every sweep writer makes) beside it.
    Sweep,
    /// Something other than a directory at `runs` (a file, a FIFO, a link): refused, before
    /// any work, by the directory's own check (a link) or the points' (where each makes its
    /// directory), whose refusals name it.
    NotADirectory,
}

/// Refuses, before any work, an `out` for a sweep whose runs each hold `marker` in the
/// directories `planned` where its `runs/` is no sweep's ([`check_runs`]), or where a file
/// that the sweep writes at its top (`writes`: its tables and figures) stands with no
/// sweep's `runs/` beside it (seventy-third hostile round, D5: a user's `sweep.csv` alone was
/// replaced; hundred-and-twenty-sixth, D3: an empty `runs/` beside a user's figure was taken
/// for a sweep's). Both tools' sweeps.
pub fn check_sweep_out(
    out: &Path,
    (marker, planned): (&str, &[PathBuf]),
    writes: &dyn Fn(&str) -> bool,
) -> ntk_files::Result<()> {
    let proofs: &[&str] = match check_runs(out, marker, planned)? {
        Runs::Sweep | Runs::NotADirectory => &["runs"],
        Runs::Unproven => &[],
    };
    ntk_files::outset::check_proven(out, proofs, writes, "with no sweep's runs/ beside it")
}

/// What `out/runs` is for a sweep whose runs each hold `marker` (`summary.json`,
/// `config.toml`) in the directories `planned` (its points' own, under `out/runs`):
/// [`Runs::Sweep`] where something proves it a sweep's, [`Runs::Unproven`] where it is
/// missing, empty or holds only the places of planned points (whose own checks name what
/// stands there); refused, before any work, where it holds other entries and nothing proves
/// it a sweep's (a user's folder of that name: its entries are named), or where `runs` is
/// not a directory.
pub fn check_runs(out: &Path, marker: &str, planned: &[PathBuf]) -> ntk_files::Result<Runs> {
    let runs = out.join("runs");
    let Ok(meta) = std::fs::symlink_metadata(&runs) else {
        return Ok(Runs::Unproven);
    };
    // A link is named, with its target, by the directory's own check (`check_owned`); a
    // file or a FIFO at `runs` by the points' (where each makes its directory).
    if !meta.is_dir() {
        return Ok(Runs::NotADirectory);
    }
    let claimed = std::fs::symlink_metadata(out.join(WRITERS_DIR)).is_ok_and(|m| m.is_dir());
    if claimed || holds_run(&runs, marker) {
        return Ok(Runs::Sweep);
    }
    let entries: Vec<String> = std::fs::read_dir(&runs)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| !planned.iter().any(|p| p.starts_with(e.path())))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    let beside = format!(
        "not a run of these tools (no {marker} in it), in a runs/ no sweep has claimed (no \
         {WRITERS_DIR}/ beside it)"
    );
    ntk_files::outset::refuse_listed(&runs, entries, Some(&beside)).map(|()| Runs::Unproven)
}

/// Whether a directory under `runs` (not `runs` itself) holds `marker` as a regular file.
fn holds_run(runs: &Path, marker: &str) -> bool {
    let mut found = false;
    super::walk(
        runs,
        |n| n != "checkpoints",
        |dir, files| found |= dir != runs && files.iter().any(|(n, _)| n == marker),
    );
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Missing or empty: unproven. A run (its marker under runs/) or a sweep's claim: a
    /// sweep's. TensorBoard's logs or a user's notes: refused by name, but at a planned
    /// point's place.
    #[test]
    fn only_a_run_or_a_claim_proves_a_sweep() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path();
        assert_eq!(check_runs(out, "config.toml", &[]).unwrap(), Runs::Unproven);
        let runs = out.join("runs");
        std::fs::create_dir(&runs).unwrap();
        std::fs::write(runs.join(".DS_Store"), "").unwrap();
        assert_eq!(check_runs(out, "config.toml", &[]).unwrap(), Runs::Unproven);
        let logs = runs.join("Dec06_12-00-00_host");
        std::fs::create_dir(&logs).unwrap();
        std::fs::write(logs.join("events.out.tfevents.1733486400.host"), "x").unwrap();
        std::fs::write(runs.join("notes.txt"), "mine").unwrap();
        let e = check_runs(out, "config.toml", &[]).unwrap_err().to_string();
        assert!(
            e.contains(
                "Dec06_12-00-00_host, notes.txt; each not a run of these tools (no \
                 config.toml in it), in a runs/ no sweep has claimed (no .ntk-writers/"
            ),
            "{e}"
        );
        // A planned point's place is the point's to check.
        let planned = [runs.join("Dec06_12-00-00_host/x"), runs.join("notes.txt")];
        assert_eq!(
            check_runs(out, "config.toml", &planned).unwrap(),
            Runs::Unproven
        );
        // The marker in runs/ itself is no run's.
        std::fs::write(runs.join("config.toml"), "").unwrap();
        assert!(check_runs(out, "config.toml", &[]).is_err());
        // A run's marker under it, or a sweep's claim beside it.
        std::fs::write(logs.join("config.toml"), "").unwrap();
        assert_eq!(check_runs(out, "config.toml", &[]).unwrap(), Runs::Sweep);
        assert!(check_runs(out, "summary.json", &[]).is_err());
        std::fs::create_dir(out.join(WRITERS_DIR)).unwrap();
        assert_eq!(check_runs(out, "summary.json", &[]).unwrap(), Runs::Sweep);
    }
}
