//! A user's text (a path, a key, a value) as it is shown on a terminal: its control
//! characters escaped as Rust escapes them (`\u{1b}`, `\t`, `\n`), so that none reaches a
//! terminal raw (an ESC sequence recolours it) and a newline or NUL shows (ninety-ninth hostile
//! round, D1). Here, below every crate that prints a user's path (the models name an ONNX
//! file: hundred-and-first hostile round, D1); `ntk_runs::quote` adds the cutting of long
//! values.

/// `text` with each control character escaped; a quote stays the quote it is (ninety-eighth
/// hostile round, N1: `"model".width` came back as `\"model\".width`).
pub fn controls_escaped(text: &str) -> String {
    escaped_but(text, &[])
}

/// A message for the terminal: [`controls_escaped`] but for its line breaks, which are its
/// own (a TOML error quotes its source line on a line of its own).
pub fn message_escaped(text: &str) -> String {
    escaped_but(text, &['\n'])
}

fn escaped_but(text: &str, kept: &[char]) -> String {
    text.chars()
        .map(|c| match c {
            c if c.is_control() && !kept.contains(&c) => c.escape_debug().to_string(),
            c => c.to_string(),
        })
        .collect()
}

/// A path as a message shows it: [`controls_escaped`], so that a newline, ESC or TAB in a
/// user's file name neither breaks the message's line nor reaches the terminal raw
/// (hundred-and-third hostile round, D3: a newline in a data path split every failure and
/// refusal line at the path, where the banners printed `\n`). The errors name paths with
/// it (`path.shown()` where `path.display()` was).
pub trait Shown {
    /// The path's text with its control characters escaped.
    fn shown(&self) -> ShownPath<'_>;
}

impl Shown for std::path::Path {
    fn shown(&self) -> ShownPath<'_> {
        ShownPath(self)
    }
}

/// [`Shown::shown`]'s result, for `format!`.
pub struct ShownPath<'a>(&'a std::path::Path);

impl std::fmt::Display for ShownPath<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&controls_escaped(&self.0.display().to_string()))
    }
}
