//! ntk-kernel's integration tests, one binary (each file a module): the NTK routes against
//! each other (structured, host, autodiff, wgpu), the extreme-eigenvalue route against
//! LAPACK, the infinite-width theory against its check values and against measured kernels,
//! and the library's promise to a crate of its own.

mod common;
mod embedding_angles;
mod extreme;
mod host_cache;
mod library_example;
mod structured_vs_autodiff;
mod theory;
mod theory_conventions;
mod theory_vs_measurement;
mod wgpu_backend;
