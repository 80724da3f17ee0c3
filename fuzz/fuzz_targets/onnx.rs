//! An ONNX file (`ntk-probe onnx`'s `[onnx] file`): parsed by onnx-ir, its operators
//! checked, its graph resolved and run once on a zero sample, as `OnnxModel::load` does.
#![no_main]
use burn::tensor::{DType, Device};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = std::path::Path::new("net.onnx");
    let _ = ntk_onnx::OnnxModel::load_bytes(path, data, &Device::flex(), DType::F32);
});
