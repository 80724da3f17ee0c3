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
    crate::io::atomic_write(path, &to_bytes(data, shape)?)
}

/// Writes an f32 array to `path` atomically.
pub fn write_f32(path: &Path, data: &[f32], shape: &[u64]) -> std::io::Result<()> {
    crate::io::atomic_write(path, &to_bytes(data, shape)?)
}

/// Reads an f64 or f32 array back as `(values, shape)` (tests and `collect`).
pub fn read(path: &Path) -> std::io::Result<(Vec<f64>, Vec<u64>)> {
    read_bytes(&std::fs::read(path)?)
}

/// The header text of an `.npy` file (after the magic, the version and its length).
fn header_text(bytes: &[u8]) -> Option<&[u8]> {
    let rest = bytes.strip_prefix(b"\x93NUMPY")?;
    let (len, start): (usize, usize) = match rest.first()? {
        1 => (
            usize::from(u16::from_le_bytes([*rest.get(2)?, *rest.get(3)?])),
            4,
        ),
        2 | 3 => {
            let b = rest.get(2..6)?;
            (u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize, 6)
        }
        _ => return None,
    };
    rest.get(start..start.checked_add(len)?)
}

/// Refuses a header that is not a plain array's: one dict, one shape tuple, no list. The
/// header parser of `npyz` takes time exponential in the nesting of containers (found by
/// fuzzing: 12 nested `{` took 12.6 s, each level about 3x more), so nested headers never
/// reach it.
fn check_plain_header(bytes: &[u8]) -> std::io::Result<()> {
    let bad = |m: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, m.to_string());
    let Some(text) = header_text(bytes) else {
        return Err(bad("not an .npy file (magic, version or header length)"));
    };
    let count = |c: u8| text.iter().filter(|&&b| b == c).count();
    if count(b'{') != 1 || count(b'(') > 1 || count(b'[') > 0 {
        return Err(bad(
            "the .npy header is not a plain array's (one dict with descr, fortran_order and \
             a shape tuple)",
        ));
    }
    Ok(())
}

/// [`read`] from the file's bytes. The header's shape must match the data that follows
/// (checked before anything is allocated from it); only f32 and f64 arrays are accepted.
pub fn read_bytes(bytes: &[u8]) -> std::io::Result<(Vec<f64>, Vec<u64>)> {
    let bad = |m: String| std::io::Error::new(std::io::ErrorKind::InvalidData, m);
    check_plain_header(bytes)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_arrays_read_back_and_nested_headers_are_refused_unparsed() {
        let bytes = to_bytes(&[1.0f64, -2.5, 3.0], &[3]).unwrap();
        assert_eq!(read_bytes(&bytes).unwrap(), (vec![1.0, -2.5, 3.0], vec![3]));
        let bytes = to_bytes(&[0.5f32, 2.0], &[1, 2]).unwrap();
        assert_eq!(read_bytes(&bytes).unwrap(), (vec![0.5, 2.0], vec![1, 2]));
        // The fuzzer's find: 12 nested dicts took npyz's parser 12.6 s; 40 would take years.
        let header = format!(
            "{{'descr': '<f8', 'fortran_order': False,{} 0",
            "{".repeat(40)
        );
        let mut nested = b"\x93NUMPY\x01\x00".to_vec();
        nested.extend((header.len() as u16).to_le_bytes());
        nested.extend(header.as_bytes());
        let e = read_bytes(&nested).unwrap_err();
        assert!(e.to_string().contains("not a plain array"), "{e}");
        // A shape that promises more than the data holds.
        let mut short = to_bytes(&[1.0f64; 4], &[4]).unwrap();
        short.truncate(short.len() - 8);
        assert!(
            read_bytes(&short)
                .unwrap_err()
                .to_string()
                .contains("does not match")
        );
        assert!(read_bytes(b"\x93NUMPY").is_err());
    }
}
