//! IDX files (MNIST, Fashion-MNIST), plain or gzipped, through the loaders' own file
//! readers (which read or inflate at most what the header promises), as images and as
//! labels, and through the in-memory parsers.
#![no_main]
use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use ntk_data::idx;

/// One scratch file per fuzzing process.
fn scratch() -> &'static PathBuf {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| std::env::temp_dir().join(format!("ntk-fuzz-idx-{}", std::process::id())))
}

fuzz_target!(|data: &[u8]| {
    let path = scratch();
    std::fs::write(path, data).expect("the scratch file is writable");
    let _ = idx::read_images(path);
    let _ = idx::read_labels(path, 10);
    let _ = idx::parse_images(path, data.to_vec());
    let _ = idx::parse_labels(path, data.to_vec(), 10);
});
