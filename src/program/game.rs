//! A game in progress ([`Game`]) and its saved form ([`PlayRecord`]), shared by `bao play`,
//! `bao replay` and `bao serve`.

use std::path::Path;

use anyhow::Context;

use crate::dataio::shard::write_atomic;
use crate::game::json::StateJson;
use crate::game::{After, LegalMove, Outcome, Position, Side, Variant};

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
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        serde_json::from_str(&text)
            .with_context(|| format!("{} is not a game record", path.display()))
    }

    pub fn save(&self, path: &Path) -> anyhow::Result<()> {
        let text = serde_json::to_string_pretty(self).context("serialise record")?;
        write_atomic(path, text.as_bytes())
    }

    /// Replays the record: every position from the start, with the move played from it.
    /// Fails naming the first move that is not legal.
    pub fn replay(&self) -> anyhow::Result<(Vec<(Position, LegalMove)>, Game)> {
        let start = Position::from_state_json(&self.start).context("record start state")?;
        anyhow::ensure!(
            start.variant() == self.variant,
            "record variant {} but start state is {}",
            self.variant,
            start.variant()
        );
        let mut game = Game::new(start);
        let mut steps = Vec::new();
        for (i, text) in self.moves.iter().enumerate() {
            let pos = game
                .current()
                .with_context(|| format!("move {} `{text}` after the game ended", i + 1))?;
            let lm = pos
                .parse_move(text)
                .with_context(|| format!("record move {} `{text}`", i + 1))?;
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
        Game {
            start,
            moves: Vec::new(),
            positions: vec![start],
            won: None,
        }
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
        self.won
            .or_else(|| self.current().and_then(|p| p.outcome()))
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
    /// The moves played, first to last.
    pub fn moves(&self) -> &[LegalMove] {
        &self.moves
    }
    /// The position each move was played from (`positions()[i]` before move `i`), then the
    /// current one unless the last move won.
    pub fn positions(&self) -> &[Position] {
        &self.positions
    }
    /// The mover of move `i`.
    pub fn mover(&self, i: usize) -> Side {
        self.positions[i].to_move()
    }
    pub fn record(&self, players: Vec<String>) -> PlayRecord {
        PlayRecord {
            variant: self.start.variant(),
            start: self.start.to_state_json(),
            moves: self
                .moves
                .iter()
                .enumerate()
                .map(|(i, lm)| lm.notation(self.mover(i)))
                .collect(),
            players,
            winner: self.outcome().map(|o| o.winner.letter().to_string()),
        }
    }
    /// The position shown: the current one, or the last one before the winning move.
    pub fn shown(&self) -> Position {
        *self.positions.last().expect("at least the start")
    }
}
