//! ntk-train's integration tests, one binary (one link instead of one per file): each file
//! beside this one is a module. Every test takes [`common::serial`] first: two in-process
//! trainings that share the process's rayon pool and BLAS threads with other tests are not
//! bit-for-bit reproducible, and several tests compare runs bit for bit. `host_engine`,
//! `cudnn` and `slurm_scripts` stay apart (CI and the GPU scripts name them).

#[path = "../common/mod.rs"]
mod common;

mod committed;
mod host_resnet;
mod hostile;
mod onnx;
mod quoted_numbers;
mod representations;
mod resnet;
mod seeds_script;
mod sweep;
mod track_precision;
mod train;
mod user_data;
