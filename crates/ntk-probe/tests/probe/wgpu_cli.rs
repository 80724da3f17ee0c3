//! A probe sweep on the wgpu backend as a Slurm job meets it (the NTK on wgpu itself is
//! tested in ntk-kernel, `tests/kernel/wgpu_backend.rs`). Built only with `--features wgpu`.
#![cfg(feature = "wgpu")]

use crate::common::*;

/// What a Slurm sweep on the GPU meets (scripts/slurm/submit.sh --gpu, collect.sbatch): the
/// points record the backend that computed them, so the collect job, on a node without the
/// GPU, names it (`--set probe.device=wgpu`, `--device wgpu`); its checks plan for the
/// device without opening it. Without the name the points are another config's.
#[test]
fn a_sweep_on_wgpu_is_done_for_the_checks_that_name_its_device() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_file(
        dir.path(),
        "sweep.toml",
        r#"
[sweep]
depths = [1, 2]
activations = ["relu"]
seeds = [1]
protocols = ["whole"]
out = "unused"
theory = false
[data]
dataset = "synthetic"
n = 20
input_dim = 5
[model]
width = 16
depth = 1
activation = "relu"
[probe]
precision = "f32"
"#,
    );
    let out = dir.path().join("out");
    let sweep = |extra: &[&str]| {
        probe()
            .args(["sweep", "--config"])
            .arg(&cfg)
            .arg("--out")
            .arg(&out)
            .args(extra)
            .output()
            .unwrap()
    };
    let made = sweep(&["--device", "wgpu"]);
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let planned = sweep(&["--device", "wgpu", "--dry-run"]);
    let said = String::from_utf8_lossy(&planned.stdout);
    assert!(planned.status.success(), "{said}");
    assert_eq!(said.matches(" done ").count(), 2, "{said}");
    assert!(said.contains("backend: wgpu f32"), "{said}");
    let unnamed = sweep(&["--dry-run"]);
    assert_eq!(unnamed.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&unnamed.stdout).contains(" stale "),
        "{}",
        String::from_utf8_lossy(&unnamed.stdout)
    );
    let collect = |extra: &[&str]| {
        probe()
            .arg("collect")
            .arg(&out)
            .arg("--config")
            .arg(&cfg)
            .args(extra)
            .output()
            .unwrap()
    };
    let named = collect(&["--set", "probe.device=wgpu"]);
    assert!(
        named.status.success(),
        "{}",
        String::from_utf8_lossy(&named.stderr)
    );
    let unnamed = collect(&[]);
    assert_eq!(unnamed.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&unnamed.stderr).contains("backend"),
        "{}",
        String::from_utf8_lossy(&unnamed.stderr)
    );
}
