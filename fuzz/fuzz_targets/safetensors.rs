//! `weights.safetensors` loaded into an MLP of the saved architecture.
#![no_main]
use burn::tensor::{DType, Device};
use libfuzzer_sys::fuzz_target;
use ntk_model::{ActivationKind, Mlp, MlpConfig};

fuzz_target!(|data: &[u8]| {
    let cfg = MlpConfig::new(3, 4, 1, ActivationKind::Relu);
    let mlp = Mlp::new(&cfg, &Device::flex(), DType::F32).expect("a valid model");
    let _ = ntk_model::export::load_safetensors_bytes(mlp, data, "weights.safetensors");
});
