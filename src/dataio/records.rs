//! Game records: one game per JSON line, moves in R12 notation.
//!
//! Written by self-play and tournaments, read by `bao replay` and `bao play load`:
//! ```json
//! {"variant":"kujifunza","moves":["A3R","b2L"],"result":"S","reason":"front-empty","plies":2}
//! ```
//! `result` is `"S"`, `"N"` or `"unfinished"`; `reason` is a [`WinReason`] name
//! (`front-empty`, `no-move`) for finished games, or why the game stopped (`ply-cap`, ...).
//! `start` (an R13 state) is present only when the game did not begin at the start position;
//! `id` and `meta` (free-form strings: players, model, ...) are optional.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use anyhow::{bail, ensure, Context};
use serde::{Deserialize, Serialize};

use crate::game::json::StateJson;
use crate::game::{After, LegalMove, Outcome, Position, Side, Variant};

/// How a recorded game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum GameResult {
    #[serde(rename = "S")]
    SouthWon,
    #[serde(rename = "N")]
    NorthWon,
    #[serde(rename = "unfinished")]
    Unfinished,
}

impl GameResult {
    pub fn winner(self) -> Option<Side> {
        match self {
            GameResult::SouthWon => Some(Side::South),
            GameResult::NorthWon => Some(Side::North),
            GameResult::Unfinished => None,
        }
    }
    pub fn won_by(side: Side) -> GameResult {
        match side {
            Side::South => GameResult::SouthWon,
            Side::North => GameResult::NorthWon,
        }
    }
    /// The result for `side`: 1 win, -1 loss, 0 unfinished.
    pub fn value_for(self, side: Side) -> f32 {
        match self.winner() {
            Some(w) if w == side => 1.0,
            Some(_) => -1.0,
            None => 0.0,
        }
    }
}

/// One game (see module docs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GameRecord {
    pub variant: Variant,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<StateJson>,
    pub moves: Vec<String>,
    pub result: GameResult,
    pub reason: String,
    pub plies: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<u64>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub meta: BTreeMap<String, String>,
}

/// Reason written for games stopped at the configured ply cap (R10).
pub const REASON_PLY_CAP: &str = "ply-cap";
/// Reason written while a game is still going on.
pub const REASON_IN_PROGRESS: &str = "in-progress";

impl GameRecord {
    /// An empty record of a game starting at `start`.
    pub fn new(start: &Position) -> GameRecord {
        let standard = *start == Position::start(start.variant());
        GameRecord {
            variant: start.variant(),
            start: (!standard).then(|| start.to_state_json()),
            moves: Vec::new(),
            result: GameResult::Unfinished,
            reason: REASON_IN_PROGRESS.into(),
            plies: 0,
            id: None,
            meta: BTreeMap::new(),
        }
    }

    /// Appends a move played by `mover`.
    pub fn push(&mut self, lm: &LegalMove, mover: Side) {
        self.moves.push(lm.notation(mover));
        self.plies = self.moves.len() as u32;
    }

    pub fn finish_won(&mut self, outcome: Outcome) {
        self.result = GameResult::won_by(outcome.winner);
        self.reason = outcome.reason.name().into();
    }

    pub fn finish_unfinished(&mut self, reason: &str) {
        self.result = GameResult::Unfinished;
        self.reason = reason.into();
    }

    /// The position the game began at.
    pub fn start_position(&self) -> anyhow::Result<Position> {
        match &self.start {
            None => Ok(Position::start(self.variant)),
            Some(s) => {
                let p =
                    Position::from_state_json(s).context("record has an invalid start state")?;
                ensure!(
                    p.variant() == self.variant,
                    "record is for {} but its start state is {}",
                    self.variant,
                    p.variant()
                );
                Ok(p)
            }
        }
    }

    /// Replays every move, checking legality. Returns the positions before each move (and
    /// after the last, unless the last move won outright) and the outcome reached, if any.
    pub fn replay(&self) -> anyhow::Result<(Vec<Position>, Option<Outcome>)> {
        let mut pos = self.start_position()?;
        let mut positions = vec![pos];
        for (ply, text) in self.moves.iter().enumerate() {
            let lm = pos
                .parse_move(text)
                .with_context(|| format!("ply {} (`{text}`)", ply + 1))?;
            match lm.after {
                After::Won(outcome) => {
                    ensure!(
                        ply + 1 == self.moves.len(),
                        "ply {}: `{text}` ends the game but {} more moves follow",
                        ply + 1,
                        self.moves.len() - ply - 1
                    );
                    return Ok((positions, Some(outcome)));
                }
                After::Position(p) => {
                    pos = p;
                    positions.push(p);
                }
            }
        }
        Ok((positions, pos.outcome()))
    }

    /// Replays the game and checks that its stated result is the one the moves reach.
    pub fn verify(&self) -> anyhow::Result<()> {
        let (_, outcome) = self.replay()?;
        ensure!(
            self.plies as usize == self.moves.len(),
            "plies {} but {} moves",
            self.plies,
            self.moves.len()
        );
        match (outcome, self.result) {
            (Some(o), r) if r.winner() == Some(o.winner) && self.reason == o.reason.name() => {
                Ok(())
            }
            (None, GameResult::Unfinished) => Ok(()),
            (o, r) => bail!(
                "record says {r:?} ({}) but the moves reach {o:?}",
                self.reason
            ),
        }
    }

    /// One JSON line, no newline.
    pub fn to_json_line(&self) -> String {
        serde_json::to_string(self).expect("game records serialize")
    }
}

/// Parses JSON-lines text (blank lines skipped); errors name the line.
pub fn parse_records(text: &str, what: &str) -> anyhow::Result<Vec<GameRecord>> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l)
                .with_context(|| format!("{what}:{}: invalid game record", i + 1))
        })
        .collect()
}

/// Reads a JSON-lines file of game records.
pub fn read_records(path: &Path) -> anyhow::Result<Vec<GameRecord>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    parse_records(&text, &path.display().to_string())
}

/// Writes records as a JSON-lines file, atomically.
pub fn write_records(path: &Path, records: &[GameRecord]) -> anyhow::Result<()> {
    let mut out = Vec::new();
    for r in records {
        writeln!(out, "{}", r.to_json_line()).expect("write to Vec");
    }
    super::atomic::write_bytes(path, &out)
}
