//! `bao selfplay`: generate training data.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use crate::program::selfplay::{run_selfplay, SelfplayRunConfig};
use crate::search::{Evaluator, UniformEvaluator};

/// Play self-play games and write sample shards and game records.
///
/// Settings come from the `[search]` and `[selfplay]` sections of the config (see
/// `bao::search::SearchParams` and `bao::program::selfplay::SelfplayConfig`); any key can be
/// overridden with `--set section.key=value` (value in TOML syntax), e.g.
/// `--set search.c_puct=1.5 --set search.algorithm=gumbel --set selfplay.sims=64`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Config: the `[search]` and `[selfplay]` sections of a run config (other \
sections are ignored). Override any key with --set SECTION.KEY=VALUE (TOML value), e.g.\n  \
--set search.c_puct=1.5 --set search.algorithm=gumbel --set selfplay.sims=64 \
--set 'selfplay.temperature=[[0, 1.0], [30, 0.0]]'\n\
Output: selfplay-NNNNNN.shard (samples, see bao::dataio::shard) and \
selfplay-NNNNNN.games.jsonl (game records).")]
pub struct Args {
    /// Run config (TOML). Without it, defaults apply.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Model checkpoint, or `uniform` for uniform priors and zero values (generation 0).
    #[arg(long, default_value = "uniform")]
    pub model: String,
    /// Games to play.
    #[arg(long)]
    pub games: usize,
    /// Output directory for shards and records.
    #[arg(long)]
    pub out: PathBuf,
    /// Override a config key: `section.key=value` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let config = load_config(args.config.as_deref(), &args.set)?;
    crate::neuralnet::configure_threads(None);
    let mut evaluator = load_evaluator(&args.model, config.variant())?;
    let stats = run_selfplay(&config, evaluator.as_mut(), args.games, &args.out, !args.quiet)?;
    println!(
        "{} games ({} unfinished, South won {}), {} positions, {:.1} plies/game, {} shards in {}",
        stats.games,
        stats.unfinished,
        stats.south_wins,
        stats.positions,
        stats.avg_plies(),
        stats.shards.len(),
        args.out.display()
    );
    println!(
        "{:.0} sims/s, batch fill {:.0}%, {:.0}% of {:.1}s in the evaluator",
        stats.sims_per_sec(),
        100.0 * stats.avg_fill(),
        100.0 * stats.forward_share(),
        stats.wall_secs
    );
    Ok(())
}

/// Reads a run config (or defaults) and applies `section.key=value` overrides.
pub fn load_config(path: Option<&Path>, sets: &[String]) -> anyhow::Result<SelfplayRunConfig> {
    let mut table: toml::Table = match path {
        Some(p) => {
            let text = std::fs::read_to_string(p).with_context(|| format!("cannot read config {}", p.display()))?;
            crate::config::parse_toml(&text).with_context(|| format!("invalid config {}", p.display()))?
        }
        None => toml::Table::new(),
    };
    apply_overrides(&mut table, sets)?;
    let text = toml::to_string(&table).context("cannot re-serialize config")?;
    let what = path.map_or("defaults".to_string(), |p| p.display().to_string());
    let config: SelfplayRunConfig =
        crate::config::parse_toml(&text).with_context(|| format!("invalid config {what} (with --set overrides)"))?;
    config.validate().with_context(|| format!("invalid config {what}"))?;
    Ok(config)
}

/// Applies `a.b.c=value` overrides to a TOML table; `value` is TOML (`1.5`, `true`,
/// `"gumbel"`, `[[0, 1.0]]`), and a bare word is taken as a string.
pub fn apply_overrides(table: &mut toml::Table, sets: &[String]) -> anyhow::Result<()> {
    for set in sets {
        let Some((key, value)) = set.split_once('=') else {
            bail!("--set `{set}`: expected KEY=VALUE, e.g. search.c_puct=1.5");
        };
        let value: toml::Value = match format!("v = {value}").parse::<toml::Table>() {
            Ok(mut t) => t.remove("v").expect("parsed key"),
            Err(_) => toml::Value::String(value.trim().to_string()),
        };
        let parts: Vec<&str> = key.trim().split('.').collect();
        if parts.iter().any(|p| p.is_empty()) {
            bail!("--set `{set}`: empty key part");
        }
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

/// The evaluator behind a `--model` argument: `uniform`, or a checkpoint (`.safetensors`
/// with its JSON sidecar) that must have been trained for `variant`.
pub fn load_evaluator(spec: &str, variant: crate::game::Variant) -> anyhow::Result<Box<dyn Evaluator>> {
    match spec {
        "uniform" => Ok(Box::new(UniformEvaluator)),
        path => {
            let net = crate::neuralnet::NetEvaluator::load_for(
                std::path::Path::new(path),
                variant,
                crate::neuralnet::DeviceChoice::Auto,
            )?;
            Ok(Box::new(net))
        }
    }
}
