//! Network input features: the contract between the rules core and the network.
//!
//! A position is encoded from the **side to move's** point of view as `PLANES` planes of a
//! 4 x 8 board, plane-major (`out[plane * 32 + row * 8 + col]`). Rows, top to bottom:
//!
//! | row | holes                          | columns                              |
//! |-----|--------------------------------|--------------------------------------|
//! | 0   | opponent back row              | opponent hole `m` at column `8 - m`  |
//! | 1   | opponent front row             | opponent hole `m` at column `8 - m`  |
//! | 2   | own front row                  | own hole `n` at column `n - 1`       |
//! | 3   | own back row                   | own hole `n` at column `n - 1`       |
//!
//! so facing holes share a column and the board looks as the mover sees it from their seat.
//!
//! | plane | meaning                                                         |
//! |-------|-----------------------------------------------------------------|
//! | 0     | seeds in the hole / 16                                          |
//! | 1..=7 | one-hot seed count: 0, 1, 2, 3, 4..=7, 8..=15, 16 or more       |
//! | 8     | 1 on each owned nyumba (own and opponent's, R8)                 |
//! | 9     | 1 on the side to move's takasia'd hole (R9)                     |
//! | 10    | own seeds in hand / 22, broadcast                               |
//! | 11    | opponent's seeds in hand / 22, broadcast                        |
//! | 12    | 1 everywhere when the side to move is in the namua stage        |
//! | 13    | 1 everywhere when the opponent is in the namua stage            |
//! | 14    | 1 everywhere (lets convolutions see the board edge)             |
//!
//! Any change to this table must bump [`ENCODING_VERSION`], which checkpoints record.
//!
//! A network may also read what the move generator knows about each of the mover's moves
//! ([`Encoding::BoardAndMoves`], version 2; `[network] move_features = true`): six more planes,
//! each 0 except at the own hole a move starts from (or, in the namua stage, the hole the hand
//! seed goes into), one plane per direction (clockwise first):
//!
//! | plane   | meaning                                                        |
//! |---------|----------------------------------------------------------------|
//! | 15, 16  | 1 when a move from this hole in this direction is legal        |
//! | 17, 18  | seeds that move captures / 16 (the larger of its safari twins)  |
//! | 19, 20  | 1 when that move wins at once (R5)                             |
//!
//! They cost a move generation per evaluated position and tell the network tactics it would
//! otherwise have to learn from the board.
//!
//! The opponent's threats ([`Encoding::BoardMovesAndThreats`], version 3; `[network]
//! threat_features = true`, which needs the move planes) are six more planes of the same three
//! facts for the *opponent's* moves, as if it were the opponent's turn in this position (its
//! seeds in hand and nyumba as they are; no takasia, which binds only the side to move), each at
//! the opponent's hole that move starts from:
//!
//! | plane   | meaning                                                        |
//! |---------|----------------------------------------------------------------|
//! | 21, 22  | 1 when the opponent could play from this hole in this direction |
//! | 23, 24  | seeds that move would capture / 16                              |
//! | 25, 26  | 1 when that move would win at once                              |
//!
//! Why: a capture in Bao ends a sowing that may relay around the whole board, which a few 3x3
//! convolutions cannot follow; the move planes told the network what *it* can take, and this
//! tells it what it leaves en prise, the half of a one-ply tactic it still had to guess. They
//! cost a second move generation per evaluated position.

use super::movegen::{After, MoveList};
use super::position::{Position, NYUMBA};

pub const ROWS: usize = 4;
pub const COLS: usize = 8;
pub const CELLS: usize = ROWS * COLS;
pub const PLANES: usize = 15;
/// Floats per encoded position.
pub const FEATURES: usize = PLANES * CELLS;
/// Version of the board table above ([`Encoding::Board`]); stored in checkpoints so old
/// networks are refused.
pub const ENCODING_VERSION: u32 = 1;
/// Planes of the move features ([`Encoding::BoardAndMoves`]), and of the opponent's threats.
pub const MOVE_PLANES: usize = 6;

/// Which input planes a network reads. Its config chooses (`move_features`,
/// `threat_features`), its checkpoint records the version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// The board planes 0..=14 (version [`ENCODING_VERSION`]).
    Board,
    /// The board, then the move planes 15..=20 (version 2).
    BoardAndMoves,
    /// The board, the move planes, then the opponent's threat planes 21..=26 (version 3).
    BoardMovesAndThreats,
}

impl Encoding {
    pub const fn planes(self) -> usize {
        match self {
            Encoding::Board => PLANES,
            Encoding::BoardAndMoves => PLANES + MOVE_PLANES,
            Encoding::BoardMovesAndThreats => PLANES + 2 * MOVE_PLANES,
        }
    }
    /// Floats per encoded position.
    pub const fn features(self) -> usize {
        self.planes() * CELLS
    }
    /// The version checkpoints record.
    pub const fn version(self) -> u32 {
        match self {
            Encoding::Board => ENCODING_VERSION,
            Encoding::BoardAndMoves => 2,
            Encoding::BoardMovesAndThreats => 3,
        }
    }
    pub fn from_version(version: u32) -> Option<Encoding> {
        [
            Encoding::Board,
            Encoding::BoardAndMoves,
            Encoding::BoardMovesAndThreats,
        ]
        .into_iter()
        .find(|e| e.version() == version)
    }

    /// Writes the features of `pos` into `out` (exactly [`Self::features`] floats, every one
    /// written).
    pub fn encode(self, pos: &Position, out: &mut [f32]) {
        // Both arms check the buffer's length.
        match self {
            Encoding::Board => encode(pos, out),
            Encoding::BoardAndMoves | Encoding::BoardMovesAndThreats => {
                self.encode_with_moves(pos, &pos.legal_moves(), out)
            }
        }
    }

    /// [`Self::encode`] for a caller that holds the position's legal moves already.
    pub fn encode_with_moves(self, pos: &Position, moves: &MoveList, out: &mut [f32]) {
        assert_eq!(
            out.len(),
            self.features(),
            "feature buffer must hold {} floats",
            self.features()
        );
        let (board, rest) = out.split_at_mut(FEATURES);
        encode(pos, board);
        // `rest` is empty for the board alone, one block of move planes, or two.
        let (own, threats) = rest.split_at_mut(rest.len().min(MOVE_PLANES * CELLS));
        if self != Encoding::Board {
            encode_moves(moves, true, own);
        }
        if self == Encoding::BoardMovesAndThreats {
            encode_moves(&opponent_moves(pos), false, threats);
        }
    }
}

/// The opponent's legal moves in `pos` as if it were its turn (see the module docs).
fn opponent_moves(pos: &Position) -> MoveList {
    let mut theirs = *pos;
    theirs.to_move = pos.to_move.opponent();
    theirs.takasia = None;
    theirs.legal_moves()
}

/// The move planes (see the module docs) of `moves` into `out` (`MOVE_PLANES * CELLS` floats),
/// at the mover's holes when `own`, else at the opponent's.
fn encode_moves(moves: &MoveList, own: bool, out: &mut [f32]) {
    out.fill(0.0);
    for lm in moves.iter() {
        let at = cell(own, lm.mv.hole.ring());
        let dir = lm.mv.dir as usize;
        out[dir * CELLS + at] = 1.0;
        let captured = &mut out[(2 + dir) * CELLS + at];
        *captured = captured.max(lm.captured as f32 / 16.0);
        if matches!(lm.after, After::Won(_)) {
            out[(4 + dir) * CELLS + at] = 1.0;
        }
    }
}

/// Board cell (row * 8 + col) of ring index `ring`, for the mover (`own`) or the opponent.
#[inline]
pub const fn cell(own: bool, ring: usize) -> usize {
    match (own, ring < 8) {
        (true, true) => 2 * COLS + ring,
        (true, false) => 3 * COLS + (15 - ring),
        (false, true) => COLS + (7 - ring),
        (false, false) => ring - 8,
    }
}

fn count_plane(c: u8) -> usize {
    match c {
        0..=3 => 1 + c as usize,
        4..=7 => 5,
        8..=15 => 6,
        _ => 7,
    }
}

/// Writes the features of `pos` into `out` (exactly `FEATURES` floats, every one written).
pub fn encode(pos: &Position, out: &mut [f32]) {
    assert_eq!(
        out.len(),
        FEATURES,
        "feature buffer must hold FEATURES floats"
    );
    out.fill(0.0);
    let me = pos.to_move.index();
    for (own, side) in [(true, me), (false, 1 - me)] {
        for ring in 0..16 {
            let c = pos.holes[side][ring];
            let at = cell(own, ring);
            out[at] = c as f32 / 16.0;
            out[count_plane(c) * CELLS + at] = 1.0;
        }
        if pos.nyumba[side] {
            out[8 * CELLS + cell(own, NYUMBA)] = 1.0;
        }
    }
    if let Some(r) = pos.takasia {
        out[9 * CELLS + cell(true, r as usize)] = 1.0;
    }
    let broadcast = |out: &mut [f32], plane: usize, v: f32| {
        out[plane * CELLS..(plane + 1) * CELLS].fill(v);
    };
    broadcast(out, 10, pos.hand[me] as f32 / 22.0);
    broadcast(out, 11, pos.hand[1 - me] as f32 / 22.0);
    broadcast(out, 12, (pos.hand[me] > 0) as u8 as f32);
    broadcast(out, 13, (pos.hand[1 - me] > 0) as u8 as f32);
    broadcast(out, 14, 1.0);
}
