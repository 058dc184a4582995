//! A game in progress ([`Game`]) and its saved form ([`PlayRecord`]), shared by `bao play`,
//! `bao replay` and `bao serve`.

use std::path::Path;

use anyhow::Context;

use crate::dataio::atomic::write_bytes;
use crate::dataio::records::GameRecord;
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
    /// `"S"`, `"N"` or absent while the game goes on; checked against the moves on load.
    #[serde(default)]
    pub winner: Option<Side>,
}

impl PlayRecord {
    pub fn load(path: &Path) -> anyhow::Result<PlayRecord> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        serde_json::from_str(&text)
            .with_context(|| format!("{} is not a game record", path.display()))
    }

    /// One game of a records file (self-play's or `bao eval`'s `games.jsonl`) in this form,
    /// players from its `meta` (`south`, `north`) when it names them.
    pub fn from_game_record(record: &GameRecord) -> anyhow::Result<PlayRecord> {
        let players = match (record.meta.get("south"), record.meta.get("north")) {
            (Some(s), Some(n)) => vec![s.clone(), n.clone()],
            _ => Vec::new(),
        };
        Ok(PlayRecord {
            variant: record.variant,
            start: record.start_position()?.to_state_json(),
            moves: record.moves.clone(),
            players,
            winner: record.result.winner(),
        })
    }

    pub fn save(&self, path: &Path) -> anyhow::Result<()> {
        let text = serde_json::to_string_pretty(self).context("serialise record")?;
        write_bytes(path, text.as_bytes())
    }

    /// Replays the record: every position from the start, with the move played from it.
    /// Fails naming the first move that is not legal, or if the stated `winner` is not the
    /// one the moves reach (a record edited by hand, or written by a buggy player, would
    /// otherwise replay one result and claim another).
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
        let reached = game.outcome();
        anyhow::ensure!(
            self.winner == reached.map(|o| o.winner),
            "record says {} but its moves {}",
            self.winner
                .map_or("the game is unfinished".to_string(), |w| format!("{w} won")),
            reached.map_or("leave the game unfinished".to_string(), |o| format!(
                "end with {} winning ({})",
                o.winner,
                o.reason.name()
            ))
        );
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
            winner: self.outcome().map(|o| o.winner),
        }
    }
    /// The position shown: the current one, or the last one before the winning move.
    pub fn shown(&self) -> Position {
        *self.positions.last().expect("at least the start")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(moves: Vec<String>, winner: Option<Side>) -> PlayRecord {
        PlayRecord {
            variant: Variant::Kujifunza,
            start: Position::start(Variant::Kujifunza).to_state_json(),
            moves,
            players: vec![],
            winner,
        }
    }

    fn replay_error(r: &PlayRecord) -> String {
        let err = r.replay().expect_err("the record is refused");
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
                After::Won(o) => return (moves, o),
                After::Position(p) => pos = p,
            }
            assert!(moves.len() < 10_000, "the game ends");
        }
    }

    #[test]
    fn a_winner_the_moves_do_not_reach_is_refused() {
        let e = replay_error(&record(vec![], Some(Side::South)));
        assert!(
            e.contains("says S won but its moves leave the game unfinished"),
            "{e}"
        );
        let (moves, outcome) = finished_game();
        let loser = outcome.winner.opponent();
        let e = replay_error(&record(moves.clone(), Some(loser)));
        assert!(
            e.contains(&format!(
                "says {loser} won but its moves end with {} winning",
                outcome.winner
            )),
            "{e}"
        );
        let e = replay_error(&record(moves.clone(), None));
        assert!(e.contains("says the game is unfinished"), "{e}");
        let (steps, game) = record(moves.clone(), Some(outcome.winner))
            .replay()
            .expect("the true winner is accepted");
        assert_eq!(steps.len(), moves.len());
        assert_eq!(game.outcome(), Some(outcome));
    }

    #[test]
    fn a_winner_that_is_not_a_side_is_refused_on_parse() {
        let mut json = serde_json::to_value(record(vec![], None)).unwrap();
        json["winner"] = "X".into();
        let e = serde_json::from_value::<PlayRecord>(json).expect_err("X is no side");
        assert!(e.to_string().contains("side `X` is neither"), "{e}");
    }

    #[test]
    fn saved_records_round_trip_with_their_winner() {
        let (moves, outcome) = finished_game();
        let mut game = Game::new(Position::start(Variant::Kujifunza));
        for (pos, lm) in record(moves, Some(outcome.winner)).replay().unwrap().0 {
            assert_eq!(game.current(), Some(pos));
            game.push(lm);
        }
        let saved = game.record(vec!["a".into(), "b".into()]);
        assert_eq!(saved.winner, Some(outcome.winner));
        let text = serde_json::to_string(&saved).unwrap();
        assert!(
            text.contains(&format!("\"winner\":\"{}\"", outcome.winner)),
            "{text}"
        );
        let back: PlayRecord = serde_json::from_str(&text).unwrap();
        assert_eq!(back, saved);
    }
}
