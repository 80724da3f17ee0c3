//! Backend-generic Burn models for studying how activation and depth condition the neural
//! tangent kernel: the MLP family of Liu & Hui (NTK parameterization, Eq. 1 and 3) with the
//! activations and normalizations of Agarwal, Awasthi & Kale.
//!
//! Layout: [`activation`] (s, s', Gaussian moments), [`normal`] (the standard normal and
//! quadrature), [`config`] (what a TOML `[model]` table holds), [`mlp`] (the network),
//! [`resnet`] (He et al.'s CIFAR ResNets: BatchNorm, NormReLU, Fixup), [`onnx`] (a network
//! given as an ONNX file, `ntk_onnx`), [`net`] (any of them, as one module), [`spec`] (any
//! of them, as a config), [`init`] (seeded host-side draws),
//! [`export`] (safetensors), [`size`] (parameter and activation counts for memory
//! estimates). What runs a network's passes (the host engines, the cuDNN engine, Burn's
//! autodiff step) is the `ntk-engine` crate above this one.

pub mod activation;
pub mod config;
pub mod error;
pub mod export;
pub mod init;
pub mod mlp;
pub mod net;
pub mod normal;
pub mod onnx;
pub mod resnet;
pub mod size;
pub mod spec;

pub use activation::{Activation, ActivationKind, Moments, NormRelu};
pub use config::{
    LayerScales, MAX_DEPTH, MlpConfig, Normalization, NtkConvention, Parameterization,
};
pub use error::ModelError;
pub use mlp::{Mlp, MlpTrace};
pub use net::Net;
pub use onnx::OnnxSpec;
pub use resnet::{ResNet, ResNetConfig, ResNetVariant};
pub use spec::{NetLabels, NetSpec};
