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
    /// Override a config value, `SECTION.KEY=VALUE` (repeatable; VALUE in TOML, a bare word
    /// is a string), e.g. `--set search.c_puct=2 --set train.generations=40`. Checked like the
    /// file; recorded in the run directory, so a resume keeps it.
    #[arg(long = "set", value_name = "SECTION.KEY=VALUE")]
    pub set: Vec<String>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let history = crate::training::train::train_with(
        &args.config,
        &args.set,
        &args.run,
        args.init.as_deref(),
    )?;
    println!(
        "\nstrength of the last generation ({}):",
        args.run.display()
    );
    print!("{}", crate::training::history::results_table(&history));
    Ok(())
}
