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
    // Relative to the package where the git directory is the checkout's own: cargo reads
    // a relative path against the package's directory as it is now, so a checkout moved, or
    // a target directory shared by two checkouts, watches this checkout's HEAD (eighty-fifth
    // hostile round, N4: binaries built in one checkout over a target directory made in
    // another recorded the other's commit, whose unchanged files the script watched).
    let package = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    for f in watch.iter().filter(|f| f.is_file()) {
        let shown = relative_to(f, &package).unwrap_or_else(|| f.clone());
        println!("cargo::rerun-if-changed={}", shown.display());
    }
}

/// `path` relative to the directory `base` (`../../.git/HEAD`), where both are absolute and
/// share a first component; `None` otherwise.
fn relative_to(path: &std::path::Path, base: &std::path::Path) -> Option<PathBuf> {
    let (p, b): (Vec<_>, Vec<_>) = (path.components().collect(), base.components().collect());
    let common = p.iter().zip(&b).take_while(|(x, y)| x == y).count();
    if !path.is_absolute() || !base.is_absolute() || common < 2 {
        return None;
    }
    let mut r = PathBuf::new();
    for _ in common..b.len() {
        r.push("..");
    }
    for c in &p[common..] {
        r.push(c);
    }
    Some(r)
}

fn main() {
    record_git_commit();
}
