//! Records the git commit the crate is built from (`NTK_GIT_COMMIT`, read by
//! `provenance::GIT_COMMIT`; `unknown` outside a git checkout).

use std::path::PathBuf;
use std::process::Command;

/// `git` in the crate's directory, trimmed stdout on success.
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Sets `NTK_GIT_COMMIT` and reruns when HEAD moves (only existing files are watched: a
/// missing one would make cargo rerun the script on every build).
fn record_git_commit() {
    let commit = git(&["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo::rustc-env=NTK_GIT_COMMIT={commit}");
    let Some(git_dir) = git(&["rev-parse", "--absolute-git-dir"]).map(PathBuf::from) else {
        return;
    };
    let mut watch = vec![git_dir.join("HEAD"), git_dir.join("packed-refs")];
    if let Some(r) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watch.push(git_dir.join(r));
    }
    for f in watch.iter().filter(|f| f.is_file()) {
        println!("cargo::rerun-if-changed={}", f.display());
    }
}

fn main() {
    record_git_commit();
}
