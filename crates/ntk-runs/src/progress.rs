//! Progress: a spinner per phase with its seconds ([`Phase`]), and the [`Reporter`] of long
//! runs: indicatif bars (sweeps, epochs, batches) when the output is a terminal, plain log
//! lines when stdout is not one (a cluster job's log file).

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Phase {
    bar: ProgressBar,
    start: Instant,
}

impl Phase {
    pub fn start(name: &str) -> Self {
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} {elapsed}").expect("valid template"),
        );
        bar.set_message(name.to_string());
        bar.enable_steady_tick(Duration::from_millis(200));
        Self {
            bar,
            start: Instant::now(),
        }
    }

    /// Clears the spinner and returns the seconds spent.
    pub fn finish(self) -> f64 {
        self.bar.finish_and_clear();
        self.start.elapsed().as_secs_f64()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Bars on stderr, log lines above them.
    Bars,
    /// No bars; log lines on stdout.
    Lines,
    /// Nothing (tests, benchmarks).
    Silent,
}

#[derive(Clone)]
pub struct Reporter {
    multi: MultiProgress,
    mode: Mode,
}

impl Default for Reporter {
    /// Bars when both stdout and stderr are terminals, log lines otherwise.
    fn default() -> Self {
        let terminal = std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
        Self::with_mode(if terminal { Mode::Bars } else { Mode::Lines })
    }
}

impl Reporter {
    fn with_mode(mode: Mode) -> Self {
        let multi = MultiProgress::new();
        if mode != Mode::Bars {
            multi.set_draw_target(ProgressDrawTarget::hidden());
        }
        Self { multi, mode }
    }

    /// Log lines on stdout, no bars.
    pub fn lines() -> Self {
        Self::with_mode(Mode::Lines)
    }

    /// A reporter that neither draws nor logs.
    pub fn silent() -> Self {
        Self::with_mode(Mode::Silent)
    }

    /// A bar of `len` steps labelled `prefix`; hidden unless drawing bars.
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
        match self.mode {
            Mode::Bars => {
                let _ = self.multi.println(line);
            }
            Mode::Lines => println!("{line}"),
            Mode::Silent => {}
        }
    }
}
