//! Every place one `ntk-probe run --out DIR` writes or removes, with its rule
//! ([`ntk_files::places`]), checked before any work by the dry run and the run alike: the
//! output set at `DIR` (replaced whole at the run's end), the directory it is made in beside
//! it, and its lock beside it. The tiled route's phase files are checked by their own state
//! ([`super::check_phase_place`], [`crate::phases`]); a sweep's places are
//! [`crate::sweep`]'s.

use std::path::Path;

use ntk_files::places::{Place, Rule};

use crate::Error;

/// The places of a run whose output set goes to `out`.
pub fn planned(out: &Path) -> Vec<Place<Error>> {
    let parent = out.parent().filter(|p| !p.as_os_str().is_empty());
    vec![
        // What the set replaces whole must be a probe's set, empty or absent, and a place
        // the move into place can replace (ninth hostile round).
        Place::new(out, Rule::Own(super::check_replaceable)),
        // The set is made beside `out` and moved into place: its parent must take it
        // (ninth hostile round).
        Place::new(parent.unwrap_or(Path::new(".")), Rule::Own(takes_a_set)),
        // The set's lock beside it (fortieth hostile round, D1: the dry run said `new`).
        Place::new(out, Rule::LockBeside),
    ]
}

/// Refuses a directory `dir` in which a new set cannot be made, naming it as the directory
/// `--out` lies in (eighty-fifth hostile round, N6: `--out ../done1` read `..: the output
/// directory is not writable`).
fn takes_a_set(dir: &Path) -> crate::Result<()> {
    ntk_files::outset::check_writable_unmade(dir).map_err(|e| match e {
        ntk_files::Error::NotWritable { dir, source } => ntk_files::Error::OutputPath {
            path: dir,
            why: format!(
                "the directory --out lies in is not writable (an output set is made there and \
                 moved into place, its lock kept beside it): {source}"
            ),
        }
        .into(),
        ntk_files::Error::NotWritableAbove { dir, above, source } => ntk_files::Error::OutputPath {
            path: above,
            why: format!(
                "not writable, so {}, the directory --out lies in, cannot be made: {source}",
                dir.display()
            ),
        }
        .into(),
        other => other.into(),
    })
}
