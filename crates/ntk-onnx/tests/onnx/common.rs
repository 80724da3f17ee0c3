//! Fixtures and the NTK of an ONNX file through `ntk_kernel::api::empirical_ntk`.

use std::path::{Path, PathBuf};

use burn::tensor::{Tensor, TensorData};
use ntk_kernel::api::empirical_ntk;
use ntk_numerics::backend::{self, Precision};
use ntk_numerics::kernel::OutputMode;
use ntk_onnx::OnnxModel;

/// The models experiments/onnx/torch_reference.py writes, each with its inputs and
/// torch.func's NTK.
pub const MODELS: &[&str] = &[
    "mlp_relu",
    "mlp_tanh",
    "mlp_gelu",
    "resnet_small",
    "mixed",
    "mlp_gelu_op",
];

/// The committed fixtures (tests/fixtures).
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A `.npy` file's shape and f64 values.
pub fn read_npy(path: &Path) -> (Vec<usize>, Vec<f64>) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
    let shape = npy.shape().iter().map(|&d| d as usize).collect();
    (shape, npy.into_vec::<f64>().unwrap())
}

/// The NTK (`sum` over outputs) of `dir/NAME.onnx` on `dir/NAME_x.npy` in `precision`,
/// and the number of samples.
pub fn onnx_ntk(dir: &Path, name: &str, precision: Precision) -> (usize, Vec<f64>) {
    let compute = backend::select(Some("flex"), precision).unwrap();
    let device = &compute.device;
    let model =
        OnnxModel::load(&dir.join(format!("{name}.onnx")), device, compute.dtype()).unwrap();
    let (shape, x) = read_npy(&dir.join(format!("{name}_x.npy")));
    let (n, d) = (shape[0], shape[1]);
    assert_eq!(d, model.input_dim());
    let x = Tensor::<2>::from_data(TensorData::new(x, [n, d]), (device, compute.dtype()));
    let k = empirical_ntk(
        &model,
        |m: &OnnxModel, x| m.forward(x),
        x,
        OutputMode::Sum,
        precision,
    );
    assert_eq!(k.size, n);
    (n, k.data)
}

/// The largest absolute difference and the largest relative to the kernel's largest entry.
pub fn differences(ours: &[f64], reference: &[f64]) -> (f64, f64) {
    assert_eq!(ours.len(), reference.len());
    let scale = reference.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let abs = ours
        .iter()
        .zip(reference)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    (abs, abs / scale)
}
