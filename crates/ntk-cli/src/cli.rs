//! What both binaries do at start-up.

/// Keeps SIGPIPE ignored (as Rust starts a program), so that a line on standard error whose
/// reader has gone is lost and the run goes on (`ntk_system::say`; eighty-ninth hostile round,
/// D6: with SIGPIPE's default a tiled run piped `2>&1 | head -1` died at its first progress
/// line, leaving its lock and temporary set). Standard output's reader gone (`ntk-train
/// --dry-run | head`) still ends the process as that signal would, quietly, as Unix tools do:
/// `println!`'s failed write reaches the panic hook ([`set_panic_hook`]), which ends it by
/// SIGPIPE ([`end_by_sigpipe`]).
pub fn quiet_sigpipe() {
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition at start-up, before any thread.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

/// Ends the process as SIGPIPE's default action would (standard output's reader has gone):
/// the signal's default restored and raised, so that a shell sees the status it expects.
fn end_by_sigpipe() -> ! {
    // SAFETY: restoring a signal's default and raising it ends the process at once; nothing
    // after it runs (the `_exit` only where the signal could not end it).
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
        libc::_exit(141)
    }
}

/// Ends the process with `code` once standard output is flushed, without the C library's
/// exit handlers: OpenBLAS's handler joins its worker threads, and a worker that could not
/// allocate its buffer (under `ulimit -v`) never returns, so a normal exit could hang after
/// the work was done and written. Every file the tools write is complete (written,
/// synced and renamed into place) before this is called.
pub fn exit(code: u8) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: _exit ends the process at once; nothing after it runs.
    unsafe { libc::_exit(i32::from(code)) }
}

/// The command line parsed by clap, its refusals with the user's text escaped: clap quotes a
/// value, an argument or a subcommand as typed (less its ANSI sequences), and a newline or
/// TAB in it broke the refusal's line (hundred-and-sixth hostile round, D3: `--thetas
/// "1,f<TAB>g<LF>h"`, an unknown subcommand). A refusal is said again for the arguments with
/// their control characters escaped ([`ntk_runs::quote::controls_escaped`]), where that
/// gives the same kind of refusal; else clap's own with every control character but its line
/// breaks escaped. Help and version print as clap prints them; exit code 2, as clap's.
pub fn parse<T: clap::Parser>() -> T {
    use clap::error::ErrorKind;
    let e = match T::try_parse() {
        Ok(t) => return t,
        Err(e) => e,
    };
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        e.exit()
    }
    let escaped = std::env::args_os().map(|a| match a.to_str() {
        Some(text) => std::ffi::OsString::from(ntk_runs::quote::controls_escaped(text)),
        None => a,
    });
    let text = match T::try_parse_from(escaped) {
        Err(again) if again.kind() == e.kind() => again.render().to_string(),
        _ => e.render().to_string(),
    };
    let text = ntk_files::shown::message_escaped(&text);
    eprint!("{text}");
    exit(2)
}

/// Prints `error: MESSAGE` on standard error, its control characters escaped but for its
/// line breaks ([`ntk_runs::quote::message_escaped`]): a key, a path or a TOML string of the
/// user's that holds ESC would otherwise reach the terminal raw (ninety-ninth hostile round,
/// D1). Every error of both tools is printed through it.
pub fn print_error(message: &dyn std::fmt::Display) {
    eprintln!(
        "error: {}",
        ntk_runs::quote::message_escaped(&message.to_string())
    );
}

/// Refuses, with exit code 2 and one line, an `RLIMIT_AS` (`ulimit -v`) too small for the
/// program ([`ntk_runs::budget::check_address_space`]). Both tools call it before the BLAS
/// library loads (under a limit that leaves it no room, OpenBLAS 0.3.31 cannot start its
/// threads and raises SIGINT, exit 130, before any word of ours) and again once it has
/// mapped its buffers.
pub fn refuse_small_address_space() {
    if let Err(e) = ntk_runs::budget::check_address_space() {
        print_error(&e);
        exit(2);
    }
}

/// Refuses, with exit code 2 and one line, a `RAYON_NUM_THREADS` beyond what the CPUs can
/// start in reasonable time ([`ntk_runs::slurm::rayon_threads_refusal`]). Call first thing
/// in `main`, before any pool starts.
pub fn refuse_absurd_thread_counts() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let value = std::env::var("RAYON_NUM_THREADS").ok();
    if let Some(why) = ntk_runs::slurm::rayon_threads_refusal(value.as_deref(), cpus) {
        print_error(&why);
        exit(2);
    }
}

/// Sets the panic hook of a binary named `tool`: a bug ends in one clear line
/// (`tool: internal error: ...`) and a non-zero exit, not a backtrace; a failed write to
/// standard output (a full device, `> /dev/full`), which Rust's `println!` turns into a
/// panic, is the error it is: `error: cannot write to standard output: ...`, exit code 2;
/// so is an allocation that a library reports as a panic (faer's `AllocError`): `error:
/// out of memory: ...`. (An allocation that fails inside Rust's own collections still
/// aborts: stable Rust gives no hook for it, so the memory guard refuses such work first.)
pub fn set_panic_hook(tool: &'static str) {
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if let Some(why) = message.strip_prefix("failed printing to stdout: ") {
            if why.contains("Broken pipe") {
                end_by_sigpipe();
            }
            eprintln!("error: cannot write to standard output: {why}");
            exit(2);
        }
        // An allocation refused under a limit the memory guard did not foresee (faer
        // reports it as a panic): the error it is, not a bug.
        if message.contains("AllocError") || message.contains("capacity overflow") {
            eprintln!(
                "error: out of memory: {message} (at {}); the work did not fit in the memory \
                 this process may use: reduce the sizes, or raise the limit",
                info.location().map_or(String::new(), |l| l.to_string())
            );
            exit(2);
        }
        eprintln!("{tool}: internal error: {info}");
    }));
}

/// The text of `--version` after the tool's name: `version`, then one line naming the cargo
/// features the binary was built with (`features: flex cudnn`), which
/// `scripts/slurm/submit.sh` reads to check that a build has what `--gpu` needs, then one
/// naming the host linear algebra this process runs and its kernels (`host linear algebra:
/// OpenBLAS 0.3.31 ..., Haswell kernels, from PATH`). Built once per process.
pub fn long_version(version: &'static str, features: &[&str], linalg: &str) -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        format!(
            "{version}\nfeatures: {}\nhost linear algebra: {linalg}",
            features.join(" ")
        )
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_long_version_names_the_features_on_a_line_of_its_own() {
        let text = super::long_version("0.1.0", &["flex", "cudnn"], "faer (asked for)");
        assert_eq!(
            text,
            "0.1.0\nfeatures: flex cudnn\nhost linear algebra: faer (asked for)"
        );
    }
}
