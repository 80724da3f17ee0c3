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

/// Refuses a directory `dir` in which a new set cannot be made.
fn takes_a_set(dir: &Path) -> crate::Result<()> {
    Ok(ntk_files::outset::check_writable_unmade(dir)?)
}
