//! The terminal game of `bao play`: a person against a player over any input and output (a
//! terminal or a plain pipe).
//!
//! Each turn shows the board and, on the human's turn, the legal moves. Moves are R12
//! notation (`A7L`) or any unambiguous short form of one (`a7l`, or `A7` when only one move
//! starts there). Other commands: `undo` (takes back the last human move and the reply),
//! `hint`, `moves`, `save FILE`, `load FILE`, `help`, `quit`. Bad input is refused with the
//! reason and the prompt comes again. Games are saved as a [`PlayRecord`], which `bao replay`
//! and the browser page of `bao serve` also use.

use std::io::{BufRead, Write};
use std::path::Path;

use crate::game::{LegalMove, Position, Side, Variant};
use crate::play::game::{Game, PlayRecord};
use crate::play::players::{self, ChosenMove, Limits, Player, PlayerSpec};

/// Resolves typed move text against the legal moves: exact R12 first, then a unique
/// case-insensitive prefix; otherwise the reason it was refused.
pub fn resolve_move(pos: &Position, text: &str) -> Result<LegalMove, String> {
    let t = text.trim();
    if let Ok(lm) = pos.parse_move(t) {
        return Ok(lm);
    }
    let me = pos.to_move();
    let moves = pos.legal_moves();
    let lower = t.to_ascii_lowercase();
    let matching: Vec<&LegalMove> = moves
        .iter()
        .filter(|lm| !lower.is_empty() && lm.notation(me).to_ascii_lowercase().starts_with(&lower))
        .collect();
    match matching.len() {
        1 => Ok(*matching[0]),
        0 => Err(match pos.parse_move(t) {
            Err(e) => e.to_string(),
            Ok(_) => unreachable!("exact parse failed above"),
        }),
        _ => Err(format!(
            "`{t}` is ambiguous: {}",
            matching
                .iter()
                .map(|lm| lm.notation(me))
                .collect::<Vec<_>>()
                .join(" ")
        )),
    }
}

/// Writes a chosen move's analysis, as far as the player gave one.
pub fn describe(
    out: &mut dyn Write,
    who: &str,
    pos: &Position,
    c: &ChosenMove,
) -> std::io::Result<()> {
    write!(out, "{who}: {}", c.mv.notation(pos.to_move()))?;
    if let Some(p) = c.analysis.win_probability() {
        write!(out, "  (win probability {:.0}%)", 100.0 * p)?;
    }
    writeln!(out)?;
    if c.analysis.top.len() > 1 {
        let top: Vec<String> = c
            .analysis
            .top
            .iter()
            .map(|m| match (m.visits, m.score) {
                (Some(v), Some(s)) => format!("{} {v} visits {s:+.2}", m.notation),
                (None, Some(s)) => format!("{} {s:.2}", m.notation),
                (Some(v), None) => format!("{} {v} visits", m.notation),
                (None, None) => m.notation.clone(),
            })
            .collect();
        writeln!(out, "  top moves: {}", top.join(", "))?;
    }
    if c.analysis.pv.len() > 1 {
        writeln!(out, "  expected line: {}", c.analysis.pv.join(" "))?;
    }
    if let (Some(d), Some(n)) = (c.analysis.depth, c.analysis.nodes) {
        writeln!(out, "  depth {d}, {n} nodes")?;
    }
    Ok(())
}

/// The prompt; distinct from the board's `>` side-to-move mark so scripts can wait for it.
pub const PROMPT: &str = "bao> ";

const HELP: &str = "commands: <move> (e.g. A7L, or a unique prefix such as a7), moves, hint, undo, save FILE, load FILE, help, quit";

/// The interactive loop over any input and output (a terminal or a pipe).
pub fn session(
    input: &mut dyn BufRead,
    out: &mut dyn Write,
    variant: Variant,
    opponent: &PlayerSpec,
    human: Side,
    seed: u64,
) -> anyhow::Result<()> {
    let mut engine: Box<dyn Player> = players::build(opponent, variant, seed)?;
    let engine_name = engine.name();
    let names = |human: Side| {
        let (me, it) = ("human".to_string(), engine_name.clone());
        if human == Side::South {
            vec![me, it]
        } else {
            vec![it, me]
        }
    };
    let mut game = Game::new(Position::start(variant));
    writeln!(
        out,
        "You play {} against {engine_name}. {HELP}",
        if human == Side::South {
            "South"
        } else {
            "North"
        }
    )?;
    let mut show_board = true;
    // Why the engine lost by forfeit (it failed or played an illegal move), as `bao eval`
    // counts it; the person can still undo, save or load.
    let mut forfeit: Option<String> = None;
    loop {
        let fresh = show_board;
        if show_board {
            writeln!(out, "\n{}", game.shown())?;
            show_board = false;
        }
        let outcome = game.outcome();
        if let Some(o) = outcome.filter(|_| fresh) {
            let who = if o.winner == human {
                "You win"
            } else {
                "You lose"
            };
            writeln!(
                out,
                "Game over: {who} ({} wins, {}). undo, save FILE, load FILE or quit.",
                o.winner,
                o.reason.name()
            )?;
        }
        let pos = game.current();
        if let (None, None, Some(p)) = (outcome, &forfeit, pos) {
            if p.to_move() != human {
                match players::choose_legal(&mut *engine, &p, &Limits::default()) {
                    Ok(c) => {
                        describe(out, &engine_name, &p, &c)?;
                        game.push(c.mv);
                        show_board = true;
                    }
                    Err(e) => {
                        let reason = format!("{e:#}").replace('\n', " ");
                        writeln!(
                            out,
                            "{engine_name} failed: {reason}\nGame over: You win ({engine_name} \
                             forfeits, as bao eval counts it). undo, save FILE, load FILE or quit."
                        )?;
                        forfeit = Some(reason);
                    }
                }
                continue;
            }
            if fresh {
                writeln!(out, "legal moves: {}", p.legal_notations().join(" "))?;
            }
        }
        write!(out, "{PROMPT}")?;
        out.flush()?;
        let mut line = String::new();
        if input.read_line(&mut line)? == 0 {
            writeln!(out)?;
            return Ok(()); // end of input: leave quietly
        }
        let line = line.trim();
        let (cmd, arg) = match line.split_once(char::is_whitespace) {
            Some((c, a)) => (c, a.trim()),
            None => (line, ""),
        };
        match (cmd, arg) {
            ("", _) => {}
            ("quit" | "exit", "") => return Ok(()),
            ("help", "") => writeln!(out, "{HELP}")?,
            ("moves", "") => match pos {
                Some(p) => writeln!(out, "legal moves: {}", p.legal_notations().join(" "))?,
                None => writeln!(out, "the game is over")?,
            },
            ("hint", "") => match pos.filter(|_| outcome.is_none()) {
                Some(p) => match players::choose_legal(&mut *engine, &p, &Limits::default()) {
                    Ok(c) => describe(out, "hint", &p, &c)?,
                    Err(e) => writeln!(out, "no hint: {engine_name} failed: {e:#}")?,
                },
                None => writeln!(out, "the game is over")?,
            },
            ("undo", "") => {
                // Take back to the human's previous turn (their move and the reply).
                let mut undone = Vec::new();
                while let Some(lm) = game.pop() {
                    undone.push(lm);
                    if game.current().is_some_and(|p| p.to_move() == human) {
                        break;
                    }
                }
                if game.current().is_some_and(|p| p.to_move() == human) && !undone.is_empty() {
                    writeln!(out, "took back {} move(s)", undone.len())?;
                    forfeit = None;
                    show_board = true;
                } else {
                    // Nothing of the human's to take back (e.g. the engine opened): restore.
                    for lm in undone.into_iter().rev() {
                        game.push(lm);
                    }
                    writeln!(out, "nothing to undo")?;
                }
            }
            ("save", file) if !file.is_empty() => {
                match game.record(names(human)).save(Path::new(file)) {
                    Ok(()) => writeln!(out, "saved {} moves to {file}", game.moves().len())?,
                    Err(e) => writeln!(out, "cannot save: {e:#}")?,
                }
            }
            ("load", file) if !file.is_empty() => {
                match PlayRecord::load(Path::new(file)).and_then(|r| {
                    anyhow::ensure!(
                        r.variant == variant,
                        "{file} is a {} game, this is {variant}",
                        r.variant
                    );
                    r.replay()
                }) {
                    Ok((_, g)) => {
                        writeln!(out, "loaded {} moves from {file}", g.moves().len())?;
                        game = g;
                        engine.new_game(seed);
                        forfeit = None;
                        show_board = true;
                    }
                    Err(e) => writeln!(out, "cannot load: {e:#}")?,
                }
            }
            ("save" | "load", _) => writeln!(out, "usage: {cmd} FILE")?,
            _ => match (outcome, pos) {
                _ if forfeit.is_some() => writeln!(
                    out,
                    "refused: the game is over ({engine_name} forfeited; {HELP})"
                )?,
                (None, Some(p)) => match resolve_move(&p, line) {
                    Ok(lm) => {
                        game.push(lm);
                        show_board = true;
                    }
                    Err(reason) => writeln!(out, "refused: {reason}")?,
                },
                _ => writeln!(out, "refused: the game is over ({HELP})")?,
            },
        }
    }
}
