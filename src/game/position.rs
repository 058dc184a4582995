//! The position type: everything the rules need to know about a game in progress.

use super::types::{Hole, Side, Variant};

/// A game position (R1, R2, R13). Compact and `Copy`: 40 bytes, no heap.
///
/// Holes are stored per side on that side's sowing ring (see [`Hole`]), so the same code
/// sows for both players and "the side to move's point of view" is just an index swap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    pub(crate) variant: Variant,
    pub(crate) to_move: Side,
    /// `holes[side][ring]`: seed counts.
    pub(crate) holes: [[u8; 16]; 2],
    /// Seeds in hand (namua stage while > 0). Always 0 in `kujifunza`.
    pub(crate) hand: [u8; 2],
    /// Whether each side's nyumba is still owned (R8). Always false in `kujifunza`.
    pub(crate) nyumba: [bool; 2],
    /// The side to move's takasia'd front hole (R9), as a ring index 0..8.
    pub(crate) takasia: Option<u8>,
}

/// The stage of the side to move: namua while they hold seeds in hand (R7), mtaji after (R6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    Namua,
    Mtaji,
}

/// Ring index of the nyumba, front hole 5 (R1).
pub const NYUMBA: usize = 4;
/// Total seeds of every game (R1).
pub const TOTAL_SEEDS: u32 = 64;

/// The opponent's front ring index facing front ring index `r` (R1: `An` faces `a(9-n)`).
#[inline]
pub const fn facing(r: usize) -> usize {
    7 - r
}

impl Position {
    /// The start position of a variant (R2).
    pub fn start(variant: Variant) -> Position {
        let mut holes = [[0u8; 16]; 2];
        let (hand, nyumba) = match variant {
            Variant::Kujifunza => {
                holes = [[2; 16]; 2];
                ([0, 0], [false, false])
            }
            Variant::Kiswahili => {
                for side in &mut holes {
                    side[NYUMBA] = 6;
                    side[5] = 2;
                    side[6] = 2;
                }
                ([22, 22], [true, true])
            }
        };
        Position {
            variant,
            to_move: Side::South,
            holes,
            hand,
            nyumba,
            takasia: None,
        }
    }

    #[inline]
    pub fn variant(&self) -> Variant {
        self.variant
    }
    #[inline]
    pub fn to_move(&self) -> Side {
        self.to_move
    }
    /// Seeds in one hole.
    #[inline]
    pub fn seeds(&self, side: Side, hole: Hole) -> u8 {
        self.holes[side.index()][hole.ring()]
    }
    /// A side's 16 holes in ring order (front `A1..A8`, then back `B8..B1`).
    #[inline]
    pub fn ring(&self, side: Side) -> &[u8; 16] {
        &self.holes[side.index()]
    }
    /// A side's front row, hole 1 first.
    pub fn front(&self, side: Side) -> [u8; 8] {
        let mut row = [0; 8];
        row.copy_from_slice(&self.holes[side.index()][..8]);
        row
    }
    /// A side's back row, hole 1 first.
    pub fn back(&self, side: Side) -> [u8; 8] {
        let ring = &self.holes[side.index()];
        std::array::from_fn(|i| ring[15 - i])
    }
    #[inline]
    pub fn hand(&self, side: Side) -> u8 {
        self.hand[side.index()]
    }
    #[inline]
    pub fn nyumba_owned(&self, side: Side) -> bool {
        self.nyumba[side.index()]
    }
    /// The side to move's takasia'd hole, if any (R9).
    #[inline]
    pub fn takasia(&self) -> Option<Hole> {
        self.takasia.and_then(|r| Hole::from_ring(r as usize))
    }
    /// The stage of the side to move.
    #[inline]
    pub fn stage(&self) -> Stage {
        if self.hand[self.to_move.index()] > 0 {
            Stage::Namua
        } else {
            Stage::Mtaji
        }
    }
    /// Seeds `side` owns: on its two rows plus in its hand.
    pub fn seeds_owned(&self, side: Side) -> u32 {
        let board: u32 = self.holes[side.index()].iter().map(|&c| c as u32).sum();
        board + self.hand[side.index()] as u32
    }
    /// `side`'s seeds minus the opponent's: the game's score, the target of the network's
    /// seed-margin head. Seeds change sides only by capture (R1, R5).
    pub fn seed_margin(&self, side: Side) -> i32 {
        self.seeds_owned(side) as i32 - self.seeds_owned(side.opponent()) as i32
    }
    /// Seeds on the board plus seeds in hand; 64 in every game in progress (R13).
    pub fn total_seeds(&self) -> u32 {
        let board: u32 = self.holes.iter().flatten().map(|&c| c as u32).sum();
        board + self.hand[0] as u32 + self.hand[1] as u32
    }

    /// A 64-bit hash of the whole position (for caches and transposition tables).
    pub fn hash64(&self) -> u64 {
        // Eight rounds of a 64-bit multiply-xorshift mix over the packed bytes: fast, and good
        // enough that distinct positions practically never collide in a cache of millions.
        let mut bytes = [0u8; 40];
        bytes[..PACKED_LEN].copy_from_slice(&self.to_bytes());
        let mut h: u64 = 0x9e37_79b9_7f4a_7c15;
        for chunk in bytes.chunks_exact(8) {
            let word = u64::from_le_bytes(chunk.try_into().expect("8-byte chunk"));
            h = (h ^ word).wrapping_mul(0xff51_afd7_ed55_8ccd);
            h ^= h >> 33;
        }
        h
    }
}

/// Bytes of [`Position::to_bytes`].
pub const PACKED_LEN: usize = 38;

impl Position {
    /// A compact, stable byte form (for sample shards): 16 + 16 ring counts (South, North),
    /// hands, nyumba bits, takasia ring (255 = none), side to move, variant.
    pub fn to_bytes(&self) -> [u8; PACKED_LEN] {
        let mut b = [0u8; PACKED_LEN];
        b[..16].copy_from_slice(&self.holes[0]);
        b[16..32].copy_from_slice(&self.holes[1]);
        b[32] = self.hand[0];
        b[33] = self.hand[1];
        b[34] = self.nyumba[0] as u8 | (self.nyumba[1] as u8) << 1;
        b[35] = self.takasia.unwrap_or(255);
        b[36] = self.to_move as u8;
        b[37] = self.variant as u8;
        b
    }

    /// Inverse of [`Position::to_bytes`]; `None` for bytes no position produces.
    pub fn from_bytes(b: &[u8]) -> Option<Position> {
        if b.len() != PACKED_LEN || b[34] > 3 || b[36] > 1 || b[37] > 1 {
            return None;
        }
        let takasia = match b[35] {
            255 => None,
            r => Some(r),
        };
        let mut holes = [[0u8; 16]; 2];
        holes[0].copy_from_slice(&b[..16]);
        holes[1].copy_from_slice(&b[16..32]);
        let variant = if b[37] == 0 {
            Variant::Kiswahili
        } else {
            Variant::Kujifunza
        };
        let to_move = if b[36] == 0 { Side::South } else { Side::North };
        let nyumba = [b[34] & 1 != 0, b[34] & 2 != 0];
        Position::from_parts(variant, to_move, holes, [b[32], b[33]], nyumba, takasia)
    }

    /// A position from its parts (ring counts per side, hands, nyumba owned, the takasia ring);
    /// `None` for parts no position has (a takasia ring past 7, more than the game's seeds).
    pub fn from_parts(
        variant: Variant,
        to_move: Side,
        holes: [[u8; 16]; 2],
        hand: [u8; 2],
        nyumba: [bool; 2],
        takasia: Option<u8>,
    ) -> Option<Position> {
        if takasia.is_some_and(|r| r >= 8) {
            return None;
        }
        let pos = Position {
            variant,
            to_move,
            holes,
            hand,
            nyumba,
            takasia,
        };
        (pos.total_seeds() <= TOTAL_SEEDS).then_some(pos)
    }
}

impl Position {
    /// The left-right mirror image: each side's hole `n` becomes hole `9 - n` of the same row.
    /// Only `kujifunza` is symmetric under it (tested: legal moves and results mirror exactly);
    /// in `kiswahili` the nyumba (hole 5) has no mirror twin, so the image is not a real game.
    pub fn mirrored(&self) -> Position {
        let mirror = |ring: usize| if ring < 8 { 7 - ring } else { 23 - ring };
        let mut holes = [[0u8; 16]; 2];
        for (dst, src) in holes.iter_mut().zip(&self.holes) {
            for (r, &seeds) in src.iter().enumerate() {
                dst[mirror(r)] = seeds;
            }
        }
        Position {
            holes,
            takasia: self.takasia.map(|t| 7 - t),
            ..*self
        }
    }
}
