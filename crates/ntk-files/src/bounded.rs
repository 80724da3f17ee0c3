//! A file a run is given beside its config (a model's weights, an ONNX file, a list of
//! blocks), read as a run may read it: a regular file (a link to one followed; a FIFO, a
//! device or a directory refused without waiting on it: it is opened with `O_NONBLOCK` and
//! never read), no larger than what the run can use, read once ([`read_bounded`]). The
//! caller names the key and says what the bytes hold ([`Unreadable`] is the reason only).

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Why a given file was not read; its text is the reason, for the caller's message naming
/// the key and the path.
#[derive(Debug, thiserror::Error)]
pub enum Unreadable {
    /// It cannot be opened or read.
    #[error("cannot read: {0}")]
    Io(#[source] std::io::Error),
    /// A directory, a FIFO or a device.
    #[error("not a regular file (a directory, a FIFO or a device); name a file")]
    NotRegular,
    /// Larger than the limit.
    #[error("{len} bytes, more than this run can use ({limit} bytes: {needs})")]
    TooLarge { len: u64, limit: u64, needs: String },
    /// It grew beyond the limit while it was read.
    #[error("grew beyond {limit} bytes while read (more than this run can use for {needs})")]
    Grew { limit: u64, needs: String },
}

/// The bytes of `path`: a regular file of at most `limit` bytes (`needs` says what they
/// hold, for the message), read once.
pub fn read_bounded(path: &Path, limit: u64, needs: &str) -> Result<Vec<u8>, Unreadable> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(Unreadable::Io)?;
    let meta = file.metadata().map_err(Unreadable::Io)?;
    if !meta.is_file() {
        return Err(Unreadable::NotRegular);
    }
    if meta.len() > limit {
        return Err(Unreadable::TooLarge {
            len: meta.len(),
            limit,
            needs: needs.to_string(),
        });
    }
    let Some(mut bytes) = usize::try_from(meta.len())
        .ok()
        .and_then(crate::io::try_buffer)
    else {
        return Err(Unreadable::Io(std::io::Error::new(
            std::io::ErrorKind::OutOfMemory,
            format!("{} bytes, more than this process can allocate", meta.len()),
        )));
    };
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(Unreadable::Io)?;
    if bytes.len() as u64 > limit {
        return Err(Unreadable::Grew {
            limit,
            needs: needs.to_string(),
        });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_a_directory_and_a_large_file_are_refused_a_small_one_read() {
        assert!(matches!(
            read_bounded(Path::new("/dev/zero"), 10, "x"),
            Err(Unreadable::NotRegular)
        ));
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            read_bounded(dir.path(), 10, "x"),
            Err(Unreadable::NotRegular)
        ));
        let f = dir.path().join("f");
        std::fs::write(&f, b"0123456789ab").unwrap();
        let e = read_bounded(&f, 10, "ten bytes").unwrap_err().to_string();
        assert_eq!(
            e,
            "12 bytes, more than this run can use (10 bytes: ten bytes)"
        );
        assert_eq!(read_bounded(&f, 12, "x").unwrap(), b"0123456789ab");
        assert!(matches!(
            read_bounded(&dir.path().join("absent"), 10, "x"),
            Err(Unreadable::Io(_))
        ));
    }
}
