//! A tiny run on the 8x8 digits learns: the training loss falls and accuracy rises.

use ntk_probe::backend::{self, Precision};
use ntk_train::config::TrainConfig;

#[test]
fn tiny_digits_run_learns_and_writes_metrics() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../configs/train_digits_smoke.toml"
    ))
    .unwrap();
    let mut cfg: TrainConfig = toml::from_str(&text).unwrap();
    cfg.data.n = 500;
    cfg.train.epochs = 5;
    let dir = tempfile::tempdir().unwrap();
    let compute = backend::select(Some("flex"), Precision::F32).unwrap();
    let s = ntk_train::train::train(&cfg, &compute, dir.path()).unwrap();
    assert!(!s.diverged);
    assert_eq!(s.epochs_completed, 5);
    let mut reader = csv::Reader::from_path(dir.path().join("metrics.csv")).unwrap();
    let headers: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(
        headers,
        [
            "epoch",
            "train_loss",
            "train_accuracy",
            "test_loss",
            "test_accuracy",
            "lr",
            "seconds",
            "samples_per_second"
        ]
    );
    let rows: Vec<ntk_train::train::EpochMetrics> =
        reader.deserialize().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 5);
    // Cross-entropy of 10 classes starts near ln 10 = 2.30 and must fall well below it.
    assert!(rows[0].train_loss < 3.0);
    assert!(rows[4].train_loss < 0.5 * rows[0].train_loss, "{rows:?}");
    assert!(rows[4].train_accuracy > 0.8, "{rows:?}");
}

#[test]
fn a_huge_learning_rate_is_recorded_as_diverged() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../configs/train_digits_smoke.toml"
    ))
    .unwrap();
    let mut cfg: TrainConfig = toml::from_str(&text).unwrap();
    cfg.data.n = 200;
    cfg.train.epochs = 3;
    cfg.train.lr = 1e30;
    let dir = tempfile::tempdir().unwrap();
    let compute = backend::select(Some("flex"), Precision::F32).unwrap();
    let s = ntk_train::train::train(&cfg, &compute, dir.path()).unwrap();
    assert!(s.diverged, "{s:?}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("summary.json")).unwrap())
            .unwrap();
    assert_eq!(json["diverged"], true);
}
