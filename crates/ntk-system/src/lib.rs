//! What the system gives this process, read or drawn without knowing what a run is:
//! [`memory`] (the memory the system lets the process have now: `MemAvailable`, its
//! cgroups' limits and `RLIMIT_AS` less what the program keeps; sizes in words) and
//! [`progress`] (bars on a terminal, log lines in a job's log file).
//!
//! A crate of its own so that the libraries below the tools use both without the run
//! machinery of `ntk-runs` (sweeps, Slurm, `--set`, statistics): `ntk-data` caps a file's
//! read at [`memory::system_limit`] and `ntk-kernel` reports a long formation through
//! [`progress::Reporter`]. `ntk-runs` re-exports both (`ntk_runs::progress`, and the
//! memory items in `ntk_runs::budget`, which adds the estimates and their refusals).

/// Writes one line to standard error so that a failed write (a log on a full disk,
/// `2>/dev/full`) loses the line and never ends the process, where std's `eprintln!` panics
/// (eighty-seventh hostile round, D6: a tiled run died at its first progress line, leaving
/// its lock and temporary set). Every crate of the tools that writes to standard error
/// defines its `eprintln!` before its modules as a call of this, so a plain `eprintln!`
/// there is this.
pub fn say(args: std::fmt::Arguments) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "{args}");
}

/// This crate's `eprintln!` throughout ([`say`]). Defined before every module.
macro_rules! eprintln {
    ($($arg:tt)*) => {
        $crate::say(::std::format_args!($($arg)*))
    };
}

pub mod memory;
pub mod progress;
