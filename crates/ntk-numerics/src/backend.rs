//! The one place that picks the compute device and the float precision.
//!
//! Backends are cargo features (`flex`, `ndarray`, `wgpu`, `cuda`); when several are built
//! in, `--backend NAME` (or the `BURN_DEVICE` environment variable) chooses. Otherwise a GPU
//! backend built in is used where it has a GPU ([`default_backend`]: cuda where NVIDIA's
//! driver loads, else wgpu where an adapter is a GPU, not a CPU rasterizer such as Mesa's
//! lavapipe), else the first CPU backend built in (flex, then ndarray); a GPU backend built
//! in but passed over for want of a GPU is said on stderr.

use burn::tensor::{DType, Device, FloatDType};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Float precision of the model and of the kernel's products (eigenvalues are always f64).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Precision {
    #[default]
    #[serde(alias = "float32")]
    F32,
    #[serde(alias = "float64")]
    F64,
}

impl Precision {
    pub fn dtype(self) -> DType {
        match self {
            Self::F32 => DType::F32,
            Self::F64 => DType::F64,
        }
    }
    fn float_dtype(self) -> FloatDType {
        match self {
            Self::F32 => FloatDType::F32,
            Self::F64 => FloatDType::F64,
        }
    }
    /// Unit roundoff of the precision the kernel was computed in.
    pub fn epsilon(self) -> f64 {
        match self {
            Self::F32 => f32::EPSILON as f64,
            Self::F64 => f64::EPSILON,
        }
    }
    /// The config's name (the serde name: [`ntk_names`]).
    pub fn name(self) -> &'static str {
        ntk_names::name(&self)
    }
    /// `f32` or `f64` (also `float32`, `float64`).
    pub fn parse(s: &str) -> Option<Self> {
        ntk_names::parse(s)
    }
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How the factors of an f32 product are rounded on an NVIDIA GPU (PyTorch's
/// `fp32_precision`; `train.fp32_precision`, `ntk-train bench --fp32-precision`):
///
/// - `ieee` (the default): f32 multiply-adds, unit roundoff `2^-24 ~ 6.0e-8`, as the host
///   engines compute;
/// - `tf32`: both factors rounded to TF32 (f32's exponent, 10 explicit mantissa bits: unit
///   roundoff `2^-11 ~ 4.9e-4`) and the products summed in f32, on the tensor cores. Each
///   layer then differs from f32 by about `u_tf32` relative (`sum_i x_i w_i delta_i` with
///   `|delta_i| <= 2 u_tf32`, random signs), roughly 10^4 times f32's.
///
/// Only the cuDNN engine takes `tf32` (its convolutions: cuDNN's default math instead of FMA
/// math; its head: cuBLAS's TF32 tensor-op math), and only when asked: results in f32 are
/// the default everywhere.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fp32Precision {
    #[default]
    Ieee,
    Tf32,
}

impl Fp32Precision {
    /// The config's name (the serde name: [`ntk_names`]).
    pub fn name(self) -> &'static str {
        ntk_names::name(&self)
    }
    /// Whether it is the default (`ieee`): configs leave it out.
    pub fn is_ieee(&self) -> bool {
        *self == Self::Ieee
    }
}

impl fmt::Display for Fp32Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A Burn backend: the cargo feature of the same name builds it in. Declared in order of
/// preference (the first built in is the default).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    /// Burn's CPU backend (threaded, vectorized).
    Flex,
    /// Burn's older CPU backend (deprecated in Burn 0.22; kept for comparisons).
    Ndarray,
    /// GPUs through Vulkan, Metal or DX12 (also Mesa's lavapipe on a CPU).
    Wgpu,
    /// NVIDIA GPUs through CubeCL.
    Cuda,
}

impl Backend {
    /// The feature's and `--backend`'s name (the serde name: [`ntk_names`]).
    pub fn name(self) -> &'static str {
        ntk_names::name(&self)
    }

    /// A backend by its name.
    pub fn parse(s: &str) -> Option<Self> {
        ntk_names::parse(s)
    }

    /// Whether it computes on the CPU: the host engines and the host eigensolver apply.
    pub fn on_host(self) -> bool {
        matches!(self, Self::Flex | Self::Ndarray)
    }

    /// Whether this binary has it (its feature was enabled).
    pub fn built(self) -> bool {
        match self {
            Self::Flex => cfg!(feature = "flex"),
            Self::Ndarray => cfg!(feature = "ndarray"),
            Self::Wgpu => cfg!(feature = "wgpu"),
            Self::Cuda => cfg!(feature = "cuda"),
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The backends compiled into this binary, in order of preference (the declaration order).
pub fn available() -> Vec<Backend> {
    ntk_names::all::<Backend>()
        .into_iter()
        .filter(|b| b.built())
        .collect()
}

/// A chosen device with its precision.
#[derive(Clone, Debug)]
pub struct Compute {
    pub device: Device,
    pub backend: Backend,
    pub precision: Precision,
}

impl Compute {
    /// True for the CPU backends (flex, ndarray): host engines and the host eigensolver apply.
    pub fn on_host(&self) -> bool {
        self.backend.on_host()
    }
    pub fn dtype(&self) -> DType {
        self.precision.dtype()
    }
}

/// Picks the backend: `name` (from `--backend`), else `BURN_DEVICE`, else the first built in.
/// Errors name the backend and list the ones this binary has.
pub fn select(name: Option<&str>, precision: Precision) -> crate::Result<Compute> {
    let backend = resolve(name)?;
    #[cfg(feature = "cuda")]
    if backend == Backend::Cuda {
        cuda_driver()?;
    }
    let device = make(backend);
    if !device.supports_dtype(precision.float_dtype()) {
        return Err(crate::Error::Precision { backend, precision });
    }
    // Every tensor is created with an explicit dtype, so f32 and f64 work side by side on
    // one device (the device's default dtype is process-global and is left alone).
    Ok(Compute {
        device,
        backend,
        precision,
    })
}

/// [`select`] without opening the device: the backend checked against those built in and
/// the device named, but no GPU driver loaded and no adapter asked for. For work that only
/// compares what results recorded (their `backend`) with what a run would record, a dry
/// run's plan or `collect`, on a machine without the GPU (a cluster's login node); the run
/// itself opens the device with [`select`].
pub fn plan(name: Option<&str>, precision: Precision) -> crate::Result<Compute> {
    let backend = resolve(name)?;
    Ok(Compute {
        device: make(backend),
        backend,
        precision,
    })
}

/// The backend `name` (else `BURN_DEVICE`, else [`default_backend`]) stands for, if built in.
fn resolve(name: Option<&str>) -> crate::Result<Backend> {
    let env = std::env::var("BURN_DEVICE").ok();
    let built = available();
    let Some(wanted) = name.map(str::to_string).or(env.clone()) else {
        let (backend, passed_over) = default_backend(&built, has_gpu);
        if let Some(note) = passed_over {
            eprintln!("warning: {note}");
        }
        return backend.ok_or_else(|| unavailable("", &built));
    };
    built
        .iter()
        .copied()
        .find(|b| b.name() == wanted)
        .ok_or_else(|| {
            let e = unavailable(&wanted, &built);
            // Where the name came from, when it is the environment's (a config's key is
            // named where it is read: [`de_name`]).
            if env.as_deref() == Some(wanted.as_str()) {
                crate::Error::FromEnvironment(Box::new(e))
            } else {
                e
            }
        })
}

/// The backend a run takes when nothing names one: the first GPU backend built in that
/// `gpu` says has a GPU here (cuda before wgpu), else the first CPU backend built in (flex,
/// ndarray), else the first built in. With it, what to say when a GPU backend built in was
/// passed over (the run then computes on the CPU, many times slower).
pub fn default_backend(
    built: &[Backend],
    gpu: impl Fn(Backend) -> bool,
) -> (Option<Backend>, Option<String>) {
    let gpus: Vec<Backend> = [Backend::Cuda, Backend::Wgpu]
        .into_iter()
        .filter(|b| built.contains(b))
        .collect();
    if let Some(&b) = gpus.iter().find(|&&b| gpu(b)) {
        return (Some(b), None);
    }
    let cpu = built.iter().copied().find(|b| b.on_host());
    let chosen = cpu.or_else(|| built.first().copied());
    let note = match (gpus.is_empty(), cpu) {
        (false, Some(cpu)) => {
            let needs: Vec<&str> = gpus
                .iter()
                .map(|b| match b {
                    Backend::Cuda => "cuda needs NVIDIA's driver, libcuda.so.1",
                    _ => "wgpu needs an adapter that is a GPU, not a CPU rasterizer",
                })
                .collect();
            Some(format!(
                "this build has {} but found no GPU for it ({}); computing on {cpu}, the CPU. \
                 Pass --backend {} to use it anyway, or --backend {cpu} to choose the CPU and \
                 silence this",
                gpus.iter()
                    .map(|b| b.name())
                    .collect::<Vec<_>>()
                    .join(" and "),
                needs.join("; "),
                gpus[0],
            ))
        }
        _ => None,
    };
    (chosen, note)
}

/// Whether `backend` has a GPU on this machine: NVIDIA's driver loads (cuda), or an adapter
/// is a GPU (wgpu: integrated, discrete or virtual, not a CPU rasterizer).
fn has_gpu(backend: Backend) -> bool {
    match backend {
        #[cfg(feature = "cuda")]
        Backend::Cuda => cuda_driver().is_ok(),
        #[cfg(feature = "wgpu")]
        Backend::Wgpu => wgpu_gpu(),
        _ => false,
    }
}

/// Whether wgpu finds an adapter that is a GPU. Asked through an instance of its own on
/// every graphics API; the adapters are dropped before Burn opens its device.
#[cfg(feature = "wgpu")]
fn wgpu_gpu() -> bool {
    use std::future::Future;
    use std::task::{Context, Poll, Waker};
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::all(),
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    // Native adapters are enumerated synchronously: the future is ready at its first poll.
    let mut adapters = std::pin::pin!(instance.enumerate_adapters(wgpu::Backends::all()));
    let mut cx = Context::from_waker(Waker::noop());
    let adapters = loop {
        if let Poll::Ready(a) = adapters.as_mut().poll(&mut cx) {
            break a;
        }
        std::thread::yield_now();
    };
    adapters
        .iter()
        .any(|a| a.get_info().device_type != wgpu::DeviceType::Cpu)
}

/// The cargo features of this build that choose how ntk-numerics computes: the backends
/// built in ([`available`]), then `fusion` and `autotune` when enabled. A binary adds its
/// own (`cudnn`, `cusolver`) and prints them under `--version`.
pub fn features() -> Vec<&'static str> {
    let mut f: Vec<&'static str> = available().into_iter().map(Backend::name).collect();
    if cfg!(feature = "fusion") {
        f.push("fusion");
    }
    if cfg!(feature = "autotune") {
        f.push("autotune");
    }
    f
}

/// The error for a device this binary lacks: a known backend is a rebuild away (its
/// feature); any other name is unknown, and no feature is suggested.
fn unavailable(wanted: &str, built: &[Backend]) -> crate::Error {
    let built = if built.is_empty() {
        "none".to_string()
    } else {
        built
            .iter()
            .map(|b| b.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if Backend::parse(wanted).is_some() {
        crate::Error::DeviceNotBuilt {
            wanted: wanted.to_string(),
            built,
        }
    } else {
        crate::Error::UnknownDevice {
            wanted: wanted.to_string(),
            built,
        }
    }
}

/// Deserializes a config's backend key (`probe.backend`, `train.backend`): a name that is
/// no backend, or one this binary does not have, is refused where the key is read, so the
/// error names the key and the file, `--set`, `--backend` or `BURN_DEVICE` that gave it
/// (eighth hostile round: `backend = "bogus"` in a config read only "unknown backend
/// `bogus`" at run time, naming neither).
pub fn de_name<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let name = <Option<String> as Deserialize>::deserialize(d)?;
    if let Some(wanted) = &name {
        let built = available();
        if !built.iter().any(|b| b.name() == wanted) {
            return Err(serde::de::Error::custom(unavailable(wanted, &built)));
        }
    }
    Ok(name)
}

/// Checks that the NVIDIA driver library can be loaded: without it CubeCL's cuda device
/// panics on first use instead of saying what is missing.
#[cfg(feature = "cuda")]
fn cuda_driver() -> crate::Result<()> {
    for name in [c"libcuda.so.1", c"libcuda.so"] {
        // SAFETY: dlopen of a NUL-terminated name; the handle stays open (CubeCL loads the
        // same library next).
        let handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_LAZY) };
        if !handle.is_null() {
            return Ok(());
        }
    }
    Err(crate::Error::CudaDriver)
}

fn make(backend: Backend) -> Device {
    match backend {
        #[cfg(feature = "flex")]
        Backend::Flex => Device::flex(),
        // Deprecated in Burn 0.22 in favour of flex; kept because users compare the two.
        #[cfg(feature = "ndarray")]
        #[allow(deprecated)]
        Backend::Ndarray => Device::ndarray(),
        #[cfg(feature = "wgpu")]
        Backend::Wgpu => Device::wgpu(burn::tensor::DeviceKind::DefaultDevice),
        #[cfg(feature = "cuda")]
        Backend::Cuda => Device::cuda(0),
        #[allow(unreachable_patterns)]
        other => unreachable!("backend {other} is checked against `available()`"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_backend_suggests_no_feature() {
        let e = unavailable("gpu", &[Backend::Flex]).to_string();
        assert!(e.contains("`gpu`") && e.contains("unknown backend"), "{e}");
        assert!(e.contains("flex, ndarray, wgpu, cuda"), "{e}");
        assert!(!e.contains("--features"), "{e}");
        let e = unavailable("cuda", &[Backend::Flex]).to_string();
        assert!(
            e.contains("--features cuda") && e.contains("built: flex"),
            "{e}"
        );
        let e = select(Some("gpu"), Precision::F32).unwrap_err().to_string();
        assert!(!e.contains("--features"), "{e}");
    }

    #[test]
    fn a_plan_names_the_backend_select_would_open_and_refuses_what_it_refuses() {
        let planned = plan(Some("flex"), Precision::F64).unwrap();
        let opened = select(Some("flex"), Precision::F64).unwrap();
        assert_eq!(
            (planned.backend, planned.precision),
            (opened.backend, opened.precision)
        );
        for wanted in ["gpu", "cuda", "wgpu"] {
            if Backend::parse(wanted).is_some_and(Backend::built) {
                continue;
            }
            assert_eq!(
                plan(Some(wanted), Precision::F32).unwrap_err().to_string(),
                select(Some(wanted), Precision::F32)
                    .unwrap_err()
                    .to_string()
            );
        }
    }

    #[test]
    fn the_features_list_the_backends_built_in_first() {
        let f = features();
        let backends: Vec<&str> = available().into_iter().map(Backend::name).collect();
        assert_eq!(f[..backends.len()], backends[..]);
    }

    /// A build with a GPU backend uses the GPU unless told otherwise (issue 66): cuda before
    /// wgpu where each has a GPU; a GPU backend without one is passed over for the CPU, saying
    /// so and how to choose either; a build with only CPU backends says nothing.
    #[test]
    fn the_default_backend_is_a_gpu_where_one_is_and_says_when_it_is_not() {
        use Backend::{Cuda, Flex, Ndarray, Wgpu};
        let all = [Flex, Ndarray, Wgpu, Cuda];
        assert_eq!(default_backend(&all, |_| true), (Some(Cuda), None));
        assert_eq!(default_backend(&all, |b| b == Wgpu), (Some(Wgpu), None));
        assert_eq!(
            default_backend(&[Flex, Wgpu], |b| b == Wgpu),
            (Some(Wgpu), None)
        );
        assert_eq!(
            default_backend(&[Flex, Ndarray], |_| true),
            (Some(Flex), None)
        );
        assert_eq!(default_backend(&[Ndarray], |_| true), (Some(Ndarray), None));
        let (chosen, note) = default_backend(&[Flex, Wgpu, Cuda], |_| false);
        assert_eq!(chosen, Some(Flex));
        let note = note.expect("a GPU backend passed over is said");
        assert!(
            note.contains("cuda and wgpu but found no GPU")
                && note.contains("computing on flex, the CPU")
                && note.contains("--backend cuda to use it anyway")
                && note.contains("--backend flex to choose the CPU"),
            "{note}"
        );
        // Without a CPU backend the GPU backend is taken anyway (opening it says what fails).
        assert_eq!(default_backend(&[Wgpu], |_| false), (Some(Wgpu), None));
        assert_eq!(default_backend(&[], |_| true), (None, None));
    }
}
