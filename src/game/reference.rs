//! The plain reference move generator (R3..R11): one seed at a time, every candidate replayed
//! from its start, the R11 limit as the only infinity test.
//!
//! [`super::movegen`] sows whole laps arithmetically, forks the R8 safari twin off the stop
//! move and prunes R11 cycles early; this is the straightforward version it was optimised
//! from, written against the public API of [`Position`] only. It is slow and kept for two
//! jobs: `tests/rules_reference.rs` checks that both generators give identical move lists,
//! and `bao solve --check` replays proofs with it, so that a proof of the solver (which runs
//! on the fast core) is checked by code that shares none of the fast core's move logic.
//! The reference itself was checked against the conformance vectors before the fast
//! version replaced it.

use super::{
    facing, After, Dir, Hole, LegalMove, Move, MoveKind, Outcome, Position, Side, Variant,
    WinReason, NYUMBA,
};

/// R11: a move that has sown this many seeds without ending is infinite.
const LIMIT: u32 = 10_000;

/// How often the reference met an infinite move (R11) and a lap of 16 or more seeds (R3), so
/// that a test can show it exercised both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub infinite_moves: u64,
    pub big_laps: u64,
}

/// A position as plain arrays (the byte layout of [`Position::to_bytes`]): side 0 is South,
/// holes are ring indices (front 0..8, back 8..16), `takasia` a ring index of the side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Board {
    pub variant: Variant,
    pub to_move: usize,
    pub holes: [[u8; 16]; 2],
    pub hand: [u8; 2],
    pub nyumba: [bool; 2],
    pub takasia: Option<u8>,
}

impl Board {
    /// The board of a position.
    pub fn of(p: &Position) -> Board {
        let ring = |s: Side| *p.ring(s);
        Board {
            variant: p.variant(),
            to_move: p.to_move().index(),
            holes: [ring(Side::South), ring(Side::North)],
            hand: [p.hand(Side::South), p.hand(Side::North)],
            nyumba: [p.nyumba_owned(Side::South), p.nyumba_owned(Side::North)],
            takasia: p.takasia().map(|h| h.ring() as u8),
        }
    }
    /// The position this board stands for; `None` when it breaks R13.
    pub fn position(&self) -> Option<Position> {
        Position::from_parts(
            self.variant,
            self.side(),
            self.holes,
            self.hand,
            self.nyumba,
            self.takasia,
        )
    }
    fn side(&self) -> Side {
        if self.to_move == 0 {
            Side::South
        } else {
            Side::North
        }
    }
}

#[derive(Clone, Copy)]
enum Start {
    Mtaji { capture: bool },
    NamuaCapture,
    NamuaTakasa { tax: bool },
}

#[derive(Clone, Copy)]
struct Sim {
    holes: [[u8; 16]; 2],
    hand: [u8; 2],
    nyumba: [bool; 2],
    sown: u32,
    captured: u32,
    choice_arose: bool,
}

enum Played {
    Ended(Sim),
    Won(Sim),
    Infinite,
}

fn step(pos: usize, dir: Dir) -> usize {
    match dir {
        Dir::Clockwise => (pos + 1) & 15,
        Dir::Anticlockwise => (pos + 15) & 15,
    }
}

fn hole(h: usize) -> Hole {
    Hole::from_ring(h).expect("ring indices run 0..16")
}

fn toward_back(h: usize, dir: Dir) -> bool {
    matches!((h, dir), (0, Dir::Anticlockwise) | (7, Dir::Clockwise))
}

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

fn kichwa_entry(dir: Dir) -> usize {
    match dir {
        Dir::Clockwise => 15,
        Dir::Anticlockwise => 8,
    }
}

fn finish(s: Sim) -> Played {
    if s.sown > LIMIT {
        Played::Infinite
    } else {
        Played::Ended(s)
    }
}

const DIRS: [Dir; 2] = [Dir::Clockwise, Dir::Anticlockwise];

impl Board {
    /// Every legal move of the side to move with its result, in the fast core's order
    /// (R4, R6, R7, R11): no move means the side to move has lost (R10).
    pub fn legal_moves(&self) -> Vec<LegalMove> {
        self.legal_moves_tallied(&mut Tally::default())
    }

    /// [`Board::legal_moves`], counting infinite moves and big laps met on the way.
    pub fn legal_moves_tallied(&self, tally: &mut Tally) -> Vec<LegalMove> {
        let mut list = Vec::new();
        if self.hand[self.to_move] > 0 {
            self.namua_moves(&mut list, tally);
        } else {
            self.mtaji_moves(&mut list, tally);
        }
        list
    }

    fn blocked(&self, h: usize) -> bool {
        self.takasia == Some(h as u8)
    }

    fn namua_moves(&self, list: &mut Vec<LegalMove>, tally: &mut Tally) {
        let me = self.to_move;
        let mine = &self.holes[me];
        let theirs = &self.holes[1 - me];
        let mut any_capture = false;
        for h in 0..8 {
            if mine[h] == 0 || theirs[facing(h)] == 0 || self.blocked(h) {
                continue;
            }
            any_capture = true;
            let dirs: &[Dir] = match h {
                0 | 1 => &[Dir::Clockwise],
                6 | 7 => &[Dir::Anticlockwise],
                _ => &DIRS,
            };
            for &dir in dirs {
                let mv = Move {
                    hole: hole(h),
                    dir,
                    safari: false,
                };
                if self.push(list, tally, mv, Start::NamuaCapture, MoveKind::NamuaCapture) {
                    self.push(
                        list,
                        tally,
                        Move { safari: true, ..mv },
                        Start::NamuaCapture,
                        MoveKind::NamuaCapture,
                    );
                }
            }
        }
        if any_capture {
            return;
        }
        let occupied = (0..8).filter(|&h| mine[h] > 0).count();
        let nyumba_big = self.nyumba[me] && mine[NYUMBA] >= 6;
        if nyumba_big && occupied == 1 {
            for dir in DIRS {
                let mv = Move {
                    hole: hole(NYUMBA),
                    dir,
                    safari: false,
                };
                self.push(
                    list,
                    tally,
                    mv,
                    Start::NamuaTakasa { tax: true },
                    MoveKind::NamuaTax,
                );
            }
            return;
        }
        let need_two = !self.nyumba[me] && (0..8).any(|h| mine[h] >= 2);
        for (h, &c) in mine.iter().enumerate().take(8) {
            if c == 0 || (need_two && c < 2) || (nyumba_big && h == NYUMBA) || self.blocked(h) {
                continue;
            }
            for dir in DIRS {
                if occupied == 1 && toward_back(h, dir) {
                    continue;
                }
                let mv = Move {
                    hole: hole(h),
                    dir,
                    safari: false,
                };
                self.push(
                    list,
                    tally,
                    mv,
                    Start::NamuaTakasa { tax: false },
                    MoveKind::NamuaTakasa,
                );
            }
        }
    }

    fn mtaji_moves(&self, list: &mut Vec<LegalMove>, tally: &mut Tally) {
        let me = self.to_move;
        let mine = &self.holes[me];
        let theirs = &self.holes[1 - me];
        let mut any_capture = false;
        for h in 0..16 {
            if self.blocked(h) {
                continue;
            }
            for dir in DIRS {
                if first_lap_captures(mine, theirs, h, dir).is_some() {
                    any_capture = true;
                    let mv = Move {
                        hole: hole(h),
                        dir,
                        safari: false,
                    };
                    self.push(
                        list,
                        tally,
                        mv,
                        Start::Mtaji { capture: true },
                        MoveKind::MtajiCapture,
                    );
                }
            }
        }
        if any_capture {
            return;
        }
        let rows = if (0..8).any(|h| mine[h] >= 2) {
            0..8
        } else {
            8..16
        };
        let occupied = (0..8).filter(|&h| mine[h] > 0).count();
        for h in rows {
            if mine[h] < 2 || self.blocked(h) {
                continue;
            }
            for dir in DIRS {
                if occupied == 1 && h < 8 && toward_back(h, dir) {
                    continue;
                }
                let mv = Move {
                    hole: hole(h),
                    dir,
                    safari: false,
                };
                self.push(
                    list,
                    tally,
                    mv,
                    Start::Mtaji { capture: false },
                    MoveKind::MtajiTakasa,
                );
            }
        }
    }

    fn push(
        &self,
        list: &mut Vec<LegalMove>,
        tally: &mut Tally,
        mv: Move,
        start: Start,
        kind: MoveKind,
    ) -> bool {
        let (played, choice_arose) = self.play_out(mv, start, tally);
        let (after, sim) = match played {
            Played::Infinite => {
                tally.infinite_moves += 1;
                return choice_arose;
            }
            Played::Won(sim) => (
                After::Won(Outcome {
                    winner: self.side(),
                    reason: WinReason::FrontEmpty,
                }),
                sim,
            ),
            Played::Ended(sim) => (After::Position(self.successor(&sim, kind)), sim),
        };
        list.push(LegalMove {
            mv,
            kind,
            after,
            captured: sim.captured.min(255) as u8,
            sown: sim.sown.min(u16::MAX as u32) as u16,
        });
        choice_arose
    }

    fn successor(&self, sim: &Sim, kind: MoveKind) -> Position {
        let mut next = Board {
            variant: self.variant,
            to_move: 1 - self.to_move,
            holes: sim.holes,
            hand: sim.hand,
            nyumba: sim.nyumba,
            takasia: None,
        };
        if kind == MoveKind::MtajiTakasa && self.variant == Variant::Kiswahili {
            next.takasia = takasia_for(&next);
        }
        // Sowing keeps 64 seeds and clears an emptied nyumba, so a successor meets R13.
        next.position()
            .expect("a successor of an R13 position meets R13")
    }

    fn play_out(&self, mv: Move, start: Start, tally: &mut Tally) -> (Played, bool) {
        let me = self.to_move;
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
        let mut seeds: u32;
        let mut first_capture = true;
        match start {
            Start::Mtaji { .. } => {
                seeds = s.holes[me][pos] as u32;
                s.holes[me][pos] = 0;
                if pos == NYUMBA {
                    s.nyumba[me] = false;
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
                match self.capture(&mut s, pos, &mut dir, namua, &mut first_capture, mv.dir) {
                    Some(n) => seeds = n,
                    None => return (Played::Won(s), false),
                }
                pos = kichwa_entry(dir);
            }
        }
        loop {
            if seeds >= 16 {
                tally.big_laps += 1;
            }
            for _ in 0..seeds {
                pos = step(pos, dir);
                s.holes[me][pos] += 1;
            }
            s.sown += seeds;
            let c = s.holes[me][pos];
            if c == 1 {
                return (finish(s), s.choice_arose);
            }
            if capturing && pos < 8 && s.holes[op][facing(pos)] > 0 {
                if s.sown >= LIMIT {
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
                    return (finish(s), false);
                }
                s.choice_arose = true;
                if !mv.safari {
                    return (finish(s), true);
                }
                s.nyumba[me] = false;
            } else if self.takasia == Some(pos as u8) {
                return (finish(s), s.choice_arose);
            }
            if s.sown >= LIMIT {
                return (Played::Infinite, s.choice_arose);
            }
            seeds = c as u32;
            s.holes[me][pos] = 0;
            if pos == NYUMBA {
                s.nyumba[me] = false;
            }
        }
    }

    fn capture(
        &self,
        s: &mut Sim,
        pos: usize,
        dir: &mut Dir,
        namua: bool,
        first: &mut bool,
        chosen: Dir,
    ) -> Option<u32> {
        let op = 1 - self.to_move;
        let target = facing(pos);
        let n = s.holes[op][target];
        s.holes[op][target] = 0;
        s.captured += n as u32;
        if target == NYUMBA {
            s.nyumba[op] = false;
        }
        if !namua {
            s.nyumba = [false, false];
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

fn takasia_for(next: &Board) -> Option<u8> {
    let opp = next.to_move;
    let p = 1 - opp;
    let (mine, theirs) = (&next.holes[p], &next.holes[opp]);
    let opp_captures = if next.hand[opp] > 0 {
        (0..8).any(|h| theirs[h] > 0 && mine[facing(h)] > 0)
    } else {
        (0..16).any(|h| {
            DIRS.into_iter()
                .any(|d| first_lap_captures(theirs, mine, h, d).is_some())
        })
    };
    if opp_captures {
        return None;
    }
    let mut target = None;
    for h in 0..16 {
        for d in DIRS {
            if let Some(t) = first_lap_captures(mine, theirs, h, d) {
                match target {
                    None => target = Some(t),
                    Some(x) if x == t => {}
                    Some(_) => return None,
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
