//! `ntk-train` configs: parsed and validated as the binary does, the sweep expanded, and
//! the memory estimate of its first runs.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(cfg) = ntk_train::config::TrainConfig::parse(text) else {
        return;
    };
    if let Ok(points) = ntk_train::sweep::expand(&cfg) {
        for p in points.iter().take(4) {
            let _ = ntk_train::budget::check_memory(&p.cfg, 784, Some("1G"));
        }
    }
});
