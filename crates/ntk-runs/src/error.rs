//! The error type of this crate: each variant says what went wrong and carries the values
//! its message names (the file, the key, the value); the messages are those the binaries
//! print after `error: `.

use ntk_files::shown::Shown;
use std::path::PathBuf;

use crate::budget::{MAX_MEMORY_ENV, human};
use crate::overrides::ConfigName;
use crate::provenance::{ReuseError, and_more};
use crate::quote::{QUOTED, cut_long, long_ticks_cut};

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in the shared infrastructure.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file, directory or figure that cannot be read, written or claimed
    /// ([`ntk_files::Error`]).
    #[error(transparent)]
    Files(#[from] ntk_files::Error),
    /// A command that needs a config was given none.
    #[error("--config FILE is required")]
    ConfigRequired,
    /// A config file cannot be read.
    #[error("{}: cannot read config: {source}", .path.shown())]
    ReadConfig {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A sweep some of whose points failed or were busy; the rest were made.
    #[error("{summary}")]
    PointsFailed {
        failed: usize,
        busy: usize,
        summary: String,
    },
    /// A TOML file (a config) does not parse or does not fit its type; the TOML error names
    /// the line, which it quotes by its first [`QUOTED`] characters (ninety-fifth
    /// hostile round, N5: a 3 MB comment line made a 3 MB message).
    #[error("{}: {}", .path.shown(), shortened(&source.to_string()))]
    Toml {
        path: PathBuf,
        /// Boxed: the TOML error is large, and this keeps every `Result` small.
        #[source]
        source: Box<toml::de::Error>,
    },
    /// A recorded JSON result is not what it should be.
    #[error("{}: not {what}: {source}", .path.shown())]
    Json {
        path: PathBuf,
        /// What the file should be ("an ntk-probe summary").
        what: String,
        #[source]
        source: serde_json::Error,
    },
    /// An error about everything under `path` (a sweep directory).
    #[error("{}: {source}", .path.shown())]
    At {
        path: PathBuf,
        #[source]
        source: Box<Error>,
    },
    /// An error of a config's values, the config named as [`ConfigName`] says (the value
    /// may be an assignment's, not the file's).
    #[error("{name}: {source}")]
    Config {
        name: ConfigName,
        #[source]
        source: Box<Error>,
    },

    /// A default that could not be found: `key` was left out and its value comes from
    /// elsewhere (a file set's `data.n`, the rows of `data.x`), which failed.
    #[error("{key} (not given): {message}")]
    Default { key: String, message: String },

    // --- configs and overrides ---
    /// An override (`--set KEY=VALUE` or a short flag) that is malformed or whose value the
    /// config refuses; `origin` is what the user wrote, `key` the dotted key when the error
    /// concerns another one than the assignment's.
    #[error("{origin}: {}{}", long_ticks_cut(.message), at_key(.key))]
    Override {
        origin: String,
        message: String,
        key: Option<String>,
    },
    /// An assignment that is malformed in itself (its key).
    #[error("{origin}: {source}")]
    Assignment {
        origin: String,
        #[source]
        source: Box<Error>,
    },
    /// An override of a key the config does not have.
    #[error("{origin}: unknown key `{}` ({})", cut_long(.key), long_ticks_cut(.message))]
    UnknownKey {
        origin: String,
        key: String,
        message: String,
    },
    /// An override below a key that holds a value, not a table.
    #[error("{origin}: `{key}` is not a table (it holds a value: {found})")]
    NotATable {
        origin: String,
        key: String,
        found: &'static str,
    },
    /// A removal (`--set KEY=`) of a key under one that a config holds as a value, where the
    /// file leaves that key out (where it holds it: [`Error::NotATable`]).
    #[error("{origin}: `{key}` is not a table (a config holds a value there: {expected})")]
    UnderAValue {
        origin: String,
        key: String,
        expected: String,
    },
    /// An empty key in `--set`.
    #[error("empty key; expected key=value (e.g. model.depth=5)")]
    EmptyKey,
    /// A value that holds a line break or another control character: TOML would read what
    /// follows it as more of the config (`model.width=8\n[data]\nn=3`), not as this value.
    #[error(
        "the value holds a control character ({found}): a value is one line; the rest \
         would be read as more of the config"
    )]
    ControlInValue { found: String },
    /// A whole number beyond TOML's 64-bit integers.
    #[error(
        "{} is beyond the integers a config holds (-9223372036854775808 to \
         9223372036854775807)",
        cut_long(.value)
    )]
    IntegerRange { value: String },
    /// A number beyond f64's range (`1e400`), which TOML would read as a string.
    #[error(
        "{} is beyond the numbers a config holds (an f64: magnitudes up to about 1.8e308)",
        cut_long(.value)
    )]
    FloatRange { value: String },
    /// A number written nonzero that f64 holds as 0 (`1e-400`, below about 4.9e-324): TOML
    /// reads it as 0 without a word (ninety-sixth hostile round, D3: `activation_param =
    /// 1e-400` ran a LeakyReLU as ReLU). `at`: where, for a file (`F: line N: `).
    #[error(
        "{at}{} is nonzero but reads as 0 in f64 (below its smallest number, about 4.9e-324): \
         give 0, or a value f64 holds",
        cut_long(.value)
    )]
    FloatUnderflow { at: String, value: String },
    /// A key that is not dotted bare TOML keys.
    #[error(
        "bad key `{}`: expected dotted names of letters, digits, _ and - (e.g. model.depth)",
        ntk_files::shown::controls_escaped(&cut_long(.key))
    )]
    BadKey { key: String },
    /// A config file's error found only once the tool filled in a default that depends on
    /// the data (a file set's `data.n`): the file alone fails first on that key.
    #[error("{}: {}{}", .path.shown(), long_ticks_cut(.message), at_key(.key))]
    ConfigKey {
        path: PathBuf,
        message: String,
        key: Option<String>,
    },
    /// A config file's error that no override explains, after overrides were applied.
    #[error(
        "{}{}: {}{}",
        .path.shown(),
        with_origins(.origins),
        long_ticks_cut(.message),
        at_key(.key)
    )]
    ConfigWith {
        path: PathBuf,
        origins: Vec<String>,
        message: String,
        key: Option<String>,
    },
    /// An integer flag beyond what a config file can hold.
    #[error("--{flag} {value}: too large (at most {})", i64::MAX)]
    TooLarge { flag: String, value: u64 },
    /// A short flag and a `--set` of its key with different values (round 22's N1: the
    /// `--set` won without a word, so `--seed 3` ran seed 2), or two `--set`s of one key
    /// (ninety-fifth hostile round, D2); contradictory flags are errors, as `--epochs` with
    /// `--iterations` are.
    #[error("{flag} and {set} both set {key}: give one")]
    FlagAndSet {
        flag: String,
        set: String,
        key: String,
    },
    /// A table's `--set` (`model={width=16}`, which replaces the table whole) that leaves
    /// out a key another `--set` sets (`model.seed=5`).
    #[error(
        "{table} replaces the table {table_key} whole and so leaves {key} out, where {set} \
         sets it: put {key} in the table, or set the table's keys one by one"
    )]
    TableLeavesOut {
        table: String,
        table_key: String,
        set: String,
        key: String,
    },
    // --- sweeps and results ---
    /// `--shard` that is not `i/N` (`why`: the shape, or a number past the count's range).
    #[error("--shard {}: {why}", crate::quote::controls_escaped(value))]
    Shard { value: String, why: String },
    /// `--shard slurm` outside a Slurm range array.
    #[error("--shard slurm: {why}")]
    SlurmShard { why: String },
    /// A sweep with more than [`crate::sweep::MAX_POINTS`] points.
    #[error("sweep: {total} points ({what}); at most {max} in one sweep", max = crate::sweep::MAX_POINTS)]
    TooManyPoints { total: u128, what: String },
    /// A symbolic link under a sweep's output directory: the sweep would write (or read
    /// as done) what it leads to, and its tables, which never follow a link, would leave
    /// that out.
    #[error(
        "{}: a symbolic link{} under the sweep's output directory: the sweep would write through \
         it and its tables never follow one (they would leave those results out); move the \
         directory itself here, or remove the link{}",
        .link.shown(),
        .target.as_ref().map_or(String::new(), |t| format!(" to {}", t.shown())),
        more_like_it(*.more, "link")
    )]
    LinkInSweep {
        link: PathBuf,
        target: Option<PathBuf>,
        more: usize,
    },
    /// Results of another config in the way of a sweep: the first reason, and how many more
    /// points are like it.
    /// `listed`: in a dry run, whose plan above lists every stale point (ninety-sixth
    /// hostile round, N5, and the ninety-seventh's N4: "like it; see --dry-run" inside a
    /// dry run, of points stale for other reasons).
    #[error("{first}{}", more_stale(*.more, .unit, *.listed))]
    Stale {
        first: String,
        more: usize,
        unit: String,
        listed: bool,
    },
    /// Something not the tools' in a point's directory (a file of the user's at one of the
    /// point's names that its summary does not record, [`crate::sweep::State::Blocked`]):
    /// refused in every mode, `--recompute` too, before any work; the first reason and how
    /// many more points are like it.
    #[error("{first}{}", more_blocked(*.more, .unit))]
    Blocked {
        first: String,
        more: usize,
        unit: String,
    },
    /// A dry run that foresees points failing when made ([`crate::sweep::Sweep::foresee`]):
    /// how many, and the first with why.
    #[error(
        "{count} {unit}(s) would fail when made (the run would make the others and end with \
         their failures); first: {first}"
    )]
    WouldFail {
        count: usize,
        unit: String,
        first: String,
    },
    /// `collect --config` over results of another config: the first, and how many more.
    #[error("{first}; collect reads this config's results only{}", and_more(*.more))]
    StaleCollect { first: String, more: usize },
    /// A result made by another config.
    #[error(transparent)]
    Reuse(#[from] ReuseError),
    /// A result whose recorded fingerprint is not that of the config it records.
    #[error(
        "{}: the recorded fingerprint does not match its recorded config: the file was edited \
         after the run, so its results are not reported",
        .path.shown()
    )]
    EditedResult { path: PathBuf },
    /// Two results of one config in one merge.
    #[error(
        "{} and {} record the same config (one is a copy, or a sweep sits inside another's \
         runs/): a merge would count it twice; remove one",
        .first.shown(),
        .second.shown()
    )]
    SameConfigTwice { first: PathBuf, second: PathBuf },
    /// Results to merge that were made by different configs.
    #[error(
        "{}; merge them anyway with --allow-mixed",
        crate::provenance::mixed_configs(.axes, .problems, *.more)
    )]
    MixedConfigs {
        axes: Vec<String>,
        /// The first (up to three) differences.
        problems: Vec<String>,
        /// How many more differences there are.
        more: usize,
    },

    // --- resources ---
    /// A memory size (`--max-memory`, `NTK_MAX_MEMORY`) that does not parse; `setting` is
    /// the prefix naming where it came from (`--max-memory `, `NTK_MAX_MEMORY=`), empty when
    /// none.
    #[error(
        "{}{}: expected a size such as 64G, 64GiB, 512M or bytes, from 1 byte to 16E",
        crate::quote::controls_escaped(setting),
        crate::quote::controls_escaped(value)
    )]
    Size { setting: String, value: String },
    /// `RLIMIT_AS` leaves too little address space for any work
    /// (`crate::budget::check_address_space`).
    #[error(
        "RLIMIT_AS (ulimit -v {limit_kib}) leaves {room} of address space beyond the {mapped} \
         this program maps at start; with its {threads} worker threads, allocator arenas and \
         the BLAS library's buffers it maps up to {reserve} before any data (and the BLAS \
         library hangs when it cannot), and the least work needs {} beyond that: raise it to \
         ulimit -v {need_kib} or more",
        crate::budget::human(*.least_work)
    )]
    AddressSpace {
        limit_kib: u64,
        room: String,
        mapped: String,
        reserve: String,
        threads: usize,
        least_work: f64,
        need_kib: u64,
    },
    /// The memory budget refuses the work.
    #[error(
        "{culprit}: the work needs about {} ({}) but {source_name} is {}; reduce these values{advice}, \
         or pass --max-memory SIZE (or set {MAX_MEMORY_ENV}) if this machine really has more",
        human(*.needed),
        .detail.join(", "),
        human(*.limit)
    )]
    Memory {
        /// The values that set the estimate (`data.n = 60000, model.width = 512`).
        culprit: String,
        /// Bytes needed.
        needed: f64,
        /// The biggest parts, `what size`.
        detail: Vec<String>,
        /// Where the limit comes from.
        source_name: String,
        /// Bytes allowed.
        limit: f64,
        /// Under `RLIMIT_AS`: `, or raise it to ulimit -v N or more` (the limit the work
        /// fits under); else empty.
        advice: String,
    },
}

/// Errors as a list, one per line after `  - ` (a config's problems, reported at once).
pub fn bullets<E: std::fmt::Display>(errors: &[E]) -> String {
    errors.iter().map(|e| format!("\n  - {e}")).collect()
}

/// ` (at `key`)`, or nothing.
/// ` (with --set a, --set b)`, or nothing without overrides.
fn with_origins(origins: &[String]) -> String {
    if origins.is_empty() {
        String::new()
    } else {
        format!(" (with {})", origins.join(", "))
    }
}

fn at_key(key: &Option<String>) -> String {
    key.as_ref()
        .map_or(String::new(), |k| format!(" (at `{k}`)"))
}

/// ` (k more UNIT(s) like it; see --dry-run)` when `more > 0`.
fn more_like_it(more: usize, unit: &str) -> String {
    match more {
        0 => String::new(),
        k => format!(" ({k} more {unit}(s) like it; see --dry-run)"),
    }
}

/// ` (k more stale UNIT(s), listed above)` in a dry run (`listed`), else
/// ` (k more stale UNIT(s); see --dry-run)`, when `more > 0`.
fn more_blocked(more: usize, unit: &str) -> String {
    match more {
        0 => String::new(),
        k => format!(" ({k} more blocked {unit}(s); see --dry-run)"),
    }
}

fn more_stale(more: usize, unit: &str, listed: bool) -> String {
    match (more, listed) {
        (0, _) => String::new(),
        (k, true) => format!(" ({k} more stale {unit}(s), listed above)"),
        (k, false) => format!(" ({k} more stale {unit}(s); see --dry-run)"),
    }
}

/// The TOML error `text` with its quotation of the source (the lines `N | text` and the
/// caret line `  | ^^^`) cut at [`QUOTED`] characters, the source line's length said;
/// the error's own words (the keys or values it expects) are kept whole (ninety-sixth
/// hostile round, D2: they were cut too), but for a value of the user's it quotes in
/// backticks beyond [`QUOTED`] characters ([`long_ticks_cut`]).
fn shortened(text: &str) -> String {
    text.lines()
        .map(|line| {
            let quoted = line
                .split_once(" | ")
                .is_some_and(|(gutter, _)| gutter.trim().bytes().all(|b| b.is_ascii_digit()))
                || line.trim_start().starts_with("| ");
            match line.char_indices().nth(QUOTED) {
                Some((cut, _)) if quoted => {
                    let source = line.split_once(" | ").map_or(line, |(_, t)| t);
                    format!("{}... (a line of {} bytes)", &line[..cut], source.len())
                }
                _ if quoted => line.to_string(),
                _ => long_ticks_cut(line),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provenance::mixed_configs;

    /// A TOML error quotes a long line by its start and length (ninety-fifth hostile
    /// round, N5: a 3 MB comment line was quoted whole).
    #[test]
    fn a_toml_error_quotes_a_long_line_by_its_start() {
        let text = format!("x = 1 {}", "c".repeat(3_000_000));
        let source = toml::from_str::<toml::Table>(&text).unwrap_err();
        let e = Error::Toml {
            path: "c.toml".into(),
            source: Box::new(source),
        }
        .to_string();
        assert!(e.len() < 1000, "{} bytes", e.len());
        assert!(e.starts_with("c.toml: ") && e.contains("line 1"), "{e}");
        assert!(e.contains("... (a line of 3000006 bytes)"), "{e}");
        // The error's own words are kept whole, however long (ninety-sixth hostile round,
        // D2: the list of expected keys was cut).
        let words = format!(
            "unknown field `bogus`, expected one of {}",
            "`k`, ".repeat(60)
        );
        assert_eq!(shortened(&words), words);
        let quoted = format!("10 | {}\n   | {}", "c".repeat(200), "^".repeat(200));
        let cut = shortened(&quoted);
        assert!(cut.contains("... (a line of 200 bytes)"), "{cut}");
        assert_eq!(cut.lines().count(), 2);
        assert!(cut.lines().all(|l| l.len() < 200), "{cut}");
        assert_eq!(shortened("a\nb"), "a\nb");
        // The user's own value quoted back is cut; the names expected are not (ninety-
        // seventh hostile round, N5).
        let value = format!(
            "unknown variant `{}`, expected one of `relu`, `erf`",
            "r".repeat(200_000)
        );
        let cut = shortened(&value);
        assert!(cut.len() < 400, "{} bytes", cut.len());
        assert!(
            cut.contains("... (200000 bytes)`, expected one of `relu`, `erf`"),
            "{cut}"
        );
        assert_eq!(shortened("a `b` c `"), "a `b` c `");
    }

    /// The refusal advises `--allow-mixed`; what a merge it allowed warns of does not.
    #[test]
    fn the_mixed_configs_warning_is_the_refusal_without_its_advice() {
        let (axes, problems) = (vec!["model.depth".to_string()], vec!["a differs".into()]);
        let found = mixed_configs(&axes, &problems, 2);
        assert!(!found.contains("--allow-mixed") && found.ends_with("a differs (and 2 more)"));
        let refusal = Error::MixedConfigs {
            axes,
            problems,
            more: 2,
        };
        assert_eq!(
            refusal.to_string(),
            format!("{found}; merge them anyway with --allow-mixed")
        );
    }
}
