//! Single-game search for players, analysis and tournaments.

use std::time::Duration;

use anyhow::Context;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::clock::{Clock, ClockKind};
use super::params::{Algorithm, SearchParams};
use super::tree::{SearchResult, Tree};
use super::Evaluator;
use crate::game::{Move, Position, ACTIONS};
use crate::util::profile::{self, Phase};

/// What one [`Mcts::search_until`] spent, for per-move figures.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SearchStats {
    /// Evaluator calls made.
    pub evaluator_calls: u32,
    /// Positions sent to the evaluator, over all calls.
    pub evaluations: u32,
    /// Mean share of `leaves_per_step` that each call filled (collisions and proven leaves
    /// leave batches short).
    pub batch_fill: f32,
    /// Time on the search's clock.
    pub elapsed: Duration,
    /// Whether the kept tree was reused (this position was its root, a child or a grandchild).
    pub reused: bool,
}

/// A search of one game at a time, keeping its tree between moves.
///
/// ```no_run
/// # use bao::search::{Mcts, SearchParams, UniformEvaluator};
/// # use bao::game::{Position, Variant};
/// let mut mcts = Mcts::new(SearchParams::default(), 7);
/// let pos = Position::start(Variant::Kujifunza);
/// let result = mcts.search(&pos, 400, &mut UniformEvaluator).unwrap();
/// mcts.advance(result.best_move.unwrap());
/// ```
pub struct Mcts {
    params: SearchParams,
    rng: ChaCha8Rng,
    tree: Option<Tree>,
    noise: bool,
    positions: Vec<Position>,
    masks: Vec<u64>,
    policy: Vec<f32>,
    values: Vec<f32>,
    /// Simulations per second of the last timed searches (a moving average), which sizes the
    /// budget of a timed Gumbel search (sequential halving needs to know it up front).
    sims_per_sec: Option<f64>,
    /// The longest evaluator step seen on this search's clock: a timed search does not start
    /// a step it expects to end past the budget.
    step_estimate: Duration,
    stats: SearchStats,
}

impl Mcts {
    /// A search with these parameters; `seed` fixes every random choice (root noise).
    pub fn new(params: SearchParams, seed: u64) -> Mcts {
        Mcts {
            params,
            rng: ChaCha8Rng::seed_from_u64(seed),
            tree: None,
            noise: false,
            positions: Vec::new(),
            masks: Vec::new(),
            policy: Vec::new(),
            values: Vec::new(),
            sims_per_sec: None,
            step_estimate: Duration::ZERO,
            stats: SearchStats::default(),
        }
    }

    pub fn params(&self) -> &SearchParams {
        &self.params
    }

    /// Root exploration noise (Dirichlet for PUCT, Gumbel samples for Gumbel); off by
    /// default, which is what players want. Self-play turns it on.
    pub fn set_noise(&mut self, on: bool) {
        self.noise = on;
    }

    /// Forgets the tree.
    pub fn reset(&mut self) {
        self.tree = None;
    }

    /// A new game: forgets the tree and reseeds every random choice, but keeps the measured
    /// speed (the same search on the same machine is as fast in the next game, and a timed
    /// Gumbel search sizes its halving from that speed from its first move on).
    pub fn new_game(&mut self, seed: u64) {
        self.rng = ChaCha8Rng::seed_from_u64(seed);
        self.tree = None;
    }

    /// Measures the speed before the first timed search: `sims` simulations from `pos`,
    /// untimed, on the thread's CPU clock, then forgets the tree. Without it the first timed
    /// Gumbel search of a player sizes its halving from a low guess
    /// ([`Self::FIRST_GUESS_SIMS_PER_SEC`]) and spends a fraction of its time: in a tournament
    /// that is the first decision after the opening, often the one that decides the game.
    /// (An evaluator whose work runs on other threads, a GPU, looks faster on the CPU clock
    /// than it is; the budget check still ends every search in time, and the rates measured by
    /// timed searches replace this one.)
    pub fn calibrate(
        &mut self,
        pos: &Position,
        sims: usize,
        evaluator: &mut dyn Evaluator,
    ) -> anyhow::Result<()> {
        let clock = Clock::start(ClockKind::Cpu, None, None);
        let result = self.search_until(pos, sims, &clock, evaluator)?;
        let secs = self.stats.elapsed.as_secs_f64();
        if result.simulations > 0 && secs > 0.0 {
            self.sims_per_sec = Some(result.simulations as f64 / secs);
        }
        self.tree = None;
        Ok(())
    }

    /// Simulations per second measured so far (by timed searches or [`Self::calibrate`]).
    pub fn sims_per_sec(&self) -> Option<f64> {
        self.sims_per_sec
    }

    /// Runs `sims` simulations from `pos` (reusing the kept tree when its root is `pos`, or a
    /// child of its root is, and `reuse_tree` is on) and reports what it found.
    pub fn search(
        &mut self,
        pos: &Position,
        sims: usize,
        evaluator: &mut dyn Evaluator,
    ) -> anyhow::Result<SearchResult> {
        self.search_until(pos, sims, &Clock::unlimited(), evaluator)
    }

    /// Searches `pos` until `max_sims` simulations are done or `clock` runs out, whichever
    /// comes first. With a time budget the search is also over once the root is proven, and it
    /// never starts an evaluator step it expects to end past the budget (the estimate is the
    /// slowest step seen so far), so the budget is a hard limit up to one step's misjudgement.
    /// The root's own evaluation and one simulation always run, so there is a searched move.
    pub fn search_until(
        &mut self,
        pos: &Position,
        max_sims: usize,
        clock: &Clock,
        evaluator: &mut dyn Evaluator,
    ) -> anyhow::Result<SearchResult> {
        let reused = self.reroot(pos);
        if !reused {
            self.tree = Some(Tree::new(*pos));
        }
        let timed = clock.is_timed();
        let mut target = max_sims;
        if timed && self.params.algorithm == Algorithm::Gumbel {
            // Sequential halving spreads a known budget; guess it from the measured speed.
            let budget = clock
                .budget()
                .unwrap_or_default()
                .saturating_sub(clock.elapsed());
            let rate = self.sims_per_sec.unwrap_or(Self::FIRST_GUESS_SIMS_PER_SEC);
            target = target.min(((rate * budget.as_secs_f64()) as usize).max(1));
        }
        let tree = self.tree.as_mut().expect("tree just set");
        tree.begin(&self.params, target, self.noise, &mut self.rng);
        let leaves = self.params.leaves_per_step;
        let mut stats = SearchStats {
            reused,
            ..SearchStats::default()
        };
        let mut fill = 0.0f64;
        while !tree.is_done() {
            if (timed || clock.stopped()) && tree.simulations() > 0 && {
                let _clock = profile::scope(Phase::Clock);
                tree.root_proven() || clock.would_overrun(self.step_estimate)
            } {
                break;
            }
            self.positions.clear();
            self.masks.clear();
            let sims_before = tree.simulations();
            let select = profile::scope(Phase::Select);
            let n = tree.select(&self.params, leaves, &mut self.positions, &mut self.masks);
            drop(select);
            if n == 0 {
                if tree.is_done() || tree.root_proven() && tree.simulations() > 0 {
                    break;
                }
                // Only terminal visits this time: no evaluation needed; back to the clock.
                anyhow::ensure!(
                    tree.simulations() > sims_before,
                    "search made no progress (internal error)"
                );
                continue;
            }
            self.policy.resize(n * ACTIONS, 0.0);
            self.values.resize(n, 0.0);
            let before = {
                let _clock = profile::scope(Phase::Clock);
                clock.elapsed()
            };
            evaluator
                .evaluate(
                    &self.positions,
                    &self.masks,
                    &mut self.policy,
                    &mut self.values,
                )
                .with_context(|| format!("evaluator {} failed", evaluator.name()))?;
            {
                let _backup = profile::scope(Phase::Backup);
                tree.apply(&self.params, &self.policy, &self.values, &mut self.rng);
            }
            let _clock = profile::scope(Phase::Clock);
            // Half again the slowest recent step (older ones fade by 1/8 a step, so one
            // slow warm-up call does not shorten every later search): a step a little slower
            // than any before it still ends inside the budget.
            let step = clock.elapsed().saturating_sub(before);
            self.step_estimate = (step + step / 2).max(self.step_estimate.mul_f64(0.875));
            stats.evaluator_calls += 1;
            stats.evaluations += n as u32;
            fill += n as f64 / leaves as f64;
        }
        let result = tree.result(&self.params);
        stats.elapsed = clock.elapsed();
        stats.batch_fill = if stats.evaluator_calls > 0 {
            (fill / stats.evaluator_calls as f64) as f32
        } else {
            0.0
        };
        if timed && result.simulations >= 8 && stats.elapsed > Duration::ZERO {
            let rate = result.simulations as f64 / stats.elapsed.as_secs_f64();
            self.sims_per_sec = Some(self.sims_per_sec.map_or(rate, |r| 0.5 * r + 0.5 * rate));
        }
        self.stats = stats;
        Ok(result)
    }

    /// A timed Gumbel search's first budget guess, before any speed was measured: low, so the
    /// first move ends early rather than cut its halving short.
    const FIRST_GUESS_SIMS_PER_SEC: f64 = 500.0;

    /// What the last search spent.
    pub fn last_stats(&self) -> SearchStats {
        self.stats
    }

    /// Brings the kept tree's root to `pos` when `pos` is its root, a child (the opponent's
    /// reply after [`Self::advance`] along our move) or a grandchild (our move and the reply,
    /// for a caller that keeps the whole tree until its next search); false when there is no
    /// such tree.
    fn reroot(&mut self, pos: &Position) -> bool {
        if !self.params.reuse_tree {
            return false;
        }
        let Some(tree) = self.tree.as_mut() else {
            return false;
        };
        tree.advance_to(pos)
    }

    /// The game went from `pos` by `mv` without this search choosing it (a move proven by
    /// other means): keeps the subtree under `mv` when the tree knows `pos`, else drops it.
    pub fn follow(&mut self, pos: &Position, mv: Move) {
        if self.reroot(pos) {
            self.advance(mv);
        } else {
            self.tree = None;
        }
    }

    /// Moves the kept tree's root along `mv` (played by either side), keeping the subtree.
    /// A move the tree does not know drops the tree.
    pub fn advance(&mut self, mv: Move) {
        if let Some(tree) = self.tree.as_mut() {
            if !self.params.reuse_tree || !tree.advance(mv, None) {
                self.tree = None;
            }
        }
    }

    /// Nodes in the kept tree (0 without one).
    pub fn tree_size(&self) -> usize {
        self.tree.as_ref().map_or(0, Tree::len)
    }
}
