//! Where a whole kernel's eigenvalues are computed, and with what:
//!
//! | `probe.eigen` | CPU backend | GPU backend, built with `cusolver` | other GPU builds |
//! |---|---|---|---|
//! | `full` | LAPACK `dsyevd` on the host | cuSOLVER `syevd` | LAPACK on the host |
//! | `extreme` | LAPACK `dpotrf` + Lanczos on the host BLAS, low rank found first ([`extreme::dense`]) | cuSOLVER `potrf` + Lanczos on cuBLAS | Cholesky + Lanczos on Burn's device |
//!
//! On a GPU backend (wgpu, cuda) a binary built with the `cusolver` feature sends the kernel
//! to the NVIDIA GPU's cuSOLVER and cuBLAS (f64) when libcuda, libcublas and libcusolver
//! load; when one does not, it says which and how to get it (once per process) and takes
//! the route of the other builds. Every route is the same algorithm in f64 and is held to
//! LAPACK in tests (`crates/ntk-kernel/tests/kernel/extreme.rs`, `crates/ntk-cusolver/tests/device.rs`).

use burn::tensor::Tensor;
use ntk_numerics::backend::Compute;
use ntk_numerics::kernel::Kernel;
use ntk_numerics::spectrum::{self, Spectrum};

use ntk_kernel::extreme::{self, Extreme};

/// The extreme eigenvalues of `kernel` (built with unit roundoff `eps`) on `compute`'s
/// route ([`self`]).
pub fn extreme(kernel: &Kernel, compute: &Compute, eps: f64) -> crate::Result<Extreme> {
    #[cfg(feature = "cusolver")]
    if cusolver_here(compute) {
        let e = ntk_cusolver::extreme(kernel, eps, &extreme::Options::default())
            .map_err(|e| crate::Error::Device(e.to_string()))?;
        extreme::warn_unconverged(&e);
        return Ok(e);
    }
    if compute.on_host() {
        return Ok(extreme::dense::of_host(kernel, eps)?);
    }
    Ok(extreme::of_kernel(kernel, &compute.device, eps)?)
}

/// [`extreme`] of a kernel held as a tensor on `compute`'s device: solved there by Burn's
/// route ([`extreme::on_device`]), or read back and sent to cuSOLVER on its route.
pub fn extreme_of_tensor(k: Tensor<2>, compute: &Compute, eps: f64) -> crate::Result<Extreme> {
    #[cfg(feature = "cusolver")]
    if cusolver_here(compute) {
        let size = k.dims()[0];
        let phases = ntk_cusolver::trace::Phases::new();
        let read = |e: &dyn std::fmt::Debug| {
            crate::Error::Device(format!("reading the kernel back: {e:?}"))
        };
        let values = k.try_into_data().map_err(|e| read(&e))?;
        phases.mark_host("the kernel back from Burn's device");
        let data = match values.as_slice::<f32>() {
            Ok(f32s) => ntk_cusolver::staging::widen(f32s),
            Err(_) => values
                .convert::<f64>()
                .try_into_vec::<f64>()
                .map_err(|e| read(&e))?,
        };
        phases.mark_host("the kernel in f64 (host)");
        return extreme(&Kernel { size, data }, compute, eps);
    }
    let _ = compute;
    Ok(extreme::on_device(k, eps)?)
}

/// Every eigenvalue of `kernel` (built with unit roundoff `eps`), classified, on
/// `compute`'s route ([`self`]).
pub fn full(kernel: &Kernel, compute: &Compute, eps: f64) -> crate::Result<Spectrum> {
    #[cfg(feature = "cusolver")]
    if cusolver_here(compute) {
        return ntk_cusolver::spectrum(kernel, eps)
            .map_err(|e| crate::Error::Device(e.to_string()));
    }
    let _ = compute;
    Ok(spectrum::spectrum(kernel, eps)?)
}

/// What the whole set's MLP kernel gives on the GPU ([`tiled_on_gpu`]).
pub struct GpuWhole {
    pub extreme: Extreme,
    pub min_angle: Option<ntk_kernel::angles::MinAngle>,
    /// Seconds in the kernel's formation (the factors' upload included).
    pub formation_seconds: f64,
    /// Seconds in the eigenvalues.
    pub eigen_seconds: f64,
}

/// `probe.eigen = "tiled"` on cuSOLVER's route ([`self`], where [`gpu_here`] says so): the
/// whole set's MLP kernel formed on the GPU from `source`'s factors by cuBLAS and solved
/// there ([`ntk_cusolver::whole`]); an error in a build without `cusolver`.
pub fn tiled_on_gpu(
    source: &ntk_kernel::host::tiles::TileSource,
    options: &extreme::Options,
) -> crate::Result<GpuWhole> {
    #[cfg(feature = "cusolver")]
    {
        let start = std::time::Instant::now();
        let w = ntk_cusolver::whole::solve(source, options)
            .map_err(|e| crate::Error::Device(e.to_string()))?;
        extreme::warn_unconverged(&w.extreme);
        Ok(GpuWhole {
            eigen_seconds: start.elapsed().as_secs_f64() - w.formation_seconds,
            extreme: w.extreme,
            min_angle: w.min_angle,
            formation_seconds: w.formation_seconds,
        })
    }
    #[cfg(not(feature = "cusolver"))]
    {
        let _ = (source, options);
        Err(crate::Error::Device(
            "this build has no cuSOLVER route (build with the cusolver feature)".into(),
        ))
    }
}

/// Whether `compute` takes cuSOLVER's route ([`self`]): a GPU backend, a build with
/// `cusolver`, its libraries loaded.
pub fn gpu_here(compute: &Compute) -> bool {
    #[cfg(feature = "cusolver")]
    if cusolver_here(compute) {
        return true;
    }
    let _ = compute;
    false
}

/// Readies `compute`'s route before a measurement: on cuSOLVER's, opens the GPU and runs its
/// solvers once on a small kernel ([`ntk_cusolver::warm_up`]), as the peer's benchmark warms
/// its solvers; elsewhere nothing (Burn's route is warmed by the kernel's formation).
pub fn warm_up(compute: &Compute) -> crate::Result<()> {
    #[cfg(feature = "cusolver")]
    if cusolver_here(compute) {
        ntk_cusolver::warm_up().map_err(|e| crate::Error::Device(e.to_string()))?;
    }
    let _ = compute;
    Ok(())
}

/// What a result's provenance adds about its eigenvalues: `eigenvalues: cuSOLVER on <GPU>`
/// when they were computed there, else nothing (the host's linear algebra is recorded
/// already).
pub fn describe(compute: &Compute) -> Option<String> {
    #[cfg(feature = "cusolver")]
    if cusolver_here(compute) {
        return ntk_cusolver::device::with_gpu(|g| Ok(g.name.clone()))
            .ok()
            .map(|name| format!("eigenvalues: cuSOLVER on {name}"));
    }
    let _ = compute;
    None
}

/// Whether `compute` is a GPU backend and cuSOLVER's libraries load (said once when not).
#[cfg(feature = "cusolver")]
fn cusolver_here(compute: &Compute) -> bool {
    static MISSING: std::sync::Once = std::sync::Once::new();
    if compute.on_host() {
        return false;
    }
    match ntk_cusolver::libraries::probe() {
        Ok(()) => true,
        Err(m) => {
            MISSING.call_once(|| {
                eprintln!("note: {m}; the eigenvalues are computed without it");
            });
            false
        }
    }
}
