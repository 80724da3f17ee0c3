//! NumPy `.npy` output (via `npyz`), written atomically so `numpy.load` never sees a partial
//! file.

use std::path::Path;

use npyz::WriterBuilder;

/// Serializes `data` with the given shape (C order) to `.npy` bytes.
pub fn to_bytes<T: npyz::Serialize + npyz::AutoSerialize + Copy>(
    data: &[T],
    shape: &[u64],
) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    let mut writer = npyz::WriteOptions::new()
        .default_dtype()
        .shape(shape)
        .writer(&mut buf)
        .begin_nd()?;
    writer.extend(data.iter().copied())?;
    writer.finish()?;
    Ok(buf)
}

/// Writes an f64 array to `path` atomically.
pub fn write_f64(path: &Path, data: &[f64], shape: &[u64]) -> std::io::Result<()> {
    ntk_model::io::atomic_write(path, &to_bytes(data, shape)?)
}

/// Writes an f32 array to `path` atomically.
pub fn write_f32(path: &Path, data: &[f32], shape: &[u64]) -> std::io::Result<()> {
    ntk_model::io::atomic_write(path, &to_bytes(data, shape)?)
}

/// Reads an f64 or f32 array back as `(values, shape)` (tests and `collect`).
pub fn read(path: &Path) -> std::io::Result<(Vec<f64>, Vec<u64>)> {
    read_bytes(&std::fs::read(path)?)
}

/// [`read`] from the file's bytes. The header's shape must match the data that follows
/// (checked before anything is allocated from it); only f32 and f64 arrays are accepted.
pub fn read_bytes(bytes: &[u8]) -> std::io::Result<(Vec<f64>, Vec<u64>)> {
    let bad = |m: String| std::io::Error::new(std::io::ErrorKind::InvalidData, m);
    let mut rest = bytes;
    let header = npyz::NpyHeader::from_reader(&mut rest)?;
    let npy = npyz::NpyFile::with_header(header, rest);
    let shape = npy.shape().to_vec();
    let width = match npy.dtype() {
        npyz::DType::Plain(t) if matches!(t.size_field(), 4 | 8) => t.size_field() as u128,
        other => {
            return Err(bad(format!(
                "expected an f32 or f64 array, found {other:?}"
            )));
        }
    };
    let count = shape
        .iter()
        .try_fold(1u128, |acc, &d| acc.checked_mul(u128::from(d)));
    if count.and_then(|c| c.checked_mul(width)) != Some(rest.len() as u128) {
        return Err(bad(format!(
            "the header's shape {shape:?} does not match the {} data bytes that follow it",
            rest.len()
        )));
    }
    let values = match npy.dtype() {
        npyz::DType::Plain(t) if t.size_field() == 4 => {
            npy.into_vec::<f32>()?.into_iter().map(f64::from).collect()
        }
        _ => npy.into_vec::<f64>()?,
    };
    Ok((values, shape))
}
