//! Single-game search for players, analysis and tournaments.

use anyhow::Context;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::params::SearchParams;
use super::tree::{SearchResult, Tree};
use super::Evaluator;
use crate::game::{Move, Position, ACTIONS};

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
    features: Vec<f32>,
    masks: Vec<u64>,
    policy: Vec<f32>,
    values: Vec<f32>,
}

impl Mcts {
    /// A search with these parameters; `seed` fixes every random choice (root noise).
    pub fn new(params: SearchParams, seed: u64) -> Mcts {
        Mcts {
            params,
            rng: ChaCha8Rng::seed_from_u64(seed),
            tree: None,
            noise: false,
            features: Vec::new(),
            masks: Vec::new(),
            policy: Vec::new(),
            values: Vec::new(),
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

    /// Runs `sims` simulations from `pos` (reusing the kept tree when its root is `pos` and
    /// `reuse_tree` is on) and reports what it found.
    pub fn search(
        &mut self,
        pos: &Position,
        sims: usize,
        evaluator: &mut dyn Evaluator,
    ) -> anyhow::Result<SearchResult> {
        let reuse = self.params.reuse_tree
            && self.tree.as_ref().is_some_and(|t| t.root_position() == pos);
        if !reuse {
            self.tree = Some(Tree::new(*pos));
        }
        let tree = self.tree.as_mut().expect("tree just set");
        tree.begin(&self.params, sims, self.noise, &mut self.rng);
        while !tree.is_done() {
            self.features.clear();
            self.masks.clear();
            let n = tree.select(&self.params, self.params.leaves_per_step, &mut self.features, &mut self.masks);
            if n == 0 {
                if tree.is_done() {
                    break;
                }
                anyhow::bail!("search made no progress (internal error)");
            }
            self.policy.resize(n * ACTIONS, 0.0);
            self.values.resize(n, 0.0);
            evaluator
                .evaluate(&self.features, &self.masks, &mut self.policy, &mut self.values)
                .with_context(|| format!("evaluator {} failed", evaluator.name()))?;
            tree.apply(&self.params, &self.policy, &self.values, &mut self.rng);
        }
        Ok(tree.result(&self.params))
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
