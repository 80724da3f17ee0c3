//! Where the data lives by default.
//!
//! Layout under the data root:
//!
//! ```text
//! <root>/mnist/          train-images-idx3-ubyte, ... (raw or .gz)
//! <root>/fashion-mnist/  train-images-idx3-ubyte.gz, ...
//! <root>/cifar-10/       data_batch_1.bin .. data_batch_5.bin, test_batch.bin, batches.meta.txt
//! <root>/digits/         digits.csv.gz
//! ```
//!
//! The root is `$NTK_DATA_DIR` when set, else `datasets/data` in the workspace root.
//! Every loader also takes an explicit directory, which overrides both.

use std::path::{Path, PathBuf};

/// Environment variable naming a data root that holds `mnist/`, `fashion-mnist/`, `cifar-10/`
/// and `digits/`.
pub const DATA_DIR_ENV: &str = "NTK_DATA_DIR";

/// The file whose presence marks the workspace root.
const ROOT_MARKER: &str = "datasets/fetch.sh";

/// The workspace root: the nearest ancestor of the current directory that contains
/// `datasets/fetch.sh`, else the directory two levels above this crate's manifest
/// (correct when built from the workspace), without `..` in it, so that messages name
/// `WORKSPACE/datasets/...` rather than `crates/ntk-data/../../datasets/...`.
pub fn workspace_root() -> PathBuf {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| find_root_from(&cwd))
        .unwrap_or_else(build_root)
}

/// The workspace this crate was built in: two levels above its manifest.
fn build_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .nth(2)
        .map_or_else(|| manifest.join("../.."), Path::to_path_buf)
}

/// The nearest ancestor of `start` (itself included) containing `datasets/fetch.sh`.
pub fn find_root_from(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|dir| dir.join(ROOT_MARKER).is_file())
        .map(Path::to_path_buf)
}

/// The data root: `$NTK_DATA_DIR` when set and non-empty, else `<workspace root>/datasets/data`.
pub fn default_data_root() -> PathBuf {
    match std::env::var_os(DATA_DIR_ENV) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => workspace_root().join("datasets").join("data"),
    }
}

/// The default directory of one data set: `default_data_root()/<subdir>`.
pub fn default_dir(subdir: &str) -> PathBuf {
    default_data_root().join(subdir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_marker_upwards() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("datasets")).unwrap();
        std::fs::write(dir.path().join(ROOT_MARKER), "").unwrap();
        let deep = dir.path().join("a/b/c");
        std::fs::create_dir_all(&deep).unwrap();
        assert_eq!(find_root_from(&deep).unwrap(), dir.path());
        let other = tempfile::tempdir().unwrap();
        assert_eq!(find_root_from(other.path()), None);
    }

    #[test]
    fn workspace_root_holds_the_fetch_script() {
        assert!(workspace_root().join(ROOT_MARKER).is_file());
        // Outside the workspace (no marker above the current directory) the build's own
        // root, named without `..` (issue 66 item 7: `crates/ntk-data/../../datasets/...`).
        let root = build_root();
        assert!(root.join(ROOT_MARKER).is_file(), "{}", root.display());
        assert!(
            root.components()
                .all(|c| c != std::path::Component::ParentDir),
            "{}",
            root.display()
        );
        if std::env::var_os(DATA_DIR_ENV).is_none() {
            assert!(default_data_root().ends_with("datasets/data"));
            assert!(default_dir("mnist").ends_with("datasets/data/mnist"));
        }
    }
}
