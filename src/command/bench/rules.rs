//! `bao bench rules`: random-playout throughput and batched feature encoding.
//!
//! A "move" here is one ply of a random playout: generate all legal moves of the position
//! (which plays each of them out, R11) and step to one of them.

use std::time::Instant;

use crate::game::batch::GameBatch;
use crate::game::features::FEATURES;
use crate::game::Variant;
use crate::program::random_games::random_games;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Random games per measurement.
    #[arg(long, default_value_t = 20_000)]
    games: u64,
    /// Games in the batched-encoding measurement.
    #[arg(long, default_value_t = 4096)]
    batch: usize,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let threads = rayon::current_num_threads();
    println!("random playouts ({} games each; all cores = {threads} rayon threads)", args.games);
    println!("{:<10} {:>8} {:>14} {:>14} {:>16}", "variant", "threads", "moves/s", "games/s", "move sims/s");
    for variant in Variant::ALL {
        for parallel in [false, true] {
            let t = Instant::now();
            let s = random_games(variant, args.games, 1, 2000, parallel);
            let secs = t.elapsed().as_secs_f64();
            println!(
                "{:<10} {:>8} {:>14.0} {:>14.0} {:>16.0}",
                variant.name(),
                if parallel { threads } else { 1 },
                s.plies as f64 / secs,
                s.games as f64 / secs,
                s.legal_moves as f64 / secs,
            );
        }
    }
    println!("\nbatched feature encoding + masks ({} games)", args.batch);
    for variant in Variant::ALL {
        let batch = GameBatch::new(variant, args.batch);
        let mut feats = vec![0.0f32; args.batch * FEATURES];
        let mut masks = vec![0u64; args.batch];
        let reps = 50;
        let t = Instant::now();
        for _ in 0..reps {
            batch.encode(&mut feats, &mut masks);
        }
        let secs = t.elapsed().as_secs_f64();
        println!("{:<10} {:>14.0} positions/s", variant.name(), (reps * args.batch) as f64 / secs);
    }
    Ok(())
}
