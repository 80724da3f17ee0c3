//! A run of either tool, outside its numerics (no Burn, faer or plotters): [`config_file`]
//! (TOML configs) and [`overrides`] (`--set KEY=VALUE` at dotted keys), [`provenance`]
//! (config fingerprints that decide whether a result may be reused), [`sweep`] (the sweep
//! framework and the lifecycle both tools share), [`slurm`] (job arrays), [`stats`]
//! (spreads and tests over seeds), [`budget`] (memory estimates and limits), and the
//! [`Error`] these give. The files a run writes are `ntk_files`'; the names of fixed
//! choices `ntk_names`'; the command line `ntk_cli`'; a data set's digest `ntk_data`'s.
//! [`progress`] and the machine's memory limit (in [`budget`]) are `ntk_system`'s,
//! re-exported here, where the tools have always found them.

/// This crate's `eprintln!` throughout ([`ntk_system::say`]: a failed write to standard error
/// loses the line, never the process). Defined before every module.
macro_rules! eprintln {
    ($($arg:tt)*) => {
        ::ntk_system::say(::std::format_args!($($arg)*))
    };
}

pub mod budget;
pub mod config_file;
pub mod error;
pub mod manifest;
pub mod overrides;
pub mod provenance;
pub mod quote;
pub mod slurm;
pub mod stats;
pub mod sweep;

pub use error::{Error, Result};
pub use ntk_system::progress;
