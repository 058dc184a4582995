//! The fast move generator against a plain reference (R3..R11).
//!
//! `src/game/movegen.rs` sows whole laps arithmetically, forks the R8 safari twin off the
//! stop move and prunes R11 cycles early. This file keeps the straightforward version it was
//! optimised from — one seed at a time, every candidate replayed from its start, the R11 limit
//! as the only infinity test — written against the public API only, and checks that both give
//! identical move lists (moves, kinds, successors or wins, captured and sown counts) on every
//! position of many random games and on random positions far from play (big holes, laps of 16
//! and more, long and never-ending moves). The reference itself was checked against the
//! conformance vectors (`tests/rules_vectors.rs`) before the fast version replaced it.

use bao::game::{
    After, Dir, Hole, Move, MoveKind, Outcome, Position, Side, Variant, WinReason, PACKED_LEN,
};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

const NYUMBA: usize = 4;

/// How often the reference met an infinite move (R11) and a lap of 16 or more seeds (R3), so
/// that the tests can show they exercised both.
static INFINITE: AtomicUsize = AtomicUsize::new(0);
static BIG_LAPS: AtomicUsize = AtomicUsize::new(0);
const LIMIT: u32 = 10_000;

fn facing(r: usize) -> usize {
    7 - r
}

/// A position as plain arrays (the byte layout of `Position::to_bytes`).
#[derive(Clone, Copy)]
struct Ref {
    variant: Variant,
    to_move: usize,
    holes: [[u8; 16]; 2],
    hand: [u8; 2],
    nyumba: [bool; 2],
    takasia: Option<u8>,
}

impl Ref {
    fn of(p: &Position) -> Ref {
        let ring = |s: Side| *p.ring(s);
        Ref {
            variant: p.variant(),
            to_move: p.to_move().index(),
            holes: [ring(Side::South), ring(Side::North)],
            hand: [p.hand(Side::South), p.hand(Side::North)],
            nyumba: [p.nyumba_owned(Side::South), p.nyumba_owned(Side::North)],
            takasia: p.takasia().map(|h| h.ring() as u8),
        }
    }
    fn position(&self) -> Position {
        let mut b = [0u8; PACKED_LEN];
        b[..16].copy_from_slice(&self.holes[0]);
        b[16..32].copy_from_slice(&self.holes[1]);
        b[32] = self.hand[0];
        b[33] = self.hand[1];
        b[34] = self.nyumba[0] as u8 | (self.nyumba[1] as u8) << 1;
        b[35] = self.takasia.unwrap_or(255);
        b[36] = self.to_move as u8;
        b[37] = (self.variant == Variant::Kujifunza) as u8;
        Position::from_bytes(&b).expect("reference position")
    }
    fn side(&self) -> Side {
        if self.to_move == 0 {
            Side::South
        } else {
            Side::North
        }
    }
}

/// One legal move as the reference sees it.
#[derive(Debug, PartialEq)]
struct RefMove {
    mv: Move,
    kind: MoveKind,
    after: After,
    captured: u8,
    sown: u16,
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
    Hole::from_ring(h).unwrap()
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

impl Ref {
    fn legal_moves(&self) -> Vec<RefMove> {
        let mut list = Vec::new();
        if self.hand[self.to_move] > 0 {
            self.namua_moves(&mut list);
        } else {
            self.mtaji_moves(&mut list);
        }
        list
    }

    fn blocked(&self, h: usize) -> bool {
        self.takasia == Some(h as u8)
    }

    fn namua_moves(&self, list: &mut Vec<RefMove>) {
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
                if self.push(list, mv, Start::NamuaCapture, MoveKind::NamuaCapture) {
                    self.push(
                        list,
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
                    mv,
                    Start::NamuaTakasa { tax: false },
                    MoveKind::NamuaTakasa,
                );
            }
        }
    }

    fn mtaji_moves(&self, list: &mut Vec<RefMove>) {
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
                    mv,
                    Start::Mtaji { capture: false },
                    MoveKind::MtajiTakasa,
                );
            }
        }
    }

    fn push(&self, list: &mut Vec<RefMove>, mv: Move, start: Start, kind: MoveKind) -> bool {
        let (played, choice_arose) = self.play_out(mv, start);
        let (after, sim) = match played {
            Played::Infinite => {
                INFINITE.fetch_add(1, Relaxed);
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
        list.push(RefMove {
            mv,
            kind,
            after,
            captured: sim.captured.min(255) as u8,
            sown: sim.sown.min(u16::MAX as u32) as u16,
        });
        choice_arose
    }

    fn successor(&self, sim: &Sim, kind: MoveKind) -> Position {
        let mut next = Ref {
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
        next.position()
    }

    fn play_out(&self, mv: Move, start: Start) -> (Played, bool) {
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
                BIG_LAPS.fetch_add(1, Relaxed);
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

fn takasia_for(next: &Ref) -> Option<u8> {
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

/// Compares the engine with the reference on one position; returns the engine's moves.
fn check(p: &Position) -> Vec<After> {
    let fast = p.legal_moves();
    let slow = Ref::of(p).legal_moves();
    let fast_moves: Vec<RefMove> = fast
        .iter()
        .map(|lm| RefMove {
            mv: lm.mv,
            kind: lm.kind,
            after: lm.after,
            captured: lm.captured,
            sown: lm.sown,
        })
        .collect();
    assert_eq!(fast_moves, slow, "position {}", p.to_json());
    fast.iter().map(|lm| lm.after).collect()
}

#[test]
fn fast_moves_equal_reference_in_random_games() {
    let mut rng = SmallRng::seed_from_u64(2024);
    for variant in Variant::ALL {
        let mut positions = 0;
        for _ in 0..500 {
            let mut p = Position::start(variant);
            for _ in 0..400 {
                positions += 1;
                let afters = check(&p);
                if afters.is_empty() {
                    break;
                }
                match afters[rng.random_range(0..afters.len())] {
                    After::Position(q) => p = q,
                    After::Won(_) => break,
                }
            }
        }
        assert!(positions > 10_000, "{variant}: {positions}");
    }
}

/// A random position far from normal play: 64 seeds thrown into few holes (so laps of 16
/// and more, long relays and never-ending moves are common), random hands, nyumba flags
/// and takasia.
fn random_position(rng: &mut SmallRng) -> Position {
    let variant = if rng.random_bool(0.5) {
        Variant::Kiswahili
    } else {
        Variant::Kujifunza
    };
    let mut r = Ref {
        variant,
        to_move: rng.random_range(0..2),
        holes: [[0; 16]; 2],
        hand: [0; 2],
        nyumba: [false; 2],
        takasia: None,
    };
    let mut left = 64u32;
    if variant == Variant::Kiswahili {
        for s in 0..2 {
            if rng.random_bool(0.4) {
                r.hand[s] = rng.random_range(1..12);
                left -= r.hand[s] as u32;
            }
            r.nyumba[s] = rng.random_bool(0.5);
        }
    }
    // Few heavy holes, seeds spread over the board, or most of them spread over the mover's
    // ring (long relays, where never-ending moves live).
    let me = r.to_move;
    match rng.random_range(0..4) {
        0 => {
            let spots = rng.random_range(2..8);
            while left > 0 {
                let k = (rng.random_range(0..spots) * 32 / spots + rng.random_range(0..2)) % 32;
                let n = rng.random_range(1..=left.min(20));
                r.holes[k / 16][k % 16] += n as u8;
                left -= n;
            }
        }
        1 => {
            for _ in 0..left {
                r.holes[rng.random_range(0..2)][rng.random_range(0..16)] += 1;
            }
        }
        2 => {
            // R11's known never-ending position with a few seeds moved: infinite moves abound.
            r = Ref::of(&known_never_ending());
            for _ in 0..rng.random_range(0..4) {
                let (from, to) = (rng.random_range(0..16), rng.random_range(0..16));
                if r.holes[0][from] > 0 {
                    r.holes[0][from] -= 1;
                    r.holes[0][to] += 1;
                }
            }
        }
        _ => {
            for _ in 0..left {
                if rng.random_bool(0.9) {
                    r.holes[me][rng.random_range(0..16)] += 1;
                } else {
                    r.holes[1 - me][rng.random_range(0..16)] += 1;
                }
            }
        }
    }
    if variant == Variant::Kiswahili && r.hand[r.to_move] == 0 && rng.random_bool(0.3) {
        r.takasia = Some(rng.random_range(0..8));
    }
    r.position()
}

#[test]
fn fast_moves_equal_reference_on_random_positions() {
    let mut rng = SmallRng::seed_from_u64(99);
    let (mut moves, mut empty) = (0, 0);
    for _ in 0..40_000 {
        let p = random_position(&mut rng);
        let n = check(&p).len();
        moves += n;
        empty += (n == 0) as usize;
    }
    assert!(
        moves > 100_000 && empty > 100,
        "{moves} moves, {empty} positions without"
    );
    // Counted over every test of this file; this one alone meets hundreds of each.
    let (infinite, big) = (INFINITE.load(Relaxed), BIG_LAPS.load(Relaxed));
    assert!(
        infinite > 100 && big > 1000,
        "{infinite} infinite moves, {big} laps of 16+"
    );
}

/// R11's known position: South's `A3L` never ends.
fn known_never_ending() -> Position {
    let json = r#"{"variant":"kiswahili","to_move":"S","S":{"front":[1,6,3,1,0,5,4,0],"back":[2,1,0,5,0,3,0,1],"hand":11,"nyumba":false},"N":{"front":[1,0,0,9,0,0,0,0],"back":[0,0,0,0,0,0,0,0],"hand":11,"nyumba":false},"takasia":null}"#;
    Position::from_json(json).unwrap()
}

#[test]
fn the_reference_finds_the_known_never_ending_move_illegal() {
    // Without this the reference could not stand for the rules.
    let p = known_never_ending();
    let a3l = Move {
        hole: Hole::front(3).unwrap(),
        dir: Dir::Anticlockwise,
        safari: false,
    };
    let refs = Ref::of(&p).legal_moves();
    assert!(!refs.is_empty());
    assert!(refs.iter().all(|m| m.mv != a3l));
    check(&p);
}
