//! Legal move generation and move execution (R3..R11).
//!
//! Every candidate move is played out in full while generating, because legality depends on
//! it (an infinite move is illegal, R11) and because the nyumba choice (R8) only shows
//! during the move. So a [`MoveList`] carries each move's result: search and self-play never
//! replay a move.

use super::action::ACTIONS;
use super::position::{facing, Position, NYUMBA};
use super::types::{Dir, Hole, Move, MoveKind, Outcome, Side, Variant, WinReason};

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
    pub(crate) moves: [LegalMove; ACTIONS],
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
        let mut list = MoveList { len: 0, moves: [PLACEHOLDER; ACTIONS] };
        let me = self.to_move.index();
        if self.hand[me] > 0 {
            self.namua_moves(&mut list);
        } else {
            self.mtaji_moves(&mut list);
        }
        list
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
            reason: WinReason::NoMove,
        })
    }

    /// The side that moved last (the opponent of the side to move).
    pub fn last_mover(&self) -> Side {
        self.to_move.opponent()
    }
}

/// R11: a move that has sown this many seeds without ending is infinite, hence illegal.
pub const INFINITE_MOVE_SEEDS: u32 = 10_000;

const PLACEHOLDER: LegalMove = LegalMove {
    mv: Move { hole: Hole::LEFT_KICHWA, dir: Dir::Clockwise, safari: false },
    kind: MoveKind::MtajiTakasa,
    after: After::Won(Outcome { winner: Side::South, reason: WinReason::NoMove }),
    captured: 0,
    sown: 0,
};

/// How a move begins; the rest of it (laps, relays, captures) follows the rules alone.
#[derive(Clone, Copy)]
enum Start {
    /// Mtaji stage: lift all seeds of `hole`, sow; `capture` from the first-lap test (R6).
    Mtaji { capture: bool },
    /// Namua capture: hand seed into `hole`, which captures at once (R7).
    NamuaCapture,
    /// Namua takasa: hand seed into `hole`, lift all (or 2 when taxed) and sow (R7).
    NamuaTakasa { tax: bool },
}

/// How a played-out move ended.
enum Played {
    /// The move ended; the board as it stands.
    Ended(Sim),
    /// A capture emptied the opponent's front row (R5).
    Won(Sim),
    /// R11: sowed `INFINITE_MOVE_SEEDS` without ending.
    Infinite,
}

/// The board while a move is played out, from the mover's side.
#[derive(Clone, Copy)]
struct Sim {
    holes: [[u8; 16]; 2],
    hand: [u8; 2],
    nyumba: [bool; 2],
    sown: u32,
    captured: u32,
    /// The nyumba choice of R8 came up during the move.
    choice_arose: bool,
}

#[inline]
fn step(pos: usize, dir: Dir) -> usize {
    match dir {
        Dir::Clockwise => (pos + 1) & 15,
        Dir::Anticlockwise => (pos + 15) & 15,
    }
}

impl Position {
    fn namua_moves(&self, list: &mut MoveList) {
        let me = self.to_move.index();
        let op = 1 - me;
        let mine = &self.holes[me];
        let theirs = &self.holes[op];

        // R7 capture: a hand seed into an occupied front hole facing an occupied one.
        let mut any_capture = false;
        for h in 0..8 {
            if mine[h] == 0 || theirs[facing(h)] == 0 || self.blocked(h) {
                continue;
            }
            any_capture = true;
            // R5: kimbi captures enter at their own kichwa; holes 3..6 let the player choose.
            let dirs: &[Dir] = match h {
                0 | 1 => &[Dir::Clockwise],
                6 | 7 => &[Dir::Anticlockwise],
                _ => &[Dir::Clockwise, Dir::Anticlockwise],
            };
            for &dir in dirs {
                self.push_with_safari(list, h, dir, Start::NamuaCapture, MoveKind::NamuaCapture);
            }
        }
        if any_capture {
            return;
        }

        // R7 takasa.
        let occupied = (0..8).filter(|&h| mine[h] > 0).count();
        let nyumba_big = self.nyumba[me] && mine[NYUMBA] >= 6;
        if nyumba_big && occupied == 1 {
            // Only the owned nyumba is occupied: it is taxed (2 seeds lifted, still owned).
            for dir in [Dir::Clockwise, Dir::Anticlockwise] {
                self.push_move(list, Move { hole: ring(NYUMBA), dir, safari: false },
                    Start::NamuaTakasa { tax: true }, MoveKind::NamuaTax);
            }
            return;
        }
        let need_two = !self.nyumba[me] && (0..8).any(|h| mine[h] >= 2);
        for h in 0..8 {
            let c = mine[h];
            if c == 0 || (need_two && c < 2) || (nyumba_big && h == NYUMBA) || self.blocked(h) {
                continue;
            }
            for dir in [Dir::Clockwise, Dir::Anticlockwise] {
                if occupied == 1 && toward_back(h, dir) {
                    continue; // lone kichwa (R6, R7)
                }
                self.push_move(list, Move { hole: ring(h), dir, safari: false },
                    Start::NamuaTakasa { tax: false }, MoveKind::NamuaTakasa);
            }
        }
    }

    fn mtaji_moves(&self, list: &mut MoveList) {
        let me = self.to_move.index();
        let mine = &self.holes[me];
        let theirs = &self.holes[1 - me];

        // R6 capturing moves: first lap from 2..15 seeds ends in an occupied own front hole
        // facing an occupied opponent hole.
        let mut any_capture = false;
        for h in 0..16 {
            if self.blocked(h) {
                continue;
            }
            for dir in [Dir::Clockwise, Dir::Anticlockwise] {
                if first_lap_captures(mine, theirs, h, dir).is_some() {
                    any_capture = true;
                    self.push_move(list, Move { hole: ring(h), dir, safari: false },
                        Start::Mtaji { capture: true }, MoveKind::MtajiCapture);
                }
            }
        }
        if any_capture {
            return;
        }

        // R6 takasa: from the front row if any front hole holds 2+, else from the back row.
        let rows = if (0..8).any(|h| mine[h] >= 2) { 0..8 } else { 8..16 };
        let occupied = (0..8).filter(|&h| mine[h] > 0).count();
        for h in rows {
            if mine[h] < 2 || self.blocked(h) {
                continue;
            }
            for dir in [Dir::Clockwise, Dir::Anticlockwise] {
                if occupied == 1 && h < 8 && toward_back(h, dir) {
                    continue; // lone kichwa (R6)
                }
                self.push_move(list, Move { hole: ring(h), dir, safari: false },
                    Start::Mtaji { capture: false }, MoveKind::MtajiTakasa);
            }
        }
    }

    /// R9: the side to move may not start from its takasia'd hole.
    #[inline]
    fn blocked(&self, h: usize) -> bool {
        self.takasia == Some(h as u8)
    }

    /// Adds a namua capture, and its safari twin when the nyumba choice arises (R8, R12).
    fn push_with_safari(&self, list: &mut MoveList, h: usize, dir: Dir, start: Start, kind: MoveKind) {
        let mv = Move { hole: ring(h), dir, safari: false };
        if self.push_move(list, mv, start, kind) {
            self.push_move(list, Move { safari: true, ..mv }, start, kind);
        }
    }

    /// Plays `mv` out and adds it unless it is infinite (R11). Returns whether the nyumba
    /// choice arose (only meaningful for a move played without safari).
    fn push_move(&self, list: &mut MoveList, mv: Move, start: Start, kind: MoveKind) -> bool {
        let (played, choice_arose) = self.play_out(mv, start);
        let (after, sim) = match played {
            Played::Infinite => return choice_arose,
            Played::Won(sim) => {
                (After::Won(Outcome { winner: self.to_move, reason: WinReason::FrontEmpty }), sim)
            }
            Played::Ended(sim) => (After::Position(self.successor(&sim, kind)), sim),
        };
        list.moves[list.len] = LegalMove {
            mv,
            kind,
            after,
            captured: sim.captured.min(u8::MAX as u32) as u8,
            sown: sim.sown.min(u16::MAX as u32) as u16,
        };
        list.len += 1;
        choice_arose
    }

    /// The position after a finished move: opponent to move, takasia per R9.
    fn successor(&self, sim: &Sim, kind: MoveKind) -> Position {
        let mut next = Position {
            variant: self.variant,
            to_move: self.to_move.opponent(),
            holes: sim.holes,
            hand: sim.hand,
            nyumba: sim.nyumba,
            takasia: None,
        };
        if kind == MoveKind::MtajiTakasa && self.variant == Variant::Kiswahili {
            next.takasia = takasia_for(&next);
        }
        next
    }

    /// Plays a move out to its end (R3, R5, R8, R9, R11).
    fn play_out(&self, mv: Move, start: Start) -> (Played, bool) {
        let me = self.to_move.index();
        let op = 1 - me;
        let namua = !matches!(start, Start::Mtaji { .. });
        let capturing = matches!(start, Start::NamuaCapture | Start::Mtaji { capture: true });
        let mut s = Sim {
            holes: self.holes,
            hand: self.hand,
            nyumba: self.nyumba,
            sown: 0,
            captured: 0,
            choice_arose: false,
        };
        let mut pos = mv.hole.ring();
        let mut dir = mv.dir;
        // Seeds about to be sown from `pos` onwards (the lap starts after `pos`).
        let mut seeds: u32;
        let mut first_capture = true;
        match start {
            Start::Mtaji { .. } => {
                seeds = s.holes[me][pos] as u32;
                s.holes[me][pos] = 0;
                if pos == NYUMBA {
                    s.nyumba[me] = false; // emptied by its owner (R8)
                }
            }
            Start::NamuaTakasa { tax } => {
                s.hand[me] -= 1;
                s.holes[me][pos] += 1;
                if tax {
                    seeds = 2;
                    s.holes[me][pos] -= 2;
                } else {
                    seeds = s.holes[me][pos] as u32;
                    s.holes[me][pos] = 0;
                    if pos == NYUMBA {
                        s.nyumba[me] = false;
                    }
                }
            }
            Start::NamuaCapture => {
                s.hand[me] -= 1;
                s.holes[me][pos] += 1;
                s.sown += 1;
                // The seed's hole captures at once; `dir` is the chosen kichwa's direction.
                match self.capture(&mut s, pos, &mut dir, namua, &mut first_capture, mv.dir) {
                    Some(n) => seeds = n,
                    None => return (Played::Won(s), false),
                }
                pos = kichwa_entry(dir);
            }
        }
        loop {
            for _ in 0..seeds {
                pos = step(pos, dir);
                s.holes[me][pos] += 1;
            }
            s.sown += seeds;
            let c = s.holes[me][pos];
            if c == 1 {
                // The last seed fell into an empty hole: the move ends (R3).
                return (finish(s), s.choice_arose);
            }
            if capturing && pos < 8 && s.holes[op][facing(pos)] > 0 {
                if s.sown >= INFINITE_MOVE_SEEDS {
                    return (Played::Infinite, s.choice_arose);
                }
                match self.capture(&mut s, pos, &mut dir, namua, &mut first_capture, mv.dir) {
                    Some(n) => seeds = n,
                    None => return (Played::Won(s), s.choice_arose),
                }
                pos = kichwa_entry(dir);
                continue;
            }
            if namua && pos == NYUMBA && s.nyumba[me] && c >= 6 {
                if !capturing {
                    return (finish(s), false); // nyumba stop in a takasa (R8)
                }
                s.choice_arose = true;
                if !mv.safari {
                    return (finish(s), true);
                }
                s.nyumba[me] = false; // safari: ownership is lost, sow on
            } else if self.takasia == Some(pos as u8) {
                return (finish(s), s.choice_arose); // takasia stop (R9)
            }
            if s.sown >= INFINITE_MOVE_SEEDS {
                return (Played::Infinite, s.choice_arose);
            }
            // Relay: lift the hole and sow on in the same direction (R3).
            seeds = c as u32;
            s.holes[me][pos] = 0;
            if pos == NYUMBA {
                s.nyumba[me] = false;
            }
        }
    }

    /// Captures the opponent's hole facing `pos` (R5). Returns the seeds to sow from the
    /// kichwa now set in `dir`, or `None` when the capture emptied the opponent's front row.
    fn capture(&self, s: &mut Sim, pos: usize, dir: &mut Dir, namua: bool, first: &mut bool, chosen: Dir) -> Option<u32> {
        let me = self.to_move.index();
        let op = 1 - me;
        let target = facing(pos);
        let n = s.holes[op][target];
        s.holes[op][target] = 0;
        s.captured += n as u32;
        if target == NYUMBA {
            s.nyumba[op] = false; // emptied by capture (R8)
        }
        if !namua {
            s.nyumba = [false, false]; // first capture of the mtaji stage (R8)
        }
        if s.holes[op][..8].iter().all(|&c| c == 0) {
            return None;
        }
        *dir = match pos {
            0 | 1 => Dir::Clockwise,
            6 | 7 => Dir::Anticlockwise,
            _ if namua && *first => chosen,
            _ => *dir,
        };
        *first = false;
        Some(n as u32)
    }
}

/// A finished move is finite only when it ended within the R11 limit.
fn finish(s: Sim) -> Played {
    if s.sown > INFINITE_MOVE_SEEDS {
        Played::Infinite
    } else {
        Played::Ended(s)
    }
}

/// The hole "before" the kichwa where captured seeds enter, so that sowing starts in it (R5).
#[inline]
fn kichwa_entry(dir: Dir) -> usize {
    match dir {
        Dir::Clockwise => 15,     // next is ring 0, the left kichwa
        Dir::Anticlockwise => 8,  // next is ring 7, the right kichwa
    }
}

#[inline]
fn ring(h: usize) -> Hole {
    Hole::from_ring(h).expect("ring index below 16")
}

/// Whether sowing from front hole `h` in `dir` goes straight into the back row (R6 lone kichwa).
#[inline]
fn toward_back(h: usize, dir: Dir) -> bool {
    matches!((h, dir), (0, Dir::Anticlockwise) | (7, Dir::Clockwise))
}

/// R6 first-lap test: the opponent front ring index this start would capture, if any.
#[inline]
fn first_lap_captures(mine: &[u8; 16], theirs: &[u8; 16], h: usize, dir: Dir) -> Option<usize> {
    let c = mine[h] as usize;
    if !(2..=15).contains(&c) {
        return None;
    }
    let end = match dir {
        Dir::Clockwise => (h + c) & 15,
        Dir::Anticlockwise => (h + 16 - c) & 15,
    };
    (end < 8 && mine[end] > 0 && theirs[facing(end)] > 0).then(|| facing(end))
}

/// R9: the takasia'd hole for the side to move of `next`, just after the opponent's takasa.
fn takasia_for(next: &Position) -> Option<u8> {
    let opp = next.to_move.index(); // the side about to move, the "opponent" of R9
    let p = 1 - opp; // the player who just made the takasa
    let (mine, theirs) = (&next.holes[p], &next.holes[opp]);
    // The opponent must have no capturing move.
    let opp_captures = if next.hand[opp] > 0 {
        (0..8).any(|h| theirs[h] > 0 && mine[facing(h)] > 0)
    } else {
        (0..16).any(|h| {
            [Dir::Clockwise, Dir::Anticlockwise]
                .into_iter()
                .any(|d| first_lap_captures(theirs, mine, h, d).is_some())
        })
    };
    if opp_captures {
        return None;
    }
    let mut target = None;
    for h in 0..16 {
        for d in [Dir::Clockwise, Dir::Anticlockwise] {
            if let Some(t) = first_lap_captures(mine, theirs, h, d) {
                match target {
                    None => target = Some(t),
                    Some(x) if x == t => {}
                    Some(_) => return None, // more than one target hole
                }
            }
        }
    }
    let t = target?;
    let occupied = (0..8).filter(|&h| theirs[h] > 0).count();
    let big = (0..8).filter(|&h| theirs[h] >= 2).count();
    let excluded = (t == NYUMBA && next.nyumba[opp])
        || theirs[t] == 1
        || occupied == 1
        || (big == 1 && theirs[t] >= 2);
    (!excluded).then_some(t as u8)
}
