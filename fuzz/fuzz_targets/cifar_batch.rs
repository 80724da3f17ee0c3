//! CIFAR-10 binary batch files (3073-byte records: a label, then the 3x32x32 pixels).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = ntk_data::cifar::parse_cifar10_batch(std::path::Path::new("data_batch_1.bin"), data);
});
