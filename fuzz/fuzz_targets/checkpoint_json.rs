//! `checkpoint.json`: parsed and checked (its own checksum, its directory, its epoch) as
//! `--resume` does before any checkpoint file is read.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = ntk_train::checkpoint::parse_pointer(text, std::path::Path::new("checkpoint.json"));
    }
});
