//! Records the git commit the crate is built from (`NTK_GIT_COMMIT`, read by
//! `provenance::GIT_COMMIT`; `unknown` outside a git checkout), with `+dirty` where the
//! workspace's sources differ from it (ninety-fifth hostile round, D1: a build of
//! uncommitted changes recorded the commit before them, which reproduces other numbers).

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

/// The sources a binary of the workspace is built from, relative to this package: every
/// crate's `src/`, `build.rs` and `Cargo.toml` (not its tests, which change no binary),
/// and the workspace's `Cargo.toml` and `Cargo.lock`. The path dependencies outside
/// `crates/` (the fuzz targets, the example) build no tool.
fn sources() -> Vec<PathBuf> {
    let crates = PathBuf::from("..");
    let mut found = vec![
        PathBuf::from("../../Cargo.toml"),
        PathBuf::from("../../Cargo.lock"),
    ];
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&crates)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    dirs.sort();
    for dir in dirs {
        found.extend(["src", "build.rs", "Cargo.toml"].map(|f| dir.join(f)));
    }
    found.retain(|p| p.exists());
    found
}

/// Sets `NTK_GIT_COMMIT` (`+dirty` where [`sources`] differ from HEAD's) and reruns when
/// HEAD moves or a source changes (only existing files are watched: a missing one would
/// make cargo rerun the script on every build).
fn record_git_commit() {
    let Some(commit) = git(&["rev-parse", "HEAD"]) else {
        println!("cargo::rustc-env=NTK_GIT_COMMIT=unknown");
        return;
    };
    let sources = sources();
    let mut diff = vec!["diff", "--quiet", "HEAD", "--"];
    let shown: Vec<String> = sources.iter().map(|p| p.display().to_string()).collect();
    diff.extend(shown.iter().map(String::as_str));
    // `git diff --quiet` exits 1 where the sources differ: `None` here.
    let dirty = git(&diff).is_none();
    let stamp = if dirty {
        format!("{commit}+dirty")
    } else {
        commit
    };
    println!("cargo::rustc-env=NTK_GIT_COMMIT={stamp}");
    for source in &sources {
        println!("cargo::rerun-if-changed={}", source.display());
    }
    let Some(git_dir) = git(&["rev-parse", "--absolute-git-dir"]).map(PathBuf::from) else {
        return;
    };
    let mut watch = vec![
        git_dir.join("HEAD"),
        git_dir.join("packed-refs"),
        git_dir.join("index"),
    ];
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
