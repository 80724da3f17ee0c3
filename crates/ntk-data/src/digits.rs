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

/// Loads the digits from `dir/digits.csv` or `dir/digits.csv.gz` as a 1x8x8 [`ImageSet`] with
/// `max_value` 16.
pub fn load_digits(dir: impl AsRef<Path>) -> Result<ImageSet> {
    let path = find_file(dir.as_ref(), DIGITS_FILE)?;
    let bytes = read_maybe_gzip(&path)?;
    parse_digits(&path, &bytes)
}

/// Parses the (uncompressed) CSV text; `path` is for messages only.
pub fn parse_digits(path: &Path, bytes: &[u8]) -> Result<ImageSet> {
    const DIM: usize = DIGITS_SIDE * DIGITS_SIDE;
    let mut images = Vec::new();
    let mut labels = Vec::new();
    let mut offset = 0usize;
    for (line_index, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let line_start = offset;
        offset += line.len() + 1;
        let err = |message: String| DataError::Parse {
            path: path.to_path_buf(),
            line: line_index + 1,
            offset: line_start as u64,
            message,
        };
        let text = std::str::from_utf8(line)
            .map_err(|e| err(format!("not UTF-8 text: {e}")))?
            .trim();
        if text.is_empty() {
            continue;
        }
        let fields: Vec<&str> = text.split(',').collect();
        if fields.len() != DIM + 1 {
            return Err(err(format!(
                "expected {} comma-separated values (64 pixels and a label), found {}",
                DIM + 1,
                fields.len()
            )));
        }
        for (col, field) in fields[..DIM].iter().enumerate() {
            let v = parse_integral(field)
                .filter(|v| (0.0..=f64::from(DIGITS_MAX)).contains(v))
                .ok_or_else(|| {
                    err(format!(
                        "pixel {col} is {field:?}, expected an integer in 0..={DIGITS_MAX}"
                    ))
                })?;
            images.push(v as u8);
        }
        let field = fields[DIM];
        let label = parse_integral(field)
            .filter(|v| *v >= 0.0)
            .ok_or_else(|| err(format!("label {field:?} is not a non-negative integer")))?;
        if label >= DIGITS_CLASSES as f64 {
            // Byte offset of the label field: the line start plus everything before it.
            let field_offset = line_start
                + (line.len() - line.trim_ascii_start().len())
                + fields[..DIM].iter().map(|f| f.len() + 1).sum::<usize>();
            return Err(DataError::LabelOutOfRange {
                path: path.to_path_buf(),
                index: labels.len(),
                offset: field_offset as u64,
                label: label as u64,
                num_classes: DIGITS_CLASSES,
            });
        }
        labels.push(label as u8);
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

/// A finite integral number, written as an integer or a float.
fn parse_integral(field: &str) -> Option<f64> {
    let v: f64 = field.trim().parse().ok()?;
    (v.is_finite() && v.fract() == 0.0).then_some(v)
}
