//! Every place a probe sweep writes or removes, with its rule ([`ntk_files::places`]),
//! checked before any work by the sweep's dry run and its run alike: the writers' directory,
//! each point the sweep makes (its directory replaced whole, its lock beside it) and the
//! tables and figures the collect at its end writes again. The failure record of each point
//! is checked by the shared sweep's lifecycle for both tools (`ntk_runs::sweep::Failure`);
//! the tiled route's phase files by their own state ([`crate::phases`]).

use std::path::Path;

use ntk_files::places::{Place, Rule};
use ntk_runs::sweep::{self, Planned, State};

use super::Point;
use crate::Error;
use crate::config::Protocol;
use crate::run;

/// Refuses a point `planned` makes (a stale one only with `recompute`) whose directory holds
/// results of a protocol not in `protocols`: its output set replaces the directory whole
/// (eighty-ninth hostile round, D1: a sweep recomputed under fewer protocols removed the
/// others' results without a word), as ntk-train's sweep refuses runs it does not make.
pub(super) fn check_unlisted_protocols(
    out: &Path,
    (points, planned): (&[Point], &[Planned]),
    recompute: bool,
    protocols: &[Protocol],
) -> crate::Result<()> {
    for p in planned.iter().filter(|p| made(&p.state, recompute)) {
        let dir = points[p.index].dir(out);
        for protocol in [Protocol::Whole, Protocol::Blocks] {
            let held = dir.join(protocol.name());
            // An empty directory holds no results (ninetieth hostile round, N6).
            let holds = held.symlink_metadata().is_ok()
                && std::fs::read_dir(&held).map_or(true, |mut d| d.next().is_some());
            if !protocols.contains(&protocol) && holds {
                return Err(Error::UnlistedProtocol {
                    dir,
                    protocol: protocol.name(),
                });
            }
        }
    }
    Ok(())
}

/// Whether a point of `state` is made: one not done, a stale one only with `recompute`.
fn made(state: &State, recompute: bool) -> bool {
    match state {
        State::Done => false,
        State::Stale(_) => recompute,
        _ => true,
    }
}

/// The places of the points `planned` that the sweep in `out` of the config `fingerprint`
/// makes (a stale point's only with `recompute`), and the sweep's own: the files at its top
/// that the collect at its end `writes`.
pub(super) fn planned(
    out: &Path,
    fingerprint: String,
    (points, planned): (&[Point], &[Planned]),
    recompute: bool,
    writes: &dyn Fn(&str) -> bool,
) -> Vec<Place<Error>> {
    // The writers' directory, its guards and this config's registration (forty-first
    // hostile round, D1; forty-second, D1).
    let mut places = vec![Place::new(out, Rule::Writers { fingerprint })];
    for p in planned {
        if made(&p.state, recompute) {
            let dir = points[p.index].dir(out);
            // A point made replaces its directory whole: what it holds must be the point's
            // own (thirty-ninth hostile round, D2).
            places.push(Place::new(&dir, Rule::Own(check_point_owned)));
            // The point's lock beside it (fortieth hostile round, D1).
            places.push(Place::new(&dir, Rule::LockBeside));
        }
    }
    // The tables, theory and figures the collect writes again at the sweep's end: a FIFO or
    // a directory at results.csv passed the sweep's checks, and the sweep computed every
    // point before it failed there.
    places.extend(ntk_files::places::replaced_in(out, writes));
    places
}

/// Refuses a point's directory `dir` that holds what the point's output set would not
/// replace as its own: anything but its protocols' directories, holding only the names of a
/// probe's output set ([`run::OUTPUT_FILES`]; a set cut short, without its summary, is the
/// point's own), and its failure record. Absent is fine.
fn check_point_owned(dir: &Path) -> crate::Result<()> {
    let mut foreign = Vec::new();
    for (name, is_dir) in run::entries(dir) {
        let protocol = [Protocol::Whole, Protocol::Blocks]
            .iter()
            .any(|p| p.name() == name);
        if protocol && is_dir {
            let inside = dir.join(&name);
            let others = run::entries(&inside)
                .into_iter()
                .filter(|(n, is_dir)| *is_dir || !run::OUTPUT_FILES.contains(&n.as_str()))
                .map(|(n, _)| n)
                .collect();
            run::refuse_foreign(&inside, others)?;
        } else if name != sweep::FAILED_FILE {
            foreign.push(name);
        }
    }
    run::refuse_foreign(dir, foreign)
}
