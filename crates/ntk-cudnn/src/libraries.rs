//! The shared libraries the engine loads at run time, probed with `dlopen` before any call
//! into them: cudarc loads each at its first use and panics when one is missing, so the
//! engine asks first and turns a missing library into an error that names it and says where
//! to get it.
//!
//! The names are those cudarc tries for CUDA 13 and cuDNN 9 (`libcublas.so.13`,
//! `libnvrtc.so.13`, `libcudnn.so.9`, each also without its version). PyPI's wheels carry
//! them (`pip install nvidia-cudnn-cu13 nvidia-cublas nvidia-cuda-nvrtc`; PyTorch's CUDA
//! builds install them too); the directories go on `LD_LIBRARY_PATH`.

use std::fmt;

/// One library the engine needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Library {
    /// The driver API (`libcuda.so.1`), installed with the NVIDIA driver.
    Driver,
    Cudnn,
    Cublas,
    Nvrtc,
}

impl Library {
    pub const ALL: [Self; 4] = [Self::Driver, Self::Cudnn, Self::Cublas, Self::Nvrtc];

    /// The file names tried, in order.
    pub fn names(self) -> &'static [&'static str] {
        match self {
            Self::Driver => &["libcuda.so.1", "libcuda.so"],
            Self::Cudnn => &["libcudnn.so.9", "libcudnn.so"],
            Self::Cublas => &["libcublas.so.13", "libcublas.so"],
            Self::Nvrtc => &["libnvrtc.so.13", "libnvrtc.so"],
        }
    }

    /// Where a researcher gets it.
    pub fn remedy(self) -> &'static str {
        match self {
            Self::Driver => "install the NVIDIA driver (the engine needs an NVIDIA GPU)",
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
        }
    }
}

impl fmt::Display for Library {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.names()[0])
    }
}

/// The libraries that did not load, with the loader's reason for the first name of each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missing(pub Vec<(Library, String)>);

impl fmt::Display for Missing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the cuDNN engine cannot load ")?;
        for (k, (lib, why)) in self.0.iter().enumerate() {
            let sep = if k == 0 { "" } else { "; " };
            write!(f, "{sep}{lib} ({why}): {}", lib.remedy())?;
        }
        Ok(())
    }
}

impl std::error::Error for Missing {}

/// Whether `lib` loads under one of its names: `Err` with the loader's message otherwise.
pub fn load(lib: Library) -> Result<(), String> {
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
    Err(first.unwrap_or_default())
}

/// Every library of [`Library::ALL`] that does not load.
pub fn probe() -> Result<(), Missing> {
    let missing: Vec<(Library, String)> = Library::ALL
        .iter()
        .filter_map(|&l| load(l).err().map(|why| (l, why)))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(Missing(missing))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_library_is_named_with_its_remedy() {
        let m = Missing(vec![(Library::Cudnn, "not found".into())]);
        let s = m.to_string();
        assert!(s.contains("libcudnn.so.9 (not found)"), "{s}");
        assert!(s.contains("pip install nvidia-cudnn-cu13"), "{s}");
        assert!(s.contains("LD_LIBRARY_PATH"), "{s}");
    }

    #[test]
    fn probing_reports_each_library_that_does_not_load() {
        // Wherever it runs: what probe says agrees with loading each one.
        match probe() {
            Ok(()) => Library::ALL.iter().for_each(|&l| assert!(load(l).is_ok())),
            Err(Missing(m)) => {
                assert!(!m.is_empty());
                for (l, why) in &m {
                    assert!(load(*l).is_err(), "{l}");
                    assert!(!why.is_empty(), "{l}: a reason");
                }
                eprintln!("(this machine lacks: {})", Missing(m));
            }
        }
    }
}
