//! `ntk-probe onnx`: an ONNX file's NTK from the command line, its files and provenance,
//! and the errors a config or a file can raise (exit code 2, naming the key or the file).
//! The kernel itself is checked against torch.func in ntk-onnx's tests.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{probe, write_file};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `ntk-probe onnx ARGS...` from the repository root (where the config's paths start).
fn onnx(args: &[&str]) -> Output {
    probe()
        .arg("onnx")
        .args(args)
        .current_dir(root())
        .output()
        .unwrap()
}

/// A small MLP's probe config (`ntk-probe run`) in `dir`, whose inputs match the example
/// ONNX file's (5 dimensions): its path.
fn mlp_config(dir: &Path) -> PathBuf {
    let mlp = dir.join("mlp.toml");
    std::fs::write(
        &mlp,
        "[data]\ndataset = \"synthetic\"\nn = 6\ninput_dim = 5\n\n[model]\nwidth = 8\n\
         depth = 1\nactivation = \"relu\"\nseed = 1\n",
    )
    .unwrap();
    mlp
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn the_example_config_writes_the_kernel_and_records_the_file_by_digest() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = onnx(&[
        "--config",
        "configs/onnx_mlp.toml",
        "--out",
        out.to_str().unwrap(),
        "--set",
        "data.n=12",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    for f in ["summary.json", "inputs.npy", "ntk.npy", "eigenvalues.npy"] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["n"], 12);
    assert_eq!(summary["parameters"], 1281);
    assert_eq!(summary["input_shape"], serde_json::json!([5]));
    assert!(summary["kappa"].as_f64().unwrap() > 1.0);
    let bytes = std::fs::read(root().join("configs/onnx_mlp.onnx")).unwrap();
    let digest = ntk_runs::provenance::sha256_hex(&bytes);
    let text = serde_json::to_string(&summary["provenance"]).unwrap();
    assert!(text.contains(&digest), "{text}");
    assert!(!text.contains("configs/onnx_mlp.onnx"), "{text}");
    let (k, shape) = ntk_files::npy::read(&out.join("ntk.npy")).unwrap();
    assert_eq!(shape, vec![12, 12]);
    for i in 0..12 {
        for j in 0..12 {
            assert_eq!(k[i * 12 + j], k[j * 12 + i]);
        }
    }
}

#[test]
fn keys_of_other_networks_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_file(
        dir.path(),
        "c.toml",
        "[onnx]\nfile = \"configs/onnx_mlp.onnx\"\n[data]\ndataset = \"synthetic\"\nn = 4\n\
         [model]\nwidth = 8\n[probe]\nmethod = \"autodiff\"\n",
    );
    let o = onnx(&["--config", cfg.to_str().unwrap(), "--dry-run"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("model, probe.method") && e.contains("c.toml"),
        "{e}"
    );
}

#[test]
fn data_of_another_width_is_refused_naming_the_file_and_both_shapes() {
    let o = onnx(&[
        "--config",
        "configs/onnx_mlp.toml",
        "--dry-run",
        "--set",
        "data.input_dim=7",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("onnx_mlp.onnx") && e.contains("[5]") && e.contains("7 values"),
        "{e}"
    );
}

/// Ninth hostile round: an output index the file does not have was "it would be computed"
/// in the dry run and refused by the run; both refuse it, naming the key and the file.
#[test]
fn an_output_the_file_does_not_have_is_refused_by_the_dry_run_too() {
    for dry in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let mut args = vec![
            "--config",
            "configs/onnx_mlp.toml",
            "--out",
            out.to_str().unwrap(),
            "--set",
            "probe.output=1",
        ];
        if dry {
            args.push("--dry-run");
        }
        let o = onnx(&args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "dry run {dry}: {e}");
        assert!(
            e.contains("probe.output = 1") && e.contains("onnx_mlp.onnx has 1 output(s)"),
            "dry run {dry}: {e}"
        );
        assert!(!out.exists(), "dry run {dry}");
    }
}

/// The file is read as the probe's other given files are: a device or a FIFO is refused,
/// never read (`/dev/zero` was read until the process was killed for memory), and an empty
/// set is the config's error, not the kernel's.
#[test]
fn files_that_are_not_models_and_empty_sets_are_refused_by_key() {
    for (set, words) in [
        (
            "onnx.file=\"/dev/zero\"",
            &["onnx.file", "/dev/zero", "not a regular file"][..],
        ),
        ("data.n=0", &["data.n = 0", "at least 2 samples"][..]),
        ("data.n=1", &["data.n = 1", "at least 2 samples"][..]),
    ] {
        let o = onnx(&[
            "--config",
            "configs/onnx_mlp.toml",
            "--dry-run",
            "--set",
            set,
        ]);
        assert_eq!(o.status.code(), Some(2), "{set}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(words.iter().all(|w| e.contains(w)), "{set}: {e}");
    }
}

#[test]
fn an_unsupported_operator_is_refused_naming_it_and_its_node() {
    let o = onnx(&[
        "--config",
        "configs/onnx_mlp.toml",
        "--dry-run",
        "--set",
        "onnx.file=\"crates/ntk-onnx/tests/fixtures/unsupported_softmax.onnx\"",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("Softmax") && e.contains("head/Softmax") && e.contains("Conv"),
        "{e}"
    );
}

#[test]
fn run_on_an_onnx_config_points_to_the_onnx_command() {
    let o = probe()
        .args(["run", "--config", "configs/onnx_mlp.toml", "--out"])
        .arg(tempfile::tempdir().unwrap().path().join("r"))
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("ntk-probe onnx --config"), "{e}");
}

#[test]
fn a_kernel_beyond_the_memory_limit_is_refused_before_it_is_formed() {
    let o = onnx(&[
        "--config",
        "configs/onnx_mlp.toml",
        "--dry-run",
        "--max-memory",
        "1M",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("data.n = 200") && e.contains("onnx_mlp.onnx"),
        "{e}"
    );
}

/// Issue 65, fifth hostile round: an input inside `--out` under an output's name (the ONNX
/// file as `ntk.npy`, the data as `inputs.npy`) was overwritten by the run that read it. The
/// run and its dry run now refuse it naming the key, and the file stays.
#[test]
fn inputs_inside_out_are_refused_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = onnx(&[
        "--config",
        "configs/onnx_mlp.toml",
        "--out",
        out.to_str().unwrap(),
        "--set",
        "data.n=6",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let model = std::fs::read(root().join("configs/onnx_mlp.onnx")).unwrap();
    std::fs::write(out.join("ntk.npy"), &model).unwrap();
    let file_in_out = format!("onnx.file={}", out.join("ntk.npy").display());
    let x: Vec<f64> = (0..30).map(|i| f64::from(i) * 0.1).collect();
    ntk_files::npy::write_f64(&out.join("inputs.npy"), &x, &[6, 5]).unwrap();
    let data_in_out = format!("data.x={}", out.join("inputs.npy").display());
    let inputs = std::fs::read(out.join("inputs.npy")).unwrap();
    for (sets, key) in [
        (vec![file_in_out.as_str()], "onnx.file"),
        (
            vec!["data.dataset=file", data_in_out.as_str(), "data.n="],
            "data.x",
        ),
    ] {
        for dry in [false, true] {
            let mut args = vec!["--config", "configs/onnx_mlp.toml", "--out"];
            args.push(out.to_str().unwrap());
            for s in &sets {
                args.extend(["--set", s]);
            }
            if dry {
                args.push("--dry-run");
            }
            let o = onnx(&args);
            let e = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{key} dry {dry}: {e}");
            assert!(e.contains(key) && e.contains("inside"), "{e}");
            // An ONNX run has no phase files (forty-fifth hostile round, N1).
            assert!(
                e.contains("writes and replaces (--out)") && !e.contains("phase"),
                "{e}"
            );
            assert_eq!(std::fs::read(out.join("ntk.npy")).unwrap(), model);
            assert_eq!(std::fs::read(out.join("inputs.npy")).unwrap(), inputs);
        }
    }
}

/// Twenty-third hostile round, D1: `onnx` makes its set beside `--out` under its lock and
/// moves it into place whole, as `run` does: a second writer is refused while one holds the
/// lock (run and dry run, D4), and a run over a finished set replaces it whole (no file of
/// the old set is left beside the new ones). D3: `--out DIR/.` names DIR.
#[test]
fn the_output_set_is_made_whole_under_its_lock() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let args = |out: &str, n: &str, dry: bool| {
        let mut v = vec!["--config", "configs/onnx_mlp.toml", "--out", out, "--set"];
        v.push(n);
        if dry {
            v.push("--dry-run");
        }
        v.iter().map(|s| s.to_string()).collect::<Vec<String>>()
    };
    let call = |a: Vec<String>| onnx(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let o = call(args(&format!("{}/.", out.display()), "data.n=12", false));
    assert!(o.status.success(), "{}", stderr(&o));
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["n"], 12);
    {
        let _held = ntk_files::lock::DirLock::acquire_beside(&out).unwrap();
        for dry in [false, true] {
            let o = call(args(out.to_str().unwrap(), "data.n=10", dry));
            assert_eq!(o.status.code(), Some(2), "dry {dry}: {}", stderr(&o));
            assert!(
                stderr(&o).contains("another process is writing here"),
                "dry {dry}: {}",
                stderr(&o)
            );
        }
    }
    // Twenty-fourth hostile round, D1 and D2: the set of another config is replaced only
    // with --recompute, by the dry run's word and the run's; this config's own set is
    // `done` to the dry run (it said `new` for every --out).
    let o = call(args(out.to_str().unwrap(), "data.n=12", true));
    assert!(o.status.success(), "{}", stderr(&o));
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(said.contains(": done ("), "{said}");
    for dry in [true, false] {
        let o = call(args(out.to_str().unwrap(), "data.n=10", dry));
        assert_eq!(o.status.code(), Some(2), "dry {dry}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("made by a different config (")
                && stderr(&o).contains("pass --recompute to replace it"),
            "dry {dry}: {}",
            stderr(&o)
        );
    }
    let mut again = args(out.to_str().unwrap(), "data.n=10", false);
    again.push("--recompute".into());
    let o = call(again);
    assert!(o.status.success(), "{}", stderr(&o));
    // A `run`'s set and an `onnx` set: each command refuses the other's without
    // --recompute, naming the command that made it.
    let mlp = mlp_config(dir.path());
    let o = probe()
        .args(["ntk", "--config"])
        .arg(&mlp)
        .arg("--out")
        .arg(&out)
        .arg("--dry-run")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("an output set of `ntk-probe onnx`, not of `ntk-probe run`"),
        "{}",
        stderr(&o)
    );
    let made = dir.path().join("made");
    let o = probe()
        .args(["ntk", "--config"])
        .arg(&mlp)
        .arg("--out")
        .arg(&made)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let o = call(args(made.to_str().unwrap(), "data.n=10", false));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("an output set of `ntk-probe run`, not of `ntk-probe onnx`"),
        "{}",
        stderr(&o)
    );
    // Round 26's N5: `--resume` keeps this config's finished set, as `run`'s does.
    let mut keep = args(out.to_str().unwrap(), "data.n=10", false);
    keep.push("--resume".into());
    let o = call(keep);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("kept (--resume)"), "{}", stderr(&o));
    let (x, shape) = ntk_files::npy::read(&out.join("inputs.npy")).unwrap();
    let (_, kshape) = ntk_files::npy::read(&out.join("ntk.npy")).unwrap();
    assert_eq!((shape[0], kshape[0], x.len()), (10, 10, 50));
    let names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 4, "{names:?}");
}

/// Eighty-sixth hostile round, D5: an ONNX network's f32 kernel that the worst-case bound
/// `n eps λ_max` calls singular (rank 7 of 8) is decided as `ntk-probe run` decides its whole
/// set, by its error measured against the same file's network in f64: resolved (rank 8),
/// with the error and the interval of κ in `note`; the f64 kernel's κ lies in that interval,
/// the recorded error is between the two kernels' Frobenius distance over √n and that
/// distance, and `--resume` keeps the set (its rank held to the measured tolerance).
#[test]
fn an_f32_kernel_the_bound_calls_singular_is_decided_by_its_measured_error() {
    // Eight inputs, the last two 0.004 apart (rounded from round 86's `nd.npy`).
    let x = [
        0.1257, -0.1321, 0.6404, 0.1049, -0.5357, 0.3616, 1.304, 0.9471, -0.7037, -1.2654, -0.6233,
        0.0413, -2.325, -0.2188, -1.2459, -0.7323, -0.5443, -0.3163, 0.4116, 1.0425, -0.1285,
        1.3665, -0.6652, 0.3515, 0.9035, 0.094, -0.7435, -0.9217, -0.4577, 0.2202, -1.0096,
        -0.2092, -0.1592, 0.5408, 0.2147, -1.0134, -0.2046, -0.1552, 0.5432, 0.2155,
    ];
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("nd.npy");
    ntk_files::npy::write_f64(&data, &x, &[8, 5]).unwrap();
    let data_x = format!("data.x={}", data.display());
    let run = |precision: &str, extra: &[&str]| {
        let out = dir.path().join(precision);
        let set = format!("probe.precision={precision}");
        let mut args = vec![
            "--config",
            "configs/onnx_mlp.toml",
            "--out",
            out.to_str().unwrap(),
            "--set",
            "data.dataset=file",
            "--set",
            &data_x,
            "--set",
            "data.n=",
            "--set",
            &set,
        ];
        args.extend_from_slice(extra);
        let o = onnx(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let summary: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
        let (k, _) = ntk_files::npy::read(&out.join("ntk.npy")).unwrap();
        (o, summary, k)
    };
    let (o32, s32, k32) = run("f32", &[]);
    let (_, s64, k64) = run("f64", &[]);
    let table = String::from_utf8_lossy(&o32.stdout).into_owned();
    assert_eq!(s32["rank"], 8, "{table}");
    let note = s32["note"].as_str().unwrap();
    assert!(note.contains("resolves it: rank 8"), "{note}");
    assert!(table.contains(note), "{table}");
    // The bound alone calls it singular: the error is what resolves it.
    let lambda_max = s32["lambda_max"].as_f64().unwrap();
    let lambda_min = s32["lambda_min"].as_f64().unwrap();
    assert!(lambda_min <= 8.0 * f32::EPSILON as f64 / 2.0 * lambda_max);
    let error = s32["measured_error"].as_f64().unwrap();
    let frobenius = k32
        .iter()
        .zip(&k64)
        .map(|(a, b)| (a - b).powi(2))
        .sum::<f64>()
        .sqrt();
    assert!(error <= frobenius * (1.0 + 1e-12), "{error} {frobenius}");
    assert!(
        error >= frobenius / 8f64.sqrt() * (1.0 - 1e-12),
        "{error} {frobenius}"
    );
    let interval: Vec<f64> = note
        .split("kappa between ")
        .nth(1)
        .unwrap()
        .split(" (")
        .next()
        .unwrap()
        .split(" and ")
        .map(|v| v.parse().unwrap())
        .collect();
    let kappa64 = s64["kappa"].as_f64().unwrap();
    assert!(
        interval[0] <= kappa64 && kappa64 <= interval[1],
        "{interval:?} {kappa64}"
    );
    assert!(s64.get("note").is_none() && s64.get("measured_error").is_none());
    // The interval is in the summary as numbers, as `ntk-probe run`'s (ninetieth hostile
    // round, N3), holding f64's kappa; the note's are them to its 7 digits.
    let (low, high) = (
        s32["kappa_low"].as_f64().unwrap(),
        s32["kappa_high"].as_f64().unwrap(),
    );
    assert!(low <= kappa64 && kappa64 <= high, "{s32}");
    assert!(
        (low - interval[0]).abs() <= 1e-6 * low,
        "{low} {interval:?}"
    );
    assert!(
        (high - interval[1]).abs() <= 1e-6 * high,
        "{high} {interval:?}"
    );
    assert!(s64.get("kappa_low").is_none() && s64.get("kappa_high").is_none());
    let (again, kept, _) = run("f32", &["--resume"]);
    assert!(
        stderr(&again).contains("kept (--resume)"),
        "{}",
        stderr(&again)
    );
    assert_eq!(kept, s32);
}

/// Eighty-ninth hostile round, D4: with `probe.output = "full"` the minimum gradient angle
/// was taken over the kernel's (sample, output) rows and named them as samples (`samples 5,
/// 65` for 8 samples), where columns.md says it is empty and `ntk-probe run` leaves it so.
/// It is empty now; summed outputs keep it, between samples.
#[test]
fn a_full_output_kernel_has_no_sample_angle() {
    let dir = tempfile::tempdir().unwrap();
    for (output, angle) in [("full", false), ("sum", true)] {
        let out = dir.path().join(output);
        let o = onnx(&[
            "--config",
            "configs/onnx_mlp.toml",
            "--out",
            out.to_str().unwrap(),
            "--set",
            "onnx.file=\"configs/train_onnx_mlp.onnx\"",
            "--set",
            "data.n=4",
            "--set",
            "data.input_dim=64",
            "--set",
            &format!("probe.output=\"{output}\""),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let summary: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
        assert_eq!(
            summary["min_grad_angle_deg"].is_number(),
            angle,
            "{summary}"
        );
        assert_eq!(
            summary["min_grad_angle_pair"].is_array(),
            angle,
            "{summary}"
        );
        if let Some(pair) = summary["min_grad_angle_pair"].as_array() {
            assert!(pair.iter().all(|i| i.as_u64().unwrap() < 4), "{summary}");
        }
    }
}

/// The hundredth hostile round, D2: a user's file at a name of `run`'s sets
/// (`outputs.npy`, `weights.safetensors`, `blocks.csv`) in an `onnx` set, which the onnx
/// summary does not record, was removed by `onnx` computing its set again (the dry run said
/// "done ... computed again") and by `run --recompute` replacing the set; and `onnx
/// --recompute` removed the user's `weights.safetensors` from a `run` set made without
/// `--save-weights`. Each is refused now, dry run and run, `--recompute` or not, the file
/// kept.
#[test]
fn a_users_file_in_the_other_commands_set_is_refused_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let onnx_set = dir.path().join("onnx");
    let out = onnx_set.to_str().unwrap();
    let made = onnx(&[
        "--config",
        "configs/onnx_mlp.toml",
        "--out",
        out,
        "--set",
        "data.n=8",
    ]);
    assert!(made.status.success(), "{}", stderr(&made));
    let mlp = mlp_config(dir.path());
    let run = |out: &Path, flags: &[&str]| {
        probe()
            .args(["ntk", "--config"])
            .arg(&mlp)
            .arg("--out")
            .arg(out)
            .args(flags)
            .output()
            .unwrap()
    };
    let refused = |o: &Output, file: &Path, what: &str| {
        assert_eq!(o.status.code(), Some(2), "{what}: {}", stderr(o));
        assert!(
            stderr(o).contains("does not record (its run did not write it)"),
            "{what}: {}",
            stderr(o)
        );
        assert_eq!(std::fs::read(file).unwrap(), b"the user's", "{what}");
    };
    for name in ["outputs.npy", "weights.safetensors", "blocks.csv"] {
        let file = onnx_set.join(name);
        std::fs::write(&file, "the user's").unwrap();
        for flags in [&[][..], &["--dry-run"], &["--recompute"], &["--resume"]] {
            let mut args = vec!["--config", "configs/onnx_mlp.toml", "--out", out];
            args.extend(["--set", "data.n=8"]);
            args.extend(flags);
            refused(&onnx(&args), &file, &format!("onnx {name} {flags:?}"));
            for run_flags in [&["--recompute"][..], &["--recompute", "--dry-run"]] {
                let o = run(&onnx_set, run_flags);
                refused(&o, &file, &format!("run {name} {run_flags:?}"));
            }
        }
        std::fs::remove_file(&file).unwrap();
    }
    let run_set = dir.path().join("run");
    assert!(run(&run_set, &[]).status.success());
    let file = run_set.join("weights.safetensors");
    std::fs::write(&file, "the user's").unwrap();
    let out = run_set.to_str().unwrap();
    for flags in [&["--recompute"][..], &["--recompute", "--dry-run"]] {
        let mut args = vec!["--config", "configs/onnx_mlp.toml", "--out", out];
        args.extend(flags);
        refused(
            &onnx(&args),
            &file,
            &format!("onnx into run's set {flags:?}"),
        );
    }
}
