//! CIFAR-10, binary version (`cifar-10-binary.tar.gz`).
//!
//! The training set is `data_batch_1.bin` .. `data_batch_5.bin`, the test set `test_batch.bin`.
//! Each file is a sequence of 3073-byte records:
//!
//! | offset in record | bytes | content |
//! |---|---|---|
//! | 0 | 1 | label 0..9 |
//! | 1 | 1024 | red plane, 32x32 row-major |
//! | 1025 | 1024 | green plane |
//! | 2049 | 1024 | blue plane |
//!
//! so a record's pixels are already in CHW order. The real files hold 10000 records each
//! (30,730,000 bytes); any positive whole number of records, up to [`CIFAR10_MAX_BATCH_BYTES`],
//! is accepted so that small generated files (see [`write_cifar_like`]) load too; an empty
//! file is an error. `batches.meta.txt` lists the class names, one a line.
//! No package registry ships CIFAR-10; users download it themselves (see `datasets/README.md`).

use std::path::{Path, PathBuf};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::{DataError, Result, cifar_hint};
use crate::file::read_capped;
use crate::set::{ImageSet, Split};

/// Subdirectory of the data root holding CIFAR-10.
pub const CIFAR10_SUBDIR: &str = "cifar-10";
/// The directory the official archive extracts to; accepted inside the data directory too.
pub const CIFAR10_ARCHIVE_DIR: &str = "cifar-10-batches-bin";
/// Pixels per image (3 x 32 x 32).
pub const CIFAR10_IMAGE_BYTES: usize = 3 * 32 * 32;
/// Bytes per record: a label byte and the pixels.
pub const CIFAR10_RECORD_BYTES: usize = 1 + CIFAR10_IMAGE_BYTES;
/// The largest batch file read: ten times the records of a real batch (307,300,000 bytes).
/// Anything larger (say `/dev/zero` linked in place of a batch) is rejected unread.
pub const CIFAR10_MAX_BATCH_BYTES: u64 = 10 * 10_000 * CIFAR10_RECORD_BYTES as u64;
/// The largest class-name file read (the real one is 61 bytes).
pub const CIFAR10_MAX_META_BYTES: u64 = 1 << 20;
/// Training batch files.
pub const CIFAR10_TRAIN_FILES: [&str; 5] = [
    "data_batch_1.bin",
    "data_batch_2.bin",
    "data_batch_3.bin",
    "data_batch_4.bin",
    "data_batch_5.bin",
];
/// Test batch file.
pub const CIFAR10_TEST_FILE: &str = "test_batch.bin";
/// Class-name file.
pub const CIFAR10_META_FILE: &str = "batches.meta.txt";
/// CIFAR-10 class names, by label.
pub const CIFAR10_CLASSES: [&str; 10] = [
    "airplane",
    "automobile",
    "bird",
    "cat",
    "deer",
    "dog",
    "frog",
    "horse",
    "ship",
    "truck",
];

/// The files of a split.
pub fn cifar10_files(split: Split) -> &'static [&'static str] {
    match split {
        Split::Train => &CIFAR10_TRAIN_FILES,
        Split::Test => std::slice::from_ref(&CIFAR10_TEST_FILE),
    }
}

/// Parses the bytes of one batch file, a positive whole number of records; `path` is for
/// messages only.
pub fn parse_cifar10_batch(path: &Path, bytes: &[u8]) -> Result<ImageSet> {
    if bytes.is_empty() {
        return Err(DataError::Empty {
            path: path.to_path_buf(),
            what: "CIFAR-10 batch file".into(),
            detail: format!(
                "0 bytes (a batch holds a positive whole number of {CIFAR10_RECORD_BYTES}-byte \
                 records; real batches are 30730000 bytes)"
            ),
        });
    }
    if !bytes.len().is_multiple_of(CIFAR10_RECORD_BYTES) {
        return Err(DataError::CifarSize {
            path: path.to_path_buf(),
            size: bytes.len() as u64,
            record: CIFAR10_RECORD_BYTES,
        });
    }
    let n = bytes.len() / CIFAR10_RECORD_BYTES;
    let mut images = Vec::with_capacity(n * CIFAR10_IMAGE_BYTES);
    let mut labels = Vec::with_capacity(n);
    for (index, record) in bytes.chunks_exact(CIFAR10_RECORD_BYTES).enumerate() {
        let label = record[0];
        if usize::from(label) >= CIFAR10_CLASSES.len() {
            return Err(DataError::LabelOutOfRange {
                path: path.to_path_buf(),
                index,
                offset: (index * CIFAR10_RECORD_BYTES) as u64,
                label: label.into(),
                num_classes: CIFAR10_CLASSES.len(),
            });
        }
        labels.push(label);
        images.extend_from_slice(&record[1..]);
    }
    ImageSet::new(
        "cifar-10",
        images,
        labels,
        [3, 32, 32],
        CIFAR10_CLASSES.len(),
        u8::MAX,
    )
}

/// Reads a file of the CIFAR-10 directory (raw, at most `limit` bytes); a missing file says
/// where to get CIFAR-10.
fn read_cifar_file(path: &Path, limit: u64) -> Result<Vec<u8>> {
    read_capped(path, limit, false).map_err(|e| match e {
        DataError::Missing { path, .. } => DataError::Missing {
            hint: cifar_hint(path.parent().unwrap_or(Path::new("."))),
            path,
        },
        other => other,
    })
}

/// Reads one batch file (at most [`CIFAR10_MAX_BATCH_BYTES`]).
pub fn read_cifar10_batch(path: &Path) -> Result<ImageSet> {
    parse_cifar10_batch(path, &read_cifar_file(path, CIFAR10_MAX_BATCH_BYTES)?)
}

/// The directory holding the batch files: `dir` itself, or `dir/cifar-10-batches-bin` when the
/// archive was extracted with its top directory.
fn batch_dir(dir: &Path, first_file: &str) -> PathBuf {
    let nested = dir.join(CIFAR10_ARCHIVE_DIR);
    if !dir.join(first_file).is_file() && nested.join(first_file).is_file() {
        nested
    } else {
        dir.to_path_buf()
    }
}

/// Loads a CIFAR-10 split from `dir` (50000 train or 10000 test images of 3x32x32 for the real
/// files). Batch files are concatenated in order.
pub fn load_cifar10(dir: impl AsRef<Path>, split: Split) -> Result<ImageSet> {
    let files = cifar10_files(split);
    let dir = batch_dir(dir.as_ref(), files[0]);
    let parts = files
        .iter()
        .map(|f| read_cifar10_batch(&dir.join(f)))
        .collect::<Result<Vec<_>>>()?;
    let name = match split {
        Split::Train => "cifar-10-train",
        Split::Test => "cifar-10-test",
    };
    ImageSet::concat(name, parts)
}

/// Writes a small CIFAR-10 look-alike into `dir` (created if needed): the six batch files in
/// the exact binary layout with `n_per_file` random records each, and `batches.meta.txt`.
///
/// Labels and pixels are uniform random from a ChaCha8 stream seeded by `seed`. Returns the
/// generated (train, test) sets, which [`load_cifar10`] must reproduce.
pub fn write_cifar_like(
    dir: impl AsRef<Path>,
    n_per_file: usize,
    seed: u64,
) -> Result<(ImageSet, ImageSet)> {
    let dir = dir.as_ref();
    let file_len = n_per_file
        .checked_mul(CIFAR10_RECORD_BYTES)
        .filter(|&len| len > 0)
        .ok_or(DataError::RecordCount { n: n_per_file })?;
    std::fs::create_dir_all(dir).map_err(|e| DataError::io(dir, e))?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut write_split = |split: Split| -> Result<ImageSet> {
        let mut parts = Vec::new();
        for file in cifar10_files(split) {
            let mut bytes = vec![0u8; file_len];
            for record in bytes.chunks_exact_mut(CIFAR10_RECORD_BYTES) {
                rng.fill(&mut record[1..]);
                record[0] = rng.random_range(0..CIFAR10_CLASSES.len() as u8);
            }
            let path = dir.join(file);
            std::fs::write(&path, &bytes).map_err(|e| DataError::io(&path, e))?;
            parts.push(parse_cifar10_batch(&path, &bytes)?);
        }
        let name = match split {
            Split::Train => "cifar-10-train",
            Split::Test => "cifar-10-test",
        };
        ImageSet::concat(name, parts)
    };
    let train = write_split(Split::Train)?;
    let test = write_split(Split::Test)?;
    let meta = dir.join(CIFAR10_META_FILE);
    let text = CIFAR10_CLASSES.join("\n") + "\n";
    std::fs::write(&meta, text).map_err(|e| DataError::io(&meta, e))?;
    Ok((train, test))
}

/// Reads the class names from `dir/batches.meta.txt` (blank lines skipped).
pub fn read_cifar10_classes(dir: impl AsRef<Path>) -> Result<Vec<String>> {
    let dir = dir.as_ref();
    let dir = batch_dir(dir, CIFAR10_META_FILE);
    let path = dir.join(CIFAR10_META_FILE);
    let bytes = read_cifar_file(&path, CIFAR10_MAX_META_BYTES)?;
    Ok(String::from_utf8_lossy(&bytes)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect())
}
