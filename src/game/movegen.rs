//! Legal move generation and move execution (R3..R11).
//!
//! Every candidate move is played out in full while generating, because legality depends on
//! it (an infinite move is illegal, R11) and because the nyumba choice (R8) only shows
//! during the move. So a [`MoveList`] carries each move's result: search and self-play never
//! replay a move.

use super::position::Position;
use super::types::{Move, MoveKind, Outcome, Side};

/// The result of playing a legal move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum After {
    /// The game goes on from this position (the opponent to move). The opponent may have no
    /// legal move there; [`Position::outcome`] tells.
    Position(Position),
    /// The move won at once: a capture emptied the opponent's front row (R5).
    Won(Outcome),
}

/// A legal move with everything learned while playing it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LegalMove {
    pub mv: Move,
    pub kind: MoveKind,
    pub after: After,
    /// Seeds captured by this move, all captures counted (for the greedy player and stats).
    pub captured: u8,
    /// Seeds sown by this move, captured seeds included.
    pub sown: u16,
}

/// The legal moves of a position, at most one per action index (64).
#[derive(Clone, Debug)]
pub struct MoveList {
    pub(crate) len: usize,
    pub(crate) moves: [LegalMove; super::action::ACTIONS],
}

impl MoveList {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn as_slice(&self) -> &[LegalMove] {
        &self.moves[..self.len]
    }
    pub fn iter(&self) -> std::slice::Iter<'_, LegalMove> {
        self.as_slice().iter()
    }
    /// Bit `a` is set when action `a` is legal.
    pub fn mask(&self) -> u64 {
        self.iter().fold(0, |m, lm| m | 1u64 << lm.mv.action())
    }
    /// The legal move with this action index, if any.
    pub fn by_action(&self, action: usize) -> Option<&LegalMove> {
        self.iter().find(|lm| lm.mv.action() == action)
    }
    pub fn get(&self, mv: Move) -> Option<&LegalMove> {
        self.by_action(mv.action())
    }
}

impl<'a> IntoIterator for &'a MoveList {
    type Item = &'a LegalMove;
    type IntoIter = std::slice::Iter<'a, LegalMove>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// A move that is not legal in the position it was tried on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("illegal move {0}")]
pub struct IllegalMove(pub String);

impl Position {
    /// All legal moves of the side to move, each played out (R4, R6, R7, R11).
    pub fn legal_moves(&self) -> MoveList {
        todo!()
    }

    /// Plays a move, checking that it is legal.
    pub fn play(&self, mv: Move) -> Result<After, IllegalMove> {
        self.legal_moves()
            .get(mv)
            .map(|lm| lm.after)
            .ok_or_else(|| IllegalMove(format!("{mv:?}")))
    }

    /// `Some` when the side to move has no legal move and so has lost (R10, R11).
    pub fn outcome(&self) -> Option<Outcome> {
        self.legal_moves().is_empty().then(|| Outcome {
            winner: self.to_move.opponent(),
            reason: super::types::WinReason::NoMove,
        })
    }

    /// The side that moved last (the opponent of the side to move).
    pub fn last_mover(&self) -> Side {
        self.to_move.opponent()
    }
}
