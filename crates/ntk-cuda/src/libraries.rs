//! The shared libraries the GPU crates load at run time, asked for with `dlopen` before any
//! call into them: cudarc loads each at its first use and panics when one is missing, so a
//! crate asks first for those it needs ([`probe`]) and turns a missing library into an error
//! that names it and says where to get it.
//!
//! The names are among those cudarc tries for CUDA 13 and cuDNN 9 (`libcublas.so.13`,
//! `libnvrtc.so.13`, `libcusolver.so.12`, `libcudnn.so.9`, each also without its version).
//! PyPI's wheels carry them (`pip install nvidia-cudnn-cu13 nvidia-cublas nvidia-cuda-nvrtc
//! nvidia-cusolver`; PyTorch's CUDA builds install them too); the directories go on
//! `LD_LIBRARY_PATH`.

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
    /// The file names tried, in order.
    pub fn names(self) -> &'static [&'static str] {
        match self {
            Self::Driver => &["libcuda.so.1", "libcuda.so"],
            Self::Cudnn => &["libcudnn.so.9", "libcudnn.so"],
            Self::Cublas => &["libcublas.so.13", "libcublas.so"],
            Self::Nvrtc => &["libnvrtc.so.13", "libnvrtc.so"],
            Self::Cusolver => &["libcusolver.so.12", "libcusolver.so"],
        }
    }

    /// Where a researcher gets it.
    pub fn remedy(self) -> &'static str {
        match self {
            Self::Driver => "install the NVIDIA driver (this needs an NVIDIA GPU)",
            Self::Cudnn => {
                "`pip install nvidia-cudnn-cu13` (or a CUDA build of PyTorch) and put its \
                 nvidia/cudnn/lib directory on LD_LIBRARY_PATH"
            }
            Self::Cublas => {
                "`pip install nvidia-cublas` (or a CUDA 13 toolkit) and put its lib \
                 directory on LD_LIBRARY_PATH"
            }
            Self::Nvrtc => {
                "`pip install nvidia-cuda-nvrtc` (or a CUDA 13 toolkit) and put its lib \
                 directory on LD_LIBRARY_PATH"
            }
            Self::Cusolver => {
                "`pip install nvidia-cusolver` (it brings cuSPARSE and nvJitLink; or a CUDA 13 \
                 toolkit, or a CUDA build of PyTorch) and put its lib directories on \
                 LD_LIBRARY_PATH"
            }
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
        assert!(s.contains("pip install nvidia-cudnn-cu13"), "{s}");
        assert!(s.contains("LD_LIBRARY_PATH"), "{s}");
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
