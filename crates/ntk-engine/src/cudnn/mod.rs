//! The CIFAR ResNets' SGD step on an NVIDIA GPU: the cuDNN engine, counterpart of the host
//! engine (`crate::host::resnet`), for the batch_norm, norm_relu, fixup and selu variants.
//!
//! - [`libraries`]: which of libcuda, libcudnn, libcublas and libnvrtc load, probed before
//!   any call (cudarc panics at the first call into a missing one);
//! - [`kernels`]: the engine's own CUDA kernels, compiled by NVRTC for the device at hand;
//! - [`plan`]: the parameters' device order and the maps a step keeps (host-side planning);
//! - [`gpu`]: the context, stream, handles and device memory;
//! - [`dev`]: device memory as typed handles (`DevBuf<T>`, `DevPtr<T>`), offsets in values;
//! - [`dnn`]: convolutions and BatchNorm through cuDNN;
//! - [`engine`]: [`CudnnResNet`], the whole step (forward, loss, backward, running
//!   statistics, SGD) captured as one CUDA graph per batch size;
//! - [`stepper`]: [`stepper::CudnnStepper`], the engine as a run's [`crate::Stepper`].
//!
//! Everything is f32, by default with FMA math (no TF32): `ntk-train`'s tests hold it to the
//! host engine step for step. TF32 on the tensor cores is the user's explicit choice
//! ([`Fp32Precision::Tf32`], `train.fp32_precision = "tf32"`).

pub mod dev;
pub mod dnn;
pub mod engine;
pub mod error;
pub mod gpu;
pub mod kernels;
pub mod libraries;
pub mod plan;
pub mod stepper;

pub use dnn::BnMode;
pub use engine::{CudnnResNet, Sgd, Step};
pub use error::{Error, Result};
pub use libraries::{Library, Missing};
pub use ntk_numerics::backend::Fp32Precision;
