//! `bao bench ...`: throughput figures, printed. One file per benchmark.

use clap::Subcommand;

pub mod net;
pub mod players;
pub mod rules;
pub mod search;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub what: Bench,
}

#[derive(Debug, Subcommand)]
pub enum Bench {
    /// Rules throughput: random playouts (moves/s, games/s) on one thread and all cores, and
    /// batched feature encoding.
    Rules(rules::Args),
    /// Network forward throughput (positions/s, GFLOP/s) per preset and batch size, beside
    /// the machine's measured matmul peak.
    Net(net::Args),
    /// Search speed: simulations/s with the uniform evaluator and with networks.
    Search(search::Args),
    /// Baseline players: alpha-beta nodes/s and time per move of each baseline.
    Players(players::Args),
}

pub fn run(args: Args) -> anyhow::Result<()> {
    match args.what {
        Bench::Rules(a) => rules::run(a),
        Bench::Net(a) => net::run(a),
        Bench::Search(a) => search::run(a),
        Bench::Players(a) => players::run(a),
    }
}

/// Every (precision, backend) pair a benchmark's `--precision` and `--backends` ask for, in
/// that order.
fn pass_variants(
    precisions: &[crate::neuralnet::Precision],
    backends: &[crate::neuralnet::Backend],
) -> Vec<(crate::neuralnet::Precision, crate::neuralnet::Backend)> {
    precisions
        .iter()
        .flat_map(|&p| backends.iter().map(move |&b| (p, b)))
        .collect()
}
