//! The files of a result set beside its summary, recorded by size and SHA-256 when the set is
//! written ([`record`]) and checked before the set is kept as done ([`verify`]: a probe's
//! `--resume`, a sweep's finished point): a file missing, replaced (a FIFO, a directory),
//! resized or changed means the set is no longer what its run wrote, and it is not kept
//! (thirty-eighth hostile round, D3: a probe's set whose `ntk.npy` was removed, or replaced by
//! text, a FIFO or 3 GB of zeros, was kept as done, exit 0). Summaries written before the
//! record existed hold none, and are kept on their provenance alone, as before.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// One file of a set: its size and SHA-256 when its run wrote it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRecord {
    /// Its size in bytes.
    pub bytes: u64,
    /// Its SHA-256, lowercase hex.
    pub sha256: String,
}

/// A set's files by name (plain names in the set's directory).
pub type Files = BTreeMap<String, FileRecord>;

/// The SHA-256 (lowercase hex) of the `bytes` bytes of the regular file at `path`, read in
/// chunks (a set's kernel may be a gigabyte); an error where it holds other than `bytes`.
fn sha256_file(path: &Path, bytes: u64) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    let mut read = 0u64;
    loop {
        let got = file.read(&mut buffer)?;
        if got == 0 {
            break;
        }
        read += got as u64;
        if read > bytes {
            break;
        }
        hasher.update(&buffer[..got]);
    }
    if read != bytes {
        return Err(std::io::Error::other(format!(
            "holds {read} bytes or more where {bytes} were expected"
        )));
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// Whether the file `name` in `dir` is the one `files` records: a regular file (not through
/// a symbolic link) of the recorded size and SHA-256. A set's own file, as its run wrote
/// it, is told apart from a user's file of the same name this way.
pub fn holds_as_recorded(dir: &Path, name: &str, files: &Files) -> bool {
    let Some(recorded) = files.get(name) else {
        return false;
    };
    let path = dir.join(name);
    std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file() && m.len() == recorded.bytes)
        && sha256_file(&path, recorded.bytes).is_ok_and(|sha| sha == recorded.sha256)
}

/// The records of those of `names` that are regular files in `dir` (a set's optional files
/// absent are left out), for the summary written after them.
pub fn record(dir: &Path, names: &[&str]) -> std::io::Result<Files> {
    let mut files = Files::new();
    for name in names {
        let path = dir.join(name);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        let sha256 = sha256_file(&path, meta.len())
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        files.insert(
            (*name).to_string(),
            FileRecord {
                bytes: meta.len(),
                sha256,
            },
        );
    }
    Ok(files)
}

/// Checks that `dir` holds the set `files` records as it was written: every recorded file a
/// regular file of its size and SHA-256, and none of the set's other `names` (the files a set
/// of its kind may hold beside its summary) that the record leaves out (thirty-ninth hostile
/// round, D1: weights copied into a set made without them were kept, as was an `ntk.npy`
/// whose entry was taken out of the record). A record is never empty (a set has at least
/// its eigenvalues) and names only those `names`. The error names the file and what
/// differs, and `summary` (the file that recorded them), and says whether the record itself
/// is the fault ([`Fault`]).
pub fn verify(dir: &Path, files: &Files, names: &[&str], summary: &Path) -> Result<(), Mismatch> {
    if files.is_empty() {
        return Err(Mismatch::record(format!(
            "{}: records no files (`files` is empty), which no run writes: the set is not as \
             its run wrote it",
            summary.display()
        )));
    }
    for (name, recorded) in files {
        // A recorded name is one of the set's, never a path out of it.
        if !names.contains(&name.as_str()) {
            return Err(Mismatch::record(format!(
                "{}: records the file {name:?}, which is not a file name of its set ({})",
                summary.display(),
                names.join(", ")
            )));
        }
        let path = dir.join(name);
        let differs = |what: String| {
            format!(
                "{}: {what}: the set is not as its run wrote it",
                path.display()
            )
        };
        let written = format!(
            "where {} recorded a file of {} bytes",
            summary.display(),
            recorded.bytes
        );
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Mismatch::file(differs(format!("missing, {written}"))));
            }
            Err(e) => {
                return Err(Mismatch::file(unchecked(
                    &path, e, summary, &written, &differs,
                )));
            }
        };
        if !meta.is_file() {
            return Err(Mismatch::file(differs(format!(
                "not a regular file (a FIFO, a directory, a link or a device), {written}"
            ))));
        }
        // A file of another content: it changed, or the record is another run's (a sealed
        // summary copied in from a run of the same config differs from this one's only in
        // its tables; hundred-and-forty-ninth hostile round, D1: the intact table was blamed).
        let either = format!(
            "either the file changed after its run, or {} is another run's, copied in",
            summary.display()
        );
        if meta.len() != recorded.bytes {
            return Err(Mismatch::file(differs(format!(
                "holds {} bytes, {written} ({either})",
                meta.len()
            ))));
        }
        match sha256_file(&path, recorded.bytes) {
            Ok(sha) if sha == recorded.sha256 => {}
            Ok(_) => {
                return Err(Mismatch::file(differs(format!(
                    "its SHA-256 differs from the one {} recorded ({either})",
                    summary.display()
                ))));
            }
            Err(e) => {
                return Err(Mismatch::file(unchecked(
                    &path, e, summary, &written, &differs,
                )));
            }
        }
    }
    match unrecorded(dir, files, names, summary) {
        Some(why) => Err(Mismatch::file(format!(
            "{why}: the set is not as its run wrote it"
        ))),
        None => Ok(()),
    }
}

/// Where [`verify`] found a set unlike its record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The record itself: it records no files, or a name that is not one of its set's.
    Record,
    /// A file: one it records is missing, replaced, resized, changed or unreadable, or one
    /// of the set's names that it leaves out is there.
    File,
}

/// [`verify`]'s finding: what is unlike the record, said for the user (the file or the
/// summary named), and where the fault lies.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Mismatch {
    /// The record itself or one of the files.
    pub fault: Fault,
    /// What differs, naming the file (or the summary, for the record's own faults).
    pub message: String,
}

impl Mismatch {
    fn record(message: String) -> Self {
        Self {
            fault: Fault::Record,
            message,
        }
    }

    fn file(message: String) -> Self {
        Self {
            fault: Fault::File,
            message,
        }
    }
}

/// Whether the run or point directories `a` and `b` hold the same `summary.json`, byte for
/// byte (each a regular file of at most 1 MiB, links not followed): the one is a copy of the
/// other, not a renamed run (hundred-and-fiftieth hostile round, second review, N1).
pub fn same_summary(a: &Path, b: &Path) -> bool {
    let summary = |d: &Path| {
        let path = d.join("summary.json");
        std::fs::symlink_metadata(&path)
            .is_ok_and(|m| m.is_file() && m.len() <= 1 << 20)
            .then(|| std::fs::read(&path).ok())
            .flatten()
    };
    summary(a).is_some_and(|ours| summary(b).is_some_and(|theirs| ours == theirs))
}

/// The first of the set's `names` in `dir` that `files` (the record of `summary`) leaves
/// out but that is there: its run did not write it, so it is not the tools' (a user's file
/// at one of their names). Said as "PATH: a file of the set's that SUMMARY does not record
/// (its run did not write it)"; `None` when there is none.
pub fn unrecorded(dir: &Path, files: &Files, names: &[&str], summary: &Path) -> Option<String> {
    let path = names
        .iter()
        .filter(|n| !files.contains_key(**n))
        .map(|n| dir.join(n))
        .find(|p| std::fs::symlink_metadata(p).is_ok())?;
    Some(format!(
        "{}: a file of the set's that {} does not record (its run did not write it)",
        path.display(),
        summary.display()
    ))
}

/// The error for a recorded file at `path` that cannot be read (`e`): one this user may not
/// read is said as such, the set unchecked, not as one unlike its record (ninety-eighth
/// hostile round, D2: a set as written, made unreadable to this user, was called "not as its
/// run wrote it"); any other error as `differs` says it.
fn unchecked(
    path: &Path,
    e: std::io::Error,
    summary: &Path,
    written: &str,
    differs: &dyn Fn(String) -> String,
) -> String {
    if e.kind() == std::io::ErrorKind::PermissionDenied {
        format!(
            "{}: this user may not read it ({e}), so the set cannot be checked against {} \
             until the file is made readable to this user",
            path.display(),
            summary.display()
        )
    } else {
        differs(format!("cannot be read ({e}), {written}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A set's files as written verify; each way of breaking one is named: removed, resized,
    /// changed in place, replaced by a directory or a FIFO; a recorded name that leaves the
    /// directory is refused without reading it.
    #[test]
    fn a_set_verifies_until_a_file_changes() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("a.npy"), b"0123456789").unwrap();
        std::fs::write(d.join("b.csv"), vec![7u8; 3 << 20]).unwrap();
        let files = record(d, &["a.npy", "b.csv", "absent.npy"]).unwrap();
        assert_eq!(files.len(), 2);
        assert_eq!(files["a.npy"].bytes, 10);
        assert_eq!(
            files["a.npy"].sha256,
            crate::provenance::sha256_hex(b"0123456789")
        );
        assert_eq!(
            files["b.csv"].sha256,
            crate::provenance::sha256_hex(&vec![7u8; 3 << 20])
        );
        let summary = d.join("summary.json");
        let names = ["a.npy", "b.csv", "absent.npy", "extra.npy"];
        assert_eq!(verify(d, &files, &names, &summary), Ok(()));
        let fails_at = |files: &Files, fault: Fault, words: &[&str]| {
            let e = verify(d, files, &names, &summary).unwrap_err();
            assert_eq!(e.fault, fault, "{e}");
            assert_eq!(e.to_string(), e.message);
            for w in words {
                assert!(e.message.contains(w), "{w:?} not in {e}");
            }
        };
        let fails = |files: &Files, words: &[&str]| fails_at(files, Fault::File, words);
        std::fs::write(d.join("a.npy"), b"0123456780").unwrap();
        fails(
            &files,
            &["a.npy", "its SHA-256 differs", "not as its run wrote it"],
        );
        std::fs::write(d.join("a.npy"), b"hello\n").unwrap();
        fails(
            &files,
            &["a.npy: holds 6 bytes", "recorded a file of 10 bytes"],
        );
        std::fs::remove_file(d.join("a.npy")).unwrap();
        fails(&files, &["a.npy: missing"]);
        std::fs::create_dir(d.join("a.npy")).unwrap();
        fails(&files, &["not a regular file"]);
        std::fs::remove_dir(d.join("a.npy")).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(d.join("a.npy"))
            .status()
            .unwrap();
        assert!(made.success());
        fails(&files, &["not a regular file"]);
        let mut outside = Files::new();
        outside.insert("../x".into(), files["b.csv"].clone());
        fails_at(
            &outside,
            Fault::Record,
            &["\"../x\"", "not a file name of its set"],
        );
        let mut own = Files::new();
        own.insert("summary.json".into(), files["b.csv"].clone());
        fails_at(
            &own,
            Fault::Record,
            &["\"summary.json\"", "not a file name of its set"],
        );
        fails_at(&Files::new(), Fault::Record, &["records no files"]);
        // A file of the set's that the record leaves out.
        std::fs::remove_file(d.join("a.npy")).unwrap();
        std::fs::write(d.join("a.npy"), b"0123456789").unwrap();
        std::fs::write(d.join("extra.npy"), b"x").unwrap();
        fails(
            &files,
            &["extra.npy: a file of the set's", "does not record"],
        );
        let mut dropped = files.clone();
        dropped.remove("a.npy");
        std::fs::remove_file(d.join("extra.npy")).unwrap();
        fails(&dropped, &["a.npy: a file of the set's"]);
    }
}
