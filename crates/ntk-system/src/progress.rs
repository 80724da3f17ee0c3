//! Progress: a spinner per phase with its seconds ([`Phase`]), and the [`Reporter`] of long
//! runs: indicatif bars (sweeps, epochs, batches) when the output is a terminal, plain log
//! lines when stdout is not one (a cluster job's log file). A long phase's bar
//! ([`Reporter::long_bar`]) becomes a log line of its progress and ETA every
//! [`LOG_EVERY`] there, so a job's log shows a 20-minute formation moving.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressDrawTarget, ProgressStyle, TermLike};

/// The bar every [`Reporter`] method returns (indicatif's).
pub use indicatif::ProgressBar;

/// How often a long phase's progress is logged without a terminal.
pub const LOG_EVERY: Duration = Duration::from_secs(30);

/// Where [`LogLines`] writes a line.
type Sink = Arc<dyn Fn(&str) + Send + Sync>;

/// A draw target that turns a bar's redraws into log lines, at most one per `every` (the
/// first at once): indicatif renders the bar's line and the padding and cursor moves
/// around it; the non-blank rendering is the line.
struct LogLines {
    every: Duration,
    last: Mutex<Option<Instant>>,
    sink: Sink,
}

impl std::fmt::Debug for LogLines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogLines")
            .field("every", &self.every)
            .finish()
    }
}

impl LogLines {
    fn emit(&self, s: &str) {
        // One space between words (an empty `{msg}` leaves two).
        let line = s.split_whitespace().collect::<Vec<_>>().join(" ");
        if line.is_empty() {
            return;
        }
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if last.is_some_and(|t| t.elapsed() < self.every) {
            return;
        }
        *last = Some(Instant::now());
        (self.sink)(&line);
    }
}

impl TermLike for LogLines {
    fn width(&self) -> u16 {
        // Wide enough that indicatif never wraps a line.
        400
    }
    fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn write_line(&self, s: &str) -> std::io::Result<()> {
        self.emit(s);
        Ok(())
    }
    fn write_str(&self, s: &str) -> std::io::Result<()> {
        self.emit(s);
        Ok(())
    }
    fn clear_line(&self) -> std::io::Result<()> {
        Ok(())
    }
    fn flush(&self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A bar whose redraws go to `sink` as log lines, at most one per `every`: the first at its
/// first step, or with `quiet_start` only once `every` has passed (a phase shorter than that
/// logs nothing).
fn logged_bar(
    len: u64,
    prefix: String,
    (every, quiet_start): (Duration, bool),
    sink: Sink,
) -> ProgressBar {
    let lines = LogLines {
        every,
        last: Mutex::new(quiet_start.then(Instant::now)),
        sink,
    };
    let bar = ProgressBar::with_draw_target(
        Some(len),
        ProgressDrawTarget::term_like_with_hz(Box::new(lines), 1),
    );
    bar.set_style(
        ProgressStyle::with_template(
            "{prefix}: {pos}/{len} ({percent}%) {msg} elapsed {elapsed_precise}, ETA {eta_precise}",
        )
        .expect("valid template"),
    );
    bar.set_prefix(prefix);
    bar
}

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
    /// No bars; log lines on stderr (where stdout carries a result: `--json`).
    LinesToStderr,
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

    /// As [`Default`], but log lines (without a terminal) go to stderr: for progress inside
    /// a command whose stdout is its result (a single probe's table or `--json`).
    pub fn beside_results() -> Self {
        match Self::default().mode {
            Mode::Lines => Self::with_mode(Mode::LinesToStderr),
            mode => Self::with_mode(mode),
        }
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

    /// A bar of a long phase (minutes: a whole set's kernel, its factorization): on a
    /// terminal as [`Self::bar`]; without one, a log line on stdout of its progress, elapsed
    /// time and ETA at most every [`LOG_EVERY`] (the first at its first step); nothing when
    /// silent.
    pub fn long_bar(&self, len: u64, prefix: String) -> ProgressBar {
        self.logged(len, prefix, false)
    }

    /// A bar of a phase that takes seconds or hours by what it is given (the infinite-width
    /// kernel by quadrature): as [`Self::long_bar`], but without a terminal its first line
    /// comes once [`LOG_EVERY`] has passed, so that a short phase logs nothing and a long one
    /// logs every [`LOG_EVERY`] whatever its count (sixty-sixth hostile round, D1: a cut by
    /// count left a 40 s kernel without a line).
    pub fn timed_bar(&self, len: u64, prefix: String) -> ProgressBar {
        self.logged(len, prefix, true)
    }

    fn logged(&self, len: u64, prefix: String, quiet_start: bool) -> ProgressBar {
        let when = (LOG_EVERY, quiet_start);
        match self.mode {
            Mode::Lines => logged_bar(len, prefix, when, Arc::new(|l| println!("{l}"))),
            Mode::LinesToStderr => logged_bar(len, prefix, when, Arc::new(|l| eprintln!("{l}"))),
            Mode::Bars | Mode::Silent => self.bar(len, prefix),
        }
    }

    /// A phase of unknown length (seconds to minutes: a kernel measured during training):
    /// on a terminal a spinner with `message` and the elapsed time; without one, `message`
    /// once as a log line; nothing when silent. `finish_and_clear` it when done.
    pub fn spinner(&self, message: String) -> ProgressBar {
        if self.mode != Mode::Bars {
            self.log(&message);
            return ProgressBar::hidden();
        }
        let bar = self.multi.add(ProgressBar::new_spinner());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} [{elapsed}]").expect("valid template"),
        );
        bar.set_message(message);
        bar.enable_steady_tick(Duration::from_millis(200));
        bar
    }

    /// A line for the log: above the bars on a terminal, on stdout otherwise.
    pub fn log(&self, line: &str) {
        match self.mode {
            Mode::Bars => {
                let _ = self.multi.println(line);
            }
            Mode::Lines => println!("{line}"),
            Mode::LinesToStderr => eprintln!("{line}"),
            Mode::Silent => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collected(every: Duration, steps: u64) -> Vec<String> {
        collected_from(every, false, steps)
    }

    fn collected_from(every: Duration, quiet_start: bool, steps: u64) -> Vec<String> {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = lines.clone();
        let bar = logged_bar(
            steps,
            "tiles".into(),
            (every, quiet_start),
            Arc::new(move |l| sink.lock().unwrap().push(l.to_string())),
        );
        for _ in 0..steps {
            bar.inc(1);
            // Past the 1 Hz rate limit, so that every step is drawn.
            std::thread::sleep(Duration::from_millis(1001));
        }
        bar.finish_and_clear();
        drop(bar);
        Arc::try_unwrap(lines).unwrap().into_inner().unwrap()
    }

    /// Without a terminal a long bar logs its progress as plain lines (prefix, count,
    /// percent, ETA), none blank and none with the bar's drawing characters.
    #[test]
    fn a_long_bar_logs_lines() {
        let lines = collected(Duration::ZERO, 2);
        assert!(!lines.is_empty(), "no line logged");
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("tiles: 2/2 (100%)") && l.contains("ETA")),
            "{lines:?}"
        );
        assert!(
            lines
                .iter()
                .all(|l| !l.trim().is_empty() && !l.contains('█'))
        );
    }

    /// At most one line per interval: with an hour between lines only the first is logged
    /// (the bar's first drawing, at its start or first step).
    #[test]
    fn a_long_bar_logs_at_most_once_per_interval() {
        let lines = collected(Duration::from_secs(3600), 2);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].starts_with("tiles: ") && lines[0].contains("/2 ("),
            "{lines:?}"
        );
    }

    /// A timed bar ([`Reporter::timed_bar`]) logs nothing before its interval has passed,
    /// then as a long bar does.
    #[test]
    fn a_timed_bar_waits_for_its_interval() {
        assert!(collected_from(Duration::from_secs(3600), true, 2).is_empty());
        let lines = collected_from(Duration::from_millis(1500), true, 3);
        assert!(!lines.is_empty(), "no line after the interval");
        assert!(!lines[0].starts_with("tiles: 0/"), "{lines:?}");
    }
}
