//! A file's format by its first bytes, for a place a command writes a figure or a table: a
//! file of the user's named as one is not replaced (ninety-eighth hostile round, D5). No other module of
//! this crate is used here.

use std::path::Path;

/// Why the regular file at `path`, named as a figure, is not one of its name's format by its
/// first 4 KiB: a `.png` without the PNG signature, a `.pdf` without `%PDF-`, an `.svg`
/// without `<svg` (a caption, or any other name, is any text). `None` where it is, or where
/// `path` is no regular file. A figure command's place of a figure of the user's is refused by
/// it (ninety-eighth hostile round, D5: a user's `transfer_norm.png` was replaced).
pub fn not_of_its_format(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let (magic, what): (&[u8], &str) = if name.ends_with(".png") {
        (
            b"\x89PNG\r\n\x1a\n",
            "it does not begin with the PNG signature",
        )
    } else if name.ends_with(".pdf") {
        (b"%PDF-", "it does not begin `%PDF-`")
    } else if name.ends_with(".svg") {
        (b"<svg", "its first 4 KiB hold no `<svg`")
    } else {
        return None;
    };
    let start = match start_of(path)? {
        Ok(start) => start,
        Err(why) => return Some(why),
    };
    let found = if name.ends_with(".svg") {
        start.windows(magic.len()).any(|w| w == magic)
    } else {
        start.starts_with(magic)
    };
    (!found).then(|| what.to_string())
}

/// Why the regular file at `path` is not a table whose header begins with one of the names
/// `heads` (its first line begins `head,`: the header written now, then those of older
/// versions); `None` where it is, or where `path` is no regular file. A figure command's
/// place of a table of the user's is refused by it (D5: a user's `gmap.csv` was replaced).
pub fn not_a_table_of(path: &Path, heads: &[&str]) -> Option<String> {
    let start = match start_of(path)? {
        Ok(start) => start,
        Err(why) => return Some(why),
    };
    let begins: Vec<String> = heads.iter().map(|h| format!("`{h},`")).collect();
    (!heads
        .iter()
        .any(|h| start.starts_with(format!("{h},").as_bytes())))
    .then(|| format!("its first line does not begin {}", begins.join(" or ")))
}

/// The first 4 KiB of the regular file at `path`; `None` where it is no regular file (never
/// opened: a FIFO would block), the error's words where it cannot be read.
fn start_of(path: &Path) -> Option<Result<Vec<u8>, String>> {
    use std::io::Read as _;
    if !std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) {
        return None;
    }
    let mut start = Vec::new();
    Some(
        std::fs::File::open(path)
            .and_then(|f| f.take(4096).read_to_end(&mut start))
            .map(|_| start)
            .map_err(|e| format!("cannot be read ({e})")),
    )
}
