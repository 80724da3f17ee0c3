//! What the workspace's source and document tests share.

use std::path::{Path, PathBuf};

/// Every file under `dir` whose extension is `ext`, depth first.
pub fn files_with(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            files_with(&p, ext, out);
        } else if p.extension().is_some_and(|x| x == ext) {
            out.push(p);
        }
    }
}
