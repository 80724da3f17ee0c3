//! Tables as CSV, pandas-ready: rows of a serde struct (the header from its fields), written
//! atomically and read back strictly.

use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// A number's text in a table or a message: its shortest form that reads back to the same
/// `f64`, positional from 1e-5 to 1e16 (`0.25`, `1500`), in exponent form beyond
/// (`1e307`, `-2.2250738585072014e-308`), as the csv writer (`ryu`) and numpy print them;
/// Rust's `{}` alone writes 1e307 as its 308 digits.
pub fn number(x: f64) -> String {
    let a = x.abs();
    if x == 0.0 || !x.is_finite() || (1e-5..1e16).contains(&a) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// Writes rows as CSV, atomically (a reader never sees half a file).
pub fn write_csv<T: Serialize>(path: &Path, rows: &[T]) -> crate::Result<()> {
    write_csv_headed(path, rows, &[])
}

/// [`write_csv`], with `columns` (the rows' header, in order) as the whole file where there
/// is no row: an empty table that pandas and numpy read as one, not an empty file
/// (hundred-and-fifty-third hostile round, N2: best.csv and compare.csv were 0 bytes).
pub fn write_csv_headed<T: Serialize>(
    path: &Path,
    rows: &[T],
    columns: &[&str],
) -> crate::Result<()> {
    let mut w = csv::Writer::from_writer(Vec::new());
    if rows.is_empty() && !columns.is_empty() {
        w.write_record(columns)
            .map_err(|source| crate::Error::Csv {
                name: path.display().to_string(),
                source,
            })?;
    }
    for r in rows {
        w.serialize(r).map_err(|source| crate::Error::Csv {
            name: path.display().to_string(),
            source,
        })?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| crate::Error::Flush(e.into_error()))?;
    crate::io::atomic_write(path, &bytes).map_err(|source| crate::Error::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// Reads a CSV written by [`write_csv`]; a missing file is an empty table.
pub fn read_csv<T: DeserializeOwned>(path: &Path) -> crate::Result<Vec<T>> {
    let bytes = match crate::io::read_limited(path, crate::io::TEXT_LIMIT) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(crate::Error::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    parse_csv(&bytes, &path.display().to_string())
}

/// The longest line a table these tools write may have when read back (their widest rows
/// are a few kilobytes): a longer one is refused before the CSV reader buffers it (a file of
/// NUL bytes in a table's place was one record of hundreds of megabytes, whose buffer ran out
/// of memory naming no file: thirty-sixth hostile round, D3).
pub const MAX_LINE: usize = 1 << 20;

/// Parses the bytes of a CSV written by [`write_csv`]; every row must parse (a bad row is
/// an error naming `name` and the row, never skipped), and no line may be longer than
/// [`MAX_LINE`].
pub fn parse_csv<T: DeserializeOwned>(bytes: &[u8], name: &str) -> crate::Result<Vec<T>> {
    if let Some((line, len)) = bytes
        .split(|b| *b == b'\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l.len()))
        .find(|(_, len)| *len > MAX_LINE)
    {
        return Err(crate::Error::CsvLine {
            name: name.to_string(),
            line,
            len,
            max: MAX_LINE,
        });
    }
    let csv_error = |source| crate::Error::Csv {
        name: name.to_string(),
        source,
    };
    let mut reader = csv::Reader::from_reader(bytes);
    let headers = reader.headers().map_err(csv_error)?.clone();
    reader
        .records()
        .map(|record| {
            let record = record.map_err(|e| row_error(name, bytes, e))?;
            record
                .deserialize(Some(&headers))
                .map_err(|source| field_error(name, bytes, &headers, &record, source))
        })
        .collect()
}

/// A row's field that does not read as its column's type ([`crate::Error::CsvField`]):
/// its line, its column counted from 1 and named, the text found and why it does not read.
#[derive(Debug, thiserror::Error)]
#[error("line {line}, column {column} ({header}): {value:?}: {reason}")]
pub struct BadField {
    pub line: u64,
    pub column: usize,
    pub header: String,
    pub value: String,
    pub reason: String,
}

/// A row's field that does not read as its column's type, named by its line, its column
/// counted from 1, the column's name and the text found (round 91, N4: the reader's own
/// words counted the field from 0 and named no column).
fn field_error(
    name: &str,
    bytes: &[u8],
    headers: &csv::StringRecord,
    record: &csv::StringRecord,
    source: csv::Error,
) -> crate::Error {
    if let csv::ErrorKind::Deserialize { err, .. } = source.kind()
        && let Some(field) = err.field().and_then(|f| usize::try_from(f).ok())
    {
        return crate::Error::CsvField {
            name: name.to_string(),
            field: Box::new(BadField {
                line: record.position().map_or(0, |p| line_at(bytes, p)),
                column: field + 1,
                header: headers.get(field).unwrap_or("").to_string(),
                value: record.get(field).unwrap_or("").to_string(),
                reason: err.kind().to_string(),
            }),
        };
    }
    crate::Error::Csv {
        name: name.to_string(),
        source,
    }
}

/// The line (from 1) of the file `bytes` at which `pos` lies, by the line feeds before its
/// byte: the CSV reader's own count is one short in a file whose lines end in CR LF (a table
/// saved by Python's `csv` module or a spreadsheet: ninety-eighth hostile round, N11, "line
/// 1" for a file's second line).
fn line_at(bytes: &[u8], pos: &csv::Position) -> u64 {
    let mut at = usize::try_from(pos.byte())
        .unwrap_or(usize::MAX)
        .min(bytes.len());
    // The reader may place a record at the LF of the CR LF before it: a record begins with
    // neither.
    while at < bytes.len() && matches!(bytes[at], b'\r' | b'\n') {
        at += 1;
    }
    bytes[..at].iter().filter(|&&b| b == b'\n').count() as u64 + 1
}

/// A row with another number of fields than the header, named by its line (ninety-second
/// hostile round, N8: the reader's own words were "record 2 (line: 3, byte: 116)").
fn row_error(name: &str, bytes: &[u8], source: csv::Error) -> crate::Error {
    if let csv::ErrorKind::UnequalLengths {
        pos: Some(pos),
        expected_len,
        len,
    } = source.kind()
    {
        return crate::Error::CsvRow {
            name: name.to_string(),
            line: line_at(bytes, pos),
            fields: *len,
            columns: *expected_len,
        };
    }
    crate::Error::Csv {
        name: name.to_string(),
        source,
    }
}

#[cfg(test)]
mod tests {
    /// A line longer than any row these tools write is refused, naming the file and the
    /// line, before the CSV reader buffers it (thirty-sixth hostile round, D3).
    #[test]
    fn a_line_longer_than_any_row_is_refused() {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Row {
            a: u32,
        }
        let mut bytes = b"a\n1\n".to_vec();
        bytes.extend(std::iter::repeat_n(0u8, super::MAX_LINE + 1));
        let e = super::parse_csv::<Row>(&bytes, "t.csv")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("t.csv: line 3 is 1048577 bytes long"), "{e}");
        assert_eq!(
            super::parse_csv::<Row>(b"a\n1\n", "t.csv").unwrap().len(),
            1
        );
    }

    /// A field that does not read as its column's type is named by line, column counted
    /// from 1, the column's name and the text (round 91, N4); a row with a field too many by its
    /// line and its count (ninety-second round, N8).
    #[test]
    fn a_bad_field_is_named_by_its_column() {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Row {
            a: u32,
            seed: u64,
            width: usize,
        }
        let e = super::parse_csv::<Row>(b"a,seed,width\n1,2,3\n1,-1,3\n", "t.csv")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "t.csv: line 3, column 2 (seed): \"-1\": invalid digit found in string"
        );
        let e = super::parse_csv::<Row>(b"a,seed,width\n1,2,1e400\n", "t.csv")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "t.csv: line 2, column 3 (width): \"1e400\": invalid digit found in string"
        );
        let e = super::parse_csv::<Row>(b"a,seed,width\n1,2,3,4\n", "t.csv")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "t.csv: line 2 has 4 fields where the header has 3 columns"
        );
        // The same lines ending in CR LF (ninety-eighth hostile round, N11).
        let e = super::parse_csv::<Row>(b"a,seed,width\r\n1,x,3\r\n", "t.csv")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("t.csv: line 2, column 2 (seed)"), "{e}");
        let e = super::parse_csv::<Row>(b"a,seed,width\r\n1,2,3\r\n1,2,3,4\r\n", "t.csv")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("t.csv: line 3 has 4 fields"), "{e}");
    }

    use super::*;

    /// Twenty-third hostile round, N7: a number's text is short at every magnitude and reads
    /// back to the same value (1e307 was written as its 308 digits).
    #[test]
    fn a_number_is_short_and_reads_back() {
        for (x, text) in [
            (0.0, "0"),
            (0.25, "0.25"),
            (1500.0, "1500"),
            (-1e307, "-1e307"),
            (f64::MIN_POSITIVE, "2.2250738585072014e-308"),
            (1e-7, "1e-7"),
            (f64::NAN, "NaN"),
        ] {
            assert_eq!(number(x), text);
        }
        for x in [1e16, 9.999e15, 1e-5, 3.3e-6, -f64::MAX, 5e-324, 0.1 + 0.2] {
            let t = number(x);
            assert!(t.len() <= 24, "{t}");
            assert_eq!(t.parse::<f64>().unwrap(), x, "{t}");
        }
    }
}
