//! The user's own data files (`data.dataset = "file"`): inputs as an `n x d` matrix (or `n`
//! images, `n x h x w` or `n x c x h x w`) and labels as `n` integers, read from `.npy`,
//! `.npz` (`numpy.savez`, `numpy.savez_compressed`) or CSV; `.npy` and CSV may be gzipped.
//!
//! A path names a file. An `.npz` member is chosen by a `:name` suffix (`set.npz:x_train`),
//! else by the key's default member ([`Role::member`]: `x`, `y`, `x_test`, `y_test`), so
//! that `numpy.savez("set.npz", x=x, y=y, x_test=xt, y_test=yt)` serves all four keys. CSV:
//! one sample a line, comma-separated numbers, `#` comments; a first line of names (each
//! field with a letter, no decimal number, not starting as a number does, no missing-value
//! marker such as `NA`) is a header and skipped (what
//! `pandas.DataFrame.to_csv(index=False)` and `numpy.savetxt` write); a byte order mark
//! opening the file is read past.
//!
//! Checks, each naming the file (and the row and column where one applies): the format by
//! extension; the shape (inputs 2-D to 4-D with at least one row and column, labels 1-D or
//! one column); the dtype (numeric; labels integral); every input finite; labels in
//! `0..=255`. Files are read within the memory the system allows
//! ([`ntk_system::memory::system_limit`]), never past it.

use std::io::Read;
use std::path::{Path, PathBuf};

use ntk_files::npy;

use crate::error::{DataError, Result};
use crate::file::Content;

/// Which `[data]` key names a file: what it must hold and its default `.npz` member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// `data.x`: the inputs.
    X,
    /// `data.labels`: a label per row of `data.x`.
    Labels,
    /// `data.test_x`: the held-out inputs (training only).
    TestX,
    /// `data.test_labels`: a label per row of `data.test_x`.
    TestLabels,
}

impl Role {
    /// The config key.
    pub fn key(self) -> &'static str {
        match self {
            Self::X => "data.x",
            Self::Labels => "data.labels",
            Self::TestX => "data.test_x",
            Self::TestLabels => "data.test_labels",
        }
    }

    /// The member of an `.npz` read when the path names none.
    pub fn member(self) -> &'static str {
        match self {
            Self::X => "x",
            Self::Labels => "y",
            Self::TestX => "x_test",
            Self::TestLabels => "y_test",
        }
    }
}

/// A data file's format, by its extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `.npy` or `.npy.gz`.
    Npy,
    /// `.npz`: a zip archive of `.npy` members.
    Npz,
    /// `.csv` or `.csv.gz`.
    Csv,
}

impl Format {
    /// The bytes reading an array of this format whole holds at its peak, a value: an `.npy`
    /// (or `.npz` member) its bytes (at most 8 a value) beside the values as f64; a CSV its
    /// values only, parsed from the streamed text into one buffer of the size a first pass
    /// counted.
    pub fn read_bytes_per_value(self) -> f64 {
        match self {
            Format::Npy | Format::Npz => 16.0,
            Format::Csv => 8.0,
        }
    }
}

/// Where an array is: a file, its format and, for an `.npz`, the member.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub path: PathBuf,
    pub format: Format,
    pub member: Option<String>,
}

impl Location {
    /// Reads a key's value: `FILE` or `FILE.npz:MEMBER`.
    pub fn parse(spec: &Path, role: Role) -> Result<Self> {
        let text = spec.to_string_lossy();
        if text.trim().is_empty() {
            return Err(DataError::EmptyPath);
        }
        let (path, member) = match text.rfind(".npz:") {
            Some(at) => (
                PathBuf::from(&text[..at + 4]),
                Some(text[at + 5..].to_string()),
            ),
            None => (spec.to_path_buf(), None),
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        let format = if name.ends_with(".npz") {
            Format::Npz
        } else if name.ends_with(".npy") || name.ends_with(".npy.gz") {
            Format::Npy
        } else if name.ends_with(".csv") || name.ends_with(".csv.gz") {
            Format::Csv
        } else {
            return Err(bad(
                &path,
                "unknown format: expected .npy, .npz or .csv (.npy.gz and .csv.gz too)",
            ));
        };
        let member = match (format, member) {
            (Format::Npz, Some(m)) if m.is_empty() => {
                return Err(bad(&path, "empty member name after `:`"));
            }
            (Format::Npz, m) => Some(m.unwrap_or_else(|| role.member().to_string())),
            (_, _) => None,
        };
        Ok(Self {
            path,
            format,
            member,
        })
    }

    /// The file, with `:member` for an `.npz`: how messages name the array.
    pub fn name(&self) -> PathBuf {
        match &self.member {
            Some(m) => PathBuf::from(format!("{}:{m}", self.path.display())),
            None => self.path.clone(),
        }
    }
}

/// A numeric array as read: values in C order and its shape.
struct Raw {
    values: Vec<f64>,
    shape: Vec<u64>,
}

/// Inputs read from a file: `rows` samples of `sample_shape` (`[d]`, `[1, h, w]` or
/// `[c, h, w]`), row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct Matrix {
    pub values: Vec<f64>,
    pub rows: usize,
    pub sample_shape: Vec<usize>,
}

impl Matrix {
    /// Values per sample.
    pub fn dim(&self) -> usize {
        self.sample_shape.iter().product()
    }
}

/// The shape a file's inputs declare, without reading all of an `.npy` or `.npz` file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputShape {
    pub rows: usize,
    pub sample_shape: Vec<usize>,
}

impl InputShape {
    /// Values per sample.
    pub fn dim(&self) -> usize {
        self.sample_shape.iter().product()
    }

    /// `[channels, height, width]` of image inputs (3-D files are one channel).
    pub fn image(&self) -> Option<[usize; 3]> {
        match self.sample_shape[..] {
            [h, w] => Some([1, h, w]),
            [c, h, w] => Some([c, h, w]),
            _ => None,
        }
    }
}

/// Reads the inputs `spec` names for the key of `role`.
pub fn read_inputs(spec: &Path, role: Role) -> Result<Matrix> {
    let at = Location::parse(spec, role)?;
    let raw = read(&at)?;
    let shape = input_shape(&at, &raw.shape)?;
    let d = shape.dim();
    if let Some(i) = raw.values.iter().position(|v| !v.is_finite()) {
        return Err(bad(
            &at.name(),
            format!(
                "row {}, column {} (counted from 0, as numpy indexes them) is {}: inputs must \
                 be finite",
                i / d,
                i % d,
                raw.values[i]
            ),
        ));
    }
    Ok(Matrix {
        values: raw.values,
        rows: shape.rows,
        sample_shape: shape.sample_shape,
    })
}

/// Reads the labels `spec` names for the key of `role`: integers in `0..=255`.
pub fn read_labels(spec: &Path, role: Role) -> Result<Vec<u8>> {
    let at = Location::parse(spec, role)?;
    let raw = read(&at)?;
    labels_len(&at, &raw.shape)?;
    raw.values
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            if v.fract() == 0.0 && (0.0..=255.0).contains(&v) {
                Ok(v as u8)
            } else {
                Err(bad(
                    &at.name(),
                    format!(
                        "row {i} (counted from 0, as numpy indexes them): label {} is not an \
                         integer in 0..=255",
                        label_text(v)
                    ),
                ))
            }
        })
        .collect()
}

/// A label as the message shows it: exact where f64 holds it exactly (below 2^53 in
/// magnitude); a 64-bit integer beyond that is read as the nearest f64, so its digits are
/// not shown as if they were the file's.
fn label_text(v: f64) -> String {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if v.is_finite() && v.abs() >= EXACT {
        format!("of about {v:.3e} (beyond 2^53, read as the nearest f64)")
    } else {
        v.to_string()
    }
}

/// The shape of the inputs `spec` names, from the header of an `.npy` or `.npz` member (a
/// CSV is parsed whole, its values counted, not kept).
pub fn peek_inputs(spec: &Path, role: Role) -> Result<InputShape> {
    let at = Location::parse(spec, role)?;
    input_shape(&at, &peek(&at)?)
}

/// The number of labels `spec` names, from the header of an `.npy` or `.npz` member (a CSV
/// is parsed whole, its values counted, not kept).
pub fn peek_labels(spec: &Path, role: Role) -> Result<usize> {
    let at = Location::parse(spec, role)?;
    labels_len(&at, &peek(&at)?)
}

/// Inputs must be `n x d`, `n x h x w` or `n x c x h x w`, no axis empty.
fn input_shape(at: &Location, shape: &[u64]) -> Result<InputShape> {
    if !(2..=4).contains(&shape.len()) {
        return Err(bad(
            &at.name(),
            format!("inputs of shape {shape:?}: expected n x d (2-D), n x h x w or n x c x h x w"),
        ));
    }
    if shape.contains(&0) {
        return Err(bad(
            &at.name(),
            format!("inputs of shape {shape:?}: no samples or no values per sample"),
        ));
    }
    let too_large = || bad(&at.name(), format!("inputs of shape {shape:?}: too large"));
    if shape
        .iter()
        .try_fold(8u64, |acc, &d| acc.checked_mul(d))
        .is_none()
    {
        return Err(too_large());
    }
    let size = |v: u64| usize::try_from(v).map_err(|_| too_large());
    Ok(InputShape {
        rows: size(shape[0])?,
        sample_shape: shape[1..].iter().map(|&v| size(v)).collect::<Result<_>>()?,
    })
}

/// Labels must be one per row: shape `[n]` or `[n, 1]` (any numeric dtype; the values are
/// checked to be whole when read).
fn labels_len(at: &Location, shape: &[u64]) -> Result<usize> {
    let n = match shape {
        [n] | [n, 1] => *n,
        _ => {
            return Err(bad(
                &at.name(),
                format!("labels of shape {shape:?}: expected one label per row (n or n x 1)"),
            ));
        }
    };
    if n == 0 {
        return Err(bad(&at.name(), "no labels"));
    }
    usize::try_from(n).map_err(|_| bad(&at.name(), "shape too large"))
}

/// Refuses anything but an existing regular file (after following links): a missing file,
/// a directory, a pipe or a device (`/dev/zero` would be read without end).
fn check_regular(path: &Path) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(()),
        Ok(_) => Err(bad(
            path,
            "not a regular file (a directory, a pipe or a device); data.x and its siblings \
             name .npy, .npz or .csv files",
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(bad(
            path,
            "file not found (a relative path is read from the directory the tool runs in)",
        )),
        Err(e) => Err(DataError::io(path, e)),
    }
}

/// The most bytes a data file may hold: the memory this process may use now.
fn read_limit() -> u64 {
    ntk_system::memory::system_limit().map_or(u64::MAX, |(bytes, _)| bytes as u64)
}

/// Reads the whole array at `at`.
fn read(at: &Location) -> Result<Raw> {
    check_regular(&at.path)?;
    let limit = read_limit();
    match at.format {
        Format::Npy => {
            // The header, then exactly the data it promises and one byte more: a gzipped
            // file is never decompressed beyond what its header says (ninety-second hostile
            // round, D6: a megabyte holding a gigabyte of zeros took 3.2 GB).
            let mut content = Content::open(&at.path, true)?;
            let mut bytes = content.read_up_to(12)?;
            let len = npy::header_len(&bytes)
                .filter(|&len| len <= 1 << 20)
                .ok_or_else(|| bad(&at.name(), "not an .npy array (magic or header length)"))?;
            bytes.extend(content.read_up_to(len.saturating_sub(bytes.len()) as u64)?);
            let h = npy::read_header(&bytes).map_err(|e| bad(&at.name(), e.to_string()))?;
            let data = h
                .data_len()
                .ok_or_else(|| bad(&at.name(), "the header's shape is too large"))?;
            if data > limit {
                return Err(DataError::TooLarge {
                    path: at.name(),
                    limit,
                });
            }
            let header = bytes.len() as u64;
            content.append_rest_exact(header, header.saturating_add(data), &mut bytes)?;
            from_npy(at, &bytes)
        }
        Format::Npz => {
            let mut archive = open_npz(at)?;
            let mut entry = npz_member(at, &mut archive)?;
            if entry.size() > limit {
                return Err(DataError::TooLarge {
                    path: at.name(),
                    limit,
                });
            }
            // The declared size is the archive's word: reserve no more than the deflate
            // bound of the stored bytes allows, and let the buffer grow past that.
            let bound = entry
                .compressed_size()
                .saturating_mul(1032)
                .min(entry.size());
            let mut bytes = Vec::with_capacity(usize::try_from(bound).unwrap_or(0));
            (&mut entry)
                .take(limit.saturating_add(1))
                .read_to_end(&mut bytes)
                .map_err(|e| bad(&at.name(), format!("cannot read the member: {e}")))?;
            from_npy(at, &bytes)
        }
        Format::Csv => {
            // Counted first (a pass that keeps no values, and whose answer the config's
            // checks have usually asked for already), then parsed into one buffer of that
            // size: the values never grow by doubling past what the memory guard counted,
            // and a buffer that cannot be had is refused naming the file (hundred-and-
            // thirtieth hostile round, D3: a 360 MB CSV under `ulimit -v` failed in the
            // allocator naming no file; D4: the guard, measuring after a whole read, advised
            // a limit that was refused again).
            let count = peek(at)?.iter().product::<u64>();
            if count.saturating_mul(8) > limit {
                return Err(DataError::TooManyValues {
                    path: at.name(),
                    limit,
                });
            }
            let mut kept = Vec::new();
            reserve(&at.name(), &mut kept, count)?;
            let mut content = Content::open(&at.path, true)?;
            let (values, rows, cols) = {
                let (reader, io) = content.reader_and_errors();
                let values = Values::Kept {
                    values: kept,
                    counted: count,
                };
                parse_csv(&at.path, reader, limit, &io, values)?
            };
            Ok(Raw {
                values: values.kept(&at.name())?,
                shape: vec![rows as u64, cols as u64],
            })
        }
    }
}

/// The shape of the array at `at`, reading only the header of an `.npy` (or `.npz`
/// member); a CSV is parsed whole. Loading a config asks for the same shapes several times
/// (the checks, the input dimension, the memory estimate), so each file's shape is kept
/// for as long as the file's size and modification time stay the same.
fn peek(at: &Location) -> Result<Vec<u64>> {
    check_regular(&at.path)?;
    type Key = (Location, u64, Option<std::time::SystemTime>);
    static SHAPES: std::sync::Mutex<Vec<(Key, Vec<u64>)>> = std::sync::Mutex::new(Vec::new());
    let key: Option<Key> = std::fs::metadata(&at.path)
        .ok()
        .map(|m| (at.clone(), m.len(), m.modified().ok()));
    let known = |k: &Key| {
        let shapes = SHAPES
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        shapes.iter().find(|(x, _)| x == k).map(|(_, s)| s.clone())
    };
    if let Some(shape) = key.as_ref().and_then(known) {
        return Ok(shape);
    }
    let shape = peek_file(at)?;
    if let Some(k) = key {
        let mut shapes = SHAPES
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        shapes.retain(|(x, _)| x.0 != k.0);
        shapes.push((k, shape.clone()));
    }
    Ok(shape)
}

/// [`peek`] without the memory of earlier answers.
fn peek_file(at: &Location) -> Result<Vec<u64>> {
    let header = |reader: &mut dyn Read| -> Result<npy::Header> {
        let mut first = Vec::new();
        reader
            .take(12)
            .read_to_end(&mut first)
            .map_err(|e| DataError::io(&at.path, e))?;
        let len = npy::header_len(&first)
            .filter(|&len| len <= 1 << 20)
            .ok_or_else(|| bad(&at.name(), "not an .npy array (magic or header length)"))?;
        let mut rest = Vec::new();
        reader
            .take(len.saturating_sub(first.len()) as u64)
            .read_to_end(&mut rest)
            .map_err(|e| DataError::io(&at.path, e))?;
        first.extend(rest);
        npy::read_header(&first).map_err(|e| bad(&at.name(), e.to_string()))
    };
    let h = match at.format {
        Format::Npy => {
            let mut content = Content::open(&at.path, true)?;
            let bytes = content.read_up_to(12)?;
            let len = npy::header_len(&bytes).filter(|&len| len <= 1 << 20);
            let more = len.map_or(0, |len| len.saturating_sub(bytes.len()));
            let mut all = bytes;
            all.extend(content.read_up_to(more as u64)?);
            let h = header(&mut all.as_slice())?;
            // A raw file's size tells whether the header's shape is true (a gzipped one
            // is checked when read).
            if content.encoding() == crate::file::Encoding::Raw
                && let Some(stored) = content.stored_len()
            {
                promised(at, &h, stored.saturating_sub(all.len() as u64))?;
            }
            h
        }
        Format::Npz => {
            let mut archive = open_npz(at)?;
            let mut entry = npz_member(at, &mut archive)?;
            let size = entry.size();
            let mut counted = CountingReader {
                inner: &mut entry,
                count: 0,
            };
            let h = header(&mut counted)?;
            let read = counted.count;
            promised(at, &h, size.saturating_sub(read))?;
            h
        }
        Format::Csv => {
            let mut content = Content::open(&at.path, true)?;
            let (reader, io) = content.reader_and_errors();
            // Counting maps nothing: it is held to the machine's memory, not to `ulimit -v`
            // (the memory guard, from the count, advises the `ulimit -v` that holds the
            // values).
            let limit = ntk_system::memory::physical_limit().map_or(u64::MAX, |(b, _)| b as u64);
            let (_, rows, cols) = parse_csv(&at.path, reader, limit, &io, Values::Counted(0))?;
            return Ok(vec![rows as u64, cols as u64]);
        }
    };
    Ok(h.shape)
}

/// Checks that the `data` bytes after a header are what its shape promises.
fn promised(at: &Location, h: &npy::Header, data: u64) -> Result<()> {
    if h.data_len() == Some(data) {
        return Ok(());
    }
    Err(bad(
        &at.name(),
        format!(
            "the header's shape {:?} does not match the {data} data bytes that follow it",
            h.shape
        ),
    ))
}

/// A reader that counts the bytes read through it.
struct CountingReader<'a, R: Read> {
    inner: &'a mut R,
    count: u64,
}

impl<R: Read> Read for CountingReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count += n as u64;
        Ok(n)
    }
}

fn from_npy(at: &Location, bytes: &[u8]) -> Result<Raw> {
    let a = npy::read_array_bytes(bytes).map_err(|e| bad(&at.name(), e.to_string()))?;
    Ok(Raw {
        values: a.values,
        shape: a.shape,
    })
}

fn open_npz(at: &Location) -> Result<zip::ZipArchive<std::fs::File>> {
    crate::file::check_file(&at.path)?;
    let file = std::fs::File::open(&at.path).map_err(|e| DataError::io(&at.path, e))?;
    zip::ZipArchive::new(file).map_err(|e| {
        bad(
            &at.path,
            format!("not an .npz archive (numpy.savez writes a zip file): {e}"),
        )
    })
}

/// The member `at` names, or an error listing the arrays the archive holds.
fn npz_member<'a>(
    at: &Location,
    archive: &'a mut zip::ZipArchive<std::fs::File>,
) -> Result<zip::read::ZipFile<'a>> {
    let member = at.member.as_deref().unwrap_or_default();
    // `NAME.npy`, as numpy.savez writes it, or `NAME` alone, which numpy.load reads too
    // (hundred-and-thirty-fifth hostile round, second review, D2: the archive was said to
    // hold `x` and `FILE.npz:x` was refused).
    let with_suffix = format!("{member}.npy");
    let held: Vec<&str> = [with_suffix.as_str(), member]
        .into_iter()
        .filter(|name| archive.file_names().any(|n| n == *name))
        .collect();
    // Both stored: numpy reads the bare one, savez writes the other; neither is surely the
    // array meant (hundred-and-thirty-sixth hostile round, D3: `x.npy` was read where numpy
    // reads `x`).
    if let [a, b] = held[..] {
        return Err(bad(
            &at.path,
            format!(
                "the archive holds two arrays named {member:?} (members {a:?} and {b:?}): which is meant cannot be told; store one"
            ),
        ));
    }
    let file = held.first().map(|name| name.to_string());
    let Some(file) = file else {
        let mut names: Vec<&str> = archive
            .file_names()
            .map(|n| n.strip_suffix(".npy").unwrap_or(n))
            .collect();
        names.sort_unstable();
        return Err(bad(
            &at.path,
            format!(
                "no array named {member:?}; the archive holds {} (choose one with FILE.npz:NAME)",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            ),
        ));
    };
    archive
        .by_name(&file)
        .map_err(|e| bad(&at.name(), format!("cannot read the member: {e}")))
}

/// The longest line a CSV file of numbers may have (64 MiB: rows of a million features):
/// a longer one is refused before the CSV reader buffers it.
const MAX_CSV_LINE: u64 = 64 << 20;

/// The most fields a line of a CSV file of numbers may have (2^21: rows of two million
/// features, seven times an ImageNet image's 150,528): a line of more is refused as it is
/// read, before the CSV reader holds a bound for each of them (8 bytes a field, 256 MiB for
/// a 64 MiB line of `1,1,...`: hundred-and-thirty-second hostile round, D3, where the first
/// pass over two such lines left 1.6 GB mapped before the memory guard spoke). A line thus
/// costs the reader at most its 64 MiB of text and 16 MiB of bounds.
const MAX_CSV_FIELDS: u64 = 1 << 21;

/// A reader of CSV text that refuses, as it streams, a NUL byte (in no text of numbers:
/// thirty-seventh hostile round, D2, 200 MB of NUL bytes ended in the allocator's message)
/// and a line longer than [`MAX_CSV_LINE`], recording where (`problem`: the line, its
/// start's byte offset, what), so that nothing is buffered whole: a gzipped CSV of a
/// megabyte holding a gigabyte of comments or NUL bytes was decompressed whole into memory
/// (ninety-second hostile round, D6).
struct TextGuard<R> {
    inner: R,
    read: u64,
    line: usize,
    line_len: u64,
    /// The current line's commas ([`MAX_CSV_FIELDS`]; the file's width from its first line
    /// of fields).
    line_commas: u64,
    /// Where the current line of fields stands among quotes, as the CSV reader reads them
    /// ([`Quote`]), and whether a `#` outside quotes has opened its comment (whose quotes
    /// are read as spaces).
    quote: Quote,
    line_hashed: bool,
    /// Whether the current line's fields hold a `"`, and a byte other than quotes and
    /// spaces: a line of one quoted empty field (`""`, `" "`) is a row the reader reads as
    /// a blank line ([`TextGuard::row_problem`]).
    line_quote: bool,
    line_text: bool,
    /// The current line's bytes (the first [`COMMENT_KEPT`]) where it starts with `#`, which
    /// the CSV reader skips as a comment: to tell a row that opens with a spreadsheet's
    /// error value from a comment ([`row_not_comment`]).
    comment: Option<Vec<u8>>,
    /// The byte order mark's bytes read at the file's start.
    mark: u64,
    /// The fields of the first line that is neither blank nor a comment (the header or the
    /// first row), once read: in a file of one column a line of `#` and a word is a row
    /// ([`row_not_comment`]).
    width: Option<u64>,
    /// Each run of blank and comment lines, read ahead of the parser: the byte (past the
    /// mark) where it starts, and the line and byte of the line after it, where a record
    /// stands. The CSV reader places a record after such a run at the run's start, so a
    /// message about it would name a comment's line ([`Runs::place`]; hundred-and-twenty-
    /// ninth hostile round, N1, and hundred-and-thirtieth, D2).
    runs: std::rc::Rc<std::cell::RefCell<Runs>>,
    /// Where the current run of blank and comment lines started, if one is open.
    run_start: Option<u64>,
    problem: Option<(usize, u64, String)>,
}

/// Where a line of fields stands among quotes, byte by byte, as the CSV reader (csv-core)
/// reads them: a `"` opens a quoted field only as the field's first byte; in one, `""` is a
/// quote, and a `"` before anything else closes it (the field goes on unquoted). A
/// [`TextGuard`] that flipped at every `"` took the `"` of a name such as `len"` for an
/// opening one and a comment's `,"` for a closing one, and the rows below were read into
/// one field (hundred-and-thirty-fifth hostile round, D1).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Quote {
    /// Outside quotes; `true` at a field's first byte.
    Out(bool),
    /// In a quoted field.
    In,
    /// In a quoted field, just after a `"`: another makes it a quote, anything else closes
    /// the field's quotes.
    Closing,
}

/// The byte the guard writes for a `#` that opens a comment after a row's fields: a NUL,
/// which no file brings (it is refused as read), so that the parser cuts the row's fields
/// there and nowhere else: a `#` in a quoted field is text (hundred-and-thirty-fifth hostile
/// round, N1: `"# not a comment",3` was dropped as a comment, its number with it).
const COMMENT_MARK: char = '\0';

/// The runs of blank and comment lines a [`TextGuard`] found and the parser has not passed.
#[derive(Default)]
struct Runs(std::collections::VecDeque<(u64, u64, u64)>);

impl Runs {
    /// The record the reader places at `position` where it stands: after the run it falls
    /// in, if any; runs before it are passed.
    fn place(&mut self, position: &mut csv::Position) {
        let at = position.byte();
        while let Some(&(start, line, byte)) = self.0.front() {
            if byte <= at {
                self.0.pop_front();
            } else if start <= at {
                self.0.pop_front();
                position.set_line(line);
                position.set_byte(byte);
                return;
            } else {
                return;
            }
        }
    }
}

impl<R> TextGuard<R> {
    /// The bytes of the current line before its content: the byte order mark on line 1.
    fn lead(&self) -> u64 {
        if self.line == 1 { self.mark } else { 0 }
    }

    /// Why the line just ended is a row, not the comment the CSV reader takes it for.
    fn row_problem(&mut self) -> Option<String> {
        // One quoted empty field: the reader takes it for a blank line and skips it
        // (hundred-and-thirty-sixth hostile round, N1: `""` and `" "` lines went without a
        // word, where `"",""` is refused).
        if self.comment.is_none() && self.line_quote && !self.line_text && self.line_commas == 0 {
            return Some(
                "field 1 (counted from 1): a quoted field of nothing but spaces and quotes is \
                 not a number (a blank line holds no quotes)"
                    .into(),
            );
        }
        let Some(line) = self.comment.take() else {
            // The first line of fields sets the file's width.
            // (A blank line, of LF or CRLF, has opened a run of such lines by now.)
            if self.width.is_none() && self.run_start.is_none() {
                self.width = Some(self.line_commas + 1);
            }
            return None;
        };
        row_not_comment(&String::from_utf8_lossy(&line), self.width == Some(1))
    }
}

impl<R: Read> Read for TextGuard<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let got = self.inner.read(buf)?;
        if got == 0
            && let Some(what) = self.row_problem()
        {
            // The last line, with no newline after it.
            self.problem = Some((self.line, self.read - self.line_len, what));
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "a spreadsheet's error value opens a line",
            ));
        }
        for (i, slot) in buf[..got].iter_mut().enumerate() {
            let b = *slot;
            let at = self.read + i as u64;
            let what = if b == 0 {
                format!("a NUL byte at byte {at} of the file: not a text file of numbers")
            } else if b == b'\n' && self.quote == Quote::In {
                // A field of numbers holds no line break: a quoted field that runs over the
                // line's end is refused here, before the reader holds it whole over the lines
                // below (hundred-and-thirty-fifth hostile round, D2: a quote opening a 652 KB
                // gzipped file took 4.4 GB; D1 and N3, a name with a line break put the
                // comment guard out of step and blamed the next line).
                "a quoted field runs over the line's end: a table of numbers holds no line \
                 break inside a field (a header name with one: write it on one line)"
                    .to_string()
            } else if b == b'\n' {
                if self.line_len == self.lead() && self.run_start.is_none() {
                    self.run_start = Some(at - self.mark); // a blank line
                }
                match self.row_problem() {
                    Some(what) => what,
                    None => {
                        self.line += 1;
                        self.line_len = 0;
                        self.line_commas = 0;
                        self.quote = Quote::Out(true);
                        self.line_hashed = false;
                        self.line_quote = false;
                        self.line_text = false;
                        continue;
                    }
                }
            } else if self.line_len >= MAX_CSV_LINE {
                format!("a line longer than {MAX_CSV_LINE} bytes: not a table of numbers")
            } else if b == b',' && self.comment.is_none() && self.line_commas + 1 >= MAX_CSV_FIELDS
            {
                format!(
                    "a line of more than {MAX_CSV_FIELDS} fields (field {} starts at byte {}; \
                     every comma counts, in quotes or in a comment after the numbers too): rows \
                     of at most {MAX_CSV_FIELDS} numbers are read",
                    MAX_CSV_FIELDS + 1,
                    at + 1
                )
            } else {
                // Every comma of a line of fields counts, a comment's after the numbers too:
                // the reader splits the whole line before its `#` is seen (hundred-and-thirty-
                // third hostile round, D7: 40 million commas in a comment after `1,2,3`
                // peaked at 2.2 GB); a comment line, which the reader skips whole, costs none.
                if b == b',' {
                    self.line_commas += 1;
                }
                let lead = self.lead();
                let is_mark =
                    self.line == 1 && at == self.mark && self.mark < 3 && b == MARK[at as usize];
                // A comment after a row's numbers ends at its line's end, quotes and all: a `"`
                // in it is read as a space, never as a quoted field that runs on over the
                // lines below (hundred-and-thirty-fourth hostile round, D2: `1,2 # a,"b` took
                // the next rows into one field, up to the next quote, with exit 0); its `#` is
                // marked for the parser ([`COMMENT_MARK`]). A `#` in a quoted field is text.
                // A line that opens with `#` is the reader's own comment, skipped whole.
                let comment_line = self.comment.is_some() || (self.line_len == lead && b == b'#');
                if !comment_line && !is_mark {
                    if self.line_hashed {
                        if b == b'"' {
                            *slot = b' ';
                        }
                    } else {
                        match b {
                            b'"' => self.line_quote = true,
                            b' ' | b'\t' | b'\r' => {}
                            // A `#` outside quotes opens the comment: no field's text.
                            b'#' if !matches!(self.quote, Quote::In) => {}
                            _ => self.line_text = true,
                        }
                        self.quote = match (self.quote, b) {
                            (Quote::Out(true), b'"') | (Quote::Closing, b'"') => Quote::In,
                            (Quote::In, b'"') => Quote::Closing,
                            (Quote::In, _) => Quote::In,
                            (_, b',') => Quote::Out(true),
                            (_, b'#') => {
                                self.line_hashed = true;
                                *slot = COMMENT_MARK as u8;
                                Quote::Out(false)
                            }
                            _ => Quote::Out(false),
                        };
                    }
                }
                if is_mark {
                    self.mark += 1;
                } else if self.line_len == lead {
                    // The line's first byte: a comment's or a blank line's opens a run (or
                    // goes on with one); another's ends it.
                    if b == b'#' || b == b'\r' {
                        if b == b'#' {
                            self.comment = Some(Vec::new());
                        }
                        self.run_start.get_or_insert(at - self.mark);
                    } else if let Some(start) = self.run_start.take() {
                        self.runs.borrow_mut().0.push_back((
                            start,
                            self.line as u64,
                            at - self.mark,
                        ));
                    }
                }
                if let Some(line) = self.comment.as_mut().filter(|l| l.len() < COMMENT_KEPT) {
                    line.push(b);
                }
                self.line_len += 1;
                continue;
            };
            self.problem = Some((self.line, at - self.line_len, what));
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "not a text file of numbers",
            ));
        }
        self.read += got as u64;
        Ok(got)
    }
}

/// Parses numeric CSV streamed from `input` (the content of the file `path`): `(values,
/// rows, columns)`, at most `limit` bytes of values. Blank lines and `#` comments are
/// skipped (a `#` ends the line's fields wherever it stands, as numpy.loadtxt reads it:
/// docs/config.md says "`#` starts a comment", and a comment after the numbers was refused
/// as "not a number": eleventh hostile round, F20); a first line without any number is a
/// header. Every line must have the first one's number of fields.
/// `io` says a read error of the input (a gzip stream's own).
fn parse_csv(
    path: &Path,
    input: impl Read,
    limit: u64,
    io: &dyn Fn(std::io::Error) -> DataError,
    values: Values,
) -> Result<(Values, usize, usize)> {
    let mut guard = TextGuard {
        inner: input,
        read: 0,
        line: 1,
        line_len: 0,
        line_commas: 0,
        quote: Quote::Out(true),
        line_hashed: false,
        line_quote: false,
        line_text: false,
        comment: None,
        mark: 0,
        width: None,
        runs: std::rc::Rc::default(),
        run_start: None,
        problem: None,
    };
    let parsed = parse_csv_text(path, &mut guard, limit, values);
    match (parsed, guard.problem.take()) {
        (Err(_), Some((line, offset, message))) => Err(DataError::Parse {
            path: path.to_path_buf(),
            line,
            offset,
            message,
        }),
        (Err(DataError::Io { source, .. }), None) => Err(io(source)),
        (parsed, _) => parsed,
    }
}

/// [`parse_csv`]'s reading of the guarded text.
fn parse_csv_text(
    path: &Path,
    text: &mut TextGuard<impl Read>,
    limit: u64,
    mut values: Values,
) -> Result<(Values, usize, usize)> {
    // A byte order mark opening the file (Excel's "CSV UTF-8", Python's utf-8-sig) is read
    // past before the CSV reader sees it, so that a quoted first field stays quoted
    // (hundred-and-twenty-fourth and -fifth hostile rounds, D1: the first row, behind it,
    // was read as a header and dropped).
    let mut head = Vec::with_capacity(3);
    (&mut *text)
        .take(3)
        .read_to_end(&mut head)
        .map_err(|source| DataError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    if head == MARK {
        head.clear();
    }
    let runs = text.runs.clone();
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .comment(Some(b'#'))
        // Records end at `\n` alone, so that a record after a CRLF line end starts where it
        // stands, not at the `\n` (hundred-and-thirty-first hostile round, D2: every message
        // in a CRLF file named the line before); the `\r` is trimmed from the last field,
        // and a CRLF blank line is skipped below.
        .terminator(csv::Terminator::Any(b'\n'))
        .from_reader(std::io::Cursor::new(head).chain(&mut *text));
    let (mut rows, mut cols) = (0usize, None);
    let mut record = csv::StringRecord::new();
    let mut first = true;
    loop {
        let more = reader.read_record(&mut record).map_err(|e| {
            let (line, offset) = e
                .position()
                .map_or((0, 0), |p| (p.line() as usize, p.byte()));
            let message = e.to_string();
            match e.into_kind() {
                csv::ErrorKind::Io(source) => DataError::Io {
                    path: path.to_path_buf(),
                    source,
                },
                _ => DataError::Parse {
                    path: path.to_path_buf(),
                    line,
                    offset,
                    message,
                },
            }
        })?;
        if !more {
            break;
        }
        // A blank line of CRLF (`\r` alone), skipped as the reader skips an LF one.
        if record.len() == 1 && record[0].is_empty() {
            continue;
        }
        let mut position = record
            .position()
            .cloned()
            .unwrap_or_else(csv::Position::new);
        // A record after blank or comment lines stands where the guard found it (the
        // reader places it at the first of those lines).
        runs.borrow_mut().place(&mut position);
        let at = |message: String| DataError::Parse {
            path: path.to_path_buf(),
            line: position.line() as usize,
            offset: position.byte(),
            message,
        };
        // The fields before a `#`, the one holding it cut there (and left out when nothing
        // precedes the `#` in it); walked, not gathered, so that a row holds no memory per
        // field beyond the reader's own (hundred-and-thirty-second hostile round, D3).
        let (whole, cut) = comment_cut(&record);
        let fields = || record.iter().take(whole).chain(cut);
        let count = whole + usize::from(cut.is_some());
        if count == 0 {
            // A row opening with a spreadsheet's error value after spaces, read as a
            // comment, is a row lost.
            let line = record
                .iter()
                .collect::<Vec<_>>()
                .join(",")
                .replace(COMMENT_MARK, "#");
            if let Some(why) = row_not_comment(line.trim_start(), cols == Some(1)) {
                return Err(at(why));
            }
            continue; // a comment line the reader did not skip (`  # ...`)
        }
        // A header is names: no field is a number, nor starts as one does (a digit of any
        // script, a sign or dash, a point, after invisible characters): a first line of
        // numbers written with a character the parser does not take (a Unicode minus, a
        // fullwidth digit, a zero-width space, `0.5e`) is data, refused below naming the field
        // (hundred-and-twenty-fourth and -fifth hostile rounds, D1).
        // A first line is data when one of its fields is no name; that field says why in a
        // refusal (hundred-and-twenty-seventh hostile round, N2: `x,` named field 1, `x`).
        let on_first = std::mem::take(&mut first);
        let data_because = if on_first {
            match fields()
                .enumerate()
                .find_map(|(i, f)| not_a_name(f).map(|why| (i, f, why)))
            {
                None => {
                    say_header(path, position.line(), &fields().collect::<Vec<_>>());
                    continue;
                }
                Some(because) => Some(because),
            }
        } else {
            None
        };
        // A field after the first that opens with `#` and a word (`1,2,#N/A`) is a
        // spreadsheet's error value, not a comment: read as one, the row lost a column, and
        // the refusal blamed the next row, or the row of a file of two columns was read
        // whole (hundred-and-thirty-fourth hostile round, N1; round 131's N3).
        if let Some(field) = record.get(whole).filter(|_| cut.is_none() && whole > 0) {
            let field = field.trim_start().replacen(COMMENT_MARK, "#", 1);
            if opens_a_word(&field) {
                let shown: String = field.chars().take(32).collect();
                return Err(at(format!(
                    "field {} (counted from 1): {shown:?} is `#` and a word, a spreadsheet's \
                     error value (a missing or failed number), not a comment: write the number, \
                     or remove the row (a comment after the numbers keeps a space after the \
                     '#': '# {}')",
                    whole + 1,
                    field[1..].chars().take(24).collect::<String>()
                )));
            }
        }
        match cols {
            None => cols = Some(count),
            Some(c) if c != count => {
                return Err(at(format!("{count} fields where the first row has {c}")));
            }
            Some(_) => {}
        }
        // The row's first field out of f64's range (or not finite), with its value.
        let mut out_of_range = None;
        for (col, field) in fields().enumerate() {
            let v = field.parse::<f64>().map_err(|_| {
                let shown: String = field.chars().take(32).collect();
                let why = match misspelled_number(field) {
                    Some(c) => format!(
                        " (it holds U+{:04X}, which no number parser reads: write {})",
                        u32::from(c),
                        if c == BOM {
                            "the number alone"
                        } else {
                            "the ASCII '-'"
                        }
                    ),
                    // A quoted one, whose `#` is text (hundred-and-thirty-fifth hostile
                    // round, N1).
                    None if opens_a_word(field) => " (a spreadsheet's error value, a missing or \
                        failed number: write the number, or remove the row)"
                        .to_string(),
                    // Hundred-and-thirty-second hostile round, N1: classic Mac OS line ends.
                    None if field.contains('\r') => " (it holds a carriage return alone, which \
                        is no line end here: convert the file's line ends to LF or CRLF)"
                        .to_string(),
                    None => String::new(),
                };
                // Why line 1 was read as data (hundred-and-twenty-sixth hostile round, N4),
                // naming the field that is no name.
                let data = match data_because {
                    Some((i, f, why)) => format!(
                        "; the first line is read as data, not a header, as field {} ({:?}) {why} \
                         (a header's every field has a letter in it and no decimal number, does \
                         not start as a number does and is no missing-value marker such as NA; a \
                         header of other names is kept as a comment: start its line with '#')",
                        i + 1,
                        f.chars().take(32).collect::<String>()
                    ),
                    None => String::new(),
                };
                at(format!(
                    "field {} (counted from 1): {shown:?} is not a number{why}{data}",
                    col + 1
                ))
            })?;
            if (!v.is_finite() || (v == 0.0 && writes_nonzero(field))) && out_of_range.is_none() {
                out_of_range = Some((col, field, v));
            }
            values.push(path, v)?;
        }
        // Said with its line and text once the row's every field is a number: `1e309` is no
        // `inf` in the file (hundred-and-thirtieth hostile round, N5).
        if let Some((col, field, v)) = out_of_range {
            let shown: String = field.chars().take(32).collect();
            let why = if v == 0.0 {
                // Hundred-and-thirty-second hostile round, second review, D1: `2e-400` was
                // read as 0 with no word, where `1e400` is refused.
                "below the range of f64, read as 0"
            } else if field.chars().any(|c| c.is_ascii_digit()) {
                "beyond the range of f64, read as infinite"
            } else {
                "not a finite number"
            };
            return Err(at(format!(
                "field {} (counted from 1): {shown:?} is {why}: inputs and labels must be finite",
                col + 1
            )));
        }
        if values.len().saturating_mul(8) > limit {
            return Err(DataError::TooManyValues {
                path: path.to_path_buf(),
                limit,
            });
        }
        rows += 1;
    }
    drop(reader);
    let read = text.read;
    match cols {
        Some(cols) if rows > 0 => Ok((values, rows, cols)),
        _ => Err(DataError::Empty {
            path: path.to_path_buf(),
            what: "CSV file".into(),
            detail: format!("no rows of numbers in {read} bytes"),
        }),
    }
}

/// The fields of `record` before a `#` comment (the [`COMMENT_MARK`] the guard wrote for
/// it): how many stand whole before the field that holds it, and that field's text before
/// it, trimmed, where any is left.
fn comment_cut(record: &csv::StringRecord) -> (usize, Option<&str>) {
    for (i, field) in record.iter().enumerate() {
        if let Some((before, _)) = field.split_once(COMMENT_MARK) {
            let before = before.trim();
            return (i, Some(before).filter(|b| !b.is_empty()));
        }
    }
    (record.len(), None)
}

/// Where a CSV's parsed values go: kept, into a buffer reserved for the count a first pass
/// found, or only counted (that first pass, [`peek`]).
enum Values {
    /// Kept, at most `counted` of them (what the first pass found: a file that grew since is
    /// refused, never read past the buffer the memory guard counted).
    Kept {
        values: Vec<f64>,
        counted: u64,
    },
    Counted(u64),
}

impl Values {
    /// The values parsed so far.
    fn len(&self) -> u64 {
        match self {
            Values::Kept { values, .. } => values.len() as u64,
            Values::Counted(n) => *n,
        }
    }

    /// Takes one more value; one past the count is refused naming `path` (hundred-and-
    /// thirty-first hostile round, D3: a file that grew between its count and its parse was
    /// read past the buffer the memory guard counted, and under `ulimit -v` failed in the
    /// allocator naming no file).
    fn push(&mut self, path: &Path, v: f64) -> Result<()> {
        match self {
            Values::Kept { values, counted } => {
                if values.len() as u64 >= *counted {
                    return Err(changed(path, *counted, "more"));
                }
                if values.len() == values.capacity() {
                    reserve(path, values, (values.len() as u64).max(1024))?;
                }
                values.push(v);
            }
            Values::Counted(n) => *n += 1,
        }
        Ok(())
    }

    /// The values kept (none where they were only counted); fewer than counted are refused
    /// naming `path`.
    fn kept(self, path: &Path) -> Result<Vec<f64>> {
        match self {
            Values::Kept { values, counted } if values.len() as u64 != counted => {
                Err(changed(path, counted, &values.len().to_string()))
            }
            Values::Kept { values, .. } => Ok(values),
            Values::Counted(_) => Ok(Vec::new()),
        }
    }
}

/// A file that changed between the pass that counted its `counted` values and the one that
/// read `found` of them.
fn changed(path: &Path, counted: u64, found: &str) -> DataError {
    bad(
        path,
        format!(
            "the file changed while it was read: {counted} values counted, then {found} read; \
             read it again once nothing writes to it"
        ),
    )
}

/// Reserves room for `more` values in `kept`, or refuses naming `path`, the bytes and, under
/// `ulimit -v`, the limit that holds them.
fn reserve(path: &Path, kept: &mut Vec<f64>, more: u64) -> Result<()> {
    let fits = usize::try_from(more).is_ok_and(|m| kept.try_reserve_exact(m).is_ok());
    if fits {
        return Ok(());
    }
    let bytes = more.saturating_mul(8) as f64;
    let advice = ntk_system::memory::rlimit_advice(bytes).map_or(String::new(), |kib| {
        format!("; raise it to ulimit -v {kib} or more")
    });
    Err(DataError::io(
        path,
        std::io::Error::new(
            std::io::ErrorKind::OutOfMemory,
            format!(
                "its {more} values ({}) as f64 are more than this process can allocate now{advice}",
                ntk_system::memory::human(bytes)
            ),
        ),
    ))
}

/// Whether a number's text writes a nonzero value: a digit other than 0 before its exponent.
fn writes_nonzero(field: &str) -> bool {
    field
        .split(['e', 'E'])
        .next()
        .is_some_and(|m| m.chars().any(|c| matches!(c, '1'..='9')))
}

/// The bytes of a comment line kept to tell a row from it: a row's first field and some of
/// its numbers.
const COMMENT_KEPT: usize = 4096;

/// Why `line`, which starts with `#` and so reads as a comment, is a row of data whose first
/// value a spreadsheet wrote as an error value (hundred-and-twenty-eighth hostile round, N6:
/// `#N/A,1` dropped a row with no word; hundred-and-twenty-ninth, D1: `#SPILL!`, `#CALC!`,
/// `#ERROR!`, `#GETTING_DATA`, `#N/A ,1` and `#N/A;1` still did); `None` for a comment.
/// A row, not a comment, where either:
/// - it opens with an error value, `#` and a word of letters, digits, `_` and `/` that ends
///   in `!` or `?` (`#DIV/0!`, `#NAME?`, `#SPILL!`) or is `#N/A` or `#GETTING_DATA` (any
///   case), followed by a field's end (`,` or `;`, after spaces or not) or the line's;
/// - or its first field is `#` and a letter, and every other field is a number
///   (`#N/A(1),1.5`).
///
/// - or it is `#N/A` and a word of Bloomberg's, which writes its missing values as `#N/A N/A`,
///   `#N/A Requesting Data...`, `#N/A Invalid Security` (an upper-case letter after the
///   space);
/// - or, in a file of one column (`one_column`: a labels file, one feature) after its first
///   line of fields, `#` is followed at once by a character that is no space, digit, sign,
///   point or `#`: an error value in any language (`#I/T`, `#HIÁNYZIK`, `#Δ/Υ`; round
///   131's D1: a list of spellings can never be whole), where a comment keeps a space.
///
/// A comment of words (`#N/A values removed`, `# x, y`), a commented-out row of numbers
/// (`#1.5,2`) or a header (`#x,y`) stays one.
fn row_not_comment(line: &str, one_column: bool) -> Option<String> {
    let line = line.trim_end_matches(['\r', '\n']);
    let word = error_word(line);
    let rest = line[word.len()..].trim_start();
    let bloomberg = word.eq_ignore_ascii_case("#N/A")
        && line[word.len()..].starts_with(' ')
        && rest.starts_with(|c: char| c.is_uppercase());
    if is_error_value(word) && (rest.is_empty() || rest.starts_with([',', ';']) || bloomberg) {
        return Some(format!(
            "the line opens with {word}, a spreadsheet's error value (a missing or failed \
             number), not a comment: write the number, or remove the row (a comment of words \
             that reads like one, such as `#Important!`, is kept with a space after the `#`)"
        ));
    }
    let mut fields = line.split(',');
    let first = fields.next().unwrap_or_default().trim_end();
    let others: Vec<&str> = fields.map(str::trim).collect();
    let opened = first
        .chars()
        .nth(1)
        .is_some_and(|c| c.is_alphabetic() || c == '#');
    // Numbers (quoted or not), empty fields and error values: a row's other fields.
    let of_a_row = |f: &&str| {
        let f = f.trim_matches('"');
        f.is_empty() || f.parse::<f64>().is_ok() || is_error_value(error_word(f))
    };
    if opened
        && others
            .iter()
            .any(|f| f.trim_matches('"').parse::<f64>().is_ok())
        && others.iter().all(of_a_row)
    {
        let shown: String = first.chars().take(32).collect();
        return Some(format!(
            "the line opens with {shown:?} and its other fields are numbers: a row whose first \
             value is no number (a spreadsheet's error value?), not a comment: write the \
             number, or remove the row (a comment of words, or '# ' and a space, stays one)"
        ));
    }
    if one_column && opens_a_word(line) {
        let shown: String = line.chars().take(32).collect();
        return Some(format!(
            "the line {shown:?}, in a file of one column, is `#` and a word: a row whose value \
             is no number (a spreadsheet's error value, such as #N/A in another language), not a \
             comment: write the number, or remove the row (a comment keeps a space after the \
             '#': '# {}')",
            line[1..].chars().take(24).collect::<String>()
        ));
    }
    None
}

/// Whether `text` is `#` and at once a character that is no space, digit, sign, point or
/// `#`: an error value's shape in any language (`#N/A`, `#I/T`, `#Δ/Υ`), where a comment keeps
/// a space (`# note`) and a commented-out value a digit (`#1.5`).
fn opens_a_word(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next() == Some('#')
        && chars
            .next()
            .is_some_and(|c| !(c.is_whitespace() || c.is_ascii_digit() || "+-.#".contains(c)))
}

/// The word a line or field opens with, where it opens with `#`: `#` and the letters (of
/// any script), digits and `_`, `/`, `#`, `¡`, `¿`, `!`, `?` after it (`#DIV/0!`,
/// `#¡VALOR!`, `########`); the empty word otherwise.
fn error_word(text: &str) -> &str {
    if !text.starts_with('#') {
        return "";
    }
    text.char_indices()
        .skip(1)
        .find(|&(_, c)| {
            !(c.is_alphanumeric() || matches!(c, '_' | '/' | '#' | '¡' | '¿' | '!' | '?'))
        })
        .map_or(text, |(i, _)| &text[..i])
}

/// Whether `word` ([`error_word`]) is a spreadsheet's error value, in any of its
/// languages: one ending in `!` or `?` (`#DIV/0!`, `#NAME?`, `#SPILL!`, `#¡VALOR!`,
/// `#ЗНАЧ!`), "not available" as Excel and LibreOffice spell it (`#N/A`, `#NV`, `#N/D`,
/// `#N/B`, `#YOK`, `#Н/Д`, any case), `#GETTING_DATA`, or the `#` of a number too wide for
/// its column (`########`) (hundred-and-thirtieth hostile round, D1).
fn is_error_value(word: &str) -> bool {
    const NOT_AVAILABLE: [&str; 7] = [
        "#N/A",
        "#NV",
        "#N/D",
        "#N/B",
        "#YOK",
        "#Н/Д",
        "#GETTING_DATA",
    ];
    let Some(body) = word.strip_prefix('#') else {
        return false;
    };
    let upper = word.to_uppercase();
    (body.chars().any(char::is_alphabetic) && word.ends_with(['!', '?']))
        || NOT_AVAILABLE.contains(&upper.as_str())
        || (!body.is_empty() && body.chars().all(|c| c == '#'))
}

/// The byte order mark, U+FEFF.
const BOM: char = '\u{feff}';

/// [`BOM`] in UTF-8, as a file opens with it.
const MARK: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// Why `field` is no header's name, or `None` where it is one: a name is no number, has a
/// letter in it, does not start as a number does ([`starts_as_a_number`]), holds no decimal
/// number ([`holds_a_decimal`]) and is no missing-value marker ([`MISSING`]). A first row of
/// numbers in another spelling is data, refused naming the field: `$0.5`, `(0.5)`, `“0.5”`,
/// `'0.5`, `=0.5` have no letter (hundred-and-twenty-sixth hostile round, D1); a currency's
/// code or lettered symbol before the amount (`USD 0.50`, `R$ 0.50`, `Rs. 0.50`, `CHF 0,50`)
/// holds a decimal number, and R's `NA` is a missing value, not a name
/// (hundred-and-twenty-seventh hostile round, D3 and N4). Names with whole numbers in them
/// (`x1`, `feature_0`, `layer 2`) stay names.
fn not_a_name(field: &str) -> Option<&'static str> {
    if field.parse::<f64>().is_ok() {
        Some("is a number")
    } else if !field.chars().any(char::is_alphabetic) {
        Some("has no letter")
    } else if starts_as_a_number(field) {
        Some("starts as a number does")
    } else if holds_a_decimal(field) {
        Some("holds a decimal number")
    } else if MISSING.contains(&visible(field).as_str()) {
        Some("is a missing-value marker")
    } else {
        None
    }
}

/// The missing-value markers a first row of data may hold in place of numbers (R's `NA`,
/// spreadsheets' `N/A`, SQL's and pandas' `NULL`, `None` and `<NA>`; a spreadsheet's `#N/A`
/// is a comment here); `nan` parses as a number already, refused later as not finite.
const MISSING: [&str; 7] = ["NA", "N/A", "n/a", "NULL", "null", "None", "<NA>"];

/// `field` without invisible characters (a zero-width space, a byte order mark) and the
/// whitespace around it: what a reader sees.
fn visible(field: &str) -> String {
    let shown: String = field
        .chars()
        .filter(|&c| !(ntk_names::hidden(c) || c == BOM))
        .collect();
    shown.trim().to_string()
}

/// Says, once per file in a process (however its path is spelled), the line `line` of
/// `path` that is read as a header and skipped (its `fields`): no rule of syntax tells every
/// row of numbers from names (`JPY 120` and `layer 2` look alike), so a dropped line is never
/// silent (hundred-and-twenty-eighth hostile round, D1: a first row of whole-number currency
/// amounts was dropped with no word). The path with its control characters escaped
/// (hundred-and-twenty-ninth, D4).
fn say_header(path: &Path, line: u64, fields: &[&str]) {
    use ntk_files::shown::Shown;
    // One file under every name: a symbolic link by its target, a hard link by its device
    // and inode (hundred-and-thirtieth hostile round, N2).
    #[derive(PartialEq)]
    enum File {
        Inode(u64, u64),
        Path(PathBuf),
    }
    static SAID: std::sync::Mutex<Vec<File>> = std::sync::Mutex::new(Vec::new());
    let file = match std::fs::metadata(path) {
        #[cfg(unix)]
        Ok(m) => {
            use std::os::unix::fs::MetadataExt;
            File::Inode(m.dev(), m.ino())
        }
        _ => File::Path(path.canonicalize().unwrap_or_else(|_| path.to_path_buf())),
    };
    let mut said = SAID
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if said.contains(&file) {
        return;
    }
    said.push(file);
    let shown: Vec<String> = fields
        .iter()
        .take(4)
        .map(|f| format!("{:?}", f.chars().take(24).collect::<String>()))
        .collect();
    let more = match fields.len().saturating_sub(4) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    ntk_system::say(format_args!(
        "note: {}: line {line} is read as a header of names and skipped ({}{more}); a first \
         row of data must be numbers alone",
        path.shown(),
        shown.join(", ")
    ));
}

/// Whether `field` holds a decimal number: a digit, a point or a comma, and a digit (of any
/// script), as a currency's amount is written (`USD 0.50`, `CHF 0,50`).
fn holds_a_decimal(field: &str) -> bool {
    let c: Vec<char> = field.chars().collect();
    c.windows(3)
        .any(|w| w[0].is_numeric() && matches!(w[1], '.' | ',') && w[2].is_numeric())
}

/// Whether `field`, past invisible characters and whitespace, starts as a number does: a
/// digit of any script, a sign or a dash, or a point.
fn starts_as_a_number(field: &str) -> bool {
    field
        .chars()
        .find(|&c| !(ntk_names::hidden(c) || c.is_whitespace() || c == BOM || c == '"'))
        .is_some_and(|c| c.is_numeric() || matches!(c, '+' | '-' | '.' | '\u{ff0b}') || is_dash(c))
}

/// The first character that keeps `field` from parsing as the number it spells: a Unicode
/// minus or dash for `-` (U+2212, U+2010..U+2015, U+FE63, U+FF0D) or a byte order mark; `None`
/// where the field is no number with them mended either.
fn misspelled_number(field: &str) -> Option<char> {
    let first = field.chars().find(|&c| is_dash(c) || c == BOM)?;
    let mended: String = field
        .chars()
        .filter(|&c| c != BOM)
        .map(|c| if is_dash(c) { '-' } else { c })
        .collect();
    mended.trim().parse::<f64>().is_ok().then_some(first)
}

/// A Unicode minus or dash a spreadsheet may write for `-`: U+2212, U+2010..U+2015, U+FE63,
/// U+FF0D.
fn is_dash(c: char) -> bool {
    matches!(
        c,
        '\u{2212}' | '\u{2010}'..='\u{2015}' | '\u{fe63}' | '\u{ff0d}'
    )
}

fn bad(path: &Path, reason: impl Into<String>) -> DataError {
    DataError::BadArray {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

#[cfg(test)]
mod tests {
    /// [`super::parse_csv`] keeping the values, with no size limit.
    fn parse_kept(
        path: &std::path::Path,
        input: &[u8],
        io: &dyn Fn(std::io::Error) -> crate::DataError,
    ) -> crate::Result<(Vec<f64>, usize, usize)> {
        let values = super::Values::Kept {
            values: Vec::new(),
            counted: u64::MAX,
        };
        super::parse_csv(path, input, u64::MAX, io, values).map(|(v, rows, cols)| {
            let super::Values::Kept { values, .. } = v else {
                unreachable!("kept values stay kept")
            };
            (values, rows, cols)
        })
    }

    /// A line of one quoted empty field (`""`, `" "`, with a comment, as the last line, in a
    /// file of one column) is refused at its line as the row it is, where the reader took it
    /// for a blank line and skipped it (hundred-and-thirty-sixth hostile round, N1); blank
    /// lines of LF and CRLF, and quoted numbers, are read as before.
    #[test]
    fn a_quoted_empty_field_is_a_row_not_a_blank_line() {
        let path = std::path::Path::new("x.csv");
        let io = |e| crate::DataError::io(path, e);
        let parse = |text: &str| parse_kept(path, text.as_bytes(), &io);
        for (text, line) in [
            ("a,b\n1,2\n\"\"\n3,4\n", 3),
            ("a,b\n1,2\n\" \"\n3,4\n", 3),
            ("a,b\n1,2\n\"\" # c\n3,4\n", 3),
            ("1,2\n3,4\n\"\"", 3),
            ("1\n\"\"\n2\n", 2),
            ("1\r\n\"\"\r\n2\r\n", 2),
            // A quoted quote is no empty field (hundred-and-thirty-ninth hostile round, N2).
            ("1\n\"\"\"\"\n2\n", 2),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(
                e.contains(&format!("line {line}"))
                    && e.contains("a quoted field of nothing but spaces and quotes"),
                "{text:?}: {e}"
            );
        }
        for (text, values) in [
            ("1,2\n\n3,4\n", vec![1.0, 2.0, 3.0, 4.0]),
            ("1,2\r\n\r\n3,4\r\n", vec![1.0, 2.0, 3.0, 4.0]),
            ("\"1\",\"2\"\n\"3\",4\n", vec![1.0, 2.0, 3.0, 4.0]),
            ("\"a\",\"b\"\n1,2\n", vec![1.0, 2.0]),
        ] {
            let (v, _, _) = parse(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
            assert_eq!(v, values, "{text:?}");
        }
    }

    /// A NUL byte in a numeric CSV is refused naming the file, its line and where it stands,
    /// before the CSV reader buffers the record (thirty-seventh hostile round, D2: 200 MB of
    /// NUL bytes ended in the allocator's out-of-memory message, which names no file).
    /// Hundred-and-twenty-fourth hostile round, D1: a first line of numbers behind a byte
    /// order mark, or written with a Unicode minus, was read as a header and dropped (rc 0,
    /// one row short). The mark is no part of the first field; a Unicode minus is refused
    /// naming its line and character; a header of names is still skipped, with a mark too.
    #[test]
    fn a_first_row_is_data_behind_a_byte_order_mark_or_a_unicode_minus() {
        let path = std::path::Path::new("x.csv");
        let io = |e| crate::DataError::io(path, e);
        let parse = |text: &str| parse_kept(path, text.as_bytes(), &io);
        for (text, values) in [
            ("\u{feff}1.5\n-2\n3\n4\n", vec![1.5, -2.0, 3.0, 4.0]),
            ("\u{feff}1,2\n3,4\n", vec![1.0, 2.0, 3.0, 4.0]),
            ("\u{feff}x,y\n3,4\n", vec![3.0, 4.0]),
            ("\u{feff}# a comment\n3,4\n", vec![3.0, 4.0]),
            ("a,b\n1,2\n", vec![1.0, 2.0]),
            // Names with whole numbers in them stay names.
            ("x1,feature_0\n3,4\n", vec![3.0, 4.0]),
            ("layer 2,Na\n3,4\n", vec![3.0, 4.0]),
        ] {
            let (v, _, _) = parse(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
            assert_eq!(v, values, "{text:?}");
        }
        // A quoted first row behind the mark (csv.writer, QUOTE_ALL, utf-8-sig).
        let (v, _, _) = parse("\u{feff}\"1.5\",\"2\"\n\"3\",\"4\"\n").unwrap();
        assert_eq!(v, [1.5, 2.0, 3.0, 4.0]);
        // A first row of numbers with a character no parser takes: data, refused naming it.
        for text in [
            "\u{200b}1.5,2\n3,4\n",
            "\u{ff11},2\n3,4\n",
            "0.5e,2\n3,4\n",
            // Hundred-and-twenty-sixth hostile round, D1: accounting and typographic forms.
            "$0.5,2\n3,4\n",
            "\u{20ac}0.5,2\n3,4\n",
            "(0.5),2\n3,4\n",
            "\u{201c}0.5\u{201d},2\n3,4\n",
            "'0.5,2\n3,4\n",
            "=0.5,2\n3,4\n",
            ",x\n3,4\n",
            // Hundred-and-twenty-seventh hostile round, D3 and N4: a currency's code or
            // lettered symbol before the amount, and R's missing values.
            "USD 0.50,USD 1.00\n3,4\n",
            "R$ 0.50,R$ 1.00\n3,4\n",
            "Rs. 0.50,Rs. 1.00\n3,4\n",
            "US$0.50,US$1.00\n3,4\n",
            "\"CHF 0,50\",x\n3,4\n",
            "NA,NA\n3,4\n",
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(
                e.contains("line 1") && e.contains("field 1"),
                "{text:?}: {e}"
            );
            assert!(e.contains("read as data, not a header"), "{text:?}: {e}");
        }
        // The refusal names the field that made line 1 data (hundred-and-twenty-seventh
        // hostile round, N2).
        for (text, because) in [
            ("x,\n3,4\n", "field 2 (\"\") has no letter"),
            ("inf,x\n3,4\n", "field 1 (\"inf\") is a number"),
            (
                "x,USD 0.5\n3,4\n",
                "field 2 (\"USD 0.5\") holds a decimal number",
            ),
            ("x,NA\n3,4\n", "field 2 (\"NA\") is a missing-value marker"),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.contains("line 1") && e.contains(because), "{text:?}: {e}");
        }
        // Hundred-and-twenty-eighth hostile round, N6: a spreadsheet's error value opening a
        // row is refused naming its line, never skipped as a comment; a comment that begins
        // with the same letters stays one.
        for (text, line) in [
            ("x,y\n1.5,2\n#N/A,1\n3,4\n", "line 3"),
            ("1.5,2\n#DIV/0!,1\n", "line 2"),
            ("1.5\n#N/A", "line 2"),
            ("1.5\r\n#N/A\r\n2\r\n", "line 2"),
            ("1.5,2\n  #VALUE!,1\n", "line 2"),
            // Hundred-and-twenty-ninth, D1: any error value's shape, and after it spaces,
            // a tab or a semicolon; a lettered first field before numbers.
            ("1.5,2\n#SPILL!,1\n", "line 2"),
            ("1.5,2\n#CALC!,1\n", "line 2"),
            ("1.5,2\n#ERROR!,1\n", "line 2"),
            ("1.5,2\n#GETTING_DATA,1\n", "line 2"),
            ("1.5,2\n#N/A ,1\n", "line 2"),
            ("1.5,2\n#n/a,1\n", "line 2"),
            ("1.5,2\n#N/A\t,1\n", "line 2"),
            ("1.5,2\n#N/A;1\n", "line 2"),
            ("1.5,2\n#VALUE! ,1\n", "line 2"),
            // Hundred-and-thirtieth, D1: other languages' error values, a column too
            // narrow, and error values, empty or quoted fields beside.
            ("1.5,2\n#\u{a1}VALOR!,1\n", "line 2"),
            ("1.5,2\n#\u{bf}NOMBRE?,1\n", "line 2"),
            ("1.5\n#NV\n", "line 2"),
            ("1.5\n#N/D\n", "line 2"),
            ("1.5\n#YOK\n", "line 2"),
            ("1.5\n#\u{417}\u{41d}\u{410}\u{427}!\n", "line 2"),
            ("1.5\n#\u{41d}/\u{414}\n", "line 2"),
            ("1.5,2\n########,1\n", "line 2"),
            ("1.5,2,3\n#NV,#NV,1\n", "line 2"),
            ("1.5,2,3\n#NV,,1\n", "line 2"),
            ("1.5,2\n#NV,\"1\"\n", "line 2"),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(
                e.contains(line) && e.contains("a spreadsheet's error value"),
                "{text:?}: {e}"
            );
        }
        // The first record's line and offset after comments and blank lines, behind a byte
        // order mark too (hundred-and-twenty-ninth hostile round, N1: "line 1").
        for (text, at) in [
            ("# a\n\n# b\nx,1\n", "line 4 (byte offset 9)"),
            ("\u{feff}# a\nx,1\n", "line 2 (byte offset 4)"),
            ("x,1\n", "line 1 (byte offset 0)"),
            ("# a\r\n\r\n1,2\nx,1\n", "line 4 (byte offset 11)"),
            // Hundred-and-thirtieth, D2: any record after comments or blank lines.
            ("1,2\n# c\n# d\nabc,1\n", "line 4 (byte offset 12)"),
            ("1,2\n\n# c\n\nabc,1\n", "line 5 (byte offset 10)"),
            (
                "1,2\n3,4\n# c\nabc,1\n# d\n5,6\n",
                "line 4 (byte offset 12)",
            ),
            ("1,2\n# c\n3,4\n# d\nabc,1\n", "line 5 (byte offset 16)"),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.contains(at), "{text:?}: {e}");
        }
        let e = parse("1.5,2\n#N/A(1),1\n").unwrap_err().to_string();
        assert!(
            e.contains("line 2") && e.contains("its other fields are numbers"),
            "{e}"
        );
        // Comments of words, a commented-out row of numbers and a commented-out header stay
        // comments.
        // A quote in a comment after the numbers opens no quoted field over the next lines
        // (hundred-and-thirty-fourth hostile round, D2: three of six rows were lost).
        for text in [
            "1,2 # a,\"b\n3,4\n5,6\n7,8 # c,\"d\n9,10\n11,12\n",
            "1,2 # ,,,\"\n3,4 # \"\n5,6\n7,8\n9,10\n11,12\n",
        ] {
            let (v, rows, _) = parse(text).unwrap();
            assert_eq!(rows, 6, "{text:?}: {v:?}");
        }
        // A field after the first that is `#` and a word is an error value, in any row and
        // any column (hundred-and-thirty-fourth hostile round, N1: `1,2,#N/A` lost its column
        // and the next row was blamed); a comment after the numbers, or with a space after
        // its `#`, or a commented-out value, stays one.
        for (text, at) in [
            (
                "1,2,#N/A\n3,4,5\n5,6,7\n",
                "line 1 (byte offset 0): field 3",
            ),
            ("1,2\n3,#DIV/0!\n", "line 2 (byte offset 4): field 2"),
            ("1,2,3\n4,#N/A,6\n", "line 2 (byte offset 6): field 2"),
            (
                "1,2\n3, #HI\u{c1}NYZIK\n",
                "line 2 (byte offset 4): field 2",
            ),
            ("x,y\n1,\"#NV\"\n", "line 2 (byte offset 4): field 2"),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(
                e.contains(at) && e.contains("spreadsheet's error value"),
                "{text:?}: {e}"
            );
        }
        for text in ["1,2,# note\n3,4\n", "1,2 #N/A\n3,4\n", "1,2,#1.5\n3,4,#\n"] {
            let (v, rows, _) = parse(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
            assert_eq!((v, rows), (vec![1.0, 2.0, 3.0, 4.0], 2), "{text:?}");
        }
        // The quotes as the CSV reader reads them: only at a field's first byte does a `"`
        // open one, so a name's quote (`len"`) or a quoted name's `#` leaves a comment's `,"`
        // a space (hundred-and-thirty-fifth hostile round, D1: two of four rows were lost).
        for text in [
            "len\",w # see,\"notes\n1,2\n3,4\n# end of \"notes\"\n5,6\n7,8\n",
            "len\",w # see,\"notes\r\n1,2\r\n3,4\r\n# end of \"notes\"\r\n5,6\r\n7,8\r\n",
            "\"id#\",\"v\"\"al\" # c,\"x\n1,2\n3,4\n# \"\n5,6\n7,8\n",
            " \"a\",w # c,\"x\n1,2\n3,4\n# \"\n5,6\n7,8\n",
        ] {
            let (v, rows, _) = parse(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
            assert_eq!(rows, 4, "{text:?}: {v:?}");
            assert_eq!(v, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], "{text:?}");
        }
        // A quoted field that runs over its line's end is refused at that line, before the
        // reader holds the lines below (D2: a quote opening a file held it whole; N3: a name
        // with a line break was blamed on the next line).
        for text in [
            "\"a\nb\",c # x,\"y\n1,2\n3,4\n# \"\n5,6\n",
            "\"1,2\n1,2\n1,2\n",
            "1,2\n\"1\n#x\",2\n3,4\n",
        ] {
            let e = parse(text).unwrap_err().to_string();
            let line = if text.starts_with('1') {
                "line 2"
            } else {
                "line 1"
            };
            assert!(
                e.contains(line) && e.contains("a quoted field runs over the line's end"),
                "{text:?}: {e}"
            );
        }
        // A `#` in a quoted field is text: the field is refused as no number, never cut as a
        // comment that took the row's numbers with it (N1).
        for (text, said) in [
            (
                "1,2\n\"# not a comment\",3\n4,5\n",
                "line 2 (byte offset 4): field 1",
            ),
            ("\"1\",\"2#\"\n3,4\n", "line 1 (byte offset 0): field 2"),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(
                e.contains(said) && e.contains("is not a number"),
                "{text:?}: {e}"
            );
        }
        let e = parse("1,2\r3,4\rabc,1\r").unwrap_err().to_string();
        assert!(e.contains("a carriage return alone"), "{e}");
        let (v, _, _) =
            parse("#N/A values removed\n1,2\n#NAME\n# x, 1\n#1.5,2\n#x,y\n3,4\n#\n").unwrap();
        assert_eq!(v, [1.0, 2.0, 3.0, 4.0]);
        // Round 131's D1: in a file of one column, after its first line of fields, `#` and a
        // word is a row in any language; Bloomberg's `#N/A` and a word in any width. Before
        // the first line, or with a space, a sign, a digit or a point after the `#`, it stays
        // a comment.
        for (text, line) in [
            ("x\n1.5\n#I/T\n3.0\n", "line 3"),
            ("1.5\n#HI\u{c1}NYZIK\n", "line 2"),
            ("1.5\r\n#\u{394}/\u{3a5}\r\n", "line 2"),
            ("1.5\n\n#N/V\n", "line 3"),
            ("1\n#NEN\u{cd}_K_DISPOZICI\n2\n", "line 2"),
            ("1.5,2\n#N/A N/A,1\n", "line 2"),
            ("1.5\n#N/A Requesting Data...\n", "line 2"),
            ("1.5,2\n#N/A Invalid Security\n", "line 2"),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(
                e.contains(line) && e.contains("spreadsheet's error value"),
                "{text:?}: {e}"
            );
        }
        let (v, _, _) = parse("#label\n# N/A removed\n1\n# 2\n#-3\n#.5\n#+1\n#4\n#\n5\n").unwrap();
        assert_eq!(v, [1.0, 5.0]);
        // A missing-value marker behind invisible characters is one too.
        let e = parse("\u{200b}NA,\u{200b}NA\n3,4\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("is a missing-value marker"), "{e}");
        for (text, line, c) in [
            ("\u{2212}1,\u{2212}2\n3,4\n", "line 1", "U+2212"),
            ("1\n\u{2212}2\n", "line 2", "U+2212"),
            ("1,\u{2013}2\n", "line 1", "U+2013"),
            ("1,2\n3,\u{feff}4\n", "line 2", "U+FEFF"),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.contains(line) && e.contains(c), "{text:?}: {e}");
        }
    }

    /// Hundred-and-thirtieth hostile round, D3: a CSV's values that cannot be had are refused
    /// naming the file and their size, never in the allocator's words alone.
    #[test]
    fn values_that_cannot_be_had_are_refused_naming_the_file() {
        let path = std::path::Path::new("big.csv");
        let mut kept = Vec::new();
        let e = super::reserve(path, &mut kept, u64::MAX / 16)
            .unwrap_err()
            .to_string();
        assert!(e.contains("big.csv") && e.contains("values"), "{e}");
        assert!(e.contains("more than this process can allocate"), "{e}");
        super::reserve(path, &mut kept, 10).unwrap();
        assert!(kept.capacity() >= 10);
    }

    /// Hundred-and-thirty-first hostile round, D2: in a CRLF file (as Excel writes it) every
    /// message names the line and byte offset (past a byte order mark) where the record
    /// stands, after blank lines and comments too, as in an LF file; it named the line
    /// before, or a comment's.
    #[test]
    fn crlf_records_are_placed_where_they_stand() {
        let path = std::path::Path::new("x.csv");
        let io = |e| crate::DataError::io(path, e);
        for text in [
            "1,2\n3,4\nabc,1\n",
            "1,2\n# c\n# d\nabc,1\n",
            "1,2\n\nabc,1\n",
            "1,2\n# c\nabc,1\n",
            "\u{feff}\n# c\n1,2\n\n# d\nabc,1\n",
            "1,2\n#c\n\n3,4\n#d\n5,6,7\n",
            "a,b,c\n1,2,3\n\n  # x\n\n4,5,6\n7,8\n",
        ] {
            for ends in ["\n", "\r\n", "\r\r\n"] {
                let text = text.replace('\n', ends);
                let mark = if text.starts_with('\u{feff}') { 3 } else { 0 };
                // The last line is the bad one.
                let start = text.trim_end().rfind('\n').unwrap() + 1;
                let line = text[..start].matches('\n').count() + 1;
                let e = parse_kept(path, text.as_bytes(), &io)
                    .unwrap_err()
                    .to_string();
                let at = format!("line {line} (byte offset {})", start - mark);
                assert!(e.contains(&at), "{text:?}: {e}, not at {at}");
            }
        }
        let (v, rows, _) = parse_kept(path, b"1,2\r\n\r\n3,4\r\n", &io).unwrap();
        assert_eq!((v, rows), (vec![1.0, 2.0, 3.0, 4.0], 2));
    }

    /// Hundred-and-thirty-first hostile round, D3: a CSV parsed after its count is held to
    /// it: a file grown since is refused naming it before a value past the count is kept,
    /// one shrunk since too.
    #[test]
    fn a_csv_that_changed_since_its_count_is_refused() {
        let path = std::path::Path::new("x.csv");
        let io = |e| crate::DataError::io(path, e);
        let counted = |counted: u64, text: &[u8]| {
            let values = super::Values::Kept {
                values: Vec::new(),
                counted,
            };
            super::parse_csv(path, text, u64::MAX, &io, values)
                .and_then(|(v, ..)| v.kept(path))
                .map_err(|e| e.to_string())
        };
        assert_eq!(counted(4, b"1,2\n3,4\n").unwrap(), [1.0, 2.0, 3.0, 4.0]);
        let grown = counted(4, b"1,2\n3,4\n5,6\n").unwrap_err();
        assert!(
            grown.contains("x.csv") && grown.contains("4 values counted, then more read"),
            "{grown}"
        );
        let shrunk = counted(4, b"1,2\n").unwrap_err();
        assert!(shrunk.contains("4 values counted, then 2 read"), "{shrunk}");
    }

    /// Hundred-and-thirtieth hostile round, N5: a number beyond f64's range is refused with
    /// its line and its text, not as the `inf` it parses to with no line; one below it
    /// (hundred-and-thirty-second, second review, D1) likewise, not read as 0.
    #[test]
    fn a_number_beyond_f64_is_refused_naming_its_line_and_text() {
        let path = std::path::Path::new("x.csv");
        let io = |e| crate::DataError::io(path, e);
        for (text, line, shown) in [
            (
                "1,2\n3,1e309\n",
                "line 2",
                "\"1e309\" is beyond the range of f64",
            ),
            (
                "1,2\n-1e400,1\n",
                "line 2",
                "\"-1e400\" is beyond the range",
            ),
            ("1,inf\n", "line 1", "\"inf\" is not a finite number"),
            (
                "1,2\n2e-400,3e-400\n",
                "line 2",
                "\"2e-400\" is below the range of f64, read as 0",
            ),
            (
                "1,2\n# c\nNaN,2\n",
                "line 3",
                "\"NaN\" is not a finite number",
            ),
        ] {
            let e = parse_kept(path, text.as_bytes(), &io)
                .unwrap_err()
                .to_string();
            assert!(e.contains(line) && e.contains(shown), "{text:?}: {e}");
        }
        let (v, _, _) = parse_kept(path, b"1.7976931348623157e308,4.9e-324\n", &io).unwrap();
        assert_eq!(v, [f64::MAX, 4.9e-324]);
        // Zeros written any way stay zeros.
        let (v, _, _) = parse_kept(path, b"0,0.0e-400,-0,0e5,00.000\n", &io).unwrap();
        assert!(v.iter().all(|&x| x == 0.0), "{v:?}");
    }

    /// Hundred-and-thirty-second hostile round, D3: two lines of 20 million fields `1,1,...`
    /// left 1.6 GB mapped by the first pass (a bound per field, kept by the reader, and the
    /// fields gathered again), and under `ulimit -v 1000000` failed before the memory guard
    /// spoke, naming nothing. A line of more than [`super::MAX_CSV_FIELDS`] fields is refused
    /// as it is read, naming the file, the line and where the field past the cap starts; a
    /// line of that many is read.
    #[test]
    fn a_line_of_too_many_fields_is_refused_as_it_is_read() {
        let path = std::path::Path::new("x.csv");
        let io = |e| crate::DataError::io(path, e);
        let cap = super::MAX_CSV_FIELDS as usize;
        let line = |fields: usize| format!("{}1\n", "1,".repeat(fields - 1));
        let at_cap = format!("{}{}", line(cap), line(cap));
        let (values, rows, cols) = parse_kept(path, at_cap.as_bytes(), &io).unwrap();
        assert_eq!((values.len(), rows, cols), (2 * cap, 2, cap));
        // A comment line's commas cost nothing (the reader skips it whole); a comment's after
        // the numbers are split as fields, and count.
        let comment_line = format!("# {}\n1,2\n3,4\n", ",".repeat(cap + 5));
        assert_eq!(parse_kept(path, comment_line.as_bytes(), &io).unwrap().1, 2);
        let commented = format!("1,2 # {}\n3,4\n", ",".repeat(cap + 5));
        let e = parse_kept(path, commented.as_bytes(), &io)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("line 1") && e.contains("in a comment after the numbers"),
            "{e}"
        );
        let over = format!("{}{}", line(3), line(cap + 1));
        let e = parse_kept(path, over.as_bytes(), &io)
            .unwrap_err()
            .to_string();
        let start = 6 + 2 * cap; // the second line's byte 0, then 2 bytes a field
        assert!(e.contains("x.csv") && e.contains("line 2"), "{e}");
        assert!(
            e.contains(&format!(
                "a line of more than {cap} fields (field {} starts at byte {start}; every \
                 comma counts, in quotes or in a comment after the numbers too): rows of at \
                 most {cap} numbers are read",
                cap + 1
            )),
            "{e}"
        );
    }

    #[test]
    fn a_nul_byte_is_refused_naming_the_line() {
        let path = std::path::Path::new("x.csv");
        let io = |e| crate::DataError::io(path, e);
        let e = parse_kept(path, &b"1,2\n3\0,4\n"[..], &io)
            .unwrap_err()
            .to_string();
        assert!(e.contains("x.csv") && e.contains("line 2"), "{e}");
        assert!(e.contains("a NUL byte at byte 5"), "{e}");
        assert_eq!(parse_kept(path, &b"1,2\n3,4\n"[..], &io).unwrap().1, 2);
    }
}
