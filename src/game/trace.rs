//! A move lap by lap, for people: what [`Position::legal_moves`] computes in one go, told as
//! steps (hand seed, laps, relays, captures, safari, the end) with the board after each.
//!
//! The move generator plays every candidate out as fast as it can and keeps only the result;
//! a learner wants to see how the result came about. [`Position::trace`] replays one legal
//! move and records each step. It is a second, plain implementation of R3..R9, kept apart
//! from the generator on purpose so that the hot path carries no tracing at all; tests check
//! that the trace reaches the generator's result (board, hands, nyumbas, seeds sown and
//! captured) for every legal move of many random games, so the two cannot drift apart.

use super::movegen::{After, IllegalMove, INFINITE_MOVE_SEEDS};
use super::position::{facing, Position, NYUMBA};
use super::types::{Dir, Hole, Move, MoveKind, Side};

/// One thing that happens during a move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Namua: a seed from the mover's hand goes into this hole (R7).
    HandSeed { hole: Hole },
    /// A lap (R3): `seeds` sown one by one in `dir` into `first`, ..., `last`. `lifted` is the
    /// hole they were lifted from (the start hole, or a relay hole); `None` for captured seeds,
    /// which start *in* a kichwa (R5). `taxed`: only 2 of the nyumba's seeds were lifted (R7).
    Lap {
        lifted: Option<Hole>,
        seeds: u32,
        dir: Dir,
        first: Hole,
        last: Hole,
        taxed: bool,
    },
    /// The opponent's front hole `target` is captured (R5): its `seeds` will enter at `kichwa`.
    Capture {
        target: Hole,
        seeds: u8,
        kichwa: Hole,
    },
    /// The lap ended in the owned nyumba and the mover goes on safari (R8).
    Safari,
    /// The move is over.
    End(EndReason),
}

/// Why a move ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndReason {
    /// The last seed fell into an empty hole (R3).
    EmptyHole,
    /// The lap ended in the owned nyumba: a takasa stops there, or the mover chose to (R8).
    NyumbaStop,
    /// The lap ended in the takasia'd hole (R9).
    TakasiaStop,
    /// A capture emptied the opponent's front row (R5): the mover wins.
    Won,
}

/// The board after a step, from nobody's point of view: ring order per side as in
/// [`Position::ring`] (`[side index][ring]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Board {
    pub holes: [[u8; 16]; 2],
    pub hand: [u8; 2],
    pub nyumba: [bool; 2],
    /// Seeds the mover holds during the move (lifted or captured, not yet sown). Holes, hands
    /// and these always add up to 64.
    pub carried: u32,
}

impl Board {
    /// A side's front row, hole 1 first (as [`Position::front`]).
    pub fn front(&self, side: Side) -> [u8; 8] {
        std::array::from_fn(|i| self.holes[side.index()][i])
    }
    /// A side's back row, hole 1 first (as [`Position::back`]).
    pub fn back(&self, side: Side) -> [u8; 8] {
        std::array::from_fn(|i| self.holes[side.index()][15 - i])
    }
    pub fn total_seeds(&self) -> u32 {
        self.holes.iter().flatten().map(|&c| c as u32).sum::<u32>()
            + self.hand.iter().map(|&h| h as u32).sum::<u32>()
            + self.carried
    }
}

/// A step and the board right after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceStep {
    pub step: Step,
    pub board: Board,
}

/// A legal move told step by step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveTrace {
    pub mover: Side,
    /// The board before the move.
    pub before: Board,
    /// At least one step; the last is always [`Step::End`].
    pub steps: Vec<TraceStep>,
}

impl MoveTrace {
    /// Seeds sown by the move, captured seeds included (as `LegalMove::sown`).
    pub fn sown(&self) -> u32 {
        let laps: u32 = self
            .steps
            .iter()
            .map(|s| {
                if let Step::Lap { seeds, .. } = s.step {
                    seeds
                } else {
                    0
                }
            })
            .sum();
        // A namua capture's hand seed counts as sown (it lands before the capture).
        let hand_capture = matches!(
            (
                self.steps.first().map(|s| s.step),
                self.steps.get(1).map(|s| s.step)
            ),
            (Some(Step::HandSeed { .. }), Some(Step::Capture { .. }))
        );
        laps + hand_capture as u32
    }
    /// Seeds captured by the move (as `LegalMove::captured`, before its saturation).
    pub fn captured(&self) -> u32 {
        self.steps
            .iter()
            .map(|s| {
                if let Step::Capture { seeds, .. } = s.step {
                    seeds as u32
                } else {
                    0
                }
            })
            .sum()
    }
}

impl Step {
    /// One sentence for a learner, holes named as in R12 (`mover` owns the sown holes).
    pub fn describe(&self, mover: Side) -> String {
        let name = |h: Hole| h.name(mover);
        let way = |d: Dir| match d {
            Dir::Clockwise => "clockwise",
            Dir::Anticlockwise => "anticlockwise",
        };
        match *self {
            Step::HandSeed { hole } => format!("a seed from the hand goes into {}", name(hole)),
            Step::Lap { lifted, seeds, dir, first, last, taxed } => {
                let (plural, verb) = if seeds == 1 { ("seed", "is") } else { ("seeds", "are") };
                let span = if first == last { name(first) } else { format!("{} to {}", name(first), name(last)) };
                match lifted {
                    Some(h) if taxed => format!("the nyumba {} is taxed: 2 seeds are lifted and sown {}, {span}", name(h), way(dir)),
                    Some(h) => format!("{seeds} {plural} lifted from {} and sown {}, {span}", name(h), way(dir)),
                    None => format!("the {seeds} captured {plural} {verb} sown from the kichwa, {span}"),
                }
            }
            Step::Capture { target, seeds, kichwa } => format!(
                "captures {seeds} from {}; they enter at the kichwa {}",
                target.name(mover.opponent()),
                name(kichwa)
            ),
            Step::Safari => "the lap ends in the owned nyumba: safari, its seeds are sown on (ownership is lost)".into(),
            Step::End(EndReason::EmptyHole) => "the last seed fell into an empty hole: the move ends".into(),
            Step::End(EndReason::NyumbaStop) => "the lap ends in the owned nyumba: the move stops there".into(),
            Step::End(EndReason::TakasiaStop) => "the lap ends in the takasia'd hole: the move stops there".into(),
            Step::End(EndReason::Won) => "the opponent's front row is empty: the move wins the game".into(),
        }
    }
}

impl Position {
    /// Replays the legal move `mv` of this position step by step (see the module docs).
    pub fn trace(&self, mv: Move) -> Result<MoveTrace, IllegalMove> {
        let lm = *self
            .legal_moves()
            .get(mv)
            .ok_or_else(|| IllegalMove(format!("{mv:?}")))?;
        let mut t = Tracer {
            me: self.to_move.index(),
            board: Board {
                holes: self.holes,
                hand: self.hand,
                nyumba: self.nyumba,
                carried: 0,
            },
            steps: Vec::new(),
            sown: 0,
        };
        let before = t.board;
        t.run(self, mv, lm.kind);
        debug_assert!(match lm.after {
            After::Position(p) => p.holes == t.board.holes && p.hand == t.board.hand,
            After::Won(_) => matches!(
                t.steps.last().map(|s| s.step),
                Some(Step::End(EndReason::Won))
            ),
        });
        Ok(MoveTrace {
            mover: self.to_move,
            before,
            steps: t.steps,
        })
    }
}

/// The replay state: the board as it stands and the steps so far.
struct Tracer {
    me: usize,
    board: Board,
    steps: Vec<TraceStep>,
    sown: u32,
}

impl Tracer {
    fn push(&mut self, step: Step) {
        self.steps.push(TraceStep {
            step,
            board: self.board,
        });
    }

    fn lift(&mut self, pos: usize, n: u8) -> u32 {
        let b = &mut self.board;
        b.holes[self.me][pos] -= n;
        b.carried += n as u32;
        if pos == NYUMBA && b.holes[self.me][pos] == 0 {
            b.nyumba[self.me] = false; // emptied by its owner (R8)
        }
        n as u32
    }

    /// Sows `seeds` from the hole after `pos` in `dir`; returns the last hole.
    fn sow(
        &mut self,
        mut pos: usize,
        dir: Dir,
        seeds: u32,
        lifted: Option<usize>,
        taxed: bool,
    ) -> usize {
        let step = |p: usize| match dir {
            Dir::Clockwise => (p + 1) & 15,
            Dir::Anticlockwise => (p + 15) & 15,
        };
        let first = step(pos);
        for _ in 0..seeds {
            pos = step(pos);
            self.board.holes[self.me][pos] += 1;
        }
        self.board.carried -= seeds;
        self.sown += seeds;
        self.push(Step::Lap {
            lifted: lifted.map(ring),
            seeds,
            dir,
            first: ring(first),
            last: ring(pos),
            taxed,
        });
        pos
    }

    /// Captures the hole facing front hole `pos` (R5). Returns the kichwa direction, or `None`
    /// when the capture won the game.
    fn capture(
        &mut self,
        pos: usize,
        dir: Dir,
        namua: bool,
        first: &mut bool,
        chosen: Dir,
    ) -> Option<Dir> {
        let op = 1 - self.me;
        let target = facing(pos);
        let b = &mut self.board;
        let n = b.holes[op][target];
        b.holes[op][target] = 0;
        b.carried += n as u32;
        if target == NYUMBA {
            b.nyumba[op] = false;
        }
        if !namua {
            b.nyumba = [false, false]; // first capture of the mtaji stage (R8)
        }
        let dir = match pos {
            0 | 1 => Dir::Clockwise,
            6 | 7 => Dir::Anticlockwise,
            _ if namua && *first => chosen,
            _ => dir,
        };
        *first = false;
        let kichwa = if dir == Dir::Clockwise {
            Hole::LEFT_KICHWA
        } else {
            Hole::RIGHT_KICHWA
        };
        self.push(Step::Capture {
            target: ring(target),
            seeds: n,
            kichwa,
        });
        if self.board.holes[op][..8].iter().all(|&c| c == 0) {
            self.push(Step::End(EndReason::Won));
            return None;
        }
        Some(dir)
    }

    fn run(&mut self, start: &Position, mv: Move, kind: MoveKind) {
        let me = self.me;
        let op = 1 - me;
        let namua = kind.is_namua();
        let capturing = kind.is_capture();
        let mut pos = mv.hole.ring();
        let mut dir = mv.dir;
        let mut first_capture = true;
        let mut seeds;
        let mut lifted = Some(pos);
        let mut taxed = false;
        if namua {
            self.board.hand[me] -= 1;
            self.board.holes[me][pos] += 1;
            self.push(Step::HandSeed { hole: mv.hole });
        }
        match kind {
            MoveKind::NamuaCapture => {
                self.sown += 1;
                match self.capture(pos, dir, true, &mut first_capture, mv.dir) {
                    Some(d) => dir = d,
                    None => return,
                }
                seeds = self.board.carried;
                (pos, lifted) = (kichwa_entry(dir), None);
            }
            MoveKind::NamuaTax => {
                seeds = self.lift(pos, 2);
                taxed = true;
            }
            _ => seeds = self.lift(pos, self.board.holes[me][pos]),
        }
        loop {
            pos = self.sow(pos, dir, seeds, lifted, taxed);
            taxed = false;
            let c = self.board.holes[me][pos];
            if c == 1 {
                return self.push(Step::End(EndReason::EmptyHole));
            }
            if capturing && pos < 8 && self.board.holes[op][facing(pos)] > 0 {
                match self.capture(pos, dir, namua, &mut first_capture, mv.dir) {
                    Some(d) => dir = d,
                    None => return,
                }
                seeds = self.board.carried;
                (pos, lifted) = (kichwa_entry(dir), None);
                continue;
            }
            if namua && pos == NYUMBA && self.board.nyumba[me] && c >= 6 {
                if !capturing || !mv.safari {
                    return self.push(Step::End(EndReason::NyumbaStop));
                }
                self.board.nyumba[me] = false;
                self.push(Step::Safari);
            } else if start.takasia == Some(pos as u8) {
                return self.push(Step::End(EndReason::TakasiaStop));
            }
            if self.sown >= INFINITE_MOVE_SEEDS {
                // Unreachable for a legal move (R11 removed it); end rather than loop forever.
                return self.push(Step::End(EndReason::EmptyHole));
            }
            seeds = self.lift(pos, c);
            lifted = Some(pos);
        }
    }
}

/// The hole "before" the kichwa where captured seeds enter, so that sowing starts in it (R5).
fn kichwa_entry(dir: Dir) -> usize {
    match dir {
        Dir::Clockwise => 15,
        Dir::Anticlockwise => 8,
    }
}

fn ring(r: usize) -> Hole {
    Hole::from_ring(r).expect("ring index below 16")
}
