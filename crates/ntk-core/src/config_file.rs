//! TOML config files: read, parse, and errors that name the file, line and key.

use std::path::Path;

/// Reads and parses a TOML config file; errors name the file, and for bad or unknown keys
/// the line and key (the toml crate's message).
pub fn load_toml<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read config: {e}", path.display()))?;
    toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}
