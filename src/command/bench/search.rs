//! `bao bench search`: simulations per second of the lockstep self-play search, and the share
//! of wall time spent in the evaluator.
//!
//! With the uniform evaluator the figure is search overhead alone (selection, move
//! generation, encoding, backup); with a network it shows how much of the time the forward
//! pass takes (the goal is most of it). The single-game rows are what a player gets: one tree,
//! one thread, at batch 1 and with leaf batching (`--leaves`). `--precision f32,bf16,int8` measures
//! every network in each number format (see `neuralnet::Precision`). `--player-ms MS` adds the
//! rows of a `net:` player making timed moves as in a match (its cache and tree reuse), and
//! `--profile` splits their time by phase (`util::profile`).

use std::time::Instant;

use anyhow::Context;

use crate::game::Variant;
use crate::neuralnet::{Backend, DeviceChoice, NetEvaluator, Precision};
use crate::search::{Evaluator, Mcts, SearchParams, UniformEvaluator};
use crate::training::selfplay::{run_selfplay, SelfplayRunConfig};

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
    /// Checkpoints for the single-game figures (default: the shipped model of the variant).
    #[arg(long, value_delimiter = ',')]
    pub models: Vec<std::path::PathBuf>,
    /// Leaves per evaluator call in the single-game figures (leaf batching within one tree).
    #[arg(long, value_delimiter = ',', default_value = "1,4,8,16,32")]
    pub leaves: Vec<usize>,
    /// Simulations per position in the single-game figures.
    #[arg(long, default_value_t = 800)]
    pub single_sims: usize,
    /// Number formats to measure each network in (comma-separated: f32, bf16, int8).
    #[arg(long, value_delimiter = ',', default_value = "f32")]
    pub precision: Vec<Precision>,
    /// Forward passes to measure each network with (comma-separated: auto, torch, native).
    #[arg(long, value_delimiter = ',', default_value = "auto")]
    pub backends: Vec<Backend>,
    /// Also measure lockstep self-play (the first figures) with each of `--models`, as a run's
    /// self-play plays with its network.
    #[arg(long)]
    pub models_selfplay: bool,
    /// Player rows: each of `--models` as the `net:` player it is in a match (its cache, tree
    /// reuse, 8 leaves), playing `--player-moves` timed moves of this many milliseconds (CPU
    /// time, one thread) in games from random openings; 0 leaves them out.
    #[arg(long, default_value_t = 0)]
    pub player_ms: u64,
    /// Moves the player rows play per pass (in games of at most 10 moves each from random
    /// openings, the same for every pass).
    #[arg(long, default_value_t = 20)]
    pub player_moves: usize,
    /// With the player rows: where the moves' time went (encoding, forward pass, cache, tree
    /// selection and backup, clock reads), as shares of the time measured.
    #[arg(long)]
    pub profile: bool,
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
    crate::setup::torch_threads(None);
    for preset in &args.presets {
        let config = crate::neuralnet::NetConfig::preset(preset)?;
        let device = DeviceChoice::Auto.resolve()?;
        for (precision, backend) in super::pass_variants(&args.precision, &args.backends) {
            let net = crate::neuralnet::Network::new(&config, args.variant, device)?;
            let net = NetEvaluator::new(net).with_precision(precision)?;
            let mut net = net.with_backend(backend)?;
            pool.install(|| measure(&args, threads, &mut net))?;
        }
    }
    single_game(&args, &mut uniform)?;
    let models = if args.models.is_empty() {
        let shipped = std::path::PathBuf::from(format!("models/{}.safetensors", args.variant));
        if shipped.is_file() {
            vec![shipped]
        } else {
            Vec::new()
        }
    } else {
        args.models.clone()
    };
    for path in &models {
        for (precision, backend) in super::pass_variants(&args.precision, &args.backends) {
            let choice = crate::setup::NetChoice {
                precision,
                backend,
                ..Default::default()
            };
            let mut net = crate::setup::evaluator(path, Some(args.variant), &choice)
                .with_context(|| format!("cannot load {}", path.display()))?;
            if args.models_selfplay {
                pool.install(|| measure(&args, threads, &mut net))?;
            }
            single_game(&args, &mut net)?;
        }
    }
    if args.player_ms > 0 {
        for path in &models {
            for (precision, backend) in super::pass_variants(&args.precision, &args.backends) {
                player_rows(&args, path, precision, backend)?;
            }
        }
    }
    Ok(())
}

/// A `net:` player's timed moves, as a match plays them (see `--player-ms`): simulations a
/// second over the moves' CPU time and, with `--profile`, the share of each phase.
fn player_rows(
    args: &Args,
    path: &std::path::Path,
    precision: Precision,
    backend: Backend,
) -> anyhow::Result<()> {
    use crate::play::players::{build_str, Limits};
    use crate::search::clock::thread_cpu_time;
    use crate::util::profile;
    let spec = format!(
        "net:{}:ms={}:precision={precision}:backend={backend}",
        path.display(),
        args.player_ms
    );
    let mut player = build_str(&spec, args.variant, 1)
        .with_context(|| format!("cannot build the player {spec}"))?;
    const MOVES_PER_GAME: usize = 10;
    // Games can end early: openings enough for every move to be played.
    let openings = super::players::sample_positions(args.variant, args.player_moves, 7);
    let limits = Limits::default();
    let (mut sims, mut moves, mut secs) = (0u64, 0usize, 0.0f64);
    if args.profile {
        profile::start();
    }
    'games: for (g, opening) in openings.iter().enumerate() {
        player.new_game(g as u64);
        let mut pos = *opening;
        for _ in 0..MOVES_PER_GAME {
            if moves == args.player_moves {
                break 'games;
            }
            if pos.legal_moves().is_empty() {
                continue 'games;
            }
            let t = thread_cpu_time();
            let chosen = player.choose(&pos, &limits)?;
            secs += (thread_cpu_time() - t).as_secs_f64();
            sims += chosen.analysis.nodes.unwrap_or(0);
            moves += 1;
            match chosen.mv.after {
                crate::game::After::Position(p) => pos = p,
                crate::game::After::Won(_) => continue 'games,
            }
        }
    }
    let phases = args.profile.then(profile::stop);
    let rate = sims as f64 / secs.max(1e-9);
    println!(
        "{:<24} {:>12.0} {:>14.0}   {moves} moves, {:.1} ms and {:.0} sims a move",
        format!(
            "{} {precision} {backend}, player",
            short(&path.display().to_string())
        ),
        rate,
        rate,
        1e3 * secs / moves.max(1) as f64,
        sims as f64 / moves.max(1) as f64,
    );
    if let Some(phases) = phases {
        let total: f64 = phases.iter().map(|(_, d)| d.as_secs_f64()).sum();
        let shares: Vec<String> = phases
            .iter()
            .map(|(p, d)| {
                format!(
                    "{} {:.1}%",
                    p.name(),
                    100.0 * d.as_secs_f64() / total.max(1e-9)
                )
            })
            .collect();
        println!(
            "  time by phase (wall, {:.2} s): {}",
            total,
            shares.join(", ")
        );
    }
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

/// Single-game search, as a player searches (`bao play`, `bao engine`, matches): simulations
/// per second on one thread at each `--leaves`, over positions from random games, each
/// searched from a fresh tree (no cache: the cost of the search itself).
fn single_game(args: &Args, evaluator: &mut dyn Evaluator) -> anyhow::Result<()> {
    let positions = super::players::sample_positions(args.variant, 8, 1);
    for &leaves in &args.leaves {
        let params = SearchParams {
            leaves_per_step: leaves,
            ..SearchParams::default()
        };
        params.validate().context("--leaves")?;
        let (mut sims, mut calls, mut fill) = (0u64, 0u64, 0.0f64);
        let mut timed = Timed {
            inner: &mut *evaluator,
            secs: 0.0,
        };
        let t = Instant::now();
        for (i, pos) in positions.iter().enumerate() {
            let mut mcts = Mcts::new(params.clone(), i as u64);
            sims += mcts.search(pos, args.single_sims, &mut timed)?.simulations as u64;
            let stats = mcts.last_stats();
            calls += stats.evaluator_calls as u64;
            fill += stats.batch_fill as f64 * stats.evaluator_calls as f64;
        }
        let secs = t.elapsed().as_secs_f64();
        let rate = sims as f64 / secs;
        println!(
            "{:<24} {:>12.0} {:>14.0} {:>9.0}% {:>7.0}%",
            format!("{}, 1 game, {leaves} leaves", short(&timed.name())),
            rate,
            rate,
            100.0 * timed.secs / secs,
            100.0 * fill / calls.max(1) as f64
        );
    }
    Ok(())
}

/// An evaluator that adds up the time spent inside it.
struct Timed<'a> {
    inner: &'a mut dyn Evaluator,
    secs: f64,
}

impl Evaluator for Timed<'_> {
    fn evaluate(
        &mut self,
        positions: &[crate::game::Position],
        masks: &[u64],
        policy: &mut [f32],
        values: &mut [f32],
    ) -> anyhow::Result<()> {
        let t = Instant::now();
        let r = self.inner.evaluate(positions, masks, policy, values);
        self.secs += t.elapsed().as_secs_f64();
        r
    }
    fn name(&self) -> String {
        self.inner.name()
    }
}

/// The last path component of an evaluator's name (checkpoint paths are long).
fn short(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

fn tempfile_dir() -> anyhow::Result<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!("bao-bench-search-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
