//! A run's inputs kept apart from what it writes: an input file inside the output
//! directory a run replaces as one set (or its phase files), or the same file as one there
//! through a hard link, would be lost when the run replaces it ([`check_outside`]). Both
//! tools refuse such a run before any work, naming the key, the file and the place.

use std::path::{Path, PathBuf};

/// An input of a run found inside a place the run writes and replaces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InsideOutput {
    /// The config key that names the input (`data.x`, `onnx.file`, ...).
    pub key: &'static str,
    /// The input as the config gives it.
    pub path: PathBuf,
    /// Where it is, in words: `is inside OUT`, `is the same file (a hard link) as OUT/f`.
    pub how: String,
    /// Whether it is there as a hard link (the input's own name lies outside).
    pub linked: bool,
}

impl InsideOutput {
    /// What the run would do to the input, in words. Inside the place: remove it with the
    /// set it replaces. A hard link: the run replaces the name there by a rename, so the
    /// input's own name keeps the old content; refused all the same, the input being one of
    /// the run's outputs until then (ninety-third hostile round, N1: "lost" was said of
    /// both).
    pub fn consequence(&self) -> &'static str {
        if self.linked {
            "the run would part the two names by replacing the one there, so an input and an \
             output would have been one file; keep a copy, not a hard link"
        } else {
            "the file would be lost"
        }
    }
}

/// Refuses an input (`key`, path; `None`: not given) inside one of `places`: its resolved
/// path under a place, or (a hard link) the same file, by device and inode, as one under a
/// place (a directory input: as one of its files). `FILE.npz:MEMBER` names FILE. Places
/// that do not exist yet hold nothing.
pub fn check_outside<'a>(
    inputs: impl IntoIterator<Item = (&'static str, Option<&'a Path>)>,
    places: &[PathBuf],
) -> Result<(), InsideOutput> {
    let places: Vec<PathBuf> = places
        .iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .collect();
    // The files under the places by (device, inode), read once and only when an input has
    // more than one link.
    let mut linked: Option<std::collections::HashMap<(u64, u64), PathBuf>> = None;
    for (key, path) in inputs {
        let Some(path) = path else { continue };
        // `FILE.npz:MEMBER` names a member of FILE.
        let file = path
            .to_str()
            .and_then(|t| t.rsplit_once(':'))
            .map(|(f, _)| Path::new(f))
            .filter(|f| !path.exists() && f.exists())
            .unwrap_or(path);
        let Ok(resolved) = std::fs::canonicalize(file) else {
            continue;
        };
        let refused = |how: String, linked: bool| InsideOutput {
            key,
            path: path.to_path_buf(),
            how,
            linked,
        };
        if let Some(place) = places.iter().find(|p| resolved.starts_with(p)) {
            return Err(refused(format!("is inside {}", place.display()), false));
        }
        for (id, file) in hard_linked(&resolved) {
            let there = linked.get_or_insert_with(|| files_by_inode(&places));
            if let Some(twin) = there.get(&id) {
                let what = if file == resolved {
                    "is".to_string()
                } else {
                    format!("holds {}, which is", file.display())
                };
                return Err(refused(
                    format!("{what} the same file (a hard link) as {}", twin.display()),
                    true,
                ));
            }
        }
    }
    Ok(())
}

/// The regular files of the input `path` (itself, or a directory's files one level down)
/// that have more than one link, by (device, inode).
fn hard_linked(path: &Path) -> Vec<((u64, u64), PathBuf)> {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::metadata(path) else {
        return Vec::new();
    };
    let files: Vec<(PathBuf, std::fs::Metadata)> = if meta.is_dir() {
        std::fs::read_dir(path)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| Some((e.path(), e.path().metadata().ok()?)))
            .collect()
    } else {
        vec![(path.to_path_buf(), meta)]
    };
    files
        .into_iter()
        .filter(|(_, m)| m.is_file() && m.nlink() > 1)
        .map(|(p, m)| ((m.dev(), m.ino()), p))
        .collect()
}

/// Every regular file under `places` (links not followed) by (device, inode).
fn files_by_inode(places: &[PathBuf]) -> std::collections::HashMap<(u64, u64), PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let mut found = std::collections::HashMap::new();
    let mut dirs: Vec<PathBuf> = places.to_vec();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
                continue;
            };
            if meta.is_dir() {
                dirs.push(entry.path());
            } else if meta.is_file() && meta.nlink() > 1 {
                found.insert((meta.dev(), meta.ino()), entry.path());
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_input_inside_or_linked_into_a_place_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let inside = out.join("x.npy");
        std::fs::write(&inside, b"x").unwrap();
        let apart = dir.path().join("y.npy");
        std::fs::write(&apart, b"y").unwrap();
        let places = [out.clone()];
        assert!(check_outside([("data.x", Some(apart.as_path()))], &places).is_ok());
        let e = check_outside([("data.x", Some(inside.as_path()))], &places).unwrap_err();
        assert_eq!(e.key, "data.x");
        assert!(e.how.starts_with("is inside"), "{}", e.how);
        // A hard link of a file of the place, and a member of an archive inside it.
        let link = dir.path().join("link.npy");
        std::fs::hard_link(&inside, &link).unwrap();
        let e = check_outside([("data.labels", Some(link.as_path()))], &places).unwrap_err();
        assert!(e.how.contains("hard link"), "{}", e.how);
        let npz = out.join("d.npz");
        std::fs::write(&npz, b"z").unwrap();
        let member = PathBuf::from(format!("{}:x", npz.display()));
        assert!(check_outside([("data.x", Some(member.as_path()))], &places).is_err());
        // A place that does not exist holds nothing; an input not given is passed over.
        assert!(
            check_outside(
                [("data.x", Some(inside.as_path()))],
                &[dir.path().join("new")]
            )
            .is_ok()
        );
        assert!(check_outside([("data.x", None)], &places).is_ok());
    }
}
