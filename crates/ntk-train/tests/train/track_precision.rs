//! `ntk.precision`: the tracked NTK in f64 by default on the CPU (the kernel of the f32
//! parameters in f64 arithmetic), f32 when asked; the resolved precision is in the
//! provenance, so a run tracked in one precision is never reused for the other.

use crate::common::{digits_config, run};
use ntk_numerics::backend::Precision;
use ntk_train::metrics::{NtkRow, read_csv};
use ntk_train::train::RunOptions;

fn tracked(precision: Option<Precision>) -> (Vec<NtkRow>, serde_json::Value) {
    let mut cfg = digits_config();
    cfg.data.n = 300;
    cfg.train.epochs = Some(2);
    cfg.ntk = Some(ntk_train::config::NtkTrackConfig {
        every: 1,
        n: 100,
        output: Default::default(),
        precision,
        batch_norm_statistics: None,
    });
    let dir = tempfile::tempdir().unwrap();
    run(&cfg, dir.path(), RunOptions::default());
    let rows = read_csv(&dir.path().join("ntk.csv")).unwrap();
    let summary = std::fs::read_to_string(dir.path().join("summary.json")).unwrap();
    (rows, serde_json::from_str(&summary).unwrap())
}

fn numbers(r: &NtkRow) -> (u64, u64, Option<u64>, bool, usize) {
    (
        r.lambda_min.to_bits(),
        r.lambda_max.to_bits(),
        r.kappa.map(f64::to_bits),
        r.singular,
        r.rank,
    )
}

#[test]
fn the_tracked_kernel_is_f64_on_the_cpu_unless_asked() {
    let _serial = crate::common::serial();
    let (default, s_default) = tracked(None);
    let (f64_rows, _) = tracked(Some(Precision::F64));
    let (f32_rows, s_f32) = tracked(Some(Precision::F32));
    assert_eq!(default.len(), 3, "epochs 0, 1, 2");
    assert_eq!(
        default.iter().map(numbers).collect::<Vec<_>>(),
        f64_rows.iter().map(numbers).collect::<Vec<_>>()
    );
    let precision = |s: &serde_json::Value| s["provenance"]["config"]["ntk.precision"].clone();
    assert_eq!(precision(&s_default), "f64");
    assert_eq!(precision(&s_f32), "f32");
    // The same network's kernel: f32 rounding of sums over ~70k parameters, relative error
    // ~sqrt(P) eps_f32 ~ 3e-5 on the largest eigenvalue; bound 1e-3. The training itself is
    // the same in both runs (tracking reads the network, never writes it).
    for (a, b) in f64_rows.iter().zip(&f32_rows) {
        let rel = (a.lambda_max - b.lambda_max).abs() / a.lambda_max;
        assert!(rel < 1e-3, "epoch {}: {rel:e}", a.epoch);
        assert!(!a.singular && a.kappa.is_some(), "{a:?}");
    }
}

/// With tanh the tracked kappa depends on the inputs' scale: the run's summary says so.
#[test]
fn a_scale_dependent_tracked_kernel_is_flagged_in_the_summary() {
    let _serial = crate::common::serial();
    let mut cfg = digits_config();
    cfg.data.n = 200;
    cfg.train.epochs = Some(1);
    cfg.model.as_mut().unwrap().activation = ntk_model::ActivationKind::Tanh;
    cfg.ntk = Some(ntk_train::config::NtkTrackConfig {
        every: 1,
        n: 50,
        output: Default::default(),
        precision: None,
        batch_norm_statistics: None,
    });
    let dir = tempfile::tempdir().unwrap();
    let s = run(&cfg, dir.path(), RunOptions::default());
    assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
    assert!(s.warnings[0].starts_with("tanh is not positively homogeneous"));
    cfg.model.as_mut().unwrap().activation = ntk_model::ActivationKind::Relu;
    let dir = tempfile::tempdir().unwrap();
    assert!(
        run(&cfg, dir.path(), RunOptions::default())
            .warnings
            .is_empty()
    );
}

/// `ntk.batch_norm_statistics = "batch"` for a BatchNorm MLP: a different kernel (the batch
/// map's), and a training run exactly as with the default: tracking in training mode never
/// touches the network's running statistics (the test accuracy, which reads them, is the
/// same bit for bit).
#[test]
fn batch_statistics_tracking_leaves_the_run_alone() {
    let _serial = crate::common::serial();
    let text = r#"
[data]
dataset = "mnist"
n = 400
subset = "first"

[model]
width = 64
depth = 2
activation = "relu"
normalization = "batch_norm"
output_dim = 10
seed = 3

[optim]
lr = 0.1

[train]
batch_size = 50
epochs = 2
test_n = 200

[ntk]
every = 1
n = 20
"#;
    let mut runs = Vec::new();
    for stats in [None, Some(ntk_kernel::batch_norm::BnStatistics::Batch)] {
        let mut cfg = ntk_train::config::TrainConfig::parse(text).unwrap();
        cfg.ntk.as_mut().unwrap().batch_norm_statistics = stats;
        cfg.validate().unwrap();
        let dir = tempfile::tempdir().unwrap();
        run(&cfg, dir.path(), RunOptions::default());
        let metrics: Vec<ntk_train::metrics::EpochMetrics> =
            read_csv(&dir.path().join("metrics.csv")).unwrap();
        let ntk: Vec<NtkRow> = read_csv(&dir.path().join("ntk.csv")).unwrap();
        runs.push((
            metrics
                .iter()
                .map(crate::common::numbers)
                .collect::<Vec<_>>(),
            ntk,
        ));
    }
    assert_eq!(
        runs[0].0, runs[1].0,
        "training and evaluation are unchanged"
    );
    assert!(
        runs[0].0.iter().all(|r| r.4.is_some()),
        "the test set was evaluated"
    );
    let (a, b) = (&runs[0].1[0], &runs[1].1[0]);
    assert!(
        (a.lambda_max - b.lambda_max).abs() > 1e-6 * a.lambda_max,
        "{a:?} {b:?}"
    );
    // Without BatchNorm the key is refused.
    let plain = text.replace("normalization = \"batch_norm\"\n", "");
    let mut cfg = ntk_train::config::TrainConfig::parse(&plain).unwrap();
    cfg.ntk.as_mut().unwrap().batch_norm_statistics =
        Some(ntk_kernel::batch_norm::BnStatistics::Running);
    let e = cfg.validate().unwrap_err().to_string();
    assert!(
        e.contains("ntk.batch_norm_statistics") && e.contains("only for BatchNorm"),
        "{e}"
    );
}
