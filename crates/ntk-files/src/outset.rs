//! Output sets: the files of one run appear together or not at all.
//!
//! A run writes its files into a temporary directory beside the target, on the same
//! filesystem (`.<name>.ntk-tmp-<pid>-<nanos>`), and [`OutputSet::commit`] moves it into place
//! in one step: a `rename` when the target does not exist, else an atomic exchange of the
//! two directories (`renameat2(RENAME_EXCHANGE)` on Linux) after which the old set is
//! removed. A directory therefore holds one complete run or none, whatever fails (disk
//! full, a kill) in between.
//!
//! Each temporary directory is guarded by a lock file beside it (`<tmp>.lock`, created
//! and locked by the writing process before the directory): [`clean_dir`] and
//! [`clean_tree`] remove temporary directories whose lock file exists and is free (their
//! writer died) and the `atomic_write` leftovers (`<file>.ntk-tmp-<pid>`) of dead
//! processes, without touching those of live writers (concurrent shards share a sweep
//! directory) or anything not written by the tools: a name must carry the `ntk-tmp` tag
//! and numbers where the tools put them, and a directory must have its lock file, so a
//! user's `.draft.tmp-v2/` or `.out.tmp-old/` is never taken for a leftover. Neither
//! follows a symbolic link: [`clean_tree`] does not enter a root that is one.

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

/// Why a name an output is written under is refused when it holds a character
/// [`crate::shown::escaped`] escapes; the tools' other `--out` refusals say it in these words.
pub const HIDDEN_IN_NAME: &str = "holds a control character (a newline, tab or escape) or one \
     that does not show itself (a bidirectional control such as U+202E, a zero-width space \
     U+200B, a byte order mark U+FEFF, a line separator U+2028), which would break, reorder or \
     disguise every line that names it: choose a name without one";

/// The tag of every temporary name the tools make (output sets and `crate::io::atomic_write`).
pub const TMP_TAG: &str = ".ntk-tmp-";
const LOCK_EXT: &str = "lock";

/// A set of files being written; becomes `target` on [`OutputSet::commit`], vanishes if
/// dropped uncommitted.
#[derive(Debug)]
pub struct OutputSet {
    target: PathBuf,
    tmp: PathBuf,
    lock_path: PathBuf,
    lock: Option<File>,
    /// One writer per target: `.<name>.ntk-lock` beside it, held until the set is
    /// committed or dropped.
    _writer: crate::lock::DirLock,
}

fn io_at(path: &Path, what: &str, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {what}: {e}", path.display()))
}

impl OutputSet {
    /// Starts a set that will become `target` (its parent is created if needed).
    pub fn begin(target: &Path) -> io::Result<Self> {
        check_replaceable_target(target)
            .map_err(|e| io_at(target, "cannot take the run's output", e))?;
        let name = target
            .file_name()
            .ok_or_else(|| io::Error::other(format!("{}: no directory name", target.display())))?
            .to_string_lossy()
            .into_owned();
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        fs::create_dir_all(&parent)
            .map_err(|e| io_at(&parent, "cannot create the output directory", e))?;
        // A file at the target is not a set to replace (the exchange would leave it at the
        // temporary name): a user's, left where it is.
        if fs::symlink_metadata(target).is_ok_and(|m| m.is_file()) {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!(
                    "{}: a file stands where the output directory goes; move it, or choose \
                     another --out",
                    target.display()
                ),
            ));
        }
        // Busy only where another process holds the lock: a place this user cannot write
        // is not (eighty-second hostile round, D11: a sweep said its point "was being
        // written by another process" where its directory was another user's).
        let writer = crate::lock::DirLock::acquire_beside(&parent.join(&name)).map_err(|e| {
            let kind = match e {
                crate::Error::Locked { .. } | crate::Error::OtherWriter { .. } => {
                    io::ErrorKind::ResourceBusy
                }
                _ => io::ErrorKind::PermissionDenied,
            };
            io::Error::new(kind, e.to_string())
        })?;
        // A sweep being written there now (round 23's D2): its lock lives inside.
        if let Some(holder) = crate::lock::SweepClaim::live_writer(target) {
            return Err(io::Error::new(
                io::ErrorKind::ResourceBusy,
                format!(
                    "{}: another process is writing a sweep here ({holder}); wait for it to \
                     end, or choose another --out",
                    target.display()
                ),
            ));
        }
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let tmp = parent.join(format!(".{name}{TMP_TAG}{}-{nanos}", std::process::id()));
        let lock_path = lock_path_of(&tmp);
        // The lock first: a temporary directory without a lock file is never ours to keep.
        let lock = File::create(&lock_path).map_err(|e| {
            let what = "the directory the output set is made in (beside it) is not writable";
            io_at(&parent, what, e)
        })?;
        lock.try_lock()
            .map_err(|e| io::Error::other(format!("{}: {e}", lock_path.display())))?;
        if let Err(e) = fs::create_dir(&tmp) {
            let _ = fs::remove_file(&lock_path);
            return Err(io_at(&tmp, "cannot create a temporary directory", e));
        }
        Ok(Self {
            target: target.to_path_buf(),
            tmp,
            lock_path,
            lock: Some(lock),
            _writer: writer,
        })
    }

    /// Where to write the set's files.
    pub fn path(&self) -> &Path {
        &self.tmp
    }

    /// The directory the set becomes.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// `path` as the user will find it: a path inside the set's temporary directory named
    /// under the target (`OUT/ntk.npy`, not `.OUT.ntk-tmp-PID-N/ntk.npy`, which a failed set
    /// has removed by the time its error is read); any other path unchanged.
    pub fn shown(&self, path: &Path) -> PathBuf {
        match path.strip_prefix(&self.tmp) {
            Ok(rest) if rest.as_os_str().is_empty() => self.target.clone(),
            Ok(rest) => self.target.join(rest),
            Err(_) => path.to_path_buf(),
        }
    }

    /// Moves the set into place, replacing what the target held, in one step. `Some`: a
    /// warning for stderr, where the set it replaced could not be removed (its place named).
    pub fn commit(self) -> io::Result<Option<String>> {
        sync_dir(&self.tmp);
        // What stands at the target now may have come after this set began (a sweep started
        // meanwhile, round 23's D2): a sweep's directory is never replaced.
        if fs::symlink_metadata(self.target.join(crate::lock::WRITERS_DIR)).is_ok() {
            return Err(io::Error::new(
                io::ErrorKind::ResourceBusy,
                format!(
                    "{}: a sweep was started there while this run computed; its files are \
                     kept and this run's are not written: choose another --out",
                    self.target.display()
                ),
            ));
        }
        let result = replace_dir(&self.tmp, &self.target);
        let mut left = None;
        if result.is_ok() {
            // After an exchange the old set sits at the temporary path. What cannot be
            // removed (a set another user made, in a directory this one may not write) is
            // said, not left without a word (eighty-second hostile round, D3).
            if let Err(e) = fs::remove_dir_all(&self.tmp)
                && fs::symlink_metadata(&self.tmp).is_ok()
            {
                left = Some(format!(
                    "{}: the set this run replaced was not removed ({e}); it is left at {}: \
                     remove it by hand",
                    self.target.display(),
                    self.tmp.display()
                ));
            }
            if let Some(parent) = self.target.parent() {
                sync_dir(parent);
            }
        }
        result.map(|()| left).map_err(|e| {
            io_at(
                &self.target,
                "cannot move the finished output into place",
                e,
            )
        })
    }
}

impl Drop for OutputSet {
    fn drop(&mut self) {
        // Uncommitted (an error on the way) or committed: the temporary path goes.
        let _ = fs::remove_dir_all(&self.tmp);
        let _ = fs::remove_file(&self.lock_path);
        self.lock.take();
    }
}

/// Refuses, before any work, a `target` directory that a set cannot replace in one step
/// at its end, where the run would compute everything and then fail "cannot move the
/// finished output into place" though its dry run said it would be computed (ninth hostile
/// round): the working directory itself (`.`: replaced, it would leave the shell in a
/// directory that no longer holds anything), a mount point (the set is built on its
/// parent's filesystem, and no rename crosses into another), and a directory its
/// filesystem keeps from being renamed (immutable or append-only, `chattr +i` / `+a`). An
/// absent target, a file (refused where it is met, with its own message) or a directory
/// that can be replaced passes. The error says why, without the path.
pub fn check_replaceable_target(target: &Path) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = fs::symlink_metadata(target) else {
        return Ok(());
    };
    if !meta.is_dir() {
        return Ok(());
    }
    let refuse = |why: &str| Err(io::Error::other(why.to_string()));
    if fs::metadata(".").is_ok_and(|cwd| (cwd.dev(), cwd.ino()) == (meta.dev(), meta.ino())) {
        return refuse(
            "the working directory itself: a run replaces its --out as a whole (its files \
             are moved into place at the end), which would leave this shell in a directory \
             that no longer holds anything; give a new directory inside it, or run from \
             elsewhere",
        );
    }
    let attributes = attributes(target);
    let across = match attributes {
        Some((mask, attrs)) if mask & MOUNT_ROOT != 0 => attrs & MOUNT_ROOT != 0,
        _ => fs::metadata(target.join("..")).is_ok_and(|p| p.dev() != meta.dev()),
    };
    if across {
        return refuse(
            "a mount point: a run's files are written beside it, on its parent's filesystem, \
             and moved into place at the end, which no rename does across filesystems; give \
             a new directory inside it",
        );
    }
    if attributes.is_some_and(|(_, attrs)| attrs & (IMMUTABLE | APPEND) != 0) {
        return refuse(
            "its filesystem keeps it from being replaced (immutable or append-only: chattr \
             +i or +a), which the run does at its end with its files; clear the flag or give \
             another --out",
        );
    }
    Ok(())
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MOUNT_ROOT: u64 = libc::STATX_ATTR_MOUNT_ROOT as u64;
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const IMMUTABLE: u64 = libc::STATX_ATTR_IMMUTABLE as u64;
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const APPEND: u64 = libc::STATX_ATTR_APPEND as u64;
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
const MOUNT_ROOT: u64 = 0;
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
const IMMUTABLE: u64 = 0;
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
const APPEND: u64 = 0;

/// `statx`'s attributes of `path` (the mask of those the filesystem reports, and their
/// values); `None` where `statx` is not available.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn attributes(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut buf = std::mem::MaybeUninit::<libc::statx>::zeroed();
    // SAFETY: `c` is a valid NUL-terminated path and `buf` a statx buffer the call fills;
    // it is read only when the call succeeds.
    let r = unsafe {
        libc::statx(
            libc::AT_FDCWD,
            c.as_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
            libc::STATX_BASIC_STATS,
            buf.as_mut_ptr(),
        )
    };
    if r != 0 {
        return None;
    }
    // SAFETY: the call succeeded and filled the buffer (zeroed before).
    let st = unsafe { buf.assume_init() };
    Some((st.stx_attributes_mask, st.stx_attributes))
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn attributes(_path: &Path) -> Option<(u64, u64)> {
    None
}

fn lock_path_of(tmp: &Path) -> PathBuf {
    let mut s = tmp.as_os_str().to_os_string();
    s.push(".");
    s.push(LOCK_EXT);
    PathBuf::from(s)
}

fn sync_dir(dir: &Path) {
    if let Ok(f) = File::open(dir) {
        let _ = f.sync_all();
    }
}

/// Renames `from` over `to`: a plain rename when `to` is absent or an empty directory, an
/// atomic exchange otherwise (the old contents end up at `from`).
fn replace_dir(from: &Path, to: &Path) -> io::Result<()> {
    match fs::rename(from, to) {
        Ok(()) => return Ok(()),
        Err(e) if !to.exists() => return Err(e),
        Err(_) => {}
    }
    match exchange(from, to) {
        Ok(()) => Ok(()),
        Err(_) => {
            // No atomic exchange on this filesystem: move the old set aside first.
            let aside = from.with_extension("old");
            fs::rename(to, &aside)?;
            fs::rename(from, to)?;
            fs::rename(&aside, from)
        }
    }
}

#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let ca = CString::new(a.as_os_str().as_bytes()).map_err(io::Error::other)?;
    let cb = CString::new(b.as_os_str().as_bytes()).map_err(io::Error::other)?;
    const RENAME_EXCHANGE: libc::c_uint = 1 << 1;
    // SAFETY: two valid NUL-terminated paths relative to the current directory.
    let r = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            ca.as_ptr(),
            libc::AT_FDCWD,
            cb.as_ptr(),
            RENAME_EXCHANGE,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> io::Result<()> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

/// True when process `pid` exists (a leftover of a live writer must stay).
fn alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return false;
        };
        // SAFETY: signal 0 only checks for the process.
        let r = unsafe { libc::kill(pid, 0) };
        r == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// True when the temporary set at `path` has its lock file and no live writer holds it (a
/// directory without its lock file was not made by [`OutputSet::begin`]).
fn set_is_dead(path: &Path) -> bool {
    lock_is_free(&lock_path_of(path))
}

/// True when `lock` is a temporary set's lock file as [`OutputSet::begin`] makes one (an
/// empty regular file of one name: nothing is ever written into it) and no live writer
/// holds it. Anything else at a lock's name is the user's, and neither it nor the set
/// beside it is removed (forty-second hostile round, N1: a directory of the user's at a
/// leftover's name went, with the user's text at its lock's).
fn lock_is_free(lock: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let made_by_begin =
        fs::symlink_metadata(lock).is_ok_and(|m| m.is_file() && m.nlink() == 1 && m.len() == 0);
    made_by_begin
        && File::options()
            .write(true)
            .open(lock)
            .is_ok_and(|f| f.try_lock().is_ok())
}

/// True for `<digits>-<digits>`.
fn is_pid_nanos(s: &str) -> bool {
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    s.split_once('-')
        .is_some_and(|(pid, nanos)| digits(pid) && digits(nanos))
}

/// The target name of a temporary set's directory name (`.<name>.ntk-tmp-<pid>-<nanos>`).
fn set_target(name: &str) -> Option<&str> {
    let (head, tail) = name.strip_prefix('.')?.rsplit_once(TMP_TAG)?;
    is_pid_nanos(tail).then_some(head)
}

/// Removes one stale entry of `dir` if it is ours: a dead writer's temporary set (for the
/// target `set_name`, any when `None`), a lock left without its set, or an `atomic_write`
/// leftover (`<file>.ntk-tmp-<pid>` of a dead process) of a file that
/// `ours` accepts. Returns whether it removed something.
fn clean_entry(entry: &fs::DirEntry, set_name: Option<&str>, ours: &dyn Fn(&str) -> bool) -> bool {
    let name = entry.file_name().to_string_lossy().into_owned();
    let path = entry.path();
    let Ok(kind) = entry.file_type() else {
        return false;
    };
    // Another user's leftover is theirs: a dead writer's, but not this user's to remove
    // (ninety-seventh hostile round, D4: a sweep removed root's phase temporary, which its
    // dry run had said it left).
    if fs::symlink_metadata(&path).map_or(true, |m| crate::owner::not_ours(&m).is_some()) {
        return false;
    }
    if kind.is_dir() {
        let Some(target) = set_target(&name) else {
            return false;
        };
        if set_name.is_some_and(|n| n != target) || !set_is_dead(&path) {
            return false;
        }
        let _ = fs::remove_dir_all(&path);
        let _ = fs::remove_file(lock_path_of(&path));
        return true;
    }
    if !kind.is_file() {
        return false;
    }
    if let Some(dir_name) = name.strip_suffix(&format!(".{LOCK_EXT}"))
        && let Some(target) = set_target(dir_name)
    {
        // A lock whose set is gone (the writer died between creating the two).
        let set = path.with_file_name(dir_name);
        let orphan = set_name.is_none_or(|n| n == target)
            && fs::symlink_metadata(&set).is_err()
            && lock_is_free(&path);
        if orphan {
            let _ = fs::remove_file(&path);
        }
        return orphan;
    }
    // No writer of these tools leaves `<file>.partial` (the tiled route's phase files keep
    // and check their own): a file of that name is the user's (forty-third hostile round,
    // D1: `results.csv.partial` and the like were removed by collect, plot and the sweeps).
    let leftover = name.rsplit_once(TMP_TAG).is_some_and(|(file, pid)| {
        // A figure's PNG keeps its extension after the tag (`ntk_plot::Figure::save`).
        let pid = pid.strip_suffix(".png").unwrap_or(pid);
        !pid.is_empty()
            && pid.bytes().all(|b| b.is_ascii_digit())
            && pid.parse().is_ok_and(|pid| !alive(pid))
            && ours(file)
    });
    if leftover {
        let _ = fs::remove_file(&path);
    }
    leftover
}

/// Removes, in `dir` only (not below it), the temporary output sets of dead writers whose
/// target is `set_name` (any when `None`) and the write leftovers of the files `ours`
/// accepts. For directories a user chose: nothing of anyone else's is touched. Returns how
/// many entries were removed.
pub fn clean_dir(dir: &Path, set_name: Option<&str>, ours: &dyn Fn(&str) -> bool) -> usize {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| clean_entry(e, set_name, ours))
        .count()
}

/// [`clean_dir`] of every directory below `root` (itself included), for any set and the
/// files `ours` names (what the tools write there: a file of another name is the user's,
/// whatever it looks like): for trees the tools own (a sweep's `runs/`, a run's
/// `checkpoints/`). A root that is a symbolic link is left alone (its target is not the
/// tools' own), and links below it are never entered.
pub fn clean_tree(root: &Path, ours: &dyn Fn(&str) -> bool) -> usize {
    if fs::symlink_metadata(root).is_ok_and(|m| m.file_type().is_symlink()) {
        return 0;
    }
    let mut removed = 0;
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        removed += clean_dir(&dir, None, ours);
        if let Ok(entries) = fs::read_dir(&dir) {
            stack.extend(
                entries
                    .flatten()
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                    .map(|e| e.path()),
            );
        }
    }
    removed
}

/// The directory an `--out` path names, checked before any work: a symbolic link is
/// followed to its target (so the result lands there, and the link stays a link), a
/// dangling one is an error now rather than after the work, the filesystem root is
/// refused, and so is a place inside another run's, sweep's or output set's directory
/// ([`check_not_inside_made`]).
pub fn resolve_out(out: &Path) -> crate::Result<PathBuf> {
    resolve_out_for(out, Output::Other)
}

/// [`resolve_out`] for an output that holds `output` ([`check_not_inside_made_for`]).
pub fn resolve_out_for(out: &Path, output: Output) -> crate::Result<PathBuf> {
    let resolved = resolve_link(out)?;
    check_not_inside_made_for(&resolved, output)?;
    Ok(resolved)
}

/// [`resolve_out`] without the check of the directories above.
fn resolve_link(out: &Path) -> crate::Result<PathBuf> {
    // `DIR/.` names `DIR` (round 23's D3).
    let out: &Path = &out.components().collect::<PathBuf>();
    let bad = |why: &str| crate::Error::OutputPath {
        path: out.to_path_buf(),
        why: why.to_string(),
    };
    refuse_dots_after_missing(out)?;
    // An empty path (`--out ""`, `sweep.out = ""`) names no directory; taken as the working
    // directory it wrote beside the user's files (seventeenth hostile round, D4).
    if out.as_os_str().is_empty() {
        return Err(crate::Error::OutputPath {
            path: PathBuf::from("\"\""),
            why: "an empty path names no output directory: give --out DIR (or sweep.out / \
                  train.out)"
                .into(),
        });
    }
    // A control character (a newline, a tab, an escape) breaks every line that names the
    // directory, the tables' and logs' included (eighty-eighth hostile round, N6: `a\nb: new
    // (...)` printed on two lines), and an invisible one makes it read as another
    // (hundred-and-twelfth, D1: `e/s\u{200b}l` as the sweep `e/sl`): refused, the path shown
    // quoted and escaped.
    if out.to_string_lossy().chars().any(crate::shown::escaped) {
        return Err(crate::Error::OutputPath {
            path: PathBuf::from(format!(
                "\"{}\"",
                crate::shown::controls_escaped(&out.to_string_lossy())
            )),
            why: HIDDEN_IN_NAME.into(),
        });
    }
    let resolved = match fs::symlink_metadata(out) {
        Ok(m) if m.file_type().is_symlink() => match fs::canonicalize(out) {
            Ok(target) if target.is_dir() => target,
            Ok(target) => {
                return Err(bad(&format!(
                    "a symbolic link to {}, which is not a directory",
                    target.display()
                )));
            }
            Err(e) => {
                return Err(bad(&format!(
                    "a symbolic link whose target cannot be reached ({e}); the output \
                     would be lost"
                )));
            }
        },
        Ok(m) if !m.is_dir() => return Err(bad("exists and is not a directory")),
        _ => out.to_path_buf(),
    };
    if fs::canonicalize(&resolved).is_ok_and(|c| c.parent().is_none()) {
        return Err(bad("the filesystem root is no output directory"));
    }
    check_name_fits(&resolved)?;
    Ok(resolved)
}

/// The most bytes the tools add to an output's name in the names they make beside it: a
/// temporary set `.<name>.ntk-tmp-<pid>-<nanos>` and its lock, that name and `.lock` (1 + 9
/// + 10 + 1 + 9 + 5 bytes: a pid of at most 10 digits, nanoseconds of at most 9).
pub const NAME_MARGIN: usize = 35;

/// The longest path (bytes) a system call takes on Linux (`PATH_MAX`, the terminating NUL
/// included).
pub const PATH_MAX: usize = 4096;

/// The most bytes the tools add below an output in the paths they write (a sweep's
/// `runs/<point>/checkpoints/epoch-NNNNN/<file>.ntk-tmp-<pid>` and the like): forty-eighth
/// hostile round, D3 (an --out past PATH_MAX read as a damaged run, "pass --recompute").
pub const PATH_MARGIN: usize = 512;

/// Refuses an output whose last component leaves no room for the names the tools make
/// beside it ([`NAME_MARGIN`]) within the file system's longest name (`pathconf`'s
/// `_PC_NAME_MAX` where the path exists nearest, 255 bytes where it cannot say):
/// forty-seventh hostile round, D3 (the dry run of a 227-byte name said "new", the run
/// failed naming its parent "not writable"; at 256 bytes the dry runs advised --recompute).
fn check_name_fits(out: &Path) -> crate::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let Some(name) = out.file_name() else {
        return Ok(());
    };
    let len = name.as_bytes().len();
    let max = name_max(out);
    let path_len = out.as_os_str().as_bytes().len();
    if path_len + PATH_MARGIN > PATH_MAX {
        return Err(crate::Error::OutputPath {
            path: out.to_path_buf(),
            why: format!(
                "its path is {path_len} bytes; the tools write files up to {PATH_MARGIN} \
                 bytes deeper (a sweep's runs/<point>/checkpoints/...), and a path takes at \
                 most {PATH_MAX} bytes (PATH_MAX): choose an --out of at most {} bytes",
                PATH_MAX - PATH_MARGIN
            ),
        });
    }
    if len + NAME_MARGIN <= max {
        return Ok(());
    }
    Err(crate::Error::OutputPath {
        path: out.to_path_buf(),
        why: format!(
            "its name is {len} bytes; the tools make names up to {NAME_MARGIN} bytes longer \
             beside an output (.<name>.ntk-tmp-<pid>-<nanos>.lock), and this file system takes \
             at most {max} bytes a name: choose a name of at most {} bytes",
            max.saturating_sub(NAME_MARGIN)
        ),
    })
}

/// `path` and its ancestors, nearest first, the empty path of a relative one's end as `.`.
fn ancestors(path: &Path) -> impl Iterator<Item = &Path> {
    path.ancestors().map(|a| {
        if a.as_os_str().is_empty() {
            Path::new(".")
        } else {
            a
        }
    })
}

/// The longest file name (bytes) of the file system at the nearest existing ancestor of
/// `path` (`pathconf(_PC_NAME_MAX)`), 255 where that cannot be asked.
fn name_max(path: &Path) -> usize {
    use std::os::unix::ffi::OsStrExt;
    let existing = ancestors(path)
        .find(|a| fs::metadata(a).is_ok_and(|m| m.is_dir()))
        .unwrap_or(Path::new("."));
    let Ok(c) = std::ffi::CString::new(existing.as_os_str().as_bytes()) else {
        return 255;
    };
    // SAFETY: `c` is a valid NUL-terminated path; pathconf only reads it.
    let max = unsafe { libc::pathconf(c.as_ptr(), libc::_PC_NAME_MAX) };
    usize::try_from(max).ok().filter(|&m| m > 0).unwrap_or(255)
}

/// How a collected probe sweep's `results.csv` begins.
const PROBE_TABLE: &str = "protocol,activation,depth,seed,";
/// How a collected training sweep's `sweep.csv` begins.
const TRAIN_TABLE: &str = "id,status,depth,";

/// A marker file's text in `dir`, read when it is a regular file of at most 64 MiB.
fn marker_text(dir: &Path, f: &str) -> Option<String> {
    let p = dir.join(f);
    let m = fs::symlink_metadata(&p).ok()?;
    (m.is_file() && m.len() <= 64 << 20)
        .then(|| fs::read(&p).ok())
        .flatten()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// Whether the marker file `f` in `dir` begins with `header` (a table the tools wrote).
fn has_header(dir: &Path, f: &str, header: &str) -> bool {
    marker_text(dir, f).is_some_and(|t| t.starts_with(header))
}

/// What marks `dir` as one the tools made for a run, a sweep or an output set, in words;
/// each marker is read, not only named (sixteenth and seventeenth hostile rounds: a user's
/// own `summary.json`, `config.toml`, `results.csv` or a copied `metrics.csv` made a
/// directory the tools'):
/// - a `checkpoint.json` that points into `checkpoints/epoch-NNNNN` (a training run's);
/// - a `summary.json` whose provenance names `ntk-probe` or `ntk-train` as its tool (a run's
///   or an output set's);
/// - a `phases.json` of a probe's phase files (a tiled run's `.<out>.phases`);
/// - `.ntk-writers/` (a sweep's, or a run's);
/// - `runs/` beside a collected sweep's table, a `results.csv` or `sweep.csv` with the
///   tools' header (a sweep copied without its hidden entries). An interrupted sweep copied
///   so, with no table yet, is not recognized.
///
/// A figure command's directory (its figures, tables and `.ntk-lock`) is none of these.
pub fn made_by_tools(dir: &Path) -> Option<String> {
    let text = |f: &str| marker_text(dir, f);
    if text("checkpoint.json").is_some_and(|t| t.contains("\"dir\": \"checkpoints/epoch-")) {
        return Some("a training run's checkpoint.json is there".into());
    }
    if let Some(t) = text("summary.json") {
        for tool in ["ntk-probe", "ntk-train"] {
            if t.contains(&format!("\"tool\": \"{tool} ")) {
                return Some(format!("a summary.json that {tool} wrote is there"));
            }
        }
    }
    // A tiled probe run's phase directory (`.<out>.phases`: its tiles and their state;
    // twentieth hostile round, D1).
    if text("phases.json").is_some_and(|t| t.contains("ntk-probe phase files")) {
        return Some("a probe's phase files (phases.json) are there".into());
    }
    if fs::symlink_metadata(dir.join(".ntk-writers")).is_ok() {
        return Some("the .ntk-writers of a sweep or run is there".into());
    }
    let runs = fs::symlink_metadata(dir.join("runs")).is_ok_and(|m| m.is_dir());
    if runs
        && (has_header(dir, "results.csv", PROBE_TABLE)
            || has_header(dir, "sweep.csv", TRAIN_TABLE))
    {
        return Some("a sweep's runs/ and its table are there".into());
    }
    None
}

/// Whether `path` has a `..` (or `.`) after a component that does not exist yet: the
/// filesystem makes the missing directory and then follows `..` out of it, somewhere the
/// path's text does not say (eighteenth hostile round, D1: `--out x/..` wrote beside a
/// user's files, `--out zz/../RUN/g` inside a run, past the checks of both).
fn dots_after_missing(path: &Path) -> bool {
    use std::path::Component;
    let mut at = PathBuf::new();
    let mut missing = false;
    for c in path.components() {
        if missing && matches!(c, Component::ParentDir | Component::CurDir) {
            return true;
        }
        at.push(c.as_os_str());
        if !missing && fs::symlink_metadata(&at).is_err() {
            missing = true;
        }
    }
    false
}

/// Refuses an output path with a `..` after a component that does not exist yet
/// ([`dots_after_missing`]).
fn refuse_dots_after_missing(path: &Path) -> crate::Result<()> {
    if dots_after_missing(path) {
        return Err(crate::Error::OutputPath {
            path: path.to_path_buf(),
            why: "a '..' after a directory that does not exist yet would make that \
                  directory and leave it for another place: give the path without it"
                .into(),
        });
    }
    Ok(())
}

/// `path` made absolute through its nearest existing ancestor (symbolic links there
/// resolved), the rest appended as written.
fn absolute(path: &Path) -> PathBuf {
    let path = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .unwrap_or_else(|_| PathBuf::from("."))
            .join(path)
    };
    let mut rest = Vec::new();
    let mut at = path.as_path();
    loop {
        if let Ok(c) = fs::canonicalize(at) {
            return rest.iter().rev().fold(c, |p, r| p.join(r));
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                at = parent;
            }
            _ => return path,
        }
    }
}

/// What an output path is to hold, for the rule of [`check_not_inside_made_for`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// One training run (`ntk-train run`): it may also be a new entry of a collected
    /// training sweep's `runs/` (bring your own runs, collect them, add one), which its
    /// `collect` reads as one more run.
    TrainingRun,
    /// Anything else: a sweep, a probe run or output set, figures, a bench's file.
    Other,
}

/// Refuses an output `path` (a directory or a file, existing or not) that lies inside a
/// directory the tools made ([`made_by_tools`]: a run's, a sweep's, an output set's, the
/// other tool's included), at any depth: it would then hold files its own tool does not
/// write, so it could no longer be resumed or run again in place (fifteenth hostile round,
/// D1, D4, D8: `plot --out RUN/figs`, `gmap --out RUN`, `bench --out RUN/summary.json`),
/// and its own next run may remove them (nineteenth hostile round, D1: figures in a run's
/// `checkpoints/epoch-NNNNN/`, removed with the old checkpoint by a resume; a probe run in
/// a sweep's `runs/relu/`, which broke its collect). Every existing directory above `path`
/// is asked; `path` itself, when it exists, is its command's to judge (a run's own
/// directory is where it resumes, a sweep's where it continues). A sweep's points are
/// written by the sweep, not through here. One exception: a [`Output::TrainingRun`] as a
/// new entry of a collected training sweep's `runs/` (not a hidden name).
pub fn check_not_inside_made(path: &Path) -> crate::Result<()> {
    check_not_inside_made_for(path, Output::Other)
}

/// [`check_not_inside_made`] for an output that holds `output`.
pub fn check_not_inside_made_for(path: &Path, output: Output) -> crate::Result<()> {
    refuse_dots_after_missing(path)?;
    let abs = absolute(path);
    for dir in abs
        .ancestors()
        .skip(1)
        .filter(|a| fs::metadata(a).is_ok_and(|m| m.is_dir()))
    {
        let Some(marker) = made_by_tools(dir) else {
            continue;
        };
        // A hidden name is none of the runs `collect` reads, and `.ntk-writers` is a marker
        // (twentieth hostile round, D3).
        let visible = abs
            .file_name()
            .is_some_and(|n| !n.to_string_lossy().starts_with('.'));
        if output == Output::TrainingRun
            && visible
            && abs.parent() == Some(dir.join("runs").as_path())
            && is_training_sweep(dir)
        {
            continue;
        }
        return Err(crate::Error::InsideMade {
            path: path.to_path_buf(),
            dir: dir.to_path_buf(),
            marker,
        });
    }
    Ok(())
}

/// Whether `dir` holds a collected sweep's table as the tools write it: a `results.csv` with
/// ntk-probe's header or a `sweep.csv` with ntk-train's.
pub fn holds_sweep_table(dir: &Path) -> bool {
    has_header(dir, "results.csv", PROBE_TABLE) || has_header(dir, "sweep.csv", TRAIN_TABLE)
}

/// Whether `dir` holds a training sweep's table (`sweep.csv` with ntk-train's header) beside
/// its `runs/`.
fn is_training_sweep(dir: &Path) -> bool {
    has_header(dir, "sweep.csv", TRAIN_TABLE)
}

/// Runs `f` with the directory `dir` made (and its missing parents); when `f` fails, the
/// directories this call made are removed again where they are still empty, so a command
/// that fails leaves no new directory behind (seventeenth hostile round, D6: `plot` made
/// its `--out`, or `DIR`'s missing path, before reading the table it then did not find).
pub fn in_made_dir<T, E: From<crate::Error>>(
    dir: &Path,
    f: impl FnOnce() -> Result<T, E>,
) -> Result<T, E> {
    let made: Vec<PathBuf> = dir
        .ancestors()
        .take_while(|a| !a.as_os_str().is_empty() && fs::symlink_metadata(a).is_err())
        .map(Path::to_path_buf)
        .collect();
    fs::create_dir_all(dir).map_err(|source| crate::Error::CreateDir {
        dir: dir.to_path_buf(),
        source,
    })?;
    let result = f();
    if result.is_err() {
        for d in &made {
            if fs::remove_dir(d).is_err() {
                break;
            }
        }
    }
    result
}

/// The directory a figure command (`gmap`, `activations`, `transfer`, `fig1`) writes into,
/// checked before any work: [`resolve_out`], and not itself a run's, sweep's or output
/// set's directory ([`made_by_tools`]; fifteenth hostile round, D4).
pub fn check_figure_dir(out: &Path) -> crate::Result<PathBuf> {
    let resolved = resolve_out(out)?;
    if let Some(marker) = made_by_tools(&resolved) {
        return Err(crate::Error::MadeDir {
            dir: out.to_path_buf(),
            marker,
        });
    }
    Ok(resolved)
}

/// The directory `plot DIR --out OUT` writes its figures into, checked before any drawing
/// ([`resolve_out`] first): `DIR` itself (by any path), or a directory that holds nothing
/// but figures (`.png`, `.svg`, `.pdf` and `--layout column`'s `.caption.txt`; new or
/// empty included) and lies inside no run's ([`check_not_inside_made`]). Another run's or sweep's
/// directory, the other tool's included, is refused: figures written there made it hold
/// files its own tool does not write, so it could no longer be resumed or run again in
/// place (fourteenth hostile round, D9).
pub fn check_figure_out(out: &Path, dir: &Path) -> crate::Result<PathBuf> {
    let resolved = resolve_link(out)?;
    let same = match (fs::canonicalize(&resolved), fs::canonicalize(dir)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if same {
        return Ok(resolved);
    }
    check_not_inside_made(&resolved)?;
    // Figures and the captions `--layout column` writes beside them; a figure by its name
    // and its format's first bytes (ninety-eighth hostile round, R31: a text file named
    // `kappa_vs_depth_whole.png` was replaced).
    let figure = |name: &str| {
        [".png", ".svg", ".pdf", ".caption.txt"]
            .iter()
            .any(|ext| name.len() > ext.len() && name.ends_with(ext))
            && crate::format::not_of_its_format(&resolved.join(name)).is_none()
    };
    check_owned(&resolved, &figure).map_err(|e| match e {
        crate::Error::ForeignFiles { dir, files } => crate::Error::NotFigures { dir, files },
        e => e,
    })?;
    Ok(resolved)
}

/// Refuses `dir` when it holds an entry that `ours` does not accept (a user's file), before
/// any work: the tools write into a directory only what they own. The tools' own hidden
/// entries (`.ntk-*`, temporary names) are always accepted. A symbolic link is never the
/// tools' own, whatever its name: the tools make none, and a write to a link at an output's
/// name (`metrics.csv`, `ntk.csv`) would replace the file it leads to, outside `dir` (a
/// run's own labels, in the sixth hostile round), so it is named with its target.
pub fn check_owned(dir: &Path, ours: &dyn Fn(&str) -> bool) -> crate::Result<()> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Ok(());
    };
    let foreign: Vec<String> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            if e.file_type().is_ok_and(|t| t.is_symlink()) {
                let to = fs::read_link(e.path())
                    .map(|t| t.display().to_string())
                    .unwrap_or_else(|_| "?".into());
                return Some(format!("{name}, a symbolic link to {to}"));
            }
            let own = ours(&name) || name.starts_with(".ntk-") || name.contains(TMP_TAG);
            (!own).then_some(name)
        })
        .collect();
    refuse_listed(dir, foreign, None)
}

/// [`crate::Error::ForeignFiles`] naming the first three of `entries` (sorted) and how
/// many more, each `beside` (said once, after the list), or `Ok` when there are none.
pub fn refuse_listed(
    dir: &Path,
    mut entries: Vec<String>,
    beside: Option<&str>,
) -> crate::Result<()> {
    if entries.is_empty() {
        return Ok(());
    }
    entries.sort();
    let (count, more) = (entries.len(), entries.len().saturating_sub(3));
    entries.truncate(3);
    if more > 0 {
        entries.push(format!("and {more} more"));
    }
    // Said once after the list (hundred-and-fifteenth hostile round, N4: after every name).
    if let (Some(beside), Some(last)) = (beside, entries.last_mut()) {
        *last = match count {
            1 => format!("{last}, {beside}"),
            _ => format!("{last}; each {beside}"),
        };
    }
    Err(crate::Error::ForeignFiles {
        dir: dir.to_path_buf(),
        files: entries,
    })
}

/// Refuses the regular files at a tool's own names in `dir` (`named`) when nothing there
/// proves them the tool's: none of `proofs` (a run's lock, summary or checkpoint pointer; a
/// sweep's `runs/`) is there. A user's `metrics.csv` or `sweep.csv` alone in a fresh
/// `--out` is the user's, not ours to replace or to take for a result (seventy-third
/// hostile round, D5: a user's `predicted.csv` was kept as the run's prediction, a user's
/// `metrics.csv` replaced without a word). Each is named with `beside` ("with no run beside
/// it"). A directory or a FIFO at such a name is never replaced nor read as a result (the
/// places a run writes are checked for what stands there): it is left to those checks.
pub fn check_proven(
    dir: &Path,
    proofs: &[&str],
    named: &dyn Fn(&str) -> bool,
    beside: &str,
) -> crate::Result<()> {
    if proofs
        .iter()
        .any(|p| fs::symlink_metadata(dir.join(p)).is_ok())
    {
        return Ok(());
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return Ok(());
    };
    let unproven: Vec<String> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| named(n) && !n.starts_with(".ntk-") && !n.contains(TMP_TAG))
        .collect();
    refuse_listed(dir, unproven, Some(beside))
}

/// [`check_writable`] without making anything, for a dry run (and a run before its work):
/// the nearest of `dir` and its ancestors that exists must be a directory this process may
/// write into (`access(W_OK | X_OK)`: its permissions, a read-only filesystem, an immutable
/// directory). Ninth hostile round: every dry run said what would be computed where the run
/// then refused (an --out whose parent could not be written), and `ntk-probe onnx` computed
/// its kernel before it failed to write it.
pub fn check_writable_unmade(dir: &Path) -> crate::Result<()> {
    let existing = ancestors(dir)
        .find(|a| fs::symlink_metadata(a).is_ok())
        .unwrap_or(Path::new("."));
    let refuse = |source: io::Error| match existing == dir {
        true => crate::Error::NotWritable {
            dir: existing.to_path_buf(),
            source,
        },
        false => crate::Error::NotWritableAbove {
            dir: dir.to_path_buf(),
            above: existing.to_path_buf(),
            source,
        },
    };
    if !fs::metadata(existing).is_ok_and(|m| m.is_dir()) {
        return Err(refuse(io::Error::from_raw_os_error(libc::ENOTDIR)));
    }
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(existing.as_os_str().as_bytes())
        .map_err(|e| refuse(io::Error::other(e)))?;
    // SAFETY: `c` is a valid NUL-terminated path; access only reads it.
    let r = unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) };
    if r == 0 {
        Ok(())
    } else {
        Err(refuse(io::Error::last_os_error()))
    }
}

/// The file [`check_writable`] writes and removes, before its temporary tag and process id.
const WRITE_TEST_FILE: &str = ".ntk-write-test";

/// Removes from `dir` the empty writability probes of dead processes (a process killed
/// between [`check_writable`]'s write and its remove), only where `check_writable` writes
/// them: a file of that name elsewhere, or with contents, is not the tools' (forty-eighth
/// hostile round, D2 and N1).
fn remove_dead_write_tests(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let prefix = format!("{WRITE_TEST_FILE}{TMP_TAG}");
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let dead = name.strip_prefix(&prefix).is_some_and(|pid| {
            !pid.is_empty()
                && pid.bytes().all(|b| b.is_ascii_digit())
                && pid.parse().is_ok_and(|pid| !alive(pid))
        });
        let empty_file = entry.file_type().is_ok_and(|t| t.is_file())
            && entry.metadata().is_ok_and(|m| m.len() == 0);
        if dead && empty_file {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Fails early, before any work, when `dir` cannot be created or written.
pub fn check_writable(dir: &Path) -> crate::Result<()> {
    std::fs::create_dir_all(dir).map_err(|source| crate::Error::CreateDir {
        dir: dir.to_path_buf(),
        source,
    })?;
    // A name the tools own (`.ntk-` and the temporary tag: [`check_owned`] passes it, and a
    // dead process's is removed as a leftover, [`clean_dir`]), so that a sweep's other shard
    // checking the directory meanwhile does not take it for a stranger's file (forty-seventh
    // hostile round, D5: `.write-test-<pid>` was refused as "files that are not a run's").
    remove_dead_write_tests(dir);
    let probe = dir.join(format!("{WRITE_TEST_FILE}{TMP_TAG}{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|source| crate::Error::NotWritable {
        dir: dir.to_path_buf(),
        source,
    })?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hundred-and-fifteenth hostile round, N4: what is missing beside the files is said
    /// once, after the list.
    #[test]
    fn unproven_files_are_listed_with_one_clause() {
        let dir = tempfile::tempdir().unwrap();
        let named = |n: &str| n.ends_with(".csv");
        let beside = "with no sweep's runs/ beside it";
        fs::write(dir.path().join("a.csv"), "").unwrap();
        let e = check_proven(dir.path(), &["runs"], &named, beside).unwrap_err();
        assert!(
            e.to_string()
                .contains("(a.csv, with no sweep's runs/ beside it)"),
            "{e}"
        );
        fs::write(dir.path().join("b.csv"), "").unwrap();
        let e = check_proven(dir.path(), &["runs"], &named, beside).unwrap_err();
        assert!(
            e.to_string()
                .contains("(a.csv, b.csv; each with no sweep's runs/ beside it)"),
            "{e}"
        );
        fs::create_dir(dir.path().join("runs")).unwrap();
        check_proven(dir.path(), &["runs"], &named, beside).unwrap();
    }

    /// Forty-seventh hostile round, D5: the writability probe is the tools' own name: a
    /// directory holding a live process's is not refused as a stranger's, a dead process's is
    /// removed as a leftover, and `check_writable` leaves nothing.
    #[test]
    fn the_writability_probe_is_the_tools_own() {
        let dir = tempfile::tempdir().unwrap();
        check_writable(dir.path()).unwrap();
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
        // A live process's (pid 1 runs as long as the machine does).
        let live = format!("{WRITE_TEST_FILE}{TMP_TAG}1");
        let dead = format!("{WRITE_TEST_FILE}{TMP_TAG}4000000000");
        fs::write(dir.path().join(&live), "").unwrap();
        fs::write(dir.path().join(&dead), "").unwrap();
        fs::write(
            dir.path()
                .join(format!("{WRITE_TEST_FILE}{TMP_TAG}4000000001")),
            "mine",
        )
        .unwrap();
        check_owned(dir.path(), &|_| false).unwrap();
        // Removed only by the next check_writable there (the place it writes them), and
        // only an empty one (forty-eighth hostile round, D2 and N1).
        assert_eq!(clean_dir(dir.path(), None, &|_| false), 0);
        check_writable(dir.path()).unwrap();
        assert!(dir.path().join(&live).exists() && !dir.path().join(&dead).exists());
        assert!(
            dir.path()
                .join(format!("{WRITE_TEST_FILE}{TMP_TAG}4000000001"))
                .exists()
        );
        // The old name stays a stranger's (a user's file of that name is not ours).
        fs::write(dir.path().join(".write-test-4000000000"), "").unwrap();
        assert!(check_owned(dir.path(), &|_| false).is_err());
    }

    /// Ninety-seventh hostile round, D4: a dead writer's leftovers of another user (a
    /// temporary copy of a file, a temporary set) are theirs, never removed; this user's are.
    /// As root: the other's given to user 65534.
    #[test]
    fn another_users_leftovers_are_left() {
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return; // giving a file to another user needs root
        }
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(format!("phases.json{TMP_TAG}4000000000"));
        let set = dir.path().join(format!(".seed1{TMP_TAG}4000000000-1"));
        fs::write(&file, "theirs").unwrap();
        fs::create_dir(&set).unwrap();
        for p in [&file, &set] {
            std::os::unix::fs::chown(p, Some(65534), None).unwrap();
        }
        assert_eq!(clean_tree(dir.path(), &|f| f == "phases.json"), 0);
        assert!(file.exists() && set.exists());
        std::os::unix::fs::chown(&file, Some(0), None).unwrap();
        assert_eq!(clean_dir(dir.path(), None, &|f| f == "phases.json"), 1);
        assert!(!file.exists() && set.exists());
    }

    /// Forty-seventh hostile round, D3: an output name with no room for the names made beside
    /// it is refused by `resolve_out`, naming the limit; `NAME_MAX - NAME_MARGIN` bytes pass.
    #[test]
    fn an_output_name_leaves_room_for_the_names_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let max = name_max(dir.path());
        let fits = dir.path().join("a".repeat(max - NAME_MARGIN));
        assert_eq!(resolve_out(&fits).unwrap(), fits);
        // A path past PATH_MAX less the margin, each name short.
        let deep: PathBuf = std::iter::repeat_n("d".repeat(100), 40).collect();
        let e = resolve_out(&dir.path().join(deep)).unwrap_err().to_string();
        assert!(e.contains("(PATH_MAX)"), "{e}");
        for len in [max - NAME_MARGIN + 1, max, max + 1] {
            let e = resolve_out(&dir.path().join("a".repeat(len)))
                .unwrap_err()
                .to_string();
            assert!(
                e.contains(&format!("its name is {len} bytes"))
                    && e.contains(&format!("at most {max} bytes a name")),
                "{e}"
            );
        }
    }

    /// Twenty-third hostile round, D2: a sweep started at a set's `--out` while the set was
    /// being made is kept at the set's end; the set is not moved there.
    #[test]
    fn a_set_never_replaces_a_sweep_started_meanwhile() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("o");
        let set = OutputSet::begin(&target).unwrap();
        std::fs::write(set.path().join("summary.json"), "{}").unwrap();
        std::fs::create_dir_all(target.join(crate::lock::WRITERS_DIR)).unwrap();
        std::fs::write(target.join("results.csv"), "protocol\n").unwrap();
        let e = set.commit().unwrap_err().to_string();
        assert!(e.contains("a sweep was started there"), "{e}");
        assert!(target.join("results.csv").is_file());
        assert!(!target.join("summary.json").exists());
    }

    fn files(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    /// Ninth hostile round: the dry run's check of a place to write makes nothing; a path
    /// under a file, or an ancestor this process may not write into, is refused.
    #[test]
    fn a_place_that_cannot_be_written_is_refused_without_making_anything() {
        let dir = tempfile::tempdir().unwrap();
        let deep = dir.path().join("a/b/c");
        check_writable_unmade(&deep).unwrap();
        assert!(!dir.path().join("a").exists(), "nothing made");
        check_writable_unmade(Path::new("relative-new-dir")).unwrap();
        fs::write(dir.path().join("file"), "").unwrap();
        let err = check_writable_unmade(&dir.path().join("file/x"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("file") && err.contains("not writable"),
            "{err}"
        );
        // Without root's override, a directory without write permission.
        use std::os::unix::fs::PermissionsExt;
        let locked = dir.path().join("locked");
        fs::create_dir(&locked).unwrap();
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o555)).unwrap();
        let writable_anyway = fs::write(locked.join("probe"), "").is_ok();
        let checked = check_writable_unmade(&locked.join("out"));
        assert_eq!(checked.is_ok(), writable_anyway, "{checked:?}");
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// Ninth hostile round: what the set's move into place cannot replace is refused
    /// before any work: the working directory (`.`), a mount point (`/proc` here); an
    /// ordinary directory, an absent one and a file (refused elsewhere) pass.
    #[test]
    fn a_target_the_set_cannot_replace_is_refused_before_the_work() {
        let err = check_replaceable_target(Path::new("."))
            .unwrap_err()
            .to_string();
        assert!(err.contains("the working directory itself"), "{err}");
        let cwd = std::env::current_dir().unwrap();
        assert!(check_replaceable_target(&cwd).is_err(), "by its path too");
        if cfg!(target_os = "linux") && Path::new("/proc/self").exists() {
            let err = check_replaceable_target(Path::new("/proc"))
                .unwrap_err()
                .to_string();
            assert!(err.contains("a mount point"), "{err}");
        }
        let dir = tempfile::tempdir().unwrap();
        check_replaceable_target(dir.path()).unwrap();
        check_replaceable_target(&dir.path().join("absent")).unwrap();
        fs::write(dir.path().join("file"), "").unwrap();
        check_replaceable_target(&dir.path().join("file")).unwrap();
        // The set refuses it before it makes anything beside it.
        let before = fs::read_dir(cwd.parent().unwrap()).unwrap().count();
        let err = OutputSet::begin(Path::new(".")).unwrap_err().to_string();
        assert!(err.contains("the working directory itself"), "{err}");
        assert_eq!(fs::read_dir(cwd.parent().unwrap()).unwrap().count(), before);
    }

    /// Eighty-second hostile round, D3: a set another user made (in a directory this one may
    /// not write) was replaced, and the old set was left at its temporary path without a
    /// word. Here an immutable file (`chattr +i`, which root cannot remove either) stands for
    /// it: the commit succeeds and its warning names the place the old set is left at.
    #[test]
    fn a_replaced_set_that_cannot_be_removed_is_said() {
        use std::process::Command;
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("out");
        let set = OutputSet::begin(&target).unwrap();
        fs::write(set.path().join("a"), "1").unwrap();
        assert_eq!(
            set.commit().unwrap(),
            None,
            "nothing replaced, nothing said"
        );
        let chattr = |flag: &str| {
            Command::new("chattr")
                .arg(flag)
                .arg(target.join("a"))
                .output()
                .is_ok_and(|o| o.status.success())
        };
        assert!(
            chattr("+i"),
            "chattr +i (e2fsprogs, root, a filesystem with the flag) is needed for this test"
        );
        let set = OutputSet::begin(&target).unwrap();
        fs::write(set.path().join("a"), "2").unwrap();
        let warning = set.commit();
        let left: Vec<PathBuf> = fs::read_dir(root.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.file_name().unwrap().to_string_lossy().contains(TMP_TAG))
            .collect();
        for dir in &left {
            Command::new("chattr")
                .arg("-i")
                .arg(dir.join("a"))
                .output()
                .unwrap();
        }
        let warning = warning.unwrap().expect("said");
        assert_eq!(fs::read_to_string(target.join("a")).unwrap(), "2");
        assert_eq!(left.len(), 1, "{left:?}");
        assert!(
            warning.contains("the set this run replaced was not removed")
                && warning.contains(&left[0].display().to_string()),
            "{warning}"
        );
    }

    #[test]
    fn commit_creates_then_replaces_the_whole_set() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("out");
        let set = OutputSet::begin(&target).unwrap();
        fs::write(set.path().join("a"), "1").unwrap();
        fs::write(set.path().join("b"), "1").unwrap();
        set.commit().unwrap();
        assert_eq!(files(&target), ["a", "b"]);
        let set = OutputSet::begin(&target).unwrap();
        fs::write(set.path().join("a"), "2").unwrap();
        set.commit().unwrap();
        // b of the old set is gone with it: never a mix.
        assert_eq!(files(&target), ["a"]);
        assert_eq!(fs::read_to_string(target.join("a")).unwrap(), "2");
        assert_eq!(files(root.path()), ["out"]);
    }

    #[test]
    fn an_uncommitted_set_leaves_the_old_one_intact() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("out");
        fs::create_dir(&target).unwrap();
        fs::write(target.join("a"), "old").unwrap();
        {
            let set = OutputSet::begin(&target).unwrap();
            fs::write(set.path().join("a"), "new").unwrap();
            // dropped: an error on the way
        }
        assert_eq!(fs::read_to_string(target.join("a")).unwrap(), "old");
        assert_eq!(files(root.path()), ["out"]);
    }

    #[test]
    fn cleaning_spares_live_writers_and_what_is_not_ours() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("out");
        let live = OutputSet::begin(&target).unwrap();
        // A dead writer's set: its lock file exists but nobody holds it.
        let dead = root.path().join(".out.ntk-tmp-1-2");
        fs::create_dir(&dead).unwrap();
        fs::write(lock_path_of(&dead), "").unwrap();
        // A dead process's atomic_write leftover, and a live one's (ours).
        let sub = root.path().join("sub");
        fs::create_dir(&sub).unwrap();
        fs::write(sub.join("summary.json.ntk-tmp-4000000000"), "").unwrap();
        let mine = format!("summary.json.ntk-tmp-{}", std::process::id());
        fs::write(sub.join(&mine), "").unwrap();
        // Someone else's files of the same shapes, in a directory a user chose.
        fs::write(root.path().join("notes.txt.ntk-tmp-4000000000"), "").unwrap();
        fs::write(root.path().join("draft.partial"), "").unwrap();
        let other = root.path().join(".other.ntk-tmp-1-2");
        fs::create_dir(&other).unwrap();
        // A user's hidden directories of similar shapes: no lock file, or no tag; or the
        // tools' shape with the user's text at its lock's name (forty-second hostile round,
        // N1: both were removed).
        let users = [
            ".out.tmp-old",
            ".out.ntk-tmp-3-4",
            ".out.ntk-tmp-v2",
            ".out.ntk-tmp-5-6",
        ];
        for u in users {
            fs::create_dir(root.path().join(u)).unwrap();
        }
        let texted = lock_path_of(&root.path().join(".out.ntk-tmp-5-6"));
        fs::write(&texted, "my lock notes").unwrap();
        // Flat, for the target `out` and our file names only.
        let ours = |f: &str| f == "summary.json";
        assert_eq!(clean_dir(root.path(), Some("out"), &ours), 1);
        for u in users {
            assert!(root.path().join(u).is_dir(), "{u} was removed");
            fs::remove_dir(root.path().join(u)).unwrap();
        }
        assert!(live.path().exists() && !dead.exists() && other.exists());
        assert_eq!(fs::read_to_string(&texted).unwrap(), "my lock notes");
        fs::remove_file(&texted).unwrap();
        assert!(root.path().join("notes.txt.ntk-tmp-4000000000").exists());
        assert_eq!(clean_dir(&sub, None, &ours), 1);
        assert_eq!(files(&sub), std::slice::from_ref(&mine));
        // A tree the tools own: every stale file of theirs goes, the live writer's files and
        // a user's that merely look stale stay (twenty-eighth hostile round, D3), and a
        // `.partial` of a name the tools write, which none of them leaves (forty-third, D1).
        fs::write(sub.join("model.ntk-tmp-4000000000"), "").unwrap();
        fs::write(sub.join("model.partial"), "").unwrap();
        fs::write(sub.join("mine.npy.ntk-tmp-4000000000"), "").unwrap();
        fs::write(sub.join("mine.partial"), "").unwrap();
        let tools = |f: &str| f == "model" || f == "summary.json";
        assert_eq!(clean_tree(&sub, &tools), 1);
        let mut left = vec![
            mine,
            "mine.npy.ntk-tmp-4000000000".to_string(),
            "mine.partial".to_string(),
            "model.partial".to_string(),
        ];
        left.sort();
        let mut got = files(&sub);
        got.sort();
        assert_eq!(got, left);
        live.commit().unwrap();
        assert!(root.path().join("out").is_dir());
    }

    /// A tiled probe run's phase directory is one the tools made: nothing goes inside it,
    /// at any depth (twentieth hostile round, D1); a user's `phases.json` makes no directory
    /// the tools'.
    #[test]
    fn a_phase_directory_takes_no_output() {
        let dir = tempfile::tempdir().unwrap();
        let phases = dir.path().join(".run.phases");
        fs::create_dir_all(phases.join("sub")).unwrap();
        fs::write(
            phases.join("phases.json"),
            "{\"owner\": \"ntk-probe phase files, format 2\"}",
        )
        .unwrap();
        for out in [
            phases.join("g"),
            phases.join("sub/g"),
            phases.join("b.json"),
        ] {
            let e = check_not_inside_made(&out).unwrap_err().to_string();
            assert!(e.contains("phase files"), "{e}");
        }
        let mine = dir.path().join("mine");
        fs::create_dir_all(&mine).unwrap();
        fs::write(mine.join("phases.json"), "{\"phase\": 1}").unwrap();
        assert!(check_not_inside_made(&mine.join("g")).is_ok());
    }

    #[test]
    fn out_paths_follow_links_and_refuse_what_would_lose_the_output() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("scratch");
        fs::create_dir(&target).unwrap();
        let link = root.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert_eq!(
            resolve_out(&link).unwrap(),
            fs::canonicalize(&target).unwrap()
        );
        let dangling = root.path().join("dangling");
        std::os::unix::fs::symlink(root.path().join("gone"), &dangling).unwrap();
        let e = resolve_out(&dangling).unwrap_err().to_string();
        assert!(
            e.contains("dangling") && e.contains("cannot be reached"),
            "{e}"
        );
        assert!(resolve_out(Path::new("/")).is_err());
        let file = root.path().join("file");
        fs::write(&file, "").unwrap();
        assert!(resolve_out(&file).is_err());
        let new = root.path().join("new");
        assert_eq!(resolve_out(&new).unwrap(), new);
        // Ownership: the tools' hidden entries pass, a user's file is named.
        fs::write(target.join("summary.json"), "").unwrap();
        fs::write(target.join(".ntk-lock"), "").unwrap();
        check_owned(&target, &|n| n == "summary.json").unwrap();
        fs::write(target.join("config.toml"), "").unwrap();
        let e = check_owned(&target, &|n| n == "summary.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("config.toml"), "{e}");
    }

    /// A symbolic link at an output's name is refused, naming its target, and the file it
    /// leads to is left as it is (sixth hostile round: ntk-train wrote `ntk.csv` through a
    /// link to the run's own labels).
    #[test]
    fn a_link_at_an_output_name_is_not_the_tools_own() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("out");
        fs::create_dir(&out).unwrap();
        let labels = root.path().join("y.npy");
        fs::write(&labels, "labels").unwrap();
        std::os::unix::fs::symlink(&labels, out.join("ntk.csv")).unwrap();
        let e = check_owned(&out, &|n| n == "ntk.csv")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("ntk.csv, a symbolic link to") && e.contains("y.npy"),
            "{e}"
        );
        assert_eq!(fs::read_to_string(&labels).unwrap(), "labels");
    }
}
