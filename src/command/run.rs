//! `bao run status ROOT`: look at a fleet run (see `bao::training::fleet`).

use crate::dataio::store::Store;
use crate::training::fleet::status::run_status;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: RunCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum RunCommand {
    /// Generations, shards and samples per generation, consumed shards, workers seen, the
    /// trainer's lease.
    Status {
        /// The run's root: a directory or an s3://, gs://, az:// URL.
        root: String,
        /// Machine-readable: one line `GENERATION SHARDS SAMPLES CONSUMED` per generation.
        #[arg(long)]
        table: bool,
    },
}

pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        RunCommand::Status { root, table } => {
            let store = Store::open(&root)?;
            let st = run_status(&store)?;
            if table {
                for (g, s) in &st.generations {
                    println!("{g} {} {} {}", s.shards, s.samples, s.consumed);
                }
            } else {
                print!("{st}");
            }
            Ok(())
        }
    }
}
