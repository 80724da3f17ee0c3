//! A user's text quoted back in a message: a long one (a value, key or argument) by its
//! start and its length, never whole (a 100,000-character `--set` value made a 200,169-byte
//! error: ninety-seventh hostile round, N5), and its control characters escaped, never
//! written raw to a terminal (ninety-ninth, D1).

/// The characters of a user's text kept in a message.
pub const QUOTED: usize = 160;

/// `text` cut at [`QUOTED`] characters with its length said (`rrr... (100000 bytes)`), else
/// whole.
pub fn cut_long(text: &str) -> String {
    match text.char_indices().nth(QUOTED) {
        Some((cut, _)) => format!("{}... ({} bytes)", &text[..cut], text.len()),
        None => text.to_string(),
    }
}

/// `line` with each backtick-quoted span longer than [`QUOTED`] characters cut to its
/// start and length: the user's own value or key quoted back (`unknown variant `rrr...``),
/// which made a 200,579-byte error of a 200,000-character activation (ninety-seventh hostile
/// round, N5). The expected names, each short, stay whole.
pub fn long_ticks_cut(line: &str) -> String {
    let mut out = String::new();
    let mut parts = line.split('`').enumerate().peekable();
    while let Some((i, part)) = parts.next() {
        if i > 0 {
            out.push('`');
        }
        let inside = i % 2 == 1 && parts.peek().is_some();
        if inside {
            // The user's text: its control characters escaped, a newline too (hundred-and-
            // fifth hostile round, D3: serde's "unknown variant" quoted one raw).
            out.push_str(&controls_escaped(&cut_long(part)));
        } else {
            out.push_str(part);
        }
    }
    out
}

/// A user's text with its control characters escaped (every one, or all but the line breaks
/// of a message): [`ntk_files::shown`]. Both tools print every error through
/// [`message_escaped`] (ninety-ninth hostile round, D1: a key, a TOML string decoded from its
/// escapes and a path, each holding ESC, were written raw).
pub use ntk_files::shown::{controls_escaped, message_escaped};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_line_breaks_kept_in_a_message() {
        let raw = "bad key `mo\x1b[31mdel`\tand\x7f\n10 | x = 1";
        assert_eq!(
            controls_escaped(raw),
            "bad key `mo\\u{1b}[31mdel`\\tand\\u{7f}\\n10 | x = 1"
        );
        assert_eq!(
            message_escaped(raw),
            "bad key `mo\\u{1b}[31mdel`\\tand\\u{7f}\n10 | x = 1"
        );
        assert_eq!(message_escaped("modèl.width"), "modèl.width");
    }
}
