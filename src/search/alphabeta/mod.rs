//! The classical baseline: negamax alpha-beta with iterative deepening, a transposition table,
//! move ordering (TT move, wins, captures by size, killers, history) and the static evaluation
//! of [`heuristic`]; [`leaf_ab`] mixes its scores into the values an MCTS reads.
//!
//! Move generation in this engine plays every move out (legality depends on it, R11), so each
//! node's children come with its move list; the search never replays a move. Nodes are
//! counted as positions entered.

use std::time::Duration;

use self::heuristic::Weights;
use super::no_legal_move;
use crate::game::{After, LegalMove, Position, ACTIONS};
use crate::search::clock::Clock;

pub mod heuristic;
pub mod leaf_ab;

/// Alpha-beta limits. With neither `depth` nor `ms`, [`AlphaBetaParams::DEFAULT_DEPTH`] applies.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct AlphaBetaParams {
    pub depth: Option<u32>,
    pub ms: Option<u64>,
    /// Transposition table size in MiB.
    pub tt_mb: Option<usize>,
}

impl AlphaBetaParams {
    /// Depth used when neither a depth nor a time is given.
    pub const DEFAULT_DEPTH: u32 = 10;
    pub const DEFAULT_TT_MB: usize = 16;
    pub const MAX_DEPTH: u32 = 64;
}

/// Scores at or beyond this are forced wins; `WIN - plies` prefers the fastest win.
pub const WIN: i32 = 1_000_000;
const WIN_BOUND: i32 = WIN - 1_000;
/// Centi-seed score that maps to a value of tanh(1) ~ 0.76 in [`score_to_value`].
const VALUE_SCALE: f32 = 800.0;
const MAX_PLY: usize = 128;

#[derive(Clone, Copy, Default)]
struct Entry {
    key: u64,
    score: i32,
    depth: u8,
    bound: u8,
    /// Best action + 1 (0 = none).
    best: u8,
}

const EXACT: u8 = 0;
const LOWER: u8 = 1;
const UPPER: u8 = 2;

/// A fixed-size, always-replace-unless-deeper transposition table keyed by `hash64`.
struct Table {
    entries: Vec<Entry>,
    mask: usize,
}

impl Table {
    fn new(mb: usize) -> Table {
        let want = (mb.max(1) << 20) / std::mem::size_of::<Entry>();
        let n = want.next_power_of_two() / 2;
        Table {
            entries: vec![Entry::default(); n.max(1024)],
            mask: n.max(1024) - 1,
        }
    }
    fn probe(&self, key: u64) -> Option<Entry> {
        let e = self.entries[key as usize & self.mask];
        (e.key == key).then_some(e)
    }
    fn store(&mut self, key: u64, e: Entry) {
        let slot = &mut self.entries[key as usize & self.mask];
        if slot.key != key || e.depth >= slot.depth || e.bound == EXACT {
            *slot = e;
        }
    }
    fn clear(&mut self) {
        self.entries.fill(Entry::default());
    }
}

/// Mate scores are stored relative to the node so that they stay right at any ply.
fn to_tt(score: i32, ply: usize) -> i32 {
    if score >= WIN_BOUND {
        score + ply as i32
    } else if score <= -WIN_BOUND {
        score - ply as i32
    } else {
        score
    }
}
fn from_tt(score: i32, ply: usize) -> i32 {
    if score >= WIN_BOUND {
        score - ply as i32
    } else if score <= -WIN_BOUND {
        score + ply as i32
    } else {
        score
    }
}

/// The searcher, reusable across moves (its table and history persist within a game).
pub struct AlphaBeta {
    pub weights: Weights,
    table: Table,
    killers: [[u8; 2]; MAX_PLY],
    history: [i32; ACTIONS],
    nodes: u64,
    /// The clock of the iteration in progress (none in depth 1, which always completes).
    clock: Option<Clock>,
    aborted: bool,
}

/// What a search proved about a position, for the side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proof {
    /// A forced win was found.
    Win,
    /// Every line loses against best play.
    Loss,
    /// Neither, within the search's budget.
    Unknown,
}

/// The result of one search.
#[derive(Clone, Debug)]
pub struct SearchReport {
    pub best: LegalMove,
    /// Score of the last completed iteration, centi-seeds for the side to move.
    pub score: i32,
    pub depth: u32,
    pub nodes: u64,
    pub pv: Vec<LegalMove>,
    pub elapsed: Duration,
}

impl SearchReport {
    /// The exact result for the side to move, when the last completed iteration proved one
    /// (a score in the win band: the search saw the game end on every line it needed).
    pub fn proof(&self) -> Proof {
        if self.score >= WIN_BOUND {
            Proof::Win
        } else if self.score <= -WIN_BOUND {
            Proof::Loss
        } else {
            Proof::Unknown
        }
    }

    /// With a proof, the plies to the game's end against best defence (counting the winning
    /// move, or the loser's turn without a move): the search prefers the fastest win and the
    /// slowest loss, so this is the longest line the proof needs from here.
    pub fn plies_to_end(&self) -> Option<u32> {
        match self.proof() {
            Proof::Win => Some((WIN - self.score) as u32),
            Proof::Loss => Some((WIN + self.score) as u32),
            Proof::Unknown => None,
        }
    }
}

impl AlphaBeta {
    pub fn new(tt_mb: usize) -> AlphaBeta {
        AlphaBeta {
            weights: Weights::default(),
            table: Table::new(tt_mb),
            killers: [[0; 2]; MAX_PLY],
            history: [0; ACTIONS],
            nodes: 0,
            clock: None,
            aborted: false,
        }
    }

    /// Nodes between two readings of the clock: about 0.1 ms at the measured 2.3 M nodes/s,
    /// while a reading of the thread CPU clock costs well under a microsecond.
    pub const CLOCK_EVERY: u64 = 256;

    /// Forgets everything learned (new game).
    pub fn clear(&mut self) {
        self.table.clear();
        self.killers = [[0; 2]; MAX_PLY];
        self.history = [0; ACTIONS];
    }

    /// Searches `pos` to `max_depth` plies or until `clock` runs out, whichever comes first
    /// (at least depth 1 always completes). The clock is read every [`Self::CLOCK_EVERY`] nodes
    /// (well under a millisecond), and an iteration that cannot finish is abandoned, so the
    /// budget holds to within that. Errors when `pos` has no legal move.
    pub fn search(
        &mut self,
        pos: &Position,
        max_depth: u32,
        clock: &Clock,
    ) -> anyhow::Result<SearchReport> {
        let root_moves = pos.legal_moves();
        if root_moves.is_empty() {
            return Err(no_legal_move(pos));
        }
        self.nodes = 0;
        self.aborted = false;
        self.clock = None;
        self.killers = [[0; 2]; MAX_PLY];
        for h in &mut self.history {
            *h /= 8;
        }
        let mut best = (root_moves.as_slice()[0], 0, 0u32);
        for depth in 1..=max_depth.max(1) {
            // Depth 1 always completes, so there is always a searched move to play.
            self.clock = (depth > 1).then(|| clock.clone());
            let score = self.negamax(pos, depth as i32, 0, -WIN - 1, WIN + 1);
            if self.aborted {
                break;
            }
            let e = self.table.probe(pos.hash64()).filter(|e| e.best > 0);
            let mv = e
                .and_then(|e| root_moves.by_action(e.best as usize - 1).copied())
                .unwrap_or(best.0);
            best = (mv, score, depth);
            if score.abs() >= WIN_BOUND {
                break; // the game is decided; deeper search cannot change it
            }
            if let Some(t) = clock.budget() {
                // The next iteration costs several times this one: don't start what can't end.
                if clock.elapsed() * 3 > t {
                    break;
                }
            }
            if clock.stopped() {
                break;
            }
        }
        self.clock = None;
        let pv = self.principal_variation(best.0, best.2 as usize);
        Ok(SearchReport {
            best: best.0,
            score: best.1,
            depth: best.2,
            nodes: self.nodes,
            pv,
            elapsed: clock.elapsed(),
        })
    }

    fn negamax(
        &mut self,
        pos: &Position,
        depth: i32,
        ply: usize,
        mut alpha: i32,
        beta: i32,
    ) -> i32 {
        self.nodes += 1;
        if self.nodes.is_multiple_of(Self::CLOCK_EVERY)
            && self.clock.as_ref().is_some_and(Clock::expired)
        {
            self.aborted = true;
        }
        if self.aborted {
            return 0;
        }
        if depth <= 0 || ply + 1 >= MAX_PLY {
            return heuristic::evaluate(pos, &self.weights);
        }
        let key = pos.hash64();
        let mut tt_move = 0u8;
        if let Some(e) = self.table.probe(key) {
            tt_move = e.best;
            if e.depth as i32 >= depth && ply > 0 {
                let s = from_tt(e.score, ply);
                match e.bound {
                    EXACT => return s,
                    LOWER if s >= beta => return s,
                    UPPER if s <= alpha => return s,
                    _ => {}
                }
            }
        }
        let moves = pos.legal_moves();
        if moves.is_empty() {
            return -(WIN - ply as i32); // no legal move: lost (R10, R11)
        }
        // Order: TT move, immediate wins, bigger captures, killers, history.
        let mut order: [(i32, u8); ACTIONS] = [(0, 0); ACTIONS];
        let n = moves.len();
        for (i, lm) in moves.iter().enumerate() {
            let a = lm.mv.action() as u8;
            let s = if a + 1 == tt_move {
                i32::MAX
            } else if matches!(lm.after, After::Won(_)) {
                i32::MAX - 1
            } else if lm.captured > 0 {
                1 << 24 | (lm.captured as i32) << 16
            } else if self.killers[ply].contains(&(a + 1)) {
                1 << 23
            } else {
                self.history[a as usize].min((1 << 23) - 1)
            };
            order[i] = (s, i as u8);
        }
        order[..n].sort_unstable_by_key(|x| std::cmp::Reverse(x.0));

        let alpha0 = alpha;
        let mut best_score = -WIN - 1;
        let mut best_action = 0u8;
        for &(_, i) in &order[..n] {
            let lm = &moves.as_slice()[i as usize];
            let score = match lm.after {
                After::Won(_) => WIN - (ply as i32 + 1),
                After::Position(child) => -self.negamax(&child, depth - 1, ply + 1, -beta, -alpha),
            };
            if self.aborted {
                return 0;
            }
            if score > best_score {
                best_score = score;
                best_action = lm.mv.action() as u8 + 1;
            }
            if score > alpha {
                alpha = score;
            }
            if alpha >= beta {
                if lm.captured == 0 {
                    let k = &mut self.killers[ply];
                    if k[0] != best_action {
                        k[1] = k[0];
                        k[0] = best_action;
                    }
                    self.history[lm.mv.action()] += depth * depth;
                }
                break;
            }
        }
        let bound = if best_score <= alpha0 {
            UPPER
        } else if best_score >= beta {
            LOWER
        } else {
            EXACT
        };
        self.table.store(
            key,
            Entry {
                key,
                score: to_tt(best_score, ply),
                depth: depth as u8,
                bound,
                best: best_action,
            },
        );
        best_score
    }

    /// The expected line: the chosen move, then best moves from the table.
    fn principal_variation(&self, first: LegalMove, max_len: usize) -> Vec<LegalMove> {
        let mut pv = vec![first];
        let mut cur = first.after;
        while pv.len() < max_len.max(1) {
            let After::Position(p) = cur else { break };
            let Some(e) = self.table.probe(p.hash64()).filter(|e| e.best > 0) else {
                break;
            };
            let Some(lm) = p.legal_moves().by_action(e.best as usize - 1).copied() else {
                break;
            };
            pv.push(lm);
            cur = lm.after;
        }
        pv
    }
}

/// Score in centi-seeds to an expected result in `[-1, 1]`.
pub fn score_to_value(score: i32) -> f32 {
    if score >= WIN_BOUND {
        1.0
    } else if score <= -WIN_BOUND {
        -1.0
    } else {
        (score as f32 / VALUE_SCALE).tanh()
    }
}
