//! The places on disk a command writes or removes, each with the rule that what stands there
//! must meet, checked together before any work by the command's dry run and its run alike.
//!
//! Each tool keeps one list of its places ([`Place`]), built from what the command plans
//! (ntk-probe's `sweep::places`, ntk-train's `places`), and checks it with [`check`]. Hostile
//! rounds 37 to 41 found the places checked one by one, some only when written: a FIFO at a
//! table's name, a directory at a lock's, a user's file at a failure record's, after the
//! sweep's work or in the run but not its dry run. One list per command makes a place that is
//! written but not checked visible where the places are listed.

use std::path::{Path, PathBuf};

/// What may stand at a place a command writes or removes.
pub enum Rule<E> {
    /// A file the command writes again whole (a table, a figure, a run's file), replaced by
    /// an atomic rename: absent, or a regular file of this user ([`crate::io::check_target`]).
    /// Not a symbolic link ([`crate::io::UnsafeTarget::Link`]): what the command made there
    /// is a file, and a link's target is outside what it made (fifty-first hostile round,
    /// D2: `ntk-probe collect` wrote its tables into a user's file through a link at
    /// `results.csv`, which the sweep refuses). The place's path is the file's.
    Replaced,
    /// The lock file in a directory the command writes into
    /// ([`crate::lock::DirLock::check_place`]). The place's path is the directory's.
    Lock,
    /// The lock file beside an output the command replaces whole
    /// ([`crate::lock::DirLock::check_place_beside`]). The place's path is the output's.
    LockBeside,
    /// A sweep's writers' directory `.ntk-writers`, its guards and the registration of the
    /// config of this `fingerprint` ([`crate::lock::SweepClaim::check_places`]). The place's
    /// path is the sweep's `out`.
    Writers { fingerprint: String },
    /// A rule of the tool's own for a directory it writes into or replaces (a point's output
    /// set, a run's checkpoints, a failure record), called with the place's path.
    Own(fn(&Path) -> Result<(), E>),
}

/// One place a command writes or removes and the rule what stands there must meet.
pub struct Place<E> {
    pub path: PathBuf,
    pub rule: Rule<E>,
}

impl<E> Place<E> {
    pub fn new(path: impl Into<PathBuf>, rule: Rule<E>) -> Self {
        Self {
            path: path.into(),
            rule,
        }
    }
}

/// Checks every place in the order listed; the first that fails its rule is the error, which
/// names the path.
pub fn check<E: From<crate::Error>>(places: &[Place<E>]) -> Result<(), E> {
    for place in places {
        let path = place.path.as_path();
        match &place.rule {
            Rule::Replaced => replaced(path).map_err(|e| E::from(crate::Error::from(e)))?,
            Rule::Lock => crate::lock::DirLock::check_place(path)?,
            Rule::LockBeside => crate::lock::DirLock::check_place_beside(path)?,
            Rule::Writers { fingerprint } => {
                crate::lock::SweepClaim::check_places(path, fingerprint)?
            }
            Rule::Own(rule) => rule(path)?,
        }
    }
    Ok(())
}

/// [`Rule::Replaced`]'s check of `path`: a symbolic link refused, else
/// [`crate::io::check_target`].
fn replaced(path: &Path) -> Result<(), crate::io::UnsafeTarget> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(crate::io::UnsafeTarget::Link {
            path: path.to_path_buf(),
            target: std::fs::read_link(path).unwrap_or_default(),
        });
    }
    crate::io::check_target(path).map(drop)
}

/// The entries of `dir` whose names the command writes (`writes`), as places it replaces
/// ([`Rule::Replaced`]): a sweep's tables and figures, written again at its end. A place the
/// command writes that does not exist yet needs no check, so only what `dir` holds is listed.
pub fn replaced_in<E>(dir: &Path, writes: &dyn Fn(&str) -> bool) -> Vec<Place<E>> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut places: Vec<Place<E>> = entries
        .flatten()
        .filter(|e| e.file_name().to_str().is_some_and(writes))
        .map(|e| Place::new(e.path(), Rule::Replaced))
        .collect();
    // The first refused is the same on every run.
    places.sort_by(|a, b| a.path.cmp(&b.path));
    places
}

/// [`check`] of [`replaced_in`]: the files a command writes again in `dir`, checked before it
/// writes the first (forty-third hostile round, D3: `collect` and `plot` checked each when
/// they wrote it, after the ones before it were written).
pub fn check_replaced_in(dir: &Path, writes: &dyn Fn(&str) -> bool) -> crate::Result<()> {
    check(&replaced_in::<crate::Error>(dir, writes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refuse_notes(dir: &Path) -> crate::Result<()> {
        if dir.join("notes.txt").exists() {
            return Err(crate::Error::OutputPath {
                path: dir.join("notes.txt"),
                why: "mine".into(),
            });
        }
        Ok(())
    }

    #[test]
    fn each_rule_refuses_what_its_place_must_not_hold_and_names_it() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path();
        // Nothing there: every rule passes.
        let places: Vec<Place<crate::Error>> = vec![
            Place::new(out.join("results.csv"), Rule::Replaced),
            Place::new(out.join("run"), Rule::Lock),
            Place::new(out.join("set"), Rule::LockBeside),
            Place::new(
                out,
                Rule::Writers {
                    fingerprint: "ab".repeat(32),
                },
            ),
            Place::new(out, Rule::Own(refuse_notes)),
        ];
        check(&places).unwrap();
        // A directory at a table's name.
        std::fs::create_dir(out.join("results.csv")).unwrap();
        let e = check(&places).unwrap_err().to_string();
        assert!(e.contains("results.csv"), "{e}");
        std::fs::remove_dir(out.join("results.csv")).unwrap();
        // A link at a table's name to a user's file, and to nothing: refused, never written
        // through (fifty-first hostile round, D2).
        let theirs = tmp.path().join("theirs.txt");
        std::fs::write(&theirs, "the user's").unwrap();
        for target in [theirs.clone(), out.join("gone")] {
            std::os::unix::fs::symlink(&target, out.join("results.csv")).unwrap();
            let e = check(&places).unwrap_err().to_string();
            assert!(e.contains("results.csv: is a symbolic link to"), "{e}");
            assert!(e.contains(&target.display().to_string()), "{e}");
            std::fs::remove_file(out.join("results.csv")).unwrap();
        }
        assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "the user's");
        // A user's text at a lock's place in the run directory, then beside the set.
        std::fs::create_dir(out.join("run")).unwrap();
        std::fs::write(out.join("run/.ntk-lock"), "my notes").unwrap();
        let e = check(&places).unwrap_err().to_string();
        assert!(e.contains("run/.ntk-lock"), "{e}");
        std::fs::remove_file(out.join("run/.ntk-lock")).unwrap();
        std::fs::write(out.join(".set.ntk-lock"), "my notes").unwrap();
        let e = check(&places).unwrap_err().to_string();
        assert!(e.contains(".set.ntk-lock"), "{e}");
        std::fs::remove_file(out.join(".set.ntk-lock")).unwrap();
        // A file at the writers' directory's name.
        std::fs::write(out.join(".ntk-writers"), "my notes").unwrap();
        let e = check(&places).unwrap_err().to_string();
        assert!(e.contains(".ntk-writers"), "{e}");
        std::fs::remove_file(out.join(".ntk-writers")).unwrap();
        // The tool's own rule.
        std::fs::write(out.join("notes.txt"), "mine").unwrap();
        let e = check(&places).unwrap_err().to_string();
        assert!(e.contains("notes.txt"), "{e}");
        // Every file is kept.
        assert_eq!(
            std::fs::read_to_string(out.join("notes.txt")).unwrap(),
            "mine"
        );
    }

    #[test]
    fn only_the_names_the_command_writes_are_listed_in_order() {
        let tmp = tempfile::tempdir().unwrap();
        for name in ["summary.csv", "notes.txt", "results.csv"] {
            std::fs::write(tmp.path().join(name), "x").unwrap();
        }
        let places: Vec<Place<crate::Error>> =
            replaced_in(tmp.path(), &|n: &str| n.ends_with(".csv"));
        let names: Vec<_> = places
            .iter()
            .map(|p| p.path.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["results.csv", "summary.csv"]);
        assert!(replaced_in::<crate::Error>(&tmp.path().join("absent"), &|_| true).is_empty());
    }
}
