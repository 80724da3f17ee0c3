//! What both binaries do at start-up.

/// Restores the default action of SIGPIPE (Rust ignores it, so `println!` into a closed
/// pipe, as in `ntk-train --dry-run | head`, would panic): the process then ends quietly
/// when its reader goes away, as Unix tools do.
pub fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to its default at start-up, before any thread.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
