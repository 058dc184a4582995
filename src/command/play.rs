//! `bao play`: a game against a player in the terminal; works through a plain pipe too (the
//! session itself is [`crate::play::terminal`]).

use anyhow::Context;

use crate::game::{Side, Variant};
use crate::play::players::PlayerSpec;
use crate::play::terminal::session;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[arg(long, default_value = "kiswahili")]
    pub variant: Variant,
    /// The opponent, e.g. `alphabeta:ms=500` or `net:models/k.safetensors:ms=1000`.
    #[arg(long, default_value = "alphabeta")]
    pub opponent: String,
    /// Thinking time per move in milliseconds for an opponent whose spec sets no limit of its
    /// own (as `bao eval --movetime`), on the searching thread's CPU clock.
    #[arg(long, value_name = "MS")]
    pub movetime: Option<u64>,
    /// Your side: S (moves first) or N.
    #[arg(long, default_value = "S")]
    pub side: String,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let mut spec: PlayerSpec = args.opponent.parse()?;
    if let Some(ms) = args.movetime {
        anyhow::ensure!(ms >= 1, "--movetime must be at least 1 ms");
        spec = spec.with_default_movetime(ms);
    }
    let side = Side::from_letter(&args.side.to_ascii_uppercase())
        .with_context(|| format!("--side must be S or N, not `{}`", args.side))?;
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut out = std::io::stdout().lock();
    session(&mut input, &mut out, args.variant, &spec, side, args.seed)
}
