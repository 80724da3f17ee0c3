//! Links the system OpenBLAS for the host linear algebra (`src/linalg.rs`) when it is
//! installed (Debian's `libopenblas-dev`, which `scripts/setup.sh` installs), and sets
//! `cfg(ntk_openblas)`; without it the crate falls back to faer (pure Rust, ~2x slower
//! here) and says so once at build time. `NTK_OPENBLAS=0` forces the fallback; the cargo
//! feature `openblas` makes a missing library an error; `OPENBLAS_LIB_DIR` names a
//! non-standard place.

use std::path::Path;

const DIRS: [&str; 6] = [
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
    "/usr/local/lib",
    "/opt/homebrew/opt/openblas/lib",
];

fn main() {
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
