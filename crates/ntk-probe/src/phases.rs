//! A tiled run's finished phases on disk, so that a run killed mid-way restarts from the last
//! one instead of from nothing: all 60,000 MNIST images at depth 10 take about 15 minutes to
//! form and 20 to factor on the 2-core machine.
//!
//! **What is kept**, in a directory beside the run's output directory (`.<name>.phases`):
//! - `phases.json`: the run's config fingerprint, `n` and the tile width, and what each
//!   finished phase found: the minimum gradient angle and the formation's seconds (the
//!   kernel formed), `max |K|` and the Lanczos run on `K` (`lambda_max`), the shifts whose
//!   factorization broke down and the one that held (the factorization);
//! - `tiles.f64`: the tiles as the last phase left them ([`Tiled::write_tiles`]): the kernel
//!   after its formation, its Cholesky factor after the factorization. [`Tiled::bytes`]
//!   bytes: 14.7 GB at `n = 60,000`. The kernel's file is removed before the factor's is
//!   written, so the disk never holds two; a run killed while the factor is being written
//!   restarts after `lambda_max` and forms the kernel again.
//!
//! **When they are used**: by `ntk --resume` and by every sweep point (a sweep continues
//! what was interrupted), and only when their fingerprint, `n` and tile width are the run's
//! (the fingerprint this build records, or the one a build before the one recorded form
//! recorded for the same config: [`Place::of_run`]) and the tiles match the SHA-256 `phases.json` records of them: tiles that do not (a
//! truncated, missing or altered file) are said on stderr and the kernel is formed again.
//!
//! **What is removed**: only phase files the run can prove are a probe's: a directory (not
//! a symbolic link) holding a `phases.json` that names this tool and matches its own
//! checksum. Of that directory only the files named here (and their temporary copies,
//! `<name>.ntk-tmp-PID`) are removed, then the directory if that leaves it empty; they are
//! removed once the run's results are in place (after the output set's commit:
//! [`finish`]), when a tiled run that does not resume starts afresh, and, said on stderr,
//! once the results of a run of another route are in place beside them ([`unused`]). Another
//! run's (another config, `n` or tile width: its resumable state) only with `--recompute`:
//! a run that would remove them is refused without it, as that run's results would be
//! ([`another_runs`]), and they are left beside results `--resume` keeps. Anything else at `.<name>.phases` (a symbolic link, a
//! file, a directory holding tiles or any other file without a probe's `phases.json`, such
//! as an output set named `.<name>.phases`, an unreadable or altered
//! `phases.json`, a symbolic link or anything but a regular file at `tiles.f64`) is said on
//! stderr, left as it is, and the run goes on without phase files. `NTK_PHASE_FILES=0`
//! neither uses nor removes them.
//!
//! **Disk**: before the kernel is formed, the directory's file system must have room for the
//! tiles. `NTK_PHASE_FILES` decides what happens when it has not: unset, the run goes on
//! without phase files and says so; `1` refuses the run before any work (as it refuses a
//! place it cannot use); `0` never keeps phase files. A write that fails later (the disk
//! filled since) is said on stderr and the run goes on without them: they never make a run
//! fail.

use std::fs;
use std::io::{BufReader, BufWriter, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use ntk_kernel::angles::MinAngle;
use ntk_kernel::extreme::tiled::Tiled;
use ntk_kernel::extreme::{Operand, cholesky, lanczos};
use ntk_runs::provenance::{FlatConfig, Sha256Stream, sha256_hex};

use crate::error::Error;

/// The environment variable that decides whether phase files are kept (see the module doc).
pub const PHASE_FILES: &str = "NTK_PHASE_FILES";

const STATE: &str = "phases.json";
const TILES: &str = "tiles.f64";
/// The partial tiles file of builds before the seventy-third hostile round, which wrote
/// their tiles through this one name: no longer written, nor removed (a user's file of that
/// name was removed as the run's, D4); a run now writes through `tiles.f64.ntk-tmp-PID`.
const PARTIAL: &str = "tiles.f64.partial";
/// What a probe's `phases.json` says it is: phase files of this format, by this tool.
const OWNER: &str = "ntk-probe phase files, format 2";

/// Where a run keeps its phase files, whether it may resume from them, and the run's config
/// fingerprint (its provenance's, which the caller has computed already), which earlier
/// files must record to be used; or one of the fingerprints a build before the one
/// recorded form recorded for the same network in another spelling (`earlier`; sixty-first
/// hostile round, D4: an interrupted run of such a build, a NormReLU kink spelled
/// `model.kink`, read `new` and its phase files were removed; sixty-second, D2: only the
/// spelling of the config as now written was matched).
#[derive(Clone, Debug)]
pub struct Place {
    pub dir: PathBuf,
    pub resume: bool,
    pub fingerprint: String,
    pub earlier: Vec<String>,
    /// The run's config (its provenance's), recorded in `phases.json` so that a run of
    /// another config is told the keys that differ ([`another_runs`]); `None` where a caller
    /// has only the fingerprint.
    pub config: Option<FlatConfig>,
}

impl Place {
    /// `.<name>.phases` beside the output directory `out`, for a run of the config whose
    /// fingerprint is `fingerprint` (no earlier one).
    pub fn beside(out: &Path, resume: bool, fingerprint: &str) -> Self {
        Self {
            dir: dir_beside(out),
            resume,
            fingerprint: fingerprint.into(),
            earlier: Vec::new(),
            config: None,
        }
    }

    /// [`Place::beside`] for the run whose provenance is `prov`: its fingerprint, and those
    /// an earlier build recorded for its network in another spelling
    /// ([`ntk_model::spec::recorded_spellings`] of its one form).
    pub fn of_run(out: &Path, resume: bool, prov: &ntk_runs::provenance::Provenance) -> Self {
        Self {
            earlier: ntk_model::spec::recorded_spellings(&prov.config)
                .iter()
                .map(ntk_runs::provenance::fingerprint)
                .collect(),
            config: Some(prov.config.clone()),
            ..Self::beside(out, resume, &prov.fingerprint)
        }
    }

    /// Whether `state` is of this run's config: its fingerprint this build's or one an
    /// earlier build recorded for the network ([`Place::earlier`]).
    fn of_this_config(&self, state: &State) -> bool {
        state.fingerprint == self.fingerprint || self.earlier.contains(&state.fingerprint)
    }

    /// Whether `state` is of this run over `n` inputs in tiles of `block`.
    fn is_this_run(&self, state: &State, (n, block): (usize, usize)) -> bool {
        self.of_this_config(state) && (state.n, state.block) == (n, block)
    }
}

/// The phase directory of the output directory `out`: `.<name>.phases` beside it.
pub fn dir_beside(out: &Path) -> PathBuf {
    let name = out
        .file_name()
        .map_or_else(|| "run".into(), |n| n.to_string_lossy().into_owned());
    let parent = out.parent().unwrap_or(Path::new("."));
    parent.join(format!(".{name}.phases"))
}

/// `NTK_PHASE_FILES`: what to do about phase files.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    /// Kept when the disk holds them, else said and not kept (unset).
    WhenTheyFit,
    /// Kept, or the run is refused before any work (`1`).
    Required,
    /// Never kept (`0`).
    Off,
}

impl Mode {
    fn from_env() -> crate::Result<Self> {
        match std::env::var(PHASE_FILES) {
            Err(_) => Ok(Self::WhenTheyFit),
            Ok(v) => Self::parse(&v),
        }
    }

    fn parse(v: &str) -> crate::Result<Self> {
        match v {
            "1" => Ok(Self::Required),
            "0" => Ok(Self::Off),
            // Quoted, so that a space or an empty value shows (eighty-third hostile round,
            // N1: ' 1' was printed `NTK_PHASE_FILES =  1`).
            _ => Err(Error::Config {
                key: PHASE_FILES,
                value: format!("{v:?}"),
                reason: "must be 1 (phase files required) or 0 (none); unset keeps them when \
                         they fit on the disk"
                    .into(),
            }),
        }
    }
}

/// Whether the extreme route's `error` is a verdict on the kernel itself (its spectrum past
/// f64's range, an inverse that overflows, entries or a Lanczos run that are not finite, a
/// kernel that is not positive semi-definite): one every run on these phase files would
/// reach again, so that they are removed with the refusal ([`PhaseFiles::refused`]).
pub fn refuses_the_kernel(error: &ntk_kernel::Error) -> bool {
    use ntk_kernel::Error as E;
    matches!(
        error,
        E::Numerics(_)
            | E::NotPsd { .. }
            | E::RitzValue { .. }
            | E::LanczosNonFinite
            | E::InverseOverflow { .. }
    )
}

/// Checks `NTK_PHASE_FILES` as a run would, for a dry run to refuse what the run refuses.
pub fn check_variable() -> crate::Result<()> {
    Mode::from_env().map(|_| ())
}

/// What `place` keeps of the run over `n` inputs in tiles of `block` (its fingerprint), in
/// words ([`PhaseFiles::describe`]), when it holds this run's phase files with a phase
/// finished and `NTK_PHASE_FILES` lets them be used: what a dry run says. Nothing is changed.
pub fn kept(place: &Place, nb: (usize, usize)) -> Option<String> {
    match examine(place, nb) {
        Examined::Kept(words) | Examined::Dropped(_, Some(words)) => Some(words),
        Examined::Dropped(_, None) | Examined::Nothing => None,
    }
}

/// What a dry run finds of this run's phase files ([`examine`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Examined {
    /// A phase finished, kept: in words, as [`kept`] says them.
    Kept(String),
    /// Tiles the run would drop, and why: in the run's words ([`PhaseFiles::load`]'s
    /// warning; ninety-second hostile round, N9: the dry run said new, and only the run said
    /// why); then what it keeps beside them, in words, where it keeps lambda_max.
    Dropped(String, Option<String>),
    /// None of this run's, or nothing finished.
    Nothing,
}

/// [`kept`], with the tiles the run would drop said.
pub fn examine(place: &Place, (n, block): (usize, usize)) -> Examined {
    if matches!(Mode::from_env(), Ok(Mode::Off) | Err(_)) {
        return Examined::Nothing;
    }
    let Found::Ours(state) = inspect(&place.dir) else {
        return Examined::Nothing;
    };
    if !place.is_this_run(&state, (n, block)) {
        return Examined::Nothing;
    }
    let path = place.dir.join(TILES);
    // Tiles that are missing, not a regular file, of another size or of another content
    // than phases.json records are dropped by the run, lambda_max kept beside them
    // ([`PhaseFiles::load`]), so the dry run says what the run keeps, or that it is new.
    let dropped = |why: String| {
        let kept = state.top.is_some().then(|| {
            PhaseFiles {
                dir: place.dir.clone(),
                state: state.without_tiles(),
                read_only: false,
            }
            .describe()
        });
        Examined::Dropped(tiles_dropped(&path, &why, kept.is_some()), kept)
    };
    // Their content is hashed up to [`DRY_RUN_HASHED`] bytes (round 91, N3: a flipped byte
    // read "partial ... continues from the kernel's tiles"); larger tiles are said unchecked.
    let mut unchecked = None;
    if state.tiles.is_some() {
        let (file, len) = match open_regular(&path) {
            Ok(found) => found,
            Err(e) => return dropped(e.to_string()),
        };
        let bytes = Tiled::bytes_for(n, block) as u64;
        if len != bytes {
            return dropped(wrong_size(len, bytes));
        }
        if len <= DRY_RUN_HASHED {
            if !hash_matches(file, state.tiles_sha256.as_deref()) {
                return dropped(ALTERED.into());
            }
        } else {
            unchecked = Some(format!(
                " (their content, {:.1} GB, is checked against its SHA-256 when the run reads \
                 them)",
                len as f64 / 1e9
            ));
        }
    }
    let begun = state.formed.is_some() || state.top.is_some() || state.tiles.is_some();
    if !begun {
        return Examined::Nothing;
    }
    let words = PhaseFiles {
        dir: place.dir.clone(),
        state: *state,
        read_only: false,
    }
    .describe();
    Examined::Kept(words + unchecked.as_deref().unwrap_or(""))
}

/// The warning of tiles at `path` dropped (`why`), the run's and its dry run's alike, with
/// lambda_max kept where `keeps_top`.
fn tiles_dropped(path: &Path, why: &str, keeps_top: bool) -> String {
    format!(
        "warning: phase files: {}: {why}; not used: the kernel is formed again{}",
        path.display(),
        if keeps_top { " (lambda_max kept)" } else { "" }
    )
}

/// Why tiles of `len` bytes are dropped where they take `bytes`.
fn wrong_size(len: u64, bytes: u64) -> String {
    format!("{len} bytes where the tiles take {bytes} (a truncated or foreign file)")
}

/// Why tiles whose content is not the recorded one are dropped.
const ALTERED: &str =
    "its content does not match the SHA-256 phases.json records (altered or damaged)";

/// The largest tiles file a dry run hashes to hold it to the SHA-256 `phases.json` records
/// (1 GB: about a second; the tiles of 11,000 inputs).
const DRY_RUN_HASHED: u64 = 1_000_000_000;

/// Whether `file`'s content has the SHA-256 `expected` (none recorded: not).
fn hash_matches(file: fs::File, expected: Option<&str>) -> bool {
    let Some(expected) = expected else {
        return false;
    };
    let mut r = Hashing::new(BufReader::with_capacity(1 << 22, file));
    std::io::copy(&mut r, &mut std::io::sink()).is_ok() && r.hash.hex() == expected
}

/// Removes the phase files of the run `place` names when its finished results are kept
/// (`--resume` of a finished run): a killed `--recompute` of the same config left them,
/// and no run would read them (twentieth hostile round, N3). Only this run's (its
/// fingerprint), never under `NTK_PHASE_FILES=0`; returns what was removed, in words. A dry
/// run (`remove` false) is told that the run removes them, and nothing is changed
/// (eighty-fifth hostile round, D10: it said nothing of them).
pub fn drop_when_kept(place: &Place, remove: bool) -> Option<String> {
    if Mode::from_env().ok()? == Mode::Off {
        return None;
    }
    let Found::Ours(state) = inspect(&place.dir) else {
        return None;
    };
    if !place.of_this_config(&state) {
        return None;
    }
    let what = match remove {
        true => remove_said(&place.dir),
        false => "the run removes them".to_string(),
    };
    Some(format!(
        "{}: this config's phase files (an interrupted computation's, which the kept results \
         make unneeded): {what}",
        place.dir.display()
    ))
}

/// Removes the phase files of the run `place` names, over `n` inputs in tiles of `block`,
/// once its results are in place: called after its output set's commit, so that a commit
/// that fails, or a process killed before it, leaves the finished phases for `--resume`
/// (eighty-first hostile round, D1: they were removed before the results were moved into
/// `--out`, and a failed move lost both). Only while the place holds this run's state
/// (nothing else took its place meanwhile); never under `NTK_PHASE_FILES=0`.
pub fn finish(place: &Place, (n, block): (usize, usize)) {
    if Mode::from_env().ok() == Some(Mode::Off) {
        return;
    }
    if let Found::Ours(state) = inspect(&place.dir)
        && place.is_this_run(&state, (n, block))
        && let Err(why) = remove_ours(&place.dir)
    {
        // Said, not an error: the results are in place (eighty-second hostile round, D2).
        eprintln!(
            "warning: {}: the run's phase files, no longer needed, were not removed ({why}): \
             remove them by hand",
            place.dir.display()
        );
    }
}

/// Removes this run's phase files at `place` (over `n` inputs in tiles of `block`) because
/// its results cannot be written beside them (a disk full: eighty-seventh hostile round, D3:
/// the tiles kept, every run and `--resume` then failed to write `inputs.npy`), and says so;
/// whether any were removed, so that the results are written again. A run killed now starts
/// from nothing, as one without phase files.
///
/// Only where removing them makes the room: the free space and the phase files' own at least
/// `needed`, the results' size; otherwise they are kept for `--resume` and said
/// (eighty-eighth hostile round, D7: removed for a write that then failed all the same).
pub fn give_way(place: &Place, (n, block): (usize, usize), why: &str, needed: u64) -> bool {
    if Mode::from_env().ok() == Some(Mode::Off) {
        return false;
    }
    let Found::Ours(state) = inspect(&place.dir) else {
        return false;
    };
    if !place.is_this_run(&state, (n, block)) {
        return false;
    }
    let theirs: u64 = fs::read_dir(&place.dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum();
    let free = free_bytes(&place.dir).unwrap_or(0);
    if free.saturating_add(theirs) < needed {
        eprintln!(
            "warning: {}: the results cannot be written ({why}), and would not fit without the \
             run's phase files either ({} free, {} theirs, the results about {}): kept for \
             --resume once the disk has room",
            place.dir.display(),
            ntk_runs::budget::human(free as f64),
            ntk_runs::budget::human(theirs as f64),
            ntk_runs::budget::human(needed as f64)
        );
        return false;
    }
    if remove_ours(&place.dir).is_err() {
        return false;
    }
    eprintln!(
        "warning: {}: the results could not be written beside the run's phase files ({why}): \
         removed them to make room, and the results are written again",
        place.dir.display()
    );
    true
}

/// A probe's phase files beside `out` where a run that keeps none (not the host's tiled
/// route: dense, `extreme`, blocks, the device) writes its results: no run resumes from
/// them beside that run's results, so they are removed once those are in place
/// (`remove`: the run, after its commit) and said; the dry run (`remove` false) says that
/// the run will remove them, and under `NTK_PHASE_FILES=0` they are only said (eighty-first
/// hostile round, D5: an interrupted tiled run's phase files, 14.7 GB at 60,000 images,
/// stayed beside a dense run's results without a word). The line for stderr; `None` where
/// there are none.
pub fn unused(out: &Path, remove: bool) -> Option<String> {
    let dir = dir_beside(out);
    let Found::Ours(state) = inspect(&dir) else {
        return None;
    };
    let off = Mode::from_env().ok() == Some(Mode::Off);
    let what = match (off, remove) {
        (true, _) => format!("neither used nor removed ({PHASE_FILES}=0)"),
        (false, true) => remove_said(&dir),
        (false, false) => "the run removes them (once its results are in place)".to_string(),
    };
    Some(format!(
        "note: {}: a probe's phase files (a tiled run over n = {} inputs), which no run \
         resumes from beside this run's results: {what}",
        dir.display(),
        state.n
    ))
}

/// What a tiled run at `place` over `n` inputs in tiles of `block` says as it starts of a
/// probe's phase files there of another run (another config, `n` or tile width), which it
/// removes to keep its own (eighty-second hostile round, D12: another config's resumable
/// state, 35 minutes of work at 60,000 images, was removed without a word): for its dry
/// run. This run's own are not another's: the dry run says those as `kept`. Nothing is
/// changed.
pub fn replaced(place: &Place, (n, block): (usize, usize)) -> Option<String> {
    if Mode::from_env().ok()? == Mode::Off {
        return None;
    }
    match inspect(&place.dir) {
        Found::Ours(s) => replaced_note(place, &s, (n, block)),
        _ => None,
    }
}

/// [`replaced`]'s words for the state `s` found at `place`.
fn replaced_note(place: &Place, s: &State, (n, block): (usize, usize)) -> Option<String> {
    (!place.is_this_run(s, (n, block))).then(|| {
        format!(
            "note: {}: another run's phase files (a tiled run over n = {} inputs of another \
             config), which this run removes to keep its own: that run can no longer resume \
             from them",
            place.dir.display(),
            s.n
        )
    })
}

/// A probe's phase files at `place` that are not those of the run over `n` inputs in tiles
/// of `block` (another config, `n` or tile width): another run's resumable state, which its
/// `--resume` continues from. A run that would remove them (a tiled run starting its own, a
/// run of another route once its results are in) is refused without `--recompute`, as that
/// run's finished results would be (eighty-eighth hostile round, D1: a typo in `--set`
/// discarded an interrupted run's tiles, 14.7 GB and hours at 60,000 images, with a note).
/// Their description, naming the keys that differ where the files record their config;
/// `None` where there are none, and under `NTK_PHASE_FILES=0` (which neither uses nor
/// removes them). Nothing is changed.
pub fn another_runs(place: &Place, (n, block): (usize, usize)) -> Option<String> {
    if Mode::from_env().ok()? == Mode::Off {
        return None;
    }
    let Found::Ours(s) = inspect(&place.dir) else {
        return None;
    };
    if place.is_this_run(&s, (n, block)) {
        return None;
    }
    let mut changes = match (&s.config, &place.config) {
        (Some(was), Some(now)) if !place.of_this_config(&s) => ntk_runs::provenance::diff(was, now),
        _ => Vec::new(),
    };
    if s.n != n && !changes.iter().any(|c| c.starts_with("data.n:")) {
        changes.push(format!("inputs: {} -> {n}", s.n));
    }
    if s.block != block {
        changes.push(format!("tile width: {} -> {block}", s.block));
    }
    let what = match changes.is_empty() {
        true => "another config".to_string(),
        false => format!("another config: {}", changes.join("; ")),
    };
    Some(format!(
        "{}: another run's phase files (an interrupted tiled run over n = {} inputs of {what}), \
         which that run's --resume continues from",
        place.dir.display(),
        s.n
    ))
}

/// What `NTK_PHASE_FILES=1` refuses before any work ([`PhaseFiles::open`]'s refusals, in
/// its words), for a dry run to refuse what the run refuses: a place that is not a probe's
/// phase files (a file, a link, a user's directory), a place this user cannot write, and a
/// disk without room for tiles the place does not keep already. Nothing else is said (the run's notes are the run's) and
/// nothing is changed.
pub fn check_required(place: &Place, (n, block): (usize, usize), bytes: u64) -> crate::Result<()> {
    if Mode::from_env()? != Mode::Required {
        return Ok(());
    }
    let dir = &place.dir;
    if let Found::Foreign(why) = inspect(dir) {
        return Err(cannot_keep(dir, &format!("{why}; left as it is")));
    }
    // A place this user cannot write keeps nothing, even phases to resume from (eighty-third
    // hostile round, D4: the dry run planned what the run refused).
    if let Some(why) = unwritable(dir) {
        return Err(cannot_keep(dir, &why));
    }
    // Tiles this run continues from need no new room.
    if kept(place, (n, block)).is_some() {
        return Ok(());
    }
    match no_room(dir, bytes) {
        Some(why) => Err(no_room_refusal(dir, &why)),
        None => Ok(()),
    }
}

/// Why nothing can be written (nor removed) at the phase directory `dir`, where it exists
/// and this user may not write it (or the directory above it, where it does not): what the
/// run's first write there meets ([`PhaseFiles::open`]). Nothing is changed.
pub fn unwritable(dir: &Path) -> Option<String> {
    match ntk_files::outset::check_writable_unmade(dir) {
        Ok(()) => None,
        Err(ntk_files::Error::NotWritable { source, .. }) => {
            Some(format!("not writable ({source})"))
        }
        Err(ntk_files::Error::NotWritableAbove { above, source, .. }) => Some(format!(
            "cannot be made: {} is not writable ({source})",
            above.display()
        )),
        Err(e) => Some(e.to_string()),
    }
}

/// What a run over `n` inputs in tiles of `block` (`bytes` of tiles) says before any work
/// when it will go on without phase files at `place` (`NTK_PHASE_FILES` unset): a place
/// that is not a probe's phase files (its warning), one this user cannot write (its
/// warning: a resumed run's phases used as they are, or none kept), a disk without room for
/// them (its note), and under `NTK_PHASE_FILES=0` a probe's phase files there (its note),
/// in the run's words, for a dry run to say it too (seventy-first hostile round,
/// N1: the dry run said only "new"). Nothing is changed.
pub fn unkept(place: &Place, (n, block): (usize, usize), bytes: u64) -> Option<String> {
    let dir = &place.dir;
    match Mode::from_env().ok()? {
        Mode::WhenTheyFit => {}
        // Said as the run says it (eighty-third hostile round, D6: the dry run was silent
        // about the phase files `--resume` would have continued from).
        Mode::Off => return matches!(inspect(dir), Found::Ours(_)).then(|| off_note(dir)),
        Mode::Required => return None,
    }
    if let Found::Foreign(why) = inspect(dir) {
        return Some(goes_on_without(dir, &format!("{why}; left as it is")));
    }
    let resumed = place.resume && kept(place, (n, block)).is_some();
    if let Some(why) = unwritable(dir) {
        // Read-only phases of this run are used as they are; anything else there is left,
        // and the run keeps none (eighty-third hostile round, D4).
        return Some(if resumed {
            format!(
                "warning: {}: {why}; its finished phases are used as they are, and no later \
                 phase is kept there",
                dir.display()
            )
        } else {
            goes_on_without(dir, &why)
        });
    }
    if resumed || kept(place, (n, block)).is_some() {
        return None;
    }
    no_room(dir, bytes).map(|why| no_room_note(dir, &why))
}

/// The note of a run under `NTK_PHASE_FILES=0` beside a probe's phase files at `dir`.
fn off_note(dir: &Path) -> String {
    format!(
        "note: {}: earlier phase files, neither used nor removed ({PHASE_FILES}=0)",
        dir.display()
    )
}

/// The warning of a run that keeps no phase files at `dir`: `why`, and what that means.
fn goes_on_without(dir: &Path, why: &str) -> String {
    format!(
        "warning: {}: {why}; the run goes on without phase files (a run killed now starts \
         again from nothing)",
        dir.display()
    )
}

/// The note of a run whose disk has no room for phase files at `dir` (`why`).
fn no_room_note(dir: &Path, why: &str) -> String {
    format!(
        "note: no phase files ({}: {why}): a run killed now starts again from nothing; \
         with {PHASE_FILES}=0 the run goes without them and says nothing",
        dir.display()
    )
}

/// `NTK_PHASE_FILES=1`'s refusal of a place where no phase files can be kept.
fn cannot_keep(dir: &Path, why: &str) -> Error {
    Error::Config {
        key: PHASE_FILES,
        value: "1".into(),
        reason: format!("no phase files can be kept: {}: {why}", dir.display()),
    }
}

/// Why the disk under `dir` cannot hold `bytes` of tiles, when it cannot.
fn no_room(dir: &Path, bytes: u64) -> Option<String> {
    let free = free_bytes(dir.parent().unwrap_or(Path::new(".")))?;
    (free < bytes).then(|| {
        format!(
            "the disk has {} free, the tiles and the results beside them need {}",
            ntk_runs::budget::human(free as f64),
            ntk_runs::budget::human(bytes as f64)
        )
    })
}

/// `NTK_PHASE_FILES=1`'s refusal of a disk without room for the tiles.
fn no_room_refusal(dir: &Path, why: &str) -> Error {
    Error::Config {
        key: PHASE_FILES,
        value: "1".into(),
        reason: format!("no room for the phase files: {}: {why}", dir.display()),
    }
}

/// What the tiles file holds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Held {
    Kernel,
    /// The factor of `K + shift I`.
    Factor {
        shift: f64,
    },
}

/// `phases.json`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct State {
    /// [`OWNER`]: phase files of this tool and format.
    owner: String,
    fingerprint: String,
    /// The config that made them (its dotted keys), to name what another config changes;
    /// absent in phase files written before it was recorded (their checksum stays theirs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    config: Option<FlatConfig>,
    n: usize,
    block: usize,
    /// What `tiles.f64` holds (`None`: no tiles file, or one being written).
    tiles: Option<Held>,
    /// The SHA-256 of `tiles.f64`, with `tiles`.
    tiles_sha256: Option<String>,
    /// The formation's results, once the kernel was formed.
    formed: Option<Formed>,
    /// `max |K|`, once read.
    max_abs: Option<f64>,
    /// The Lanczos run on `K`, once done.
    top: Option<lanczos::Ritz>,
    /// Shifts whose factorization broke down, and at which row.
    broke_down: Vec<(f64, usize)>,
    /// The SHA-256 of this state's JSON with `checksum` null: an altered file is not used.
    checksum: Option<String>,
}

impl State {
    fn own_checksum(&self) -> String {
        let mut s = self.clone();
        s.checksum = None;
        sha256_hex(&serde_json::to_vec(&s).expect("the state serializes"))
    }

    /// The state without its tiles: lambda_max kept, found from the same kernel formed
    /// again (hundred-and-twenty-eighth hostile round, N1 of the second review: damaged tiles
    /// cost lambda_max, where tiles never written did not).
    fn without_tiles(&self) -> Self {
        Self {
            top: self.top.clone(),
            ..self.restart()
        }
    }

    /// The state with nothing finished, of the same run.
    fn restart(&self) -> Self {
        Self {
            owner: OWNER.into(),
            fingerprint: self.fingerprint.clone(),
            config: self.config.clone(),
            n: self.n,
            block: self.block,
            ..Self::default()
        }
    }
}

/// What the kernel's formation found.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Formed {
    pub min_angle: Option<MinAngle>,
    pub seconds: f64,
}

/// What is at a run's phase directory.
enum Found {
    /// Nothing, or a directory holding nothing but a dead writer's temporary state: usable.
    Free,
    /// A directory of a probe's phase files (its `phases.json` names this tool and matches
    /// its checksum): they may be used, or removed.
    Ours(Box<State>),
    /// Anything else, and why it is not the run's to use or remove.
    Foreign(String),
}

/// What is at `dir` ([`Found`]); nothing there is changed.
fn inspect(dir: &Path) -> Found {
    let meta = match fs::symlink_metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Found::Free,
        Err(e) => return Found::Foreign(format!("cannot be inspected ({e})")),
    };
    if meta.file_type().is_symlink() {
        return Found::Foreign(
            "is a symbolic link (phase files are kept in a directory of their own, as --out \
             refuses to write through one)"
                .into(),
        );
    }
    if !meta.is_dir() {
        return Found::Foreign("exists and is not a directory".into());
    }
    // Another user's phase files (or their temporary copies) are neither used nor removed,
    // as the tools replace only this user's files (ninety-sixth hostile round, D4: a run of
    // `nobody` removed root's resumable state).
    if let Ok(entries) = fs::read_dir(dir) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !(ours(&name) || name == PARTIAL) {
                continue;
            }
            if let Ok(m) = entry.path().symlink_metadata()
                && let Some((owner, me)) = ntk_files::io::not_ours(&m)
            {
                return Found::Foreign(format!(
                    "{name} is a file of user {owner}, not this user's ({me}): another \
                     user's phase files, theirs to resume or remove"
                ));
            }
        }
    }
    let state = dir.join(STATE);
    let text = match read_regular(&state, 1 << 20) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // No state: the directory is free only while it holds nothing but a dead
            // writer's temporary copy of a state (no evidence either way, never read). Tiles
            // no probe leaves without a phases.json (it is written first); any other file
            // makes it someone else's directory, an output set named `.<out>.phases`
            // included (eighty-fourth hostile round, D6: phase files were written into one).
            let mut names: Vec<String> = match fs::read_dir(dir) {
                Ok(entries) => entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| !is_tmp_of(n, STATE))
                    .collect(),
                Err(e) => return Found::Foreign(format!("cannot be listed ({e})")),
            };
            names.sort();
            if let Some(name) = names
                .iter()
                .find(|n| *n == TILES || *n == PARTIAL || is_tmp_of(n, TILES))
            {
                return Found::Foreign(format!(
                    "holds {name} but no phases.json: not a probe's phase files"
                ));
            }
            if names.is_empty() {
                return Found::Free;
            }
            let more = match names.len().saturating_sub(3) {
                0 => String::new(),
                k => format!(" and {k} more"),
            };
            return Found::Foreign(format!(
                "holds {}{more}, and no phases.json: not a probe's phase files",
                names[..names.len().min(3)].join(", ")
            ));
        }
        Err(e) => return Found::Foreign(format!("{STATE} cannot be read ({e})")),
    };
    let state: State = match serde_json::from_slice(&text) {
        Ok(s) => s,
        Err(e) => {
            return Found::Foreign(format!(
                "{STATE} is not a probe's phase state of this version ({e})"
            ));
        }
    };
    if state.owner != OWNER {
        return Found::Foreign(format!(
            "{STATE} does not name this tool's phase files (owner {:?})",
            state.owner
        ));
    }
    if state.checksum.as_deref() != Some(state.own_checksum().as_str()) {
        return Found::Foreign(format!(
            "{STATE} was altered after it was written (its checksum does not match)"
        ));
    }
    // The run writes its tiles as a regular file and never makes a link: anything else at
    // their name is not its own to read, replace or remove (seventy-third hostile round, D4:
    // a symbolic link there was removed).
    match fs::symlink_metadata(dir.join(TILES)) {
        Ok(m) if m.file_type().is_symlink() => {
            return Found::Foreign(format!("{TILES} is a symbolic link, never followed here"));
        }
        Ok(m) if !m.is_file() => {
            return Found::Foreign(format!("{TILES} is not a regular file"));
        }
        _ => {}
    }
    Found::Ours(Box::new(state))
}

/// Whether `name` is one of the files this module writes in a phase directory: its state,
/// its tiles, and their temporary copies (`<name>.ntk-tmp-PID`, a name no user gives).
fn ours(name: &str) -> bool {
    name == STATE || name == TILES || is_tmp_of(name, STATE) || is_tmp_of(name, TILES)
}

/// Whether `name` is a temporary copy of `file` (`<file>.ntk-tmp-PID`).
fn is_tmp_of(name: &str, file: &str) -> bool {
    name.strip_prefix(file)
        .is_some_and(|rest| rest.starts_with(ntk_files::outset::TMP_TAG))
}

/// A run's phase files (see the module doc).
pub struct PhaseFiles {
    dir: PathBuf,
    state: State,
    /// A resumed run's files that can be read but not written (a directory it may not
    /// write): their finished phases are used, nothing is written or removed there.
    read_only: bool,
}

impl PhaseFiles {
    /// The phase files of the run `place` names over `n` inputs in tiles of `block`, whose
    /// tiles take `bytes`; `None` when none are kept (`NTK_PHASE_FILES=0`, a place that is
    /// not a probe's, or a disk that cannot hold them: said on stderr). Earlier files are
    /// used only when `place` resumes and they are this run's (its fingerprint, `n` and
    /// `block`); otherwise a probe's are removed and anything else left as it is. An error
    /// only for `NTK_PHASE_FILES` itself, and with `NTK_PHASE_FILES=1` when no phase files
    /// can be kept.
    pub fn open(
        place: &Place,
        (n, block): (usize, usize),
        bytes: u64,
    ) -> crate::Result<Option<Self>> {
        let mode = Mode::from_env()?;
        let dir = place.dir.clone();
        let fresh = State {
            owner: OWNER.into(),
            fingerprint: place.fingerprint.clone(),
            config: place.config.clone(),
            n,
            block,
            ..State::default()
        };
        let not_kept = |why: String| -> crate::Result<Option<Self>> {
            if mode == Mode::Required {
                return Err(cannot_keep(&dir, &why));
            }
            eprintln!("{}", goes_on_without(&dir, &why));
            Ok(None)
        };
        let found = inspect(&dir);
        if mode == Mode::Off {
            if let Found::Ours(_) = found {
                eprintln!("{}", off_note(&dir));
            }
            return Ok(None);
        }
        let resumed =
            matches!(&found, Found::Ours(s) if place.resume && place.is_this_run(s, (n, block)));
        let state = match found {
            Found::Foreign(why) => {
                return not_kept(format!("{why}; left as it is"));
            }
            // Written again at once, with this build's fingerprint.
            Found::Ours(s) if resumed => State {
                fingerprint: place.fingerprint.clone(),
                config: place.config.clone().or(s.config.clone()),
                ..*s
            },
            Found::Ours(s) => {
                // Said, as its dry run says it ([`replaced`]); what cannot be removed makes
                // the state's write below fail, said there.
                if let Some(note) = replaced_note(place, &s, (n, block)) {
                    eprintln!("{note}");
                } else {
                    // This run's own, not resumed: said, as its dry run says it (eighty-sixth
                    // hostile round, D3: removed without a word).
                    let what = PhaseFiles {
                        dir: dir.clone(),
                        state: (*s).clone(),
                        read_only: false,
                    }
                    .describe();
                    eprintln!(
                        "note: {what}: not used by a run without --resume, which starts afresh \
                         and removes them"
                    );
                }
                let _ = remove_ours(&dir);
                fresh
            }
            Found::Free => fresh,
        };
        if state.tiles.is_none()
            && let Some(why) = no_room(&dir, bytes)
        {
            if mode == Mode::Required {
                return Err(no_room_refusal(&dir, &why));
            }
            eprintln!("{}", no_room_note(&dir, &why));
            return Ok(None);
        }
        let made_here = fs::symlink_metadata(&dir).is_err();
        let mut files = Self {
            dir: dir.clone(),
            state,
            read_only: false,
        };
        if let Err(e) = files.save_state() {
            // A directory this call made and could not fill is not left behind empty
            // (eighty-fourth hostile round, N2); `remove_dir` removes only an empty one.
            if made_here {
                let _ = fs::remove_dir(&dir);
            }
            let why = match e {
                Error::CannotWrite { action, source, .. } => format!("cannot {action}: {source}"),
                e => e.to_string(),
            };
            // This run's finished phases that cannot be written again (a directory it may
            // read, not write): used as they are, as its dry run said (eighty-second
            // hostile round, D1: the kernel was formed and factored again).
            if resumed && mode != Mode::Required {
                eprintln!(
                    "warning: {}: {why}; its finished phases are used as they are, and no \
                     later phase is kept there",
                    dir.display()
                );
                files.read_only = true;
                return Ok(Some(files));
            }
            return not_kept(why);
        }
        Ok(Some(files))
    }

    /// What the tiles file holds, when there is one.
    pub fn held(&self) -> Option<Held> {
        self.state.tiles
    }

    /// The formation's results, once the kernel was formed.
    pub fn formed(&self) -> Option<Formed> {
        self.state.formed
    }

    /// What is kept, in words, for the run's log.
    pub fn describe(&self) -> String {
        let what = match (self.state.tiles, self.state.top.is_some()) {
            (Some(Held::Factor { shift }), _) => {
                format!("the kernel's Cholesky factor (shift {shift:e}) and lambda_max")
            }
            (Some(Held::Kernel), true) => "the kernel's tiles and lambda_max".into(),
            (Some(Held::Kernel), false) => "the kernel's tiles".into(),
            (None, true) => "lambda_max (the kernel is formed again)".into(),
            // Hundred-and-thirty-third hostile round, second review, N3: "nothing yet" was
            // said of a state beside a 12 MB tile file cut off as it was written.
            (None, false) if self.state.formed.is_some() => {
                "a record of the kernel's formation, its tiles unfinished (formed again)".into()
            }
            (None, false) => "a record of no finished phase".into(),
        };
        format!("phase files in {}: {what}", self.dir.display())
    }

    /// Reads the tiles file into `tiles` (allocated for the same `n` and tile width) when it
    /// is the one `phases.json` records (its size and SHA-256); `false` when it is not (or
    /// there is none): then what was kept is said on stderr and dropped, the state starts
    /// again, and the caller forms the kernel anew (the tiles hold no kernel).
    pub fn load(&mut self, tiles: &mut Tiled) -> bool {
        let Some(held) = self.state.tiles else {
            return false;
        };
        let path = self.dir.join(TILES);
        let read = (|| -> Result<(), String> {
            let expected = self
                .state
                .tiles_sha256
                .clone()
                .ok_or("phases.json records no checksum of it")?;
            let (file, len) = open_regular(&path).map_err(|e| e.to_string())?;
            if len != tiles.bytes() as u64 {
                return Err(wrong_size(len, tiles.bytes() as u64));
            }
            let mut r = Hashing::new(BufReader::with_capacity(1 << 22, file));
            tiles
                .read_tiles(&mut r, matches!(held, Held::Factor { .. }))
                .map_err(|e| e.to_string())?;
            if r.hash.hex() != expected {
                return Err(ALTERED.into());
            }
            Ok(())
        })();
        match read {
            Ok(()) => true,
            Err(why) => {
                eprintln!("{}", tiles_dropped(&path, &why, self.state.top.is_some()));
                if !self.read_only {
                    let _ = fs::remove_file(&path);
                }
                self.state = self.state.without_tiles();
                self.save_or_drop();
                false
            }
        }
    }

    /// Records the kernel's formation and keeps its tiles.
    pub fn save_kernel(&mut self, tiles: &Tiled, formed: Formed) {
        self.state.formed = Some(formed);
        self.keep_tiles(tiles, Held::Kernel);
    }

    /// Writes `tiles` as `held` (the previous tiles file removed first), then the state that
    /// says so; a failure is said and the phase files dropped.
    fn keep_tiles(&mut self, tiles: &Tiled, held: Held) {
        if self.read_only {
            // What the tiles hold now, for this process; nothing is written.
            self.state.tiles = Some(held);
            return;
        }
        self.state.tiles = None;
        self.state.tiles_sha256 = None;
        let path = self.dir.join(TILES);
        let written = self.save_state().map_err(|e| e.to_string()).and_then(|()| {
            let _ = fs::remove_file(&path);
            write_tiles(&self.dir, tiles).map_err(|e| format!("{}: {e}", path.display()))
        });
        match written {
            Ok(sha) => {
                self.state.tiles = Some(held);
                self.state.tiles_sha256 = Some(sha);
                self.save_or_drop();
            }
            Err(e) => self.drop_files(&e),
        }
    }

    fn save_state(&mut self) -> crate::Result<()> {
        if self.read_only {
            return Ok(());
        }
        self.state.checksum = None;
        self.state.checksum = Some(self.state.own_checksum());
        let json = serde_json::to_vec_pretty(&self.state).expect("the state serializes");
        let dir = &self.dir;
        match fs::create_dir(dir) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                return Err(self.error("create the directory", e));
            }
            _ => {}
        }
        // Created by this run or inspected before: still a directory, not a link to one.
        if !fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
            return Err(self.error(
                "write phases.json",
                std::io::Error::other("the phase directory was replaced by something else"),
            ));
        }
        write_new(dir, STATE, &json).map_err(|e| self.error("write phases.json", e))
    }

    /// [`Self::save_state`], or the phase files dropped when it fails.
    fn save_or_drop(&mut self) {
        if let Err(e) = self.save_state() {
            self.drop_files(&e.to_string());
        }
    }

    /// Removes this run's phase files because the route refused its kernel (`error`: a
    /// lambda_max past f64's range, an inverse that overflows at every shift, non-finite
    /// entries): a `--resume` from them would only refuse it again, and left there they
    /// would stand as another run's state in the way of the remedy's run (hundredth hostile
    /// round, D1: a refusal left them, with a `phases.json` holding `null`). Said when they
    /// cannot be removed.
    pub fn refused(self, error: &ntk_kernel::Error) {
        if self.read_only || !matches!(inspect(&self.dir), Found::Ours(_)) {
            return;
        }
        if let Err(left) = remove_ours(&self.dir) {
            eprintln!(
                "warning: {}: the phase files of a kernel the run refused ({error}) were not \
                 removed ({left}): remove them by hand",
                self.dir.display()
            );
        }
    }

    fn drop_files(&mut self, why: &str) {
        eprintln!("warning: phase files dropped ({why}); the run goes on without them");
        // Only what is still provably the probe's (its state is written before any tiles),
        // and never files this run may only read.
        if !self.read_only
            && let Found::Ours(_) = inspect(&self.dir)
            && let Err(left) = remove_ours(&self.dir)
        {
            eprintln!(
                "warning: {}: the dropped phase files were not removed ({left}): remove them \
                 by hand",
                self.dir.display()
            );
        }
        self.state = self.state.restart();
    }

    fn error(&self, action: &'static str, source: std::io::Error) -> Error {
        Error::CannotWrite {
            dir: self.dir.clone(),
            action,
            source,
        }
    }
}

/// [`super::extreme::solve`]'s operand on the tiles, keeping each phase's result in the phase
/// files and answering from them what an earlier run finished: `max |K|` and the Lanczos run
/// on `K` from the state, a factorization that broke down from its record, and the factor
/// from the tiles file when it held.
pub struct Resumable<'t, 'a> {
    pub tiles: &'t mut Tiled<'a>,
    pub files: Option<&'t mut PhaseFiles>,
}

impl Operand for Resumable<'_, '_> {
    fn size(&self) -> usize {
        self.tiles.size()
    }

    fn epsilon(&self) -> f64 {
        self.tiles.epsilon()
    }

    fn max_abs(&mut self) -> ntk_kernel::Result<f64> {
        if let Some(m) = self.files.as_ref().and_then(|f| f.state.max_abs) {
            return Ok(m);
        }
        let m = self.tiles.max_abs()?;
        if let Some(f) = self.files.as_deref_mut() {
            f.state.max_abs = Some(m);
            f.save_or_drop();
        }
        Ok(m)
    }

    fn largest(
        &mut self,
        max_steps: usize,
        seed: u64,
        tolerance: &dyn Fn(f64) -> f64,
    ) -> ntk_kernel::Result<lanczos::Ritz> {
        if let Some(top) = self.files.as_ref().and_then(|f| f.state.top.clone()) {
            return Ok(top);
        }
        let top = self.tiles.largest(max_steps, seed, tolerance)?;
        // A Ritz run that overflowed is refused by the caller, never kept: JSON has no
        // infinity, and a `null` made the state unreadable (hundredth hostile round, D1).
        let finite = top.theta.is_finite() && top.values.iter().all(|v| v.is_finite());
        if finite && let Some(f) = self.files.as_deref_mut() {
            f.state.top = Some(top.clone());
            f.save_or_drop();
        }
        Ok(top)
    }

    fn factor(&mut self, shift: f64) -> ntk_kernel::Result<Result<(), cholesky::Breakdown>> {
        if let Some(f) = self.files.as_deref() {
            if let Some(&(_, row)) = f.state.broke_down.iter().find(|(s, _)| *s == shift) {
                return Ok(Err(cholesky::Breakdown { row }));
            }
            if f.state.tiles == Some(Held::Factor { shift }) && self.tiles.holds_factor() {
                return Ok(Ok(()));
            }
        }
        let r = self.tiles.factor(shift)?;
        if let Some(f) = self.files.as_deref_mut() {
            match &r {
                Ok(()) => f.keep_tiles(self.tiles, Held::Factor { shift }),
                Err(b) => {
                    f.state.broke_down.push((shift, b.row));
                    f.save_or_drop();
                }
            }
        }
        Ok(r)
    }

    fn inverse_largest(
        &mut self,
        max_steps: usize,
        seed: u64,
        tolerance: &dyn Fn(f64) -> f64,
    ) -> ntk_kernel::Result<lanczos::Ritz> {
        self.tiles.inverse_largest(max_steps, seed, tolerance)
    }
}

/// Removes the phase files this module writes (`phases.json`, `tiles.f64`, their partial and
/// temporary copies), then the directory when that leaves it empty: anything else a user
/// keeps there, under the same hidden name, stays. Called only on a directory
/// [`inspect`] found to be a probe's. An error, naming the first file and why, where one of
/// them is still there (a directory the run may not write: eighty-second hostile round, D2,
/// where "removed" was said of files that stayed).
fn remove_ours(dir: &Path) -> Result<(), String> {
    let mut left = None;
    if let Ok(entries) = fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_name().to_str().is_some_and(ours)
                && let Err(e) = fs::remove_file(entry.path())
                && e.kind() != std::io::ErrorKind::NotFound
            {
                left.get_or_insert_with(|| format!("{}: {e}", entry.path().display()));
            }
        }
    }
    // Not empty where a user's file stays: the directory stays with it.
    let _ = fs::remove_dir(dir);
    left.map_or(Ok(()), Err)
}

/// [`remove_ours`], and what it did in words: "removed", or what stayed and why.
fn remove_said(dir: &Path) -> String {
    match remove_ours(dir) {
        Ok(()) => "removed".to_string(),
        Err(why) => format!("not removed ({why}): remove them by hand"),
    }
}

/// Opens `path` for reading when it is a regular file (never through a symbolic link, and a
/// FIFO is not waited on), with its length.
fn open_regular(path: &Path) -> std::io::Result<(fs::File, u64)> {
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| {
            // O_NOFOLLOW's refusal reads "too many levels of symbolic links": say what it is.
            if e.raw_os_error() == Some(libc::ELOOP) {
                std::io::Error::other("a symbolic link, never followed here")
            } else {
                e
            }
        })?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    Ok((file, meta.len()))
}

/// The bytes of the regular file `path` ([`open_regular`]), at most `limit` of them.
fn read_regular(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    let (file, len) = open_regular(path)?;
    if len > limit {
        return Err(std::io::Error::other(format!(
            "{len} bytes, more than a phase state takes"
        )));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(limit).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Writes `bytes` to `dir/name` through a new temporary file beside it, synced, renamed
/// over it: a symbolic link at either name is replaced, never followed.
fn write_new(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = dir.join(format!(
        "{name}{}{}",
        ntk_files::outset::TMP_TAG,
        std::process::id()
    ));
    let _ = fs::remove_file(&tmp);
    let result = (|| {
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&tmp, dir.join(name))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// The tiles into `dir/tiles.f64` through a new temporary file of this process
/// (`tiles.f64.ntk-tmp-PID`), synced, renamed over it; their SHA-256.
fn write_tiles(dir: &Path, tiles: &Tiled) -> std::io::Result<String> {
    let tmp = dir.join(format!(
        "{TILES}{}{}",
        ntk_files::outset::TMP_TAG,
        std::process::id()
    ));
    let _ = fs::remove_file(&tmp);
    let file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)?;
    let mut w = Hashing::new(BufWriter::with_capacity(1 << 22, file));
    tiles.write_tiles(&mut w)?;
    let Hashing { inner, hash } = w;
    let file = inner.into_inner().map_err(|e| e.into_error())?;
    file.sync_all()?;
    fs::rename(&tmp, dir.join(TILES))?;
    Ok(hash.hex())
}

/// A reader or writer that hashes the bytes passing through it.
struct Hashing<T> {
    inner: T,
    hash: Sha256Stream,
}

impl<T> Hashing<T> {
    fn new(inner: T) -> Self {
        Self {
            inner,
            hash: Sha256Stream::default(),
        }
    }
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let got = self.inner.read(buf)?;
        self.hash.update(&buf[..got]);
        Ok(got)
    }
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let put = self.inner.write(buf)?;
        self.hash.update(&buf[..put]);
        Ok(put)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Bytes free to this user on the file system holding `dir` (`None` when it cannot be told).
fn free_bytes(dir: &Path) -> Option<u64> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        // The nearest directory there is; a relative path's last ancestor is the empty
        // path, which is the working directory (eighty-first hostile round, D3: `--out o`
        // puts the phase files at `.o.phases`, whose parent is the empty path, so the disk
        // was never asked, `NTK_PHASE_FILES=1` did not refuse and the tiles filled it).
        let existing = dir
            .ancestors()
            .map(|d| match d.as_os_str().is_empty() {
                true => Path::new("."),
                false => d,
            })
            .find(|d| d.exists())?;
        let c = std::ffi::CString::new(existing.as_os_str().as_bytes()).ok()?;
        // SAFETY: `libc::statvfs` is a plain C struct of integer fields (and an integer
        // spare array): all-zero bytes are a valid value.
        let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
        // SAFETY: a NUL-terminated path and a statvfs buffer to fill.
        if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
            return None;
        }
        Some(s.f_bavail as u64 * s.f_frsize as u64)
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a state holds is said as it is: a formation whose tiles were cut off as they
    /// were written is no "nothing yet" (hundred-and-thirty-third hostile round, second
    /// review, N3).
    #[test]
    fn a_state_is_described_as_what_it_holds() {
        let said = |state: State| {
            PhaseFiles {
                dir: PathBuf::from("o/.run.phases"),
                state,
                read_only: false,
            }
            .describe()
        };
        let formed = State {
            formed: Some(Formed {
                min_angle: None,
                seconds: 1.0,
            }),
            ..State::default()
        };
        assert_eq!(
            said(formed.clone()),
            "phase files in o/.run.phases: a record of the kernel's formation, its tiles \
             unfinished (formed again)"
        );
        assert!(said(State::default()).ends_with(": a record of no finished phase"));
        let tiles = State {
            tiles: Some(Held::Kernel),
            ..formed
        };
        assert!(said(tiles).ends_with(": the kernel's tiles"));
    }
}
