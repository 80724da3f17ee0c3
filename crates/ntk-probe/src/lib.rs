//! The empirical neural tangent kernel of ntk-model networks: per-sample Jacobians through
//! Burn's autodiff ([`jacobian`]), the fast structured kernel ([`structured`]), its f64
//! spectrum and condition number ([`spectrum`]), gradient and embedding angles
//! ([`angles`]), and the probe run that writes pandas/numpy-ready files ([`run`]).

pub mod activation_fig;
pub mod angles;
pub mod api;
pub mod bench;
pub mod blocks;
pub mod config;
pub mod error;
pub mod extreme;
pub mod fig1;
pub mod gmap;
pub mod host;
pub mod jacobian;
pub mod run;
pub mod structured;
pub mod sweep;
pub mod theory;
pub mod transfer_fig;

pub use error::{Error, Result};

/// This tool and version, as results record it (`provenance.tool`).
pub const TOOL: &str = concat!("ntk-probe ", env!("CARGO_PKG_VERSION"));
