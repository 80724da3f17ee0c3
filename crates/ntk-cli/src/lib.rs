//! The command line both binaries share: [`args`] (the flags and their `--set`s), [`cli`]
//! (start-up and exit: SIGPIPE, the panic hook, `--version`), [`oom`] (an allocation that
//! fails as an error with exit code 2, not an abort).

pub mod args;
pub mod cli;
pub mod oom;
