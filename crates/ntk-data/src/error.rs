//! The error type of every loader and transform in this crate.
//!
//! Bad input never panics: each variant names the file involved and what is wrong with it,
//! with the byte offset where one applies (offsets count bytes of the *uncompressed* content).

use ntk_files::shown::Shown;
use std::path::{Path, PathBuf};

/// Result alias used throughout the crate.
pub type Result<T, E = DataError> = std::result::Result<T, E>;

/// Everything that can go wrong while loading or preparing data.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// A data file does not exist; `hint` says how to obtain it.
    #[error("{}: file not found; {hint}", .path.shown())]
    Missing {
        /// The path that was looked for (the uncompressed name when `.gz` was also tried).
        path: PathBuf,
        /// How to obtain the file.
        hint: String,
    },

    /// The file exists but could not be read.
    #[error("{}: cannot read: {source}", .path.shown())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },

    /// A directory stands where a data file is expected.
    #[error("{}: is a directory, expected a data file", .path.shown())]
    IsDirectory {
        /// The path.
        path: PathBuf,
    },

    /// A named pipe (FIFO) stands where a data file is expected: opening it would wait for
    /// a writer, possibly forever.
    #[error("{}: is a named pipe (FIFO), expected a data file", .path.shown())]
    IsFifo {
        /// The path.
        path: PathBuf,
    },

    /// The path cannot be resolved because its symbolic links form a loop (`ELOOP`).
    #[error(
        "{}: symbolic link loop: too many levels of symbolic links while resolving the path",
        .path.shown()
    )]
    SymlinkLoop {
        /// The path.
        path: PathBuf,
    },

    /// The path is a symbolic link whose target does not exist.
    #[error(
        "{}: broken symbolic link pointing to {} (the target does not exist)",
        .path.shown(),
        .target.shown()
    )]
    BrokenSymlink {
        /// The link.
        path: PathBuf,
        /// What the link points to, as stored in the link.
        target: PathBuf,
    },

    /// A file holds no samples at all.
    #[error("{}: empty {what}: {detail}", .path.shown())]
    Empty {
        /// The file.
        path: PathBuf,
        /// What kind of file, e.g. `"CIFAR-10 batch file"`.
        what: String,
        /// What was found instead, e.g. `"0 bytes"`.
        detail: String,
    },

    /// The (decompressed) content of a file exceeds the size limit its loader allows; reading
    /// stopped at the limit, so a decompression bomb is never inflated in full.
    #[error(
        "{}: too large: the (decompressed) content exceeds the limit of {limit} bytes ({} MiB) for this file; \
         reading stopped there",
        .path.shown(),
        .limit >> 20
    )]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The limit in bytes.
        limit: u64,
    },

    /// A CSV's values, as f64, exceed the memory this process may use; reading stopped there.
    #[error(
        "{}: too large: its values as f64 exceed the {limit} bytes ({} MiB) of memory this process \
         may use now; reading stopped there",
        .path.shown(),
        .limit >> 20
    )]
    TooManyValues {
        /// The file.
        path: PathBuf,
        /// The limit in bytes.
        limit: u64,
    },

    /// The stream of a file runs past the size its header promises. Unlike
    /// [`DataError::TrailingData`] the total is unknown: reading (decompression) stopped at
    /// the first extra byte, so a decompression bomb is never inflated in full.
    #[error(
        "{}: trailing data: the (decompressed) content is longer than the {expected} bytes the header \
         promises (extra bytes start at byte offset {expected}; reading stopped there)",
        .path.shown()
    )]
    TrailingStream {
        /// The file.
        path: PathBuf,
        /// Bytes the header promises.
        expected: u64,
    },

    /// The file starts with the gzip magic but its stream does not decompress.
    #[error("{}: the gzip stream does not decompress: {source}", .path.shown())]
    Gzip {
        /// The file.
        path: PathBuf,
        /// The decompressor's error.
        source: std::io::Error,
    },

    /// Bytes follow a gzip file's last member that begin no other member.
    #[error(
        "{}: bytes follow the end of the gzip stream at byte offset {offset} of the file that \
         begin no gzip member (trailing garbage, as `gzip -t` calls it): remove them, or gzip \
         the content again",
        .path.shown()
    )]
    GzipTrailing {
        /// The file.
        path: PathBuf,
        /// Where the bytes after the last member start, in the (compressed) file.
        offset: u64,
    },

    /// An IDX file carries the wrong magic number (at byte offset 0).
    #[error(
        "{}: wrong IDX magic number at byte offset 0: expected {expected} (0x{expected:08x}), found {found} (0x{found:08x})",
        .path.shown()
    )]
    BadMagic {
        /// The file.
        path: PathBuf,
        /// The magic number this kind of file must have (2051 images, 2049 labels).
        expected: u32,
        /// The magic number actually read.
        found: u32,
    },

    /// A file is shorter than its header (or format) requires.
    #[error("{}: truncated file: expected {expected} bytes, found {found}", .path.shown())]
    Truncated {
        /// The file.
        path: PathBuf,
        /// Bytes the header promises.
        expected: u64,
        /// Bytes actually present.
        found: u64,
    },

    /// A file is longer than its header says: trailing bytes after the last record.
    #[error(
        "{}: trailing data: expected {expected} bytes, found {found} (extra bytes start at byte offset {expected})",
        .path.shown()
    )]
    TrailingData {
        /// The file.
        path: PathBuf,
        /// Bytes the header promises.
        expected: u64,
        /// Bytes actually present.
        found: u64,
    },

    /// The image file and the label file describe different numbers of samples.
    #[error(
        "sample counts disagree: {} holds {n_images} images but {} holds {n_labels} labels",
        .images.shown(),
        .labels.shown()
    )]
    CountMismatch {
        /// The image file.
        images: PathBuf,
        /// Images it declares.
        n_images: usize,
        /// The label file.
        labels: PathBuf,
        /// Labels it declares.
        n_labels: usize,
    },

    /// A label is not a valid class index.
    #[error(
        "{}: label {label} of sample {index} (byte offset {offset}) is out of range 0..{num_classes}",
        .path.shown()
    )]
    LabelOutOfRange {
        /// The file.
        path: PathBuf,
        /// The sample's index in the file.
        index: usize,
        /// Byte offset of the label in the (uncompressed) file.
        offset: u64,
        /// The label read.
        label: u64,
        /// Number of classes of the data set.
        num_classes: usize,
    },

    /// A CIFAR-10 binary file whose size is not a whole number of 3073-byte records.
    #[error(
        "{}: wrong size for a CIFAR-10 binary batch: {size} bytes is not a multiple of the {record}-byte record \
         (the last record starts at byte offset {} and is {} bytes short; real batches are 30730000 bytes)",
        .path.shown(),
        .size - .size % *.record as u64,
        *.record as u64 - .size % *.record as u64
    )]
    CifarSize {
        /// The file.
        path: PathBuf,
        /// Its size in bytes.
        size: u64,
        /// The record size (3073).
        record: usize,
    },

    /// A text file (the digits CSV) has a malformed line.
    #[error("{}: line {line} (byte offset {offset}): {message}", .path.shown())]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// Byte offset of the line start in the (uncompressed) file.
        offset: u64,
        /// What is wrong.
        message: String,
    },

    /// An IDX header whose dimensions are not those of images or labels.
    #[error("{}: bad IDX header at byte offset {offset}: {message}", .path.shown())]
    BadHeader {
        /// The file.
        path: PathBuf,
        /// Byte offset of the offending field.
        offset: u64,
        /// What is wrong.
        message: String,
    },

    /// More samples were requested than the set has.
    #[error("{what}: requested {requested} samples but the set has only {available}")]
    NotEnoughSamples {
        /// Which set or subset rule.
        what: String,
        /// Samples requested.
        requested: usize,
        /// Samples available.
        available: usize,
    },

    /// A class-balanced subset needs more samples of a class than the set holds.
    #[error(
        "class-balanced subset: class {class} needs {requested} samples but the set has only {available}"
    )]
    NotEnoughInClass {
        /// The class.
        class: usize,
        /// Samples of it needed.
        requested: usize,
        /// Samples of it present.
        available: usize,
    },

    /// A sample of norm zero that `data.unit_norm` cannot scale.
    #[error("sample {index} is the zero vector; cannot scale it to unit norm")]
    ZeroSample {
        /// The sample's index.
        index: usize,
    },

    /// [`Self::ZeroSample`] of a loaded data set, named with the key that asks for the
    /// scaling (seventh hostile round: "sample 4 is the zero vector" named neither).
    #[error(
        "data.unit_norm = true: {data}: {row} is the zero vector, which no scaling puts at \
         norm 1; drop it or leave data.unit_norm out"
    )]
    ZeroSampleOf {
        /// The data set, as results describe it (file, rows taken).
        data: String,
        /// The sample's row in its file and place among those taken
        /// ([`crate::Inputs::row_words`]).
        row: String,
    },

    /// More test samples asked for (`train.test_n`, which the caller names) than the test
    /// split holds.
    #[error("{dataset} has only {available} test samples")]
    TestN {
        /// The data set.
        dataset: String,
        /// Samples in its test split.
        available: usize,
    },

    /// `data.n` beyond the samples of the split.
    #[error("data.n = {n} but {dataset}'s {split} split has only {available} samples")]
    DataN {
        /// Samples requested.
        n: usize,
        /// The data set.
        dataset: String,
        /// The split (`Train`, `Test`).
        split: String,
        /// Samples in the split.
        available: usize,
    },

    /// An error of the data a config key (`data.subset`, `data.scaling`) describes.
    #[error("{key}: {source}")]
    Key {
        /// The dotted key.
        key: &'static str,
        /// The error.
        #[source]
        source: Box<DataError>,
    },

    /// A key's path that is empty, or blanks alone (hundred-and-thirty-fifth hostile round,
    /// second review, N1: "data.labels: : unknown format").
    #[error("an empty path: name the file, or leave the key out")]
    EmptyPath,

    /// A user's data file (`data.dataset = "file"`) that is not what its key needs: the
    /// wrong format, shape or dtype, a value that is not finite, a label out of range.
    #[error("{}: {reason}", .path.shown())]
    BadArray {
        /// The file (with `:member` for an array inside an `.npz`).
        path: PathBuf,
        /// What is wrong, with the row and column where one applies.
        reason: String,
    },

    /// A config key that the chosen data set does not use, or one it needs that is missing.
    #[error("{key}: {reason}")]
    KeyUse {
        /// The dotted key.
        key: &'static str,
        /// Why it does not apply (or is needed).
        reason: String,
    },

    /// A config key's value out of its range.
    #[error("{key} = {value}: {reason}")]
    Value {
        /// The dotted key.
        key: &'static str,
        /// The value as given.
        value: String,
        /// The range it must be in.
        reason: &'static str,
    },

    /// A flat buffer whose length is not `n` items of `shape` (or whose size overflows).
    #[error("{len} {unit} do not make {n} {items} of {}", dims(.shape))]
    BufferShape {
        /// The buffer's length.
        len: usize,
        /// What it holds: `pixels`, `features`.
        unit: &'static str,
        /// The number of items it should hold.
        n: usize,
        /// What the items are: `images`, `rows`.
        items: &'static str,
        /// Each item's shape (`[channels, height, width]`, `[dim]`).
        shape: Vec<usize>,
    },

    /// A label at or above the number of classes.
    #[error("label {label}{} is out of range 0..{classes}", .sample.map(|i| format!(" of sample {i}")).unwrap_or_default())]
    LabelRange {
        /// The label.
        label: u8,
        /// Its sample, where known.
        sample: Option<usize>,
        /// The number of classes.
        classes: usize,
    },

    /// A sample index past the end of a set.
    #[error("{what}: index {index} is out of range for {n} samples")]
    IndexRange {
        /// The set (its name) the index was to select from.
        what: String,
        /// The index.
        index: usize,
        /// The samples in the set.
        n: usize,
    },

    /// A class-balanced subset asked of a set with zero classes.
    #[error("class-balanced subset of a set with zero classes")]
    NoClasses,

    /// Concatenation of zero sets.
    #[error("cannot concatenate zero sets")]
    ConcatNone,

    /// Two concatenated sets whose form (shape, classes, pixel range) differs.
    #[error("cannot concatenate {first} and {other}")]
    ConcatMismatch {
        /// The first set's form.
        first: Box<SetForm>,
        /// The first set whose form differs from it.
        other: Box<SetForm>,
    },

    /// A scaling that does not apply to images with this many channels.
    #[error("scaling {scaling} needs 3-channel (RGB) images, got {channels} channel(s)")]
    ScalingChannels {
        /// The scaling's name.
        scaling: &'static str,
        /// The images' channels.
        channels: usize,
    },

    /// A name that is none of those expected (a data set, a scaling, a subset rule).
    #[error("unknown {what} {given:?}; expected {expected}")]
    UnknownName {
        /// What was named: `data set`, `scaling`, `subset`.
        what: &'static str,
        /// The text given.
        given: String,
        /// The forms it may take.
        expected: String,
    },

    /// A built-in set's file that holds another set (cut, doubled, a class missing).
    #[error(
        "{}: not the {set} set: {found} where it has {expected}; fetch it again \
         (datasets/fetch.sh), or give your own data as data.dataset = \"file\"",
        .path.shown()
    )]
    NotTheSet {
        /// The file read.
        path: std::path::PathBuf,
        /// The set's name.
        set: &'static str,
        /// What the file holds.
        found: String,
        /// What the set holds.
        expected: String,
    },

    /// `data.n` samples by `data.subset` cannot be picked from a set.
    #[error("data.subset = \"{rule}\" of data.n = {n} from {set}: {source}")]
    Subset {
        /// The subset rule's name.
        rule: &'static str,
        /// Samples asked for (`data.n`).
        n: usize,
        /// The set: a built-in set's name, or the file of `data.x`.
        set: String,
        /// Why not.
        #[source]
        source: Box<DataError>,
    },

    /// A split a data set does not have.
    #[error("{data_set} has no {split} split; take a subset of the train split")]
    NoSplit {
        /// The data set's name.
        data_set: &'static str,
        /// The split asked for: `test`.
        split: &'static str,
    },

    /// A record count that is zero or whose bytes overflow.
    #[error(
        "write_cifar_like: {n} records per file; expected a positive number small enough to fit in memory"
    )]
    RecordCount {
        /// The records per file asked for.
        n: usize,
    },
}

/// A default that could not be found ([`crate::config::fill_file_n`]): `key` was left out
/// and its value comes from elsewhere (the rows of `data.x`), which failed. The config
/// loader that asked for the default (`ntk_runs::overrides::load_filled`) reports it against
/// the config file, as its own error of the same words; it takes the key and the message
/// apart through `(String, String)`, since ntk-data does not know its error type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key} (not given): {message}")]
pub struct MissingDefault {
    /// The dotted key left out (`data.n`).
    pub key: String,
    /// Why its default could not be found.
    pub message: String,
}

impl From<MissingDefault> for (String, String) {
    fn from(e: MissingDefault) -> Self {
        (e.key, e.message)
    }
}

/// `c x h x w`: a shape as the messages write it.
fn dims(shape: &[usize]) -> String {
    shape
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join("x")
}

/// What two concatenated image sets must share, named by the set: for
/// [`DataError::Concat`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetForm {
    /// The set's name.
    pub name: String,
    /// `[channels, height, width]`.
    pub shape: [usize; 3],
    /// Its number of classes.
    pub num_classes: usize,
    /// Its largest pixel value.
    pub max_value: u8,
}

impl std::fmt::Display for SetForm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({} images, {} classes, pixels 0..={})",
            self.name,
            dims(&self.shape),
            self.num_classes,
            self.max_value
        )
    }
}

impl DataError {
    /// Converts an I/O error on `path` into the variant that names the real problem: a missing
    /// file (with the fetch hint), a broken symbolic link, a symbolic link loop, a directory,
    /// or else [`DataError::Io`].
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        let path = path.to_path_buf();
        match source.kind() {
            std::io::ErrorKind::NotFound => match std::fs::read_link(&path) {
                Ok(target) => Self::BrokenSymlink { path, target },
                Err(_) => Self::Missing {
                    hint: fetch_hint(&path),
                    path,
                },
            },
            std::io::ErrorKind::IsADirectory => Self::IsDirectory { path },
            _ if is_symlink_loop(&source) => Self::SymlinkLoop { path },
            _ => Self::Io { path, source },
        }
    }

    /// Checks a byte count against what a header promises.
    pub(crate) fn check_len(path: &Path, expected: u64, found: u64) -> Result<()> {
        let path = path.to_path_buf();
        match found.cmp(&expected) {
            std::cmp::Ordering::Less => Err(Self::Truncated {
                path,
                expected,
                found,
            }),
            std::cmp::Ordering::Greater => Err(Self::TrailingData {
                path,
                expected,
                found,
            }),
            std::cmp::Ordering::Equal => Ok(()),
        }
    }
}

/// `ELOOP`, "too many levels of symbolic links" (`ErrorKind::FilesystemLoop` is unstable).
fn is_symlink_loop(e: &std::io::Error) -> bool {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    const ELOOP: Option<i32> = Some(40);
    #[cfg(all(unix, not(any(target_os = "linux", target_os = "android"))))]
    const ELOOP: Option<i32> = Some(62);
    #[cfg(not(unix))]
    const ELOOP: Option<i32> = None;
    ELOOP.is_some() && e.raw_os_error() == ELOOP
}

/// How to get the registry-fetched data sets (MNIST, Fashion-MNIST, digits).
pub(crate) fn fetch_hint(path: &Path) -> String {
    let dir = path.parent().unwrap_or(Path::new("."));
    format!(
        "run `bash datasets/fetch.sh` in the workspace root to download MNIST, Fashion-MNIST and the \
         8x8 digits into datasets/data/, set {} to a root holding mnist/, fashion-mnist/, digits/ \
         and cifar-10/, or place the file in {}",
        crate::paths::DATA_DIR_ENV,
        dir.shown()
    )
}

/// How to get CIFAR-10, which no package registry ships.
pub(crate) fn cifar_hint(dir: &Path) -> String {
    format!(
        "CIFAR-10 is not fetched automatically: download the binary version `cifar-10-binary.tar.gz` \
         from https://www.cs.toronto.edu/~kriz/cifar.html and extract `cifar-10-batches-bin/*` \
         (data_batch_1.bin .. data_batch_5.bin, test_batch.bin, batches.meta.txt) into {}",
        dir.shown()
    )
}
