//! The UCI 8x8 hand-written digits (scikit-learn's `load_digits`): 1797 images, 10 classes.
//!
//! The file is scikit-learn's `sklearn/datasets/data/digits.csv.gz`: gzipped text, no header,
//! one sample a line, 65 comma-separated integers: 64 pixel values `0..=16` (an 8x8 image,
//! row-major) then the label `0..=9`. Values written as floats (`16.0`) are accepted when
//! integral. `datasets/fetch.sh` extracts the file from the scikit-learn wheel on PyPI.

use std::path::Path;

use crate::error::{DataError, Result};
use crate::idx::{find_file, read_maybe_gzip};
use crate::set::ImageSet;

/// Subdirectory of the data root holding the digits.
pub const DIGITS_SUBDIR: &str = "digits";
/// The file name looked for (then with `.gz`; gzip is detected by content).
pub const DIGITS_FILE: &str = "digits.csv";
/// Image side.
pub const DIGITS_SIDE: usize = 8;
/// Largest pixel value (pixels count set bits in 4x4 blocks of a 32x32 bitmap).
pub const DIGITS_MAX: u8 = 16;
/// Number of classes.
pub const DIGITS_CLASSES: usize = 10;
/// Samples of the set (scikit-learn's `load_digits`: 174 to 183 of each class).
pub const DIGITS_N: usize = 1797;

/// The most bytes the (decompressed) CSV may hold: the real file inflates to about 0.5 MB,
/// so anything past 64 MiB is a decompression bomb or the wrong file, and is rejected without
/// being inflated further.
pub const DIGITS_MAX_BYTES: u64 = 64 << 20;

/// Longest excerpt of a bad field quoted in an error message.
const FIELD_PREVIEW_CHARS: usize = 32;

/// Loads the digits from `dir/digits.csv` or `dir/digits.csv.gz` as a 1x8x8 [`ImageSet`] with
/// `max_value` 16.
pub fn load_digits(dir: impl AsRef<Path>) -> Result<ImageSet> {
    let path = find_file(dir.as_ref(), DIGITS_FILE)?;
    let bytes = read_maybe_gzip(&path, DIGITS_MAX_BYTES)?;
    parse_digits(&path, &bytes)
}

/// The built-in set: [`load_digits`], then checked whole as the IDX loaders check their
/// headers' sizes: [`DIGITS_N`] samples with each of the [`DIGITS_CLASSES`] classes
/// (sixty-fifth hostile round, N1: a copy cut at a line, doubled, or without a class was read
/// as the digits with no word).
pub fn load_builtin_digits(dir: &Path) -> Result<ImageSet> {
    let set = load_digits(dir)?;
    let classes = (0..DIGITS_CLASSES)
        .filter(|&c| set.labels.iter().any(|&l| usize::from(l) == c))
        .count();
    if set.n != DIGITS_N || classes != DIGITS_CLASSES {
        return Err(DataError::NotTheSet {
            path: find_file(dir, DIGITS_FILE)?,
            set: "digits",
            found: format!("{} samples of {classes} classes", set.n),
            expected: format!("{DIGITS_N} samples of {DIGITS_CLASSES} classes"),
        });
    }
    Ok(set)
}

/// Parses the (uncompressed) CSV text; `path` is for messages only. Blank lines are skipped;
/// a text without any sample is a [`DataError::Empty`].
pub fn parse_digits(path: &Path, bytes: &[u8]) -> Result<ImageSet> {
    let mut images = Vec::new();
    let mut labels = Vec::new();
    let mut offset = 0usize;
    for (line_index, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let line_start = offset;
        offset += line.len() + 1;
        let at = LineAt {
            path,
            line: line_index + 1,
            start: line_start,
        };
        if let Some((pixels, label)) = parse_line(&at, line, labels.len())? {
            images.extend_from_slice(&pixels);
            labels.push(label);
        }
    }
    if labels.is_empty() {
        return Err(DataError::Empty {
            path: path.to_path_buf(),
            what: "digits CSV".into(),
            detail: format!("no samples in {} bytes", bytes.len()),
        });
    }
    ImageSet::new(
        "digits",
        images,
        labels,
        [1, DIGITS_SIDE, DIGITS_SIDE],
        DIGITS_CLASSES,
        DIGITS_MAX,
    )
}

/// Where a line is, for messages.
struct LineAt<'a> {
    /// The file.
    path: &'a Path,
    /// 1-based line number.
    line: usize,
    /// Byte offset of the line start.
    start: usize,
}

impl LineAt<'_> {
    /// A [`DataError::Parse`] at this line.
    fn err(&self, message: String) -> DataError {
        DataError::Parse {
            path: self.path.to_path_buf(),
            line: self.line,
            offset: self.start as u64,
            message,
        }
    }
}

/// Parses one line into 64 pixels and a label; `None` for a blank line. `index` is the
/// sample's index, for messages.
fn parse_line(at: &LineAt, line: &[u8], index: usize) -> Result<Option<([u8; 64], u8)>> {
    const DIM: usize = DIGITS_SIDE * DIGITS_SIDE;
    let trimmed = line.trim_ascii();
    if trimmed.is_empty() {
        return Ok(None);
    }
    let text = std::str::from_utf8(trimmed).map_err(|e| at.err(format!("not UTF-8 text: {e}")))?;
    let fields: Vec<&str> = text.split(',').collect();
    if fields.len() != DIM + 1 {
        return Err(at.err(format!(
            "expected {} comma-separated values (64 pixels and a label), found {}",
            DIM + 1,
            fields.len()
        )));
    }
    let mut pixels = [0u8; DIM];
    for (col, (pixel, field)) in pixels.iter_mut().zip(&fields).enumerate() {
        *pixel = parse_integral(field)
            .filter(|v| (0.0..=f64::from(DIGITS_MAX)).contains(v))
            .ok_or_else(|| {
                at.err(format!(
                    "pixel {col} is {}, expected an integer in 0..={DIGITS_MAX}",
                    preview(field)
                ))
            })? as u8;
    }
    // Byte offset of the label field: the line start plus everything before it.
    let label_offset = at.start
        + (line.len() - line.trim_ascii_start().len())
        + fields[..DIM].iter().map(|f| f.len() + 1).sum::<usize>();
    let label = parse_label(at, fields[DIM], label_offset, index)?;
    Ok(Some((pixels, label)))
}

/// Parses the label field at byte offset `offset`: a [`DataError::LabelOutOfRange`] for an
/// integer `>= 10`, a [`DataError::Parse`] for anything else that is not a label.
fn parse_label(at: &LineAt, field: &str, offset: usize, index: usize) -> Result<u8> {
    let not_a_label = || {
        at.err(format!(
            "label {} is not an integer in 0..{DIGITS_CLASSES}",
            preview(field)
        ))
    };
    let label = parse_integral(field)
        .filter(|v| (0.0..u64::MAX as f64).contains(v))
        .ok_or_else(not_a_label)?;
    if label < DIGITS_CLASSES as f64 {
        return Ok(label as u8);
    }
    Err(DataError::LabelOutOfRange {
        path: at.path.to_path_buf(),
        index,
        offset: offset as u64,
        label: label as u64,
        num_classes: DIGITS_CLASSES,
    })
}

/// A finite integral number, written as an integer or a float.
fn parse_integral(field: &str) -> Option<f64> {
    let v: f64 = field.trim_ascii().parse().ok()?;
    (v.is_finite() && v.fract() == 0.0).then_some(v)
}

/// A field quoted for a message, cut to its first [`FIELD_PREVIEW_CHARS`] characters.
fn preview(field: &str) -> String {
    match field.char_indices().nth(FIELD_PREVIEW_CHARS) {
        Some((cut, _)) => format!("{:?}... ({} bytes)", &field[..cut], field.len()),
        None => format!("{field:?}"),
    }
}
