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
