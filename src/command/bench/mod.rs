//! `bao bench ...`: throughput figures, printed.

pub mod search;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: BenchCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum BenchCommand {
    /// Search speed: simulations/s with the uniform evaluator and with networks.
    Search(search::Args),
}

pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        BenchCommand::Search(a) => search::run(a),
    }
}
