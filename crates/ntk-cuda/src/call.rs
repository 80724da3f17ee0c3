//! A failed call into one of NVIDIA's libraries: which library, which call (in the caller's
//! words) and the status it returned, as the library spells it.

use std::fmt::Debug;

/// The library a call went to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lib {
    Driver,
    Cudnn,
    Cublas,
    Cusolver,
}

impl Lib {
    /// Its name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::Driver => "CUDA driver",
            Self::Cudnn => "cuDNN",
            Self::Cublas => "cuBLAS",
            Self::Cusolver => "cuSOLVER",
        }
    }
}

impl std::fmt::Display for Lib {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A call that failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{library}: {what}: {status}")]
pub struct CallError {
    pub library: Lib,
    /// What was being done: `creating the handle`, `potrf`.
    pub what: &'static str,
    /// The status as the library spells it (`CUBLAS_STATUS_NOT_INITIALIZED`), or what was
    /// wrong with a returned value.
    pub status: String,
}

/// `Ok` when `status` is `success`, else the [`CallError`] naming `what`.
pub fn check<S: PartialEq + Debug>(
    library: Lib,
    what: &'static str,
    status: S,
    success: S,
) -> Result<(), CallError> {
    if status == success {
        Ok(())
    } else {
        Err(CallError {
            library,
            what,
            status: format!("{status:?}"),
        })
    }
}

/// A result of `library` (cudarc's safe API returns its own error types) as a [`CallError`]
/// naming `what`.
pub fn result<T, E: Debug>(
    library: Lib,
    what: &'static str,
    r: Result<T, E>,
) -> Result<T, CallError> {
    r.map_err(|e| CallError {
        library,
        what,
        status: format!("{e:?}"),
    })
}

/// A driver call's result as a [`CallError`] naming `what`.
pub fn driver<T>(
    what: &'static str,
    r: Result<T, cudarc::driver::DriverError>,
) -> Result<T, CallError> {
    result(Lib::Driver, what, r)
}

/// A cuBLAS status as a [`CallError`] naming `what` when it is not success.
pub fn cublas(what: &'static str, s: cudarc::cublas::sys::cublasStatus_t) -> Result<(), CallError> {
    check(
        Lib::Cublas,
        what,
        s,
        cudarc::cublas::sys::cublasStatus_t::CUBLAS_STATUS_SUCCESS,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_call_names_library_call_and_status() {
        #[derive(Debug, PartialEq)]
        enum S {
            Ok,
            NotInitialized,
        }
        assert_eq!(check(Lib::Cublas, "gemv", S::Ok, S::Ok), Ok(()));
        let e = check(Lib::Cublas, "gemv", S::NotInitialized, S::Ok).unwrap_err();
        assert_eq!(e.to_string(), "cuBLAS: gemv: NotInitialized");
        let e = result::<(), _>(Lib::Driver, "creating the context", Err("no device"));
        assert_eq!(
            e.unwrap_err().to_string(),
            "CUDA driver: creating the context: \"no device\""
        );
    }
}
