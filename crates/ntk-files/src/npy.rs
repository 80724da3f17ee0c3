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
    serialize(&mut buf, data, shape)?;
    Ok(buf)
}

/// Streams `data` with the given shape (C order) as `.npy` into `out`.
fn serialize<T: npyz::Serialize + npyz::AutoSerialize + Copy>(
    out: &mut dyn std::io::Write,
    data: &[T],
    shape: &[u64],
) -> std::io::Result<()> {
    let mut writer = npyz::WriteOptions::new()
        .default_dtype()
        .shape(shape)
        .writer(out)
        .begin_nd()?;
    writer.extend(data.iter().copied())?;
    writer.finish()
}

/// Writes an f64 array to `path` atomically, streamed (no copy of it in memory).
pub fn write_f64(path: &Path, data: &[f64], shape: &[u64]) -> std::io::Result<()> {
    crate::io::atomic_write_with(path, |out| serialize(out, data, shape))
}

/// Writes an f32 array to `path` atomically, streamed.
pub fn write_f32(path: &Path, data: &[f32], shape: &[u64]) -> std::io::Result<()> {
    crate::io::atomic_write_with(path, |out| serialize(out, data, shape))
}

/// Reads an f64 or f32 array back as `(values, shape)` (tests and `collect`).
pub fn read(path: &Path) -> std::io::Result<(Vec<f64>, Vec<u64>)> {
    read_bytes(&crate::io::read(path)?)
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
    let array = read_array_bytes(bytes)?;
    if array.kind != Kind::Float {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("expected an f32 or f64 array, found {}", array.dtype),
        ));
    }
    Ok((array.values, array.shape))
}

/// The element kind of a numeric array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Float,
    Int,
    Uint,
    Bool,
}

/// A numeric `.npy` array read as f64, in C (row-major) order whatever the file's order.
#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    pub values: Vec<f64>,
    pub shape: Vec<u64>,
    pub kind: Kind,
    /// The dtype as numpy writes it (`<f4`, `|u1`, ...), for messages.
    pub dtype: String,
}

/// The shape and dtype an `.npy` header declares, read without the data.
#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    pub shape: Vec<u64>,
    pub kind: Kind,
    pub dtype: String,
    /// Bytes per element.
    pub item_size: u64,
}

impl Header {
    /// The data bytes the header promises (`None` when the count overflows).
    pub fn data_len(&self) -> Option<u64> {
        self.shape
            .iter()
            .try_fold(self.item_size, |acc, &d| acc.checked_mul(d))
    }
}

fn invalid(m: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, m)
}

/// The kind and width of a plain numeric dtype; anything else (strings, records, objects,
/// complex, half floats, datetimes) is an error naming it.
fn numeric(dtype: &npyz::DType) -> std::io::Result<(Kind, u64, String)> {
    use npyz::TypeChar;
    let npyz::DType::Plain(t) = dtype else {
        return Err(invalid(format!(
            "expected a numeric array, found the structured dtype {}",
            dtype.descr()
        )));
    };
    let name = t.to_string();
    let kind = match (t.type_char(), t.size_field()) {
        (TypeChar::Float, 4 | 8) => Kind::Float,
        (TypeChar::Int, 1 | 2 | 4 | 8) => Kind::Int,
        (TypeChar::Uint, 1 | 2 | 4 | 8) => Kind::Uint,
        (TypeChar::Bool, 1) => Kind::Bool,
        _ => {
            return Err(invalid(format!(
                "expected a numeric array (float32/64, int8-64, uint8-64 or bool), found dtype {name}"
            )));
        }
    };
    Ok((kind, t.size_field(), name))
}

/// The header of `.npy` bytes (only the header need be present): shape and dtype, checked
/// to be a plain numeric array's.
pub fn read_header(bytes: &[u8]) -> std::io::Result<Header> {
    check_plain_header(bytes)?;
    let mut rest = bytes;
    let header = npyz::NpyHeader::from_reader(&mut rest)?;
    let (kind, item_size, dtype) = numeric(&header.dtype())?;
    Ok(Header {
        shape: header.shape().to_vec(),
        kind,
        dtype,
        item_size,
    })
}

/// How many bytes of a file hold its `.npy` header (magic, version, length and text), from
/// its first 12 bytes; `None` when they are not an `.npy` file's.
pub fn header_len(first: &[u8]) -> Option<usize> {
    let rest = first.strip_prefix(b"\x93NUMPY")?;
    match rest.first()? {
        1 => Some(10 + usize::from(u16::from_le_bytes([*rest.get(2)?, *rest.get(3)?]))),
        2 | 3 => {
            let b = rest.get(2..6)?;
            Some(12 + u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
        }
        _ => None,
    }
}

/// Reads any plain numeric array (floats, integers, bools) as f64, in C order. Integers
/// beyond 2^53 lose their low bits; callers that need integers check the values. The
/// header's shape must match the data that follows (checked before anything is allocated).
pub fn read_array_bytes(bytes: &[u8]) -> std::io::Result<Array> {
    check_plain_header(bytes)?;
    let mut rest = bytes;
    let header = npyz::NpyHeader::from_reader(&mut rest)?;
    let (kind, width, dtype) = numeric(&header.dtype())?;
    let shape = header.shape().to_vec();
    let count = shape
        .iter()
        .try_fold(1u128, |acc, &d| acc.checked_mul(u128::from(d)));
    if count.and_then(|c| c.checked_mul(u128::from(width))) != Some(rest.len() as u128) {
        return Err(invalid(format!(
            "the header's shape {shape:?} does not match the {} data bytes that follow it",
            rest.len()
        )));
    }
    let strides = header.strides().to_vec();
    let fortran = header.order() == npyz::Order::Fortran;
    let npy = npyz::NpyFile::with_header(header, rest);
    let len = usize::try_from(count.unwrap_or(0)).unwrap_or(0);
    let values = match (kind, width) {
        (Kind::Float, 4) => exactly::<f32>(npy, len, f64::from)?,
        (Kind::Float, _) => exactly::<f64>(npy, len, |v| v)?,
        (Kind::Int, 1) => exactly::<i8>(npy, len, f64::from)?,
        (Kind::Int, 2) => exactly::<i16>(npy, len, f64::from)?,
        (Kind::Int, 4) => exactly::<i32>(npy, len, f64::from)?,
        (Kind::Int, _) => exactly::<i64>(npy, len, |v| v as f64)?,
        (Kind::Uint, 1) => exactly::<u8>(npy, len, f64::from)?,
        (Kind::Uint, 2) => exactly::<u16>(npy, len, f64::from)?,
        (Kind::Uint, 4) => exactly::<u32>(npy, len, f64::from)?,
        (Kind::Uint, _) => exactly::<u64>(npy, len, |v| v as f64)?,
        (Kind::Bool, _) => exactly::<bool>(npy, len, |b| f64::from(u8::from(b)))?,
    };
    let values = if fortran && shape.len() > 1 {
        c_order(&values, &shape, &strides)
    } else {
        values
    };
    Ok(Array {
        values,
        shape,
        kind,
        dtype,
    })
}

/// The `len` elements of `npy` as f64, into a vector of exactly that capacity (npyz's
/// `into_vec` collects through a `Result`, whose size hint is 0, so its vector doubled past
/// the data: a 400 MB array peaked at 1.4 GiB, over the memory guard's estimate; round 98
/// N9).
fn exactly<T: npyz::Deserialize>(
    npy: npyz::NpyFile<&[u8]>,
    len: usize,
    f: fn(T) -> f64,
) -> std::io::Result<Vec<f64>> {
    let reader = npy.data::<T>().map_err(|e| invalid(e.to_string()))?;
    let mut values = Vec::new();
    values
        .try_reserve_exact(len)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::OutOfMemory, e.to_string()))?;
    for v in reader {
        values.push(f(v?));
    }
    Ok(values)
}

/// The elements of an array stored with `strides` (in elements, per axis) in C order.
fn c_order(values: &[f64], shape: &[u64], strides: &[u64]) -> Vec<f64> {
    let mut out = Vec::with_capacity(values.len());
    let mut index = vec![0u64; shape.len()];
    for _ in 0..values.len() {
        let at: u64 = index.iter().zip(strides).map(|(i, s)| i * s).sum();
        out.push(values[at as usize]);
        for axis in (0..shape.len()).rev() {
            index[axis] += 1;
            if index[axis] < shape[axis] {
                break;
            }
            index[axis] = 0;
        }
    }
    out
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
        let ints = to_bytes(&[3i64, -1, 7], &[3]).unwrap();
        assert!(read_bytes(&ints).unwrap_err().to_string().contains("<i8"));
        let array = read_array_bytes(&ints).unwrap();
        assert_eq!(
            (array.values, array.kind),
            (vec![3.0, -1.0, 7.0], Kind::Int)
        );
        let bytes = to_bytes(&[250u8, 0], &[2]).unwrap();
        assert_eq!(read_array_bytes(&bytes).unwrap().values, vec![250.0, 0.0]);
        let header = read_header(&bytes[..header_len(&bytes[..12]).unwrap()]).unwrap();
        assert_eq!((header.shape, header.kind), (vec![2], Kind::Uint));
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

    /// A Fortran-ordered 2 x 3 array (numpy's `np.asfortranarray`) reads back in C order.
    /// The streamed files equal the serialized bytes, over the 1 MiB buffer's edge (an
    /// array of 300,000 f64 values, 2.4 MB) and for f32; the file reads back.
    #[test]
    fn streamed_files_equal_their_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let v: Vec<f64> = (0..300_000).map(|k| (k as f64).sin() * 1e3).collect();
        let path = dir.path().join("a.npy");
        super::write_f64(&path, &v, &[600, 500]).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes, to_bytes(&v, &[600, 500]).unwrap());
        assert_eq!(read(&path).unwrap(), (v.clone(), vec![600, 500]));
        let f: Vec<f32> = v.iter().map(|&x| x as f32).collect();
        super::write_f32(&path, &f, &[300_000]).unwrap();
        assert_eq!(
            std::fs::read(&path).unwrap(),
            to_bytes(&f, &[300_000]).unwrap()
        );
    }

    #[test]
    fn fortran_order_reads_as_c_order() {
        let c = to_bytes(&[1.0f64, 4.0, 2.0, 5.0, 3.0, 6.0], &[2, 3]).unwrap();
        let text = std::str::from_utf8(&c[10..header_len(&c).unwrap()]).unwrap();
        let fortran_text = text.replace("'fortran_order': False", "'fortran_order': True ");
        assert_eq!(fortran_text.len(), text.len());
        let mut f = c[..10].to_vec();
        f.extend(fortran_text.as_bytes());
        f.extend(&c[header_len(&c).unwrap()..]);
        let a = read_array_bytes(&f).unwrap();
        assert_eq!(a.values, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert_eq!(a.shape, vec![2, 3]);
    }
}
