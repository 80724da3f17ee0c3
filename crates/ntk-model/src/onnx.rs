//! A network given as an ONNX file, as a config describes it ([`OnnxSpec`]): the file read
//! once (`ntk_onnx::OnnxFile`: its bytes' SHA-256 and its graph) and its number of outputs,
//! so that the checks a config's network gets (classes, input width) and its construction
//! on any device need no second read. The network itself is `ntk_onnx::OnnxModel`, a
//! [`crate::Net`] like the MLPs and ResNets.

use std::sync::Arc;

use burn::tensor::{DType, Device};
use ntk_onnx::{OnnxFile, OnnxModel, OnnxSection};

use crate::ModelError;

/// An ONNX network's spec: the file as read and the outputs per sample of its graph.
#[derive(Clone, Debug, PartialEq)]
pub struct OnnxSpec {
    /// The file: its path, SHA-256 and parsed graph.
    pub file: Arc<OnnxFile>,
    /// The number of outputs per sample (from the graph's trial run).
    pub outputs: usize,
}

impl OnnxSpec {
    /// Reads `[onnx]`'s file once and runs its graph on a zero sample on `device` (to
    /// learn its outputs): every error names the file (and the node, where one is to
    /// blame).
    pub fn read(section: &OnnxSection, device: &Device, dtype: DType) -> Result<Self, ModelError> {
        let file = Arc::new(section.read()?);
        Ok(Self::of(&OnnxModel::new(file, device, dtype)?))
    }

    /// The spec of a network already built.
    pub fn of(model: &OnnxModel) -> Self {
        Self {
            file: model.file().clone(),
            outputs: model.output_dim(),
        }
    }

    /// The network on `device` in `dtype`, its parameters at the file's values.
    pub fn build(&self, device: &Device, dtype: DType) -> Result<OnnxModel, ModelError> {
        Ok(OnnxModel::new(self.file.clone(), device, dtype)?)
    }

    /// The values per sample the graph reads.
    pub fn input_dim(&self) -> usize {
        self.file.input_dim()
    }

    /// Checks that the graph reads `d` values per sample (`what` says where `d` comes
    /// from): an error naming the file, the graph input and both shapes.
    pub fn check_input_dim(&self, d: usize, what: &str) -> Result<(), ModelError> {
        let program = &self.file.loaded.program;
        if d == self.input_dim() {
            return Ok(());
        }
        Err(ntk_onnx::OnnxError::InputShape {
            path: self.file.path.clone(),
            input: program.input.clone(),
            shape: program.sample_dims.clone(),
            expected: self.input_dim(),
            got: d,
            data: what.to_string(),
        }
        .into())
    }

    /// `onnx FILE (P parameters)`.
    pub fn describe(&self) -> String {
        format!(
            "onnx {} ({} parameters)",
            ntk_files::shown::controls_escaped(&self.file.path.display().to_string()),
            self.file.parameters()
        )
    }
}

/// An ONNX network's tensors under the file's initializer names (what
/// `torch.onnx.export` writes: the module's `state_dict` names) with the file's shapes, so
/// that its weights after training load into the PyTorch module it was exported from.
impl crate::export::Named for OnnxModel {
    fn tensors(&self) -> Vec<crate::export::NamedTensor> {
        let initial = &self.file().loaded.params;
        self.param_names()
            .iter()
            .zip(initial)
            .zip(&self.params)
            .map(|((name, init), p)| {
                (
                    name.clone(),
                    init.dims.clone(),
                    crate::export::values(&p.val()),
                )
            })
            .collect()
    }

    fn with_tensors(mut self, get: crate::export::Get<'_>) -> Result<Self, ModelError> {
        let file = self.file().clone();
        let params = std::mem::take(&mut self.params);
        self.params = params
            .into_iter()
            .zip(file.loaded.param_names.iter().zip(&file.loaded.params))
            .map(|(p, (name, init))| {
                let values = get(name, &init.dims)?;
                let n = values.len();
                Ok(p.map(|t| crate::export::like(&t, values, [n])))
            })
            .collect::<Result<_, ModelError>>()?;
        Ok(self)
    }

    fn config_json(&self) -> String {
        let file = self.file();
        format!(
            "{{\"onnx\": {{\"file\": {:?}, \"digest\": {:?}}}}}",
            file.path.display().to_string(),
            file.digest
        )
    }
}
