//! Where a solve's time goes: with `NTK_CUSOLVER_TRACE` set, each phase's seconds on stderr
//! (the stream waited for first), for benchmarks (experiments/bench/README.md, "GPU: the
//! cuSOLVER eigensolver"). Unset, nothing waits and nothing is printed.

use std::cell::Cell;
use std::sync::OnceLock;
use std::time::Instant;

use crate::device::Gpu;

/// Whether `NTK_CUSOLVER_TRACE` is set (read once).
pub fn on() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("NTK_CUSOLVER_TRACE").is_some_and(|v| !v.is_empty()))
}

/// A clock of phases since the last mark.
pub struct Phases {
    last: Cell<Instant>,
}

impl Default for Phases {
    fn default() -> Self {
        Self::new()
    }
}

impl Phases {
    pub fn new() -> Self {
        Self {
            last: Cell::new(Instant::now()),
        }
    }

    /// Ends phase `what` once `gpu`'s stream is done (when tracing).
    pub fn mark(&self, gpu: &Gpu, what: &str) {
        if on() {
            let _ = gpu.sync();
            self.mark_host(what);
        }
    }

    /// Ends phase `what`, work on the host (when tracing).
    pub fn mark_host(&self, what: &str) {
        if on() {
            let now = Instant::now();
            let s = (now - self.last.get()).as_secs_f64();
            eprintln!("cusolver trace: {what}: {s:.4} s");
            self.last.set(now);
        }
    }
}
