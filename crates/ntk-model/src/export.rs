//! Weights as safetensors under the names of the matching PyTorch module, so that
//! `safetensors.torch.load_file` and `load_state_dict` take them (and the other way):
//! - an MLP as a `layers` list of `nn.Linear`s: `layers.{i}.weight` with shape `[out, in]`
//!   (0-based, input layer first), `layers.{i}.bias` when the network has biases, and its
//!   normalization layers as `batch_norms.{l}` (`nn.BatchNorm1d`: `weight`, `bias`,
//!   `running_mean`, `running_var`) or `layer_norms.{l}` (`nn.LayerNorm`: `weight`, `bias`);
//! - a CIFAR ResNet as the project's PyTorch peer (`experiments/train_bench/
//!   pytorch_resnet_step.py`) names it: `stem.weight`, `stem_bn.*`, `stem_bias`,
//!   `blocks.{i}.conv1.weight`, `blocks.{i}.bn1.*`, Fixup's `blocks.{i}.bias1a` ... `scale`,
//!   `head_bias`, `classifier.weight` (`[classes, features]`) and `classifier.bias`
//!   ([`crate::resnet::export`]). Buffers PyTorch derives (`num_batches_tracked`, the
//!   NormReLU convolutions' border `gain`) are not written: load with `strict=False`; a file
//!   that holds them (a PyTorch `state_dict` saved whole) loads, they are passed over.
//!
//! - a network read from an ONNX file under its initializers' names (`crate::onnx`).
//!
//! [`Named`] is what a network implements to take part; [`save`] and [`load`] write and read
//! any of them. Loading checks both ways: every tensor of the network must be in the file
//! with its shape, and every tensor of the file must be one the network uses (a file of
//! another architecture is refused, naming the tensors it would leave unread).

use std::collections::HashMap;
use std::path::Path;

use burn::module::Param;
use burn::tensor::{Tensor, TensorData};
use safetensors::tensor::{Dtype, SafeTensors, TensorView};

use crate::error::ModelError;
use crate::mlp::Mlp;
use ntk_files::io::atomic_write;

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

/// A tensor under its export name: `(name, shape as PyTorch holds it, row-major values)`.
pub type NamedTensor = (String, Vec<usize>, Vec<f64>);

/// Where a loader takes each tensor from: `get(name, shape)` gives its row-major values or
/// the error naming what is wrong.
pub type Get<'a> = &'a mut dyn FnMut(&str, &[usize]) -> Result<Vec<f64>, ModelError>;

/// A network whose tensors have PyTorch names.
pub trait Named: Sized {
    /// Every parameter and running statistic under its name.
    fn tensors(&self) -> Vec<NamedTensor>;
    /// The same network with every tensor replaced by `get(name, shape)`.
    fn with_tensors(self, get: Get<'_>) -> Result<Self, ModelError>;
    /// The config, as JSON, for the file's metadata (`ntk_model_config`).
    fn config_json(&self) -> String;
    /// The names of the buffers the matching PyTorch module holds that this network derives
    /// instead of loading (BatchNorm's `num_batches_tracked`, the NormReLU convolutions'
    /// border `gain`): never written, and passed over when a file holds them (a PyTorch
    /// `state_dict` saved whole). Every other tensor of a file must be one the network uses.
    fn derived(&self) -> Vec<String> {
        Vec::new()
    }
}

impl Named for Mlp {
    fn tensors(&self) -> Vec<NamedTensor> {
        named_tensors(self)
    }
    fn with_tensors(self, get: Get<'_>) -> Result<Self, ModelError> {
        mlp_with_tensors(self, get)
    }
    fn config_json(&self) -> String {
        serde_json::to_string(self.config()).expect("config serializes")
    }
    fn derived(&self) -> Vec<String> {
        (0..self.batch_norms.len())
            .map(|l| format!("batch_norms.{l}.num_batches_tracked"))
            .collect()
    }
}

impl Named for crate::Net {
    fn tensors(&self) -> Vec<NamedTensor> {
        match self {
            Self::Mlp(m) => m.tensors(),
            Self::ResNet(r) => r.tensors(),
            Self::Onnx(o) => o.tensors(),
        }
    }
    fn with_tensors(self, get: Get<'_>) -> Result<Self, ModelError> {
        Ok(match self {
            Self::Mlp(m) => Self::Mlp(m.with_tensors(get)?),
            Self::ResNet(r) => Self::ResNet(r.with_tensors(get)?),
            Self::Onnx(o) => Self::Onnx(o.with_tensors(get)?),
        })
    }
    fn config_json(&self) -> String {
        match self {
            Self::Mlp(m) => m.config_json(),
            Self::ResNet(r) => r.config_json(),
            Self::Onnx(o) => o.config_json(),
        }
    }
    fn derived(&self) -> Vec<String> {
        match self {
            Self::Mlp(m) => m.derived(),
            Self::ResNet(r) => r.derived(),
            Self::Onnx(o) => o.derived(),
        }
    }
}

/// A tensor of `values` with `dims`, on the device and in the dtype of `like`.
pub(crate) fn like<const S: usize, const D: usize>(
    like: &Tensor<S>,
    values: Vec<f64>,
    dims: [usize; D],
) -> Tensor<D> {
    Tensor::from_data(
        TensorData::new(values, dims),
        (&like.device(), like.dtype()),
    )
}

/// A tensor's row-major values.
pub(crate) fn values<const D: usize>(t: &Tensor<D>) -> Vec<f64> {
    t.clone()
        .try_into_vec_as::<f64>()
        .expect("reading a tensor from the device")
}

/// Writes `net`'s tensors to `path` (atomically), with its config as metadata
/// (`ntk_model_config`, JSON).
pub fn save<N: Named>(net: &N, path: &Path, dtype: ExportDType) -> Result<(), ModelError> {
    write_tensors(net.tensors(), net.config_json(), path, dtype)
}

/// [`save`] for a network whose tensors came from a file (`probe.weights`), not from its
/// seed: the metadata's config records `seed` as null and the given file's SHA-256 as
/// `weights_digest` (eighty-sixth hostile round, N1: it said `"seed":0`, the seed such a run
/// must leave at 0, for tensors that are not the seed-0 draw).
pub fn save_given<N: Named>(
    net: &N,
    path: &Path,
    dtype: ExportDType,
    weights_digest: &str,
) -> Result<(), ModelError> {
    let mut config: serde_json::Value =
        serde_json::from_str(&net.config_json()).expect("the config's own JSON");
    if let Some(fields) = config.as_object_mut() {
        if fields.contains_key("seed") {
            fields.insert("seed".into(), serde_json::Value::Null);
        }
        fields.insert("weights_digest".into(), weights_digest.into());
    }
    write_tensors(net.tensors(), config.to_string(), path, dtype)
}

/// Loads weights saved by [`save`] (or by PyTorch under the same names) into `net`, a
/// network of the same architecture, checking every name and shape: every tensor the network
/// has must be in the file with its shape, and every tensor of the file must be one the
/// network uses (or a buffer it derives, [`Named::derived`]); a file of another architecture
/// (biases into a network without, a normalization's tensors into a network without it,
/// another ResNet variant's) is refused, naming the tensors it would leave unused.
pub fn load<N: Named>(net: N, path: &Path) -> Result<N, ModelError> {
    let p = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| ModelError::Io {
        path: p.clone(),
        source,
    })?;
    load_bytes(net, &bytes, &p)
}

/// The keys of the config a weights file records (its `ntk_model_config` metadata, as
/// [`save`] writes it) whose values differ from `net`'s, as (key, the file's, the network's),
/// `seed` left out (a file's weights replace the seeded draw). Empty for a file that records
/// no config (PyTorch's) or whose header cannot be read (the load says why); a recorded
/// config that is no JSON object is `Err` with why, so that the user is told the check did
/// not run (hundred-and-thirty-third hostile round, second review, N1: `"{not json"` passed
/// without a word). Names and shapes are checked by [`load_bytes`]; an activation, a
/// convention or a parameterization is not in them (hundred-and-first hostile round, N3: a
/// ReLU^2 network's weights given to a ReLU config went without a word).
pub fn config_differences<N: Named>(
    net: &N,
    bytes: &[u8],
) -> Result<Vec<(String, String, String)>, String> {
    let Ok((_, metadata)) = SafeTensors::read_metadata(bytes) else {
        return Ok(Vec::new());
    };
    let Some(text) = metadata
        .metadata()
        .as_ref()
        .and_then(|m| m.get("ntk_model_config"))
    else {
        return Ok(Vec::new());
    };
    let file = match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(file)) => file,
        Ok(other) => {
            // The value shortened, not the reason (hundred-and-thirty-ninth hostile round,
            // N1: the caller's cut at 120 characters ended the key list at "outpu").
            let text = other.to_string();
            let shown: String = text.chars().take(60).collect();
            let more = if shown.len() < text.len() { " ..." } else { "" };
            return Err(format!("it is JSON but no object: {shown}{more}"));
        }
        Err(e) => return Err(format!("it is no JSON: {e}")),
    };
    let Ok(serde_json::Value::Object(ours)) =
        serde_json::from_str::<serde_json::Value>(&net.config_json())
    else {
        return Ok(Vec::new());
    };
    // A key the file does not record is not compared: said as such, and a record of none of
    // them is no record (hundred-and-thirty-sixth hostile round, N4: `{}` and `{"model": 5}`
    // passed without a word, and a record without `activation` named only the convention).
    let compared: Vec<(&String, &serde_json::Value)> = ours
        .iter()
        .filter(|(key, _)| key.as_str() != "seed")
        .collect();
    if !compared.iter().any(|(key, _)| file.contains_key(*key)) {
        let keys: Vec<&str> = compared.iter().map(|(k, _)| k.as_str()).collect();
        return Err(format!(
            "it records none of the network's config keys ({})",
            keys.join(", ")
        ));
    }
    Ok(compared
        .into_iter()
        .filter_map(|(key, value)| match file.get(key) {
            None => Some((key.clone(), "(not recorded)".into(), value.to_string())),
            Some(theirs) if theirs != value => {
                Some((key.clone(), theirs.to_string(), value.to_string()))
            }
            Some(_) => None,
        })
        .collect())
}

/// The row-major index `i` of a tensor of `shape`, as numpy writes it (`[2, 0]`).
pub fn unravel(mut i: usize, shape: &[usize]) -> Vec<usize> {
    let mut at = vec![0; shape.len()];
    for (a, &d) in at.iter_mut().zip(shape).rev() {
        *a = i % d.max(1);
        i /= d.max(1);
    }
    at
}

/// The first entry of `net`'s tensors that is not finite, in words: "tensor
/// `layers.0.weight` (shape [5, 16]) holds inf at index [0, 3]".
pub fn first_non_finite<N: Named>(net: &N) -> Option<String> {
    net.tensors().into_iter().find_map(|(name, shape, values)| {
        let i = values.iter().position(|v| !v.is_finite())?;
        Some(format!(
            "tensor `{name}` (shape {shape:?}) holds {} at index {:?}",
            values[i],
            unravel(i, &shape)
        ))
    })
}

/// The largest magnitude among `net`'s tensors.
pub fn largest_magnitude<N: Named>(net: &N) -> f64 {
    net.tensors()
        .iter()
        .flat_map(|t| t.2.iter())
        .fold(0.0f64, |m, v| m.max(v.abs()))
}

/// How many of the tensors a file holds beyond the network's a refusal names (then a count).
const NAMED_UNUSED: usize = 5;

/// The first tensor of a safetensors file's header whose data type, shape and offsets do not
/// agree, in words, where the safetensors reader's own error names none (hundred-and-
/// fortieth hostile round, second review, N3: "invalid shape, data type, or offset for
/// tensor"); `None` where the header cannot be read as one or every tensor agrees.
pub fn header_culprit(bytes: &[u8]) -> Option<String> {
    culprit(bytes, true)
}

/// [`header_culprit`] of the data types, shapes and offsets' lengths alone, not where the
/// offsets lie in the data (a caller that checks their order names gaps and overlaps).
pub fn size_culprit(bytes: &[u8]) -> Option<String> {
    culprit(bytes, false)
}

/// [`header_culprit`], the offsets held to the data's length where `bounds`.
fn culprit(bytes: &[u8], bounds: bool) -> Option<String> {
    let n = usize::try_from(u64::from_le_bytes(bytes.get(..8)?.try_into().ok()?)).ok()?;
    let end = 8usize.checked_add(n)?;
    let header: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(bytes.get(8..end)?).ok()?;
    let data = bytes.len() - end;
    for (name, info) in header.iter().filter(|(k, _)| *k != "__metadata__") {
        let dtype = info.get("dtype")?.as_str()?;
        let size: usize = match dtype {
            "F64" | "I64" | "U64" => 8,
            "F32" | "I32" | "U32" => 4,
            "F16" | "BF16" | "I16" | "U16" => 2,
            "I8" | "U8" | "BOOL" | "F8_E4M3" | "F8_E5M2" => 1,
            _ => {
                return Some(format!(
                    "tensor `{name}` has the data type {dtype:?}, which safetensors does not \
                     define"
                ));
            }
        };
        let shape = match usizes((name, info), ("shape", "shape"))? {
            Ok(v) => v,
            Err(why) => return Some(why),
        };
        let offsets = match usizes((name, info), ("data_offsets", "data offsets"))? {
            Ok(v) => v,
            Err(why) => return Some(why),
        };
        let [begin, stop] = offsets[..] else {
            return Some(format!(
                "tensor `{name}` has {} data offsets {offsets:?}, where a tensor has two (its \
                 first byte and the byte after its last)",
                offsets.len()
            ));
        };
        let need = shape.iter().try_fold(size, |acc, &d| acc.checked_mul(d));
        if stop < begin && !bounds {
            continue; // said by the caller that orders the offsets
        }
        if stop < begin || (bounds && stop > data) || need != Some(stop - begin) {
            // An overflowing size said in words (hundred-and-forty-second hostile round, N2:
            // "take more than any file holds bytes").
            let take = need.map_or_else(
                || "more bytes than any file holds".to_string(),
                |b| format!("{b} bytes"),
            );
            return Some(format!(
                "tensor `{name}` ({dtype}, shape {shape:?}) has the data offsets [{begin}, \
                 {stop}] of a data section of {data} bytes, where its data type and shape \
                 take {take}"
            ));
        }
    }
    None
}

/// The list of non-negative integers at `key` (said as `words`) of the header entry `info`
/// of tensor `name`: `None` where the entry holds no list there, `Err` naming a list whose
/// entries are not all such integers (hundred-and-forty-second hostile round, N3: a negative
/// offset was said as the safetensors crate's "invalid JSON", naming no tensor).
fn usizes(
    (name, info): (&str, &serde_json::Value),
    (key, words): (&str, &str),
) -> Option<Result<Vec<usize>, String>> {
    let value = info.get(key)?;
    let Some(list) = value.as_array() else {
        return Some(Err(format!(
            "tensor `{name}` has the {words} {value}, which is not a list"
        )));
    };
    let values: Option<Vec<usize>> = list
        .iter()
        .map(|v| v.as_u64().and_then(|d| usize::try_from(d).ok()))
        .collect();
    Some(values.ok_or_else(|| {
        format!(
            "tensor `{name}` has the {words} {}, which are not all non-negative integers \
             within a file's size",
            serde_json::Value::Array(list.clone())
        )
    }))
}

/// [`load`] from the file's bytes; `name` is the file, for messages.
pub fn load_bytes<N: Named>(net: N, bytes: &[u8], name: &str) -> Result<N, ModelError> {
    let p = name.to_string();
    let st = SafeTensors::deserialize(bytes).map_err(|e| ModelError::Weights {
        path: p.clone(),
        reason: match header_culprit(bytes) {
            Some(culprit) => format!("not a safetensors file ({e}): {culprit}"),
            None => format!("not a safetensors file: {e}"),
        },
    })?;
    let mut used = std::collections::HashSet::new();
    used.extend(net.derived());
    let mut fetch = |name: &str, shape: &[usize]| -> Result<Vec<f64>, ModelError> {
        used.insert(name.to_string());
        let view = st.tensor(name).map_err(|_| ModelError::Weights {
            path: p.clone(),
            reason: format!(
                "missing tensor `{name}`{}",
                near_spellings(&st.names(), name)
            ),
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
    let net = net.with_tensors(&mut fetch)?;
    let mut unused: Vec<&str> = st
        .names()
        .into_iter()
        .filter(|n| !used.contains(*n))
        .collect();
    if unused.is_empty() {
        return Ok(net);
    }
    unused.sort_by_cached_key(|n| natural(n));
    let named: Vec<String> = unused
        .iter()
        .take(NAMED_UNUSED)
        .map(|n| format!("`{n}`"))
        .collect();
    let more = match unused.len().saturating_sub(NAMED_UNUSED) {
        0 => String::new(),
        k => format!(" and {k} more"),
    };
    Err(ModelError::Weights {
        path: p,
        reason: format!(
            "holds {} tensor(s) the network does not use: {}{more}; the weights of another \
             architecture (biases, a normalization, another variant), which this network \
             would leave unread: give the file of this network, or the config it was saved \
             from",
            unused.len(),
            named.join(", ")
        ),
    })
}

/// The file's tensors whose names differ from the missing `name` only in case, spaces or
/// punctuation (`layers.2.weight ` for `layers.2.weight`), as the refusal's hint: the likely
/// cause, which would otherwise be named only after it as unused (eighty-first hostile
/// round, N2). Empty where there is none.
fn near_spellings(names: &[&str], name: &str) -> String {
    let key = |n: &str| -> String {
        n.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect()
    };
    let want = key(name);
    let mut near: Vec<String> = names
        .iter()
        .filter(|n| **n != name && key(n) == want)
        .map(|n| format!("{n:?}"))
        .collect();
    near.sort();
    match near.is_empty() {
        true => String::new(),
        false => format!(" (the file has {}, spelled otherwise)", near.join(", ")),
    }
}

/// A tensor name as a key that orders its numbers by value (`layers.2.bias` before
/// `layers.10.bias`).
fn natural(name: &str) -> Vec<(String, u64)> {
    name.split('.')
        .map(|part| match part.parse::<u64>() {
            Ok(k) => (String::new(), k),
            Err(_) => (part.to_string(), 0),
        })
        .collect()
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
    for (l, bn) in mlp.batch_norms.iter().enumerate() {
        out.extend(batch_norm_tensors(&format!("batch_norms.{l}"), bn));
    }
    for (l, ln) in mlp.layer_norms.iter().enumerate() {
        let gamma = values(&ln.gamma.val());
        out.push((format!("layer_norms.{l}.weight"), vec![gamma.len()], gamma));
        if let Some(b) = &ln.beta {
            let beta = values(&b.val());
            out.push((format!("layer_norms.{l}.bias"), vec![beta.len()], beta));
        }
    }
    out
}

/// A BatchNorm's tensors under `nn.BatchNorm`'s names.
pub(crate) fn batch_norm_tensors(prefix: &str, bn: &burn::nn::BatchNorm) -> Vec<NamedTensor> {
    [
        ("weight", values(&bn.gamma.val())),
        ("bias", values(&bn.beta.val())),
        ("running_mean", values(&bn.running_mean.value())),
        ("running_var", values(&bn.running_var.value())),
    ]
    .into_iter()
    .map(|(n, v)| (format!("{prefix}.{n}"), vec![v.len()], v))
    .collect()
}

/// `bn` with its tensors from `get` under `nn.BatchNorm`'s names.
pub(crate) fn batch_norm_with(
    mut bn: burn::nn::BatchNorm,
    prefix: &str,
    get: Get<'_>,
) -> Result<burn::nn::BatchNorm, ModelError> {
    let [c] = bn.gamma.val().dims();
    let mut one = |n: &str| get(&format!("{prefix}.{n}"), &[c]);
    let (w, b, m, v) = (
        one("weight")?,
        one("bias")?,
        one("running_mean")?,
        one("running_var")?,
    );
    let t = bn.gamma.val();
    bn.gamma = Param::from_tensor(like(&t, w, [c]));
    bn.beta = Param::from_tensor(like(&t, b, [c]));
    bn.running_mean = burn::module::RunningState::new(like(&t, m, [c]));
    bn.running_var = burn::module::RunningState::new(like(&t, v, [c]));
    Ok(bn)
}

/// Writes the MLP's weights to `path` (atomically), with the model config as metadata
/// (`ntk_model_config`, JSON): [`save`] for an MLP.
pub fn save_safetensors(mlp: &Mlp, path: &Path, dtype: ExportDType) -> Result<(), ModelError> {
    save(mlp, path, dtype)
}

/// Serializes `tensors` with `config` as metadata to `path`, atomically.
fn write_tensors(
    tensors: Vec<NamedTensor>,
    config: String,
    path: &Path,
    dtype: ExportDType,
) -> Result<(), ModelError> {
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
    let metadata = HashMap::from([("ntk_model_config".to_string(), config)]);
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
/// MLP of the same architecture, checking every name and shape: [`load`] for an MLP.
pub fn load_safetensors(mlp: Mlp, path: &Path) -> Result<Mlp, ModelError> {
    load(mlp, path)
}

/// [`load_safetensors`] from the file's bytes; `name` is the file, for messages.
pub fn load_safetensors_bytes(mlp: Mlp, bytes: &[u8], name: &str) -> Result<Mlp, ModelError> {
    load_bytes(mlp, bytes, name)
}

/// `mlp` with its tensors from `get` (the names of [`named_tensors`]).
fn mlp_with_tensors(mut mlp: Mlp, get: Get<'_>) -> Result<Mlp, ModelError> {
    for i in 0..mlp.layers.len() {
        let weight = mlp.layers[i].weight.val();
        let [fan_in, fan_out] = weight.dims();
        let w = get(&format!("layers.{i}.weight"), &[fan_out, fan_in])?;
        let w = crate::init::transpose(&w, fan_out, fan_in);
        mlp.layers[i].weight = Param::from_tensor(like(&weight, w, [fan_in, fan_out]));
        if mlp.layers[i].bias.is_some() {
            let b = get(&format!("layers.{i}.bias"), &[fan_out])?;
            mlp.layers[i].bias = Some(Param::from_tensor(like(&weight, b, [fan_out])));
        }
    }
    let bns = std::mem::take(&mut mlp.batch_norms);
    mlp.batch_norms = bns
        .into_iter()
        .enumerate()
        .map(|(l, bn)| batch_norm_with(bn, &format!("batch_norms.{l}"), get))
        .collect::<Result<_, _>>()?;
    for (l, ln) in mlp.layer_norms.iter_mut().enumerate() {
        let g = ln.gamma.val();
        let [c] = g.dims();
        ln.gamma = Param::from_tensor(like(
            &g,
            get(&format!("layer_norms.{l}.weight"), &[c])?,
            [c],
        ));
        if ln.beta.is_some() {
            let b = get(&format!("layer_norms.{l}.bias"), &[c])?;
            ln.beta = Some(Param::from_tensor(like(&g, b, [c])));
        }
    }
    Ok(mlp)
}

#[cfg(test)]
mod tests {

    /// A safetensors file of one header and `data` bytes of data.
    fn safetensors_with(header: &str, data: usize) -> Vec<u8> {
        let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
        bytes.extend_from_slice(header.as_bytes());
        bytes.resize(bytes.len() + data, 0);
        bytes
    }

    /// A header's negative offset or shape is named with its tensor (hundred-and-forty-second
    /// hostile round, N3: the safetensors crate's "invalid JSON"), and a size that overflows
    /// is said in words (its N2).
    #[test]
    fn a_header_that_is_no_tensor_is_named() {
        let negative = safetensors_with(
            r#"{"w":{"dtype":"F64","shape":[2],"data_offsets":[-8,8]}}"#,
            16,
        );
        for culprit in [header_culprit(&negative), size_culprit(&negative)] {
            assert_eq!(
                culprit.as_deref(),
                Some(
                    "tensor `w` has the data offsets [-8,8], which are not all non-negative \
                     integers within a file's size"
                )
            );
        }
        let shape = safetensors_with(
            r#"{"w":{"dtype":"F64","shape":[-2],"data_offsets":[0,16]}}"#,
            16,
        );
        assert!(
            header_culprit(&shape).is_some_and(|c| c.contains("has the shape [-2]")),
            "{:?}",
            header_culprit(&shape)
        );
        for (header, said) in [
            (
                r#"{"w":{"dtype":"F64","shape":null,"data_offsets":[0,16]}}"#,
                "has the shape null, which is not a list",
            ),
            (
                r#"{"w":{"dtype":"F64","shape":[2],"data_offsets":[0,8,16]}}"#,
                "has 3 data offsets [0, 8, 16], where a tensor has two",
            ),
        ] {
            let bytes = safetensors_with(header, 16);
            assert!(
                header_culprit(&bytes).is_some_and(|c| c.contains(said)),
                "{:?}",
                header_culprit(&bytes)
            );
        }
        let huge = safetensors_with(
            r#"{"w":{"dtype":"F64","shape":[1099511627776,1099511627776],"data_offsets":[0,16]}}"#,
            16,
        );
        assert!(
            header_culprit(&huge)
                .is_some_and(|c| c.contains("take more bytes than any file holds")),
            "{:?}",
            header_culprit(&huge)
        );
    }
    use super::*;
    use crate::{ActivationKind, MlpConfig};

    /// A recorded config is compared key by key: a key it does not record is said as such,
    /// and a record of none of the network's keys is no record, said as one that cannot be
    /// compared (hundred-and-thirty-sixth hostile round, N4: `{}` and `{"model": 5}` passed
    /// without a word, and a record without `activation` named only the convention).
    #[test]
    fn a_record_without_the_compared_keys_is_said() {
        let mlp = Mlp::new(
            &MlpConfig::new(3, 4, 1, ActivationKind::Relu),
            &burn::tensor::Device::flex(),
            burn::tensor::DType::F64,
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.safetensors");
        let differences = |config: String| {
            write_tensors(mlp.tensors(), config, &path, ExportDType::F64).unwrap();
            config_differences(&mlp, &std::fs::read(&path).unwrap())
        };
        for none in ["{}", r#"{"model": 5}"#] {
            let why = differences(none.into()).unwrap_err();
            assert!(
                why.contains("records none of the network's config keys")
                    && why.contains("output_dim")
                    && why.ends_with("width)"),
                "{why}"
            );
        }
        // A tensor whose data type does not fit its bytes is named (hundred-and-fortieth
        // hostile round, second review, N3).
        write_tensors(mlp.tensors(), mlp.config_json(), &path, ExportDType::F64).unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        let at = bytes.windows(5).position(|w| w == b"\"F64\"").unwrap();
        bytes[at + 2..at + 4].copy_from_slice(b"16");
        let e = load_bytes(mlp.clone(), &bytes, "w.safetensors")
            .unwrap_err()
            .to_string();
        assert!(e.contains("tensor `") && e.contains("(F16, shape"), "{e}");
        // A value that is no object is shortened, the reason is not (hundred-and-thirty-
        // ninth hostile round, N1).
        let why = differences(format!("[{}]", "1, ".repeat(100) + "1")).unwrap_err();
        assert!(why.starts_with("it is JSON but no object: [1,1,") && why.ends_with(" ..."));
        assert!(why.len() < 100, "{why}");
        let mut recorded: serde_json::Value = serde_json::from_str(&mlp.config_json()).unwrap();
        recorded.as_object_mut().unwrap().remove("activation");
        let said = differences(recorded.to_string()).unwrap();
        assert_eq!(said.len(), 1, "{said:?}");
        assert_eq!(
            (said[0].0.as_str(), said[0].1.as_str()),
            ("activation", "(not recorded)")
        );
        assert!(differences(mlp.config_json()).unwrap().is_empty());
    }
}
