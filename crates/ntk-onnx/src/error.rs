//! What can go wrong reading an ONNX file or running its graph: each error names the file
//! and, where one is to blame, the node.

use ntk_files::shown::Shown;
use std::path::PathBuf;

/// An ONNX model that cannot be read, or cannot be run as a Burn graph.
#[derive(Debug, thiserror::Error)]
pub enum OnnxError {
    /// The file cannot be read as a model file: missing, not a regular file, too large, or
    /// an empty path; `key` is the config key that names it.
    #[error("{key} = \"{}\": {reason}", path.shown())]
    File {
        /// The config key (`onnx.file`).
        key: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The bytes are not an ONNX model, or its graph is not one onnx-ir can process.
    #[error("{path}: not a usable ONNX model: {reason}", path = .path.shown())]
    Parse {
        /// The file.
        path: PathBuf,
        /// onnx-ir's or the protobuf decoder's message.
        reason: String,
    },
    /// A node whose operator this interpreter does not run.
    #[error(
        "{path}: {node} uses the operator {op}, which is not supported; supported: {}",
        supported.join(", "),
        path = .path.shown()
    )]
    Unsupported {
        /// The file.
        path: PathBuf,
        /// The operator (`Softmax`, `LSTM`, ...), as the file names it.
        op: String,
        /// How the message names the node ([`crate::ops::node_label`]).
        node: String,
        /// The operators that are supported.
        supported: Vec<&'static str>,
    },
    /// A supported operator used in a way this interpreter does not run (an attribute
    /// value, a rank, an input that must be a constant and is not).
    #[error("{path}: {node} ({op}): {reason}", path = .path.shown())]
    Node {
        /// The file.
        path: PathBuf,
        /// How the message names the node: as the file does ([`crate::ops::node_label`]),
        /// or as onnx-ir numbers it where its nodes are not the file's one for one.
        node: String,
        /// Its operator.
        op: String,
        /// What is wrong.
        reason: String,
    },
    /// The graph's inputs or outputs are not what a network of one input batch and one
    /// output matrix has.
    #[error("{path}: {reason}", path = .path.shown())]
    Interface {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A node that training cannot run as the file means it (the graph is exported in
    /// evaluation mode): `BatchNormalization` (running statistics only), `Dropout` (the
    /// identity). `ntk-probe onnx` measures such a file; `ntk-train` refuses it.
    #[error("{path}: {node} ({op}) cannot be trained: {why}", path = .path.shown())]
    NotTrainable {
        /// The file.
        path: PathBuf,
        /// Its operator.
        op: String,
        /// How the message names the node ([`crate::ops::node_label`]).
        node: String,
        /// Why, and what to do.
        why: &'static str,
    },
    /// A weight or constant of the file that is not a finite number.
    #[error(
        "{path}: the tensor '{tensor}' (an input of {node}) holds {value} at flat index \
         {index}: a network's weights and constants must be finite numbers",
        path = .path.shown()
    )]
    NonFinite {
        /// The file.
        path: PathBuf,
        /// The node that reads it.
        node: String,
        /// The initializer's name in the file (or the constant's).
        tensor: String,
        /// The first non-finite value's flat (row-major) index.
        index: usize,
        /// The value (NaN or an infinity).
        value: f64,
    },
    /// A weight or constant of the file, finite in it, beyond the range of the float type
    /// the network runs in (a double initializer at 1e300 made f32): it would be infinite
    /// there, the network not the file's.
    #[error(
        "{path}: the tensor '{tensor}' (an input of {node}) holds {value:e} at flat \
         index {index}, beyond the range of {dtype} (the run's precision), where it would be \
         infinite: run in f64 (probe.precision or train.precision = \"f64\"), or give the \
         network at a scale {dtype} holds",
        path = .path.shown()
    )]
    OutOfRange {
        /// The file.
        path: PathBuf,
        /// The node that reads it.
        node: String,
        /// The initializer's name in the file (or the constant's place).
        tensor: String,
        /// The first such value's flat (row-major) index.
        index: usize,
        /// The value, as the file holds it.
        value: f64,
        /// The float type the run makes it in (`f32`).
        dtype: &'static str,
    },
    /// The data do not fit the model's input.
    #[error(
        "{path}: the model's input '{input}' has shape {shape:?} per sample ({expected} values) \
         but {data} has {got} values per sample",
        path = .path.shown()
    )]
    InputShape {
        /// The file.
        path: PathBuf,
        /// The graph input's name.
        input: String,
        /// Its shape without the batch dimension.
        shape: Vec<usize>,
        /// The number of values per sample that shape holds.
        expected: usize,
        /// The number of values per sample of the data.
        got: usize,
        /// The data, in words (`the batch`, `data: mnist train, balanced:10`).
        data: String,
    },
}

/// The crate's result.
pub type Result<T> = std::result::Result<T, OnnxError>;
