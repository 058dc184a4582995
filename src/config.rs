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

/// A value a config refuses, naming its key as `section.key` (or `key` at the top), so that a
/// loader can add the file and the key's line ([`locate`]).
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct KeyError {
    pub key: String,
    pub message: String,
}

/// An error about the config key `key` (`section.key`).
pub fn key_error(key: &str, message: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(KeyError {
        key: key.to_string(),
        message: message.into(),
    })
}

/// Fails, naming `key`, unless `condition` holds.
pub fn ensure_key(
    condition: bool,
    key: &str,
    message: impl FnOnce() -> String,
) -> anyhow::Result<()> {
    if condition {
        Ok(())
    } else {
        Err(key_error(key, message()))
    }
}

/// `key` (`section.key`) as a config shows it: `[section] `key``.
pub fn key_name(key: &str) -> String {
    match key.rsplit_once('.') {
        Some((section, name)) => format!("[{section}] `{name}`"),
        None => format!("`{key}`"),
    }
}

/// Fails unless `min <= value <= max` (NaN fails), naming the key and the range.
pub fn check_range<T: PartialOrd + std::fmt::Display>(
    key: &str,
    value: T,
    min: T,
    max: T,
) -> anyhow::Result<()> {
    ensure_key(value >= min && value <= max, key, || {
        format!("{} = {value} is out of range {min}..={max}", key_name(key))
    })
}

/// The 1-based line of `text` (TOML) that sets `key` (`section.key`, or `key` at the top):
/// `name = ...` under `[section]`, or `section.name = ...` at the top.
pub fn key_line(text: &str, key: &str) -> Option<usize> {
    let (section, name) = key.rsplit_once('.').unwrap_or(("", key));
    let sets = |line: &str, name: &str| {
        line.strip_prefix(name)
            .is_some_and(|rest| rest.trim_start().starts_with('='))
    };
    let mut current = String::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if let Some(header) = line.strip_prefix('[').filter(|l| !l.starts_with('[')) {
            current = header.split(']').next().unwrap_or("").trim().to_string();
            continue;
        }
        if (current == section && sets(line, name))
            || (current.is_empty() && !section.is_empty() && sets(line, key))
        {
            return Some(i + 1);
        }
    }
    None
}

/// `e` (from checking the config `what`, whose text is `text`) with the file named, and the
/// line of the key it names when it names one ([`KeyError`], or a network size refused while
/// parsing): `invalid config FILE:LINE: ...`.
pub fn locate(e: anyhow::Error, what: &str, text: &str) -> anyhow::Error {
    let key = e
        .chain()
        .find_map(|c| c.downcast_ref::<KeyError>())
        .map(|k| k.key.clone())
        .or_else(|| {
            // Network sizes are checked while the `[network]` table is parsed, so their error
            // comes back as text; it names the key as "network config: `KEY`".
            let text = format!("{e:#}");
            let rest = text.split("network config: `").nth(1)?;
            Some(format!("network.{}", rest.split('`').next()?))
        });
    match key.and_then(|k| key_line(text, &k)) {
        Some(line) => e.context(format!("invalid config {what}:{line}")),
        None => e.context(format!("invalid config {what}")),
    }
}
