//! `bao bench ...`: throughput figures, printed. One file per benchmark.

use clap::Subcommand;

pub mod net;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub what: Bench,
}

#[derive(Debug, Subcommand)]
pub enum Bench {
    /// Network forward throughput (positions/s, GFLOP/s) per preset and batch size, beside
    /// the machine's measured matmul peak.
    Net(net::Args),
}

pub fn run(args: Args) -> anyhow::Result<()> {
    match args.what {
        Bench::Net(a) => net::run(a),
    }
}
