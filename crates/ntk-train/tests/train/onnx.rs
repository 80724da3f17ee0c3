//! An ONNX network trained by `ntk-train` (`[onnx] file`): it learns; the tracker's NTK at
//! initialization is torch.func's of the same PyTorch model (the fixture ntk-onnx's tests
//! check) and `ntk_kernel::api::empirical_ntk`'s of the loaded file; a killed run resumes
//! bit for bit and a resume whose file changed is refused; the keys and files that do not
//! apply are errors naming them (exit 2).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use burn::tensor::{Tensor, TensorData};
use ntk_kernel::api::{Conditioning, empirical_ntk};
use ntk_numerics::backend::{self, Precision};
use ntk_numerics::kernel::{Kernel, OutputMode};
use ntk_onnx::OnnxModel;
use ntk_train::config::TrainConfig;
use ntk_train::metrics::{EpochMetrics, NtkRow, read_csv};
use ntk_train::train::{RunOptions, RunStatus};

use crate::common::{numbers, run, run_err};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn fixture(name: &str) -> PathBuf {
    root().join("crates/ntk-onnx/tests/fixtures").join(name)
}

/// configs/train_onnx_mlp.toml with its ONNX file at `onnx` (the committed one by
/// default), `extra` TOML appended to its tables' text, parsed as the binary parses it.
fn example(onnx: Option<&Path>, edit: impl Fn(&mut TrainConfig)) -> TrainConfig {
    let text = std::fs::read_to_string(root().join("configs/train_onnx_mlp.toml")).unwrap();
    let committed = root().join("configs/train_onnx_mlp.onnx");
    let file = onnx.unwrap_or(&committed);
    let text = text.replace(
        "\"configs/train_onnx_mlp.onnx\"",
        &format!("{:?}", file.display().to_string()),
    );
    let mut cfg = TrainConfig::parse(&text).unwrap();
    edit(&mut cfg);
    cfg
}

#[test]
fn an_onnx_mlp_trains_its_loss_falls_and_its_file_is_recorded_by_digest() {
    let _serial = crate::common::serial();
    let cfg = example(None, |c| {
        c.data.n = 300;
        c.train.epochs = Some(6);
        c.ntk = None;
    });
    let dir = tempfile::tempdir().unwrap();
    let s = run(&cfg, dir.path(), RunOptions::default());
    assert_eq!(s.status, RunStatus::Finished);
    assert!(s.model.starts_with("onnx "), "{}", s.model);
    let rows: Vec<EpochMetrics> = read_csv(&dir.path().join("metrics.csv")).unwrap();
    assert_eq!(rows.len(), 6);
    // Chance is ln 10 = 2.30 on the ten digits: the first epoch is near it, the last far
    // below it.
    assert!(rows[0].train_loss > 1.5, "{rows:?}");
    assert!(rows[5].train_loss < 0.5 * rows[0].train_loss, "{rows:?}");
    assert!(rows[5].train_accuracy > 0.6, "{rows:?}");
    let bytes = std::fs::read(root().join("configs/train_onnx_mlp.onnx")).unwrap();
    let p = s.provenance.unwrap();
    assert_eq!(
        p.config["onnx.digest"],
        ntk_runs::provenance::sha256_hex(&bytes)
    );
    assert!(!p.config.contains_key("onnx.file"), "{:?}", p.config);
}

/// The conditioning of a kernel, in f64.
fn conditioning(k: &Kernel) -> Conditioning {
    Conditioning::of(k, Precision::F64).unwrap()
}

/// `|a - b| <= tol * scale`.
fn close(what: &str, a: f64, b: f64, tol: f64, scale: f64) {
    assert!((a - b).abs() <= tol * scale, "{what}: {a} against {b}");
}

/// The 5-64-64-1 ReLU MLP of ntk-onnx's fixtures trained on its 16 inputs (labels 0/1 by
/// halves, the square loss on one output, f64), its NTK tracked on all 16 at
/// initialization: the tracker's spectrum is that of torch.func's kernel of the PyTorch
/// model (computed by experiments/onnx/torch_reference.py, float64) and that of
/// `empirical_ntk` of the file loaded anew, to f64 rounding.
#[test]
fn the_tracked_ntk_at_initialization_is_torch_func_s() {
    let _serial = crate::common::serial();
    let dir = tempfile::tempdir().unwrap();
    let labels = dir.path().join("labels.csv");
    let text: String = (0..16).map(|i| format!("{}\n", i / 8)).collect();
    std::fs::write(&labels, format!("label\n{text}")).unwrap();
    let config = format!(
        r#"
[onnx]
file = {onnx:?}
[data]
dataset = "file"
n = 16
x = {x:?}
labels = {labels:?}
[optim]
lr = 0.01
[train]
batch_size = 16
epochs = 1
loss = "mse"
precision = "f64"
[ntk]
every = 1
n = 16
"#,
        onnx = fixture("mlp_relu.onnx").display().to_string(),
        x = fixture("mlp_relu_x.npy").display().to_string(),
        labels = labels.display().to_string(),
    );
    let cfg = TrainConfig::parse(&config).unwrap();
    let out = dir.path().join("run");
    let s = run(&cfg, &out, RunOptions::default());
    assert_eq!(s.status, RunStatus::Finished);
    let rows: Vec<NtkRow> = read_csv(&out.join("ntk.csv")).unwrap();
    let tracked = &rows[0];
    assert_eq!((tracked.epoch, tracked.n), (0, 16));

    // torch.func's kernel of the PyTorch model the file was exported from.
    let (torch, shape) = ntk_files::npy::read(&fixture("mlp_relu_ntk.npy")).unwrap();
    assert_eq!(shape, vec![16, 16]);
    let torch = conditioning(&Kernel {
        data: torch,
        size: 16,
    });
    // The file loaded anew, its kernel by the library call on the same inputs.
    let compute = backend::select(Some("flex"), Precision::F64).unwrap();
    let model =
        OnnxModel::load(&fixture("mlp_relu.onnx"), &compute.device, compute.dtype()).unwrap();
    let (x, _) = ntk_files::npy::read(&fixture("mlp_relu_x.npy")).unwrap();
    let x = Tensor::<2>::from_data(
        TensorData::new(x, [16, 5]),
        (&compute.device, compute.dtype()),
    );
    let library = empirical_ntk(
        &model,
        |m: &OnnxModel, x| m.forward(x),
        x,
        OutputMode::Sum,
        Precision::F64,
    );
    let library = conditioning(&library);
    for (route, c) in [("torch.func", &torch), ("empirical_ntk", &library)] {
        let top = c.lambda_max;
        eprintln!(
            "{route}: lambda_min {:.3e}, lambda_max {:.3e} relative to lambda_max",
            (tracked.lambda_min - c.lambda_min).abs() / top,
            (tracked.lambda_max - c.lambda_max).abs() / top
        );
        close(route, tracked.lambda_max, c.lambda_max, 1e-10, top);
        close(route, tracked.lambda_min, c.lambda_min, 1e-10, top);
        let (ka, kb) = (tracked.kappa.unwrap(), c.kappa.unwrap());
        close(route, ka, kb, 1e-10 * kb, kb);
        let (aa, ab) = (
            tracked.min_grad_angle_deg.unwrap(),
            c.min_grad_angle_deg.unwrap(),
        );
        close(route, aa, ab, 1e-6, 1.0);
    }
}

/// A run killed after epoch 2 (momentum, the NTK tracked every epoch) resumes to the
/// uninterrupted run's bits; its file changed in one weight's last bits, the resume is
/// refused naming `onnx.digest`.
#[test]
fn a_killed_onnx_run_resumes_bit_for_bit_and_not_with_another_file() {
    let _serial = crate::common::serial();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("net.onnx");
    std::fs::copy(root().join("configs/train_onnx_mlp.onnx"), &file).unwrap();
    let cfg = example(Some(&file), |c| {
        c.data.n = 200;
        c.train.epochs = Some(4);
        c.train.batch_size = 64; // a partial last batch
        c.ntk.as_mut().unwrap().n = 20;
    });
    let whole = dir.path().join("whole");
    let a = run(&cfg, &whole, RunOptions::default());
    let split = dir.path().join("split");
    let stopped = RunOptions {
        resume: false,
        stop_after: Some(2),
    };
    assert_eq!(run(&cfg, &split, stopped).status, RunStatus::Interrupted);
    let resume = RunOptions {
        resume: true,
        stop_after: None,
    };
    let b = run(&cfg, &split, resume);
    assert_eq!(b.status, RunStatus::Finished);
    let metrics = |d: &Path| -> Vec<_> {
        let rows: Vec<EpochMetrics> = read_csv(&d.join("metrics.csv")).unwrap();
        rows.iter().map(numbers).collect()
    };
    assert_eq!(metrics(&whole).len(), 4);
    assert_eq!(metrics(&whole), metrics(&split));
    let ntk = |d: &Path| -> Vec<_> {
        let rows: Vec<NtkRow> = read_csv(&d.join("ntk.csv")).unwrap();
        rows.iter()
            .map(|r| (r.epoch, r.lambda_min.to_bits(), r.lambda_max.to_bits()))
            .collect()
    };
    assert_eq!(ntk(&whole).len(), 5);
    assert_eq!(ntk(&whole), ntk(&split));
    assert_eq!(
        a.final_train_loss.map(f64::to_bits),
        b.final_train_loss.map(f64::to_bits)
    );

    // The same path, other bytes: a weight's lowest mantissa bit flipped (the middle of the
    // file lies in the first layer's 8 KB of weights); the file still loads.
    let stopped_again = dir.path().join("again");
    assert_eq!(
        run(&cfg, &stopped_again, stopped).status,
        RunStatus::Interrupted
    );
    let mut bytes = std::fs::read(&file).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 1;
    std::fs::write(&file, &bytes).unwrap();
    let compute = crate::common::cpu();
    OnnxModel::load(&file, &compute.device, compute.dtype()).unwrap();
    let changed = example(Some(&file), |c| {
        c.data.n = 200;
        c.train.epochs = Some(4);
        c.train.batch_size = 64;
        c.ntk.as_mut().unwrap().n = 20;
    });
    let err = run_err(&changed, &stopped_again, resume);
    assert!(err.contains("onnx.digest"), "{err}");
}

/// `ntk-train ARGS...` from the repository root.
fn train(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ntk-train"))
        .args(args)
        .current_dir(root())
        .output()
        .unwrap()
}

/// The example config's dry run with `sets`: exit 2 and every word of `words` on stderr.
fn refused(sets: &[&str], words: &[&str]) {
    let mut args = vec![
        "run",
        "--config",
        "configs/train_onnx_mlp.toml",
        "--dry-run",
    ];
    for s in sets {
        args.extend(["--set", s]);
    }
    let o = train(&args);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{sets:?}: {e}");
    assert!(words.iter().all(|w| e.contains(w)), "{sets:?}: {e}");
}

#[test]
fn what_does_not_apply_to_an_onnx_network_is_refused_by_name() {
    let _serial = crate::common::serial();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("dry");
    // auto takes Burn's engine, and the dry run says what it would train.
    let o = train(&[
        "run",
        "--config",
        "configs/train_onnx_mlp.toml",
        "--dry-run",
        "--out",
        out.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(text.contains("onnx configs/train_onnx_mlp.onnx"), "{text}");
    // ... and which engine would compute its steps.
    assert!(text.contains("; these runs: burn (1)"), "{text}");
    let cfg = example(None, |_| {});
    let compute = crate::common::cpu();
    let engine = ntk_engine::plan(cfg.train.engine, &cfg.spec().unwrap(), &compute);
    assert_eq!(engine, ntk_engine::Engine::Burn);

    refused(
        &["train.engine=\"host\""],
        &["train.engine = \"host\"", "onnx"],
    );
    refused(
        &["train.engine=\"cudnn\""],
        &["train.engine = \"cudnn\"", "onnx"],
    );
    refused(
        &[
            "model.width=8",
            "model.depth=1",
            "model.activation=\"relu\"",
            "sweep.variants=[\"fixup\"]",
            "representations.every=1",
            "representations.n=2",
        ],
        &[
            "model, sweep.variants, representations: not for an ONNX network",
            "train_onnx_mlp.toml",
        ],
    );
    // One key of [model] or [resnet] (ninth hostile round: "missing field `depth`"), from
    // --set or a short flag, is the table that does not apply.
    refused(
        &["model.width=8"],
        &[
            "model (made by --set model.width=8): not for an ONNX network",
            "train_onnx_mlp.toml",
        ],
    );
    refused(
        &["resnet.depth=8"],
        &["resnet (made by --set resnet.depth=8): not for an ONNX network"],
    );
    let o = train(&[
        "run",
        "--config",
        "configs/train_onnx_mlp.toml",
        "--depth",
        "3",
        "--dry-run",
    ]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("model (made by --depth 3): not for an ONNX network"),
        "{e}"
    );
    let bn = fixture("resnet_small.onnx");
    refused(
        &[&format!("onnx.file={:?}", bn.display().to_string())],
        &[
            "resnet_small.onnx",
            "'/bn/BatchNormalization' (BatchNormalization) cannot be trained",
            "evaluation statistics",
        ],
    );
    // The graph's output width is not onnx.file's value (seventh hostile round: "the
    // network has 10 output(s) (onnx.file = 10)").
    refused(
        &["ntk.output=10"],
        &["ntk.output = 10", "(the output width of onnx.file = 10)"],
    );
    let five = fixture("mlp_relu.onnx");
    refused(
        &[&format!("onnx.file={:?}", five.display().to_string())],
        &["mlp_relu.onnx", "[5]", "64 values per sample"],
    );
    refused(
        &["onnx.file=\"/dev/zero\""],
        &["onnx.file = \"/dev/zero\"", "not a regular file"],
    );
}

/// Eighty-seventh hostile round, N8: a seed axis over an ONNX network trained in full batches
/// (no augmentation) is one run repeated, counted as independent seeds by `best.csv`. The dry
/// run warns of it, naming the keys; minibatches (the seed orders them) are not warned of.
#[test]
fn a_full_batch_onnx_seed_axis_is_warned_of() {
    let _serial = crate::common::serial();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("dry");
    let dry = |sets: &[&str]| {
        let mut args = vec![
            "--config",
            "configs/train_onnx_mlp.toml",
            "--dry-run",
            "--out",
            out.to_str().unwrap(),
            "--set",
            "sweep.seeds=[1, 2]",
        ];
        for s in sets {
            args.extend(["--set", s]);
        }
        let o = train(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let full = dry(&["train.batch_size=500"]);
    assert!(
        full.contains("sweep.seeds lists 2 seeds for an ONNX network")
            && full.contains("train.batch_size 500 >= data.n 500")
            && full.contains("the same run"),
        "{full}"
    );
    let mini = dry(&[]);
    assert!(!mini.contains("the same run"), "{mini}");
}
