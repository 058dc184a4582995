//! Small value types of the rules core: variants, sides, holes, directions, moves, outcomes.

use std::fmt;

/// Which game is played (docs/RULES.md, introduction).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    /// Bao la Kiswahili: namua stage with seeds in hand, nyumba, takasia, then mtaji.
    Kiswahili,
    /// Bao la Kujifunza: the learners' game, mtaji stage only.
    Kujifunza,
}

impl Variant {
    pub const ALL: [Variant; 2] = [Variant::Kiswahili, Variant::Kujifunza];

    pub fn name(self) -> &'static str {
        match self {
            Variant::Kiswahili => "kiswahili",
            Variant::Kujifunza => "kujifunza",
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Variant {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "kiswahili" => Ok(Variant::Kiswahili),
            "kujifunza" => Ok(Variant::Kujifunza),
            _ => Err(format!(
                "unknown variant `{}` (expected `kiswahili` or `kujifunza`)",
                crate::util::quote::quote(s)
            )),
        }
    }
}

/// A player. South moves first (R1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Side {
    South = 0,
    North = 1,
}

impl Side {
    pub const BOTH: [Side; 2] = [Side::South, Side::North];

    #[inline]
    pub fn opponent(self) -> Side {
        match self {
            Side::South => Side::North,
            Side::North => Side::South,
        }
    }

    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    /// `"S"` or `"N"`, as in the JSON state format (R13).
    pub fn letter(self) -> &'static str {
        match self {
            Side::South => "S",
            Side::North => "N",
        }
    }

    pub fn from_letter(s: &str) -> Option<Side> {
        match s {
            "S" => Some(Side::South),
            "N" => Some(Side::North),
            _ => None,
        }
    }
}

/// Serialised as its letter, `"S"` or `"N"`, as in the JSON state format (R13).
impl serde::Serialize for Side {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.letter())
    }
}

impl<'de> serde::Deserialize<'de> for Side {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Side, D::Error> {
        let text = String::deserialize(d)?;
        Side::from_letter(&text).ok_or_else(|| {
            serde::de::Error::custom(format!("side `{text}` is neither \"S\" nor \"N\""))
        })
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.letter())
    }
}

/// One of a player's 16 holes, stored as its index on that player's sowing ring (R1):
/// ring 0..=7 is the front row `A1..A8`, ring 8..=15 is the back row `B8..B1`, so that
/// clockwise sowing is always `ring + 1 (mod 16)`. Always `< 16` by construction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Hole(u8);

impl Hole {
    /// Front hole 1, the left kichwa (ring 0).
    pub const LEFT_KICHWA: Hole = Hole(0);
    /// Front hole 8, the right kichwa (ring 7).
    pub const RIGHT_KICHWA: Hole = Hole(7);

    /// Hole by ring index; `None` unless `ring < 16`.
    #[inline]
    pub fn from_ring(ring: usize) -> Option<Hole> {
        (ring < 16).then_some(Hole(ring as u8))
    }
    /// Front hole `n` (1..=8, from the owner's left).
    pub fn front(n: u8) -> Option<Hole> {
        (1..=8).contains(&n).then(|| Hole(n - 1))
    }
    /// Back hole `n` (1..=8, from the owner's left).
    pub fn back(n: u8) -> Option<Hole> {
        (1..=8).contains(&n).then(|| Hole(16 - n))
    }
    #[inline]
    pub fn ring(self) -> usize {
        self.0 as usize
    }
    #[inline]
    pub fn is_front(self) -> bool {
        self.0 < 8
    }
    /// The hole's number 1..=8, counted from its owner's left.
    pub fn number(self) -> u8 {
        if self.is_front() {
            self.0 + 1
        } else {
            16 - self.0
        }
    }
    /// The hole's name for its owner (R12), e.g. `A5` for South, `b3` for North.
    pub fn name(self, owner: Side) -> String {
        let row = match (owner, self.is_front()) {
            (Side::South, true) => 'A',
            (Side::South, false) => 'B',
            (Side::North, true) => 'a',
            (Side::North, false) => 'b',
        };
        format!("{row}{}", self.number())
    }
}

/// Sowing direction on the mover's ring (R1). Clockwise runs `A1 → A8 → B8 → B1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dir {
    Clockwise = 0,
    Anticlockwise = 1,
}

impl Dir {
    #[inline]
    pub fn reversed(self) -> Dir {
        match self {
            Dir::Clockwise => Dir::Anticlockwise,
            Dir::Anticlockwise => Dir::Clockwise,
        }
    }
}

/// A move as the network sees it: start hole, ring direction, safari flag. Every legal move of
/// a position has a distinct `Move`, and every `Move` a distinct action index (see `action`).
///
/// For a namua capture, `dir` is the direction the captured seeds run after entering at the
/// chosen kichwa: clockwise for the left kichwa (`L`), anticlockwise for the right (`R`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Move {
    pub hole: Hole,
    pub dir: Dir,
    /// Go on safari when the nyumba choice arises (R8). Only set on moves where it arises.
    pub safari: bool,
}

/// What kind of move a legal move is; decides how it is written (R12) and what it may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MoveKind {
    /// Namua stage, the hand seed goes into a hole that captures (R7).
    NamuaCapture,
    /// Namua stage, non-capturing (R7), including the taxed nyumba.
    NamuaTakasa,
    /// Namua stage, the owned nyumba taxed: only 2 seeds lifted (R7).
    NamuaTax,
    /// Mtaji stage capturing move (R6).
    MtajiCapture,
    /// Mtaji stage non-capturing move (R6).
    MtajiTakasa,
}

impl MoveKind {
    pub fn is_capture(self) -> bool {
        matches!(self, MoveKind::NamuaCapture | MoveKind::MtajiCapture)
    }
    pub fn is_namua(self) -> bool {
        matches!(
            self,
            MoveKind::NamuaCapture | MoveKind::NamuaTakasa | MoveKind::NamuaTax
        )
    }
}

/// Why a game ended (R10). Serialised as its [`WinReason::name`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WinReason {
    /// A capture emptied the opponent's front row, possibly mid-move (R5).
    FrontEmpty,
    /// The loser had no legal move on their turn (R6, R11).
    NoMove,
}

impl WinReason {
    pub fn name(self) -> &'static str {
        match self {
            WinReason::FrontEmpty => "front-empty",
            WinReason::NoMove => "no-move",
        }
    }
}

/// A finished game: who won and why. Bao has no draws (R10).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Outcome {
    pub winner: Side,
    pub reason: WinReason,
}
