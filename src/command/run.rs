//! `bao run status ROOT`: look at a fleet run (see `bao::training::fleet`); `bao run cost RUN`:
//! where a local run's CPU time went (see `bao::training::cost`).

use std::path::PathBuf;

use crate::dataio::store::Store;
use crate::training::cost::run_cost;
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
    /// Where a local run's CPU time went: self-play, training steps, `[eval]` checks,
    /// distillation, gauntlet matches; self-play positions a CPU second in each stretch of
    /// generations with the same self-play simulations.
    Cost {
        /// The run directory (`bao train --run`).
        run: PathBuf,
        /// Print the figures as JSON.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        RunCommand::Cost { run, json } => {
            let cost = run_cost(&run)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&cost)?);
            } else {
                print!("{cost}");
            }
            Ok(())
        }
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
