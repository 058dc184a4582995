//! Legal move generation and move execution (R3..R11).
//!
//! Every candidate move is played out in full while generating, because legality depends on
//! it (an infinite move is illegal, R11) and because the nyumba choice (R8) only shows
//! during the move. So a [`MoveList`] carries each move's result: search and self-play never
//! replay a move.
//!
//! Playing out is cheap: rings are packed `u128`s ([`super::ring`]), so a lap of any length
//! is one addition and the counting tests of R6..R9 are a few bit operations; the safari twin
//! of a namua capture goes on from where its stop move ends instead of replaying it.
//! `tests/rules_reference.rs` checks all of it against the plain seed-by-seed version.

use std::mem::MaybeUninit;

use super::position::{facing, Position, NYUMBA};
use super::ring::{self, Ring};
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

impl LegalMove {
    /// The mover's seed margin ([`Position::seed_margin`]) once this move is over, `before`
    /// being the position it was played from. Seeds change sides only by capture (R1, R5), so
    /// this is the margin before plus twice the seeds captured; it is defined for a move that
    /// wins in the middle of a capture too (R5), whose unsown captured seeds are the winner's.
    pub fn margin_after(&self, before: &Position) -> i32 {
        before.seed_margin(before.to_move()) + 2 * self.captured as i32
    }
}

/// The most legal moves a position can have: 16 start holes x 2 directions in the mtaji
/// stage (R6); a namua position has at most 24 (captures: 4 kimbi x 1 + 4 x 2 kichwa
/// choices, each with a safari twin, R5, R7, R8) or 16 (takasa).
pub const MAX_MOVES: usize = 32;

/// The legal moves of a position, at most one per action index.
///
/// Its slots are left uninitialised until a move is pushed: filling 32 placeholders on every
/// generation cost as much as playing the moves out.
#[derive(Clone, Copy)]
pub struct MoveList {
    len: usize,
    moves: [MaybeUninit<LegalMove>; MAX_MOVES],
}

impl Default for MoveList {
    fn default() -> MoveList {
        MoveList::new()
    }
}

impl MoveList {
    /// An empty list (see [`Position::legal_moves_into`]).
    #[inline]
    pub fn new() -> MoveList {
        MoveList {
            len: 0,
            moves: [MaybeUninit::uninit(); MAX_MOVES],
        }
    }
    /// Adds a move; panics (never overflows) if a position had more than `MAX_MOVES`.
    #[inline]
    fn push(&mut self, lm: LegalMove) {
        self.moves[self.len].write(lm);
        self.len += 1;
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    #[inline]
    pub fn as_slice(&self) -> &[LegalMove] {
        // SAFETY: `push` is the only writer; it initialises slot `len` before counting it, so
        // the first `len <= MAX_MOVES` slots hold `LegalMove`s (a `Copy` type: no drops).
        unsafe { std::slice::from_raw_parts(self.moves.as_ptr().cast::<LegalMove>(), self.len) }
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

impl std::fmt::Debug for MoveList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
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
    #[inline]
    pub fn legal_moves(&self) -> MoveList {
        let mut list = MoveList::new();
        self.legal_moves_into(&mut list);
        list
    }

    /// [`Position::legal_moves`] into an existing list (its old moves are dropped): hot loops
    /// such as random playouts reuse one list instead of copying a returned one (1.5 kB).
    #[inline(never)]
    pub fn legal_moves_into(&self, list: &mut MoveList) {
        list.len = 0;
        let gen = Gen::new(self);
        if self.hand[gen.me] > 0 {
            gen.namua_moves(list);
        } else {
            gen.mtaji_moves(list);
        }
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

/// How a played-out move ended.
enum Played {
    /// The move ended; the board as it stands.
    Ended(Sim),
    /// A capture emptied the opponent's front row (R5).
    Won(Sim),
    /// R11: sowed `INFINITE_MOVE_SEEDS` without ending.
    Infinite,
    /// A namua capture reached the nyumba choice (R8) at `Sim::pos`: the stop move ends
    /// here, the safari move goes on from here.
    Choice(Sim),
}

/// A move in progress, from the mover's side: the rings, and where the next lap starts.
#[derive(Clone, Copy)]
struct Sim {
    mine: Ring,
    theirs: Ring,
    nyumba: [bool; 2],
    sown: u32,
    captured: u32,
    /// The hole the next lap starts after (the hole just lifted, or the one before a kichwa).
    pos: usize,
    dir: Dir,
    /// No capture has happened yet in this move (the namua kichwa choice, R5).
    first_capture: bool,
}

/// A finished move is finite only when it ended within the R11 limit.
#[inline]
fn finish(s: Sim) -> Played {
    if s.sown > INFINITE_MOVE_SEEDS {
        Played::Infinite
    } else {
        Played::Ended(s)
    }
}

/// What stays fixed while the candidate moves of one position are played out.
struct Gen<'a> {
    pos: &'a Position,
    me: usize,
    op: usize,
    mine: Ring,
    theirs: Ring,
    /// Bit `h` set for the takasia'd hole (R9): no start there, and laps stop there.
    takasia: u16,
}

impl<'a> Gen<'a> {
    #[inline]
    fn new(pos: &'a Position) -> Gen<'a> {
        let me = pos.to_move.index();
        Gen {
            pos,
            me,
            op: 1 - me,
            mine: ring::load(&pos.holes[me]),
            theirs: ring::load(&pos.holes[1 - me]),
            takasia: pos.takasia.map_or(0, |t| 1 << t),
        }
    }

    #[inline(always)]
    fn namua_moves(&self, list: &mut MoveList) {
        // R7 capture: a hand seed into an occupied front hole facing an occupied one.
        let captures = capture_holes(self.mine, self.theirs) & !self.takasia;
        if captures != 0 {
            for h in bits(captures) {
                // R5: kimbi captures enter at their own kichwa; holes 3..6 let the player choose.
                if h >= 2 {
                    if h < 6 {
                        self.push_namua_capture(list, h, Dir::Clockwise);
                    }
                    self.push_namua_capture(list, h, Dir::Anticlockwise);
                } else {
                    self.push_namua_capture(list, h, Dir::Clockwise);
                }
            }
            return;
        }

        // R7 takasa.
        let front = ring::occupied(self.mine) & 0xff;
        let occupied = front.count_ones();
        let nyumba_big = self.pos.nyumba[self.me] && ring::at(self.mine, NYUMBA) >= 6;
        if nyumba_big && occupied == 1 {
            // Only the owned nyumba is occupied: it is taxed (2 seeds lifted, still owned).
            for dir in [Dir::Clockwise, Dir::Anticlockwise] {
                let mut s = self.sim(ring::added(self.mine, NYUMBA, 1), NYUMBA, dir);
                s.mine -= 2 << (8 * NYUMBA);
                let played = self.run::<false, true>(s, 2, dir);
                self.push(
                    list,
                    Move {
                        hole: ring(NYUMBA),
                        dir,
                        safari: false,
                    },
                    MoveKind::NamuaTax,
                    played,
                );
            }
            return;
        }
        let pairs = ring::at_least(self.mine, 2) & 0xff;
        let need_two = !self.pos.nyumba[self.me] && pairs != 0;
        let mut starts = if need_two { pairs } else { front } & !self.takasia;
        if nyumba_big {
            starts &= !(1 << NYUMBA);
        }
        for h in bits(starts) {
            for dir in [Dir::Clockwise, Dir::Anticlockwise] {
                if occupied == 1 && toward_back(h, dir) {
                    continue; // lone kichwa (R6, R7)
                }
                let mine = ring::added(self.mine, h, 1);
                let mut s = self.sim(ring::cleared(mine, h), h, dir);
                if h == NYUMBA {
                    s.nyumba[self.me] = false;
                }
                let played = self.run::<false, true>(s, ring::at(mine, h) as u32, dir);
                self.push(
                    list,
                    Move {
                        hole: ring(h),
                        dir,
                        safari: false,
                    },
                    MoveKind::NamuaTakasa,
                    played,
                );
            }
        }
    }

    /// A namua capture into `h` entering at the kichwa of `dir`, and its safari twin when
    /// the nyumba choice arises (R8, R12): the twin goes on from where the stop move ends.
    fn push_namua_capture(&self, list: &mut MoveList, h: usize, dir: Dir) {
        let mv = Move {
            hole: ring(h),
            dir,
            safari: false,
        };
        let kind = MoveKind::NamuaCapture;
        let mut s = self.sim(ring::added(self.mine, h, 1), h, dir);
        s.sown = 1;
        let played = match self.capture::<true>(&mut s, dir) {
            Some(seeds) => self.run::<true, true>(s, seeds, dir),
            None => Played::Won(s),
        };
        let Played::Choice(mut s) = played else {
            return self.push(list, mv, kind, played);
        };
        self.push(list, mv, kind, finish(s));
        // Safari: ownership is lost, lift the nyumba and sow on (R8).
        s.nyumba[self.me] = false;
        let safari = if s.sown >= INFINITE_MOVE_SEEDS {
            Played::Infinite
        } else {
            let seeds = ring::at(s.mine, s.pos) as u32;
            s.mine = ring::cleared(s.mine, s.pos);
            self.run::<true, true>(s, seeds, dir)
        };
        self.push(list, Move { safari: true, ..mv }, kind, safari);
    }

    #[inline(always)]
    fn mtaji_moves(&self, list: &mut MoveList) {
        // R6 capturing moves: first lap from 2..15 seeds ends in an occupied own front hole
        // facing an occupied opponent hole.
        let targets = capture_holes(self.mine, self.theirs);
        let starts = first_lap_starts(self.mine) & !self.takasia;
        let mut any_capture = false;
        if targets != 0 {
            for h in bits(starts) {
                let c = ring::at(self.mine, h) as usize;
                for (dir, end) in [(Dir::Clockwise, h + c), (Dir::Anticlockwise, h + 16 - c)] {
                    if targets >> (end & 15) & 1 != 0 {
                        any_capture = true;
                        self.push_mtaji::<true>(list, h, dir);
                    }
                }
            }
        }
        if any_capture {
            return;
        }

        // R6 takasa: from the front row if any front hole holds 2+, else from the back row.
        let pairs = ring::at_least(self.mine, 2);
        let row = if pairs & 0xff != 0 { 0x00ff } else { 0xff00 };
        let lone = (ring::occupied(self.mine) & 0xff).count_ones() == 1;
        for h in bits(pairs & row & !self.takasia) {
            for dir in [Dir::Clockwise, Dir::Anticlockwise] {
                if lone && toward_back(h, dir) {
                    continue; // lone kichwa (R6)
                }
                self.push_mtaji::<false>(list, h, dir);
            }
        }
    }

    #[inline]
    fn push_mtaji<const CAPTURE: bool>(&self, list: &mut MoveList, h: usize, dir: Dir) {
        let mut s = self.sim(ring::cleared(self.mine, h), h, dir);
        if h == NYUMBA {
            s.nyumba[self.me] = false; // emptied by its owner (R8)
        }
        let played = self.run::<CAPTURE, false>(s, ring::at(self.mine, h) as u32, dir);
        let kind = if CAPTURE {
            MoveKind::MtajiCapture
        } else {
            MoveKind::MtajiTakasa
        };
        self.push(
            list,
            Move {
                hole: ring(h),
                dir,
                safari: false,
            },
            kind,
            played,
        );
    }

    /// A move about to start after hole `pos` with the mover's ring `mine`.
    #[inline]
    fn sim(&self, mine: Ring, pos: usize, dir: Dir) -> Sim {
        Sim {
            mine,
            theirs: self.theirs,
            nyumba: self.pos.nyumba,
            sown: 0,
            captured: 0,
            pos,
            dir,
            first_capture: true,
        }
    }

    /// Adds a played-out move unless it is infinite (R11).
    #[inline]
    fn push(&self, list: &mut MoveList, mv: Move, kind: MoveKind, played: Played) {
        let (after, s) = match played {
            Played::Infinite => return,
            Played::Won(s) => (
                After::Won(Outcome {
                    winner: self.pos.to_move,
                    reason: WinReason::FrontEmpty,
                }),
                s,
            ),
            Played::Ended(s) => (After::Position(self.successor(&s, kind)), s),
            Played::Choice(_) => unreachable!("only namua captures stop for the nyumba choice"),
        };
        list.push(LegalMove {
            mv,
            kind,
            after,
            captured: s.captured.min(u8::MAX as u32) as u8,
            sown: s.sown.min(u16::MAX as u32) as u16,
        });
    }

    /// The position after a finished move: opponent to move, takasia per R9.
    #[inline]
    fn successor(&self, s: &Sim, kind: MoveKind) -> Position {
        let mut holes = [[0; 16]; 2];
        holes[self.me] = ring::store(s.mine);
        holes[self.op] = ring::store(s.theirs);
        let mut hand = self.pos.hand;
        hand[self.me] -= kind.is_namua() as u8;
        let mut takasia = None;
        if kind == MoveKind::MtajiTakasa && self.pos.variant == Variant::Kiswahili {
            takasia = takasia_for(s.mine, s.theirs, hand[self.op] > 0, s.nyumba[self.op]);
        }
        Position {
            variant: self.pos.variant,
            to_move: self.pos.to_move.opponent(),
            holes,
            hand,
            nyumba: s.nyumba,
            takasia,
        }
    }

    /// Plays a move out from `s`, sowing `seeds` first (R3, R5, R8, R9, R11).
    /// `CAPTURING`: the move started with a capture (R4); `NAMUA`: it used a hand seed.
    #[inline]
    fn run<const CAPTURING: bool, const NAMUA: bool>(
        &self,
        mut s: Sim,
        mut seeds: u32,
        chosen: Dir,
    ) -> Played {
        loop {
            let (mine, last) = ring::sow(s.mine, s.pos, seeds, s.dir);
            s.mine = mine;
            s.pos = last;
            s.sown += seeds;
            let c = ring::at(mine, last);
            if c == 1 {
                // The last seed fell into an empty hole: the move ends (R3).
                return finish(s);
            }
            if CAPTURING && last < 8 && ring::at(s.theirs, facing(last)) > 0 {
                if s.sown >= INFINITE_MOVE_SEEDS {
                    return Played::Infinite;
                }
                match self.capture::<NAMUA>(&mut s, chosen) {
                    Some(n) => seeds = n,
                    None => return Played::Won(s),
                }
                continue;
            }
            if NAMUA && last == NYUMBA && s.nyumba[self.me] && c >= 6 {
                if !CAPTURING {
                    return finish(s); // nyumba stop in a takasa (R8)
                }
                return Played::Choice(s);
            } else if self.takasia >> last & 1 != 0 {
                return finish(s); // takasia stop (R9)
            }
            if s.sown >= INFINITE_MOVE_SEEDS {
                return Played::Infinite;
            }
            // Relay: lift the hole and sow on in the same direction (R3).
            seeds = c as u32;
            s.mine = ring::cleared(mine, last);
            if last == NYUMBA {
                s.nyumba[self.me] = false;
            }
        }
    }

    /// Captures the opponent's hole facing `s.pos` (R5) and moves `s.pos` before the kichwa
    /// the captured seeds enter. Returns the seeds to sow, or `None` when the capture
    /// emptied the opponent's front row.
    #[inline]
    fn capture<const NAMUA: bool>(&self, s: &mut Sim, chosen: Dir) -> Option<u32> {
        let pos = s.pos;
        let target = facing(pos);
        let n = ring::at(s.theirs, target);
        s.theirs = ring::cleared(s.theirs, target);
        s.captured += n as u32;
        if target == NYUMBA {
            s.nyumba[self.op] = false; // emptied by capture (R8)
        }
        if !NAMUA {
            s.nyumba = [false, false]; // first capture of the mtaji stage (R8)
        }
        if s.theirs as u64 == 0 {
            return None; // the front row is the low 8 bytes
        }
        s.dir = match pos {
            0 | 1 => Dir::Clockwise,
            6 | 7 => Dir::Anticlockwise,
            _ if NAMUA && s.first_capture => chosen,
            _ => s.dir,
        };
        s.first_capture = false;
        s.pos = kichwa_entry(s.dir);
        Some(n as u32)
    }
}

/// The set bits of a mask, lowest first.
#[inline]
fn bits(mut mask: u16) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let i = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            i
        })
    })
}

/// The hole "before" the kichwa where captured seeds enter, so that sowing starts in it (R5).
#[inline]
fn kichwa_entry(dir: Dir) -> usize {
    match dir {
        Dir::Clockwise => 15,    // next is ring 0, the left kichwa
        Dir::Anticlockwise => 8, // next is ring 7, the right kichwa
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

/// Front holes (bit = ring index) that are occupied and face an occupied opponent hole: where
/// a lap (or a namua hand seed, R7) captures.
#[inline]
fn capture_holes(mine: Ring, theirs: Ring) -> u16 {
    // Facing front holes are r and 7 - r: reversing the opponent's 8 front bits lines them up.
    (ring::occupied(mine) & (ring::occupied(theirs) as u8).reverse_bits() as u16) & 0xff
}

/// Holes that may start a capturing mtaji move: 2 to 15 seeds (R6).
#[inline]
fn first_lap_starts(mine: Ring) -> u16 {
    ring::at_least(mine, 2) & !ring::at_least(mine, 16)
}

/// R6 first-lap test for every start at once: the front holes (bit = ring index) where some
/// first lap of `mine` ends and captures.
#[inline]
fn first_lap_ends(mine: Ring, theirs: Ring) -> u16 {
    let targets = capture_holes(mine, theirs);
    if targets == 0 {
        return 0;
    }
    let mut ends = 0u32;
    for h in bits(first_lap_starts(mine)) {
        let c = ring::at(mine, h) as usize;
        ends |= 1 << ((h + c) & 15) | 1 << ((h + 16 - c) & 15);
    }
    targets & ends as u16
}

/// R9: the takasia'd hole for the opponent, just after the mover's mtaji takasa left the
/// mover's ring `mine` and the opponent's ring `theirs`.
fn takasia_for(mine: Ring, theirs: Ring, opp_in_namua: bool, opp_nyumba: bool) -> Option<u8> {
    // The opponent must have no capturing move.
    let opp_captures = if opp_in_namua {
        capture_holes(theirs, mine) != 0
    } else {
        first_lap_ends(theirs, mine) != 0
    };
    if opp_captures {
        return None;
    }
    // Exactly one target hole: the opponent hole facing the one front hole first laps reach.
    let ends = first_lap_ends(mine, theirs);
    if ends.count_ones() != 1 {
        return None;
    }
    let t = facing(ends.trailing_zeros() as usize);
    let front = ring::occupied(theirs) & 0xff;
    let big = ring::at_least(theirs, 2) & 0xff;
    let seeds = ring::at(theirs, t);
    let excluded = (t == NYUMBA && opp_nyumba)
        || seeds == 1
        || front.count_ones() == 1
        || (big.count_ones() == 1 && seeds >= 2);
    (!excluded).then_some(t as u8)
}
