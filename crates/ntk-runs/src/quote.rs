//! A user's long text (a value, key or argument) quoted back in a message by its start and
//! its length, never whole: a 100,000-character `--set` value made a 200,169-byte error
//! (ninety-seventh hostile round, N5).

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
            out.push_str(&cut_long(part));
        } else {
            out.push_str(part);
        }
    }
    out
}
