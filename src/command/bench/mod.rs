//! `bao bench ...`: throughput figures, printed.

pub mod players;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: BenchCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum BenchCommand {
    /// Alpha-beta nodes/s and time per move of each baseline player.
    Players(players::Args),
}

pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        BenchCommand::Players(a) => players::run(a),
    }
}
