//! ntk-onnx against its independent route: PyTorch models exported to ONNX, their NTK by
//! torch.func (experiments/onnx/torch_reference.py), and the errors a file can raise.

mod common;
mod corrupt;
mod errors;
mod hostile;
mod python;
mod torch_ntk;
