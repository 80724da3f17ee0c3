//! Shared helpers of the probe's tests: the binary, a run of it, a config file.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The `ntk-probe` binary of this build.
pub fn probe() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ntk-probe"))
}

/// `ntk-probe ntk --config CFG --out OUT`, run to completion.
pub fn ntk_cli(cfg: impl AsRef<Path>, out: impl AsRef<Path>) -> std::process::Output {
    command_cli("ntk", cfg, out, &[])
}

/// `ntk-probe COMMAND --config CFG --out OUT EXTRA...`, run to completion.
pub fn command_cli(
    command: &str,
    cfg: impl AsRef<Path>,
    out: impl AsRef<Path>,
    extra: &[&str],
) -> std::process::Output {
    probe()
        .args([command, "--config"])
        .arg(cfg.as_ref())
        .arg("--out")
        .arg(out.as_ref())
        .args(extra)
        .output()
        .unwrap()
}

/// Writes `text` to `dir/name` (a config for the binary) and returns the path.
pub fn write_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}
