//! `bao bench rules`: random-playout throughput and batched feature encoding.
//!
//! A "ply" here is one move of a random playout: generate all legal moves of the position
//! (which plays each of them out, R11) and step to one of them. Each figure is the best of
//! `--runs` measurements: processes sharing the cores only ever slow a run down.

use std::time::Instant;

use crate::game::batch::GameBatch;
use crate::game::features::Encoding;
use crate::game::random_games::random_games;
use crate::game::Variant;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Random games per measurement.
    #[arg(long, default_value_t = 20_000)]
    games: u64,
    /// Measurements per figure; the best is printed.
    #[arg(long, default_value_t = 3)]
    runs: u32,
    /// Measure only this variant (default: both).
    #[arg(long)]
    variant: Option<Variant>,
    /// Games in the batched-encoding measurement.
    #[arg(long, default_value_t = 4096)]
    batch: usize,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.games > 0 && args.runs > 0,
        "--games and --runs must be at least 1"
    );
    let threads = rayon::current_num_threads();
    let variants: Vec<Variant> = match args.variant {
        Some(v) => vec![v],
        None => Variant::ALL.to_vec(),
    };
    println!(
        "random playouts: {} games per run, best of {} runs; all cores = {threads} rayon threads",
        args.games, args.runs
    );
    println!("(a ply: generate every legal move, each played out in full, then step to one)");
    println!(
        "{:<10} {:>7} {:>12} {:>16} {:>10} {:>13}",
        "variant", "threads", "plies/s", "plies/s/thread", "games/s", "move sims/s"
    );
    for &variant in &variants {
        for parallel in [false, true] {
            let (s, secs) = best_run(args.runs, || {
                random_games(variant, args.games, 1, 2000, parallel)
            });
            let used = if parallel { threads } else { 1 };
            let plies = s.plies as f64 / secs;
            println!(
                "{:<10} {:>7} {:>12.0} {:>16.0} {:>10.0} {:>13.0}",
                variant.name(),
                used,
                plies,
                plies / used as f64,
                s.games as f64 / secs,
                s.legal_moves as f64 / secs,
            );
        }
    }
    println!(
        "\nbatched feature encoding + masks ({} games, all cores)",
        args.batch
    );
    for &variant in &variants {
        for (encoding, name) in [
            (Encoding::Board, "board"),
            (Encoding::BoardAndMoves, "board+moves"),
            (Encoding::BoardMovesAndThreats, "+threats"),
        ] {
            let batch = GameBatch::new(variant, args.batch);
            let mut feats = vec![0.0f32; args.batch * encoding.features()];
            let mut masks = vec![0u64; args.batch];
            let reps = 50;
            let (_, secs) = best_run(args.runs, || {
                for _ in 0..reps {
                    batch.encode(encoding, &mut feats, &mut masks);
                }
            });
            println!(
                "{:<10} {:<12} {:>14.0} positions/s",
                variant.name(),
                name,
                (reps * args.batch) as f64 / secs
            );
        }
    }
    Ok(())
}

/// Runs `f` `runs` times; returns the result and seconds of the fastest run.
fn best_run<T>(runs: u32, mut f: impl FnMut() -> T) -> (T, f64) {
    let mut best: Option<(T, f64)> = None;
    for _ in 0..runs {
        let t = Instant::now();
        let out = f();
        let secs = t.elapsed().as_secs_f64();
        if best.as_ref().is_none_or(|b| secs < b.1) {
            best = Some((out, secs));
        }
    }
    best.expect("at least one run")
}
