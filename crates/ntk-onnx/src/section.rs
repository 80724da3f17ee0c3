//! `[onnx]`, the config table of a network given as an ONNX file, one type for both tools
//! (`ntk-probe onnx`, `ntk-train`): `file`, read from the current directory as `data.x` is.
//! A run's provenance records the file by its SHA-256 ([`DIGEST_KEY`]) in place of its
//! location ([`FILE_KEY`]), as for `probe.weights`: a moved file is the same model, a
//! changed one is not.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::{OnnxError, Result};
use crate::file::OnnxFile;
pub use crate::file::{DIGEST_KEY, FILE_KEY};

/// `[onnx]`: the model's file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OnnxSection {
    /// The ONNX file (weights included).
    pub file: PathBuf,
}

impl OnnxSection {
    /// Reads the file ([`OnnxFile::read`]); an empty path is an error naming the key.
    pub fn read(&self) -> Result<OnnxFile> {
        if self.file.as_os_str().is_empty() {
            return Err(OnnxError::File {
                key: FILE_KEY,
                path: self.file.clone(),
                reason: "an empty path: name the ONNX file".into(),
            });
        }
        OnnxFile::read(&self.file)
    }
}
