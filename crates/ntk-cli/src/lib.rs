//! The command line both binaries share: [`args`] (the flags and their `--set`s), [`cli`]
//! (start-up and exit: SIGPIPE, the panic hook, `--version`), [`oom`] (an allocation that
//! fails as an error with exit code 2, not an abort).

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

pub mod args;
pub mod cli;
pub mod oom;
