//! Atomic file writes: the bytes go to a temporary file beside the target, are synced, and
//! are renamed over it, so a reader never sees a half-written file and an interrupted
//! write leaves the previous version intact.

use std::fs;
use std::io::Write;
use std::path::Path;

/// Creates the directory `dir` if needed and writes `bytes` to `dir/name` atomically
/// ([`atomic_write`]); an error names the directory.
pub fn write_into(dir: &Path, name: &str, bytes: &[u8]) -> crate::Result<()> {
    fs::create_dir_all(dir)
        .and_then(|()| atomic_write(&dir.join(name), bytes))
        .map_err(|source| crate::Error::Write {
            path: dir.to_path_buf(),
            source,
        })
}

/// Writes `bytes` to `path` atomically (write to `path.ntk-tmp-<pid>`, fsync, rename).
pub fn atomic_write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let file_name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("path has no file name"))?;
    let mut tmp_name = file_name.to_os_string();
    tmp_name.push(format!("{}{}", crate::outset::TMP_TAG, std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    let result = (|| {
        let mut file = fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}
