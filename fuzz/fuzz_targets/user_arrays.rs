//! The user's data files (`data.dataset = "file"`): the first byte picks the format (.npy,
//! .npz, .csv), the rest is the file, read as inputs and as labels, whole and by header.
#![no_main]
use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use ntk_data::arrays::{self, Role};

/// One scratch directory per fuzzing process.
fn scratch() -> &'static PathBuf {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("ntk-fuzz-arrays-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("the scratch directory can be made");
        dir
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&kind, bytes)) = data.split_first() else {
        return;
    };
    let name = ["x.npy", "x.npz", "x.csv"][usize::from(kind % 3)];
    let path = scratch().join(name);
    std::fs::write(&path, bytes).expect("the scratch file is writable");
    let _ = arrays::read_inputs(&path, Role::X);
    let _ = arrays::peek_inputs(&path, Role::X);
    let _ = arrays::read_labels(&path, Role::Labels);
    let _ = arrays::peek_labels(&path, Role::Labels);
});
