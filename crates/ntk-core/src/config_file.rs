//! TOML config files: read, parse, and errors that name the file, line and key.

use std::path::Path;

/// Reads and parses a TOML config file; errors name the file, and for bad or unknown keys
/// the line and key (the toml crate's message).
pub fn load_toml<T: serde::de::DeserializeOwned>(path: &Path) -> crate::Result<T> {
    let text = std::fs::read_to_string(path).map_err(|source| crate::Error::ReadConfig {
        path: path.to_path_buf(),
        source,
    })?;
    toml::from_str(&text).map_err(|source| crate::Error::Toml {
        path: path.to_path_buf(),
        source,
    })
}
