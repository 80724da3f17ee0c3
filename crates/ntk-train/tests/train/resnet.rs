//! CIFAR ResNets in the trainer, on generated files in the exact CIFAR-10 binary layout
//! (the real files cannot be fetched on these machines): loading, augmentation, a full
//! epoch of ResNet-20 on the CPU default, checkpoint and resume with BatchNorm's running
//! statistics, divergence, and the message when the files are missing.

use ntk_train::train::RunStatus;
use std::path::Path;

use crate::common::{cpu, numbers};
use ntk_model::{ResNetConfig, ResNetVariant};
use ntk_train::config::TrainConfig;
use ntk_train::metrics::{EpochMetrics, RepresentationRow, read_csv};
use ntk_train::progress::Reporter;
use ntk_train::train::{self, RunOptions};

/// A generated CIFAR-10 directory: `per_file` records in each of the six batch files.
fn generated_cifar(dir: &Path, per_file: usize) {
    ntk_data::cifar::write_cifar_like(dir, per_file, 7).unwrap();
}

fn config(data_dir: &Path, resnet: &str, n: usize, epochs: usize) -> TrainConfig {
    let text = format!(
        r#"
[data]
dataset = "cifar-10"
n = {n}
subset = "first"
scaling = "cifar-per-channel"
dir = "{}"

[resnet]
{resnet}

[optim]
lr = 0.1
momentum = 0.9
weight_decay = 1e-4

[schedule]
kind = "multi_step"
unit = "iteration"
milestones = [3]

[train]
batch_size = 128
epochs = {epochs}
test_n = 64
augment = true
"#,
        data_dir.display()
    );
    TrainConfig::parse(&text).unwrap()
}

fn run(cfg: &TrainConfig, out: &Path, opts: RunOptions) -> train::TrainSummary {
    let data = train::load_data(&cfg.data, cfg.train.test_n).unwrap();
    train::train(cfg, &data, &cpu(), out, opts, &Reporter::silent()).unwrap()
}

#[test]
fn resnet20_trains_a_full_epoch_and_resumes_bit_for_bit() {
    let _serial = crate::common::serial();
    let data = tempfile::tempdir().unwrap();
    generated_cifar(data.path(), 64); // 320 training images, 64 test images
    let mut cfg = config(data.path(), "depth = 20\nvariant = \"batch_norm\"", 256, 2);
    assert_eq!(
        cfg.resnet.as_ref().unwrap(),
        &ResNetConfig::new(20, ResNetVariant::BatchNorm)
    );
    // The representations of 16 test images every epoch: evaluation mode, so they also
    // read BatchNorm's running statistics, which the checkpoint must bring back.
    cfg.representations = Some(ntk_train::config::RepresentationTrackConfig { every: 1, n: 16 });
    let whole = tempfile::tempdir().unwrap();
    let a = run(&cfg, whole.path(), RunOptions::default());
    assert_eq!(a.status, RunStatus::Finished, "{a:?}");
    assert_eq!(a.iterations_completed, 4);
    let split = tempfile::tempdir().unwrap();
    let first = run(
        &cfg,
        split.path(),
        RunOptions {
            resume: false,
            stop_after: Some(1),
        },
    );
    assert_eq!(
        (first.status, first.epochs_completed),
        (RunStatus::Interrupted, 1)
    );
    let b = run(
        &cfg,
        split.path(),
        RunOptions {
            resume: true,
            stop_after: None,
        },
    );
    let ra: Vec<EpochMetrics> = read_csv(&whole.path().join("metrics.csv")).unwrap();
    let rb: Vec<EpochMetrics> = read_csv(&split.path().join("metrics.csv")).unwrap();
    assert_eq!(ra.len(), 2);
    // The multi-step schedule dropped the rate at iteration 3 (epoch 2's second step).
    assert_eq!(ra[1].lr, 0.1);
    assert!(
        ra.iter()
            .all(|r| r.train_loss.is_finite() && r.test_accuracy.is_some())
    );
    // Equal bit for bit: weights, momentum and BatchNorm's running statistics came back.
    assert_eq!(
        ra.iter().map(numbers).collect::<Vec<_>>(),
        rb.iter().map(numbers).collect::<Vec<_>>()
    );
    assert_eq!(
        a.final_test_loss.map(f64::to_bits),
        b.final_test_loss.map(f64::to_bits)
    );
    let rep = |dir: &Path| -> Vec<(usize, usize, String, u64, u64)> {
        let rows: Vec<RepresentationRow> = read_csv(&dir.join("representations.csv")).unwrap();
        rows.into_iter()
            .map(|r| {
                let (c, m) = (r.mean_cosine.to_bits(), r.mean_abs_cosine.to_bits());
                (r.epoch, r.layer, r.name, c, m)
            })
            .collect()
    };
    let (wa, wb) = (rep(whole.path()), rep(split.path()));
    assert_eq!(wa, wb);
    // Epochs 0, 1, 2; each: the input, the stem, 9 blocks, the pooled features.
    assert_eq!(wa.len(), 3 * 12);
    assert_eq!(wa[11].2, "pooled");
}

#[test]
fn a_diverging_fixup_resnet_is_recorded() {
    let _serial = crate::common::serial();
    let data = tempfile::tempdir().unwrap();
    generated_cifar(data.path(), 20);
    let mut cfg = config(
        data.path(),
        "depth = 8\nvariant = \"fixup\"\nbase_width = 4",
        100,
        3,
    );
    cfg.optim.lr = 1e20;
    cfg.optim.momentum = 0.0;
    cfg.train.batch_size = 25;
    cfg.train.test_n = 20;
    let out = tempfile::tempdir().unwrap();
    let s = run(&cfg, out.path(), RunOptions::default());
    assert!(s.diverged, "{s:?}");
    assert_eq!(s.status, RunStatus::Diverged);
}

#[test]
fn without_the_cifar_files_the_error_says_where_to_put_them() {
    let _serial = crate::common::serial();
    let empty = tempfile::tempdir().unwrap();
    let cfg = config(empty.path(), "depth = 20\nvariant = \"batch_norm\"", 100, 1);
    let err = match train::load_data(&cfg.data, cfg.train.test_n) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("loaded CIFAR-10 from an empty directory"),
    };
    assert!(err.contains("data_batch_1.bin"), "{err}");
    assert!(
        err.contains("datasets/README.md") || err.contains("cifar-10-binary"),
        "{err}"
    );
}

#[test]
fn a_resnet_with_mlp_inputs_is_refused_with_the_dimensions() {
    let _serial = crate::common::serial();
    let mut cfg = crate::common::digits_config();
    cfg.model = None;
    cfg.resnet = Some(ResNetConfig::new(20, ResNetVariant::Fixup));
    // The config alone says it (so a dry run refuses it), and so does the run.
    let err = cfg.validate().unwrap_err().to_string();
    assert!(
        err.contains("64 values per sample") && err.contains("3072"),
        "{err}"
    );
    let out = tempfile::tempdir().unwrap();
    let err = crate::common::run_err(&cfg, out.path(), RunOptions::default());
    assert!(
        err.contains("64 values per sample") && err.contains("3072"),
        "{err}"
    );
}
