//! The command line: files written, and bad input refused with a clear error.

use std::path::Path;

use crate::common::{command_cli, ntk_cli, probe};
use ntk_files::npy;
use ntk_numerics::backend::Precision;

fn write_config(dir: &Path, text: &str) -> std::path::PathBuf {
    crate::common::write_file(dir, "probe.toml", text)
}

const SMALL: &str = r#"
[data]
dataset = "synthetic"
n = 40
input_dim = 5

[model]
width = 64
depth = 3
activation = "relu"
seed = 1

[probe]
precision = "f64"
pair = [0, 1]
embedding_angles = true
"#;

#[test]
fn ntk_writes_summary_and_npy_files_that_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(dir.path(), SMALL);
    let out = dir.path().join("out");
    let status = probe()
        .args(["ntk", "--config"])
        .arg(&cfg)
        .arg("--out")
        .arg(&out)
        .arg("--save-weights")
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    for key in [
        "lambda_min",
        "lambda_max",
        "kappa",
        "rank",
        "min_grad_angle_deg",
        "gram_kappa",
        "n",
        "width",
        "depth",
        "activation",
        "seed",
        "precision",
        "backend",
        "protocol",
        "seconds",
    ] {
        assert!(summary.get(key).is_some(), "summary.json lacks {key}");
    }
    assert_eq!(summary["n"], 40);
    assert_eq!(summary["rank"], 40);
    let (k, shape) = npy::read(&out.join("ntk.npy")).unwrap();
    assert_eq!(shape, [40, 40]);
    let (x, xs) = npy::read(&out.join("inputs.npy")).unwrap();
    assert_eq!(xs, [40, 5]);
    // The inputs are the synthetic draw, exactly.
    let s = ntk_data::gaussian(40, 5, 0);
    assert!(x.iter().zip(&s.x).all(|(a, b)| *a == f64::from(*b)));
    let (ev, es) = npy::read(&out.join("eigenvalues.npy")).unwrap();
    assert_eq!(es, [40]);
    let kappa = summary["kappa"].as_f64().unwrap();
    assert!((ev[39] / ev[0] - kappa).abs() < 1e-9 * kappa);
    // Symmetric kernel; the max eigenvalue is at most the trace.
    assert!((k[1] - k[40]).abs() < 1e-12 * k[0]);
    assert!(ev[39] <= (0..40).map(|i| k[i * 41]).sum::<f64>());
    // The exported network, loaded into a differently seeded one, gives the outputs the
    // probe wrote (outputs.npy) on the inputs it wrote.
    let compute = ntk_numerics::backend::select(Some("flex"), Precision::F64).unwrap();
    let cfg = ntk_model::MlpConfig::new(5, 64, 3, ntk_model::ActivationKind::Relu).with_seed(99);
    let other = ntk_model::Mlp::new(&cfg, &compute.device, compute.dtype()).unwrap();
    let net = ntk_model::export::load(other, &out.join("weights.safetensors")).unwrap();
    let t = burn::tensor::Tensor::<2>::from_data(
        burn::tensor::TensorData::new(x.clone(), [40, 5]),
        (&compute.device, compute.dtype()),
    );
    let ours: Vec<f64> = net
        .forward(t)
        .into_data()
        .convert::<f64>()
        .try_to_vec()
        .unwrap();
    let (y, ys) = npy::read(&out.join("outputs.npy")).unwrap();
    assert_eq!(ys, [40, 1]);
    assert!(
        ours.iter()
            .zip(&y)
            .all(|(a, b)| (a - b).abs() <= 1e-12 * b.abs().max(1.0))
    );
    assert_eq!(
        summary["pair_embedding_angles_deg"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
}

fn expect_error(config: &str, extra: &[&str], needles: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(dir.path(), config);
    let out = probe()
        .args(["ntk", "--config"])
        .arg(&cfg)
        .arg("--out")
        .arg(dir.path().join("out"))
        .args(extra)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "expected a failure for {needles:?}");
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "{err}"
    );
    for n in needles {
        assert!(err.contains(n), "stderr lacks {n:?}: {err}");
    }
}

#[test]
fn unknown_activation_is_refused_with_line_and_choices() {
    expect_error(
        &SMALL.replace("\"relu\"", "\"swish\""),
        &[],
        &["probe.toml", "line 10", "swish", "norm_relu"],
    );
    expect_error(SMALL, &["--activation", "swish"], &["swish", "relu"]);
}

#[test]
fn negative_width_is_refused() {
    expect_error(
        &SMALL.replace("width = 64", "width = -3"),
        &[],
        &["probe.toml", "width", "-3"],
    );
    expect_error(SMALL, &["--width=-3"], &["--width", "-3"]);
}

#[test]
fn n_larger_than_the_data_set_is_refused() {
    let cfg = SMALL
        .replace("dataset = \"synthetic\"", "dataset = \"digits\"")
        .replace("n = 40\ninput_dim = 5", "n = 5000");
    expect_error(&cfg, &[], &["5000", "1797"]);
}

#[test]
fn unwritable_output_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(dir.path(), SMALL);
    let file = dir.path().join("not-a-dir");
    std::fs::write(&file, "x").unwrap();
    let out = ntk_cli(&cfg, file.join("out"));
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not-a-dir") && err.contains("output directory"),
        "{err}"
    );
}

#[test]
fn npy_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.npy");
    let data = [1.5, -2.0, 3.25, f64::MIN_POSITIVE, 1e300, 0.0];
    npy::write_f64(&p, &data, &[2, 3]).unwrap();
    let (v, s) = npy::read(&p).unwrap();
    assert_eq!(s, [2, 3]);
    assert_eq!(v, data);
    // The header is NumPy's: magic, version 1.0, a dict with descr '<f8', C order.
    let bytes = std::fs::read(&p).unwrap();
    assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
    let header = String::from_utf8_lossy(&bytes[10..80]);
    assert!(
        header.contains("'descr': '<f8'") && header.contains("'fortran_order': False"),
        "{header}"
    );
}

#[test]
fn theory_method_writes_the_infinite_width_kernel_through_the_same_files() {
    let dir = tempfile::tempdir().unwrap();
    let text = SMALL
        .replace(
            "embedding_angles = true",
            "embedding_angles = false\nmethod = \"theory\"",
        )
        .replace("n = 40", "n = 12")
        // The theory draws no network: no seed (nineteenth hostile round, D2).
        .replace("\nseed = 1\n", "\n");
    let cfg = write_config(dir.path(), &text);
    let out = dir.path().join("theory");
    let status = ntk_cli(&cfg, &out);
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["method"], "theory");
    let (k, shape) = npy::read(&out.join("ntk.npy")).unwrap();
    assert_eq!(shape, [12, 12]);
    // Depth-3 ReLU, paper convention: Theta(x, x) = (L + 1) ||x||^2 on the diagonal.
    let (x, _) = npy::read(&out.join("inputs.npy")).unwrap();
    let q0: f64 = x[..5].iter().map(|v| v * v).sum();
    assert!(
        (k[0] - 4.0 * q0).abs() < 1e-9 * k[0],
        "{} vs {}",
        k[0],
        4.0 * q0
    );
}

#[test]
fn set_overrides_any_key_and_the_short_flags_are_its_aliases() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(dir.path(), SMALL);
    let out = dir.path().join("out");
    // Keys with no short flag, a table-valued key, and a short flag beside them.
    let status = probe()
        .args(["ntk", "--config"])
        .arg(&cfg)
        .arg("--out")
        .arg(&out)
        .args([
            "--set",
            "model.convention=official",
            "--set",
            "data.unit_norm=true",
            "--set",
            "probe.pair=[2, 3]",
            "--depth",
            "2",
            "--set",
            "model.output_dim=2",
        ])
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let config = &summary["provenance"]["config"];
    assert_eq!(config["model.convention"], "official");
    assert_eq!(config["data.unit_norm"], true);
    assert_eq!(config["model.output_dim"], 2);
    assert_eq!(config["model.depth"], 2);
    assert_eq!(summary["depth"], 2);
    assert_eq!(config["probe.pair"], serde_json::json!([2, 3]), "{config}");
    // The inputs were scaled to unit norm.
    let (x, _) = npy::read(&out.join("inputs.npy")).unwrap();
    let norm: f64 = x[..5].iter().map(|v| v * v).sum::<f64>().sqrt();
    assert!((norm - 1.0).abs() < 1e-6, "{norm}");

    // A --set of a short flag's key with another value is refused, naming both (round 22's
    // N1: the --set won without a word); with the same value it is one assignment.
    let with = |n: &str, set: &str| {
        probe()
            .args(["ntk", "--config"])
            .arg(&cfg)
            .arg("--out")
            .arg(&out)
            .args(["--n", n, "--set", set, "--json", "--recompute"])
            .output()
            .unwrap()
    };
    let refused = with("10", "data.n=12");
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&refused.stderr)
            .contains("--n 10 and --set data.n=12 both set data.n: give one")
    );
    let status = with("12", "data.n=12");
    assert!(status.status.success());
    let summary: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(summary["n"], 12);
}

#[test]
fn set_of_an_unknown_key_or_a_bad_value_is_an_error_naming_it() {
    let cases: [(&[&str], &[&str]); 9] = [
        // Unknown keys: the --set and the full dotted key, not a line of the file.
        (
            &["--set", "model.depht=3"],
            &["--set model.depht=3", "unknown key `model.depht`", "depth"],
        ),
        (
            &["--set", "ntk.every=1"],
            &["--set ntk.every=1", "unknown key `ntk.every`"],
        ),
        // Type errors: the key and the value.
        (
            &["--set", "data.n=many"],
            &["--set data.n=many", "\"many\"", "usize"],
        ),
        (
            &["--set", "probe.pair=[0]"],
            &["--set probe.pair=[0]", "length 1"],
        ),
        (
            &["--set", "model.activation=swish"],
            &["--set model.activation=swish", "norm_relu"],
        ),
        // Malformed.
        (&["--set", "foo"], &["--set foo: expected key=value"]),
        // Validated as the file is.
        (
            &["--set", "probe.pair=[0, 99]"],
            &["probe.toml (with overrides)", "probe.pair = [0, 99]"],
        ),
        // An override that removes the network (fifty-seventh hostile round, D2: the file,
        // which has one, was blamed).
        (
            &["--set", "model="],
            &["probe.toml (with overrides)", "needs a network"],
        ),
        // A short flag's translation names the flag and its key.
        (
            &["--dataset", "imagenet"],
            &["--dataset imagenet (data.dataset)", "cifar-10"],
        ),
    ];
    for (extra, needles) in cases {
        let dir = tempfile::tempdir().unwrap();
        let cfg = write_config(dir.path(), SMALL);
        let out = probe()
            .args(["ntk", "--config"])
            .arg(&cfg)
            .arg("--out")
            .arg(dir.path().join("out"))
            .args(extra)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(!err.contains("line "), "{extra:?}: {err}");
        for n in needles {
            assert!(err.contains(n), "{extra:?}: stderr lacks {n:?}: {err}");
        }
    }
}

#[test]
fn an_unknown_device_suggests_no_feature() {
    expect_error(
        SMALL,
        &["--device", "gpu"],
        &["`gpu`", "flex, ndarray, wgpu, cuda"],
    );
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(dir.path(), SMALL);
    let out = probe()
        .args(["ntk", "--config"])
        .arg(&cfg)
        .arg("--out")
        .arg(dir.path().join("out"))
        .args(["--device", "gpu"])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("--features"));
}

/// `probe.device`, the key's name before 2026-11-29, is read as `probe.backend`: a file that
/// still says `device` runs, `--backend` overrides it, and the results are one config's (the
/// second run with the other key reuses the first's summary); both keys at once are refused.
#[test]
fn the_device_key_is_read_as_the_backend_key() {
    let dir = tempfile::tempdir().unwrap();
    let old = write_config(
        dir.path(),
        &SMALL.replace("[probe]\n", "[probe]\ndevice = \"flex\"\n"),
    );
    let out = dir.path().join("out");
    let o = ntk_cli(&old, &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary = std::fs::read_to_string(out.join("summary.json")).unwrap();
    assert!(!summary.contains("probe.device") && !summary.contains("probe.backend"));
    let new = crate::common::write_file(
        dir.path(),
        "new.toml",
        &SMALL.replace("[probe]\n", "[probe]\nbackend = \"flex\"\n"),
    );
    let again = probe()
        .args(["ntk", "--resume", "--config"])
        .arg(&new)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(out.join("summary.json")).unwrap(),
        summary
    );
    let flag = probe()
        .args(["ntk", "--config"])
        .arg(&old)
        .arg("--out")
        .arg(dir.path().join("flag"))
        .args(["--backend", "flex", "--dry-run"])
        .output()
        .unwrap();
    assert!(
        flag.status.success(),
        "{}",
        String::from_utf8_lossy(&flag.stderr)
    );
    expect_error(
        &SMALL.replace(
            "[probe]\n",
            "[probe]\ndevice = \"flex\"\nbackend = \"flex\"\n",
        ),
        &[],
        &["backend"],
    );
}

#[test]
fn every_option_has_help() {
    for sub in ["ntk", "bench", "sweep", "collect", "plot", "theory", "fig1"] {
        let out = probe().args([sub, "--help"]).output().unwrap();
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        // clap prints an option without help as its name alone on the line.
        for line in text.lines() {
            let t = line.trim();
            if t.starts_with("--") || t.starts_with('-') && t.get(2..4) == Some(", ") {
                assert!(t.contains("  "), "{sub}: `{t}` has no help");
            }
        }
        if matches!(sub, "ntk" | "sweep" | "collect") {
            assert!(text.contains("--set <KEY=VALUE>"), "{sub}: {text}");
        }
    }
    let out = probe().args(["fig1", "--help"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("[default: runs/fig1]"));
}

#[test]
fn redrawing_without_tables_names_the_missing_file() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        vec!["plot".to_string(), dir.path().display().to_string()],
        vec![
            "fig1".into(),
            "--redraw".into(),
            "--out".into(),
            dir.path().display().to_string(),
        ],
    ] {
        let out = probe().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(".csv") && err.contains("missing"),
            "{args:?}: {err}"
        );
    }
    // --redraw measures nothing, so the measurement options are refused beside it.
    let out = probe()
        .args(["fig1", "--redraw", "--depths", "1"])
        .output()
        .unwrap();
    assert!(!out.status.success());
}

/// Hundred-and-thirtieth hostile round, second review, D1: `fig1` runs again into its own
/// `--out`, over the table it wrote and over one of the older header (the committed
/// experiments/fig1/fig1.csv), and still refuses a user's table at that name.
#[test]
fn fig1_runs_again_into_its_own_out() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("f");
    let fig1 = || {
        probe()
            .args(["fig1", "--depths", "1", "--widths", "16", "--seeds", "1"])
            .args(["--thetas", "30", "--out"])
            .arg(&out)
            .output()
            .unwrap()
    };
    for _ in 0..2 {
        let o = fig1();
        assert!(o.status.success(), "{o:?}");
    }
    let table = out.join("fig1.csv");
    let text = std::fs::read_to_string(&table).unwrap();
    let older = text.replacen("activation,", "", 1);
    let older: String = older
        .lines()
        .enumerate()
        .map(|(i, l)| match i {
            0 => format!("{l}\n"),
            _ => format!("{}\n", l.split_once(',').unwrap().1),
        })
        .collect();
    std::fs::write(&table, older).unwrap();
    let o = fig1();
    assert!(o.status.success(), "{o:?}");
    std::fs::write(&table, "my,own\n1,2\n").unwrap();
    let o = fig1();
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert_eq!(std::fs::read_to_string(&table).unwrap(), "my,own\n1,2\n");
}

/// The issue's reproduction: a data directory on the synthetic set was ignored (exit 0,
/// synthetic data); it is now an error naming the key, and so is a file key on an image set.
#[test]
fn data_keys_that_do_not_apply_are_refused() {
    expect_error(
        SMALL,
        &["--set", "data.dir=my_x.npy"],
        &[
            "data.dir",
            "the synthetic set reads no files",
            "data.dataset = \"file\"",
        ],
    );
    expect_error(
        SMALL,
        &["--set", "data.x=my_x.npy"],
        &["data.x", "only for data.dataset = \"file\""],
    );
}

/// The user's own inputs: the probe's saved `inputs.npy` of a synthetic run, read back as a
/// file set, gives the same data digest and the same kernel, bit for bit; as CSV too.
#[test]
fn a_file_set_gives_the_kernel_of_the_same_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(dir.path(), SMALL);
    let first = dir.path().join("synthetic");
    let out = ntk_cli(&cfg, &first);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = |dir: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
    };
    let a = summary(&first);
    let (x, shape) = npy::read(&first.join("inputs.npy")).unwrap();
    let csv: String = x
        .chunks(shape[1] as usize)
        .map(|r| {
            r.iter()
                .map(|v| format!("{v:?}"))
                .collect::<Vec<_>>()
                .join(",")
                + "\n"
        })
        .collect();
    let csv_path = crate::common::write_file(dir.path(), "x.csv", &csv);
    for (name, path) in [("npy", first.join("inputs.npy")), ("csv", csv_path)] {
        let text = SMALL.replace(
            "dataset = \"synthetic\"\nn = 40\ninput_dim = 5",
            &format!(
                "dataset = \"file\"\nn = 40\nsubset = \"first\"\nx = {:?}",
                path.display().to_string()
            ),
        );
        let cfg = crate::common::write_file(dir.path(), &format!("{name}.toml"), &text);
        let second = dir.path().join(name);
        let out = ntk_cli(&cfg, &second);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let b = summary(&second);
        let digest = |s: &serde_json::Value| s["provenance"]["config"]["data.digest"].clone();
        assert_eq!(digest(&a), digest(&b), "{name}");
        assert!(!digest(&a).is_null());
        for key in ["lambda_min", "lambda_max", "kappa", "min_grad_angle_deg"] {
            assert_eq!(a[key], b[key], "{name} {key}");
        }
        assert_eq!(
            npy::read(&first.join("ntk.npy")).unwrap(),
            npy::read(&second.join("ntk.npy")).unwrap()
        );
    }
}

/// The input scale decides kappa for tanh on inputs off the unit sphere: the summary and
/// the console say so; for ReLU without biases (scale-invariant) and for unit-norm inputs
/// nothing is said.
#[test]
fn the_summary_warns_when_the_input_scale_decides_kappa() {
    let dir = tempfile::tempdir().unwrap();
    let warnings = |text: &str, name: &str| {
        let cfg = crate::common::write_file(dir.path(), &format!("{name}.toml"), text);
        let out = dir.path().join(name);
        let run = ntk_cli(&cfg, &out);
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap())
                .unwrap();
        (
            s["warnings"].clone(),
            String::from_utf8_lossy(&run.stderr).to_string(),
        )
    };
    let tanh = SMALL.replace("\"relu\"", "\"tanh\"");
    let (w, stderr) = warnings(&tanh, "tanh");
    let first = w[0].as_str().unwrap();
    assert!(
        first.starts_with("tanh is not positively homogeneous"),
        "{first}"
    );
    assert!(
        stderr.contains("warning: tanh is not positively homogeneous"),
        "{stderr}"
    );
    let (w, stderr) = warnings(SMALL, "relu");
    assert!(w.is_null() && !stderr.contains("warning"), "{w} {stderr}");
    let unit = tanh.replace("input_dim = 5", "input_dim = 5\nunit_norm = true");
    assert!(warnings(&unit, "unit").0.is_null());
}

/// `probe.eigen = "extreme"` applies to the whole protocol only: with blocks alone it was
/// silently ignored; now it is refused, naming the key.
#[test]
fn extreme_eigenvalues_with_blocks_alone_are_refused() {
    let cfg = SMALL.replace(
        "[probe]",
        "[probe]\neigen = \"extreme\"\nprotocol = \"blocks\"\nblock_size = 8",
    );
    expect_error(&cfg, &[], &["probe.eigen = extreme", "whole protocol only"]);
}

/// `--version` names the build's features on a line of its own, which
/// scripts/slurm/submit.sh reads before `--gpu` submits anything.
#[test]
fn version_names_the_features_this_binary_was_built_with() {
    let o = probe().arg("--version").output().unwrap();
    assert!(o.status.success());
    let said = String::from_utf8(o.stdout).unwrap();
    let features: Vec<&str> = said
        .lines()
        .find_map(|l| l.strip_prefix("features: "))
        .unwrap_or_else(|| panic!("no features line in {said:?}"))
        .split(' ')
        .collect();
    for (name, built) in [
        ("flex", cfg!(feature = "flex")),
        ("wgpu", cfg!(feature = "wgpu")),
        ("cuda", cfg!(feature = "cuda")),
        ("cusolver", cfg!(feature = "cusolver")),
    ] {
        assert_eq!(features.contains(&name), built, "{name}: {said}");
    }
}

/// The committed own-data sweep (`configs/own_data_sweep.toml`, the arrays in
/// `configs/own_data/`) runs as a user runs it, from the repository root: every point of
/// its grid, `data.n` taken from the file's rows, the theory beside it, and a linear network
/// on 6 features reported singular at every depth.
#[test]
fn the_committed_own_data_sweep_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("own");
    let o = probe()
        .current_dir(&root)
        .args(["sweep", "--config", "configs/own_data_sweep.toml", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let mut rdr = csv::Reader::from_reader(summary.as_bytes());
    let header = rdr.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = rdr.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 15, "3 activations x 5 depths");
    for r in &rows {
        let (act, depth) = (&r[col("activation")], &r[col("depth")]);
        let singular: usize = r[col("singular")].parse().unwrap();
        if act == "linear" || depth == "0" {
            assert_eq!(singular, 3, "{act} depth {depth}: rank at most 6 of 240");
        } else {
            assert_eq!(singular, 0, "{act} depth {depth}");
            let k: f64 = r[col("kappa_mean")].parse().unwrap();
            assert!(k.is_finite() && k > 1.0, "{act} depth {depth}: {k}");
        }
    }
    let results = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert!(
        results.lines().nth(1).unwrap().contains(",240,"),
        "n = every row of x.csv"
    );
}

/// A list flag's value given twice is refused naming the flag and the value (eleventh hostile
/// round, B02: `ntk-probe bench --depths 1,1` timed depth 1 twice), and the help shows a
/// list's default as the flag takes it, comma-separated (it read `[default: 1 5 10]`, which
/// the flag refuses).
#[test]
fn list_flags_take_each_value_once_and_show_their_defaults_as_given() {
    let cases: [&[&str]; 6] = [
        &[
            "bench",
            "--n",
            "10",
            "--width",
            "4",
            "--repeats",
            "1",
            "--depths",
            "1,1",
        ],
        &["bench", "--n", "10", "--precisions", "f64,f64"],
        &["fig1", "--out", "unused", "--depths", "2,2"],
        &["fig1", "--out", "unused", "--thetas", "30,60,30"],
        &["gmap", "--out", "unused", "--depths", "5,5"],
        &[
            "activations",
            "--out",
            "unused",
            "--activations",
            "selu,selu",
        ],
    ];
    for args in cases {
        let out = probe().args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("is given twice; give each value once"),
            "{args:?}: {stderr}"
        );
        assert!(!Path::new("unused").exists(), "{args:?} created its --out");
    }
    let help = probe().args(["bench", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("[default: 1,5,10]"), "{help}");
    assert!(help.contains("[default: f32,f64]"), "{help}");
    let help = probe().args(["fig1", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("[default: 5,15,30,45,60,90,120,150,175]"),
        "{help}"
    );
}

/// `probe.method = "theory"` forms the infinite-width kernel in f64 whatever
/// `probe.precision` says: f32 (given or the default) is refused naming the key, as
/// `eigen = "tiled"` refuses it (twelfth hostile round, N6: the run reported f32 beside an
/// f64 kernel); f64 runs and says f64.
#[test]
fn the_theory_says_f64_or_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let theory = SMALL
        .replace("precision = \"f64\"\n", "")
        .replace(
            "embedding_angles = true",
            "embedding_angles = true\nmethod = \"theory\"",
        )
        // The theory draws no network: no seed (nineteenth hostile round, D2).
        .replace("\nseed = 1\n", "\n");
    let cfg = write_config(dir.path(), &theory);
    for extra in [&[][..], &["--set", "probe.precision=\"f32\""][..]] {
        let out = dir.path().join("refused");
        let o = command_cli("run", &cfg, &out, extra);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
        assert!(
            err.contains("probe.precision") && err.contains("set probe.precision = \"f64\""),
            "{extra:?}: {err}"
        );
        assert!(!out.exists(), "{extra:?}: the refused run wrote");
    }
    let out = dir.path().join("f64");
    let o = command_cli("run", &cfg, &out, &["--set", "probe.precision=\"f64\""]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["precision"], "f64");
    assert_eq!(summary["method"], "theory");
}

/// Thirty-eighth hostile round, D3: `--resume` keeps a finished set only when its files are
/// those its run wrote (recorded in summary.json by size and SHA-256): `ntk.npy` removed,
/// replaced by text, changed in place, a FIFO, or `eigenvalues.npy` a directory is refused by
/// the run and the dry run alike, naming the file, and `--recompute` computes the set again;
/// a file the record leaves out is refused by `--recompute` too, until it is moved away.
#[test]
fn resume_keeps_only_a_set_whose_files_are_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(dir.path(), SMALL);
    let out = dir.path().join("out");
    let o = ntk_cli(&cfg, &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    for f in ["inputs.npy", "ntk.npy", "eigenvalues.npy"] {
        let bytes = std::fs::metadata(out.join(f)).unwrap().len();
        assert_eq!(summary["files"][f]["bytes"], bytes, "{f}");
    }
    let resume = |extra: &[&str]| {
        probe()
            .args(["ntk", "--resume", "--config"])
            .arg(&cfg)
            .arg("--out")
            .arg(&out)
            .args(extra)
            .output()
            .unwrap()
    };
    let kept = resume(&[]);
    assert!(kept.status.success());
    assert!(String::from_utf8_lossy(&kept.stderr).contains("kept (--resume)"));
    let pristine = dir.path().join("pristine");
    std::fs::create_dir(&pristine).unwrap();
    for f in ["summary.json", "inputs.npy", "ntk.npy", "eigenvalues.npy"] {
        std::fs::copy(out.join(f), pristine.join(f)).unwrap();
    }
    let fifo = |p: &Path| {
        let made = std::process::Command::new("mkfifo").arg(p).status();
        assert!(made.unwrap().success());
    };
    type Break = fn(&Path, &dyn Fn(&Path));
    let breaks: [(&str, &str, Break); 5] = [
        ("removed", "ntk.npy: missing", |o, _| {
            std::fs::remove_file(o.join("ntk.npy")).unwrap()
        }),
        ("text", "ntk.npy: holds 6 bytes", |o, _| {
            std::fs::write(o.join("ntk.npy"), b"hello\n").unwrap()
        }),
        ("changed", "ntk.npy: its SHA-256 differs", |o, _| {
            let mut b = std::fs::read(o.join("ntk.npy")).unwrap();
            let last = b.len() - 1;
            b[last] ^= 1;
            std::fs::write(o.join("ntk.npy"), b).unwrap();
        }),
        ("fifo", "ntk.npy: not a regular file", |o, fifo| {
            std::fs::remove_file(o.join("ntk.npy")).unwrap();
            fifo(&o.join("ntk.npy"));
        }),
        ("dir", "eigenvalues.npy: not a regular file", |o, _| {
            std::fs::remove_file(o.join("eigenvalues.npy")).unwrap();
            std::fs::create_dir(o.join("eigenvalues.npy")).unwrap();
        }),
    ];
    for (what, words, broken) in breaks {
        broken(&out, &fifo);
        for extra in [&[][..], &["--dry-run"][..]] {
            let o = resume(extra);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{what} {extra:?}: {err}");
            for w in [words, "not as its run wrote it", "--recompute"] {
                assert!(err.contains(w), "{what} {extra:?}: {w:?} not in {err}");
            }
        }
        let again = resume(&["--recompute"]);
        assert!(again.status.success(), "{what}");
        for f in ["inputs.npy", "ntk.npy", "eigenvalues.npy"] {
            let now = std::fs::read(out.join(f)).unwrap();
            assert_eq!(now, std::fs::read(pristine.join(f)).unwrap(), "{what}: {f}");
        }
    }
    // Thirty-ninth hostile round, D1: a file of the set's that the record leaves out (another
    // network's weights copied into a set made without them; `ntk.npy` taken out of the
    // record), and an empty record, are not the run's set either.
    let other = dir.path().join("other");
    let o = probe()
        .args(["ntk", "--config"])
        .arg(&cfg)
        .arg("--out")
        .arg(&other)
        .args(["--save-weights", "--set", "model.seed=9"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary_text = std::fs::read_to_string(out.join("summary.json")).unwrap();
    type Edit<'a> = (&'static str, Box<dyn Fn() + 'a>);
    let edits: [Edit; 3] = [
        (
            "weights.safetensors: a file of the set's",
            Box::new(|| {
                for f in ["weights.safetensors", "outputs.npy"] {
                    std::fs::copy(other.join(f), out.join(f)).unwrap();
                }
            }),
        ),
        (
            "ntk.npy: a file of the set's",
            Box::new(|| {
                let mut v: serde_json::Value = serde_json::from_str(&summary_text).unwrap();
                v["files"].as_object_mut().unwrap().remove("ntk.npy");
                std::fs::write(out.join("summary.json"), v.to_string()).unwrap();
            }),
        ),
        (
            "records no files",
            Box::new(|| {
                let mut v: serde_json::Value = serde_json::from_str(&summary_text).unwrap();
                v["files"] = serde_json::json!({});
                std::fs::write(out.join("summary.json"), v.to_string()).unwrap();
            }),
        ),
    ];
    for (words, edit) in edits {
        edit();
        for extra in [&["--save-weights"][..], &["--dry-run"][..]] {
            let o = resume(extra);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{words} {extra:?}: {err}");
            assert!(err.contains(words), "{words:?} not in {err}");
        }
        // A file the record leaves out may be the user's: `--recompute` refuses it too, and
        // removes nothing (ninety-ninth hostile round, D2); moved away, the set is made again.
        let unrecorded: Vec<&str> = ["weights.safetensors", "outputs.npy", "ntk.npy"]
            .into_iter()
            .filter(|f| out.join(f).exists() && words.starts_with(f))
            .collect();
        if let Some(&f) = unrecorded.first() {
            let o = resume(&["--recompute"]);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{words}: {err}");
            assert!(err.contains("not the run's: move it away"), "{err}");
            assert!(out.join(f).exists(), "{words}: {f} kept");
            std::fs::rename(out.join(f), dir.path().join(format!("moved-{f}"))).unwrap();
            if f == "weights.safetensors" {
                std::fs::remove_file(out.join("outputs.npy")).unwrap();
            }
        }
        assert!(resume(&["--recompute"]).status.success(), "{words}");
        for f in ["weights.safetensors", "outputs.npy"] {
            assert!(!out.join(f).exists(), "{words}: {f}");
        }
    }
}

/// Forty-fifth hostile round, D2: `gmap`, `activations`, `transfer` and `fig1` checked each
/// output's place only as they wrote it (after `fig1`'s measurements, after the earlier
/// files were replaced) and named the path twice. Now every place is checked before any work:
/// nothing is written, and the refused path is named once.
#[test]
fn figure_commands_check_every_output_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &str, &str); 4] = [
        (&["gmap", "--depths", "1,2"], "gmap.svg", "gmap.csv"),
        (&["activations"], "activations.pdf", "activations.csv"),
        (&["transfer"], "transfer_norm.pdf", "transfer.csv"),
        (
            &["fig1", "--depths", "1", "--widths", "8", "--seeds", "1"],
            "fig1.pdf",
            "fig1.csv",
        ),
    ];
    for (args, taken, first) in cases {
        let out = dir.path().join(args[0]);
        std::fs::create_dir_all(out.join(taken)).unwrap();
        let o = probe().args(args).arg("--out").arg(&out).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(&format!("{taken}: is a directory")), "{err}");
        assert_eq!(err.matches(taken).count(), 1, "{args:?}: {err}");
        let written: Vec<_> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n != taken)
            .collect();
        assert!(
            written.is_empty(),
            "{args:?} wrote {written:?} ({first} first)"
        );
    }
}
