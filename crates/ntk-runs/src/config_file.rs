//! TOML config files: read, parse, and errors that name the file, line and key.

use std::path::Path;

/// The tables of a training config (`ntk-train`'s) that no probe config has: how each tool
/// tells the other's config from its own.
pub const TRAINING_TABLES: [&str; 6] = [
    "optim",
    "train",
    "schedule",
    "ntk",
    "representations",
    "prediction",
];

/// The tables a config of either tool may have besides [`TRAINING_TABLES`]: with them, every
/// section, each given as a table or not at all ([`not_a_table`]).
pub const OTHER_TABLES: [&str; 6] = ["data", "model", "resnet", "probe", "onnx", "sweep"];

/// The first of `table`'s sections, or of `sweep.families`' entries, given as something
/// other than a table, and the message that says so. serde reads a struct from an array by
/// position, so `prediction = []` turned the prediction on, `ntk = [5, 60]` set `ntk.every`
/// and `ntk.n`, and a failed reading named Rust types (hundred-and-thirty-fifth hostile
/// round, second review, D3).
pub fn not_a_table(table: &toml::Table) -> Option<(String, String)> {
    let what = |v: &toml::Value| match v {
        toml::Value::Array(_) => "an array",
        toml::Value::String(_) => "a string",
        toml::Value::Integer(_) => "an integer",
        toml::Value::Float(_) => "a float",
        toml::Value::Boolean(_) => "a boolean",
        toml::Value::Datetime(_) => "a date",
        toml::Value::Table(_) => "a table",
    };
    for (key, value) in table {
        let section =
            OTHER_TABLES.contains(&key.as_str()) || TRAINING_TABLES.contains(&key.as_str());
        if section && !value.is_table() {
            return Some((
                key.clone(),
                format!(
                    "{key} is a table of keys ([{key}] with its keys below it, or {key} = {{ ... }}), \
                     not {}: no section is read by position",
                    what(value)
                ),
            ));
        }
    }
    let families = table.get("sweep").and_then(|s| s.get("families"));
    // A table (`[sweep.families]`) where a list of them belongs: said in these words, where
    // serde's were "invalid type: map, expected a sequence" (hundred-and-thirty-sixth
    // hostile round, N3).
    if let Some(value) = families.filter(|v| !v.is_array()) {
        return Some((
            "sweep.families".into(),
            format!(
                "sweep.families is a list of tables ([{{ activation = ..., normalization = ... \
                 }}, ...] or [[sweep.families]] entries), not {}",
                what(value)
            ),
        ));
    }
    if let Some(toml::Value::Array(entries)) = families
        && let Some(entry) = entries.iter().find(|e| !e.is_table())
    {
        return Some((
            "sweep.families".into(),
            format!(
                "sweep.families: each entry is a table {{ activation = ..., normalization = ... }}, \
                 not {}",
                what(entry)
            ),
        ));
    }
    None
}

/// The line of `text` that gives `key` (its last part, `families` for `sweep.families`), for
/// a message: `line N: `, or nothing where none is found.
pub fn line_of_key(text: &str, key: &str) -> String {
    let last = key.rsplit('.').next().unwrap_or(key);
    // `key = ...`, or a table header of it, `[[key]]` or `[key]` (hundred-and-thirty-sixth
    // hostile round, N3: `[[optim]]` named no line).
    let header = |l: &str| {
        let inner = l
            .strip_prefix("[[")
            .and_then(|r| r.split("]]").next())
            .or_else(|| l.strip_prefix('[').and_then(|r| r.split(']').next()));
        inner.is_some_and(|k| k.trim() == key)
    };
    text.lines()
        .position(|l| {
            let l = l.trim_start();
            header(l)
                || l.strip_prefix(last)
                    .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map_or(String::new(), |i| format!("line {}: ", i + 1))
}

/// [`not_a_table`] of a file's `text`, as the file's error.
pub fn check_sections(path: &Path, text: &str) -> crate::Result<()> {
    let Ok(table) = text.parse::<toml::Table>() else {
        return Ok(()); // the parse below says why
    };
    match not_a_table(&table) {
        Some((key, message)) => Err(crate::Error::ConfigKey {
            path: path.to_path_buf(),
            message: format!("{}{message}", line_of_key(text, &key)),
            key: None,
        }),
        None => Ok(()),
    }
}

/// Reads and parses a TOML config file; errors name the file, and for bad or unknown keys
/// the line and key (the toml crate's message).
pub fn load_toml<T: serde::de::DeserializeOwned>(path: &Path) -> crate::Result<T> {
    parse_toml(path, &read_text(path)?)
}

/// [`load_toml`] of a file's `text` already read.
pub fn parse_toml<T: serde::de::DeserializeOwned>(path: &Path, text: &str) -> crate::Result<T> {
    check_sections(path, text)?;
    toml::from_str(text).map_err(|source| {
        // A key beside its former name: both named, with the line of the table.
        if let Some(message) = former_name_given_twice(source.message(), "") {
            let line = source.span().map_or(String::new(), |s| {
                format!("line {}: ", text[..s.start].matches('\n').count() + 1)
            });
            return crate::Error::ConfigWith {
                path: path.to_path_buf(),
                origins: Vec::new(),
                message: format!("{line}{message}"),
                key: None,
            };
        }
        // A table where a name belongs (`activation = {name = "erf"}`), which serde reads as
        // a tagged variant and answers in words that name no name (ninety-eighth hostile
        // round, N5): said as a name in quotes expected, with the line.
        if let Some(span) = source.span()
            && variant_of_table(source.message())
        {
            let start = text[..span.start].rfind('\n').map_or(0, |i| i + 1);
            let line = &text[start..];
            let line = line.lines().next().unwrap_or_default().trim();
            let value = line.split_once('=').map_or("", |(_, v)| v.trim_start());
            if value.starts_with('{') {
                return crate::Error::ConfigWith {
                    path: path.to_path_buf(),
                    origins: Vec::new(),
                    message: format!(
                        "line {}: {}: expected a name in quotes (KEY = \"name\"), found a table",
                        text[..span.start].matches('\n').count() + 1,
                        crate::quote::cut_long(line)
                    ),
                    key: None,
                };
            }
        }
        crate::Error::Toml {
            path: path.to_path_buf(),
            source: Box::new(source),
        }
    })
}

/// Whether serde's `message` is one it gives for a table read as an externally tagged
/// variant where a name (an enum) belongs (`{name = "erf"}` for an activation).
pub(crate) fn variant_of_table(message: &str) -> bool {
    message.starts_with("unknown variant")
        || message.starts_with("wanted exactly 1 element")
        || message == "expected empty table"
}

/// The largest config file read (a config is a few kilobytes; this stops `/dev/zero`).
pub const MAX_CONFIG_BYTES: u64 = 16 << 20;

/// Reads a config file's text: a regular file (a FIFO, a device or `/dev/stdin` as a pipe
/// would hang, never end, or be read only once) of at most [`MAX_CONFIG_BYTES`].
pub fn read_text(path: &Path) -> crate::Result<String> {
    use std::io::Read;
    let err = |source| crate::Error::ReadConfig {
        path: path.to_path_buf(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(err)?;
    if !meta.is_file() {
        return Err(err(std::io::Error::other(
            "not a regular file (a directory, FIFO, device or pipe); write the config to a \
             file",
        )));
    }
    let mut bytes = Vec::new();
    let file = std::fs::File::open(path).map_err(err)?;
    file.take(MAX_CONFIG_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(err)?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(err(std::io::Error::other(format!(
            "larger than {} MiB; not a config",
            MAX_CONFIG_BYTES >> 20
        ))));
    }
    // Where the text stops being UTF-8, as a `probe.blocks` file's error says it (thirty-first
    // hostile round, N4: "stream did not contain valid UTF-8", no place).
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = 1 + e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count();
        err(std::io::Error::other(format!(
            "not UTF-8 text (byte {at}, line {line}); a config is TOML, which is UTF-8"
        )))
    })
}

/// Keys read under a former name as well (a serde alias), as (key, former name).
const FORMER_NAMES: &[(&str, &str)] = &[("backend", "device")];

/// serde's `duplicate field `K`` for a key `K` given beside its former name (in the table
/// `at`, when known), in words that name both.
pub(crate) fn former_name_given_twice(message: &str, at: &str) -> Option<String> {
    let (field, former) = message
        .strip_prefix("duplicate field `")
        .and_then(|rest| rest.split_once('`'))
        .and_then(|(f, _)| FORMER_NAMES.iter().find(|(new, _)| *new == f).copied())?;
    let table = if at.is_empty() {
        String::new()
    } else {
        format!("{at}.")
    };
    Some(format!(
        "{table}{former} and {table}{field} both given: `{former}` is the former name of \
         `{field}`, read as the same key; keep one"
    ))
}

#[cfg(test)]
mod tests {
    /// Thirty-first hostile round, N4: a config with a byte that is not UTF-8 is refused naming
    /// the file and the byte's place.
    #[test]
    fn a_config_that_is_not_utf8_is_refused_at_its_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, b"[data]\nn = 3\n# caf\xe9\n").unwrap();
        let e = super::read_text(&path).unwrap_err().to_string();
        assert!(
            e.contains("c.toml: cannot read config: not UTF-8 text (byte 18, line 3)"),
            "{e}"
        );
    }

    /// A section given as an array of tables (`[[optim]]`) names its line, and
    /// `sweep.families` given as a table is said in words of its own, with its line
    /// (hundred-and-thirty-sixth hostile round, N3: no line; serde's "invalid type: map,
    /// expected a sequence").
    #[test]
    fn sections_of_the_wrong_kind_name_their_line() {
        let path = std::path::Path::new("c.toml");
        let said = |text: &str| super::check_sections(path, text).unwrap_err().to_string();
        let e = said("[data]\nn = 3\n\n[[optim]]\nlr = 0.1\n");
        assert!(
            e.contains("c.toml: line 4: optim is a table of keys") && e.contains("not an array"),
            "{e}"
        );
        let e = said("[sweep]\ndepths = [1]\n\n[sweep.families]\nactivation = \"relu\"\n");
        assert!(
            e.contains("c.toml: line 4: sweep.families is a list of tables")
                && e.contains("not a table"),
            "{e}"
        );
        // `[[sweep.families]]` entries are a list of tables, as meant.
        let ok = "[sweep]\ndepths = [1]\n[[sweep.families]]\nactivation = \"relu\"\n";
        assert!(super::check_sections(path, ok).is_ok());
    }
}
