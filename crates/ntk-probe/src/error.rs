//! The error type of the probe library: the errors of the crates it builds on (their
//! messages unchanged) and its own, each carrying the values its message names.

use ntk_files::shown::Shown;
use std::path::{Path, PathBuf};

use ntk_runs::overrides::ConfigName;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The fewest samples a probe takes ([`Error::TooFewSamples`]).
pub const MIN_SAMPLES: usize = 2;

/// Everything that can go wrong in a probe, a sweep or a collection.
#[derive(Debug, thiserror::Error)]
/// The errors of the crates below are boxed (they are large; this keeps `Result` small).
pub enum Error {
    #[error(transparent)]
    Runs(Box<ntk_runs::Error>),
    #[error(transparent)]
    Numerics(Box<ntk_numerics::Error>),
    #[error(transparent)]
    Data(Box<ntk_data::DataError>),
    #[error(transparent)]
    Model(Box<ntk_model::ModelError>),
    #[error(transparent)]
    Kernel(Box<ntk_kernel::Error>),
    /// An ONNX model that cannot be read or run, or data that do not fit it.
    #[error(transparent)]
    Onnx(Box<ntk_onnx::OnnxError>),

    /// Several problems of one config, each its own error.
    #[error("{} problems:{}", .0.len(), ntk_runs::error::bullets(.0))]
    Problems(Vec<Error>),
    /// Fewer than [`MIN_SAMPLES`] samples (`data.n`): the NTK of one sample is its 1 x 1
    /// kernel, whose condition number is 1 whatever the network, with no pair for the
    /// gradient angles (nineteenth hostile round, N2; a block of one was refused already).
    /// The data is named: `data.n`, and for a file set the file its rows come from (round
    /// 22's N2: a one-row file was refused as `data.n = 1`, a key the user never wrote).
    #[error(
        "{0}: need at least 2 samples: the NTK of one sample is its 1 x 1 kernel \
         (kappa 1 whatever the network) with no pair for the gradient angles"
    )]
    TooFewSamples(String),
    /// `collect` without `--config` over results that differ beyond the axes every sweep
    /// has: a sweep's own further axes (widths, data sets, ...) are known from its config
    /// only (twenty-first hostile round, N1: the advice was `--allow-mixed` alone).
    #[error(
        "{0}; if they are one sweep with more axes (sweep.widths, sweep.ns, sweep.datasets, \
         sweep.conventions), pass its config: `ntk-probe collect DIR --config FILE`"
    )]
    CollectWithoutConfig(Box<ntk_runs::Error>),
    /// A collect whose tables are written but whose figures failed (a full disk): the
    /// tables are this collect's, the figures may be an earlier one's (ninety-fourth
    /// hostile round, N4).
    #[error(
        "{source}; {}/results.csv and summary.csv were written now, the figures may be an \
         earlier collect's: `ntk-probe plot {}` draws them again from the tables",
        out.shown(),
        out.shown()
    )]
    FiguresFailed { out: PathBuf, source: Box<Error> },
    /// A config value the probe cannot use: `key = value: reason`.
    #[error("{key} = {}: {reason}", ntk_files::shown::controls_escaped(.value))]
    Config {
        key: &'static str,
        value: String,
        reason: String,
    },
    /// A config that fails a check beyond single values (empty sweep axes, keys that do not
    /// go together); the message names the keys.
    #[error("{0}")]
    Invalid(&'static str),
    /// Keys of a probe config that do not apply to a network read from an ONNX file.
    #[error(
        "{0}: not for an ONNX model ([onnx]): its architecture, weights and \
         parameterization are the file's and its kernel is per-sample autodiff on the whole \
         set; [probe] takes precision, output and backend"
    )]
    NotForOnnx(String),
    /// Something only an MLP (`[model]`) has, asked of a ResNet config.
    #[error("this needs an MLP ([model]); the config describes a ResNet ([resnet])")]
    NeedsMlp,
    /// An input an f32 probe cannot hold (it would become an infinity and the kernel NaN).
    #[error(
        "{data}: {row}, column {column} is {value:e}, beyond f32's range \
         (probe.precision = \"f32\"); rescale the inputs or probe in f64"
    )]
    BeyondF32 {
        data: String,
        row: String,
        column: usize,
        value: f64,
    },
    /// A config text that does not parse.
    #[error(transparent)]
    Toml(#[from] toml::de::Error),
    /// An error of the config file (or directory) `path`.
    #[error("{}: {source}", .path.shown())]
    At {
        path: PathBuf,
        #[source]
        source: Box<Error>,
    },
    /// An error of a config's values, the config named as [`ConfigName`] says (`F (with
    /// overrides)` where a value may be an assignment's).
    #[error("{name}: {source}")]
    Named {
        name: ConfigName,
        #[source]
        source: Box<Error>,
    },
    /// A validation error of one setting of a sweep (`setting` describes it when the sweep
    /// has several).
    #[error("{}{source}", .setting.as_ref().map_or(String::new(), |d| format!("{d}: ")))]
    Setting {
        setting: Option<String>,
        #[source]
        source: Box<Error>,
    },
    /// A sweep config with a `[resnet]` table.
    #[error(
        "{name}: [resnet]: sweeps run MLPs only ([model]); probe a ResNet one network at a \
         time with `ntk-probe run --config FILE --out DIR`"
    )]
    SweepResNet { name: ConfigName },
    /// A probe config with both `[sweep]` and `[onnx]` (eighty-fifth hostile round, N7: read
    /// as a TOML error, `unknown field onnx`).
    #[error(
        "{name}: [onnx] with [sweep]: probe sweeps run MLPs only ([model]); probe an ONNX \
         network one input set at a time with `ntk-probe onnx --config FILE --out DIR` \
         (`ntk-train sweep` takes [onnx] networks)"
    )]
    SweepOnnx { name: ConfigName },
    /// A config for the other command: `ntk-probe run` takes one without `[sweep]`,
    /// `ntk-probe sweep` one with it (the table may come from a `--set`).
    #[error(
        "{name}: {}{}",
        if *.has_sweep {
            format!("has a [sweep] table: run it with `ntk-probe sweep --config {}`", .name.path.shown())
        } else if *.has_onnx {
            format!("has an [onnx] table: run it with `ntk-probe onnx --config {}`", .name.path.shown())
        } else {
            format!("has no [sweep] table: run it with `ntk-probe run --config {}`", .name.path.shown())
        },
        if .name.overridden { " and the same --set" } else { "" }
    )]
    OtherCommand {
        /// Overridden where the assignments made the table that decides (or removed it).
        name: ConfigName,
        has_sweep: bool,
        /// An `[onnx]` config goes to `ntk-probe onnx` (round 22's N7: `sweep` sent it to
        /// `run`, which sent it to `onnx`).
        has_onnx: bool,
    },
    /// `ntk-probe onnx` of a config without `[onnx]` (round 22's N7: it was refused for the
    /// keys of its `[model]`, not for the file it does not name).
    #[error(
        "{}: has no [onnx] table (`[onnx] file = \"model.onnx\"` names the network); a \
         config of [model] or [resnet] runs with `ntk-probe run --config {}` (with a [sweep]: \
         `ntk-probe sweep`)",
        .0,
        .0.path.shown()
    )]
    NoOnnxTable(ConfigName),
    /// An override of a key that a sweep axis sets at every point.
    #[error(
        "{origin}: {name} sets this for every point of its sweep ({axis}), so the override \
         would be ignored; edit {axis} instead"
    )]
    AxisOverride {
        origin: String,
        /// Overridden where the axis itself came from an assignment.
        name: ConfigName,
        axis: &'static str,
    },

    // --- files ---
    /// The output directory cannot be listed.
    #[error("{}: cannot use as the output directory: {source}", .dir.shown())]
    OutputDir {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The output directory holds files of something else.
    #[error(
        "{}: holds files that are not an ntk-probe output set ({}{}); a new run would replace \
         the directory as a whole, so choose an empty or new --out",
        .dir.shown(),
        ntk_files::shown::controls_escaped(&.files.join(", ")),
        if *.more > 0 { format!(", and {} more", .more) } else { String::new() }
    )]
    ForeignFiles {
        dir: PathBuf,
        /// The first (up to three) foreign files.
        files: Vec<String>,
        /// How many more there are.
        more: usize,
    },
    /// A point a sweep makes (its directory replaced whole) holding results of a protocol
    /// the sweep does not list (eighty-ninth hostile round, D1: they were removed unsaid).
    #[error(
        "{}: holds results of the {protocol} protocol, which sweep.protocols does not list; \
         making the point replaces its directory whole and would remove them: list \
         \"{protocol}\" in sweep.protocols to make them again too, or move {} out of the sweep",
        .dir.shown(),
        .dir.join(.protocol).shown()
    )]
    UnlistedProtocol {
        dir: PathBuf,
        protocol: &'static str,
    },
    /// A file of a probe's output set (or its phase files) cannot be written or read.
    #[error("{}: cannot {action}: {source}", .dir.shown())]
    CannotWrite {
        dir: PathBuf,
        /// What failed, a verb first: "write ntk.npy", "read the tiles".
        action: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// An output set that cannot be begun or committed (the message names its directory),
    /// or a buffer that cannot be flushed.
    #[error("{0}")]
    Io(#[source] std::io::Error),
    /// A CSV row that cannot be written.
    #[error("{0}")]
    Csv(#[source] csv::Error),
    /// A table that `plot` redraws from is missing or holds a value it cannot read.
    #[error("{}: {reason}", .path.shown())]
    BadTable { path: PathBuf, reason: String },
    /// A point's summary whose numbers are not those of the eigenvalues it records beside it
    /// ([`crate::sweep::read_summaries_at`]).
    #[error(
        "{}: {what}; the summary was edited after the run, and its results are not reported",
        .path.shown()
    )]
    SummaryEdited { path: PathBuf, what: String },
    /// A point's file that is not as its summary records it (`ntk_runs::manifest::verify`'s
    /// words, which name the file), read by `collect` ([`crate::sweep::read_summaries_at`]).
    #[error("{0}, and its results are not reported")]
    SetNotAsWritten(ntk_runs::manifest::Mismatch),
    /// A point's summary in the directory of another point: renamed, or copied in
    /// (`crate::sweep::named`); the message names the levels that differ and the remedy.
    #[error("{0}")]
    NotItsPoint(String),
    /// A sweep directory without finished points.
    #[error("{}: no finished ntk-probe points under runs/", .out.shown())]
    NoPoints { out: PathBuf },
    /// A directory of training runs (`ntk-train`'s `runs/<run>/metrics.csv`, or a run's
    /// own `metrics.csv`), handed to the probe's collect.
    /// With `beside_points`, `runs/` holds other entries too (a probe sweep's): the two
    /// tools' output mixed, which neither collect takes.
    #[error(
        "{}: holds ntk-train runs ({}){}",
        .out.shown(),
        .found,
        if *.beside_points {
            " beside other entries under runs/ (ntk-probe points?): neither tool collects \
             the two mixed; move the training runs to their own directory and collect that \
             with `ntk-train collect`"
                .to_string()
        } else {
            format!(
                ", not ntk-probe points: use ntk-train on it (`ntk-train collect {0}`, \
                 `ntk-train plot {0}`)",
                .out.shown()
            )
        }
    )]
    TrainingRuns {
        out: PathBuf,
        found: String,
        beside_points: bool,
    },

    // --- numerics and devices ---
    /// A device operation that failed (the backend's error).
    #[error("{0}")]
    Device(String),
}

impl From<ntk_runs::Error> for Error {
    fn from(e: ntk_runs::Error) -> Self {
        Self::Runs(Box::new(e))
    }
}

/// A file's error, held as the run framework holds it (`ntk_runs::Error::Files`).
impl From<ntk_files::Error> for Error {
    fn from(e: ntk_files::Error) -> Self {
        Self::Runs(Box::new(e.into()))
    }
}

impl From<ntk_kernel::Error> for Error {
    fn from(e: ntk_kernel::Error) -> Self {
        Self::Kernel(Box::new(e))
    }
}

impl From<ntk_onnx::OnnxError> for Error {
    fn from(e: ntk_onnx::OnnxError) -> Self {
        Self::Onnx(Box::new(e))
    }
}

impl From<ntk_numerics::Error> for Error {
    fn from(e: ntk_numerics::Error) -> Self {
        Self::Numerics(Box::new(e))
    }
}

impl From<ntk_data::DataError> for Error {
    fn from(e: ntk_data::DataError) -> Self {
        Self::Data(Box::new(e))
    }
}

impl From<ntk_model::ModelError> for Error {
    fn from(e: ntk_model::ModelError) -> Self {
        Self::Model(Box::new(e))
    }
}

impl Error {
    /// This error with the paths inside `set`'s temporary directory named as the user will
    /// find them, under the set's `--out` ([`OutputSet::shown`]): a failed write of the set
    /// names `OUT: cannot write ntk.npy`, not the temporary directory its failure removed.
    ///
    /// [`OutputSet::shown`]: ntk_files::outset::OutputSet::shown
    pub fn in_set(self, set: &ntk_files::outset::OutputSet) -> Self {
        match self {
            Self::CannotWrite {
                dir,
                action,
                source,
            } => Self::CannotWrite {
                dir: set.shown(&dir),
                action,
                source,
            },
            Self::Runs(e) => match *e {
                ntk_runs::Error::Files(ntk_files::Error::Write { path, source }) => {
                    ntk_files::Error::Write {
                        path: set.shown(&path),
                        source,
                    }
                    .into()
                }
                other => Self::Runs(Box::new(other)),
            },
            Self::Model(e) => match *e {
                ntk_model::ModelError::Io { path, source } => ntk_model::ModelError::Io {
                    path: set.shown(Path::new(&path)).shown().to_string(),
                    source,
                }
                .into(),
                other => Self::Model(Box::new(other)),
            },
            other => other,
        }
    }

    /// [`Error::TooFewSamples`] of `data`: `data.n`, and the file of a file set.
    pub fn too_few_samples(data: &ntk_data::config::DataConfig) -> Self {
        let file = match (&data.dataset, &data.x) {
            (ntk_data::config::Dataset::File, Some(x)) => {
                format!(" (data.x = {}; without data.n, all its rows)", x.shown())
            }
            _ => String::new(),
        };
        Self::TooFewSamples(format!("data.n = {}{file}", data.n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The message says what failed with its own verb: "cannot read the tiles", never
    /// "cannot write read the tiles".
    #[test]
    fn a_failed_file_operation_says_its_own_verb() {
        for action in ["read the tiles", "create the directory", "write ntk.npy"] {
            let e = Error::CannotWrite {
                dir: PathBuf::from("out"),
                action,
                source: std::io::Error::from(std::io::ErrorKind::PermissionDenied),
            };
            let text = e.to_string();
            assert!(
                text.starts_with(&format!("out: cannot {action}: ")),
                "{text}"
            );
            assert!(
                !text.contains("write read") && !text.contains("write create"),
                "{text}"
            );
        }
    }
}
