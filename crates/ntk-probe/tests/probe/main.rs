//! ntk-probe's integration tests, one binary (each file a module): the probe's files and
//! command line, hostile input, block protocols, sweeps, ResNets and the extreme route as
//! the command line takes it. The NTK itself is tested in ntk-kernel (`tests/kernel`).

mod angles;
mod blocks;
mod common;
mod extreme_cli;
mod files_and_cli;
mod given;
mod hostile;
mod onnx;
mod phases;
mod resnet_ntk;
mod sweep;
mod wgpu_cli;
