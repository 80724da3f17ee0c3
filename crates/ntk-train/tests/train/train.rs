//! One run: it learns, its tables have the documented columns, it resumes bit for bit, it
//! records divergence and keeps the last good state.

use crate::common::{digits_config, numbers, run, run_err};
use ntk_numerics::backend::Precision;
use ntk_train::config::EngineChoice;
use ntk_train::metrics::{EpochMetrics, METRICS_COLUMNS, NtkRow, read_csv};
use ntk_train::schedule::ScheduleKind;
use ntk_train::train::RunOptions;
use ntk_train::train::RunStatus;

#[test]
fn tiny_digits_run_learns_and_writes_metrics() {
    let _serial = crate::common::serial();
    let mut cfg = digits_config();
    cfg.data.n = 500;
    cfg.train.epochs = Some(5);
    let dir = tempfile::tempdir().unwrap();
    let s = run(&cfg, dir.path(), RunOptions::default());
    assert_eq!(s.status, RunStatus::Finished);
    assert_eq!(s.epochs_completed, 5);
    let mut reader = csv::Reader::from_path(dir.path().join("metrics.csv")).unwrap();
    let headers: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(headers, METRICS_COLUMNS);
    let rows: Vec<EpochMetrics> = reader.deserialize().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 5);
    assert_eq!(rows[4].iteration, 5 * 10);
    // Chance is ln 10 = 2.30 and 10% accuracy; the loss must fall far below both the
    // first epoch's and chance.
    assert!(rows[4].train_loss < 0.5 * rows[0].train_loss, "{rows:?}");
    assert!(rows[4].train_loss < 0.25 * 10f64.ln(), "{rows:?}");
    assert!(rows[4].train_accuracy > 0.9, "{rows:?}");
    for f in ["config.toml", "summary.json", "checkpoint.json"] {
        assert!(dir.path().join(f).exists(), "{f}");
    }
}

#[test]
fn a_resumed_run_equals_an_uninterrupted_one_bit_for_bit() {
    let _serial = crate::common::serial();
    for engine in [EngineChoice::Host, EngineChoice::Burn] {
        resumed_equals_uninterrupted(engine, Precision::F32);
    }
    // In f64, with the Burn engine's own optimizer (twenty-eighth hostile round, D1), the
    // momentum buffers come back bit for bit too.
    resumed_equals_uninterrupted(EngineChoice::Burn, Precision::F64);
}

fn resumed_equals_uninterrupted(engine: EngineChoice, precision: Precision) {
    let mut cfg = digits_config();
    cfg.train.engine = engine;
    cfg.train.precision = precision;
    cfg.data.n = 400;
    cfg.train.epochs = Some(5);
    cfg.train.batch_size = 64; // a partial last batch
    cfg.optim.lr = 0.2;
    cfg.optim.momentum = 0.9; // the optimizer's state must come back too
    cfg.optim.weight_decay = 1e-4;
    cfg.schedule.kind = ScheduleKind::Cosine;
    cfg.ntk = Some(ntk_train::config::NtkTrackConfig {
        every: 2,
        n: 20,
        output: Default::default(),
        precision: None,
        batch_norm_statistics: None,
    });
    let whole = tempfile::tempdir().unwrap();
    let a = run(&cfg, whole.path(), RunOptions::default());
    let split = tempfile::tempdir().unwrap();
    let first = run(
        &cfg,
        split.path(),
        RunOptions {
            resume: false,
            stop_after: Some(2),
        },
    );
    assert_eq!(first.status, RunStatus::Interrupted);
    assert!(!split.path().join("summary.json").exists());
    // The checkpoint of epoch 2 was made before that epoch's NTK (issue 66 item 6: Ctrl-C
    // while the NTK measures keeps the epoch): its table ends at epoch 0. Mimic an
    // interruption during that measurement: the run's ntk.csv without epoch 2's row; the
    // resumed run measures it, on the checkpoint's model, to the same bits.
    let ck = ntk_train::checkpoint::find(split.path()).unwrap().unwrap();
    assert_eq!(ck.pointer.epoch, 2);
    assert_eq!(
        ck.tracked.ntk.iter().map(|r| r.epoch).collect::<Vec<_>>(),
        [0]
    );
    let ntk_path = split.path().join("ntk.csv");
    let mut rows: Vec<NtkRow> = read_csv(&ntk_path).unwrap();
    assert_eq!(rows.iter().map(|r| r.epoch).collect::<Vec<_>>(), [0, 2]);
    rows.pop();
    ntk_train::metrics::write_csv(&ntk_path, &rows).unwrap();
    // Without --resume the directory is refused, not overwritten.
    let err = run_err(&cfg, split.path(), RunOptions::default());
    assert!(err.contains("--resume"), "{err}");
    let b = run(
        &cfg,
        split.path(),
        RunOptions {
            resume: true,
            stop_after: None,
        },
    );
    assert_eq!(b.status, RunStatus::Finished);
    let ra: Vec<EpochMetrics> = read_csv(&whole.path().join("metrics.csv")).unwrap();
    let rb: Vec<EpochMetrics> = read_csv(&split.path().join("metrics.csv")).unwrap();
    assert_eq!(ra.len(), 5);
    assert_eq!(
        ra.iter().map(numbers).collect::<Vec<_>>(),
        rb.iter().map(numbers).collect::<Vec<_>>()
    );
    let ka: Vec<NtkRow> = read_csv(&whole.path().join("ntk.csv")).unwrap();
    let kb: Vec<NtkRow> = read_csv(&split.path().join("ntk.csv")).unwrap();
    let kappas = |k: &[NtkRow]| {
        k.iter()
            .map(|r| (r.epoch, r.lambda_min.to_bits(), r.lambda_max.to_bits()))
            .collect::<Vec<_>>()
    };
    assert_eq!(kappas(&ka), kappas(&kb));
    assert_eq!(ka.iter().map(|r| r.epoch).collect::<Vec<_>>(), [0, 2, 4, 5]);
    assert_eq!(
        a.final_train_loss.map(f64::to_bits),
        b.final_train_loss.map(f64::to_bits)
    );
    // A different config in the same directory is refused.
    let mut other = cfg.clone();
    other.optim.lr = 0.3;
    let err = resume_error(&other, split.path());
    assert!(
        err.contains("different config") && err.contains("optim.lr: ") && err.contains(" -> 0.3"),
        "{err}"
    );
}

/// The error of `--resume` on `dir` with `cfg`.
fn resume_error(cfg: &ntk_train::config::TrainConfig, dir: &std::path::Path) -> String {
    let opts = RunOptions {
        resume: true,
        stop_after: None,
    };
    run_err(cfg, dir, opts)
}

/// Both engines. Burn's f32 cross-entropy overflows to NaN in the first epoch at the absurd
/// rate; the host engine's log-softmax (f64, max-shifted) stays finite while the weights do
/// (the network dies: loss ln 10) and reports the divergence when they overflow, later.
#[test]
fn divergence_is_recorded_and_the_last_good_state_kept() {
    let _serial = crate::common::serial();
    for engine in [EngineChoice::Burn, EngineChoice::Host] {
        let mut cfg = digits_config();
        cfg.data.n = 200;
        cfg.train.epochs = Some(8);
        cfg.train.engine = engine;
        cfg.train.checkpoint_every = 100; // only the divergence writes a checkpoint
        // A step schedule that jumps to an absurd rate after two good epochs.
        cfg.schedule.kind = ScheduleKind::Step;
        cfg.schedule.step_size = Some(2);
        cfg.schedule.gamma = 1e30;
        let dir = tempfile::tempdir().unwrap();
        let s = run(&cfg, dir.path(), RunOptions::default());
        assert!(s.diverged, "{engine:?}: {s:?}");
        assert_eq!(s.status, RunStatus::Diverged);
        assert!(s.epochs_completed >= 2, "{engine:?}: {s:?}");
        assert_eq!(s.diverged_epoch, Some(s.epochs_completed + 1));
        if engine == EngineChoice::Burn {
            assert_eq!(s.diverged_epoch, Some(3));
        }
        let json: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("summary.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(json["status"], "diverged");
        let ck = ntk_train::checkpoint::find(dir.path()).unwrap().unwrap();
        assert_eq!(
            ck.pointer.epoch, s.epochs_completed,
            "the last good epoch is kept"
        );
        let rows: Vec<EpochMetrics> = read_csv(&dir.path().join("metrics.csv")).unwrap();
        assert!(rows.iter().all(|r| r.train_loss.is_finite()));
    }
}

/// A checkpoint of one engine is not resumed by the other (the optimizer state differs in
/// form), and the error says how to resume it.
#[test]
fn a_checkpoint_resumes_only_with_its_engine() {
    let _serial = crate::common::serial();
    let mut cfg = digits_config();
    cfg.data.n = 100;
    cfg.train.epochs = Some(3);
    cfg.optim.momentum = 0.5;
    let dir = tempfile::tempdir().unwrap();
    let opts = RunOptions {
        resume: false,
        stop_after: Some(1),
    };
    assert_eq!(run(&cfg, dir.path(), opts).status, RunStatus::Interrupted);
    let ck = ntk_train::checkpoint::find(dir.path()).unwrap().unwrap();
    assert_eq!(ck.pointer.engine, ntk_engine::StateForm::Host);
    assert!(ck.dir.join("velocity.npy").exists());
    // The engine is not part of the run's identity (who computes, not what): the checkpoint's
    // form refuses Burn's engine and names the one that resumes it, which then does.
    cfg.train.engine = EngineChoice::Burn;
    let err = resume_error(&cfg, dir.path());
    assert!(
        err.contains("written by the host engine") && err.contains("train.engine = \"host\""),
        "{err}"
    );
    cfg.train.engine = EngineChoice::Host;
    let opts = RunOptions {
        resume: true,
        stop_after: None,
    };
    let s = run(&cfg, dir.path(), opts);
    assert_eq!((s.status, s.epochs_completed), (RunStatus::Finished, 3));
}

/// `--resume` of a run whose epoch checkpoints are there but whose checkpoint.json is gone
/// (the fourth hostile review's D9): refused, naming the pointer, and the checkpoints kept;
/// it used to start over and delete them.
#[test]
fn a_resume_without_the_checkpoint_pointer_keeps_the_checkpoints() {
    let _serial = crate::common::serial();
    let mut cfg = digits_config();
    cfg.data.n = 100;
    cfg.train.epochs = Some(3);
    let dir = tempfile::tempdir().unwrap();
    let opts = RunOptions {
        resume: false,
        stop_after: Some(2),
    };
    assert_eq!(run(&cfg, dir.path(), opts).status, RunStatus::Interrupted);
    let checkpoints = || {
        std::fs::read_dir(dir.path().join("checkpoints"))
            .unwrap()
            .count()
    };
    let before = checkpoints();
    assert!(before > 0);
    std::fs::remove_file(dir.path().join("checkpoint.json")).unwrap();
    let err = resume_error(&cfg, dir.path());
    assert!(
        err.contains("no checkpoint.json") && err.contains("checkpoints/"),
        "{err}"
    );
    assert_eq!(checkpoints(), before, "the checkpoints are kept");
}

/// Fewer outputs than the data set has classes: a clear error naming the key, before any
/// step (both engines would otherwise index past the logits).
#[test]
fn too_few_outputs_for_the_labels_is_an_error() {
    let _serial = crate::common::serial();
    let mut cfg = digits_config();
    cfg.data.n = 100;
    if let Some(m) = cfg.model.as_mut() {
        m.output_dim = 5;
    }
    let dir = tempfile::tempdir().unwrap();
    let err = run_err(&cfg, dir.path(), RunOptions::default());
    assert!(
        err.contains("model.output_dim = 5") && err.contains("labels up to 9"),
        "{err}"
    );
}
