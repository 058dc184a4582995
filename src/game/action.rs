//! The fixed action space of the network: 16 holes x 2 directions x safari flag = 64.
//!
//! `action = (ring * 2 + dir) * 2 + safari`, with `ring` the start hole's ring index on the
//! mover's side (see [`Hole`]) and `dir` 0 = clockwise, 1 = anticlockwise. Because holes are
//! counted from the mover's own side, the same index means the same move for either player.

use super::types::{Dir, Hole, Move};

/// Number of action indices.
pub const ACTIONS: usize = 64;

impl Move {
    /// This move's index in `0..ACTIONS`.
    #[inline]
    pub fn action(self) -> usize {
        (self.hole.ring() * 2 + self.dir as usize) * 2 + self.safari as usize
    }

    /// The move with this action index; `None` when `action >= ACTIONS`.
    pub fn from_action(action: usize) -> Option<Move> {
        let hole = Hole::from_ring(action / 4)?;
        let dir = if (action / 2).is_multiple_of(2) {
            Dir::Clockwise
        } else {
            Dir::Anticlockwise
        };
        Some(Move {
            hole,
            dir,
            safari: action % 2 == 1,
        })
    }

    /// The same move on the left-right mirrored board (hole `n` becomes `9 - n` in its row,
    /// directions swap). Used for the `kujifunza` augmentation, whose rules are symmetric.
    pub fn mirrored(self) -> Move {
        let ring = self.hole.ring();
        let mirrored = if ring < 8 { 7 - ring } else { 23 - ring };
        Move {
            hole: Hole::from_ring(mirrored).expect("mirror of a ring index is a ring index"),
            dir: self.dir.reversed(),
            safari: self.safari,
        }
    }
}

/// Mirror of an action index (see [`Move::mirrored`]).
pub fn mirror_action(action: usize) -> usize {
    Move::from_action(action)
        .expect("action index in range")
        .mirrored()
        .action()
}
