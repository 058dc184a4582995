//! `bao solve`: prove a position won or lost for the side to move, and write the proof as a
//! winning strategy that anyone can check ([`strategy`], [`check`]).
//!
//! The prover is the project's alpha-beta ([`AlphaBeta`]) run to a proof: its scores reach the
//! win band only from real game ends, so a win-band score is a forced win (docs/solving.md
//! says why, and what a hash collision could do). The strategy is then read off by proving
//! again, position by position, with the same search and its warm transposition table: at
//! each position of the winner, the fastest proven win (a move that wins at once first); for
//! each legal reply of the loser, the position reached is proven the same way. Positions are
//! kept once (transpositions share one entry), so the strategy is a graph whose size is the
//! proof's size. Fastest wins keep it small: the longest line shrinks by two plies at every
//! step, and a short line leaves the loser few branching turns.
//!
//! Nothing here is trusted by the checker: the strategy is replayed by the seed-by-seed
//! reference generator before `bao solve` reports it checked.

pub mod check;
pub mod strategy;
pub mod survey;

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use crate::game::{After, LegalMove, Position, PACKED_LEN};
use crate::search::alphabeta::{AlphaBeta, AlphaBetaParams, Proof, SearchReport};
use crate::search::{Clock, ClockKind};

pub use strategy::Strategy;

/// The value of a position for its side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Value {
    Win,
    Loss,
    /// Not proven within the limit.
    Unknown,
}

impl From<Proof> for Value {
    fn from(p: Proof) -> Value {
        match p {
            Proof::Win => Value::Win,
            Proof::Loss => Value::Loss,
            Proof::Unknown => Value::Unknown,
        }
    }
}

impl Value {
    /// The same position's value for the other side (a win for one is a loss for the other).
    pub fn for_opponent(self) -> Value {
        match self {
            Value::Win => Value::Loss,
            Value::Loss => Value::Win,
            Value::Unknown => Value::Unknown,
        }
    }

    /// `win`, `loss` or `unknown`, as in JSON output.
    pub fn name(self) -> &'static str {
        match self {
            Value::Win => "win",
            Value::Loss => "loss",
            Value::Unknown => "unknown",
        }
    }
}

/// Everything `bao solve` reports about one position.
#[derive(Clone, Debug)]
pub struct Solution {
    pub root: Position,
    /// For the side to move at the root.
    pub value: Value,
    /// With a win: every root move proven to win (the strategy's move first).
    pub winning_moves: Vec<String>,
    /// With a win: how many other root moves were proven to lose (the rest are unresolved).
    pub losing_moves: usize,
    /// With a proof: the longest line of the strategy from the root, in plies.
    pub longest_line: Option<u32>,
    /// With a proof: the strategy (see [`strategy`]).
    pub strategy: Option<Strategy>,
    /// Why a value was found but no strategy could be completed, if so.
    pub incomplete: Option<String>,
    /// Plies of the root's last completed search iteration (how deep the solver got).
    pub root_depth: u32,
    /// Positions entered by every search of this solve.
    pub nodes: u64,
    pub elapsed: Duration,
}

type Key = [u8; PACKED_LEN];

/// A position of the winner in the strategy: its move and the longest line from it.
#[derive(Clone, Copy)]
struct Won {
    mv: LegalMove,
    plies: u32,
}

/// Why a strategy could not be completed.
#[derive(Debug)]
enum Stuck {
    /// The time limit ran out.
    OutOfTime,
    /// A position on the way was not proven won (a search limit, or a cycle of fastest moves).
    NotProven(Position),
}

/// The solver: one alpha-beta with its table, kept warm across the searches of a solve.
pub struct Solver {
    search: AlphaBeta,
    budget: Duration,
    started: Instant,
    nodes: u64,
    won: HashMap<Key, Won>,
    on_path: HashSet<Key>,
    progress: indicatif::ProgressBar,
}

impl Solver {
    /// A solver of `budget` wall time per solve and a transposition table of `tt_mb` MiB.
    pub fn new(budget: Duration, tt_mb: usize) -> Solver {
        Solver {
            search: AlphaBeta::new(tt_mb),
            budget,
            started: Instant::now(),
            nodes: 0,
            won: HashMap::new(),
            on_path: HashSet::new(),
            progress: indicatif::ProgressBar::hidden(),
        }
    }

    /// Shows a spinner counting the strategy's positions while it is built.
    pub fn with_progress(mut self, visible: bool) -> Solver {
        self.progress = crate::util::progress::spinner("positions in the strategy", visible);
        self
    }

    fn remaining(&self) -> Duration {
        self.budget.saturating_sub(self.started.elapsed())
    }

    /// One alpha-beta search to a proof, within what is left of the budget.
    fn prove(&mut self, pos: &Position) -> Result<SearchReport, Stuck> {
        self.prove_for(pos, self.remaining())
    }

    fn prove_for(&mut self, pos: &Position, left: Duration) -> Result<SearchReport, Stuck> {
        if left.is_zero() {
            return Err(Stuck::OutOfTime);
        }
        let clock = Clock::start(ClockKind::Wall, Some(left), None);
        let r = self
            .search
            .search(pos, AlphaBetaParams::MAX_DEPTH, &clock)
            .map_err(|_| Stuck::NotProven(*pos))?;
        self.nodes += r.nodes;
        Ok(r)
    }

    /// The value alone, without a strategy: one search to a proof within the budget.
    pub fn solve_value(&mut self, pos: &Position) -> Value {
        self.solve_with_move(pos).0
    }

    /// The value and, with a win, the search's winning move (the fastest win it found): one
    /// search to a proof within the budget, no strategy built (`bao label`'s targets).
    pub fn solve_with_move(&mut self, pos: &Position) -> (Value, Option<LegalMove>) {
        self.started = Instant::now();
        if pos.legal_moves().is_empty() {
            return (Value::Loss, None);
        }
        match self.prove(pos) {
            Ok(r) => {
                let value = Value::from(r.proof());
                (value, (value == Value::Win).then_some(r.best))
            }
            Err(_) => (Value::Unknown, None),
        }
    }

    /// The value within `depth` plies, whatever the time: deterministic, for training targets
    /// that must be the same on every run of a seed.
    pub fn solve_value_to_depth(&mut self, pos: &Position, depth: u32) -> Value {
        if pos.legal_moves().is_empty() {
            return Value::Loss;
        }
        let r = self.search.search(pos, depth, &Clock::unlimited());
        self.nodes += r.as_ref().map_or(0, |r| r.nodes);
        r.map_or(Value::Unknown, |r| r.proof().into())
    }

    /// Proves `root` won or lost for its side to move and, when it is, builds the strategy.
    pub fn solve(&mut self, root: &Position) -> Solution {
        self.started = Instant::now();
        self.nodes = 0;
        self.won.clear();
        self.on_path.clear();
        let mut sol = Solution {
            root: *root,
            value: Value::Unknown,
            winning_moves: Vec::new(),
            losing_moves: 0,
            longest_line: None,
            strategy: None,
            incomplete: None,
            root_depth: 0,
            nodes: 0,
            elapsed: Duration::ZERO,
        };
        let moves = root.legal_moves();
        let proof = if moves.is_empty() {
            Proof::Loss // no legal move: lost (R10)
        } else {
            match self.prove(root) {
                Ok(r) => {
                    sol.root_depth = r.depth;
                    r.proof()
                }
                Err(_) => Proof::Unknown,
            }
        };
        let built = match proof {
            Proof::Win => {
                sol.value = Value::Win;
                let built = self.win_at(root);
                if built.is_ok() {
                    (sol.winning_moves, sol.losing_moves) = self.root_moves(root);
                }
                built
            }
            Proof::Loss => {
                sol.value = Value::Loss;
                self.loss_at(root)
            }
            Proof::Unknown => Err(Stuck::OutOfTime),
        };
        match built {
            Ok(plies) => {
                sol.longest_line = Some(plies);
                sol.strategy = Some(self.strategy(root, sol.value));
            }
            Err(stuck) if sol.value != Value::Unknown => {
                sol.incomplete = Some(match stuck {
                    Stuck::OutOfTime => {
                        "the time limit ran out while the strategy was built".into()
                    }
                    Stuck::NotProven(p) => format!("not proven again: {}", p.to_json()),
                });
            }
            Err(_) => {}
        }
        self.progress.finish_and_clear();
        sol.nodes = self.nodes;
        sol.elapsed = self.started.elapsed();
        sol
    }

    /// Every root move after which the opponent is proven lost, the strategy's move first,
    /// and how many others were proven to lose. What is left of the budget is shared evenly
    /// among the moves still to try, so one hard move cannot starve the rest.
    fn root_moves(&mut self, root: &Position) -> (Vec<String>, usize) {
        let me = root.to_move();
        let chosen = self.won.get(&root.to_bytes()).map(|w| w.mv);
        let mut wins: Vec<String> = chosen.iter().map(|lm| lm.notation(me)).collect();
        let mut losses = 0;
        let others: Vec<LegalMove> = root
            .legal_moves()
            .iter()
            .filter(|lm| Some(**lm) != chosen)
            .copied()
            .collect();
        for (i, lm) in others.iter().enumerate() {
            let share = self.remaining() / (others.len() - i) as u32;
            match self.value_after(lm, share) {
                Value::Win => wins.push(lm.notation(me)),
                Value::Loss => losses += 1,
                Value::Unknown => {}
            }
        }
        (wins, losses)
    }

    /// The value for the mover of each legal move of `pos`, each proven with `per_move` of
    /// wall time (a fresh budget per move, one warm table).
    pub fn move_values(&mut self, pos: &Position, per_move: Duration) -> Vec<(LegalMove, Value)> {
        pos.legal_moves()
            .iter()
            .map(|lm| (*lm, self.value_after(lm, per_move)))
            .collect()
    }

    /// The value for the mover after `lm`, the opponent's position proven within `limit`.
    fn value_after(&mut self, lm: &LegalMove, limit: Duration) -> Value {
        match lm.after {
            After::Won(_) => Value::Win,
            After::Position(q) if q.legal_moves().is_empty() => Value::Win,
            After::Position(q) => self
                .prove_for(&q, limit)
                .map_or(Value::Unknown, |r| Value::from(r.proof()).for_opponent()),
        }
    }

    /// A lost root: every move of the loser leads to a position the winner wins.
    fn loss_at(&mut self, root: &Position) -> Result<u32, Stuck> {
        let mut longest = 0;
        for lm in root.legal_moves().iter() {
            let After::Position(p) = lm.after else {
                return Err(Stuck::NotProven(*root)); // the "loser" wins at once
            };
            longest = longest.max(1 + self.win_at(&p)?);
        }
        Ok(longest)
    }

    /// Builds the strategy below a position proven won for its side to move; the longest
    /// line from it in plies.
    fn win_at(&mut self, pos: &Position) -> Result<u32, Stuck> {
        let key = pos.to_bytes();
        if let Some(w) = self.won.get(&key) {
            return Ok(w.plies);
        }
        if self.on_path.contains(&key) {
            return Err(Stuck::NotProven(*pos));
        }
        let moves = pos.legal_moves();
        if let Some(lm) = moves.iter().find(|lm| matches!(lm.after, After::Won(_))) {
            return Ok(self.keep(key, *lm, 1));
        }
        let r = self.prove(pos)?;
        if r.proof() != Proof::Win {
            return Err(Stuck::NotProven(*pos));
        }
        // The search's fastest win first; the others only if its strategy cannot be built.
        let mut candidates: Vec<LegalMove> = vec![r.best];
        candidates.extend(moves.iter().filter(|lm| **lm != r.best).copied());
        self.on_path.insert(key);
        let mut result = Err(Stuck::NotProven(*pos));
        for (i, lm) in candidates.into_iter().enumerate() {
            let After::Position(q) = lm.after else {
                unreachable!("immediate wins were taken above")
            };
            if i > 0 && !self.prove(&q).is_ok_and(|r| r.proof() == Proof::Loss) {
                continue;
            }
            match self.replies(&q) {
                Ok(plies) => {
                    result = Ok(self.keep(key, lm, plies));
                    break;
                }
                Err(Stuck::OutOfTime) => {
                    result = Err(Stuck::OutOfTime);
                    break;
                }
                Err(Stuck::NotProven(_)) => {}
            }
        }
        self.on_path.remove(&key);
        result
    }

    /// The loser to move at `q`: every reply must reach a position the winner wins.
    fn replies(&mut self, q: &Position) -> Result<u32, Stuck> {
        let mut longest = 1; // the winning move alone, when the loser has no reply
        for reply in q.legal_moves().iter() {
            let After::Position(p) = reply.after else {
                return Err(Stuck::NotProven(*q)); // the loser wins at once
            };
            longest = longest.max(2 + self.win_at(&p)?);
        }
        Ok(longest)
    }

    fn keep(&mut self, key: Key, mv: LegalMove, plies: u32) -> u32 {
        self.won.insert(key, Won { mv, plies });
        self.progress.set_position(self.won.len() as u64);
        plies
    }

    /// The strategy as proof lines, depth first from the root, each position once.
    fn strategy(&self, root: &Position, value: Value) -> Strategy {
        let mut out = Strategy::default();
        let mut listed: HashSet<Key> = HashSet::new();
        let mut stack: Vec<Position> = Vec::new();
        if value == Value::Loss {
            out.push(root, None);
            stack.extend(successors(root).into_iter().rev());
        } else {
            stack.push(*root);
        }
        while let Some(p) = stack.pop() {
            if !listed.insert(p.to_bytes()) {
                continue;
            }
            let w = self.won[&p.to_bytes()];
            out.push(&p, Some(w.mv.notation(p.to_move())));
            if let After::Position(q) = w.mv.after {
                stack.extend(successors(&q).into_iter().rev());
            }
        }
        out
    }
}

/// The positions the side to move can reach (moves that win at once end the game instead).
fn successors(pos: &Position) -> Vec<Position> {
    pos.legal_moves()
        .iter()
        .filter_map(|lm| match lm.after {
            After::Position(p) => Some(p),
            After::Won(_) => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Variant;

    /// Plays the first moves of a fixed line until the side to move has a forced win within
    /// `plies`; the solver's proof of it must pass the reference checker.
    #[test]
    fn a_short_forced_win_is_proven_and_its_proof_checks() {
        let mut solver = Solver::new(Duration::from_secs(20), 16);
        let mut pos = Position::start(Variant::Kujifunza);
        let mut found = false;
        for _ in 0..200 {
            let sol = solver.solve(&pos);
            if sol.value == Value::Win && sol.longest_line.is_some_and(|d| d <= 5) {
                let strategy = sol.strategy.expect("a proven win has a strategy");
                let v = check::check(&strategy.to_jsonl()).expect("the proof checks");
                assert_eq!(v.winner, pos.to_move());
                assert_eq!(Some(v.longest_line), sol.longest_line);
                assert_eq!(v.positions, strategy.len());
                found = true;
                break;
            }
            // Advance by the first legal move that keeps the game going.
            let next = pos.legal_moves().iter().find_map(|lm| match lm.after {
                After::Position(p) if !p.legal_moves().is_empty() => Some(p),
                _ => None,
            });
            match next {
                Some(p) => pos = p,
                None => break,
            }
        }
        assert!(found, "no short forced win met along the line");
    }
}
