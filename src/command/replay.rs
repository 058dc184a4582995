//! `bao replay FILE`: steps through a saved game record (from `bao play`'s `save`), showing
//! each position and the move played from it. With `--step`, waits for Enter between moves;
//! with `--game N`, FILE is a records file (`games.jsonl` of `bao eval` or self-play) and the
//! N-th game in it is shown.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use anyhow::Context;

use crate::dataio::records::read_records;
use crate::play::game::PlayRecord;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The game record (JSON).
    pub file: PathBuf,
    /// Wait for Enter after each position.
    #[arg(long)]
    pub step: bool,
    /// FILE is a records file (one game a line, as `bao eval --out` and self-play write):
    /// show its N-th game, counting from 1.
    #[arg(long, value_name = "N")]
    pub game: Option<usize>,
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
    let record = match args.game {
        None => PlayRecord::load(&args.file)?,
        Some(n) => {
            let records = read_records(&args.file)?;
            let game = n
                .checked_sub(1)
                .and_then(|i| records.get(i))
                .with_context(|| {
                    format!(
                        "--game {n}: {} holds games 1 to {}",
                        args.file.display(),
                        records.len()
                    )
                })?;
            PlayRecord::from_game_record(game)
                .with_context(|| format!("game {n} of {}", args.file.display()))?
        }
    };
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut out = std::io::stdout().lock();
    replay(
        &record,
        &mut out,
        if args.step { Some(&mut input) } else { None },
    )
}
