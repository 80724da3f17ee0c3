//! Links the system OpenBLAS for the host linear algebra (`src/linalg.rs`) when it is
//! installed (Debian's `libopenblas-dev`, which `scripts/setup.sh` installs), and sets
//! `cfg(ntk_openblas)`; without it the crate falls back to faer (pure Rust, ~2x slower
//! here) and says so once at build time. `NTK_OPENBLAS=0` forces the fallback; the cargo
//! feature `openblas` makes a missing library an error; `OPENBLAS_LIB_DIR` names a
//! non-standard place.
//!
//! It also records the git commit the crate is built from (`NTK_GIT_COMMIT`, read by
//! `provenance::GIT_COMMIT`; `unknown` outside a git checkout).

use std::path::{Path, PathBuf};
use std::process::Command;

const DIRS: [&str; 6] = [
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
    "/usr/local/lib",
    "/opt/homebrew/opt/openblas/lib",
];

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
    println!("cargo::rustc-check-cfg=cfg(ntk_openblas)");
    println!("cargo::rerun-if-env-changed=NTK_OPENBLAS");
    println!("cargo::rerun-if-env-changed=OPENBLAS_LIB_DIR");
    let required = std::env::var_os("CARGO_FEATURE_OPENBLAS").is_some();
    let disabled = std::env::var("NTK_OPENBLAS").is_ok_and(|v| v == "0");
    let custom = std::env::var("OPENBLAS_LIB_DIR").ok();
    let mut dirs: Vec<String> = custom.into_iter().collect();
    dirs.extend(DIRS.iter().map(|d| d.to_string()));
    for d in dirs.iter().filter(|d| Path::new(d).is_dir()) {
        println!("cargo::rerun-if-changed={d}");
    }
    let found = dirs.iter().find(|d| {
        ["libopenblas.so", "libopenblas.dylib"]
            .iter()
            .any(|f| Path::new(d).join(f).exists())
    });
    match found {
        Some(dir) if !disabled || required => {
            println!("cargo::rustc-link-search=native={dir}");
            println!("cargo::rustc-link-lib=openblas");
            println!("cargo::rustc-cfg=ntk_openblas");
        }
        None if required => {
            panic!(
                "feature `openblas`: libopenblas not found in {dirs:?}; install it \
                 (Debian: libopenblas-dev, which scripts/setup.sh installs) or set \
                 OPENBLAS_LIB_DIR"
            );
        }
        _ if disabled => {}
        _ => println!(
            "cargo::warning=OpenBLAS not found: the host GEMMs and the eigensolver fall back \
             to faer (~2x slower); `bash scripts/setup.sh` installs libopenblas-dev"
        ),
    }
}
