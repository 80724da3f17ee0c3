//! The error type of this crate: a file or directory that cannot be read, written,
//! created or claimed, each naming its path; the messages are those the binaries print
//! after `error: `.

use crate::shown::Shown;
use std::path::PathBuf;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong with a run's files.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file cannot be read; one this user may not read is given the remedy (ninety-ninth
    /// hostile round, N2: `collect` said only "Permission denied").
    #[error("{}: cannot read: {source}{}", .path.shown(), read_remedy(.source))]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A place a run writes holds what it must not replace (a FIFO, a directory, another
    /// user's file, a dangling link), found before the work; the message names the path.
    #[error(transparent)]
    Unsafe(#[from] crate::io::UnsafeTarget),
    /// A file cannot be written (or created).
    #[error("{}", at(.path, .source))]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The output directory cannot be created.
    #[error("{}: cannot create the output directory: {source}", .dir.shown())]
    CreateDir {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The output directory cannot be written.
    #[error("{}: the output directory is not writable: {source}", .dir.shown())]
    NotWritable {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The output directory does not exist and the nearest directory above it that does
    /// (`above`) cannot be written, so it cannot be made (eighty-fifth hostile round, N6:
    /// `..` was named "the output directory").
    #[error(
        "{}: not writable, so {} cannot be made there: {source}",
        .above.shown(),
        .dir.shown()
    )]
    NotWritableAbove {
        dir: PathBuf,
        above: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A directory another live process is writing (`crate::lock::DirLock`).
    #[error(
        "{}: another process is writing here ({holder}); wait for it to end, or choose \
         another --out",
        .dir.shown()
    )]
    Locked { dir: PathBuf, holder: String },
    /// A sweep directory that a live writer of another config is filling
    /// (`crate::lock::SweepClaim`).
    #[error(
        "{}: a sweep of another config is writing here ({holder}); its points and this \
         config's would mix: wait for it to end, or choose another --out",
        .dir.shown()
    )]
    OtherWriter { dir: PathBuf, holder: String },
    /// An output directory that holds files this command did not write (a user's, or another
    /// command's: a probe run's files under a sweep's `--out`; hundred-and-twenty-fourth
    /// hostile round, N1: "not a run's" said of a probe run's own files).
    #[error(
        "{}: holds files that are not this command's ({}); choose an empty or new --out",
        .dir.shown(), crate::shown::controls_escaped(&.files.join(", "))
    )]
    ForeignFiles { dir: PathBuf, files: Vec<String> },
    /// A `plot --out` directory that holds more than figures (another run's or sweep's
    /// files, a user's).
    #[error(
        "{}: holds files that are not figures ({}); plot --out writes into a new or empty \
         directory, one holding only figures, or DIR itself",
        .dir.shown(), crate::shown::controls_escaped(&.files.join(", "))
    )]
    NotFigures { dir: PathBuf, files: Vec<String> },
    /// A `plot --out` directory with files at the names the plot writes that no record of
    /// these tools proves theirs as written (`ntk_runs::sweep::check_proven_figures`).
    #[error(
        "{}: holds files at the names this plot writes that no record of these tools proves \
         theirs as written ({}): a figure of yours, or one edited since, would be replaced; \
         move them, or choose another --out",
        .dir.shown(), crate::shown::controls_escaped(&.files.join(", "))
    )]
    UnprovenFigures { dir: PathBuf, files: Vec<String> },
    /// A figure command's `--out` that is a run's, a sweep's or an output set's directory.
    #[error(
        "{}: a directory an ntk tool made for a run, a sweep or an output set ({}): figures \
         written there would make it hold files its own tool does not write; choose a new \
         directory or one of figures",
        .dir.shown(), .marker
    )]
    MadeDir { dir: PathBuf, marker: String },
    /// An output inside a directory the tools made for a run, a sweep or an output set.
    #[error(
        "{}: inside {}, which an ntk tool made ({}): what is written there would make it \
         hold files its own tool does not write, so it could no longer be resumed or run \
         again in place; choose an output outside it",
        .path.shown(), .dir.shown(), .marker
    )]
    InsideMade {
        path: PathBuf,
        dir: PathBuf,
        marker: String,
    },
    /// An output path that is a symbolic link, or lies under one the tools would follow.
    #[error("{}: {why}", .path.shown())]
    OutputPath { path: PathBuf, why: String },
    /// A CSV table with a line longer than any row these tools write ([`crate::table::MAX_LINE`]).
    #[error(
        "{name}: line {line} is {len} bytes long, more than any row these tools write ({max} \
         bytes at most): not a table of theirs"
    )]
    CsvLine {
        name: String,
        line: usize,
        len: usize,
        max: usize,
    },
    /// A row's field that does not read as its column's type.
    #[error("{name}: {field}")]
    CsvField {
        name: String,
        field: Box<crate::table::BadField>,
    },
    /// A row with another number of fields than the header has columns.
    #[error("{name}: line {line} has {fields} fields where the header has {columns} columns")]
    CsvRow {
        name: String,
        line: u64,
        fields: u64,
        columns: u64,
    },
    /// A CSV table cannot be written or parsed; `name` is the file (or what it is).
    #[error("{name}: {source}")]
    Csv {
        name: String,
        #[source]
        source: csv::Error,
    },
    /// An in-memory writer that cannot be flushed.
    #[error("{0}")]
    Flush(#[source] std::io::Error),
    /// A figure cannot be drawn or written.
    #[error("{}: {message}", .path.shown())]
    Plot { path: PathBuf, message: String },
}

/// `path: source`, or `source` alone where it names the path itself (a write refused by
/// [`crate::io::check_target`], which says the path it refused: forty-third hostile round,
/// D3, `results.csv: results.csv: is a FIFO`).
fn at(path: &std::path::Path, source: &std::io::Error) -> String {
    let names_it = source
        .get_ref()
        .is_some_and(|e| e.downcast_ref::<crate::io::UnsafeTarget>().is_some());
    if names_it {
        source.to_string()
    } else {
        format!("{}: {source}", path.shown())
    }
}

/// What a [`Error::Read`] of `e` adds: the remedy where this user may not read the file.
fn read_remedy(e: &std::io::Error) -> &'static str {
    match e.kind() {
        std::io::ErrorKind::PermissionDenied => "; make it readable to this user",
        _ => "",
    }
}
