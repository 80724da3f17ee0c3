//! A file a run is given beside its config and data (`probe.weights`, `probe.blocks`), read
//! as the run may read it: a regular file (a link to one followed; a FIFO, a device or a
//! directory refused without waiting on it), no larger than what the run can use, read once
//! ([`read_input`]); the caps per key.

use std::path::Path;

use crate::error::Error;

/// Bytes a safetensors file may take beyond its values: its header (names, shapes, offsets)
/// and metadata (the config as JSON).
pub(crate) const HEADER_BYTES: u64 = 1 << 20;

/// Bytes `probe.blocks` may take per sample (its index, separators, comments), beyond
/// [`HEADER_BYTES`].
const BLOCKS_BYTES_PER_SAMPLE: u64 = 64;

/// The most bytes `probe.blocks` may take for `n` samples.
pub(crate) fn blocks_limit(n: usize) -> u64 {
    HEADER_BYTES + BLOCKS_BYTES_PER_SAMPLE * n as u64
}

/// The bytes of the run's input `path` (the config's `key`): a regular file (a link to one
/// followed; a FIFO, a device or a directory refused without waiting on it) of at most
/// `limit` bytes (`needs` says what they hold), read once ([`ntk_files::bounded`]).
pub(crate) fn read_input(
    key: &'static str,
    path: &Path,
    limit: u64,
    needs: &str,
) -> crate::Result<Vec<u8>> {
    ntk_files::bounded::read_bounded(path, limit, needs).map_err(|why| Error::Config {
        key,
        value: path.display().to_string(),
        reason: why.to_string(),
    })
}
