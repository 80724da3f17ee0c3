//! A checkpoint's `model.bpk` (Burn's burnpack record), read and loaded into the network
//! it belongs to, as a resume does (the seed is a real checkpoint of this network).
#![no_main]
use burn::module::Module;
use burn::store::ModuleRecord;
use burn::tensor::{Bytes, DType, Device};
use libfuzzer_sys::fuzz_target;
use ntk_model::{ActivationKind, MlpConfig};
use ntk_model::NetSpec;

fuzz_target!(|data: &[u8]| {
    let Ok(record) = ModuleRecord::from_bytes(Bytes::from_bytes_vec(data.to_vec())) else {
        return;
    };
    let mut cfg = MlpConfig::new(64, 8, 1, ActivationKind::Relu);
    cfg.output_dim = 10;
    let model = NetSpec::Mlp(cfg)
        .build(64, &Device::flex(), DType::F32)
        .expect("a valid model");
    // As `checkpoint::Loaded::load_model` loads it: in the network's own dtype.
    let _ = model.try_load_record(record.cast_to_module_dtype());
});
