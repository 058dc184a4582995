//! TOML configs (`configs/`, checkpoint sidecars), parsed into typed structs that refuse
//! unknown keys, and the one reader of command-line overrides `KEY=VALUE` (`bao train --set`,
//! `bao selfplay --set`, `bao analyze --set`, `bao learn --search`, a player spec's options).

use std::path::Path;

use anyhow::{bail, Context};
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

/// Splits one command-line override `KEY=VALUE` (given to `flag`) into its trimmed key and its
/// value ([`override_value`]).
pub fn parse_assignment<'a>(flag: &str, set: &'a str) -> anyhow::Result<(&'a str, toml::Value)> {
    let Some((key, value)) = set.split_once('=') else {
        bail!("{flag} {set}: expected KEY=VALUE (e.g. search.c_puct=1.5)");
    };
    let key = key.trim();
    if key.is_empty() || key.split('.').any(str::is_empty) {
        bail!("{flag} `{set}`: empty key part");
    }
    Ok((key, override_value(value)))
}

/// Applies `--set SECTION.KEY=VALUE` overrides to a config as a TOML table (sections are made
/// as needed; the caller parses the table again, which refuses unknown keys and bad values).
pub fn apply_overrides(table: &mut toml::Table, sets: &[String]) -> anyhow::Result<()> {
    for set in sets {
        let (key, value) = parse_assignment("--set", set)?;
        let parts: Vec<&str> = key.split('.').collect();
        let mut t = &mut *table;
        for p in &parts[..parts.len() - 1] {
            t = t
                .entry(p.to_string())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()))
                .as_table_mut()
                .with_context(|| format!("--set `{set}`: `{p}` is not a section"))?;
        }
        t.insert(parts[parts.len() - 1].to_string(), value);
    }
    Ok(())
}
