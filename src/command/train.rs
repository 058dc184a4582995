//! `bao train --config C --run DIR`: the whole AlphaZero loop; rerun to resume.

use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Run config (TOML), e.g. configs/kujifunza-quick.toml.
    #[arg(long)]
    pub config: PathBuf,
    /// Run directory: created on the first run, resumed after.
    #[arg(long)]
    pub run: PathBuf,
    /// Start a new run from this checkpoint (weights, and optimizer state when saved beside
    /// it) instead of a random network, e.g. a shipped model in models/. Ignored on resume.
    #[arg(long)]
    pub init: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let history = crate::training::train::train(&args.config, &args.run, args.init.as_deref())?;
    println!(
        "\nstrength of the last generation ({}):",
        args.run.display()
    );
    print!("{}", crate::training::history::results_table(&history));
    Ok(())
}
