//! IDX files: MNIST and Fashion-MNIST.
//!
//! The IDX format (LeCun et al.) is big-endian. An image file starts with a 16-byte header:
//!
//! | offset | field |
//! |---|---|
//! | 0 | magic `0x00000803` = 2051 (two zero bytes, type `0x08` = u8, 3 dimensions) |
//! | 4 | number of images `n` |
//! | 8 | rows |
//! | 12 | columns |
//! | 16 | `n * rows * cols` pixels, image after image, each row-major |
//!
//! A label file has an 8-byte header, magic `0x00000801` = 2049 then `n`, followed by `n`
//! label bytes. Files may be stored raw or gzipped; gzip is recognised by its magic bytes
//! `1f 8b`, not by the file name. Loaders look for `name` first, then `name.gz`.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::{DataError, Result, fetch_hint};
use crate::set::{ImageSet, Split};

/// Magic number of an IDX file of u8 images (3 dimensions).
pub const IMAGES_MAGIC: u32 = 0x0000_0803;
/// Magic number of an IDX file of u8 labels (1 dimension).
pub const LABELS_MAGIC: u32 = 0x0000_0801;
/// Header bytes of an image file.
pub const IMAGES_HEADER_LEN: usize = 16;
/// Header bytes of a label file.
pub const LABELS_HEADER_LEN: usize = 8;

/// Subdirectory of the data root holding MNIST.
pub const MNIST_SUBDIR: &str = "mnist";
/// Subdirectory of the data root holding Fashion-MNIST.
pub const FASHION_MNIST_SUBDIR: &str = "fashion-mnist";

/// Fashion-MNIST class names, by label.
pub const FASHION_MNIST_CLASSES: [&str; 10] = [
    "T-shirt/top",
    "Trouser",
    "Pullover",
    "Dress",
    "Coat",
    "Sandal",
    "Shirt",
    "Sneaker",
    "Bag",
    "Ankle boot",
];

/// The gzip magic bytes.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// The contents of an IDX image file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdxImages {
    /// Number of images.
    pub n: usize,
    /// Rows per image.
    pub rows: usize,
    /// Columns per image.
    pub cols: usize,
    /// `n * rows * cols` pixels.
    pub pixels: Vec<u8>,
}

/// Reads a whole file, decompressing it when it starts with the gzip magic `1f 8b`.
pub fn read_maybe_gzip(path: &Path) -> Result<Vec<u8>> {
    let raw = std::fs::read(path).map_err(|e| DataError::io(path, e))?;
    if !raw.starts_with(&GZIP_MAGIC) {
        return Ok(raw);
    }
    let mut out = Vec::with_capacity(raw.len() * 4);
    flate2::read::MultiGzDecoder::new(raw.as_slice())
        .read_to_end(&mut out)
        .map_err(|source| DataError::Gzip {
            path: path.to_path_buf(),
            source,
        })?;
    Ok(out)
}

/// `dir/name` if it exists, else `dir/name.gz`; a [`DataError::Missing`] naming `dir/name`
/// (with the fetch hint) when neither does.
pub fn find_file(dir: &Path, name: &str) -> Result<PathBuf> {
    let plain = dir.join(name);
    if plain.is_file() {
        return Ok(plain);
    }
    let gz = dir.join(format!("{name}.gz"));
    if gz.is_file() {
        return Ok(gz);
    }
    Err(DataError::Missing {
        hint: fetch_hint(&plain),
        path: plain,
    })
}

fn be_u32(bytes: &[u8], offset: usize) -> u32 {
    u32::from_be_bytes(bytes[offset..offset + 4].try_into().expect("4 bytes"))
}

/// Checks the magic (the first 4 bytes) and that the header is complete.
fn check_header(path: &Path, bytes: &[u8], magic: u32, header_len: usize) -> Result<()> {
    let truncated = || DataError::Truncated {
        path: path.to_path_buf(),
        expected: header_len as u64,
        found: bytes.len() as u64,
    };
    if bytes.len() < 4 {
        return Err(truncated());
    }
    let found = be_u32(bytes, 0);
    if found != magic {
        return Err(DataError::BadMagic {
            path: path.to_path_buf(),
            expected: magic,
            found,
        });
    }
    if bytes.len() < header_len {
        return Err(truncated());
    }
    Ok(())
}

/// Parses the (uncompressed) bytes of an image file; `path` is for messages only.
pub fn parse_images(path: &Path, mut bytes: Vec<u8>) -> Result<IdxImages> {
    check_header(path, &bytes, IMAGES_MAGIC, IMAGES_HEADER_LEN)?;
    let [n, rows, cols] = [4, 8, 12].map(|o| be_u32(&bytes, o) as u64);
    for (value, offset, what) in [(rows, 8, "rows"), (cols, 12, "columns")] {
        if value == 0 {
            return Err(DataError::BadHeader {
                path: path.to_path_buf(),
                offset,
                message: format!("zero {what} per image"),
            });
        }
    }
    // At most 2^96: cannot overflow u128, and anything above u64 is surely truncated.
    let expected = IMAGES_HEADER_LEN as u128 + n as u128 * rows as u128 * cols as u128;
    let expected = u64::try_from(expected).unwrap_or(u64::MAX);
    DataError::check_len(path, expected, bytes.len() as u64)?;
    bytes.drain(..IMAGES_HEADER_LEN);
    Ok(IdxImages {
        n: n as usize,
        rows: rows as usize,
        cols: cols as usize,
        pixels: bytes,
    })
}

/// Parses the (uncompressed) bytes of a label file, checking every label is `< num_classes`.
pub fn parse_labels(path: &Path, mut bytes: Vec<u8>, num_classes: usize) -> Result<Vec<u8>> {
    check_header(path, &bytes, LABELS_MAGIC, LABELS_HEADER_LEN)?;
    let n = be_u32(&bytes, 4) as u64;
    DataError::check_len(path, LABELS_HEADER_LEN as u64 + n, bytes.len() as u64)?;
    bytes.drain(..LABELS_HEADER_LEN);
    if let Some((index, &label)) = bytes
        .iter()
        .enumerate()
        .find(|(_, l)| usize::from(**l) >= num_classes)
    {
        return Err(DataError::LabelOutOfRange {
            path: path.to_path_buf(),
            index,
            offset: (LABELS_HEADER_LEN + index) as u64,
            label: label.into(),
            num_classes,
        });
    }
    Ok(bytes)
}

/// Reads an image file (raw or gzipped).
pub fn read_images(path: &Path) -> Result<IdxImages> {
    parse_images(path, read_maybe_gzip(path)?)
}

/// Reads a label file (raw or gzipped).
pub fn read_labels(path: &Path, num_classes: usize) -> Result<Vec<u8>> {
    parse_labels(path, read_maybe_gzip(path)?, num_classes)
}

/// Reads an image file and its label file into one grey-scale [`ImageSet`].
pub fn load_idx_pair(
    images: &Path,
    labels: &Path,
    name: &str,
    num_classes: usize,
) -> Result<ImageSet> {
    let img = read_images(images)?;
    let lab = read_labels(labels, num_classes)?;
    if img.n != lab.len() {
        return Err(DataError::CountMismatch {
            images: images.to_path_buf(),
            n_images: img.n,
            labels: labels.to_path_buf(),
            n_labels: lab.len(),
        });
    }
    ImageSet::new(
        name,
        img.pixels,
        lab,
        [1, img.rows, img.cols],
        num_classes,
        u8::MAX,
    )
}

/// The standard IDX file names of a split: (images, labels), without `.gz`.
pub fn idx_file_names(split: Split) -> (&'static str, &'static str) {
    match split {
        Split::Train => ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
        Split::Test => ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
    }
}

/// Loads an MNIST-layout split from `dir` (the four standard names, raw or `.gz`).
pub fn load_idx_dir(dir: &Path, split: Split, name: &str, num_classes: usize) -> Result<ImageSet> {
    let (images, labels) = idx_file_names(split);
    let images = find_file(dir, images)?;
    let labels = find_file(dir, labels)?;
    let suffix = match split {
        Split::Train => "train",
        Split::Test => "test",
    };
    load_idx_pair(&images, &labels, &format!("{name}-{suffix}"), num_classes)
}

/// Loads MNIST (60000 train / 10000 test images of 28x28, 10 classes) from `dir`.
pub fn load_mnist(dir: impl AsRef<Path>, split: Split) -> Result<ImageSet> {
    load_idx_dir(dir.as_ref(), split, "mnist", 10)
}

/// Loads Fashion-MNIST (same layout as MNIST; classes in [`FASHION_MNIST_CLASSES`]) from `dir`.
pub fn load_fashion_mnist(dir: impl AsRef<Path>, split: Split) -> Result<ImageSet> {
    load_idx_dir(dir.as_ref(), split, "fashion-mnist", 10)
}
