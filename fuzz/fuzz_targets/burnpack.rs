//! A checkpoint's `model.bpk` (Burn's burnpack record), read and loaded into the network
//! it belongs to, as a resume does (the seed is a real checkpoint of this network).
#![no_main]
use burn::tensor::{DType, Device};
use libfuzzer_sys::fuzz_target;
use ntk_model::NetSpec;
use ntk_model::{ActivationKind, MlpConfig};

fuzz_target!(|data: &[u8]| {
    let mut cfg = MlpConfig::new(64, 8, 1, ActivationKind::Relu);
    cfg.output_dim = 10;
    let model = NetSpec::Mlp(cfg)
        .build(64, &Device::flex(), DType::F32)
        .expect("a valid model");
    // As `checkpoint::Loaded::load_model` loads it: every recorded dtype checked first.
    let _ = ntk_train::checkpoint::load_model_bytes(
        model,
        data.to_vec(),
        std::path::Path::new("model.bpk"),
    );
});
