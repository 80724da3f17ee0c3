//! `metrics.csv` and `ntk.csv` of a run, as a resume and `collect` read them back.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ntk_train::metrics::{EpochMetrics, NtkRow, parse_csv};

fuzz_target!(|data: &[u8]| {
    let _ = parse_csv::<EpochMetrics>(data, "metrics.csv");
    let _ = parse_csv::<NtkRow>(data, "ntk.csv");
});
