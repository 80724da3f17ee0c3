//! CUDA versions: the one this build's bindings follow ([`BUILT`], chosen when cudarc was
//! built), the newest the installed driver supports ([`driver`]), and whether the two, and
//! NVRTC's PTX, go together ([`check_driver`], [`check_ptx`]).
//!
//! The bindings' version is chosen at build time by `CUDARC_CUDA_VERSION` (cudarc's build
//! script reads it): this workspace's `.cargo/config.toml` sets `13000`, and a researcher
//! whose cluster has CUDA 12 builds with `CUDARC_CUDA_VERSION=12080` (any 12.x), which that
//! default does not override. The library names ([`crate::libraries`]) and the advice follow
//! the built major version.

use std::fmt;

use crate::call::{CallError, Lib};

/// A CUDA version as CUDA numbers it (`12080` is 12.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CudaVersion {
    pub major: u32,
    pub minor: u32,
}

impl CudaVersion {
    /// From CUDA's code: `1000 * major + 10 * minor` (`cuDriverGetVersion`, `CUDA_VERSION`).
    pub const fn from_code(code: u32) -> Self {
        Self {
            major: code / 1000,
            minor: (code % 1000) / 10,
        }
    }

    /// CUDA's code for it, as `CUDARC_CUDA_VERSION` takes it (`12080`).
    pub const fn code(self) -> u32 {
        1000 * self.major + 10 * self.minor
    }
}

impl fmt::Display for CudaVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// The CUDA version of this build's bindings (cudarc's `CUDA_VERSION`).
pub const BUILT: CudaVersion = CudaVersion::from_code(cudarc::driver::sys::CUDA_VERSION);

const _: () = assert!(
    BUILT.major == 12 || BUILT.major == 13,
    "ntk-cuda supports CUDA 12 and 13: build with CUDARC_CUDA_VERSION=13000 or 12000 to 12090"
);

/// The newest CUDA version the installed driver supports (`cuDriverGetVersion`; needs no
/// `cuInit`). The caller asks for libcuda first ([`crate::libraries::probe`]): cudarc
/// panics on a missing one.
pub fn driver() -> Result<CudaVersion, CallError> {
    let mut code: std::ffi::c_int = 0;
    // SAFETY: `cuDriverGetVersion` writes one int through the pointer, a live local; it
    // needs no context and no `cuInit`, and libcuda loads (the caller probed it).
    let status = unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut code) };
    crate::call::check(
        Lib::Driver,
        "reading the driver's CUDA version",
        status,
        cudarc::driver::sys::CUresult::CUDA_SUCCESS,
    )?;
    Ok(CudaVersion::from_code(u32::try_from(code).unwrap_or(0)))
}

/// Whether a driver that supports CUDA `driver` runs bindings of CUDA `built`: the same
/// major version or a newer one (CUDA's minor-version compatibility runs any 12.x build on
/// a 12.y driver for the calls both have; a CUDA 13 build needs a CUDA 13 driver, 580 or
/// later).
pub fn check_driver(built: CudaVersion, driver: CudaVersion) -> Result<(), CallError> {
    if driver.major >= built.major {
        return Ok(());
    }
    Err(CallError {
        library: Lib::Driver,
        what: "checking the driver's CUDA version",
        status: format!(
            "the NVIDIA driver supports CUDA {driver}, and this build's bindings are CUDA \
             {built}: build for the driver's CUDA with CUDARC_CUDA_VERSION={} (then \
             `cargo build` again; docs/book/src/backends.md, CUDA 12), or install a driver \
             for CUDA {} ({})",
            driver.code(),
            built.major,
            driver_for(built.major)
        ),
    })
}

/// Whether PTX written by NVRTC `nvrtc` loads on a driver that supports CUDA `driver`: a
/// driver reads the PTX of its own CUDA version and older, not newer (the load fails with
/// `CUDA_ERROR_UNSUPPORTED_PTX_VERSION`).
pub fn check_ptx(nvrtc: CudaVersion, driver: CudaVersion) -> Result<(), CallError> {
    if nvrtc <= driver {
        return Ok(());
    }
    let wheel = if nvrtc.major >= 13 {
        "nvidia-cuda-nvrtc"
    } else {
        "nvidia-cuda-nvrtc-cu12"
    };
    Err(CallError {
        library: Lib::Driver,
        what: "checking NVRTC against the driver",
        status: format!(
            "NVRTC {nvrtc} writes PTX that a driver for CUDA {driver} cannot load: put an \
             NVRTC of CUDA {driver} or older first on LD_LIBRARY_PATH (`pip install \
             \"{wheel}=={driver}.*\"`), or update the driver"
        ),
    })
}

/// The oldest Linux driver of a CUDA major version (NVIDIA's compatibility table).
fn driver_for(major: u32) -> &'static str {
    match major {
        12 => "525 or later",
        _ => "580 or later",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const V12_4: CudaVersion = CudaVersion::from_code(12040);
    const V12_8: CudaVersion = CudaVersion::from_code(12080);
    const V13_0: CudaVersion = CudaVersion::from_code(13000);

    #[test]
    fn codes_read_and_write_as_cuda_numbers_them() {
        assert_eq!(
            V12_8,
            CudaVersion {
                major: 12,
                minor: 8
            }
        );
        assert_eq!(V12_8.code(), 12080);
        assert_eq!(V12_8.to_string(), "12.8");
        // cuDriverGetVersion of driver 550: 12040; of 580: 13000.
        assert_eq!(CudaVersion::from_code(12040).to_string(), "12.4");
        assert!(V12_4 < V12_8 && V12_8 < V13_0);
        // The build's: this workspace's .cargo/config.toml, or the variable over it.
        assert!(matches!(BUILT.major, 12 | 13), "{BUILT}");
    }

    #[test]
    fn a_driver_of_an_older_major_version_is_refused_with_the_build_that_fits_it() {
        assert_eq!(check_driver(V13_0, V13_0), Ok(()));
        assert_eq!(
            check_driver(V12_8, V12_4),
            Ok(()),
            "minor-version compatibility"
        );
        assert_eq!(
            check_driver(V12_4, V13_0),
            Ok(()),
            "a newer driver runs older builds"
        );
        let e = check_driver(V13_0, V12_4).unwrap_err().to_string();
        assert!(
            e.starts_with("CUDA driver: checking the driver's CUDA version: "),
            "{e}"
        );
        assert!(e.contains("supports CUDA 12.4"), "{e}");
        assert!(e.contains("bindings are CUDA 13.0"), "{e}");
        assert!(e.contains("CUDARC_CUDA_VERSION=12040"), "{e}");
        assert!(e.contains("580 or later"), "{e}");
    }

    #[test]
    fn ptx_newer_than_the_driver_is_refused_naming_the_nvrtc_that_fits() {
        assert_eq!(check_ptx(V12_4, V12_8), Ok(()));
        assert_eq!(check_ptx(V12_8, V12_8), Ok(()));
        assert_eq!(check_ptx(V12_8, V13_0), Ok(()));
        let e = check_ptx(V12_8, V12_4).unwrap_err().to_string();
        assert!(e.contains("NVRTC 12.8 writes PTX"), "{e}");
        assert!(e.contains("\"nvidia-cuda-nvrtc-cu12==12.4.*\""), "{e}");
        let e = check_ptx(CudaVersion::from_code(13010), V13_0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"nvidia-cuda-nvrtc==13.0.*\""), "{e}");
    }
}
