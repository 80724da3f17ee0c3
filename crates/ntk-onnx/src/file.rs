//! An ONNX file read once for a run: a regular file (a link to one followed; a FIFO, a
//! device or a directory refused without waiting on it) of at most 2 GiB, its SHA-256 (the
//! provenance's `onnx.digest`, of the very bytes the graph is parsed from) and its graph
//! ([`crate::graph::Loaded`]). What training may not run is said here too
//! ([`OnnxFile::check_trainable`]): the graph carries evaluation-mode semantics only.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::{OnnxError, Result};
use crate::graph::{self, Loaded};

/// The config key of the file (`[onnx] file`; [`crate::section`]).
pub const FILE_KEY: &str = "onnx.file";

/// The provenance key of the file's SHA-256, which results record in place of its
/// location.
pub const DIGEST_KEY: &str = "onnx.digest";

/// The most bytes an ONNX file may hold: a single-file ONNX model is one protobuf message,
/// whose serialized size cannot exceed 2 GiB.
pub const FILE_LIMIT: u64 = 2 << 30;

/// The operators whose ONNX semantics (evaluation mode) differ from what training runs, and
/// why each is refused in training.
const NOT_IN_TRAINING: &[(&str, &str)] = &[
    (
        "BatchNormalization",
        "the graph carries BatchNorm's evaluation statistics only (its running mean and \
         variance), which the interpreter normalizes by and training would never update, \
         while PyTorch trains it on each batch's own statistics: the network trained would \
         not be the one exported. Train a network without BatchNorm (an MLP; a Fixup, \
         NormReLU or SELU ResNet) or fold BatchNorm into the convolutions before exporting; \
         `ntk-probe onnx` measures this file's NTK as exported",
    ),
    (
        "Dropout",
        "the interpreter runs Dropout as the identity (evaluation mode), so training would \
         drop nothing: export the model in evaluation mode (model.eval(), which leaves \
         Dropout out) or without Dropout",
    ),
];

/// An ONNX file as read: where it was, the SHA-256 of its bytes and its graph parsed from
/// them.
#[derive(Clone, Debug)]
pub struct OnnxFile {
    /// The file as the config names it.
    pub path: PathBuf,
    /// SHA-256 of its bytes, lowercase hexadecimal.
    pub digest: String,
    /// The program and the parameters' initial values.
    pub loaded: Loaded,
}

/// Two reads are the same model when they name the same file and hold the same bytes.
impl PartialEq for OnnxFile {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path && self.digest == other.digest
    }
}

impl OnnxFile {
    /// Reads `path` once within [`FILE_LIMIT`] (a regular file: a FIFO or a device such as
    /// `/dev/zero` is refused, never read), hashes the bytes and parses the graph from them.
    pub fn read(path: &Path) -> Result<Self> {
        let bytes = read_bounded(path)?;
        Self::from_bytes(path, &bytes)
    }

    /// [`OnnxFile::read`] of bytes already in memory (`path` names them in errors).
    pub fn from_bytes(path: &Path, bytes: &[u8]) -> Result<Self> {
        let loaded = graph::load_bytes(path, bytes)?;
        Ok(Self {
            path: path.to_path_buf(),
            digest: sha256_hex(bytes),
            loaded,
        })
    }

    /// The number of values per sample of the graph input.
    pub fn input_dim(&self) -> usize {
        self.loaded.program.sample_dims.iter().product()
    }

    /// The number of trainable scalars (the initializers, BatchNorm's running statistics
    /// excepted).
    pub fn parameters(&self) -> usize {
        self.loaded.params.iter().map(|p| p.values.len()).sum()
    }

    /// Whether the graph has a `BatchNormalization` node.
    pub fn has_batch_norm(&self) -> bool {
        self.loaded
            .nodes
            .iter()
            .any(|n| n.op == "BatchNormalization")
    }

    /// Refuses a graph whose evaluation-mode semantics training cannot keep: the first
    /// `BatchNormalization` or `Dropout` node, named as the file names it, with why.
    pub fn check_trainable(&self) -> Result<()> {
        for node in &self.loaded.nodes {
            if let Some((_, why)) = NOT_IN_TRAINING.iter().find(|(op, _)| *op == node.op) {
                return Err(OnnxError::NotTrainable {
                    path: self.path.clone(),
                    op: node.op.clone(),
                    node: node.name.clone(),
                    why,
                });
            }
        }
        Ok(())
    }
}

/// SHA-256 of `bytes` in lowercase hexadecimal (as `ntk_runs::provenance::sha256_hex`).
fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The bytes of `path`: a regular file (a link to one followed; a FIFO, a device or a
/// directory refused without waiting on it) of at most [`FILE_LIMIT`] bytes, read once
/// ([`ntk_files::bounded`], as the probe reads its other given files).
fn read_bounded(path: &Path) -> Result<Vec<u8>> {
    let needs = "a single-file ONNX model, one protobuf message";
    ntk_files::bounded::read_bounded(path, FILE_LIMIT, needs).map_err(|why| OnnxError::File {
        key: FILE_KEY,
        path: path.to_path_buf(),
        reason: why.to_string(),
    })
}
