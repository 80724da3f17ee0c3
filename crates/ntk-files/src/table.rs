//! Tables as CSV, pandas-ready: rows of a serde struct (the header from its fields), written
//! atomically and read back strictly.

use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// Writes rows as CSV, atomically (a reader never sees half a file).
pub fn write_csv<T: Serialize>(path: &Path, rows: &[T]) -> crate::Result<()> {
    let mut w = csv::Writer::from_writer(Vec::new());
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
    let bytes = match crate::io::read(path) {
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

/// Parses the bytes of a CSV written by [`write_csv`]; every row must parse (a bad row is
/// an error naming `name` and the row, never skipped).
pub fn parse_csv<T: DeserializeOwned>(bytes: &[u8], name: &str) -> crate::Result<Vec<T>> {
    csv::Reader::from_reader(bytes)
        .deserialize()
        .map(|row| {
            row.map_err(|source| crate::Error::Csv {
                name: name.to_string(),
                source,
            })
        })
        .collect()
}
