//! Weights as safetensors, named as PyTorch names an `nn.Sequential` of `nn.Linear`s held in
//! a `layers` list: `layers.{i}.weight` with shape `[out, in]` (0-based, input layer first)
//! and `layers.{i}.bias` when the network has biases. A PyTorch user loads them with
//! `safetensors.torch.load_file` into the same architecture.

use std::collections::HashMap;
use std::path::Path;

use burn::module::Param;
use burn::tensor::{DType, Tensor, TensorData};
use safetensors::tensor::{Dtype, SafeTensors, TensorView};

use crate::error::ModelError;
use crate::mlp::Mlp;
use ntk_runs::io::atomic_write;

/// Element type of an export.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportDType {
    F32,
    F64,
}

fn to_bytes(values: &[f64], dtype: ExportDType) -> Vec<u8> {
    match dtype {
        ExportDType::F32 => values
            .iter()
            .flat_map(|v| (*v as f32).to_le_bytes())
            .collect(),
        ExportDType::F64 => values.iter().flat_map(|v| v.to_le_bytes()).collect(),
    }
}

fn from_bytes(view: &TensorView<'_>, path: &str, name: &str) -> Result<Vec<f64>, ModelError> {
    let data = view.data();
    match view.dtype() {
        Dtype::F32 => Ok(data
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64)
            .collect()),
        Dtype::F64 => Ok(data
            .chunks_exact(8)
            .map(|b| f64::from_le_bytes(b.try_into().expect("chunk of 8")))
            .collect()),
        other => Err(ModelError::Weights {
            path: path.to_string(),
            reason: format!("tensor `{name}` has dtype {other:?}; expected F32 or F64"),
        }),
    }
}

/// The tensors of an MLP under their export names, `(name, shape, row-major values)`.
pub fn named_tensors(mlp: &Mlp) -> Vec<(String, Vec<usize>, Vec<f64>)> {
    let mut out = Vec::new();
    for (i, layer) in mlp.layers.iter().enumerate() {
        let (w, shape) = mlp.weight_out_in(i);
        out.push((format!("layers.{i}.weight"), shape.to_vec(), w));
        if let Some(b) = &layer.bias {
            let v = b.val().try_into_vec_as::<f64>().expect("reading bias");
            out.push((format!("layers.{i}.bias"), vec![v.len()], v));
        }
    }
    out
}

/// Writes the MLP's weights to `path` (atomically), with the model config as metadata
/// (`ntk_model_config`, JSON).
pub fn save_safetensors(mlp: &Mlp, path: &Path, dtype: ExportDType) -> Result<(), ModelError> {
    let tensors = named_tensors(mlp);
    let bytes: Vec<(String, Vec<usize>, Vec<u8>)> = tensors
        .into_iter()
        .map(|(n, s, v)| (n, s, to_bytes(&v, dtype)))
        .collect();
    let st_dtype = match dtype {
        ExportDType::F32 => Dtype::F32,
        ExportDType::F64 => Dtype::F64,
    };
    let views = bytes
        .iter()
        .map(|(n, s, b)| {
            TensorView::new(st_dtype, s.clone(), b)
                .map(|v| (n.clone(), v))
                .map_err(|e| ModelError::Weights {
                    path: path.display().to_string(),
                    reason: e.to_string(),
                })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let metadata = HashMap::from([(
        "ntk_model_config".to_string(),
        serde_json::to_string(mlp.config()).expect("config serializes"),
    )]);
    let buffer =
        safetensors::serialize(views, Some(metadata)).map_err(|e| ModelError::Weights {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
    atomic_write(path, &buffer).map_err(|source| ModelError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// Loads weights saved by [`save_safetensors`] (or by PyTorch under the same names) into an
/// MLP of the same architecture, checking every name and shape.
pub fn load_safetensors(mlp: Mlp, path: &Path) -> Result<Mlp, ModelError> {
    let p = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| ModelError::Io {
        path: p.clone(),
        source,
    })?;
    load_safetensors_bytes(mlp, &bytes, &p)
}

/// [`load_safetensors`] from the file's bytes; `name` is the file, for messages.
pub fn load_safetensors_bytes(mut mlp: Mlp, bytes: &[u8], name: &str) -> Result<Mlp, ModelError> {
    let p = name.to_string();
    let st = SafeTensors::deserialize(bytes).map_err(|e| ModelError::Weights {
        path: p.clone(),
        reason: format!("not a safetensors file: {e}"),
    })?;
    let fetch = |name: &str, shape: &[usize]| -> Result<Vec<f64>, ModelError> {
        let view = st.tensor(name).map_err(|_| ModelError::Weights {
            path: p.clone(),
            reason: format!("missing tensor `{name}`"),
        })?;
        if view.shape() != shape {
            return Err(ModelError::Weights {
                path: p.clone(),
                reason: format!(
                    "tensor `{name}` has shape {:?}; the model needs {shape:?}",
                    view.shape()
                ),
            });
        }
        from_bytes(&view, &p, name)
    };
    for i in 0..mlp.layers.len() {
        let weight = mlp.layers[i].weight.val();
        let (device, dtype): (_, DType) = (weight.device(), weight.dtype());
        let [fan_in, fan_out] = weight.dims();
        let w = fetch(&format!("layers.{i}.weight"), &[fan_out, fan_in])?;
        let w = crate::init::transpose(&w, fan_out, fan_in);
        mlp.layers[i].weight = Param::from_tensor(Tensor::from_data(
            TensorData::new(w, [fan_in, fan_out]),
            (&device, dtype),
        ));
        if mlp.layers[i].bias.is_some() {
            let b = fetch(&format!("layers.{i}.bias"), &[fan_out])?;
            mlp.layers[i].bias = Some(Param::from_tensor(Tensor::from_data(
                TensorData::new(b, [fan_out]),
                (&device, dtype),
            )));
        }
    }
    Ok(mlp)
}
