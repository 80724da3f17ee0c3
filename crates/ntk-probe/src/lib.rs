//! The empirical neural tangent kernel of ntk-model networks: per-sample Jacobians through
//! Burn's autodiff ([`jacobian`]), the fast structured kernel ([`structured`]), its f64
//! spectrum and condition number ([`spectrum`]), gradient and embedding angles
//! ([`angles`]), and the probe run that writes pandas/numpy-ready files ([`run`]).

pub mod angles;
pub mod backend;
pub mod bench;
pub mod config;
pub mod fig1;
pub mod host;
pub mod inputs;
pub mod jacobian;
pub mod kernel;
pub mod linalg;
pub mod npy;
pub mod plot;
pub mod progress;
pub mod run;
pub mod spectrum;
pub mod structured;
pub mod sweep;
pub mod theory;
