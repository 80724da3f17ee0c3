//! Atomic file writes: the bytes go to a temporary file beside the target, are synced, and
//! are renamed over it, so a reader never sees a half-written file and an interrupted
//! write leaves the previous version intact.
//!
//! A rename replaces whatever the target is, so the target is checked first
//! ([`check_target`]): only a regular file this process's user owns, or nothing, is ever
//! replaced. A device (`/dev/null`, `/dev/full`), a FIFO, a socket, a directory or another
//! user's file is refused with an [`UnsafeTarget`], and so is a symbolic link to one; a
//! symbolic link to a regular file is followed (the file is replaced, the link stays).

use crate::shown::Shown;
use std::fs;
use std::io::Write;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// Why a path may not be replaced by a file the tools write.
#[derive(Debug, thiserror::Error)]
pub enum UnsafeTarget {
    /// Something other than a regular file (a device, a FIFO, ...), or a link to one.
    #[error(
        "{}: is {what}{}, not a regular file; refusing to replace it (choose a file path)",
        .path.shown(),
        .link.as_ref().map(|l| format!(" (through the symbolic link {})", l.shown())).unwrap_or_default()
    )]
    NotAFile {
        path: PathBuf,
        what: &'static str,
        link: Option<PathBuf>,
    },
    /// A regular file that another user owns.
    #[error(
        "{}: a file of user {owner}, not this user's ({me}); refusing to replace it",
        .path.shown()
    )]
    NotOurs { path: PathBuf, owner: u32, me: u32 },
    /// A symbolic link at a place a command writes again in an output of its own (a sweep's
    /// table, a run's file: [`crate::places::Rule::Replaced`]), which it never writes
    /// through: the link is not its own, and its target may be anyone's file.
    #[error(
        "{}: is a symbolic link to {}; a file the tools write again in their own output is \
         never written through a link (remove the link, or choose another --out)",
        .path.shown(),
        .target.shown()
    )]
    Link { path: PathBuf, target: PathBuf },
    /// A symbolic link whose target cannot be reached.
    #[error("{}: a symbolic link whose target cannot be reached ({reason}); the output would be lost", .path.shown())]
    Dangling { path: PathBuf, reason: String },
}

impl From<UnsafeTarget> for std::io::Error {
    fn from(e: UnsafeTarget) -> Self {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, e)
    }
}

/// The kind of a file that is not a regular file, in words ("a FIFO (named pipe)", ...).
pub fn kind_of(t: fs::FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_symlink() {
        "a symbolic link"
    } else {
        "a special file"
    }
}

/// The path a file written to `path` replaces, checked: `path` itself when it does not
/// exist or is a regular file of this user, the file a symbolic link at `path` leads to
/// when that is one; an [`UnsafeTarget`] for anything else. Call it before the work whose
/// result goes there, so that a bad path fails first; [`replace_file`] checks again.
pub fn check_target(path: &Path) -> Result<PathBuf, UnsafeTarget> {
    let Ok(meta) = fs::symlink_metadata(path) else {
        return Ok(path.to_path_buf());
    };
    let (resolved, meta, link) = if meta.file_type().is_symlink() {
        let dangling = |reason: String| UnsafeTarget::Dangling {
            path: path.to_path_buf(),
            reason,
        };
        let target = fs::canonicalize(path).map_err(|e| dangling(e.to_string()))?;
        let meta = fs::metadata(&target).map_err(|e| dangling(e.to_string()))?;
        (target, meta, Some(path.to_path_buf()))
    } else {
        (path.to_path_buf(), meta, None)
    };
    if !meta.file_type().is_file() {
        return Err(UnsafeTarget::NotAFile {
            path: resolved,
            what: kind_of(meta.file_type()),
            link,
        });
    }
    if let Some((owner, me)) = not_ours(&meta) {
        return Err(UnsafeTarget::NotOurs {
            path: resolved,
            owner,
            me,
        });
    }
    Ok(resolved)
}

pub use crate::owner::not_ours;

/// The bytes of `path`, a file these tools wrote in an output directory (a summary, a
/// table, a checkpoint, a pointer), read as `std::fs::read` reads it, except that anything
/// but a regular file (a link to one followed) is an error at once: a FIFO, a device or a
/// directory in its place is opened without waiting on it and never read (eighth hostile
/// round: a FIFO at a run's metrics.csv or checkpoint.json, or a sweep's theory.json, made
/// collect and --resume wait forever); and a file larger than this process can allocate is
/// an error before it is read (thirty-sixth hostile round, D3: a 3 GB file under `ulimit -v`
/// ended in an out-of-memory message that named no file). Text files are read with a cap
/// ([`read_to_string`], [`read_limited`] with [`TEXT_LIMIT`]).
pub fn read(path: impl AsRef<Path>) -> std::io::Result<Vec<u8>> {
    read_limited(path, u64::MAX)
}

/// The most bytes a text file these tools write (a table, a summary, a checkpoint's or a
/// cache's JSON, a pointer) may have when read back: far above any they write (a sweep's
/// summary.csv of 100,000 points is about 50 MB), so that a file in its place that is not
/// theirs (a sparse 3 GB file: thirty-sixth hostile round, D3) is refused by its size before
/// it is read, and what is read, parsed, fits beside a run's own memory.
pub const TEXT_LIMIT: u64 = 256 << 20;

/// [`read`] of a file of at most `limit` bytes: a larger one is an error naming its size and
/// the limit, before anything is read.
pub fn read_limited(path: impl AsRef<Path>, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let path = path.as_ref();
    use std::os::unix::fs::OpenOptionsExt;
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a FIFO, a device or a directory), which these tools never \
             write there",
        ));
    }
    let len = meta.len();
    if len > limit {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "{len} bytes, more than any file these tools write there ({limit} bytes at \
                 most): not this run's file"
            ),
        ));
    }
    let Some(mut bytes) = usize::try_from(len).ok().and_then(try_buffer) else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::OutOfMemory,
            format!("{len} bytes, more than this process can allocate"),
        ));
    };
    // At most the limit (and one byte more, to see a file that grew past it).
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("grew beyond {limit} bytes while read: not this run's file"),
        ));
    }
    Ok(bytes)
}

std::thread_local! {
    /// Whether this thread is inside [`try_buffer`]'s reservation.
    static FALLIBLE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether an allocation on this thread may fail without ending the process: inside
/// [`try_buffer`], a global allocator that ends the process when an allocation fails
/// (`ntk_cli::oom::ExitOnOom`) returns null instead, so that the reservation sees the
/// failure and the caller can name the file (thirty-seventh hostile round, D2: a 3 GB
/// checkpoint file under `ulimit -v` ended in the allocator's message, which names none).
pub fn allocation_may_fail() -> bool {
    FALLIBLE.with(|f| f.get())
}

/// `f()`, with [`allocation_may_fail`] true while it runs (on this thread): for a fallible
/// reservation ([`try_buffer`]) and nothing else, since an allocation that fails inside it
/// returns null to whatever asked.
pub fn fallibly<T>(f: impl FnOnce() -> T) -> T {
    FALLIBLE.with(|flag| flag.set(true));
    let out = f();
    FALLIBLE.with(|flag| flag.set(false));
    out
}

/// An empty buffer with room for `n` bytes, or `None` where they cannot be allocated.
pub fn try_buffer(n: usize) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    fallibly(|| bytes.try_reserve_exact(n).is_ok()).then_some(bytes)
}

/// [`read`] as text of at most [`TEXT_LIMIT`] bytes (`std::fs::read_to_string`'s error for
/// bytes that are not UTF-8).
pub fn read_to_string(path: impl AsRef<Path>) -> std::io::Result<String> {
    String::from_utf8(read_limited(path, TEXT_LIMIT)?)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error()))
}

/// Renames the temporary file `tmp` over `path` after [`check_target`]: a symbolic link to
/// a regular file is followed (its target is replaced); anything else but a regular file of
/// this user, or nothing, is refused and `tmp` is left for the caller to remove.
pub fn replace_file(tmp: &Path, path: &Path) -> std::io::Result<()> {
    let target = check_target(path)?;
    fs::rename(tmp, target)
}

/// Creates the directory `dir` if needed and writes `bytes` to `dir/name` atomically
/// ([`atomic_write`]); an error names the directory it could not create, or the file it
/// could not write (twenty-fifth hostile round, N4: a full disk named the directory alone).
pub fn write_into(dir: &Path, name: &str, bytes: &[u8]) -> crate::Result<()> {
    fs::create_dir_all(dir).map_err(|source| crate::Error::Write {
        path: dir.to_path_buf(),
        source,
    })?;
    let path = dir.join(name);
    atomic_write(&path, bytes).map_err(|source| crate::Error::Write { path, source })
}

/// Writes `bytes` to `path` atomically (write to `path.ntk-tmp-<pid>`, fsync, rename with
/// [`replace_file`]); a `path` that is not a regular file of this user is refused before
/// anything is written.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    atomic_write_with(path, |w| w.write_all(bytes))
}

/// [`atomic_write`] of what `write` streams into the file (through a 1 MiB buffer): large
/// arrays go to the file without first being serialized whole in memory.
pub fn atomic_write_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let path = &check_target(path)?;
    let file_name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("path has no file name"))?;
    let mut tmp_name = file_name.to_os_string();
    tmp_name.push(format!("{}{}", crate::outset::TMP_TAG, std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    // The file is made beside its target: where that is refused, the directory is what
    // cannot be written, not the target (hundred-and-fortieth hostile round, second review,
    // D2: a writable sweep.csv in a read-only directory was "Permission denied").
    let beside = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::PermissionDenied if fs::symlink_metadata(&tmp).is_err() => {
            std::io::Error::new(
                e.kind(),
                format!(
                    "its directory is not writable (a file is written beside its target, then \
                 moved into place): {e}"
                ),
            )
        }
        _ => e,
    };
    let result = (|| {
        let created = fs::File::create(&tmp).map_err(beside)?;
        let mut file = std::io::BufWriter::with_capacity(1 << 20, created);
        write(&mut file)?;
        let file = file.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        replace_file(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    /// A text file beyond [`super::TEXT_LIMIT`] (a sparse 3 GB file in a table's place:
    /// thirty-sixth hostile round, D3) is refused by its size before it is read, the message
    /// saying how large it is; one within the limit is read; [`super::read`] has no limit.
    /// The hundred-and-sixth hostile round, D3: run as another user, `plot` refused a file
    /// of root's in a directory whose name holds a newline with the newline raw; every
    /// refusal of a place to write names its path escaped.
    #[test]
    fn a_refused_target_names_its_path_escaped() {
        use std::path::PathBuf;
        let path = PathBuf::from("a/d\x1b[31m\t\nq/f.pdf");
        for e in [
            super::UnsafeTarget::NotOurs {
                path: path.clone(),
                owner: 0,
                me: 65534,
            },
            super::UnsafeTarget::Link {
                path: path.clone(),
                target: path.clone(),
            },
            super::UnsafeTarget::NotAFile {
                path: path.clone(),
                what: "a FIFO",
                link: Some(path.clone()),
            },
        ] {
            let said = e.to_string();
            assert!(said.contains("a/d\\u{1b}[31m\\t\\nq/f.pdf"), "{said}");
            assert!(!said.contains('\n') && !said.contains('\t'), "{said:?}");
        }
    }

    #[test]
    fn a_reservation_beyond_the_address_space_is_none() {
        assert!(super::try_buffer(usize::MAX / 2).is_none());
        assert!(!super::allocation_may_fail());
        assert_eq!(super::try_buffer(16).map(|b| b.capacity()), Some(16));
    }

    #[test]
    fn a_text_file_beyond_the_limit_is_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("fig1.csv");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(super::TEXT_LIMIT + 1).unwrap();
        let start = std::time::Instant::now();
        let e = super::read_to_string(&big).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
        assert!(
            e.to_string()
                .contains(&format!("{} bytes", super::TEXT_LIMIT + 1)),
            "{e}"
        );
        assert!(start.elapsed().as_secs() < 5, "read before it was refused");
        std::fs::write(&big, "a,b\n1,2\n").unwrap();
        assert_eq!(super::read_to_string(&big).unwrap(), "a,b\n1,2\n");
        let e = super::read_limited(&big, 3).unwrap_err().to_string();
        assert!(e.contains("8 bytes, more than any file"), "{e}");
        assert_eq!(super::read(&big).unwrap().len(), 8);
    }

    #[test]
    fn a_fifo_a_device_or_a_directory_is_refused_unread_a_file_read() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("metrics.csv");
        mkfifo(&fifo);
        for p in [fifo.as_path(), dir.path(), Path::new("/dev/zero")] {
            let e = super::read(p).unwrap_err();
            assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{p:?}: {e}");
        }
        let f = dir.path().join("f");
        fs::write(&f, "ok").unwrap();
        assert_eq!(super::read_to_string(&f).unwrap(), "ok");
        assert_eq!(
            super::read(dir.path().join("gone")).unwrap_err().kind(),
            std::io::ErrorKind::NotFound
        );
    }

    use super::*;
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;

    fn mkfifo(path: &Path) {
        let c = CString::new(path.as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }

    #[test]
    fn a_fifo_a_device_a_directory_or_a_link_to_one_is_never_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        mkfifo(&fifo);
        let link_to_fifo = dir.path().join("to-pipe");
        std::os::unix::fs::symlink(&fifo, &link_to_fifo).unwrap();
        let link_to_null = dir.path().join("to-null");
        std::os::unix::fs::symlink("/dev/null", &link_to_null).unwrap();
        let sub = dir.path().join("sub");
        fs::create_dir(&sub).unwrap();
        for (path, words) in [
            (&fifo, "FIFO"),
            (&link_to_fifo, "FIFO"),
            (&link_to_null, "character device"),
            (&sub, "a directory"),
        ] {
            let e = atomic_write(path, b"x").unwrap_err();
            assert!(e.to_string().contains(words), "{}: {e}", path.display());
        }
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        assert!(fs::symlink_metadata(&link_to_fifo).unwrap().is_symlink());
        assert!(fs::symlink_metadata(&link_to_null).unwrap().is_symlink());
        // Nothing left behind.
        let left: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 4);
        let e = atomic_write(Path::new("/dev/null"), b"x").unwrap_err();
        assert!(e.to_string().contains("character device"), "{e}");
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink(dir.path().join("nowhere/x"), &dangling).unwrap();
        assert!(atomic_write(&dangling, b"x").is_err());
    }

    #[test]
    fn a_regular_file_or_a_link_to_one_is_replaced_and_the_link_stays() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.json");
        atomic_write(&file, b"1").unwrap();
        atomic_write(&file, b"2").unwrap();
        assert_eq!(fs::read(&file).unwrap(), b"2");
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        atomic_write(&link, b"3").unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(fs::read(&file).unwrap(), b"3");
    }
}
