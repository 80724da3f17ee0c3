//! The shared libraries the GPU crates load at run time, asked for with `dlopen` before any
//! call into them: cudarc loads each at its first use and panics when one is missing, so a
//! crate asks first for those it needs ([`probe`]) and turns a missing library into an error
//! that names it and says where to get it.
//!
//! The names follow the CUDA major version of this build's bindings
//! ([`crate::version::BUILT`]) and are among those cudarc tries: for CUDA 13
//! `libcublas.so.13`, `libnvrtc.so.13`, `libcusolver.so.12`; for CUDA 12 `libcublas.so.12`,
//! `libnvrtc.so.12`, `libcusolver.so.11`; `libcudnn.so.9` for both; each also without its
//! version. PyPI's wheels carry them (CUDA 13: `pip install nvidia-cudnn-cu13 nvidia-cublas
//! nvidia-cuda-nvrtc nvidia-cusolver`; CUDA 12: the `-cu12` wheels; PyTorch's CUDA builds
//! install them too); the directories go on `LD_LIBRARY_PATH`.

use std::fmt;

/// One library a GPU crate needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Library {
    /// The driver API (`libcuda.so.1`), installed with the NVIDIA driver.
    Driver,
    Cudnn,
    Cublas,
    Nvrtc,
    /// cuSOLVER (which loads cuBLAS, cuBLASLt, cuSPARSE and nvJitLink in turn).
    Cusolver,
}

impl Library {
    /// The file names tried, in order, for this build's CUDA version.
    pub fn names(self) -> &'static [&'static str] {
        self.names_for(crate::version::BUILT.major)
    }

    /// The file names tried for CUDA major version `major` (12 or 13).
    pub fn names_for(self, major: u32) -> &'static [&'static str] {
        let cuda12 = major == 12;
        match self {
            Self::Driver => &["libcuda.so.1", "libcuda.so"],
            Self::Cudnn => &["libcudnn.so.9", "libcudnn.so"],
            Self::Cublas if cuda12 => &["libcublas.so.12", "libcublas.so"],
            Self::Cublas => &["libcublas.so.13", "libcublas.so"],
            Self::Nvrtc if cuda12 => &["libnvrtc.so.12", "libnvrtc.so"],
            Self::Nvrtc => &["libnvrtc.so.13", "libnvrtc.so"],
            Self::Cusolver if cuda12 => &["libcusolver.so.11", "libcusolver.so"],
            Self::Cusolver => &["libcusolver.so.12", "libcusolver.so"],
        }
    }

    /// Where a researcher gets it, for this build's CUDA version.
    pub fn remedy(self) -> String {
        self.remedy_for(crate::version::BUILT.major)
    }

    /// Where a researcher gets it for CUDA major version `major` (12 or 13): PyPI's wheel of
    /// that version (CUDA 13's cuBLAS, NVRTC and cuSOLVER wheels carry no suffix), or a
    /// toolkit.
    pub fn remedy_for(self, major: u32) -> String {
        let wheel = |name: &str| {
            if major == 12 || name == "nvidia-cudnn" {
                format!("{name}-cu{major}")
            } else {
                name.to_string()
            }
        };
        match self {
            Self::Driver => "install the NVIDIA driver (this needs an NVIDIA GPU)".into(),
            Self::Cudnn => format!(
                "`pip install {}` (or a CUDA {major} build of PyTorch) and put its \
                 nvidia/cudnn/lib directory on LD_LIBRARY_PATH",
                wheel("nvidia-cudnn")
            ),
            Self::Cublas => format!(
                "`pip install {}` (or a CUDA {major} toolkit) and put its lib directory on \
                 LD_LIBRARY_PATH",
                wheel("nvidia-cublas")
            ),
            Self::Nvrtc => format!(
                "`pip install {}` (or a CUDA {major} toolkit) and put its lib directory on \
                 LD_LIBRARY_PATH",
                wheel("nvidia-cuda-nvrtc")
            ),
            Self::Cusolver => format!(
                "`pip install {}` (it brings cuSPARSE and nvJitLink; or a CUDA {major} \
                 toolkit, or a CUDA {major} build of PyTorch) and put its lib directories on \
                 LD_LIBRARY_PATH",
                wheel("nvidia-cusolver")
            ),
        }
    }
}

impl fmt::Display for Library {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.names()[0])
    }
}

/// A library that did not load, with the loader's message for its first name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotLoaded {
    pub library: Library,
    pub reason: String,
}

impl fmt::Display for NotLoaded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}): {}",
            self.library,
            self.reason,
            self.library.remedy()
        )
    }
}

/// The libraries that did not load, and what needed them (`the cuDNN engine`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missing {
    pub user: &'static str,
    pub libraries: Vec<NotLoaded>,
}

impl fmt::Display for Missing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} cannot load ", self.user)?;
        for (k, lib) in self.libraries.iter().enumerate() {
            let sep = if k == 0 { "" } else { "; " };
            write!(f, "{sep}{lib}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Missing {}

/// Whether `lib` loads under one of its names: [`NotLoaded`] with the loader's message for
/// its first name otherwise.
pub fn load(lib: Library) -> Result<(), NotLoaded> {
    let mut first = None;
    for name in lib.names() {
        // SAFETY: loading runs the library's initializers; these are NVIDIA's libraries
        // (or whatever the user put under their names), loaded as cudarc would load them.
        match unsafe { libloading::Library::new(*name) } {
            Ok(l) => {
                // Kept loaded: cudarc loads it again by the same name.
                std::mem::forget(l);
                return Ok(());
            }
            Err(e) => {
                first.get_or_insert(e.to_string());
            }
        }
    }
    Err(NotLoaded {
        library: lib,
        reason: first.unwrap_or_default(),
    })
}

/// Every library of `needed` that does not load, as [`Missing`] for `user`.
pub fn probe(user: &'static str, needed: &[Library]) -> Result<(), Missing> {
    let libraries: Vec<NotLoaded> = needed.iter().filter_map(|&l| load(l).err()).collect();
    if libraries.is_empty() {
        Ok(())
    } else {
        Err(Missing { user, libraries })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Library; 5] = [
        Library::Driver,
        Library::Cudnn,
        Library::Cublas,
        Library::Nvrtc,
        Library::Cusolver,
    ];

    #[test]
    fn a_missing_library_is_named_with_its_remedy() {
        let m = Missing {
            user: "the cuDNN engine",
            libraries: vec![NotLoaded {
                library: Library::Cudnn,
                reason: "not found".into(),
            }],
        };
        let s = m.to_string();
        assert!(s.starts_with("the cuDNN engine cannot load"), "{s}");
        assert!(s.contains("libcudnn.so.9 (not found)"), "{s}");
        let wheel = format!("pip install nvidia-cudnn-cu{}", crate::version::BUILT.major);
        assert!(s.contains(&wheel), "{s}");
        assert!(s.contains("LD_LIBRARY_PATH"), "{s}");
    }

    #[test]
    fn names_and_wheels_follow_the_cuda_major_version() {
        let first = |l: Library, major| l.names_for(major)[0];
        assert_eq!(first(Library::Cublas, 13), "libcublas.so.13");
        assert_eq!(first(Library::Cublas, 12), "libcublas.so.12");
        assert_eq!(first(Library::Nvrtc, 13), "libnvrtc.so.13");
        assert_eq!(first(Library::Nvrtc, 12), "libnvrtc.so.12");
        assert_eq!(first(Library::Cusolver, 13), "libcusolver.so.12");
        assert_eq!(first(Library::Cusolver, 12), "libcusolver.so.11");
        for major in [12, 13] {
            assert_eq!(first(Library::Cudnn, major), "libcudnn.so.9");
            assert_eq!(first(Library::Driver, major), "libcuda.so.1");
        }
        let r = |l: Library, major| l.remedy_for(major);
        assert!(r(Library::Cudnn, 13).contains("`pip install nvidia-cudnn-cu13`"));
        assert!(r(Library::Cudnn, 12).contains("`pip install nvidia-cudnn-cu12`"));
        assert!(r(Library::Cublas, 13).contains("`pip install nvidia-cublas`"));
        assert!(r(Library::Cublas, 12).contains("`pip install nvidia-cublas-cu12`"));
        assert!(r(Library::Nvrtc, 12).contains("`pip install nvidia-cuda-nvrtc-cu12`"));
        assert!(r(Library::Cusolver, 12).contains("`pip install nvidia-cusolver-cu12`"));
        assert!(r(Library::Cusolver, 13).contains("a CUDA 13 toolkit"));
        // This build's: the names it was built for.
        let built = crate::version::BUILT.major;
        assert_eq!(Library::Cublas.names(), Library::Cublas.names_for(built));
    }

    #[test]
    fn probing_reports_each_library_that_does_not_load() {
        // Wherever it runs: what probe says agrees with loading each one.
        match probe("a test", &ALL) {
            Ok(()) => ALL.iter().for_each(|&l| assert!(load(l).is_ok())),
            Err(m) => {
                assert!(!m.libraries.is_empty());
                for l in &m.libraries {
                    assert!(load(l.library).is_err(), "{l}");
                    assert!(!l.reason.is_empty(), "{l}: a reason");
                }
                eprintln!("(this machine lacks: {m})");
            }
        }
    }
}
