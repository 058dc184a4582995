//! `bao run status ROOT`: look at a fleet run (see `bao::training::fleet`); `bao run cost RUN`:
//! where a local run's CPU time went (see `bao::training::cost`); `bao run snapshot RUN DEST`:
//! a local run's record and newest checkpoint, to commit and resume from (see
//! `bao::training::snapshot`).

use std::path::PathBuf;

use crate::dataio::store::Store;
use crate::training::cost::run_cost;
use crate::training::fleet::status::run_status;
use crate::training::snapshot::snapshot;

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
    /// generations with the same self-play simulations (`--split` breaks stretches further).
    Cost {
        /// The run directory (`bao train --run`).
        run: PathBuf,
        /// Print the figures as JSON.
        #[arg(long)]
        json: bool,
        /// Also start a stretch at each of these generations (comma-separated), e.g. where a
        /// new binary or machine took over, to compare self-play's rate before and after.
        #[arg(long, value_delimiter = ',', value_name = "GENERATIONS")]
        split: Vec<u32>,
    },
    /// Copies a local run's record (config, state, metrics, curves, gauntlet points, every
    /// student) and its newest checkpoint with optimizer state into DEST, without the
    /// self-play data: what to commit so that the run outlives the machine. A copy of DEST
    /// resumes with `bao train --run COPY` (the replay windows refill from new self-play).
    Snapshot {
        /// The run directory (`bao train --run`).
        run: PathBuf,
        /// Where the snapshot goes (e.g. docs/pipeline/kiswahili); an earlier snapshot there
        /// is brought up to date.
        dest: PathBuf,
    },
}

pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        RunCommand::Cost { run, json, split } => {
            let cost = run_cost(&run, &split)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&cost)?);
            } else {
                print!("{cost}");
            }
            Ok(())
        }
        RunCommand::Snapshot { run, dest } => {
            let s = snapshot(&run, &dest)?;
            println!(
                "snapshot of {} at generation {} in {}: {} files, {:.1} MB, {} students; copy it \
                 and resume with `bao train --config COPY/config.toml --run COPY`",
                run.display(),
                s.generation,
                dest.display(),
                s.files,
                s.bytes as f64 / 1e6,
                s.students,
            );
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
