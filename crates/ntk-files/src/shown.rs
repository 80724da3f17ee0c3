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
    let mut out = String::with_capacity(text.len());
    let mut run = String::new();
    for c in text.chars() {
        if kept.contains(&c) {
            out.push_str(&ntk_names::controls_escaped(&run));
            run.clear();
            out.push(c);
        } else {
            run.push(c);
        }
    }
    out.push_str(&ntk_names::controls_escaped(&run));
    out
}

/// Whether `c` is escaped: a control character, or a character that does not show itself
/// (a bidirectional control, a zero-width space, a byte order mark, a line separator:
/// [`ntk_names::hidden`], the one rule every crate escapes by). A name an output is written
/// under with one is refused (hundred-and-eleventh hostile round, D3; hundred-and-twelfth,
/// D1).
pub fn escaped(c: char) -> bool {
    ntk_names::hidden(c)
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

#[cfg(test)]
mod tests {
    /// The rule of `ntk_names::controls_escaped` (its test has more), with a message's own
    /// line breaks kept by [`super::message_escaped`].
    #[test]
    fn controls_and_bidirectional_marks_are_escaped() {
        let text = "a\u{1b}[1m\tb\u{202E}c\u{2066}d\u{200F}e \"é\" ü\n";
        let want = "a\\u{1b}[1m\\tb\\u{202e}c\\u{2066}d\\u{200f}e \"é\" ü\\n";
        assert_eq!(super::controls_escaped(text), want);
        assert_eq!(super::message_escaped("x\u{202E}\n"), "x\\u{202e}\n");
        assert_eq!(
            super::message_escaped("a\u{200B}b\n\u{2028}"),
            "a\\u{200b}b\n\\u{2028}"
        );
    }
}
