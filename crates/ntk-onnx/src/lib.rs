//! An ONNX model (a file from `torch.onnx.export`, weights included) as a Burn module built
//! at run time, so that any network exported from PyTorch has an empirical NTK here.
//!
//! [`OnnxModel::load`] reads the file with [`onnx_ir`] (Burn's own ONNX parser: protobuf,
//! typed operator attributes, shape inference), turns the initializers into trainable
//! parameters and keeps the nodes as a program that [`interpret`] runs with Burn tensor
//! ops, so autodiff, and through it `ntk_kernel::api::empirical_ntk`, sees every
//! operation. Operators: [`ops::SUPPORTED`]; any other is an
//! [`OnnxError::Unsupported`] naming the operator and the node.
//!
//! Modules: [`ops`] (the supported operators, the check), [`section`] (the `[onnx]` config
//! table both tools read), [`file`] (the file read once: bounds, SHA-256, what training
//! refuses), [`graph`] (the bytes parsed into a program), [`value`] (a tensor of run-time
//! rank), [`interpret`] (the program run), [`model`] (the module), [`error`].

pub mod error;
pub mod file;
pub mod graph;
pub mod interpret;
pub mod model;
pub mod ops;
pub mod section;
pub mod value;

pub use error::{OnnxError, Result};
pub use file::OnnxFile;
pub use model::OnnxModel;
pub use section::OnnxSection;
