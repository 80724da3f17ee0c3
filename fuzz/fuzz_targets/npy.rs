//! `.npy` files (eigenvalues, kernels, the host engine's momentum buffers), as the tools
//! read them back.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = ntk_files::npy::read_bytes(data);
});
