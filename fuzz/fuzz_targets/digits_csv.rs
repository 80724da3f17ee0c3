//! The 8x8 digits file (scikit-learn's `digits.csv.gz`: 64 pixel columns and a label per
//! line), plain or gzipped, through the loader (which caps what it inflates) and the parser.
#![no_main]
use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

/// One scratch directory per fuzzing process, holding `digits.csv`.
fn scratch() -> &'static PathBuf {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("ntk-fuzz-digits-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("the scratch directory can be made");
        dir
    })
}

fuzz_target!(|data: &[u8]| {
    let dir = scratch();
    std::fs::write(dir.join("digits.csv"), data).expect("the scratch file is writable");
    let _ = ntk_data::load_digits(dir);
    let _ = ntk_data::digits::parse_digits(std::path::Path::new("digits.csv"), data);
});
