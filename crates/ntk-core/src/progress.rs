//! Progress on a terminal: a spinner per phase (hidden when stderr is not a terminal) and
//! the phase's seconds.

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

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
