//! Training on the user's files (`data.dataset = "file"`): the 8x8 digits written out as
//! .npy and CSV train bit for bit as the built-in digits do, with the same data digest; a
//! held-out file is evaluated; a file set without labels is refused before any work.

use std::path::Path;

use crate::common::{digits_config, numbers, run};
use ntk_data::Dataset;
use ntk_train::config::TrainConfig;
use ntk_train::metrics::{EpochMetrics, read_csv};
use ntk_train::train::{self, RunOptions, RunStatus};

/// The digits as the built-in loader gives them (scaled to [-1, 1]): all 1797 rows.
fn digits_rows() -> ntk_data::Inputs {
    let mut cfg = digits_config();
    cfg.data.n = 1797;
    ntk_data::inputs::load(&cfg.data).unwrap()
}

/// `cfg` reading rows `0..1500` of the digits from files in `dir`, rows `1500..` as the
/// held-out set.
fn file_config(dir: &Path, csv: bool) -> TrainConfig {
    let all = digits_rows();
    let (train, test) = (1500, all.n - 1500);
    let x = &all.x[..train * all.d];
    let tx = &all.x[train * all.d..];
    let (y, ty) = all.labels.split_at(train);
    let mut cfg = digits_config();
    cfg.data.dataset = Dataset::File;
    cfg.data.scaling = None;
    if csv {
        let rows = |x: &[f64]| {
            x.chunks(all.d)
                .map(|r| {
                    r.iter()
                        .map(|v| format!("{v:?}"))
                        .collect::<Vec<_>>()
                        .join(",")
                })
                .collect::<Vec<_>>()
                .join("\n")
        };
        let labels = |y: &[u8]| y.iter().map(u8::to_string).collect::<Vec<_>>().join("\n");
        std::fs::write(dir.join("x.csv"), rows(x)).unwrap();
        std::fs::write(dir.join("y.csv"), labels(y)).unwrap();
        std::fs::write(dir.join("tx.csv"), rows(tx)).unwrap();
        std::fs::write(dir.join("ty.csv"), labels(ty)).unwrap();
        cfg.data.x = Some(dir.join("x.csv"));
        cfg.data.labels = Some(dir.join("y.csv"));
        cfg.data.test_x = Some(dir.join("tx.csv"));
        cfg.data.test_labels = Some(dir.join("ty.csv"));
    } else {
        let npy = |name: &str, bytes: Vec<u8>| std::fs::write(dir.join(name), bytes).unwrap();
        let d = all.d as u64;
        npy(
            "x.npy",
            ntk_files::npy::to_bytes(x, &[train as u64, d]).unwrap(),
        );
        npy(
            "y.npy",
            ntk_files::npy::to_bytes(y, &[train as u64]).unwrap(),
        );
        npy(
            "tx.npy",
            ntk_files::npy::to_bytes(tx, &[test as u64, d]).unwrap(),
        );
        npy(
            "ty.npy",
            ntk_files::npy::to_bytes(ty, &[test as u64]).unwrap(),
        );
        cfg.data.x = Some(dir.join("x.npy"));
        cfg.data.labels = Some(dir.join("y.npy"));
        cfg.data.test_x = Some(dir.join("tx.npy"));
        cfg.data.test_labels = Some(dir.join("ty.npy"));
    }
    cfg.train.epochs = Some(3);
    cfg.validate().unwrap();
    cfg
}

fn rows(dir: &Path) -> Vec<EpochMetrics> {
    read_csv(&dir.join("metrics.csv")).unwrap()
}

#[test]
fn digits_from_files_train_as_the_built_in_digits_do() {
    let _serial = crate::common::serial();
    let mut builtin = digits_config();
    builtin.train.epochs = Some(3);
    let a = tempfile::tempdir().unwrap();
    run(&builtin, a.path(), RunOptions::default());
    let reference: Vec<_> = rows(a.path()).iter().map(numbers).collect();
    let digest = train::load_data(&builtin.data, 0)
        .unwrap()
        .digest()
        .to_string();
    for csv in [false, true] {
        let files = tempfile::tempdir().unwrap();
        let mut cfg = file_config(files.path(), csv);
        // Without a test set the run is the built-in one, bit for bit, on the same digest.
        cfg.train.test_n = 0;
        let data = train::load_data(&cfg.data, 0).unwrap();
        assert_eq!(data.digest(), digest, "csv {csv}");
        let b = tempfile::tempdir().unwrap();
        run(&cfg, b.path(), RunOptions::default());
        let got: Vec<_> = rows(b.path()).iter().map(numbers).collect();
        assert_eq!(got, reference, "csv {csv}");
        let summary = std::fs::read_to_string(b.path().join("summary.json")).unwrap();
        assert!(
            summary.contains(&digest),
            "the provenance records the digest"
        );
    }
}

#[test]
fn the_held_out_file_is_evaluated() {
    let _serial = crate::common::serial();
    let files = tempfile::tempdir().unwrap();
    let mut cfg = file_config(files.path(), false);
    // The default test_n (10000) takes all 297 held-out rows.
    cfg.train.test_n = 10000;
    let data = train::load_data(&cfg.data, cfg.train.test_n).unwrap();
    assert_eq!(data.test.as_ref().map(|t| t.n), Some(297));
    let out = tempfile::tempdir().unwrap();
    let s = run(&cfg, out.path(), RunOptions::default());
    assert_eq!(s.status, RunStatus::Finished);
    let acc = s.final_test_accuracy.expect("a test accuracy");
    assert!(acc > 0.8, "held-out accuracy {acc}");
    // test_n below the file's rows takes the first ones.
    let data = train::load_data(&cfg.data, 100).unwrap();
    assert_eq!(data.test.as_ref().map(|t| t.n), Some(100));
}

#[test]
fn a_file_set_needs_labels_to_train_and_is_checked_at_load() {
    let _serial = crate::common::serial();
    let files = tempfile::tempdir().unwrap();
    let mut cfg = file_config(files.path(), false);
    cfg.data.labels = None;
    cfg.data.scaling = Some(ntk_data::Scaling::MinusOneOne);
    cfg.model.as_mut().unwrap().output_dim = 3;
    let e = cfg.validate().unwrap_err().to_string();
    for want in [
        "data.labels: training needs a label",
        "data.scaling: a file's values are used as they are",
    ] {
        assert!(e.contains(want), "missing {want:?} in {e}");
    }
    // The one output that the labels' classes would have replaced is no second problem.
    cfg.model.as_mut().unwrap().output_dim = 1;
    let e = cfg.validate().unwrap_err().to_string();
    assert!(
        e.contains("data.labels") && !e.contains("model.output_dim"),
        "{e}"
    );
    // Labels beyond the network's outputs are refused before the first step.
    let mut cfg = file_config(files.path(), false);
    cfg.model.as_mut().unwrap().output_dim = 3;
    let out = tempfile::tempdir().unwrap();
    let e = crate::common::run_err(&cfg, out.path(), RunOptions::default());
    assert!(
        e.contains("model.output_dim = 3") && e.contains("labels up to 9"),
        "{e}"
    );
}

/// The third review's training cases (issue 29): an input beyond f32's range in an f32 run
/// is refused (it trained to NaN with status finished); a held-out label beyond the outputs
/// names the held-out set; an explicit default `ntk.batch_norm_statistics = "running"` is the
/// config of a run made without it (a finished run stays finished, not stale).
#[test]
fn third_review_training_cases() {
    let _serial = crate::common::serial();
    let files = tempfile::tempdir().unwrap();
    let mut cfg = file_config(files.path(), false);
    cfg.train.test_n = 10000;
    let (mut x, shape) = ntk_files::npy::read(files.path().join("x.npy").as_path()).unwrap();
    x[70] = 1e39;
    std::fs::write(
        files.path().join("big.npy"),
        ntk_files::npy::to_bytes(&x, &shape).unwrap(),
    )
    .unwrap();
    let mut big = cfg.clone();
    big.data.x = Some(files.path().join("big.npy"));
    let out = tempfile::tempdir().unwrap();
    let e = crate::common::run_err(&big, out.path(), RunOptions::default());
    assert!(
        e.contains("row 1 (counted from 0, as numpy indexes them), column 6")
            && e.contains("beyond f32's range"),
        "{e}"
    );
    // A held-out label 9 with 9 outputs: the message names the held-out file.
    let mut nine = cfg.clone();
    nine.model.as_mut().unwrap().output_dim = 9;
    let data = train::load_data(&nine.data, nine.train.test_n).unwrap();
    let top_train = data.train.labels.iter().max().copied().unwrap();
    let top_test = data
        .test
        .as_ref()
        .unwrap()
        .labels
        .iter()
        .max()
        .copied()
        .unwrap();
    if top_test > top_train || top_train == 9 {
        let e = crate::common::run_err(&nine, out.path(), RunOptions::default());
        let culprit = if top_train == 9 { "x.npy" } else { "tx.npy" };
        assert!(e.contains(culprit) && e.contains("labels up to 9"), "{e}");
    }
    // The explicit default.
    let mut bn = cfg.clone();
    bn.model.as_mut().unwrap().normalization = ntk_model::Normalization::BatchNorm;
    bn.ntk = Some(ntk_train::config::NtkTrackConfig {
        every: 1,
        n: 10,
        output: Default::default(),
        precision: None,
        batch_norm_statistics: None,
    });
    bn.train.epochs = Some(1);
    let dir = tempfile::tempdir().unwrap();
    run(&bn, dir.path(), RunOptions::default());
    bn.ntk.as_mut().unwrap().batch_norm_statistics =
        Some(ntk_kernel::batch_norm::BnStatistics::Running);
    let resume = RunOptions {
        resume: true,
        stop_after: None,
    };
    let again = run(&bn, dir.path(), resume);
    assert_eq!(again.status, RunStatus::Finished);
}

/// `model.output_dim` left out: the trainer gives the network one output per class of the
/// data (10 for the digits; for files one more than the largest label of either label
/// file), where the network library's default is one output. A value the config gives is
/// kept, and the dry run and the run agree.
#[test]
fn output_dim_left_out_is_the_datas_class_count() {
    let _serial = crate::common::serial();
    let without = |text: &str| {
        text.lines()
            .filter(|l| !l.starts_with("output_dim"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let text = toml::to_string(&digits_config()).unwrap();
    assert!(text.contains("output_dim = 10"), "{text}");
    let cfg = TrainConfig::parse(&without(&text)).unwrap();
    assert_eq!(cfg.model.as_ref().unwrap().output_dim, 10);
    let given = TrainConfig::parse(&text.replace("output_dim = 10", "output_dim = 12")).unwrap();
    assert_eq!(given.model.as_ref().unwrap().output_dim, 12);

    // Files whose labels are 0..=3 in training and up to 4 held out: five outputs.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let x: Vec<f64> = (0..40).map(|i| f64::from(i % 7) / 7.0).collect();
    let y: Vec<u8> = (0..10).map(|i| (i % 4) as u8).collect();
    let ty: Vec<u8> = vec![4, 0];
    let npy = |name: &str, bytes: Vec<u8>| std::fs::write(d.join(name), bytes).unwrap();
    npy("x.npy", ntk_files::npy::to_bytes(&x, &[10, 4]).unwrap());
    npy("y.npy", ntk_files::npy::to_bytes(&y, &[10]).unwrap());
    npy(
        "tx.npy",
        ntk_files::npy::to_bytes(&x[..8], &[2, 4]).unwrap(),
    );
    npy("ty.npy", ntk_files::npy::to_bytes(&ty, &[2]).unwrap());
    let files = format!(
        "[data]\ndataset = \"file\"\nn = 10\nx = \"{0}/x.npy\"\nlabels = \"{0}/y.npy\"\n\
         test_x = \"{0}/tx.npy\"\ntest_labels = \"{0}/ty.npy\"\n\n[model]\nwidth = 8\n\
         depth = 1\nactivation = \"relu\"\n\n[optim]\nlr = 0.1\n\n[train]\nbatch_size = 5\n\
         epochs = 1\ntest_n = 2\n",
        d.display()
    );
    let path = d.join("files.toml");
    std::fs::write(&path, &files).unwrap();
    let cfg = TrainConfig::load(&path).unwrap();
    assert_eq!(cfg.model.as_ref().unwrap().output_dim, 5);
    // The binary: the dry run passes, the run trains and records the resolved value.
    let bin = env!("CARGO_BIN_EXE_ntk-train");
    let out = d.join("out");
    for extra in [&["--dry-run"][..], &[]] {
        let o = std::process::Command::new(bin)
            .args([
                "--config".as_ref(),
                path.as_os_str(),
                "--out".as_ref(),
                out.as_os_str(),
            ])
            .args(extra)
            .env_remove("NTK_MAX_MEMORY")
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{extra:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let recorded = std::fs::read_to_string(out.join("config.toml")).unwrap();
    assert!(recorded.contains("output_dim = 5"), "{recorded}");
    // `--set model.output_dim=` removes a given value, which then comes from the data.
    let explicit = d.join("explicit.toml");
    std::fs::write(
        &explicit,
        files.replace("[model]\n", "[model]\noutput_dim = 7\n"),
    )
    .unwrap();
    let o = std::process::Command::new(bin)
        .args([
            "--config".as_ref(),
            explicit.as_os_str(),
            "--dry-run".as_ref(),
        ])
        .args(["--out".as_ref(), d.join("e").as_os_str()])
        .args(["--set", "model.output_dim="])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        TrainConfig::load(&explicit)
            .unwrap()
            .model
            .unwrap()
            .output_dim
            == 7,
        "a given value is kept"
    );
}
