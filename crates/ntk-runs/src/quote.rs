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
