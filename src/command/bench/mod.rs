//! `bao bench ...`: throughput figures, printed.

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<()> {
    super::not_yet("bench")
}
