//! `bao selfplay`: generate training data.

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::dataio::store::{is_url, Store};
use crate::search::{Evaluator, UniformEvaluator};
use crate::training::fleet::cache::default_cache_dir;
use crate::training::fleet::worker::{auto_worker_id, run_worker, WorkerOptions};
use crate::training::selfplay::{run_selfplay, SelfplayRunConfig};

/// Play self-play games and write sample shards and game records.
///
/// Settings come from the `[search]` and `[selfplay]` sections of the config (see
/// `bao::search::SearchParams` and `bao::training::selfplay::SelfplayConfig`); any key can be
/// overridden with `--set section.key=value` (value in TOML syntax), e.g.
/// `--set search.c_puct=1.5 --set search.algorithm=gumbel --set selfplay.sims=64`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Config: the `[search]` and `[selfplay]` sections of a run config (other \
sections are ignored). Override any key with --set SECTION.KEY=VALUE (TOML value), e.g.\n  \
--set search.c_puct=1.5 --set search.algorithm=gumbel --set selfplay.sims=64 \
--set 'selfplay.temperature=[[0, 1.0], [30, 0.0]]'\n\
Output: selfplay-NNNNNN.shard (samples, see bao::dataio::shard) and \
selfplay-NNNNNN.games.jsonl (game records).\n\n\
Fleet worker: `bao selfplay --model ROOT/models/LATEST --out ROOT [--worker-id auto] \
[--max-time 2h]` with ROOT a directory or an s3://, gs://, az:// URL: plays \
shards with the newest model the trainer (`bao learn --data ROOT`) published, uploads them to \
ROOT/shards/gen-NNNNNN/, follows models/LATEST between shards, and exits when the run is \
finished. Settings come from ROOT/run.toml (--config/--set do not apply)."
)]
pub struct Args {
    /// Run config (TOML). Without it, defaults apply.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Model checkpoint, or `uniform` for uniform priors and zero values (generation 0), or
    /// `ROOT/models/LATEST` to work in a fleet (see below).
    #[arg(long, default_value = "uniform")]
    pub model: String,
    /// Games to play (required unless working in a fleet).
    #[arg(long)]
    pub games: Option<usize>,
    /// Output directory for shards and records; in a fleet, the run's ROOT.
    #[arg(long)]
    pub out: String,
    /// Fleet: name in shard names; `auto` uses the Slurm array task, the Kubernetes job
    /// completion index, $BAO_WORKER_ID, else HOST-PID.
    #[arg(long, default_value = "auto")]
    pub worker_id: String,
    /// Fleet: stop starting shards after this long (e.g. `90s`, `2h`).
    #[arg(long, value_parser = humantime::parse_duration)]
    pub max_time: Option<std::time::Duration>,
    /// Fleet: stop after uploading this many shards.
    #[arg(long)]
    pub max_shards: Option<u64>,
    /// Fleet: seconds between looks at LATEST while waiting (default: run.toml's fleet.poll_secs).
    #[arg(long)]
    pub poll: Option<f64>,
    /// Fleet: games stepped together, overriding run.toml (e.g. larger on a GPU).
    #[arg(long)]
    pub games_in_flight: Option<usize>,
    /// Fleet: local model cache (default $BAO_CACHE_DIR or ~/.cache/bao-zero/models).
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// Fleet: device for the network.
    #[arg(long, default_value = "auto")]
    pub device: crate::neuralnet::DeviceChoice,
    /// Override a config key: `section.key=value` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if let Some(root) = fleet_root(&args.model).map(str::to_string) {
        return run_fleet_worker(&root, args);
    }
    anyhow::ensure!(
        !is_url(&args.out),
        "--out {}: a URL needs --model ROOT/models/LATEST (fleet mode)",
        args.out
    );
    let games = args
        .games
        .context("--games is required (unless --model is ROOT/models/LATEST)")?;
    let out = PathBuf::from(&args.out);
    let config = load_config(args.config.as_deref(), &args.set)?;
    crate::setup::torch_threads(None);
    let mut evaluator = load_evaluator(&args.model, config.variant(), config.selfplay.precision)?;
    let stats = run_selfplay(&config, evaluator.as_mut(), games, &out, !args.quiet)?;
    println!(
        "{} games ({} unfinished, South won {}), {} positions, {:.1} plies/game, {} shards in {}",
        stats.games,
        stats.unfinished,
        stats.south_wins,
        stats.positions,
        stats.avg_plies(),
        stats.shards.len(),
        out.display()
    );
    println!(
        "{:.0} sims/s, batch fill {:.0}%, {:.0}% of {:.1}s in the evaluator",
        stats.sims_per_sec(),
        100.0 * stats.avg_fill(),
        100.0 * stats.forward_share(),
        stats.wall_secs
    );
    if stats.solver_proven > 0 {
        println!(
            "solver: {} of {} samples proven (exact value targets), {} of them against the game's result",
            stats.solver_proven, stats.positions, stats.solver_corrected
        );
    }
    Ok(())
}

/// The run root of `--model ROOT/models/LATEST`, if that is what was given.
fn fleet_root(model: &str) -> Option<&str> {
    let latest = crate::training::fleet::layout::LATEST;
    if model == latest {
        return Some(".");
    }
    model
        .strip_suffix(latest)?
        .strip_suffix('/')
        .filter(|r| !r.is_empty())
}

fn run_fleet_worker(root: &str, args: Args) -> anyhow::Result<()> {
    let same = |a: &str, b: &str| a.trim_end_matches('/') == b.trim_end_matches('/');
    anyhow::ensure!(
        same(root, &args.out),
        "--out {} must be the run root that --model {} lies in ({root})",
        args.out,
        args.model
    );
    anyhow::ensure!(
        args.config.is_none() && args.set.is_empty() && args.games.is_none(),
        "a fleet worker takes its settings from {root}/run.toml: drop --config, --set and --games \
         (use --max-shards / --max-time to bound it)"
    );
    crate::setup::torch_threads(None);
    let store = Store::open(&args.out)?;
    let worker_id = if args.worker_id == "auto" {
        auto_worker_id()
    } else {
        args.worker_id.clone()
    };
    let opts = WorkerOptions {
        worker_id,
        cache_dir: args.cache.clone().unwrap_or_else(default_cache_dir),
        device: args.device,
        max_time: args.max_time,
        max_shards: args.max_shards,
        poll: args.poll.map(std::time::Duration::from_secs_f64),
        games_in_flight: args.games_in_flight,
        progress: !args.quiet,
    };
    let stats = run_worker(&store, &opts)?;
    println!(
        "worker {}: {} shards, {} games, {} samples, {:.0} sims/s over {:.1}s (generations {:?}); stopped: {}",
        opts.worker_id,
        stats.shards,
        stats.games,
        stats.samples,
        stats.simulations as f64 / stats.secs.max(1e-9),
        stats.secs,
        stats.generations,
        stats.stopped
    );
    Ok(())
}

/// Reads a run config's self-play settings (or the defaults) with `section.key=value`
/// overrides ([`crate::setup::with_overrides`]), checked.
pub fn load_config(path: Option<&Path>, sets: &[String]) -> anyhow::Result<SelfplayRunConfig> {
    let (config, what) = match path {
        Some(p) => (crate::config::load_toml(p)?, p.display().to_string()),
        None => (SelfplayRunConfig::default(), "defaults".to_string()),
    };
    let config: SelfplayRunConfig = crate::setup::with_overrides(config, &what, sets)?;
    config
        .validate()
        .with_context(|| format!("invalid config {what}"))?;
    Ok(config)
}

/// The evaluator behind a `--model` argument: `uniform`, or a checkpoint (`.safetensors`
/// with its JSON sidecar) that must have been trained for `variant`, judging in `precision`.
pub fn load_evaluator(
    spec: &str,
    variant: crate::game::Variant,
    precision: crate::neuralnet::Precision,
) -> anyhow::Result<Box<dyn Evaluator>> {
    match spec {
        "uniform" => Ok(Box::new(UniformEvaluator)),
        path => {
            let choice = crate::setup::NetChoice {
                precision,
                ..Default::default()
            };
            let net = crate::setup::evaluator(std::path::Path::new(path), Some(variant), &choice)?;
            Ok(Box::new(net))
        }
    }
}
