//! `bao bench players`: alpha-beta nodes per second and time per move of each baseline at its
//! default settings, over positions from random games.

use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::SeedableRng;

use crate::game::{Position, Variant};
use crate::play::players::{self, Limits};
use crate::search::alphabeta::AlphaBeta;
use crate::search::Clock;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[arg(long, default_value = "kujifunza")]
    pub variant: Variant,
    /// Test positions (from random games).
    #[arg(long, default_value_t = 20)]
    pub positions: usize,
    /// Alpha-beta depth for the nodes/s figure.
    #[arg(long, default_value_t = 12)]
    pub depth: u32,
    /// Players to time, comma separated.
    #[arg(long, default_value = "random,greedy,alphabeta,mcts")]
    pub players: String,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Positions `4..40` plies into random games, skipping finished ones.
/// The positions the player and network benchmarks judge: random walks of 4 to 39 plies.
pub fn sample_positions(variant: Variant, n: usize, seed: u64) -> Vec<Position> {
    let mut rng = SmallRng::seed_from_u64(seed);
    crate::game::random_games::sample_positions(variant, n, 4..40, &mut rng)
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let positions = sample_positions(args.variant, args.positions, args.seed);
    println!(
        "{} positions of {} from random games",
        positions.len(),
        args.variant
    );

    let mut ab = AlphaBeta::new(16);
    let (mut nodes, mut time) = (0u64, Duration::ZERO);
    for pos in &positions {
        ab.clear();
        let r = ab.search(pos, args.depth, &Clock::unlimited())?;
        nodes += r.nodes;
        time += r.elapsed;
    }
    println!(
        "alphabeta depth {}: {} nodes in {:.2} s = {:.0} nodes/s ({:.1} ms per move)",
        args.depth,
        nodes,
        time.as_secs_f64(),
        nodes as f64 / time.as_secs_f64().max(1e-9),
        1e3 * time.as_secs_f64() / positions.len() as f64
    );

    for spec in players::spec::parse_list(&args.players)? {
        let mut player = players::build(&spec, args.variant, args.seed)?;
        let start = Instant::now();
        for (i, pos) in positions.iter().enumerate() {
            player.new_game(i as u64);
            player.choose(pos, &Limits::default())?;
        }
        let per = start.elapsed().as_secs_f64() / positions.len() as f64;
        println!("{:<24} {:>10.3} ms per move", spec.to_string(), 1e3 * per);
    }
    Ok(())
}
