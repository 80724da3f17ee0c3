//! Progress: indicatif bars (sweep, epochs, batches, with loss and throughput) on a
//! terminal; plain log lines, one per epoch, when stderr is not a terminal (a cluster log).

use std::io::IsTerminal;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

#[derive(Clone)]
pub struct Reporter {
    multi: MultiProgress,
    interactive: bool,
}

impl Default for Reporter {
    fn default() -> Self {
        Self::new(std::io::stderr().is_terminal())
    }
}

impl Reporter {
    /// `interactive = false` draws nothing and logs lines instead.
    pub fn new(interactive: bool) -> Self {
        let multi = MultiProgress::new();
        if !interactive {
            multi.set_draw_target(ProgressDrawTarget::hidden());
        }
        Self { multi, interactive }
    }

    /// A reporter that neither draws nor logs (tests, benchmarks).
    pub fn silent() -> Self {
        let r = Self::new(false);
        Self {
            interactive: true,
            ..r
        }
    }

    pub fn interactive(&self) -> bool {
        self.interactive
    }

    /// A bar of `len` steps labelled `prefix`; hidden when not interactive.
    pub fn bar(&self, len: u64, prefix: String) -> ProgressBar {
        let bar = self.multi.add(ProgressBar::new(len));
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix:>12} {bar:30} {pos}/{len} {msg} [{elapsed} < {eta}]",
            )
            .expect("valid template"),
        );
        bar.set_prefix(prefix);
        bar
    }

    /// A line for the log: above the bars on a terminal, on stdout otherwise.
    pub fn log(&self, line: &str) {
        if self.multi.is_hidden() {
            if !self.interactive {
                println!("{line}");
            }
        } else {
            let _ = self.multi.println(line);
        }
    }
}
