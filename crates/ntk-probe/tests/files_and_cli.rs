//! The command line: files written, and bad input refused with a clear error.

mod common;

use std::path::Path;

use common::{ntk_cli, probe};
use ntk_core::npy;

fn write_config(dir: &Path, text: &str) -> std::path::PathBuf {
    common::write_file(dir, "probe.toml", text)
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
    assert!(out.join("weights.safetensors").exists());
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
        .replace("n = 40", "n = 12");
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
