//! `bao replay FILE`: steps through a saved game record (from `bao play`'s `save`), showing
//! each position and the move played from it. With `--step`, waits for Enter between moves.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use anyhow::Context;

use super::play::PlayRecord;
use crate::game::{Outcome, Side};

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
    check_winner(record.winner.as_deref(), game.outcome())?;
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

/// Fails unless the record's stated `winner` is the one its moves reach: a record edited by
/// hand, or written by a buggy player, would otherwise replay one result and claim another.
fn check_winner(stated: Option<&str>, reached: Option<Outcome>) -> anyhow::Result<()> {
    let stated = stated
        .map(|w| {
            Side::from_letter(w)
                .with_context(|| format!("record winner `{w}` is neither \"S\" nor \"N\""))
        })
        .transpose()?;
    let reached_winner = reached.map(|o| o.winner);
    anyhow::ensure!(
        stated == reached_winner,
        "record says {} but its moves {}",
        stated.map_or("the game is unfinished".to_string(), |w| format!("{w} won")),
        reached.map_or("leave the game unfinished".to_string(), |o| format!(
            "end with {} winning ({})",
            o.winner,
            o.reason.name()
        ))
    );
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Position, Variant};

    fn record(moves: Vec<String>, winner: Option<&str>) -> PlayRecord {
        PlayRecord {
            variant: Variant::Kujifunza,
            start: Position::start(Variant::Kujifunza).to_state_json(),
            moves,
            players: vec![],
            winner: winner.map(str::to_string),
        }
    }

    fn replay_error(r: &PlayRecord) -> String {
        let err = replay(r, &mut Vec::new(), None).expect_err("the record is refused");
        format!("{err:#}")
    }

    /// The moves of a game played to its end by always taking the first legal move.
    fn finished_game() -> (Vec<String>, Outcome) {
        let mut pos = Position::start(Variant::Kujifunza);
        let mut moves = Vec::new();
        loop {
            let text = pos.legal_notations()[0].clone();
            let lm = pos.parse_move(&text).expect("a legal move parses");
            moves.push(text);
            match lm.after {
                crate::game::After::Won(o) => return (moves, o),
                crate::game::After::Position(p) => pos = p,
            }
            assert!(moves.len() < 10_000, "the game ends");
        }
    }

    #[test]
    fn a_winner_the_moves_do_not_reach_is_refused() {
        let e = replay_error(&record(vec![], Some("S")));
        assert!(
            e.contains("says S won but its moves leave the game unfinished"),
            "{e}"
        );
        let e = replay_error(&record(vec![], Some("X")));
        assert!(e.contains("winner `X`"), "{e}");

        let (moves, outcome) = finished_game();
        let loser = outcome.winner.opponent();
        let e = replay_error(&record(moves.clone(), Some(loser.letter())));
        assert!(
            e.contains(&format!(
                "says {loser} won but its moves end with {} winning",
                outcome.winner
            )),
            "{e}"
        );
        let e = replay_error(&record(moves.clone(), None));
        assert!(e.contains("says the game is unfinished"), "{e}");
        let mut out = Vec::new();
        replay(
            &record(moves, Some(outcome.winner.letter())),
            &mut out,
            None,
        )
        .unwrap();
    }
}
