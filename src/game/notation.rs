//! Move notation (R12): `<hole><L|R>[+]`, e.g. `A7L`, `b3R`, `A5R+`.

use super::movegen::LegalMove;
use super::position::Position;
use super::types::Side;

/// Why a move text was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotationError {
    #[error("malformed move `{0}`: expected <hole><L|R>[+], e.g. A7L or b3R+")]
    Malformed(String),
    #[error("no hole `{0}`: holes are A1..A8, B1..B8 (South) and a1..a8, b1..b8 (North)")]
    NoSuchHole(String),
    #[error("`{text}` names a hole of {owner}, but {to_move} is to move")]
    WrongSide { text: String, owner: Side, to_move: Side },
    #[error("illegal move `{text}`; legal moves are: {legal}")]
    Illegal { text: String, legal: String },
}

impl LegalMove {
    /// This move written for its mover (R12).
    pub fn notation(&self, mover: Side) -> String {
        todo!("{mover:?}")
    }
}

impl Position {
    /// Parses a move in R12 notation and checks that it is legal here.
    pub fn parse_move(&self, text: &str) -> Result<LegalMove, NotationError> {
        todo!("{text}")
    }

    /// The notation of every legal move, in move-list order.
    pub fn legal_notations(&self) -> Vec<String> {
        let me = self.to_move();
        self.legal_moves().iter().map(|lm| lm.notation(me)).collect()
    }
}
