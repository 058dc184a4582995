//! TOML run configs under `configs/`, parsed into typed structs that refuse unknown keys.

use std::path::Path;

use anyhow::Context;
use serde::de::DeserializeOwned;

/// Reads and parses a TOML file; errors name the file and, for unknown keys, the key.
pub fn load_toml<T: DeserializeOwned>(path: &Path) -> anyhow::Result<T> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read config {}", path.display()))?;
    parse_toml(&text).with_context(|| format!("invalid config {}", path.display()))
}

/// Parses TOML text (see [`load_toml`]).
pub fn parse_toml<T: DeserializeOwned>(text: &str) -> anyhow::Result<T> {
    toml::from_str(text).map_err(|e| anyhow::anyhow!("{}", e.to_string().trim_end()))
}

/// The value of a command-line override `KEY=VALUE` (`--set`, `--search`, a spec's options):
/// `VALUE` read as TOML (`1.5`, `true`, `"gumbel"`, `[[0, 1.0]]`), or, where it is not TOML, as
/// the bare word it is (`gumbel`).
pub fn override_value(value: &str) -> toml::Value {
    match format!("v = {value}").parse::<toml::Table>() {
        Ok(mut t) => t.remove("v").expect("the key just parsed"),
        Err(_) => toml::Value::String(value.trim().to_string()),
    }
}
