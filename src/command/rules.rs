//! `bao rules`: list the moves of positions, apply moves, play random games.

use std::io::{BufRead, Write};

use anyhow::{bail, Context};
use clap::Subcommand;
use serde_json::{json, Map, Value};

use crate::game::random_games;
use crate::game::{After, Position, Variant};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    what: Rules,
}

#[derive(Debug, Subcommand)]
enum Rules {
    /// Read R13 JSON states from stdin, one per line; print every legal move with its result.
    ///
    /// Output, one line per state: {"moves": {"<move>": <successor state> | {"winner": "S"|"N",
    /// "reason": ...}}, "winner": null | "S" | "N"}.
    Moves {
        #[arg(long)]
        variant: Variant,
    },
    /// Play a list of moves (R12) from the start and print the board.
    ///
    /// With --json: the final state as R13 JSON; after a move that ends the game,
    /// {"winner", "reason", "move": the winning move, "before": the state it was played from}
    /// (a game won in the middle of a move leaves no position to move from).
    Apply {
        #[arg(long)]
        variant: Variant,
        /// Print the final state as R13 JSON instead of a board.
        #[arg(long)]
        json: bool,
        moves: Vec<String>,
    },
    /// Play random games and print statistics.
    Random {
        #[arg(long)]
        variant: Variant,
        #[arg(long, default_value_t = 1000)]
        games: u64,
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Games longer than this are unfinished (R10).
        #[arg(long, default_value_t = 1000)]
        max_plies: u64,
    },
}

pub fn run(args: Args) -> anyhow::Result<()> {
    match args.what {
        Rules::Moves { variant } => moves(variant),
        Rules::Apply {
            variant,
            json,
            moves,
        } => apply(variant, json, &moves),
        Rules::Random {
            variant,
            games,
            seed,
            max_plies,
        } => {
            let stats = random_games::random_games(variant, games, seed, max_plies, true);
            print!("{}", random_games::describe(variant, &stats));
            Ok(())
        }
    }
}

/// The `bao rules moves` answer for one position.
pub fn moves_json(pos: &Position) -> Value {
    let mut moves = Map::new();
    for lm in pos.legal_moves().iter() {
        let result = match lm.after {
            After::Won(o) => json!({"winner": o.winner.letter(), "reason": o.reason.name()}),
            After::Position(next) => match next.outcome() {
                Some(o) => json!({"winner": o.winner.letter(), "reason": o.reason.name(),
                                  "state": serde_json::to_value(next.to_state_json()).expect("state")}),
                None => serde_json::to_value(next.to_state_json()).expect("state"),
            },
        };
        moves.insert(lm.notation(pos.to_move()), result);
    }
    json!({"moves": moves, "winner": pos.outcome().map(|o| o.winner.letter())})
}

fn moves(variant: Variant) -> anyhow::Result<()> {
    let stdin = std::io::stdin();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for (i, line) in stdin.lock().lines().enumerate() {
        let line = line.context("cannot read stdin")?;
        if line.trim().is_empty() {
            continue;
        }
        let pos = Position::from_json(&line).with_context(|| format!("line {}", i + 1))?;
        if pos.variant() != variant {
            bail!(
                "line {}: state is {} but --variant is {variant}",
                i + 1,
                pos.variant()
            );
        }
        writeln!(out, "{}", moves_json(&pos))?;
    }
    Ok(())
}

fn apply(variant: Variant, json: bool, moves: &[String]) -> anyhow::Result<()> {
    let start = Position::start(variant);
    let (pos, result) = match start.play_line(moves)? {
        After::Position(pos) => (pos, None),
        // A winning move leaves no successor: show the board it was played on.
        After::Won(o) => match start.play_line(&moves[..moves.len() - 1])? {
            After::Position(before) => (before, Some(o)),
            After::Won(_) => unreachable!("play_line refuses moves after a win"),
        },
    };
    let outcome = result.or_else(|| pos.outcome());
    if json {
        let state = serde_json::to_value(pos.to_state_json())?;
        let v = match (result, outcome) {
            // The winning move has no successor state: name the one it was played from.
            (Some(o), _) => json!({"winner": o.winner.letter(), "reason": o.reason.name(),
                                   "move": moves[moves.len() - 1], "before": state}),
            // A position without a legal move: the game is over in it.
            (None, Some(o)) => {
                json!({"winner": o.winner.letter(), "reason": o.reason.name(), "state": state})
            }
            (None, None) => state,
        };
        println!("{v}");
    } else {
        println!("{pos}");
        match outcome {
            Some(o) => println!("game over: {} wins ({})", o.winner, o.reason.name()),
            None => println!("legal: {}", pos.legal_notations().join(" ")),
        }
    }
    Ok(())
}
