//! The error type of the training library: the errors of the crates it builds on (their
//! messages unchanged) and its own, each carrying the values its message names. A diverged
//! run is not an error (its summary says so).

use ntk_files::shown::Shown;
use std::path::PathBuf;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in a training run, a sweep or a report.
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
    /// An engine that does not apply, cannot start or failed (`ntk_engine`).
    #[error(transparent)]
    Engine(#[from] ntk_engine::Error),

    /// A config value the trainer cannot use: `key = value: reason`.
    #[error("{key} = {}: {reason}", ntk_files::shown::controls_escaped(.value))]
    Config {
        key: &'static str,
        value: String,
        reason: &'static str,
    },
    /// Keys of a config with `[onnx]` that do not apply to a network read from a file: one
    /// error naming every one present.
    #[error(
        "{0}: not for an ONNX network ([onnx]): its architecture and weights are the file's, \
         it has no layers of its own naming to compare and no infinite-width kernel; remove \
         them"
    )]
    NotForOnnx(String),
    /// Several problems of one config, each its own error.
    #[error("{} problems:{}", .0.len(), ntk_runs::error::bullets(.0))]
    Problems(Vec<Error>),
    /// A key whose value needs another key: `key = value needs what`.
    #[error("{key} = {value} needs {needs}")]
    Needs {
        key: &'static str,
        value: &'static str,
        needs: &'static str,
    },
    /// A key (or section) the run needs and the config lacks: `key: why`.
    #[error("{key}: {why}")]
    Missing {
        key: &'static str,
        why: &'static str,
    },
    /// Keys that exclude each other: `keys: what to do`.
    #[error("{keys}: {reason}")]
    Exclusive {
        keys: &'static str,
        reason: &'static str,
    },
    /// A count outside the range its bound allows: `key = value: must be in 2..=bound_key
    /// (bound)`.
    #[error("{key} = {value}: must be in 2..={bound_key} ({bound}){why}")]
    OutOfRange {
        key: &'static str,
        value: usize,
        bound_key: &'static str,
        bound: usize,
        /// What the range counts, after a comma (or nothing).
        why: &'static str,
    },
    /// A tracked output (`ntk.output = k`) that the network does not have.
    #[error(
        "ntk.output = {output}: the network has {outputs} output(s) ({classes_key} = \
         {outputs}); outputs are counted from 0"
    )]
    OutputBeyond {
        output: usize,
        outputs: usize,
        classes_key: &'static str,
    },
    /// A labels file whose labels are all one class: no classifier can be trained on it.
    #[error(
        "{}: the labels hold {classes} class(es) (the largest label is {top}); \
         classification needs two classes or more",
        .labels.shown()
    )]
    OneClass {
        labels: std::path::PathBuf,
        classes: usize,
        top: usize,
    },
    /// More held-out samples asked for than the held-out file holds.
    #[error("train.test_n = {test_n}: data.test_x holds {rows} rows")]
    TestRows { test_n: usize, rows: usize },
    /// A sweep axis listing one value twice (two points would share a run directory).
    #[error("{key}: lists {value} twice (each value is one run)")]
    ListedTwice { key: &'static str, value: String },
    /// A cosine schedule's floor above the (lowest) learning rate.
    #[error(
        "schedule.min_lr = {}: above the learning rate {}; the cosine schedule decays from \
         the lr down to min_lr",
        ntk_files::table::number(*.min_lr),
        ntk_files::table::number(*.lr)
    )]
    MinLrAboveLr { min_lr: f64, lr: f64 },
    /// Augmentation of data that is not a built-in image set's images, or of images
    /// scaled to unit norm; `reason` says which.
    #[error(
        "train.augment = true needs the images of a built-in set (mnist, fashion-mnist, \
         cifar-10, digits) without data.unit_norm; here {reason}"
    )]
    AugmentNeedsImages { reason: String },
    /// Labels beyond the network's outputs (`key` is the outputs' key).
    #[error(
        "{key} = {classes}: {data} has labels up to {top}; the network needs {} outputs",
        usize::from(*.top) + 1
    )]
    LabelsBeyondOutputs {
        key: &'static str,
        classes: usize,
        data: String,
        top: u8,
    },
    /// An input an f32 run cannot hold.
    #[error(
        "{data}: {row}, column {column} is {value:e}, beyond f32's range \
         (train.precision = \"f32\"); rescale the inputs or train in f64"
    )]
    BeyondF32 {
        data: String,
        row: String,
        column: usize,
        value: f64,
    },
    /// A row of inputs an f32 run would hold as zeros or subnormal numbers.
    #[error(
        "{data}: {row} is nonzero but its largest magnitude, {value:e}, is below f32's \
         smallest normal number ({min:e}): in train.precision = \"f32\" the row is 0 or \
         subnormal, its digits lost; rescale the inputs or train in f64",
        min = f32::MIN_POSITIVE
    )]
    UnderF32 {
        data: String,
        row: String,
        value: f64,
    },
    /// Training and test splits of different input sizes.
    #[error(
        "the test split ({test}) has {test_d} inputs per sample but the training split \
         ({train}) has {train_d}: the two splits' files must hold images of one shape"
    )]
    SplitShapes {
        train: String,
        train_d: usize,
        test: String,
        test_d: usize,
    },
    /// `[representations]` without a test set.
    #[error("[representations] compares test inputs: the run needs a test set (train.test_n > 0)")]
    RepresentationsNeedTestSet,
    // --- run directories ---
    /// A run directory that holds a run, without `--resume`.
    #[error(
        "{} already holds a run; pass --resume to continue it, or choose another --out",
        .out.shown()
    )]
    RunExists { out: PathBuf },
    /// A run directory holding an interrupted run (a checkpoint, no summary), without
    /// `--resume`: refused before any run of the sweep starts (issue 66 item 6).
    #[error(
        "{} holds an interrupted run (checkpoint after epoch {epoch} of {epochs}): pass \
         --resume to continue it from there, or choose another --out",
        .out.shown()
    )]
    Interrupted {
        out: PathBuf,
        epoch: usize,
        epochs: usize,
    },
    /// A run to be trained into a sweep's `runs/` whose point and seed a run there records
    /// already ([`crate::joins`]): the sweep's collect would count it twice.
    #[error(
        "{}: {} records this point and seed already (the same {}): the sweep's \
         tables merge every run under runs/, and would count it twice, as two seeds; move \
         {} out of runs/ first (its results stay as they are), or write this sweep or run \
         elsewhere",
        .new.shown(),
        .there.shown(),
        crate::config::AXES.join(", "),
        .there.shown()
    )]
    SameConfigThere { new: PathBuf, there: PathBuf },
    /// A run to be trained into a sweep's `runs/` that a directory there holds already, by
    /// this very config, under another name ([`crate::joins`]): moved there, it is kept.
    #[error(
        "{}: {} is this run already (it records this config), under another directory's \
         name: move it to {}{} and the sweep keeps it, instead of training it again",
        .new.shown(),
        .there.shown(),
        .new.shown(),
        if *.occupied {
            " (which another directory holds now: move that one out of runs/ first, as a \
             plain `mv` would put this one inside it)"
        } else {
            ""
        }
    )]
    ThisRunElsewhere {
        new: PathBuf,
        there: PathBuf,
        occupied: bool,
    },
    /// A directory under a sweep's `runs/` that records the very config of a run kept at
    /// its own place ([`crate::joins`]): a copy, which the tables would count twice.
    #[error(
        "{}: a copy of the run {} (it records the same config, and that run is at its own \
         place): the tables would count it twice; remove the copy",
        .copy.shown(),
        .run.shown()
    )]
    CopyOfRun { copy: PathBuf, run: PathBuf },
    /// Two runs under a sweep's `runs/` of one point and seed ([`crate::config::point_key`]),
    /// which `collect` would count as two seeds, `--allow-mixed` or not.
    #[error(
        "{} and {} are one point and seed (the same {}): the tables would count them as two \
         seeds; remove one",
        .first.shown(),
        .second.shown(),
        crate::config::AXES.join(", ")
    )]
    SamePointTwice { first: PathBuf, second: PathBuf },
    /// One run brought into a sweep's `runs/` while another process writes that sweep.
    #[error(
        "{}: another process is writing this sweep now ({holder}), and may reach this run's \
         point; wait for it, then train the run",
        .sweep.shown()
    )]
    SweepBeingWritten { sweep: PathBuf, holder: String },
    /// One run brought into a sweep's `runs/` while another run of its point and seed is
    /// being trained there (its live claim, `ntk_files::lock::PointClaim`; twenty-fourth
    /// hostile round, N1: the refusal named a sweep that "may reach" the point).
    #[error(
        "{}: another run of this point and seed is being trained into its runs/ now \
         ({holder}); the tables would count them as two seeds: train this one elsewhere, or \
         wait for that one and choose another seed",
        .sweep.shown()
    )]
    PointBeingTrained { sweep: PathBuf, holder: String },
    /// A config of `ntk-probe` (its `[probe]` table) given to `ntk-train` (twenty-fourth
    /// hostile round, N7).
    #[error(
        "[probe]: a config of ntk-probe, which computes its NTK ({}); ntk-train trains a \
         config of [optim], [train] and [schedule]",
        if *.onnx {
            "of an [onnx] network: `ntk-probe onnx --config FILE --out DIR`"
        } else {
            "`ntk-probe run --config FILE --out DIR`; with a [sweep]: `ntk-probe sweep`"
        }
    )]
    ProbeConfig {
        /// The config's network is an ONNX file (round 25's N2: sent to `run`, which refuses
        /// it).
        onnx: bool,
    },
    /// A config without `[optim]` and without any other training table: a probe's
    /// (twenty-fifth hostile round, N2: refused as "missing field `optim`" alone).
    #[error(
        "no [optim] table: ntk-train trains with [optim] (its rate lr at least), [train] and \
         [schedule]; a config of [data] and [model] (or [onnx]) alone is one for ntk-probe \
         (`ntk-probe run --config FILE --out DIR`, `ntk-probe onnx` for an [onnx] network)"
    )]
    NoOptim,
    /// `--resume` of a run whose epochs are there but whose checkpoint pointer is gone.
    #[error(
        "{}: holds epoch checkpoints (checkpoints/) but no checkpoint.json, which names the \
         checkpoint to resume from; restore it, or remove the directory to train again from \
         the start",
        .out.shown()
    )]
    NoCheckpointPointer { out: PathBuf },
    /// A checkpoint of another engine than the one this run would use.
    #[error(
        "{}: the checkpoint was written by the {written_by} engine and this run would use \
         the {engine} engine; set train.engine = \"{written_by}\" to resume it",
        .out.shown()
    )]
    EngineMismatch {
        out: PathBuf,
        written_by: ntk_engine::StateForm,
        engine: ntk_engine::StateForm,
    },

    // --- reports ---
    /// A finished run's metrics table is gone (seventieth hostile round, N2: it was said as
    /// "0 epoch row(s)", as if the file were there and empty).
    #[error(
        "{}: missing, but {} records {epochs} epoch(s) completed; the run's files do not \
         agree",
        .metrics.shown(),
        .summary.shown()
    )]
    MetricsMissing {
        metrics: PathBuf,
        summary: PathBuf,
        epochs: usize,
    },
    /// A run whose metrics table and summary disagree on the epochs completed.
    #[error(
        "{}: {rows} epoch row(s), but {} records {epochs} epoch(s) completed; the run's \
         files do not agree",
        .metrics.shown(),
        .summary.shown()
    )]
    MetricsDisagree {
        metrics: PathBuf,
        rows: usize,
        summary: PathBuf,
        epochs: usize,
    },
    /// A finished run's metrics table that is not the one its summary was written from
    /// (which of the two changed, the files cannot say: fifty-eighth hostile round, N2, an
    /// edited summary was reported as an edited table).
    #[error(
        "{}: {what}; the table and {} disagree, so one of them was edited after the run, \
         and its results are not reported",
        .metrics.shown(),
        .summary.shown()
    )]
    MetricsEdited {
        metrics: PathBuf,
        summary: PathBuf,
        what: String,
    },
    /// A run's table that is not as its run wrote it (its summary's record of it:
    /// [`crate::summary::check_recorded`]).
    #[error("{0}, so its results are not reported")]
    NotAsWritten(String),
    /// A sweep's run directory that holds another run's files, or was renamed: the
    /// message names them and ends with the remedy ([`crate::report::runs`]).
    #[error("{0}")]
    NotItsRun(String),
    /// A run's config.toml that says other than its run's record (its summary, or its
    /// checkpoint where it has none): each difference as `key = now there, was recorded`.
    /// Which of the two changed, the files cannot say where the record holds its own
    /// checksum and its tables agree with it: a record copied in with its tables from
    /// another run of the same name reads the same (hundred-and-forty-sixth hostile round,
    /// D1: it was called an edited config.toml).
    #[error(
        "{}: differs from the config its run recorded ({}): the file was edited after the \
         run, or the run's record (summary.json with its tables, or its checkpoint) was \
         copied in from another run, so its results are not reported",
        .path.shown(),
        .edits.join("; ")
    )]
    Edited { path: PathBuf, edits: Vec<String> },
    /// A collect whose tables are written but whose figures failed (a full disk): the
    /// tables are this collect's, the figures may be an earlier one's (ninety-fourth
    /// hostile round, N4, and the ninety-fifth's N3: ntk-probe said so, ntk-train not).
    #[error(
        "{source}; the tables in {} (sweep.csv, ...) were written now, the figures may be an \
         earlier collect's: `ntk-train plot {}` draws them again from the runs",
        .out.shown(),
        .out.shown()
    )]
    FiguresFailed { out: PathBuf, source: Box<Error> },
    /// A directory that is neither a run nor a sweep: the os error said only where it is
    /// not that `runs/` is missing (ninety-sixth hostile round, N4: "No such file or
    /// directory" read as if the directory named were missing).
    #[error("{}: {}", .out.shown(), no_run_why(.out, .source))]
    NoRun {
        out: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A sweep directory without training runs (`probe_sweep`: it looks like the probe's).
    #[error(
        "{}: no training runs under runs/ (no runs/*/config.toml){}",
        .out.shown(),
        if *.probe_sweep {
            "; this looks like an ntk-probe sweep: use ntk-probe on it (`ntk-probe collect`, \
             `ntk-probe plot`)"
        } else {
            ""
        }
    )]
    NoTrainingRuns { out: PathBuf, probe_sweep: bool },
    /// An `--out` that is an ntk-probe sweep's directory ([`crate::files::is_probe_sweep`]).
    #[error(
        "{}: an ntk-probe sweep's directory (its points under runs/ are the probe's), not a \
         training run's: \
         use ntk-probe on it (`ntk-probe sweep`, `ntk-probe collect`), or choose another --out",
        .out.shown()
    )]
    ProbeSweep { out: PathBuf },
    /// A directory holding an ntk-probe sweep's points beside training runs
    /// ([`crate::files::refuse_probe_sweep`]).
    #[error(
        "{}: holds an ntk-probe sweep's points ({}) beside training runs ({}): neither tool \
         collects the two mixed; move the training runs to their own directory and collect \
         that with `ntk-train collect`",
        .out.shown(),
        .probe.shown(),
        .run.shown()
    )]
    MixedWithProbe {
        out: PathBuf,
        probe: PathBuf,
        run: PathBuf,
    },
    /// A config text that does not parse.
    #[error(transparent)]
    Toml(#[from] toml::de::Error),
    /// An error of the config file or run directory `path`.
    #[error("{}: {source}", .path.shown())]
    At {
        path: PathBuf,
        #[source]
        source: Box<Error>,
    },
    /// A sweep axis's value the network cannot take (a ResNet's activation follows its
    /// variant): the axis named (sixty-fifth hostile round, N2).
    #[error("{axis}: {source}")]
    Axis {
        axis: &'static str,
        #[source]
        source: Box<Error>,
    },
    /// A run's config against the data it loaded (labels beyond the outputs, augmentation,
    /// f32's range: `crate::data_checks`), named with the config by the command.
    #[error(transparent)]
    AgainstData(Box<Error>),
    /// A sweep point whose config is invalid.
    #[error("sweep point {id}: {source}")]
    Point {
        id: String,
        #[source]
        source: Box<Error>,
    },
    /// The held-out set of `train.test_n` samples cannot be loaded: named as the set
    /// (`data.test_x` or the built-in test split) with the count taken from it, not by
    /// `train.test_n` alone, a key the user may not have set (hundred-and-thirty-third hostile
    /// round, N3).
    #[error("{set} (its first train.test_n = {test_n} samples): {source}")]
    TestSet {
        set: &'static str,
        test_n: usize,
        #[source]
        source: Box<Error>,
    },
    /// The linearized prediction (`[prediction]`) cannot be made.
    #[error("[prediction]: {0}")]
    Prediction(String),
    /// The infinite-width kernel of `[prediction]` overflows: its recursion leaves f64's
    /// range at `layer` (hundred-and-eleventh hostile round, D4: the run failed after its
    /// work with "the kernel holds a non-finite value", the dry run said nothing).
    /// The row named is the one of the largest square norm, whose recursion leaves the range
    /// first (hundred-and-seventeenth hostile round, D1: no set or row was named past layer
    /// 0, and "the empirical kernel alone" advised where it is refused for the same row).
    #[error(
        "[prediction]: the infinite-width recursion of {activation} (kernels = [\"theory\"]) \
         leaves f64's range at layer {layer} of {depth} at row {row} of the {set} set's file \
         (counted from 0 as numpy indexes them; the row's largest magnitude {largest:.3e}), so its kernel is not finite; {}",
        if *.layer == 0 {
            "layer 0 is the row's own square norm |x|^2, which passes f64's largest number: \
             rescale the inputs down"
        } else {
            "each layer's kernel grows with the input's square norm: rescale the inputs down, \
             or a shallower network"
        }
    )]
    PredictionOverflow {
        activation: String,
        layer: usize,
        depth: usize,
        set: &'static str,
        row: usize,
        largest: f64,
    },
    /// A `[prediction]` kernel at initialization underflows f64: a diagonal entry `K(x, x)`
    /// below the smallest normal number, or an exact 0 that is not the network's own
    /// (hundred-and-second hostile round, D4).
    #[error(
        "[prediction]: the {kernel} NTK at initialization has K(x, x) = {value:.3e} at row \
         {row} of the {set} set's file (counted from 0 as numpy indexes them; the row's largest magnitude {largest:.3e}), below the smallest \
         normal f64 number{why}: the kernel underflows, its entries losing digits or \
         vanishing, and its spectrum and the rates it predicts would be wrong; rescale the \
         inputs (data.unit_norm = true puts every row at norm 1)"
    )]
    PredictionUnderflow {
        kernel: &'static str,
        set: &'static str,
        row: usize,
        largest: f64,
        value: f64,
        why: String,
    },
    /// A `[prediction]` kernel at initialization with an entry that is not finite: the row
    /// of the first diagonal entry that is not, else of the first such entry (hundred-and-
    /// sixteenth hostile round, D1: a training-test entry past f64 wrote a predicted test loss
    /// of inf with an accuracy, rc 0).
    #[error(
        "[prediction]: the {kernel} NTK at initialization{whose} is not finite at row {row} of \
         the {set} set's file (counted from 0 as numpy indexes them; the row's largest magnitude {largest:.3e}){with}: the kernel overflows \
         f64 (or the weights hold NaN), so neither its spectrum nor its predictions can be \
         formed; rescale the inputs down (kappa does not depend on the kernel's scale)"
    )]
    PredictionNotFinite {
        kernel: &'static str,
        /// Which kernel, where it is one output's of several (", output 0's own kernel,
        /// ..."), else empty (hundred-and-eighteenth hostile round, N1).
        whose: String,
        set: &'static str,
        row: usize,
        largest: f64,
        /// The entry's other row where it is off the diagonal (", with row 3 of the test
        /// set"), else empty.
        with: String,
    },
    /// The tracked NTK has NaN or infinite entries: the first sample whose row holds one.
    #[error(
        "ntk during training, epoch {epoch}: the kernel has non-finite entries from tracked \
         sample {sample} (row {row} of {data}, counted from 0 as numpy indexes them, the row's \
         largest magnitude {largest:.3e}): the \
         network's forward or gradient overflows {precision} on it (or the weights hold \
         NaN); rescale the inputs (data.unit_norm = true puts every row at norm 1) or \
         choose another activation"
    )]
    NtkNotFinite {
        epoch: usize,
        sample: usize,
        /// The sample's row in its file ([`ntk_data::Inputs::source_row`]).
        row: usize,
        data: String,
        largest: f64,
        precision: ntk_numerics::backend::Precision,
    },
    /// The tracked NTK underflows: a diagonal entry `K(x, x)` below the precision's
    /// smallest normal number, or exactly 0 where the same network on the input scaled by
    /// a power of two gives a positive one (hundred-and-first hostile round, D3).
    #[error(
        "ntk during training, epoch {epoch}: tracked sample {sample} (row {row} of {data}, \
         counted from 0 as numpy indexes them, the row's largest magnitude {largest:.3e}) has K(x, x) = {value:.3e}, below the smallest \
         normal {precision} number{why}: the kernel underflows, its entries losing digits or \
         vanishing; rescale the inputs (data.unit_norm = true puts every row at norm 1){f64}"
    )]
    NtkUnderflow {
        epoch: usize,
        sample: usize,
        /// The sample's row in its file ([`ntk_data::Inputs::source_row`]).
        row: usize,
        data: String,
        largest: f64,
        value: f64,
        precision: ntk_numerics::backend::Precision,
        why: String,
        f64: &'static str,
    },
    /// The NTK tracked during training cannot be computed.
    #[error("ntk during training, epoch {epoch}: {source}")]
    Ntk {
        epoch: usize,
        #[source]
        source: Box<Error>,
    },

    // --- files and checkpoints ---
    /// A file of an earlier run cannot be removed.
    #[error("{}: cannot remove: {source}", .path.shown())]
    Remove {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A model or optimizer record (or momentum buffer) that cannot be saved or loaded: the
    /// recorder's message.
    #[error("{}: {message}", .path.shown())]
    Record { path: PathBuf, message: String },
    /// A record error that names no file.
    #[error("{0}")]
    Recorder(String),
    /// A `checkpoint.json` that does not parse.
    #[error("{}: not a checkpoint pointer: {source}", .path.shown())]
    NotPointer {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// A checkpoint whose pointer or files show it cannot be trusted.
    #[error(
        "{}: {why}; the checkpoint cannot be trusted: pass --recompute to train the run \
         again from the start, or give a new --out",
        .path.shown()
    )]
    Untrusted { path: PathBuf, why: String },
    /// An output set that cannot be begun or committed (the message names its directory).
    #[error("{0}")]
    Io(#[source] std::io::Error),
}

impl Error {
    /// The error of one config value: `key = value: reason`.
    pub fn config(key: &'static str, value: impl std::fmt::Display, reason: &'static str) -> Self {
        // A number's text short at every magnitude (twenty-sixth hostile round, N6: 1e-300
        // printed as its 300 digits), as the tables write it.
        let text = value.to_string();
        let value = match text.parse::<f64>() {
            Ok(x) if text.len() > 24 => ntk_files::table::number(x),
            _ => text,
        };
        Self::Config { key, value, reason }
    }
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

impl From<ntk_kernel::Error> for Error {
    fn from(e: ntk_kernel::Error) -> Self {
        Self::Kernel(Box::new(e))
    }
}

/// Why `out` holds no run, from the error reading its `runs/`: missing (the directory
/// itself or its `runs/`), or unreadable with the os error.
fn no_run_why(out: &std::path::Path, source: &std::io::Error) -> String {
    match source.kind() {
        std::io::ErrorKind::NotFound if !out.exists() => "no such directory".to_string(),
        // The path given is itself no directory (ninety-eighth hostile round, N4: "runs/
        // cannot be read: Not a directory (os error 20)").
        _ if std::fs::metadata(out).is_ok_and(|m| !m.is_dir()) => {
            "not a directory (a file, a FIFO or a device): give a run's or a sweep's output \
             directory (its --out)"
                .to_string()
        }
        std::io::ErrorKind::PermissionDenied => format!(
            "this user may not read the directory or its runs/ ({source}): make it readable \
             to this user"
        ),
        std::io::ErrorKind::NotFound => {
            "no run here (neither config.toml nor runs/ in this directory)".to_string()
        }
        _ => format!("no run here (no config.toml, and runs/ cannot be read: {source})"),
    }
}
