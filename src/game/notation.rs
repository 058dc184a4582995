//! Move notation (R12): `<hole><L|R>[+]`, e.g. `A7L`, `b3R`, `A5R+`.

use super::movegen::{After, LegalMove};
use super::position::Position;
use super::types::{Dir, Hole, MoveKind, Side};
use crate::util::quote::quote;

/// Why a move text was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotationError {
    #[error(
        "malformed move `{}`: expected <hole><L|R>[+], e.g. A7L or b3R+",
        quote(.0)
    )]
    Malformed(String),
    #[error(
        "no hole `{}`: holes are A1..A8, B1..B8 (South) and a1..a8, b1..b8 (North)",
        quote(.0)
    )]
    NoSuchHole(String),
    #[error("`{}` names a hole of {owner}, but {to_move} is to move", quote(.text))]
    WrongSide {
        text: String,
        owner: Side,
        to_move: Side,
    },
    #[error("illegal move `{}`; legal moves are: {legal}", quote(.text))]
    Illegal { text: String, legal: String },
    #[error("no legal move: the game is over")]
    GameOver,
}

impl LegalMove {
    /// This move written for its mover (R12).
    pub fn notation(&self, mover: Side) -> String {
        let hole = self.mv.hole;
        // Namua captures name the kichwa the captured seeds enter; sowing moves name the way
        // the hand moves along the hole's row as the mover sees it.
        let right = match self.kind {
            MoveKind::NamuaCapture => self.mv.dir == Dir::Anticlockwise,
            _ => (self.mv.dir == Dir::Clockwise) == hole.is_front(),
        };
        let mut s = hole.name(mover);
        s.push(if right { 'R' } else { 'L' });
        if self.mv.safari {
            s.push('+');
        }
        s
    }
}

/// Why a list of moves could not be played: the first bad move, counted from 1.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("move {number} `{}`: {error}", quote(.text))]
pub struct LineError {
    pub number: usize,
    pub text: String,
    pub error: NotationError,
}

/// Parses a hole name such as `A5` or `b3` into its owner and hole.
pub fn parse_hole(text: &str) -> Result<(Side, Hole), NotationError> {
    let bytes = text.as_bytes();
    let bad = || NotationError::NoSuchHole(text.to_string());
    if bytes.len() != 2 {
        return Err(bad());
    }
    let n = match bytes[1] {
        b @ b'1'..=b'8' => b - b'0',
        _ => return Err(bad()),
    };
    let (side, hole) = match bytes[0] {
        b'A' => (Side::South, Hole::front(n)),
        b'B' => (Side::South, Hole::back(n)),
        b'a' => (Side::North, Hole::front(n)),
        b'b' => (Side::North, Hole::back(n)),
        _ => return Err(bad()),
    };
    Ok((side, hole.ok_or_else(bad)?))
}

impl Position {
    /// Parses a move in R12 notation and checks that it is legal here.
    pub fn parse_move(&self, text: &str) -> Result<LegalMove, NotationError> {
        let t = text.trim();
        let body = t.strip_suffix('+').unwrap_or(t);
        if !t.is_ascii() || body.len() != 3 || !matches!(body.as_bytes()[2], b'L' | b'R') {
            return Err(NotationError::Malformed(t.to_string()));
        }
        let (owner, _) = parse_hole(&body[..2])?;
        if owner != self.to_move {
            return Err(NotationError::WrongSide {
                text: t.to_string(),
                owner,
                to_move: self.to_move,
            });
        }
        let moves = self.legal_moves();
        if moves.is_empty() {
            return Err(NotationError::GameOver);
        }
        moves
            .iter()
            .find(|lm| lm.notation(self.to_move) == t)
            .copied()
            .ok_or_else(|| NotationError::Illegal {
                text: t.to_string(),
                legal: self.legal_notations().join(" "),
            })
    }

    /// Plays `moves` (R12 notation) from here, one after the other: the position reached, or
    /// the outcome when the last move won. A bad move, or any move after a win, is refused
    /// with its number and the reason.
    pub fn play_line<S: AsRef<str>>(&self, moves: &[S]) -> Result<After, LineError> {
        let mut after = After::Position(*self);
        for (i, text) in moves.iter().enumerate() {
            let text = text.as_ref();
            let fail = |error| LineError {
                number: i + 1,
                text: text.to_string(),
                error,
            };
            let After::Position(pos) = after else {
                return Err(fail(NotationError::GameOver));
            };
            after = pos.parse_move(text).map_err(fail)?.after;
        }
        Ok(after)
    }

    /// The notation of every legal move, in move-list order.
    pub fn legal_notations(&self) -> Vec<String> {
        let me = self.to_move();
        self.legal_moves()
            .iter()
            .map(|lm| lm.notation(me))
            .collect()
    }
}
