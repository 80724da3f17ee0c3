//! One writer per directory: advisory `flock` locks that the kernel releases when their
//! process ends, so a crashed or killed writer never leaves a directory stuck.
//!
//! - [`DirLock`]: one run directory (a training run, a sweep point), one writer. The lock
//!   file `DIR/.ntk-lock` records who holds it (process id and command line), which the
//!   error of a second writer names.
//! - [`SweepClaim`]: a sweep directory shared by the shards of one config (a job array
//!   writes into one directory), refused to a writer of another config while any writer
//!   of the first is alive. Each config holds a shared lock on
//!   `OUT/.ntk-writers/<fingerprint>.lock`; a writer registers under the exclusive lock of
//!   `OUT/.ntk-writers/guard`, after checking that every other config's file is free.
//!
//! The lock files stay behind after their writers (removing a lock file while another
//! process opens it would let two writers lock two different files); they are hidden and
//! named `.ntk-*`, so no user's file is mistaken for one.

use std::fs::{self, File, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// The lock file of a run directory.
pub const LOCK_FILE: &str = ".ntk-lock";
/// The directory of a sweep's writers' registrations.
pub const WRITERS_DIR: &str = ".ntk-writers";
const GUARD: &str = "guard";

/// This process, as a lock's holder: `pid 123: ntk-train --config a.toml --out x`.
fn whoami() -> String {
    let args: Vec<String> = std::env::args().collect();
    format!("pid {}: {}", std::process::id(), args.join(" "))
}

fn open_rw(path: &Path) -> crate::Result<File> {
    File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|source| crate::Error::Write {
            path: path.to_path_buf(),
            source,
        })
}

/// Whether `path` is a writer's registration as [`SweepClaim::acquire`] writes one: a
/// regular file of one link named `<config fingerprint, hex>.lock`, empty or naming its
/// first writer.
fn is_registration(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let named = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".lock"))
        .is_some_and(|stem| !stem.is_empty() && stem.bytes().all(|b| b.is_ascii_hexdigit()));
    named
        && fs::symlink_metadata(path)
            .is_ok_and(|m| m.is_file() && m.nlink() == 1 && m.len() < 64 * 1024)
        && fs::read(path).is_ok_and(|b| {
            b.is_empty() || String::from_utf8_lossy(&b).contains(", first writer pid ")
        })
}

/// Whether `path` is a lock file as these tools write one ([`record_holder`]): a regular
/// file of one name, empty or naming its holder (`pid N: command`). A run's lock, a set's
/// lock beside it and a joining run's point claim ([`PointClaim`]) alike.
fn is_lock_file(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    fs::symlink_metadata(path).is_ok_and(|m| m.is_file() && m.nlink() == 1 && m.len() < 64 * 1024)
        && fs::read(path).is_ok_and(|b| b.is_empty() || b.starts_with(b"pid "))
}

/// Refuses a lock file's place `path` that holds what no writer of these tools left: a lock
/// file of theirs is a regular file, empty or naming its holder (`pid N: command`), with no
/// other name (a hard link to it would be a user's file written through); anything else is
/// the user's and is neither written over nor removed. `advice` ends the message.
fn check_lock_file(path: &Path, advice: &str) -> crate::Result<()> {
    if fs::symlink_metadata(path).is_err() {
        return Ok(());
    }
    if is_lock_file(path) {
        // Another user's lock file, left by a writer gone or held by one running, which this
        // user cannot open to take over (ninetieth hostile round, D4: the run was refused as
        // though the directory could not be written, its dry run said `new`).
        return match File::options().read(true).write(true).open(path) {
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                let said = fs::read_to_string(path).unwrap_or_default();
                let holder = said.trim();
                Err(crate::Error::OutputPath {
                    path: path.to_path_buf(),
                    why: format!(
                        "a lock file this user cannot take over (another user's, or one its \
                         filesystem keeps from change; {}): its owner removes it once that \
                         writer has ended{advice}",
                        match holder.is_empty() {
                            true => "it names no writer".to_string(),
                            false => format!(
                                "its writer: {}",
                                holder.chars().take(200).collect::<String>()
                            ),
                        }
                    ),
                })
            }
            _ => Ok(()),
        };
    }
    Err(crate::Error::OutputPath {
        path: path.to_path_buf(),
        why: format!(
            "is not a lock file of these tools (a regular file of one name, which they write \
             `pid N: command` into), where the run keeps its lock; move it{advice}"
        ),
    })
}

fn lock_error(path: &Path, source: std::io::Error) -> crate::Error {
    crate::Error::Write {
        path: path.to_path_buf(),
        source,
    }
}

/// What a lock file says of its holder (empty when it says nothing).
fn read_holder(file: &mut File) -> String {
    let mut text = String::new();
    let _ = file.rewind().and_then(|()| file.read_to_string(&mut text));
    let text = text.trim();
    if text.is_empty() {
        "a process that did not say who it is".into()
    } else {
        text.chars().take(500).collect()
    }
}

/// Who holds the lock file at `path`, when a live process holds it; nothing is changed.
fn held_by(path: &Path) -> Option<String> {
    let mut file = File::options().read(true).write(true).open(path).ok()?;
    // Another process asking the same holds the lock exclusively for a moment (this very
    // probe): a writer holds it for its whole run, so a lock still held after a few short
    // waits is a writer's (two single runs joining a sweep at once each took the other's
    // probe of the sweep's dead registration for a live writer).
    for wait in [0, 5, 20, 50] {
        std::thread::sleep(std::time::Duration::from_millis(wait));
        match file.try_lock() {
            Err(TryLockError::WouldBlock) => continue,
            _ => return None,
        }
    }
    Some(read_holder(&mut file))
}

/// The registrations in a sweep's writers' directory `dir` of configs other than
/// `fingerprint`, as these tools write them; anything else there is the user's, neither taken
/// for a writer nor removed (forty-first hostile round, D2: a user's `*.lock` there was
/// removed as a dead writer's).
fn other_registrations(dir: &Path, fingerprint: &str) -> std::io::Result<Vec<PathBuf>> {
    let mine = format!("{fingerprint}.lock");
    Ok(fs::read_dir(dir)?
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy() != mine.as_str())
        .map(|entry| entry.path())
        .filter(|path| is_registration(path))
        .collect())
}

/// The lock file `.<name>.ntk-lock` beside the output `dir` ([`DirLock::acquire_beside`]).
fn beside_path(dir: &Path) -> PathBuf {
    let name = dir.file_name().unwrap_or_default().to_string_lossy();
    dir.with_file_name(format!(".{name}.ntk-lock"))
}

/// Writes who holds the lock at `path` into its open `file`, for the refusals of other
/// writers to name. The lock holds without it; a write that fails (a full disk) is said
/// (ninety-third hostile round, N5: it passed without a word, and the refusals named no one).
fn record_holder(file: &mut File, path: &Path, who: &str) {
    let written = file
        .set_len(0)
        .and_then(|()| file.rewind())
        .and_then(|()| file.write_all(format!("{who}\n").as_bytes()))
        .and_then(|()| file.flush());
    if let Err(e) = written {
        eprintln!(
            "warning: {}: the lock is held, but its holder could not be written into it ({e}): \
             a writer it refuses is not told who holds it",
            path.display()
        );
    }
}

/// The exclusive claim of one writer on a directory, held until dropped (or the process
/// ends).
#[derive(Debug)]
pub struct DirLock {
    _file: File,
    /// The lock file to remove on release ([`DirLock::acquire_beside`]).
    remove: Option<PathBuf>,
}

impl Drop for DirLock {
    fn drop(&mut self) {
        // Unlinked while still held: a process that opened it meanwhile finds, after
        // locking, that the path no longer names its file and tries again.
        // One this user may write but not unlink (another's, in a sticky directory) is left,
        // said (round 91, N2): it names this process, gone once it ends, so the next run takes
        // it over.
        if let Some(path) = self.remove.take() {
            match fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => eprintln!(
                    "note: {}: the lock is left ({e}); it names this process, which has ended \
                     by the time another run reads it, so that run takes it over",
                    path.display()
                ),
                _ => {}
            }
        }
    }
}

/// True when `path` still names the open `file` (not removed or replaced meanwhile).
/// The exclusive lock of the file `name` in `dir`, `dir` made first; taken again when a
/// writer withdrawing its claim removed the directory or the file meanwhile
/// ([`SweepClaim::withdraw`]): a lock on a file no longer named there guards nothing. The
/// sweep's writers' guard and the join guard of runs brought into a sweep
/// ([`PointClaim::guard`]) both.
fn exclusive(dir: &Path, name: &str) -> crate::Result<File> {
    loop {
        fs::create_dir_all(dir).map_err(|source| crate::Error::CreateDir {
            dir: dir.to_path_buf(),
            source,
        })?;
        let path = dir.join(name);
        let file = open_rw(&path)?;
        file.lock().map_err(|e| lock_error(&path, e))?;
        if still_named(&path, &file) {
            return Ok(file);
        }
    }
}

fn still_named(path: &Path, file: &File) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (fs::metadata(path), file.metadata()) {
        (Ok(a), Ok(b)) => a.ino() == b.ino() && a.dev() == b.dev(),
        _ => false,
    }
}

impl DirLock {
    /// Locks `dir` (which must exist) for this process, or fails with
    /// [`crate::Error::Locked`] naming the live holder.
    pub fn acquire(dir: &Path) -> crate::Result<Self> {
        Self::check_place(dir)?;
        Self::acquire_at(&dir.join(LOCK_FILE), dir)
    }

    /// Refuses a `dir` whose lock file's place holds what is not a lock file of these tools
    /// ([`check_lock_file`]), before any work and in a dry run alike (thirty-ninth hostile
    /// round, D3 and N3: a directory there; fortieth, D2: a user's file there was written
    /// over, through a hard link too).
    pub fn check_place(dir: &Path) -> crate::Result<()> {
        check_lock_file(&dir.join(LOCK_FILE), "")
    }

    /// [`DirLock::check_place`] for the lock beside `dir` ([`DirLock::acquire_beside`]: a
    /// probe's output set), for the dry run as for the run (fortieth hostile round, D1).
    pub fn check_place_beside(dir: &Path) -> crate::Result<()> {
        if dir.file_name().is_none() {
            return Ok(());
        }
        check_lock_file(&beside_path(dir), ", or choose another --out")
    }

    /// Locks `dir` (an output that is replaced whole, so its lock cannot live inside it)
    /// through the lock file `.<name>.ntk-lock` beside it, removed again on release.
    pub fn acquire_beside(dir: &Path) -> crate::Result<Self> {
        let name = dir.file_name().unwrap_or_default().to_string_lossy();
        let path = beside_path(dir);
        Self::check_place_beside(dir)?;
        // Its lock cannot be made where the output goes: the output cannot be either. Said of
        // the output, not of a lock file the user never named (seventh hostile round:
        // `--out /sys/x` read "/sys/.x.ntk-lock: Permission denied").
        let mut lock = Self::acquire_at(&path, dir).map_err(|e| match e {
            crate::Error::Write { source, .. } => crate::Error::OutputPath {
                path: dir.to_path_buf(),
                why: format!(
                    "cannot write in its parent directory, where the output is made and its \
                     lock .{name}.ntk-lock kept: {source}"
                ),
            },
            other => other,
        })?;
        lock.remove = Some(path);
        Ok(lock)
    }

    fn acquire_at(path: &Path, dir: &Path) -> crate::Result<Self> {
        loop {
            let mut file = open_rw(path)?;
            match file.try_lock() {
                Ok(()) if still_named(path, &file) => {
                    record_holder(&mut file, path, &whoami());
                    return Ok(Self {
                        _file: file,
                        remove: None,
                    });
                }
                // Its holder removed it as we opened it: open the path anew.
                Ok(()) => continue,
                Err(TryLockError::WouldBlock) => {
                    return Err(crate::Error::Locked {
                        dir: dir.to_path_buf(),
                        holder: read_holder(&mut file),
                    });
                }
                Err(TryLockError::Error(e)) => return Err(lock_error(path, e)),
            }
        }
    }

    /// The live holder of the lock beside `dir` ([`DirLock::acquire_beside`]: a probe's
    /// output set being made for `dir` now), if any; nothing is changed.
    pub fn holder_beside(dir: &Path) -> Option<String> {
        dir.file_name()?;
        held_by(&beside_path(dir))
    }

    /// The live holder of `dir`'s lock, if any (a run being written now).
    pub fn holder(dir: &Path) -> Option<String> {
        held_by(&dir.join(LOCK_FILE))
    }
}

/// A run's claim on one point and seed of a collected sweep it is brought into
/// (`ntk-train run --out SWEEP/runs/NAME`): `SWEEP/.ntk-writers/point-KEY-PID.claim`, locked
/// for the life of the process. Two runs of one point and seed checked at the same moment
/// both passed the check of the runs present and both trained (twenty-third hostile round,
/// D5): the check and the claim are made under the sweep's join guard
/// ([`PointClaim::guard`]), so the second sees the first's live claim. The `.claim` files
/// are not writers' registrations (`*.lock`): a run of another point is not refused.
pub struct PointClaim;

impl PointClaim {
    /// The exclusive lock under which a joining run checks and claims its point
    /// (`SWEEP/.ntk-writers/join.guard`), released when dropped.
    pub fn guard(sweep: &Path) -> crate::Result<File> {
        exclusive(&sweep.join(WRITERS_DIR), "join.guard")
    }

    /// The holder of a live claim of the point `key` in `sweep`, if any; nothing is changed
    /// (a dry run's check).
    pub fn holder(sweep: &Path, key: &str) -> Option<String> {
        let prefix = format!("point-{key}-");
        let entries = fs::read_dir(sweep.join(WRITERS_DIR)).ok()?;
        entries.flatten().find_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let claim = name.starts_with(&prefix)
                && name.ends_with(".claim")
                && is_lock_file(&entry.path());
            claim.then(|| held_by(&entry.path())).flatten()
        })
    }

    /// The holder of a live claim of the point `key` in `sweep` (under [`PointClaim::guard`]);
    /// claims whose process has ended are removed.
    pub fn live(sweep: &Path, key: &str) -> Option<String> {
        let prefix = format!("point-{key}-");
        let entries = fs::read_dir(sweep.join(WRITERS_DIR)).ok()?;
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            // A claim as these tools write one; anything else at a claim's name is the
            // user's, neither taken for a live claim nor removed (forty-second hostile
            // round, D2: a user's text, a link or a FIFO there was removed, by a dry run too).
            let claim = name.starts_with(&prefix)
                && name.ends_with(".claim")
                && is_lock_file(&entry.path());
            if !claim {
                continue;
            }
            let Ok(mut f) = File::options().read(true).write(true).open(entry.path()) else {
                continue;
            };
            match f.try_lock() {
                Err(TryLockError::WouldBlock) => return Some(read_holder(&mut f)),
                Ok(()) => {
                    let _ = fs::remove_file(entry.path());
                }
                Err(TryLockError::Error(_)) => {}
            }
        }
        None
    }

    /// Claims the point `key` of `sweep` for this process until it exits (the lock's file
    /// is kept open on purpose: the operating system releases it with the process).
    pub fn claim(sweep: &Path, key: &str) -> crate::Result<()> {
        let path = sweep
            .join(WRITERS_DIR)
            .join(format!("point-{key}-{}.claim", std::process::id()));
        let mut file = open_rw(&path)?;
        file.lock().map_err(|e| lock_error(&path, e))?;
        record_holder(&mut file, &path, &whoami());
        std::mem::forget(file);
        Ok(())
    }
}

/// A writer's share of a sweep directory, held until dropped: writers of the same config
/// (`fingerprint`) share it, a writer of another config is refused while one of them
/// lives.
#[derive(Debug)]
pub struct SweepClaim {
    file: File,
    /// The sweep's output directory.
    out: PathBuf,
    /// Whether this claim made `out` and its `.ntk-writers` (each absent before it), which
    /// [`SweepClaim::withdraw`] removes again when nothing else is there.
    made: (bool, bool),
}

impl SweepClaim {
    /// Who is writing the sweep `out` now, when a live process holds one of its writers'
    /// registrations (`.ntk-writers/*.lock`); nothing is changed.
    pub fn live_writer(out: &Path) -> Option<String> {
        let entries = fs::read_dir(out.join(WRITERS_DIR)).ok()?;
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !name.ends_with(".lock") || name == GUARD {
                continue;
            }
            if let Some(holder) = held_by(&entry.path()) {
                return Some(holder);
            }
        }
        None
    }

    /// Refuses, as [`Self::acquire`] would, a sweep `out` that a live writer of a config
    /// other than `fingerprint` is filling; nothing is changed (a dead writer's
    /// registration is left for the claim to remove). For the dry runs (sixty-seventh
    /// hostile round, D2: they said `new` where the run was refused at once).
    pub fn check_no_other_writer(out: &Path, fingerprint: &str) -> crate::Result<()> {
        let Ok(others) = other_registrations(&out.join(WRITERS_DIR), fingerprint) else {
            return Ok(());
        };
        match others.iter().find_map(|path| held_by(path)) {
            Some(holder) => Err(crate::Error::OtherWriter {
                dir: out.to_path_buf(),
                holder,
            }),
            None => Ok(()),
        }
    }

    /// Registers this process as a writer of `out` for the config `fingerprint`, described
    /// by `what` (the config file) in the error another config's writer gets.
    pub fn acquire(out: &Path, fingerprint: &str, what: &str) -> crate::Result<Self> {
        Self::acquire_made(out, fingerprint, what, false)
    }

    /// Refuses a sweep's `out` that a probe's output set is being made for now (the live
    /// lock beside it): that set would replace the sweep at its end (round 23's D2: the
    /// sweep's every file lost, both commands exiting 0). The claim and the sweeps' dry runs
    /// both ask (twenty-fourth hostile round, D3: the dry runs passed such an `out`).
    pub fn check_no_set_being_made(out: &Path) -> crate::Result<()> {
        match DirLock::holder_beside(out) {
            Some(holder) => Err(crate::Error::Locked {
                dir: out.to_path_buf(),
                holder,
            }),
            None => Ok(()),
        }
    }

    /// [`SweepClaim::acquire`] for a sweep whose output directory `out` did not exist
    /// before this command made it (`made_out`): a claim withdrawn removes it again.
    pub fn acquire_made(
        out: &Path,
        fingerprint: &str,
        what: &str,
        made_out: bool,
    ) -> crate::Result<Self> {
        if let Err(e) = Self::check_no_set_being_made(out) {
            if made_out {
                // Made for this claim and empty: a refused command leaves no directory.
                let _ = fs::remove_dir(out);
            }
            return Err(e);
        }
        let dir = out.join(WRITERS_DIR);
        let made_dir = fs::symlink_metadata(&dir).is_err();
        Self::check_places(out, fingerprint)?;
        let guard = Self::guard(&dir)?;
        let mine = format!("{fingerprint}.lock");
        let others =
            other_registrations(&dir, fingerprint).map_err(|source| crate::Error::Read {
                path: dir.clone(),
                source,
            })?;
        for path in others {
            let Ok(mut other) = File::options().read(true).write(true).open(&path) else {
                continue;
            };
            match other.try_lock() {
                Err(TryLockError::WouldBlock) => {
                    return Err(crate::Error::OtherWriter {
                        dir: out.to_path_buf(),
                        holder: read_holder(&mut other),
                    });
                }
                // Its writers are gone: the registration goes with them.
                Ok(()) => {
                    let _ = fs::remove_file(&path);
                }
                Err(TryLockError::Error(_)) => {}
            }
        }
        let path = dir.join(&mine);
        let mut file = open_rw(&path)?;
        file.lock_shared().map_err(|e| lock_error(&path, e))?;
        let first = file.metadata().map(|m| m.len() == 0).unwrap_or(true);
        if first {
            record_holder(
                &mut file,
                &path,
                &format!("{what}, first writer {}", whoami()),
            );
        }
        drop(guard);
        Ok(Self {
            file,
            out: out.to_path_buf(),
            made: (made_out, made_dir),
        })
    }

    /// Refuses a sweep's `out` whose writers' directory (`.ntk-writers`) is not a directory,
    /// or whose guard files there are not regular files: before any work, in the dry runs
    /// of both tools as in their runs (forty-first hostile round, D1: the dry run passed a
    /// file at `.ntk-writers` and a directory at its `guard`, which the run refused, the
    /// latter with a bare `Is a directory`).
    ///
    /// This config's own registration (`<fingerprint>.lock`) must be one as the claim writes
    /// it ([`is_registration`]) or absent: the claim writes its line into it and removes it
    /// when the config's last writer is gone (forty-second hostile round, D1: a directory
    /// there passed the dry runs and failed the runs with a bare OS error; the claim wrote
    /// into a user's empty file through a link or a hard link).
    pub fn check_places(out: &Path, fingerprint: &str) -> crate::Result<()> {
        let dir = out.join(WRITERS_DIR);
        if fs::symlink_metadata(&dir).is_err() {
            return Ok(());
        }
        if !dir.is_dir() {
            return Err(crate::Error::OutputPath {
                path: dir,
                why: "not a directory, where the sweep's writers keep their locks; move it".into(),
            });
        }
        for name in [GUARD, "join.guard"] {
            let path = dir.join(name);
            if fs::symlink_metadata(&path).is_ok_and(|m| !m.is_file()) {
                return Err(crate::Error::OutputPath {
                    path,
                    why: "not a regular file, where the sweep's writers take turns; move it".into(),
                });
            }
        }
        let mine = dir.join(format!("{fingerprint}.lock"));
        if fs::symlink_metadata(&mine).is_ok() && !is_registration(&mine) {
            return Err(crate::Error::OutputPath {
                path: mine,
                why: "is not a writer's registration of these tools (a regular file of one \
                      name, empty or naming its first writer), where this config's writers \
                      register; move it"
                    .into(),
            });
        }
        Ok(())
    }

    /// The exclusive lock of `dir`'s guard ([`exclusive`]).
    fn guard(dir: &Path) -> crate::Result<File> {
        exclusive(dir, GUARD)
    }

    /// Ends a claim under which nothing was made (a sweep refused before any work): what
    /// the claim made, the `.ntk-writers` registrations, is removed again when no other
    /// writer holds one, and the output directory the claim made when it is empty then, so
    /// a refused command leaves nothing behind (eighth hostile round: a refused `ntk-train
    /// run` left an empty `--out` holding `.ntk-writers`; hundred-and-twenty-seventh, D1's
    /// residue: a sweep refused in a user's directory left `.ntk-writers` beside the user's
    /// files). Anything else, and whatever was there before, stays.
    pub fn withdraw(self) {
        let Self { file, out, made } = self;
        let dir = out.join(WRITERS_DIR);
        if !made.1 {
            return;
        }
        let Ok(guard) = Self::guard(&dir) else {
            return;
        };
        // Ours alone: no other writer shares this config's registration or holds another's.
        let _ = file.unlock();
        let Ok(entries) = fs::read_dir(&dir) else {
            return;
        };
        let mut files = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name == GUARD {
                continue;
            }
            if !name.ends_with(".lock") {
                return;
            }
            match File::options().read(true).write(true).open(entry.path()) {
                Ok(f) if f.try_lock().is_ok() => files.push(entry.path()),
                _ => return,
            }
        }
        for path in files {
            let _ = fs::remove_file(path);
        }
        // A writer waiting on the guard finds it unlinked once it locks it, and makes the
        // directory anew ([`SweepClaim::guard`]).
        let _ = fs::remove_file(dir.join(GUARD));
        let _ = fs::remove_dir(&dir);
        drop(guard);
        if made.0 {
            let _ = fs::remove_dir(&out);
        }
    }
}

/// The path of `dir`'s lock file.
pub fn lock_path(dir: &Path) -> PathBuf {
    dir.join(LOCK_FILE)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Round 91, N2: a lock this process cannot unlink at its end (its directory does not
    /// let it: another user's sticky directory, here `chattr +i`) is left with a note, not a
    /// panic, and the next lock of the directory takes it over.
    #[test]
    fn a_lock_that_cannot_be_unlinked_is_left_and_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let chattr = |flag: &str| {
            std::process::Command::new("chattr")
                .arg(flag)
                .arg(dir.path())
                .output()
                .is_ok_and(|o| o.status.success())
        };
        let lock = DirLock::acquire(dir.path()).unwrap();
        if !chattr("+i") {
            eprintln!("chattr +i is not available here: the case is not run");
            return;
        }
        drop(lock);
        let left = dir.path().join(LOCK_FILE).exists();
        assert!(chattr("-i"));
        assert!(left, "the lock is left where it cannot be unlinked");
        // A child another test of this process forks (here `chattr`, or any command) shares
        // the dropped lock's open file until its exec closes it: the lock is free a moment
        // later (a landing CI run met it held by this process once).
        let mut taken = DirLock::acquire(dir.path());
        for _ in 0..100 {
            if taken.is_ok() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
            taken = DirLock::acquire(dir.path());
        }
        drop(taken.unwrap());
    }

    /// Sixty-seventh hostile round, D2: the dry runs said `new` beside a live writer of
    /// another config, which the run refused at once. The check refuses as the claim does,
    /// passes this config's own writers, and changes nothing (a dead writer's registration
    /// is left).
    #[test]
    fn the_dry_runs_check_for_another_configs_writer() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path();
        let (a, b) = ("ab".repeat(32), "cd".repeat(32));
        assert!(SweepClaim::check_no_other_writer(out, &a).is_ok());
        let live = SweepClaim::acquire(out, &a, "config a.toml").unwrap();
        assert!(SweepClaim::check_no_other_writer(out, &a).is_ok());
        let e = SweepClaim::check_no_other_writer(out, &b)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("a sweep of another config is writing here"),
            "{e}"
        );
        assert!(e.contains("config a.toml"), "{e}");
        assert!(SweepClaim::acquire(out, &b, "config b.toml").is_err());
        drop(live);
        assert!(SweepClaim::check_no_other_writer(out, &b).is_ok());
        assert!(out.join(WRITERS_DIR).join(format!("{a}.lock")).exists());
    }

    /// Forty-first hostile round: a user's `*.lock` in a sweep's writers' directory is not
    /// a dead writer's registration (kept, where a dead config's own goes), and a file at
    /// `.ntk-writers` or a directory at its guard is refused before the claim.
    #[test]
    fn a_users_files_among_the_writers_are_kept_and_places_checked() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path();
        let dead = "ab".repeat(32);
        drop(SweepClaim::acquire(out, &dead, "config a.toml").unwrap());
        let writers = out.join(WRITERS_DIR);
        assert!(is_registration(&writers.join(format!("{dead}.lock"))));
        fs::write(writers.join("0000.lock"), "my notes").unwrap();
        fs::write(writers.join("notes.lock"), "my notes").unwrap();
        assert!(!is_registration(&writers.join("0000.lock")));
        let live = SweepClaim::acquire(out, &"cd".repeat(32), "config b.toml").unwrap();
        assert!(!writers.join(format!("{dead}.lock")).exists());
        for f in ["0000.lock", "notes.lock"] {
            assert_eq!(fs::read_to_string(writers.join(f)).unwrap(), "my notes");
        }
        drop(live);
        assert!(SweepClaim::check_places(out, &dead).is_ok());
        fs::remove_file(writers.join(GUARD)).unwrap();
        fs::create_dir(writers.join(GUARD)).unwrap();
        let e = SweepClaim::check_places(out, &dead)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("guard") && e.contains("not a regular file"),
            "{e}"
        );
        let other = tempfile::tempdir().unwrap();
        fs::write(other.path().join(WRITERS_DIR), "mine").unwrap();
        assert!(SweepClaim::check_places(other.path(), &dead).is_err());
        assert!(SweepClaim::acquire(other.path(), &dead, "c").is_err());
    }

    /// Forty-second hostile round, D1: this config's registration place holding a directory,
    /// a link or a hard link to a user's empty file, or the user's text, is refused before
    /// the claim, and the user's file is not written; D2: a user's file at a point claim's
    /// name is neither a live claim nor removed, and the read-only check changes nothing.
    #[test]
    fn a_users_file_at_a_registrations_or_claims_place_is_refused_or_kept() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let fp = "ef".repeat(32);
        let mine = d.join(WRITERS_DIR).join(format!("{fp}.lock"));
        fs::create_dir_all(&mine).unwrap();
        let e = SweepClaim::check_places(d, &fp).unwrap_err().to_string();
        assert!(e.contains("is not a writer's registration"), "{e}");
        assert!(SweepClaim::acquire(d, &fp, "config a.toml").is_err());
        fs::remove_dir(&mine).unwrap();
        fs::write(d.join("empty"), "").unwrap();
        std::os::unix::fs::symlink(d.join("empty"), &mine).unwrap();
        assert!(SweepClaim::acquire(d, &fp, "config a.toml").is_err());
        fs::remove_file(&mine).unwrap();
        fs::hard_link(d.join("empty"), &mine).unwrap();
        assert!(SweepClaim::acquire(d, &fp, "config a.toml").is_err());
        assert_eq!(fs::read_to_string(d.join("empty")).unwrap(), "");
        fs::remove_file(&mine).unwrap();
        fs::write(&mine, "my notes").unwrap();
        assert!(SweepClaim::acquire(d, &fp, "config a.toml").is_err());
        fs::remove_file(&mine).unwrap();
        drop(SweepClaim::acquire(d, &fp, "config a.toml").unwrap());
        // Point claims: the user's text, a link, a FIFO at a claim's name.
        let writers = d.join(WRITERS_DIR);
        fs::write(writers.join("point-k-99999.claim"), "my notes").unwrap();
        std::os::unix::fs::symlink(d.join("empty"), writers.join("point-k-99998.claim")).unwrap();
        fs::write(writers.join("point-k-99997.claim"), "").unwrap();
        assert!(PointClaim::holder(d, "k").is_none());
        assert!(writers.join("point-k-99997.claim").exists());
        assert!(PointClaim::live(d, "k").is_none());
        assert_eq!(
            fs::read_to_string(writers.join("point-k-99999.claim")).unwrap(),
            "my notes"
        );
        assert!(fs::symlink_metadata(writers.join("point-k-99998.claim")).is_ok());
        // A dead claim of the tools' goes.
        assert!(!writers.join("point-k-99997.claim").exists());
    }

    /// Fortieth hostile round, D1 and D2: a lock file's place holding a user's file (text,
    /// a hard link to a file elsewhere, a directory) is refused, in the directory and beside
    /// it, and the file is left as it was; an empty file or one naming its holder is a lock.
    #[test]
    fn a_users_file_at_a_lock_files_place_is_refused_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let run = d.join("run");
        fs::create_dir(&run).unwrap();
        assert!(DirLock::check_place(&run).is_ok());
        fs::write(run.join(LOCK_FILE), "my notes").unwrap();
        let e = DirLock::acquire(&run).err().unwrap().to_string();
        assert!(e.contains("not a lock file of these tools"), "{e}");
        assert_eq!(fs::read_to_string(run.join(LOCK_FILE)).unwrap(), "my notes");
        fs::remove_file(run.join(LOCK_FILE)).unwrap();
        fs::write(d.join("elsewhere"), "").unwrap();
        fs::hard_link(d.join("elsewhere"), run.join(LOCK_FILE)).unwrap();
        assert!(DirLock::acquire(&run).is_err());
        assert_eq!(fs::read_to_string(d.join("elsewhere")).unwrap(), "");
        fs::remove_file(run.join(LOCK_FILE)).unwrap();
        fs::write(run.join(LOCK_FILE), "pid 1: ntk-train run").unwrap();
        assert!(DirLock::acquire(&run).is_ok());
        let set = d.join("set");
        fs::create_dir(beside_path(&set)).unwrap();
        assert!(DirLock::check_place_beside(&set).is_err());
        assert!(DirLock::acquire_beside(&set).is_err());
        assert!(beside_path(&set).is_dir());
    }

    #[test]
    fn a_second_writer_is_refused_and_a_dropped_lock_frees_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        let first = DirLock::acquire(dir.path()).unwrap();
        let err = DirLock::acquire(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains(&format!("pid {}", std::process::id())),
            "{err}"
        );
        assert!(DirLock::holder(dir.path()).is_some());
        drop(first);
        assert!(DirLock::holder(dir.path()).is_none());
        DirLock::acquire(dir.path()).unwrap();
    }

    /// A user's file at the lock's name beside `--out` (the fourth hostile review's D10) is
    /// refused, not overwritten and then removed.
    /// An output whose parent cannot hold its lock is named, not the lock file (seventh
    /// hostile round: "/sys/.x.ntk-lock: Permission denied" for `--out /sys/x`).
    #[test]
    fn an_output_whose_parent_cannot_hold_its_lock_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("missing").join("out");
        let err = DirLock::acquire_beside(&out).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!(
                "{}: cannot write in its parent directory",
                out.display()
            )),
            "{err}"
        );
        assert!(err.contains(".out.ntk-lock"), "{err}");
    }

    #[test]
    fn a_users_file_at_the_lock_name_beside_an_output_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let mine = dir.path().join(".mine.ntk-lock");
        fs::write(&mine, "my notes\n").unwrap();
        let err = DirLock::acquire_beside(&dir.path().join("mine"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(".mine.ntk-lock") && err.contains("not a lock file"),
            "{err}"
        );
        assert_eq!(fs::read_to_string(&mine).unwrap(), "my notes\n");
        // A crashed writer's file (its holder named) is taken over and removed after.
        fs::write(&mine, "pid 1: ntk-probe ntk --out mine\n").unwrap();
        drop(DirLock::acquire_beside(&dir.path().join("mine")).unwrap());
        assert!(!mine.exists());
    }

    #[test]
    fn a_lock_beside_an_output_is_exclusive_and_gone_after_release() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let first = DirLock::acquire_beside(&out).unwrap();
        assert!(dir.path().join(".out.ntk-lock").exists());
        assert!(DirLock::acquire_beside(&out).is_err());
        drop(first);
        assert!(!dir.path().join(".out.ntk-lock").exists());
        DirLock::acquire_beside(&out).unwrap();
    }

    #[test]
    fn one_config_shares_a_sweep_and_another_is_refused_until_it_ends() {
        let dir = tempfile::tempdir().unwrap();
        let a1 = SweepClaim::acquire(dir.path(), "aaaa", "config a.toml").unwrap();
        let a2 = SweepClaim::acquire(dir.path(), "aaaa", "config a.toml").unwrap();
        let err = SweepClaim::acquire(dir.path(), "bbbb", "config b.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("config a.toml"), "{err}");
        drop(a1);
        assert!(SweepClaim::acquire(dir.path(), "bbbb", "config b.toml").is_err());
        drop(a2);
        let _b = SweepClaim::acquire(dir.path(), "bbbb", "config b.toml").unwrap();
        // The ended config's registration is gone; a's writers are refused now.
        assert!(!dir.path().join(WRITERS_DIR).join("aaaa.lock").exists());
        assert!(SweepClaim::acquire(dir.path(), "aaaa", "config a.toml").is_err());
    }

    #[test]
    fn a_withdrawn_claim_leaves_nothing_it_made_and_nothing_of_another() {
        let root = tempfile::tempdir().unwrap();
        // A new output directory, nothing made under the claim: gone again.
        let out = root.path().join("new");
        fs::create_dir(&out).unwrap();
        SweepClaim::acquire_made(&out, "aaaa", "config a.toml", true)
            .unwrap()
            .withdraw();
        assert!(!out.exists());
        // The user's directory stays, without the registrations.
        let user = root.path().join("user");
        fs::create_dir(&user).unwrap();
        fs::write(user.join("notes.txt"), "mine").unwrap();
        SweepClaim::acquire_made(&user, "aaaa", "config a.toml", false)
            .unwrap()
            .withdraw();
        assert!(user.join("notes.txt").exists());
        // Hundred-and-twenty-seventh hostile round, D1's residue: the claim's own
        // registrations are gone from the user's directory too.
        assert!(!user.join(WRITERS_DIR).exists());
        // Another shard of the config still holds it: everything stays.
        let shared = root.path().join("shared");
        fs::create_dir(&shared).unwrap();
        let first = SweepClaim::acquire_made(&shared, "aaaa", "config a.toml", true).unwrap();
        let second = SweepClaim::acquire(&shared, "aaaa", "config a.toml").unwrap();
        first.withdraw();
        assert!(shared.join(WRITERS_DIR).join("aaaa.lock").exists());
        // Something was made under the claim: the directory and its registrations stay.
        fs::create_dir(shared.join("runs")).unwrap();
        second.withdraw();
        assert!(shared.join(WRITERS_DIR).join("aaaa.lock").exists());
        // A registration dir that was there before the claim stays.
        let before = root.path().join("before");
        fs::create_dir_all(before.join(WRITERS_DIR)).unwrap();
        SweepClaim::acquire(&before, "aaaa", "config a.toml")
            .unwrap()
            .withdraw();
        assert!(before.join(WRITERS_DIR).exists());
        // A claim after a withdrawn one is taken as before.
        let again = root.path().join("again");
        fs::create_dir(&again).unwrap();
        let a = SweepClaim::acquire_made(&again, "aaaa", "config a.toml", true).unwrap();
        a.withdraw();
        fs::create_dir(&again).unwrap();
        let _b = SweepClaim::acquire(&again, "bbbb", "config b.toml").unwrap();
        assert!(SweepClaim::acquire(&again, "aaaa", "config a.toml").is_err());
    }

    /// Ninetieth hostile round, D4: a lock file this user cannot open to take over (another
    /// user's; here, as root, one made immutable) is refused by the place check that the run
    /// and its dry run make, naming the lock, not the directory.
    #[test]
    fn a_lock_file_this_user_cannot_take_over_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("p");
        let lock = dir.path().join(".p.ntk-lock");
        std::fs::write(&lock, "pid 4000000: ntk-probe run --out p\n").unwrap();
        let immutable = std::process::Command::new("chattr")
            .arg("+i")
            .arg(&lock)
            .status()
            .is_ok_and(|s| s.success());
        if !immutable || File::options().write(true).open(&lock).is_ok() {
            let _ = std::process::Command::new("chattr")
                .arg("-i")
                .arg(&lock)
                .status();
            return;
        }
        let e = DirLock::check_place_beside(&out).unwrap_err().to_string();
        let _ = std::process::Command::new("chattr")
            .arg("-i")
            .arg(&lock)
            .status();
        assert!(
            e.contains(".p.ntk-lock")
                && e.contains("cannot take over")
                && e.contains("pid 4000000"),
            "{e}"
        );
    }
}
