//! The command line both binaries share: [`args`] (the flags and their `--set`s), [`cli`]
//! (start-up and exit: SIGPIPE, the panic hook, `--version`), [`oom`] (an allocation that
//! fails as an error with exit code 2, not an abort).

/// This crate's `eprintln!` throughout ([`ntk_system::say`]: a failed write to standard error
/// loses the line, never the process). Defined before every module.
macro_rules! eprintln {
    ($($arg:tt)*) => {
        ::ntk_system::say(::std::format_args!($($arg)*))
    };
}

pub mod args;
pub mod cli;
pub mod oom;
