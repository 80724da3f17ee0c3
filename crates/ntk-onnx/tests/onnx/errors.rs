//! What a file the interpreter cannot run is told.

use burn::tensor::DType;
use ntk_numerics::backend::{self, Precision};
use ntk_onnx::{OnnxError, OnnxModel};

use crate::common::fixtures;

#[test]
fn an_unsupported_operator_names_itself_its_node_and_the_supported_list() {
    let compute = backend::select(Some("flex"), Precision::F32).unwrap();
    let path = fixtures().join("unsupported_softmax.onnx");
    let err = OnnxModel::load(&path, &compute.device, DType::F32).unwrap_err();
    let OnnxError::Unsupported { op, node, .. } = &err else {
        panic!("expected Unsupported, got {err:?}");
    };
    assert_eq!((op.as_str(), node.as_str()), ("Softmax", "head/Softmax"));
    let text = err.to_string();
    for part in [
        "unsupported_softmax.onnx",
        "Softmax",
        "head/Softmax",
        "Gemm",
        "Conv",
    ] {
        assert!(text.contains(part), "{text}");
    }
}

#[test]
fn a_file_that_is_not_onnx_and_one_that_is_missing_are_errors() {
    let compute = backend::select(Some("flex"), Precision::F32).unwrap();
    let dir = tempfile_dir();
    let bad = dir.join("bad.onnx");
    std::fs::write(&bad, b"\xff\xff not protobuf").unwrap();
    let err = OnnxModel::load(&bad, &compute.device, DType::F32).unwrap_err();
    assert!(matches!(err, OnnxError::Parse { .. }), "{err:?}");
    assert!(err.to_string().contains("bad.onnx"));
    let err = OnnxModel::load(&dir.join("absent.onnx"), &compute.device, DType::F32).unwrap_err();
    assert!(matches!(err, OnnxError::File { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.starts_with("onnx.file = ") && text.contains("absent.onnx"),
        "{text}"
    );
}

#[test]
fn data_of_the_wrong_width_is_an_error_naming_both_shapes() {
    use burn::tensor::Tensor;
    let compute = backend::select(Some("flex"), Precision::F32).unwrap();
    let model = OnnxModel::load(
        &fixtures().join("resnet_small.onnx"),
        &compute.device,
        DType::F32,
    )
    .unwrap();
    assert_eq!(model.sample_dims(), &[3, 8, 8]);
    let x = Tensor::<2>::zeros([2, 5], (&compute.device, DType::F32));
    let err = model.try_forward(x).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("[3, 8, 8]") && text.contains("192") && text.contains('5'),
        "{text}"
    );
}

fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ntk-onnx-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A NaN weight (fifth hostile round, O15/X21) is named at load with the file, the tensor
/// and the index, not met later as "the kernel has non-finite entries".
#[test]
fn a_non_finite_weight_is_named_at_load() {
    let compute = backend::select(Some("flex"), Precision::F32).unwrap();
    let path = fixtures().join("mlp_relu.onnx");
    let model = OnnxModel::load(&path, &compute.device, DType::F32).unwrap();
    // The first weight's bytes (f32, little-endian, as ONNX stores raw data), made NaN.
    let first: Vec<f32> = model.params[0].val().try_into_vec_as().unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    let needle = first[0].to_le_bytes();
    let at = bytes
        .windows(4)
        .position(|w| w == needle)
        .expect("the first weight's bytes are in the file");
    bytes[at..at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    let dir = tempfile_dir();
    let bad = dir.join("nan_weight.onnx");
    std::fs::write(&bad, &bytes).unwrap();
    let err = OnnxModel::load(&bad, &compute.device, DType::F32).unwrap_err();
    assert!(matches!(err, OnnxError::NonFinite { .. }), "{err:?}");
    let text = err.to_string();
    for part in ["nan_weight.onnx", "NaN", "must be finite"] {
        assert!(text.contains(part), "{text}");
    }
}
