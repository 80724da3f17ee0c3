//! A run of either tool, outside its numerics (no Burn, faer or plotters): [`config_file`]
//! (TOML configs) and [`overrides`] (`--set KEY=VALUE` at dotted keys), [`provenance`]
//! (config fingerprints that decide whether a result may be reused), [`sweep`] (the sweep
//! framework and the lifecycle both tools share), [`slurm`] (job arrays), [`stats`]
//! (spreads and tests over seeds), [`budget`] (memory estimates and limits), and the
//! [`Error`] these give. The files a run writes are `ntk_files`'; the names of fixed
//! choices `ntk_names`'; the command line `ntk_cli`'; a data set's digest `ntk_data`'s.
//! [`progress`] and the machine's memory limit (in [`budget`]) are `ntk_system`'s,
//! re-exported here, where the tools have always found them.

/// Standard error written so that a failed write (a log on a full disk, `2>/dev/full`) loses
/// the line and never ends the process, where std's `eprintln!` panics (eighty-seventh hostile
/// round, D6: a tiled run died at its first progress line, leaving its lock and temporary set).
/// Defined before every module, so it is this crate's `eprintln!` throughout.
macro_rules! eprintln {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let _ = ::std::writeln!(::std::io::stderr(), $($arg)*);
    }};
}

pub mod budget;
pub mod config_file;
pub mod error;
pub mod manifest;
pub mod overrides;
pub mod provenance;
pub mod slurm;
pub mod stats;
pub mod sweep;

pub use error::{Error, Result};
pub use ntk_system::progress;
