//! The ONNX graph as a Burn [`Module`]: its initializers are trainable parameters (what
//! autodiff differentiates, what the NTK sums over), the graph itself is fixed.

use std::path::Path;
use std::sync::Arc;

use burn::module::{Module, Param};
use burn::tensor::{DType, Device, Tensor, TensorData};

use crate::error::{OnnxError, Result};
use crate::file::OnnxFile;
use crate::graph::{Operand, Program};
use crate::interpret;

/// A network read from an ONNX file.
#[derive(Module, Debug)]
pub struct OnnxModel {
    /// The trainable parameters, each flattened (the program reshapes them), in the order
    /// the graph first uses them.
    pub params: Vec<Param<Tensor<1>>>,
    /// The file it was read from: its path, digest, program and initial values.
    #[module(skip)]
    file: Arc<OnnxFile>,
    /// The number of outputs per sample (from the trial run at load).
    #[module(skip)]
    outputs: usize,
}

impl OnnxModel {
    /// Reads `path` and makes its parameters on `device` in `dtype` (f32 or f64: the
    /// file's values cast). The graph is checked whole (every operator supported, one
    /// input of known per-sample shape, one output) and run once on a zero sample, so a
    /// model that loads runs.
    /// The file is read as [`OnnxFile::read`] reads it (a regular file within 2 GiB).
    pub fn load(path: &Path, device: &Device, dtype: DType) -> Result<Self> {
        Self::new(Arc::new(OnnxFile::read(path)?), device, dtype)
    }

    /// [`OnnxModel::load`] of a file's bytes (`path` names it in errors).
    pub fn load_bytes(path: &Path, bytes: &[u8], device: &Device, dtype: DType) -> Result<Self> {
        Self::new(Arc::new(OnnxFile::from_bytes(path, bytes)?), device, dtype)
    }

    /// The network of a file already read, its parameters at the file's values made on
    /// `device` in `dtype`, run once on a zero sample.
    pub fn new(file: Arc<OnnxFile>, device: &Device, dtype: DType) -> Result<Self> {
        check_range(&file, dtype)?;
        let params = file
            .loaded
            .params
            .iter()
            .map(|p| {
                let t = Tensor::<1>::from_data(
                    TensorData::new(p.values.clone(), [p.values.len()]),
                    (device, dtype),
                );
                Param::from_tensor(t)
            })
            .collect();
        let model = Self {
            params,
            file,
            outputs: 0,
        };
        // Two rows: an output of one row for any batch (a graph whose output does not depend
        // on its input) is refused here, not met later as a panic of the forward
        // (hundred-and-thirty-eighth hostile round, second review, D2).
        let probe = Tensor::<2>::zeros([2, model.input_dim()], (device, dtype));
        let [_, outputs] = model.try_forward(probe)?.dims();
        Ok(Self { outputs, ..model })
    }

    /// The file it was read from.
    pub fn file(&self) -> &Arc<OnnxFile> {
        &self.file
    }

    fn program(&self) -> &Program {
        &self.file.loaded.program
    }

    /// The number of values per sample (the product of the graph input's dimensions
    /// after the batch's).
    pub fn input_dim(&self) -> usize {
        self.program().sample_dims.iter().product()
    }

    /// The graph input's dimensions after the batch's (`[3, 32, 32]`, `[5]`).
    pub fn sample_dims(&self) -> &[usize] {
        &self.program().sample_dims
    }

    /// The graph input's name.
    pub fn input_name(&self) -> &str {
        &self.program().input
    }

    /// The number of outputs per sample.
    pub fn output_dim(&self) -> usize {
        self.outputs
    }

    /// Each parameter's initializer name in the file, in [`OnnxModel::params`]' order.
    pub fn param_names(&self) -> &[String] {
        &self.file.loaded.param_names
    }

    /// The number of trainable scalars.
    pub fn num_params_total(&self) -> usize {
        self.params.iter().map(|p| p.val().dims()[0]).sum()
    }

    /// The output `[n, outputs]` for the rows of `x` (`[n, input_dim]`, each row a sample
    /// in the graph input's row-major layout); an error when `x` does not fit.
    pub fn try_forward(&self, x: Tensor<2>) -> Result<Tensor<2>> {
        interpret::run(self.program(), &self.params, x)
    }

    /// [`OnnxModel::try_forward`] for the NTK's and training's forward closures, which
    /// return a tensor.
    ///
    /// # Panics
    ///
    /// When `x`'s width is not [`OnnxModel::input_dim`]: check it first (the probe does,
    /// with an error naming the file and both shapes). Everything else about the graph
    /// was checked by [`OnnxModel::load`]'s trial run.
    pub fn forward(&self, x: Tensor<2>) -> Tensor<2> {
        match self.try_forward(x) {
            Ok(y) => y,
            Err(e) => panic!("{e}"),
        }
    }
}

/// The largest magnitude `dtype` holds, for the float types a network runs in narrower
/// than f64 (None for f64, which holds every value the file's f64 copy does).
fn range_of(dtype: DType) -> Option<(f64, &'static str)> {
    match dtype {
        DType::F64 => None,
        // Values at or beyond 65520 round to infinity in IEEE half precision.
        DType::F16 => Some((65504.0, "f16")),
        DType::BF16 => Some((f64::from(f32::MAX), "bf16")),
        _ => Some((f64::from(f32::MAX), "f32")),
    }
}

/// Refuses a weight or constant that is finite in the file (its values are read as f64, a
/// non-finite one refused there) but beyond `dtype`'s range, naming the tensor, the node
/// that reads it, the index and the value: made in `dtype` it would be infinite, and the
/// network run or trained would not be the file's.
fn check_range(file: &OnnxFile, dtype: DType) -> Result<()> {
    let Some((max, name)) = range_of(dtype) else {
        return Ok(());
    };
    // f32's own rounding: a value just above f32::MAX that rounds down to it is held.
    let holds = |v: f64| match name {
        "f32" | "bf16" => (v as f32).is_finite(),
        _ => v.abs() <= max,
    };
    let loaded = &file.loaded;
    for step in &loaded.program.steps {
        for (slot, operand) in step.inputs.iter().enumerate() {
            let (tensor, values) = match operand {
                Operand::Param { index, .. } => (
                    loaded.param_names[*index].clone(),
                    &loaded.params[*index].values,
                ),
                Operand::Const(t) => (format!("constant input {slot}"), &t.values),
                Operand::Value(_) | Operand::Absent => continue,
            };
            if let Some(at) = values.iter().position(|&v| !holds(v)) {
                return Err(OnnxError::OutOfRange {
                    path: loaded.program.path.clone(),
                    node: step.name.clone(),
                    tensor,
                    index: at,
                    value: values[at],
                    dtype: name,
                });
            }
        }
    }
    Ok(())
}
