//! Shared set-up of the training tests: the digits smoke config, the CPU device.

#![allow(dead_code)]

use ntk_numerics::backend::{self, Compute, Precision};
use ntk_train::config::TrainConfig;
use ntk_train::metrics::EpochMetrics;
use ntk_train::progress::Reporter;
use ntk_train::train::{self, Data, RunOptions, TrainSummary};

/// Held by each test of the one test binary while it runs (`tests/train/main.rs`): tests
/// run one at a time, so that an in-process training has the rayon pool and the BLAS
/// threads to itself and two runs compare bit for bit. A test that panicked leaves the
/// lock usable.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

pub fn digits_config() -> TrainConfig {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../configs/train_digits_smoke.toml"
    ))
    .unwrap();
    TrainConfig::parse(&text).unwrap()
}

pub fn cpu() -> Compute {
    backend::select(Some("flex"), Precision::F32).unwrap()
}

pub fn data(cfg: &TrainConfig) -> Data {
    train::load_data(&cfg.data, cfg.train.test_n).unwrap()
}

pub fn run(cfg: &TrainConfig, dir: &std::path::Path, opts: RunOptions) -> TrainSummary {
    train::train(cfg, &data(cfg), &cpu(), dir, opts, &Reporter::silent()).unwrap()
}

/// The error a run of `cfg` in `dir` must end with.
pub fn run_err(cfg: &TrainConfig, dir: &std::path::Path, opts: RunOptions) -> String {
    train::train(cfg, &data(cfg), &cpu(), dir, opts, &Reporter::silent())
        .unwrap_err()
        .to_string()
}

/// The numbers of a row that must not depend on an interruption (timings may).
pub fn numbers(r: &EpochMetrics) -> (usize, usize, u64, u64, Option<u64>, Option<u64>, u64) {
    (
        r.epoch,
        r.iteration,
        r.train_loss.to_bits(),
        r.train_accuracy.to_bits(),
        r.test_loss.map(f64::to_bits),
        r.test_accuracy.map(f64::to_bits),
        r.lr.to_bits(),
    )
}
