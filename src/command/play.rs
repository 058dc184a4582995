//! `bao play`: a game against a player in the terminal; works through a plain pipe too.
//!
//! Each turn shows the board and, on the human's turn, the legal moves. Moves are R12
//! notation (`A7L`) or any unambiguous short form of one (`a7l`, or `A7` when only one move
//! starts there). Other commands: `undo` (takes back the last human move and the reply),
//! `hint`, `moves`, `save FILE`, `load FILE`, `help`, `quit`. Bad input is refused with the
//! reason and the prompt comes again.
//!
//! Game records: `src/dataio/records.rs` (`GameRecord`) is written in parallel and not in this
//! branch, so [`PlayRecord`] is a minimal JSON record (variant, start state, moves) that
//! `bao replay` also reads.

use std::io::{BufRead, Write};
use std::path::Path;

use anyhow::Context;

use crate::game::json::StateJson;
use crate::game::{After, LegalMove, Outcome, Position, Side, Variant};
use crate::program::players::{self, ChosenMove, Limits, Player, PlayerSpec};
use crate::program::tournament::write_atomic;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[arg(long, default_value = "kiswahili")]
    pub variant: Variant,
    /// The opponent, e.g. `alphabeta:ms=500` or `net:models/k.safetensors:sims=400`.
    #[arg(long, default_value = "alphabeta")]
    pub opponent: String,
    /// Your side: S (moves first) or N.
    #[arg(long, default_value = "S")]
    pub side: String,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// A saved game: the start state (R13) and the moves played from it (R12).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlayRecord {
    pub variant: Variant,
    pub start: StateJson,
    pub moves: Vec<String>,
    /// Who played (free text), South first.
    #[serde(default)]
    pub players: Vec<String>,
    /// `"S"`, `"N"` or absent while the game goes on.
    #[serde(default)]
    pub winner: Option<String>,
}

impl PlayRecord {
    pub fn load(path: &Path) -> anyhow::Result<PlayRecord> {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        serde_json::from_str(&text).with_context(|| format!("{} is not a game record", path.display()))
    }

    pub fn save(&self, path: &Path) -> anyhow::Result<()> {
        let text = serde_json::to_string_pretty(self).context("serialise record")?;
        write_atomic(path, text.as_bytes())
    }

    /// Replays the record: every position from the start, with the move played from it.
    /// Fails naming the first move that is not legal.
    pub fn replay(&self) -> anyhow::Result<(Vec<(Position, LegalMove)>, Game)> {
        let start = Position::from_state_json(&self.start).context("record start state")?;
        anyhow::ensure!(start.variant() == self.variant, "record variant {} but start state is {}", self.variant, start.variant());
        let mut game = Game::new(start);
        let mut steps = Vec::new();
        for (i, text) in self.moves.iter().enumerate() {
            let pos = game.current().with_context(|| format!("move {} `{text}` after the game ended", i + 1))?;
            let lm = pos.parse_move(text).with_context(|| format!("record move {} `{text}`", i + 1))?;
            steps.push((pos, lm));
            game.push(lm);
        }
        Ok((steps, game))
    }
}

/// A game in progress: the start and the moves; positions are recomputed, never stored twice.
#[derive(Clone, Debug)]
pub struct Game {
    start: Position,
    moves: Vec<LegalMove>,
    /// Position before each move, then the current one (if the game goes on).
    positions: Vec<Position>,
    won: Option<Outcome>,
}

impl Game {
    pub fn new(start: Position) -> Game {
        Game { start, moves: Vec::new(), positions: vec![start], won: None }
    }
    /// The position to move from, or `None` once a move won.
    pub fn current(&self) -> Option<Position> {
        if self.won.is_some() {
            None
        } else {
            self.positions.last().copied()
        }
    }
    /// The result, if the game is over (a winning move, or no legal move).
    pub fn outcome(&self) -> Option<Outcome> {
        self.won.or_else(|| self.current().and_then(|p| p.outcome()))
    }
    pub fn push(&mut self, lm: LegalMove) {
        self.moves.push(lm);
        match lm.after {
            After::Position(p) => self.positions.push(p),
            After::Won(o) => self.won = Some(o),
        }
    }
    pub fn pop(&mut self) -> Option<LegalMove> {
        let lm = self.moves.pop()?;
        if self.won.take().is_none() {
            self.positions.pop();
        }
        Some(lm)
    }
    /// The mover of move `i`.
    fn mover(&self, i: usize) -> Side {
        self.positions[i].to_move()
    }
    pub fn record(&self, players: Vec<String>) -> PlayRecord {
        PlayRecord {
            variant: self.start.variant(),
            start: self.start.to_state_json(),
            moves: self.moves.iter().enumerate().map(|(i, lm)| lm.notation(self.mover(i))).collect(),
            players,
            winner: self.outcome().map(|o| o.winner.letter().to_string()),
        }
    }
    /// The position shown: the current one, or the last one before the winning move.
    fn shown(&self) -> Position {
        *self.positions.last().expect("at least the start")
    }
}

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
    let matching: Vec<&LegalMove> =
        moves.iter().filter(|lm| !lower.is_empty() && lm.notation(me).to_ascii_lowercase().starts_with(&lower)).collect();
    match matching.len() {
        1 => Ok(*matching[0]),
        0 => Err(match pos.parse_move(t) {
            Err(e) => e.to_string(),
            Ok(_) => unreachable!("exact parse failed above"),
        }),
        _ => Err(format!(
            "`{t}` is ambiguous: {}",
            matching.iter().map(|lm| lm.notation(me)).collect::<Vec<_>>().join(" ")
        )),
    }
}

/// Writes a chosen move's analysis, as far as the player gave one.
pub fn describe(out: &mut dyn Write, who: &str, pos: &Position, c: &ChosenMove) -> std::io::Result<()> {
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
        if human == Side::South { vec![me, it] } else { vec![it, me] }
    };
    let mut game = Game::new(Position::start(variant));
    writeln!(out, "You play {} against {engine_name}. {HELP}", if human == Side::South { "South" } else { "North" })?;
    let mut show_board = true;
    loop {
        let fresh = show_board;
        if show_board {
            writeln!(out, "\n{}", game.shown())?;
            show_board = false;
        }
        let outcome = game.outcome();
        if let Some(o) = outcome.filter(|_| fresh) {
            let who = if o.winner == human { "You win" } else { "You lose" };
            writeln!(out, "Game over: {who} ({} wins, {}). undo, save FILE, load FILE or quit.", o.winner, o.reason.name())?;
        }
        let pos = game.current();
        if let (None, Some(p)) = (outcome, pos) {
            if p.to_move() != human {
                let c = engine.choose(&p, &Limits::default())?;
                describe(out, &engine_name, &p, &c)?;
                game.push(c.mv);
                show_board = true;
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
                Some(p) => {
                    let c = engine.choose(&p, &Limits::default())?;
                    describe(out, "hint", &p, &c)?;
                }
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
                    show_board = true;
                } else {
                    // Nothing of the human's to take back (e.g. the engine opened): restore.
                    for lm in undone.into_iter().rev() {
                        game.push(lm);
                    }
                    writeln!(out, "nothing to undo")?;
                }
            }
            ("save", file) if !file.is_empty() => match game.record(names(human)).save(Path::new(file)) {
                Ok(()) => writeln!(out, "saved {} moves to {file}", game.moves.len())?,
                Err(e) => writeln!(out, "cannot save: {e:#}")?,
            },
            ("load", file) if !file.is_empty() => {
                match PlayRecord::load(Path::new(file)).and_then(|r| {
                    anyhow::ensure!(r.variant == variant, "{file} is a {} game, this is {variant}", r.variant);
                    r.replay()
                }) {
                    Ok((_, g)) => {
                        writeln!(out, "loaded {} moves from {file}", g.moves.len())?;
                        game = g;
                        engine.new_game(seed);
                        show_board = true;
                    }
                    Err(e) => writeln!(out, "cannot load: {e:#}")?,
                }
            }
            ("save" | "load", _) => writeln!(out, "usage: {cmd} FILE")?,
            _ => match (outcome, pos) {
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

pub fn run(args: Args) -> anyhow::Result<()> {
    let spec: PlayerSpec = args.opponent.parse()?;
    let side = Side::from_letter(&args.side.to_ascii_uppercase())
        .with_context(|| format!("--side must be S or N, not `{}`", args.side))?;
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut out = std::io::stdout().lock();
    session(&mut input, &mut out, args.variant, &spec, side, args.seed)
}

