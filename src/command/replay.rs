//! `bao replay FILE`: steps through a saved game record (from `bao play`'s `save`), showing
//! each position and the move played from it. With `--step`, waits for Enter between moves.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use crate::program::game::PlayRecord;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The game record (JSON).
    pub file: PathBuf,
    /// Wait for Enter after each position.
    #[arg(long)]
    pub step: bool,
}

/// Writes every position of the record with its move, then the result.
pub fn replay(
    record: &PlayRecord,
    out: &mut dyn Write,
    mut wait: Option<&mut dyn BufRead>,
) -> anyhow::Result<()> {
    let (steps, game) = record.replay()?;
    if !record.players.is_empty() {
        writeln!(
            out,
            "{} game: {}",
            record.variant,
            record.players.join(" (S) vs ") + " (N)"
        )?;
    }
    for (i, (pos, lm)) in steps.iter().enumerate() {
        writeln!(out, "\n{pos}")?;
        writeln!(
            out,
            "move {}: {} plays {}",
            i + 1,
            pos.to_move(),
            lm.notation(pos.to_move())
        )?;
        if let Some(input) = wait.as_deref_mut() {
            let mut line = String::new();
            if input.read_line(&mut line)? == 0 {
                return Ok(());
            }
        }
    }
    if let Some(p) = game.current() {
        writeln!(out, "\n{p}")?;
    }
    match game.outcome() {
        Some(o) => writeln!(out, "{} wins ({})", o.winner, o.reason.name())?,
        None => writeln!(out, "game not finished")?,
    }
    Ok(())
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let record = PlayRecord::load(&args.file)?;
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut out = std::io::stdout().lock();
    replay(
        &record,
        &mut out,
        if args.step { Some(&mut input) } else { None },
    )
}
