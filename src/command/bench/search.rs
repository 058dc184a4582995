//! `bao bench search`: simulations per second of the lockstep self-play search, and the share
//! of wall time spent in the evaluator.
//!
//! With the uniform evaluator the figure is search overhead alone (selection, move
//! generation, encoding, backup); with a network it shows how much of the time the forward
//! pass takes (the goal is most of it).

use std::time::Instant;

use crate::game::{Position, Variant};
use crate::program::selfplay::{run_selfplay, SelfplayRunConfig};
use crate::search::{Evaluator, Mcts, UniformEvaluator};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[arg(long, default_value = "kiswahili")]
    pub variant: Variant,
    /// Games in flight in the lockstep driver.
    #[arg(long, default_value_t = 256)]
    pub batch: usize,
    /// Games to play per figure (several times `--batch`, so the batch stays full).
    #[arg(long, default_value_t = 1024)]
    pub games: usize,
    /// Simulations per move.
    #[arg(long, default_value_t = 64)]
    pub sims: usize,
    /// Ply cap per game (bounds the run).
    #[arg(long, default_value_t = 60)]
    pub max_plies: u32,
    /// Worker threads for selection (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Network presets to measure besides uniform (e.g. `tiny,small`).
    #[arg(long, value_delimiter = ',')]
    pub presets: Vec<String>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let threads = args
        .threads
        .unwrap_or_else(rayon::current_num_threads)
        .max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()?;
    println!(
        "bench search: {}, {} games in flight, {} sims/move, ply cap {}, {threads} threads",
        args.variant, args.batch, args.sims, args.max_plies
    );
    println!(
        "{:<24} {:>12} {:>14} {:>10} {:>8}",
        "evaluator", "sims/s", "sims/s/core", "forward", "fill"
    );
    let mut uniform = UniformEvaluator;
    pool.install(|| measure(&args, threads, &mut uniform))?;
    crate::neuralnet::configure_threads(None);
    for preset in &args.presets {
        let config = crate::neuralnet::NetConfig::preset(preset)?;
        let device = crate::neuralnet::DeviceChoice::Auto.resolve()?;
        let net = crate::neuralnet::Network::new(&config, args.variant, device)?;
        let mut net = crate::neuralnet::NetEvaluator::new(net);
        pool.install(|| measure(&args, threads, &mut net))?;
    }
    // Single-game search, one leaf per evaluator call: the cost a player pays per simulation.
    let mut mcts = Mcts::new(crate::search::SearchParams::default(), 1);
    let pos = Position::start(args.variant);
    let sims = 20_000;
    let t = Instant::now();
    mcts.search(&pos, sims, &mut uniform)?;
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{:<24} {:>12.0} {:>14.0} {:>10} {:>8}",
        "uniform, single game",
        sims as f64 / secs,
        sims as f64 / secs,
        "-",
        "-"
    );
    Ok(())
}

fn measure(args: &Args, threads: usize, evaluator: &mut dyn Evaluator) -> anyhow::Result<()> {
    let mut config = SelfplayRunConfig::new(args.variant);
    config.selfplay.games_in_flight = args.batch;
    config.selfplay.sims = args.sims;
    config.selfplay.max_plies = args.max_plies;
    let dir = tempfile_dir()?;
    let stats = run_selfplay(&config, evaluator, args.games, &dir, false);
    let _ = std::fs::remove_dir_all(&dir);
    let stats = stats?;
    let rate = stats.sims_per_sec();
    println!(
        "{:<24} {:>12.0} {:>14.0} {:>9.0}% {:>7.0}%",
        evaluator.name(),
        rate,
        rate / threads as f64,
        100.0 * stats.forward_share(),
        100.0 * stats.avg_fill()
    );
    Ok(())
}

fn tempfile_dir() -> anyhow::Result<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!("bao-bench-search-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
