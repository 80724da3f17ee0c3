//! The sweep framework of both tools: axes -> points -> shards -> skip-if-done -> run ->
//! collect.
//!
//! - **Points**: each tool expands its `[sweep]` axes into points in a fixed order (the
//!   order that sharding uses), at most [`MAX_POINTS`] of them ([`check_size`]).
//! - **Base keys**: a required key of the base config that an axis sets at every point may
//!   be left out; the axis fills it before the base is read ([`fill`]).
//! - **Shards**: `--shard i/N` runs the points `p` with `p mod N == i` ([`Shard`]).
//! - **Skip if done**: a point's results are its summary files; a point counts as done only
//!   when every one of them records the fingerprint of the config about to make it
//!   ([`state`], [`crate::provenance`]). Results of another config are *stale*: an error
//!   naming the keys that differ ([`refuse_stale`]), or, with `--recompute`, made again.
//! - **Run**: [`Sweep`] is what a tool implements (its points, their directories, their
//!   states, how one is made, its own refusals); the lifecycle is written once, here, and
//!   both tools call it ([`lifecycle`]): [`claim`] takes the output directory for this
//!   shard, [`execute`] plans this shard's points with their states, refuses stale results
//!   and the tool's own refusals before any work, and makes the points that are not done;
//!   [`dry_run`] prints that plan and refuses exactly as the run would; [`check_collect`]
//!   is `collect --config`'s check; [`after_collect`] turns a collect that follows failed
//!   points into a warning.
//! - **Failures**: a point whose making fails (its network overflows, its disk fills) is
//!   recorded as failed in `failed.json` in its directory ([`Failure`]) with the reason,
//!   and the sweep goes on; [`plan`] shows it as `failed`, the next run tries it again,
//!   and a success removes the record. A point that another live process is writing is
//!   *busy*: listed, not recorded (its directory is not ours).
//! - **Collect**: [`find_files`] walks a sweep's `runs/` for its results (hidden entries,
//!   output sets still being written, are skipped), [`crate::provenance::check_merge`]
//!   refuses to merge results of different sweeps, and [`ntk_files::table`] writes the rows.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::progress::Reporter;
use crate::provenance::{self, Provenance};
use crate::quote::message_escaped;

pub mod command;
pub mod fill;
mod lifecycle;
pub mod proof;
pub mod reports;
pub use command::{Invocation, SweepCommand, run_command};
pub use fill::{AxisFill, fill_from_axes};
pub use lifecycle::{after_collect, check_collect, claim, dry_run, execute};
pub use proof::{Runs, SweepRuns, check_runs, check_sweep_out};
pub use reports::{
    check_proven_figures, foresee_captions, foresee_stale_reports, keep_edited_captions,
    record_reports, say_stale_figures_of, say_stale_reports, say_stale_reports_as, settle_captions,
};

/// The most points one sweep may have.
pub const MAX_POINTS: usize = 100_000;

/// `i/N`: this process runs the points `p` with `p mod N == i`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// `i/N`, or `slurm`: the shard of this Slurm array task ([`crate::slurm`]).
    pub fn parse(s: &str) -> crate::Result<Self> {
        if s.trim() == "slurm" {
            let task = crate::slurm::array_shard()?;
            return Ok(Self {
                index: task.index,
                count: task.count,
            });
        }
        let shape = || crate::Error::Shard {
            value: s.to_string(),
            why: "expected i/N with 0 <= i < N".to_string(),
        };
        // A number of digits alone past the count's range is said as such, not as a shape
        // (ninety-eighth hostile round, N7: `1/99999999999999999999` got the words of `2/2`).
        let number = |t: &str| -> crate::Result<usize> {
            t.trim()
                .parse()
                .map_err(|e: std::num::ParseIntError| match e.kind() {
                    std::num::IntErrorKind::PosOverflow => crate::Error::Shard {
                        value: s.to_string(),
                        why: format!("{} is past the largest count, {}", t.trim(), usize::MAX),
                    },
                    _ => shape(),
                })
        };
        let (i, n) = s.split_once('/').ok_or_else(shape)?;
        let (index, count) = (number(i)?, number(n)?);
        if count == 0 || index >= count {
            return Err(shape());
        }
        Ok(Self { index, count })
    }
    /// `--shard` if given, else every point.
    pub fn parse_or_all(s: Option<&str>) -> crate::Result<Self> {
        s.map_or(Ok(Self::all()), Self::parse)
    }
    pub fn all() -> Self {
        Self { index: 0, count: 1 }
    }
    pub fn owns(&self, p: usize) -> bool {
        p % self.count == self.index
    }
}

/// The number of points of a grid whose axes have `lens` values each, or an error when it
/// exceeds [`MAX_POINTS`]; `what` names the axes in the message.
pub fn check_size(lens: &[usize], what: &str) -> crate::Result<usize> {
    let total = lens.iter().map(|&k| k as u128).product::<u128>();
    if total > MAX_POINTS as u128 {
        return Err(crate::Error::TooManyPoints {
            total,
            what: what.to_string(),
        });
    }
    Ok(total as usize)
}

/// The values of an axis: the listed ones, or the base config's when the list is empty.
pub fn or_base<T: Clone>(values: &[T], base: T) -> Vec<T> {
    if values.is_empty() {
        vec![base]
    } else {
        values.to_vec()
    }
}

/// An optional axis's values, each as `Some`, or `[None]` (the base config's value) when the
/// axis lists none.
pub fn listed<T: Copy>(values: &[T]) -> Vec<Option<T>> {
    if values.is_empty() {
        vec![None]
    } else {
        values.iter().copied().map(Some).collect()
    }
}

/// A point's results on disk.
#[derive(Clone, Debug, PartialEq)]
pub enum State {
    /// Not (completely) made.
    New,
    /// Begun and resumable (a training run with a checkpoint).
    Partial,
    /// Every result records this config's fingerprint.
    Done,
    /// Made by another config, or unreadable: why.
    Stale(String),
    /// Its last attempt failed (`failed.json`): why. It is tried again.
    Failed(String),
    /// Something not the tools' stands on its path (a file where its directory goes): why.
    /// It cannot be made until that is moved; the sweep refuses before any work
    /// (eighty-fourth hostile round, D5: labelled `failed`, where it never ran).
    Blocked(String),
}

impl State {
    pub fn label(&self) -> &'static str {
        match self {
            Self::New => "new",
            Self::Partial => "partial",
            Self::Done => "done",
            Self::Stale(_) => "stale",
            Self::Failed(_) => "failed",
            Self::Blocked(_) => "blocked",
        }
    }
}

/// The file that records a point's failure, in its directory.
pub const FAILED_FILE: &str = "failed.json";

/// Why a point's last attempt failed, and who tried: `failed.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    /// The error, as the tool printed it.
    pub reason: String,
    /// The fingerprint of the config that tried (`crate::provenance`).
    pub fingerprint: String,
    /// The tool and its version.
    pub tool: String,
}

impl Failure {
    /// Records the failure in `dir` (created if needed), atomically.
    pub fn write(&self, dir: &Path) -> crate::Result<()> {
        let json = serde_json::to_string_pretty(self).expect("a failure serializes");
        Ok(ntk_files::io::write_into(
            dir,
            FAILED_FILE,
            json.as_bytes(),
        )?)
    }

    /// The failure recorded in `dir`, if any (an unreadable record reads as its error).
    pub fn read(dir: &Path) -> Option<Self> {
        let text = ntk_files::io::read_to_string(dir.join(FAILED_FILE)).ok()?;
        Some(serde_json::from_str(&text).unwrap_or_else(|e| Self {
            reason: format!(
                "{}: unreadable failure record: {e}",
                dir.join(FAILED_FILE).display()
            ),
            fingerprint: String::new(),
            tool: String::new(),
        }))
    }

    /// Removes the record from `dir` (the point has been made): the tools' own only
    /// ([`Failure::is_ours`]); a user's file of that name stays (fortieth hostile round, D3:
    /// it was read as a failure and removed once the point was made).
    pub fn clear(dir: &Path) {
        if Self::is_ours(dir) {
            let _ = std::fs::remove_file(dir.join(FAILED_FILE));
        }
    }

    /// Whether `dir`'s failure record is one these tools wrote: a regular file that reads as
    /// a [`Failure`] recorded by one of them (its `tool` an `ntk-` tool, a fingerprint).
    pub fn is_ours(dir: &Path) -> bool {
        let path = dir.join(FAILED_FILE);
        std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file())
            && ntk_files::io::read_limited(&path, 1 << 20)
                .ok()
                .and_then(|b| serde_json::from_slice::<Self>(&b).ok())
                .is_some_and(|f| f.tool.starts_with("ntk-") && !f.fingerprint.is_empty())
    }

    /// Refuses, before any work, a point's directory `dir` holding a file at the failure
    /// record's name that is not one of the tools' records: it would be read as a failure
    /// and is not the tools' to replace or remove.
    pub fn check(dir: &Path) -> crate::Result<()> {
        let path = dir.join(FAILED_FILE);
        if std::fs::symlink_metadata(&path).is_err() || Self::is_ours(dir) {
            return Ok(());
        }
        Err(ntk_files::Error::OutputPath {
            path,
            why: "is not a failure record of these tools (which write one as JSON with the \
                  reason, the config's fingerprint and the tool); move it"
                .into(),
        }
        .into())
    }
}

/// A result file that records the provenance of the config that made it (a summary.json).
pub trait Recorded: DeserializeOwned {
    /// What the file is, for errors ("an ntk-probe summary").
    const WHAT: &'static str;
    fn provenance(&self) -> Option<&Provenance>;
    /// The names of the files a set of this kind may hold beside its summary.
    const SET_FILES: &'static [&'static str] = &[];
    /// Files beside the set that [`Recorded::check`] reads (a training run's `metrics.csv`
    /// and `config.toml`): one this user may not read is said as a file of the set is
    /// (ninety-eighth hostile round, N3: an unreadable `metrics.csv` got "cannot read" with
    /// no remedy, where the summary's own file got one).
    const READ_FILES: &'static [&'static str] = &[];
    /// The set's other files as its run wrote them ([`crate::manifest`]), where the file
    /// records them: [`state`] checks each, and that no other of [`Recorded::SET_FILES`] is
    /// there, before the set counts as done.
    fn files(&self) -> Option<&crate::manifest::Files> {
        None
    }
    /// Why the record at `path` is not as its run wrote it, beyond its provenance and its
    /// files (its own checksum, its numbers against the files beside it); `None` where it
    /// is. [`state`] holds a set that fails this stale, as `collect` refuses it
    /// (seventy-sixth and seventy-seventh hostile rounds: a check `collect` made and the
    /// plan did not).
    fn check(&self, _path: &Path) -> Option<String> {
        None
    }
    /// Why the record at `path` is not its place's own, other than by its config: edited
    /// (its own checksum fails, [`provenance::SelfChecksum::sealed`]), or another place's (a
    /// training run's directory renamed); `None` where it is. [`state`] asks where the
    /// record's config is not the one about to run, or its files are not as it records: an
    /// edited or moved record is not another config's (hundred-and-forty-fourth hostile
    /// round, N3: a summary whose recorded config was edited was called "made by a different
    /// config"; the hundred-and-forty-fifth, N4: swapped run directories were, to be trained
    /// again), nor are its intact files changed (the hundred-and-fiftieth, second review,
    /// D1). Elsewhere [`Recorded::check`] names what was edited.
    fn not_its_own(&self, _path: &Path) -> Option<String> {
        None
    }
}

/// Reads a result file; `None` when absent, an error naming the file when unreadable.
pub fn read<R: Recorded>(path: &Path) -> crate::Result<Option<R>> {
    provenance::read_json(path, R::WHAT)
}

/// What holds the results a [`state`] is of: a sweep's point (under its `runs/`) or a
/// single run's output set (its `--out`). It chooses the remedy of a file this user may not
/// read: a point is moved out of `runs/`, a set is left for a new `--out` (ninety-eighth
/// hostile round, N6: a single run was told to move "the point out of runs/").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Holder {
    Point,
    Set,
}

impl Holder {
    /// The remedy for one of its files this user may not read.
    pub fn unreadable_remedy(self) -> &'static str {
        match self {
            Self::Point => "make it readable to this user, or move the point out of runs/",
            Self::Set => "make it readable to this user, or write to a new --out",
        }
    }
}

/// The state of a point (or set: `holder`) whose results are the files `expected`, each
/// with the provenance the config about to make it would record; `redo` ends the message of
/// a file not as written ("pass --recompute to the sweep to compute the point again").
pub fn state<R: Recorded>(
    expected: &[(PathBuf, &Provenance)],
    redo: &str,
    holder: Holder,
) -> State {
    let mut complete = true;
    for (path, now) in expected {
        // A file (not the tools' directory) on the result's path: the point cannot be made
        // there until it is moved; the file stays.
        if let Some(file) = path
            .ancestors()
            .skip(1)
            .find(|a| std::fs::symlink_metadata(a).is_ok_and(|m| m.is_file()))
        {
            return State::Blocked(format!(
                "{}: a file stands where the point's directory goes; move it",
                file.display()
            ));
        }
        match read::<R>(path) {
            Ok(None) => complete = false,
            Ok(Some(r)) => {
                let dir = path.parent().unwrap_or(Path::new("."));
                // A file at one of the set's names that its summary does not record is not
                // the tools': neither the point's set nor a set to make again over
                // (ninety-ninth hostile round, D2: `--recompute`, as advised, removed the
                // user's file). Before the config's check, which `--recompute` passes. An
                // empty record is no set the tools write: `verify` says so below (stale).
                if let Some(files) = r.files().filter(|f| !f.is_empty())
                    && let Some(why) = crate::manifest::unrecorded(dir, files, R::SET_FILES, path)
                {
                    return State::Blocked(format!("{why}; not the run's: move it away"));
                }
                if let Err(e) = provenance::check_reuse(path, r.provenance(), now) {
                    return State::Stale(match r.not_its_own(path) {
                        Some(why) => with_remedy(&why, redo),
                        None => e.to_string(),
                    });
                }
                // A file of the set, or one its check reads, that this user may not read is
                // said as the summary's is: one remedy for one state (ninety-sixth hostile
                // round, N2), whether or not the check would have passed it by.
                if let Some(locked) = R::SET_FILES
                    .iter()
                    .chain(R::READ_FILES)
                    .map(|n| dir.join(n))
                    .find(|p| unreadable(p))
                {
                    return unreadable_state(&locked, holder);
                }
                // A file unlike the record of a summary that is not its own (edited, or
                // another place's) is not what changed: the summary is named (hundred-and-
                // fiftieth hostile round, second review, D1: a summary copied in and edited
                // blamed an intact table), unless the record itself is the fault.
                let why = match r.files() {
                    Some(files) => crate::manifest::verify(dir, files, R::SET_FILES, path)
                        .err()
                        .map(|e| match r.not_its_own(path) {
                            Some(why) if e.fault != crate::manifest::Fault::Record => why,
                            _ => e.message,
                        }),
                    None => None,
                }
                .or_else(|| r.check(path));
                if let Some(why) = why {
                    return State::Stale(with_remedy(&why, redo));
                }
            }
            // A file this user may not read is made readable, or moved, not computed
            // again over (ninety-fifth hostile round, D4: "pass --recompute" replaced
            // another user's point).
            Err(_) if unreadable(path) => return unreadable_state(path, holder),
            Err(e) => return State::Stale(format!("{e}; {redo}")),
        }
    }
    if complete { State::Done } else { State::New }
}

/// `why` with the remedy `redo` after it, where it does not end with it already (a message
/// that names its own remedies names it last: the hundred-and-fiftieth hostile round, N2,
/// had it twice).
pub fn with_remedy(why: &str, redo: &str) -> String {
    if why.ends_with(redo) {
        why.to_string()
    } else {
        format!("{why}; {redo}")
    }
}

/// The state of a point (or set) with a file (or directory) at `locked` this user may not
/// read: as written, to be made readable or moved, never computed again over (ninety-fifth
/// hostile round, D4; a training run's checkpoint too: ninety-eighth, D4).
pub fn unreadable_state(locked: &Path, holder: Holder) -> State {
    State::Stale(format!(
        "{}: this user may not read it; {}",
        locked.display(),
        holder.unreadable_remedy()
    ))
}

/// Whether `path` is a regular file this user may not open for reading. Only a regular file
/// is opened: a FIFO there would block the open until a writer came.
pub fn unreadable(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
        && matches!(
            std::fs::File::open(path),
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied
        )
}

/// What a tool's sweep is to the shared machinery. The points themselves are a slice the
/// functions below take beside the sweep, in the order that sharding uses.
pub trait Sweep {
    type Point;
    /// What one point's work returns (its summary).
    type Made;
    /// The tool's error type, which holds this crate's.
    type Error: From<crate::Error> + std::fmt::Display;
    /// A one-line description (`--dry-run`, progress).
    fn label(&self, point: &Self::Point) -> String;
    /// The point's results on disk, for the config about to make it.
    fn state(&self, point: &Self::Point) -> Result<State, Self::Error>;
    /// Removes a stale point's results before it is made again.
    fn clear(&self, point: &Self::Point) -> Result<(), Self::Error>;
    /// Removes what dead writers left in a finished point's directory (a killed write's
    /// `<file>.ntk-tmp-<pid>` of the point's own files), which no run of the point will
    /// clean now; by the run, never the dry run.
    fn tidy(&self, _point: &Self::Point) {}
    /// Makes the point.
    fn make(&mut self, point: &Self::Point) -> Result<Self::Made, Self::Error>;
    /// The point's directory (where its failure is recorded).
    fn dir(&self, point: &Self::Point) -> PathBuf;
    /// Records that making the point failed with `error` (`failed.json`).
    fn record_failure(&self, point: &Self::Point, error: &Self::Error) -> Result<(), Self::Error>;
    /// True when `error` says another live process is writing the point (not a failure of
    /// the point: nothing is recorded).
    fn busy(error: &Self::Error) -> bool;
    /// What one point is called in counts and messages ("point", "run").
    const UNIT: &'static str;
    /// The sweep's output directory.
    fn out(&self) -> &Path;
    /// `--dry-run`'s count of the points: `point(s)`, unless the tool says more
    /// (`point(s) x 2 protocol(s)`).
    fn counted(&self) -> String {
        format!("{}(s)", Self::UNIT)
    }
    /// `--dry-run`'s last line: what would make the points (the backend, the engine).
    /// `made`: the indices of the points this run would make (this shard's points that are
    /// not done, a stale one only with `--recompute`), so that what is said of "these
    /// runs" is said of those the run makes, not of results already there.
    fn computes(&self, made: &[usize]) -> String;
    /// The tool's own refusals beyond stale results, before any work, for the run and its
    /// dry run alike (the probe's: points of another sweep config in the directory).
    fn refuse(
        &self,
        _points: &[Self::Point],
        _planned: &[Planned],
        _recompute: &Recompute,
    ) -> Result<(), Self::Error> {
        Ok(())
    }
    /// What a dry run foresees of making `point`: why it would fail (`Some`), when the
    /// tool can tell before making it (the probe: its kernel beyond the precision's range),
    /// else `None`. Asked only for the points the run would make.
    fn foresee(&self, _point: &Self::Point) -> Result<Option<String>, Self::Error> {
        Ok(None)
    }
    /// What a dry run says after its plan of what the run removes beside its points: the
    /// lines of [`foresee_stale_reports`] for the report files in the output directory that
    /// the points of this config no longer have (eighty-ninth hostile round, D2), and the
    /// tool's own (ntk-train: a run whose first checkpoint was cut off, which starts over).
    /// `planned`: this shard's points and their states.
    fn foreseen(&self, _points: &[Self::Point], _planned: &[Planned]) -> Vec<String> {
        Vec::new()
    }
    /// Orders this shard's planned points for making (sweep order unless the tool reuses
    /// work between points: the probe makes a family's deepest network first).
    fn order(&self, _points: &[Self::Point], _planned: &mut [Planned]) {}
    /// Every result found under the output directory, of any config (`collect --config`
    /// refuses those that no point owns).
    fn found(&self) -> Result<Vec<PathBuf>, Self::Error>;
    /// A result `found` that no point of `points` owns, held as `collect` without the config
    /// holds it, for `collect --config` to say what it would (a renamed run directory, a
    /// point's set under another name) before calling it no point of the config
    /// (hundred-and-fiftieth hostile round, D2: a renamed run was "not a point of this
    /// config", and the remedy, collect without --config, refused it as renamed).
    fn check_found(&self, _points: &[Self::Point], _found: &Path) -> Result<(), Self::Error> {
        Ok(())
    }
    /// Whether the result `found` ([`Sweep::found`]) is `point`'s own: by default, one under
    /// its directory.
    fn owns(&self, point: &Self::Point, found: &Path) -> bool {
        found.starts_with(self.dir(point))
    }
}

/// What `--recompute` makes again, for [`Sweep::refuse`]: whether it was given, and the
/// points of the sweep's other shards that hold another config's results, which their own
/// shards' tasks make again. Those are not this shard's to count as another config's
/// points (sixty-first hostile round, D2: `--recompute --shard i/N` was refused in every
/// shard as "made by different configs" where the stale points fell in several shards).
#[derive(Clone, Debug, Default)]
pub struct Recompute {
    pub given: bool,
    pub elsewhere: Vec<usize>,
}

/// A point of this shard: its index in the sweep and its state.
#[derive(Clone, Debug)]
pub struct Planned {
    pub index: usize,
    pub state: State,
}

/// `collect --config`: refuses a result that no point of the config owns (its path lies
/// under none of the points' directories `dirs`): the tables would mix it in with the
/// config's own.
fn refuse_foreign(foreign: &[&PathBuf]) -> crate::Result<()> {
    match foreign.first() {
        None => Ok(()),
        Some(first) => Err(ntk_files::Error::OutputPath {
            path: (*first).clone(),
            why: format!(
                "a result that is not a point of this config ({} such); collect without \
                 --config, or a directory that holds this config's results only",
                foreign.len()
            ),
        }
        .into()),
    }
}

/// The results found under the sweep's directory that no point of its config owns (kept from
/// an earlier sweep with more points, or of another config beside `--allow-mixed`), which
/// the collect at the sweep's end takes into its tables, said in one line (eighty-ninth
/// hostile round, N5: the dry run planned 4 points, the tables held 6, and `collect
/// --config` refused the 2 without a word from the sweep).
/// A directory whose results cannot be listed says nothing here: the sweep's own checks
/// name what is wrong with it.
fn beyond_points<S: Sweep>(sweep: &S, points: &[S::Point]) -> Option<String> {
    let found = sweep.found().ok()?;
    // Those the sweep refuses with their own words (a point of this config under another
    // name, a copy) are not said here as no point of the config (hundred-and-fifty-first
    // hostile round, second review, D2).
    let beyond: Vec<&PathBuf> = outside(sweep, points, &found)
        .into_iter()
        .filter(|f| sweep.check_found(points, f).is_ok())
        .collect();
    beyond.first().map(|first| {
        format!(
            "{}: {} result(s) found are of no {} of this config (the first: {}): the collect at \
             the sweep's end takes them into its tables and figures, where `collect --config` \
             refuses them; move them out of the directory to leave them out",
            sweep.out().display(),
            beyond.len(),
            S::UNIT,
            first.display()
        )
    })
}

/// The results of `found` that lie under none of the points' directories `dirs`: what
/// `collect --config` refuses ([`refuse_foreign`]) and a sweep's collect takes in
/// ([`beyond_points`]).
/// A result is a point's where [`Sweep::owns`] says so: one nested deeper in a point's
/// directory (a run moved into another's) is not that point's (hundred-and-fifty-first
/// hostile round, D3: `collect --config` said "no result" of a run its own table held).
fn outside<'a, S: Sweep>(sweep: &S, points: &[S::Point], found: &'a [PathBuf]) -> Vec<&'a PathBuf> {
    found
        .iter()
        .filter(|f| !points.iter().any(|p| sweep.owns(p, f)))
        .collect()
}

/// This shard's points with their states, in sweep order.
fn plan<S: Sweep>(sweep: &S, points: &[S::Point], shard: Shard) -> Result<Vec<Planned>, S::Error> {
    let mut planned = Vec::new();
    for (index, point) in points.iter().enumerate() {
        if shard.owns(index) {
            let state = point_state(sweep, point)?;
            planned.push(Planned { index, state });
        }
    }
    Ok(planned)
}

/// The state of `point` on disk ([`Sweep::state`]), failed where its last attempt recorded
/// a failure.
fn point_state<S: Sweep>(sweep: &S, point: &S::Point) -> Result<State, S::Error> {
    let state = sweep.state(point)?;
    if matches!(state, State::New | State::Partial)
        && Failure::is_ours(&sweep.dir(point))
        && let Some(f) = Failure::read(&sweep.dir(point))
    {
        return Ok(State::Failed(f.reason));
    }
    Ok(state)
}

/// Why each stale point of `planned` is stale, in plan order.
fn stale_reasons(planned: &[Planned]) -> Vec<&String> {
    planned
        .iter()
        .filter_map(|p| match &p.state {
            State::Stale(why) => Some(why),
            _ => None,
        })
        .collect()
}

/// The error that stops a sweep before any work, `--recompute` or not, while a point is
/// [`State::Blocked`] (something not the tools' in its way; its reason says what to move).
fn refuse_blocked(planned: &[Planned], unit: &str) -> crate::Result<()> {
    let blocked: Vec<&String> = planned
        .iter()
        .filter_map(|p| match &p.state {
            State::Blocked(why) => Some(why),
            _ => None,
        })
        .collect();
    match blocked.first() {
        Some(first) => Err(crate::Error::Blocked {
            first: first.to_string(),
            more: blocked.len() - 1,
            unit: unit.to_string(),
        }),
        None => Ok(()),
    }
}

/// The error that stops a sweep before any work while results of another config are in
/// the way, unless `recompute`; `unit` names the points ("point", "run"); `listed` when a
/// dry run's plan has listed them.
fn refuse_stale(
    planned: &[Planned],
    recompute: bool,
    unit: &str,
    listed: bool,
) -> crate::Result<()> {
    let stale = stale_reasons(planned);
    match (stale.first(), recompute) {
        (Some(first), false) => Err(crate::Error::Stale {
            first: first.to_string(),
            more: stale.len() - 1,
            unit: unit.to_string(),
            listed,
        }),
        _ => Ok(()),
    }
}

/// [`refuse_stale`] for `collect --config`: results of another config are refused with
/// the keys that differ, without the sweep's advice (collect neither recomputes nor has a
/// dry run).
fn refuse_stale_in_collect(planned: &[Planned]) -> crate::Result<()> {
    match refuse_stale(planned, false, "result", false) {
        Err(crate::Error::Stale { first, more, .. }) => Err(crate::Error::StaleCollect {
            first: first
                .split("; write to a new --out")
                .next()
                .unwrap_or(&first)
                .to_string(),
            more,
        }),
        other => other,
    }
}

/// `--dry-run`: a header (`12 run(s) in OUT; this shard (0/2) owns 6:`, the points counted
/// as [`Sweep::counted`]), every point of this shard with its state and label (`fails` for
/// the points in `fails`, which the tool foresees failing: (index, why)), then the reasons
/// of the first stale ones and of the first that fail.
fn print_plan<S: Sweep>(
    sweep: &S,
    points: &[S::Point],
    planned: &[Planned],
    fails: &[(usize, String)],
    shard: Shard,
    recompute: bool,
) {
    println!(
        "{} {} in {}; this shard ({}/{}) owns {}:",
        points.len(),
        sweep.counted(),
        sweep.out().display(),
        shard.index,
        shard.count,
        planned.len()
    );
    for p in planned {
        let fails = fails.iter().any(|f| f.0 == p.index);
        println!(
            "{:4} {:7} {}",
            p.index,
            if fails { "fails" } else { p.state.label() },
            sweep.label(&points[p.index])
        );
    }
    let stale = stale_reasons(planned);
    for why in stale.iter().take(3) {
        // Under --recompute the advice to pass it is said no more (sixtieth hostile round,
        // D2): what the point is, and that this run makes it again.
        if recompute {
            println!(
                "stale, made again (--recompute): {}",
                message_escaped(without_recompute_advice(why))
            );
        } else {
            println!("stale: {}", message_escaped(why));
        }
    }
    // How many more there are, where three are shown (eighty-fourth hostile round, N5).
    if stale.len() > 3 {
        println!("stale: and {} more", stale.len() - 3);
    }
    for (p, why) in planned
        .iter()
        .filter_map(|p| match &p.state {
            State::Blocked(why) => Some((p, why)),
            _ => None,
        })
        .take(3)
    {
        println!("blocked: point {}: {}", p.index, message_escaped(why));
    }
    for (index, why) in fails.iter().take(3) {
        println!("fails: point {index}: {}", message_escaped(why));
    }
}

/// `why` without its closing advice to pass `--recompute` (its last `; ` clause, where that
/// names the flag).
fn without_recompute_advice(why: &str) -> &str {
    match why.rsplit_once("; ") {
        Some((head, advice)) if advice.contains("--recompute") => head,
        _ => why,
    }
}

/// What [`execute`] did: the points made (with what each returned), skipped, failed and busy.
#[derive(Debug)]
pub struct Outcome<M> {
    pub made: Vec<M>,
    pub skipped: usize,
    /// The points whose making failed: (label, error), each recorded in its `failed.json`
    /// but for `unrecorded` of them.
    pub failed: Vec<(String, String)>,
    /// How many of `failed` could not be recorded (their `failed.json` not written).
    pub unrecorded: usize,
    /// The points another live process was writing: (label, error).
    pub busy: Vec<(String, String)>,
    /// What a point is called ([`Sweep::UNIT`]).
    pub unit: &'static str,
    /// The points of the sweep's other shards that held another config's results when this
    /// shard began ([`Recompute::elsewhere`]) and still do when it ends: their shards make
    /// them again, and until then the sweep's directory holds two configs (its collect
    /// waits for them).
    pub left_to_other_shards: usize,
    /// The points of the sweep's other shards with no result of this config when this shard
    /// ends (not made yet, failed, stale): the collect that follows holds the others only
    /// (eighty-fifth hostile round, N3: a shard's tables read as the sweep's). 0 for a sweep
    /// run whole.
    pub unfinished_elsewhere: usize,
}

impl<M> Outcome<M> {
    /// The error a sweep ends with when some points failed or were busy (after every other
    /// point was made), naming the first of them.
    pub fn check(&self) -> crate::Result<()> {
        let unit = self.unit;
        // Only what was recorded is said to be (eighty-third hostile round, D7: "each
        // recorded in its failed.json" where none could be written).
        let failed_kind = match self.unrecorded {
            0 => "failed (each recorded in its failed.json)".to_string(),
            k if k == self.failed.len() => {
                "failed (not recorded: no failed.json could be written; the warnings above \
                 say why)"
                    .to_string()
            }
            k => format!(
                "failed (each recorded in its failed.json but {k}, which could not be written: \
                 the warnings above say why)"
            ),
        };
        let (first, kind) = match (self.failed.first(), self.busy.first()) {
            (Some(f), _) => (f, failed_kind.as_str()),
            (None, Some(b)) => (b, "were being written by another process"),
            (None, None) => return Ok(()),
        };
        let total = self.made.len() + self.skipped + self.failed.len() + self.busy.len();
        let summary = if total == 1 {
            // One point alone (a single run): no "others" (twenty-fifth hostile round, N5).
            let kind = match (self.failed.is_empty(), self.unrecorded) {
                (false, 0) => "failed (recorded in its failed.json)",
                (false, _) => {
                    "failed (not recorded: its failed.json could not be written; the warning \
                     above says why)"
                }
                (true, _) => "was being written by another process",
            };
            format!("the {unit} {kind}: {}: {}", first.0, first.1)
        } else {
            format!(
                "{} {unit}(s) {kind}; the others went on. First: {}: {}",
                self.failed.len().max(self.busy.len()),
                first.0,
                first.1
            )
        };
        Err(crate::Error::PointsFailed {
            failed: self.failed.len(),
            busy: self.busy.len(),
            summary,
        })
    }
}

/// Makes the planned points that are not done, in the order of `planned`, clearing stale
/// ones first (refused before unless `--recompute`, [`refuse_stale`]).
fn make_all<S: Sweep>(
    sweep: &mut S,
    points: &[S::Point],
    planned: &[Planned],
    reporter: &Reporter,
) -> Result<Outcome<S::Made>, S::Error> {
    let unit = S::UNIT;
    let bar = reporter.bar(planned.len() as u64, format!("{unit}s"));
    let mut outcome = Outcome {
        made: Vec::new(),
        skipped: 0,
        failed: Vec::new(),
        unrecorded: 0,
        busy: Vec::new(),
        unit,
        left_to_other_shards: 0,
        unfinished_elsewhere: 0,
    };
    for p in planned {
        let point = &points[p.index];
        if p.state == State::Done {
            outcome.skipped += 1;
            bar.inc(1);
            continue;
        }
        let label = sweep.label(point);
        bar.set_message(label.clone());
        // The label's columns, as one line for messages.
        let label = label.split_whitespace().collect::<Vec<_>>().join(" ");
        // A stale point that cannot be cleared fails, as one that cannot be made: the sweep
        // goes on with the others (eighty-fifth hostile round, D6: it stopped at once).
        let cleared = match p.state {
            State::Stale(_) => sweep.clear(point),
            _ => Ok(()),
        };
        match cleared.and_then(|()| sweep.make(point)) {
            Ok(made) => {
                Failure::clear(&sweep.dir(point));
                outcome.made.push(made);
            }
            Err(e) if S::busy(&e) => {
                reporter.log(&message_escaped(&format!("busy: {label}: {e}")));
                outcome.busy.push((label, e.to_string()));
            }
            Err(e) => {
                // The reason quotes the user's paths (a data file's): printed with their
                // control characters escaped, as the final `error:` line prints it
                // (hundred-and-second hostile round, D3). A point alone is said by that
                // line, whole (hundredth hostile round, N4: a single run's reason came three
                // times).
                if planned.len() > 1 {
                    reporter.log(&message_escaped(&format!("failed: {label}: {e}")));
                }
                let reason = e.to_string();
                if let Err(r) = sweep.record_failure(point, &e) {
                    reporter.log(&message_escaped(&format!(
                        "warning: the failure could not be recorded: {r}"
                    )));
                    outcome.unrecorded += 1;
                }
                outcome.failed.push((label, reason));
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(outcome)
}

/// Refuses a sweep directory `out` whose `runs` is a symbolic link: collect and plot read
/// what the sweep itself would write, and the sweep refuses a linked `runs` (eighty-sixth
/// hostile round, N4: `collect` read through the link while the sweep refused it).
/// A directory under `runs` this user cannot list is refused too ([`refuse_unlistable`]).
pub fn refuse_linked_runs(out: &Path) -> ntk_files::Result<()> {
    let runs = out.join("runs");
    match std::fs::symlink_metadata(&runs) {
        Ok(m) if m.file_type().is_symlink() => Err(ntk_files::Error::OutputPath {
            path: runs,
            why: "a symbolic link, never followed: a sweep's runs/ is a directory of its own \
                  (the sweep refuses the link too); move the directory it leads to here"
                .into(),
        }),
        _ => refuse_unlistable(&runs),
    }
}

/// Refuses the first directory under `root` (hidden entries, `checkpoints/` and links aside,
/// as the walks that find results skip them) that this user cannot list or enter: the results under
/// it would be left out of the tables without a word, where the sweep refuses them
/// (ninety-second hostile round, D5: another user's point directory dropped its seed from
/// the mean, exit 0). A missing `root`, or one that is no directory, is no error here.
pub fn refuse_unlistable(root: &Path) -> ntk_files::Result<()> {
    // A `root` that is no directory (a file, a FIFO, a link) is named by the checks of the
    // places the sweep makes.
    if !std::fs::symlink_metadata(root).is_ok_and(|m| m.is_dir()) {
        return Ok(());
    }
    tree(
        root,
        |_, _| {},
        |dir, e| {
            if dir == root && e.kind() == std::io::ErrorKind::NotFound {
                return Ok(());
            }
            Err(ntk_files::Error::OutputPath {
                path: dir.to_path_buf(),
                why: format!(
                    "cannot be listed or entered ({e}): the results under it would be left out \
                     of the tables; make it readable to this user, or move it out of runs/"
                ),
            })
        },
    )
}

/// Walks the directories under `root` (itself first) as the checks of `runs/` see them:
/// hidden entries and `checkpoints/` aside, never through a link. `entry` is given each
/// entry left and its type; a directory that cannot be listed or entered (a directory
/// that can be listed but not searched hides its files all the same: `stat` of its `.`
/// fails there) is given to `unlisted`, whose error ends the walk.
fn tree<E>(
    root: &Path,
    mut entry: impl FnMut(&std::fs::DirEntry, std::fs::FileType),
    mut unlisted: impl FnMut(&Path, std::io::Error) -> Result<(), E>,
) -> Result<(), E> {
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let listed = std::fs::read_dir(&dir)
            .and_then(|entries| std::fs::symlink_metadata(dir.join(".")).map(|_| entries));
        let entries = match listed {
            Ok(entries) => entries,
            Err(e) => {
                unlisted(&dir, e)?;
                continue;
            }
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') || name == "checkpoints" {
                continue;
            }
            let Ok(kind) = e.file_type() else {
                continue;
            };
            if kind.is_dir() {
                stack.push(e.path());
            }
            entry(&e, kind);
        }
    }
    Ok(())
}

/// The note a sweep's figures carry when points under `out/runs` failed (`failed.json`):
/// `failed, not drawn:` and a line per point (`relu/depth14/seed1`; three at most, then
/// `(+k more)`); `None` when none did.
pub fn failed_note(out: &Path) -> Option<String> {
    let runs = out.join("runs");
    let failed: Vec<String> = find_files(&runs, FAILED_FILE)
        .iter()
        .filter_map(|f| {
            f.parent()?
                .strip_prefix(&runs)
                .ok()
                .map(|p| p.display().to_string())
        })
        .collect();
    let (shown, more) = (failed.iter().take(3), failed.len().saturating_sub(3));
    let list: Vec<&str> = shown.map(String::as_str).collect();
    (!failed.is_empty()).then(|| {
        let more = if more > 0 {
            format!(" (+{more} more)")
        } else {
            String::new()
        };
        format!("failed, not drawn:\n  {}{more}", list.join("\n  "))
    })
}

/// Every file named `name` under `root` (recursively), sorted; entries whose name starts
/// with `.` (output sets still being written, `ntk_files::outset`) are skipped, and symbolic
/// links are not followed (a link to a directory above would count every point again and
/// again).
pub fn find_files(root: &Path, name: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    walk(
        root,
        |_| true,
        |_, files| {
            found.extend(
                files
                    .iter()
                    .filter(|(n, _)| n == name)
                    .map(|(_, p)| p.clone()),
            );
        },
    );
    found.sort();
    found
}

/// The directories under `root` that hold files of a result but not its `marker` file as a
/// regular file (deleted, or a directory in its place): results `collect` cannot read and
/// would otherwise leave out without a word. Hidden entries (temporary sets being
/// written), `checkpoints/` and directories with a failure record (reported as failed)
/// are not results.
pub fn without_result(root: &Path, marker: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut results: Vec<PathBuf> = Vec::new();
    let descend = |n: &str| n != "checkpoints" && n != marker;
    walk(root, descend, |dir, files| {
        let has_marker = files.iter().any(|(n, _)| n == marker);
        // A marker that is there but no regular file (a FIFO, a directory) is a result left
        // out even where nothing else is beside it (ninety-ninth hostile round, N6).
        let marker_not_a_file = std::fs::symlink_metadata(dir.join(marker)).is_ok();
        if has_marker {
            results.push(dir.to_path_buf());
        } else if (marker_not_a_file || !files.is_empty()) && !dir.join(FAILED_FILE).exists() {
            found.push(dir.to_path_buf());
        }
    });
    // A directory above a result (a probe point's `seed1/` above `seed1/whole/`) holds no
    // result of its own: a user's file there is not a result left out (eighty-fourth
    // hostile round, D5: `seed1/notes.txt` was said "not collected" of a point collected).
    found.retain(|d| !results.iter().any(|r| r != d && r.starts_with(d)));
    found.sort();
    found
}

/// Walks the directories under `root`, `root` included, skipping hidden entries and
/// descending into the subdirectories whose name `descend` accepts: `visit(dir, files)` with
/// each directory's regular files as `(name, path)`. Unreadable entries are skipped.
fn walk(
    root: &Path,
    descend: impl Fn(&str) -> bool,
    mut visit: impl FnMut(&Path, &[(String, PathBuf)]),
) {
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut files = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if descend(&name) {
                    stack.push(entry.path());
                }
            } else if kind.is_file() {
                files.push((name, entry.path()));
            }
        }
        visit(&dir, &files);
    }
}

/// The symbolic links under `root` (hidden entries and `checkpoints/` aside), which the
/// walks never follow (a link may lead back up, or out of the directory): whatever lies
/// behind one is not collected.
pub fn links_under(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let walked: Result<(), std::convert::Infallible> = tree(
        root,
        |e, kind| {
            if kind.is_symlink() {
                found.push(e.path());
            }
        },
        |_, _| Ok(()),
    );
    let Ok(()) = walked;
    found.sort();
    found
}

/// The names of `dir`'s regular files that are not hidden, sorted, the first three and a
/// count of the rest.
fn file_names(dir: &Path) -> String {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let more = names.len().saturating_sub(3);
    names.truncate(3);
    let mut text = names.join(", ");
    if more > 0 {
        text.push_str(&format!(" and {more} more"));
    }
    text
}

/// Warns (on stderr) of each result under `root` that `collect` cannot read
/// ([`without_result`]) and of each symbolic link there ([`links_under`]: a run directory
/// moved elsewhere and linked back was left out of the tables without a word, sixth
/// hostile round); returns how many there are.
pub fn warn_unreadable(root: &Path, marker: &str) -> usize {
    warn_unreadable_but(root, marker, |_| false)
}

/// [`warn_unreadable`] but for the directories `made` accepts: a dry run's, leaving out the
/// points the run makes (each without its marker until then), so that it warns of what the
/// run's closing collect will (hundred-and-ninth hostile round, N2: a user file under
/// `runs/` was warned of by the run alone).
pub fn warn_unreadable_but(root: &Path, marker: &str, made: impl Fn(&Path) -> bool) -> usize {
    // A marker that is a link is warned of as a link below, once (hundred-and-forty-ninth
    // hostile round, N10: also as "no readable summary.json", beside it).
    let linked = |d: &Path| {
        std::fs::symlink_metadata(d.join(marker)).is_ok_and(|m| m.file_type().is_symlink())
    };
    let dirs: Vec<PathBuf> = without_result(root, marker)
        .into_iter()
        .filter(|d| !made(d) && !linked(d))
        .collect();
    for dir in dirs.iter().take(5) {
        // The files by name: a README or notes file beside the runs is no result's, and
        // the warning said "a result's files" of it (twelfth hostile round).
        match file_names(dir) {
            names if names.is_empty() => eprintln!(
                "warning: {}: its {marker} is not a regular file (a FIFO, a directory or a \
                 device): not collected",
                dir.display()
            ),
            names => eprintln!(
                "warning: {}: holds files ({names}) but no readable {marker}: not collected",
                dir.display()
            ),
        }
    }
    if dirs.len() > 5 {
        eprintln!("warning: ... and {} more such directories", dirs.len() - 5);
    }
    let links = links_under(root);
    for link in links.iter().take(5) {
        eprintln!(
            "warning: {}: a symbolic link, never followed: what it leads to is not collected \
             (move the directory itself here)",
            link.display()
        );
    }
    if links.len() > 5 {
        eprintln!("warning: ... and {} more such links", links.len() - 5);
    }
    dirs.len() + links.len()
}

/// Warns (on stderr) of the points of a config that `collect --config` finds no result for
/// (not made yet, failed, or made by another shard still running): the tables hold the
/// others only. `label` describes a point.
fn warn_incomplete(planned: &[Planned], label: &dyn Fn(usize) -> String) {
    let missing: Vec<&Planned> = planned
        .iter()
        .filter(|p| !matches!(p.state, State::Done))
        .collect();
    if missing.is_empty() {
        return;
    }
    let have = if missing.len() == 1 { "has" } else { "have" };
    // None left to hold is said as such (hundred-and-forty-first hostile round, N2).
    let others = match missing.len() == planned.len() {
        true => "the tables hold none",
        false => "the tables hold the others",
    };
    // A partial one (an interrupted run) has a row that says it is unfinished, not a result
    // (hundred-and-fifty-third hostile round, N3: "no result" of a run sweep.csv listed).
    let partial = match missing.iter().any(|p| p.state == State::Partial) {
        true => ", a partial one's row marked unfinished",
        false => "",
    };
    eprintln!(
        "warning: {} of the config's {} points {have} no finished result; {others}{partial}:",
        missing.len(),
        planned.len()
    );
    for p in missing.iter().take(5) {
        eprintln!("  {:7} {}", p.state.label(), label(p.index));
    }
    if missing.len() > 5 {
        eprintln!("  ... and {} more", missing.len() - 5);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fortieth hostile round, D3: a failure record is the tools' only when it reads as
    /// one (a tool's name and a fingerprint); a user's file of that name is refused before
    /// any work, not read as a failure, and never removed; the tools' own is cleared.
    #[test]
    fn only_the_tools_failure_records_are_read_and_cleared() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert!(Failure::check(d).is_ok() && !Failure::is_ours(d));
        std::fs::write(d.join(FAILED_FILE), "my notes, not JSON").unwrap();
        assert!(!Failure::is_ours(d));
        let e = Failure::check(d).unwrap_err().to_string();
        assert!(
            e.contains("failed.json") && e.contains("not a failure record"),
            "{e}"
        );
        Failure::clear(d);
        assert!(d.join(FAILED_FILE).exists());
        std::fs::write(
            d.join(FAILED_FILE),
            r#"{"reason": "x", "fingerprint": "", "tool": "me"}"#,
        )
        .unwrap();
        assert!(Failure::check(d).is_err());
        let ours = Failure {
            reason: "the run failed".into(),
            fingerprint: "abc".into(),
            tool: "ntk-train 0.1.0".into(),
        };
        ours.write(d).unwrap();
        assert!(Failure::is_ours(d) && Failure::check(d).is_ok());
        Failure::clear(d);
        assert!(!d.join(FAILED_FILE).exists());
    }

    /// Eighty-fourth hostile round, D5: a user's file in a directory above a result (a probe
    /// point's `seed1/notes.txt` above `seed1/whole/summary.json`) is no result left out; a
    /// result's directory without its marker still is.
    #[test]
    fn files_above_a_result_are_not_a_result_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for (path, text) in [
            ("seed1/notes.txt", "mine"),
            ("seed1/whole/summary.json", "{}"),
            ("seed2/whole/eigenvalues.npy", "x"),
            ("README", "notes"),
        ] {
            let p = root.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        assert_eq!(
            without_result(root, "summary.json"),
            vec![root.join("seed2/whole")]
        );
        // Ninety-ninth hostile round, N6: a marker that is a FIFO or a directory, alone.
        std::fs::create_dir_all(root.join("seed3/whole/summary.json")).unwrap();
        std::fs::create_dir_all(root.join("seed4/whole")).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(root.join("seed4/whole/summary.json"))
            .status()
            .unwrap();
        assert!(made.success());
        assert_eq!(
            without_result(root, "summary.json"),
            vec![
                root.join("seed2/whole"),
                root.join("seed3/whole"),
                root.join("seed4/whole")
            ]
        );
    }

    /// Twenty-fifth hostile round, N5: a sweep of one point (a single run) that failed says
    /// so, without "the others went on"; a sweep of several keeps its count.
    #[test]
    fn a_single_failed_point_has_no_others() {
        let failed = |made: usize| Outcome::<()> {
            made: vec![(); made],
            skipped: 0,
            failed: vec![("depth 1".into(), "disk full".into())],
            unrecorded: 0,
            busy: vec![],
            unit: "run",
            left_to_other_shards: 0,
            unfinished_elsewhere: 0,
        };
        let one = failed(0).check().unwrap_err().to_string();
        assert!(
            one.contains("the run failed (recorded in its failed.json): depth 1: disk full")
                && !one.contains("others"),
            "{one}"
        );
        let two = failed(1).check().unwrap_err().to_string();
        assert!(
            two.contains("1 run(s) failed") && two.contains("the others went on"),
            "{two}"
        );
        // Eighty-third hostile round, D7: a failure that could not be recorded is not said
        // to be.
        let unrecorded = |made: usize, failed_n: usize, unrecorded: usize| Outcome::<()> {
            failed: vec![("depth 1".into(), "disk full".into()); failed_n],
            unrecorded,
            ..failed(made)
        };
        let one = unrecorded(0, 1, 1).check().unwrap_err().to_string();
        assert!(
            one.contains("the run failed (not recorded: its failed.json could not be written")
                && !one.contains("recorded in its"),
            "{one}"
        );
        let all = unrecorded(1, 2, 2).check().unwrap_err().to_string();
        assert!(
            all.contains("2 run(s) failed (not recorded: no failed.json could be written")
                && !all.contains("each recorded"),
            "{all}"
        );
        let some = unrecorded(1, 3, 1).check().unwrap_err().to_string();
        assert!(
            some.contains("3 run(s) failed (each recorded in its failed.json but 1, which"),
            "{some}"
        );
    }

    #[test]
    fn shards_partition_the_points() {
        let shards: Vec<Shard> = (0..3)
            .map(|i| Shard::parse(&format!("{i}/3")).unwrap())
            .collect();
        for p in 0..10 {
            assert_eq!(shards.iter().filter(|s| s.owns(p)).count(), 1);
        }
        for bad in ["3/3", "1", "a/2", "0/0"] {
            let e = Shard::parse(bad).unwrap_err().to_string();
            assert!(e.ends_with("expected i/N with 0 <= i < N"), "{bad}: {e}");
        }
        // A count past usize is said as such (ninety-eighth hostile round, N7).
        let e = Shard::parse("1/99999999999999999999")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("99999999999999999999 is past the largest count"),
            "{e}"
        );
    }

    #[test]
    fn a_grid_over_the_limit_is_refused() {
        assert_eq!(check_size(&[11, 2, 5], "axes").unwrap(), 110);
        let err = check_size(&[1000, 1000], "depths x seeds")
            .unwrap_err()
            .to_string();
        assert!(err.contains("1000000 points (depths x seeds)"), "{err}");
    }

    /// A run directory moved elsewhere and linked back is not collected (links are never
    /// followed), and is said, not left out without a word.
    #[test]
    fn a_linked_result_is_counted_unreadable() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("elsewhere");
        std::fs::create_dir_all(&real).unwrap();
        std::fs::write(real.join("config.toml"), "").unwrap();
        let runs = dir.path().join("runs");
        std::fs::create_dir_all(runs.join("a")).unwrap();
        std::fs::write(runs.join("a/config.toml"), "").unwrap();
        std::os::unix::fs::symlink(&real, runs.join("b")).unwrap();
        assert_eq!(
            find_files(&runs, "config.toml"),
            vec![runs.join("a/config.toml")]
        );
        assert_eq!(links_under(&runs), vec![runs.join("b")]);
        assert_eq!(warn_unreadable(&runs, "config.toml"), 1);
    }

    #[test]
    fn hidden_entries_and_links_are_not_found() {
        let dir = tempfile::tempdir().unwrap();
        for p in [
            "a/b/summary.json",
            ".set-x/summary.json",
            "c/.summary.json",
            "summary.json",
        ] {
            let p = dir.path().join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "{}").unwrap();
        }
        // A link back up (a loop) and a link to a file: neither is followed.
        std::os::unix::fs::symlink(dir.path(), dir.path().join("a/loop")).unwrap();
        std::os::unix::fs::symlink(
            dir.path().join("summary.json"),
            dir.path().join("a/summary.json"),
        )
        .unwrap();
        let found = find_files(dir.path(), "summary.json");
        assert_eq!(
            found,
            vec![
                dir.path().join("a/b/summary.json"),
                dir.path().join("summary.json")
            ]
        );
    }
}
