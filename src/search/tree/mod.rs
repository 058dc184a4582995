//! One search tree: an arena of nodes, root and interior selection, expansion, backup.
//!
//! The tree is driven in two halves so that many trees can share one evaluator call:
//! [`Tree::select`] walks to leaves, expands them with the rules core and writes their
//! features; the caller evaluates every pending leaf of every tree in one batch; then
//! [`Tree::apply`] sets the priors and backs the values up. A single-game search
//! ([`super::Mcts`]) and the lockstep self-play driver both run exactly this code, which is
//! why they give the same trees for the same seed.
//!
//! Values: every node stores its value sum from the point of view of `mover`, the side that
//! played the move into it, so a parent ranks its children on their stored means directly.
//! Terminal nodes carry exact results, and proven results propagate up (a node with a winning
//! child is won for its side to move; one whose children are all lost is lost). A leaf with a
//! move that wins at once is proven when it is expanded, without an evaluator call: the
//! network has nothing to add to a won position.
//!
//! The module is split by concern, as KataGo's search is: `node` (the arena's nodes and
//! their exact results), `update` (expansion, backup, proof propagation), `puct` (interior
//! selection and root noise), `gumbel` (the Gumbel root), `results` (what a search found)
//! and `reuse` (moving the root for the next search).

mod gumbel;
mod node;
mod puct;
mod results;
mod reuse;
mod update;

use rand::Rng;

use super::params::{Algorithm, SearchParams};
use crate::game::{Position, ACTIONS};
use gumbel::GumbelRoot;
use node::{Node, State, NONE, ROOT};
pub use results::{ChildInfo, SearchResult};

/// A leaf waiting for its evaluation.
#[derive(Clone, Copy, Debug)]
struct PendingLeaf {
    node: u32,
    /// False for the root's own evaluation, which is not a simulation.
    counts: bool,
}

/// One search tree (see module docs).
#[derive(Clone, Debug)]
pub struct Tree {
    nodes: Vec<Node>,
    /// The other arena of tree reuse (see `reuse.rs`): empty, with the capacity it had.
    spare: Vec<Node>,
    pending: Vec<PendingLeaf>,
    noise: bool,
    root_prepared: bool,
    gumbel: Option<GumbelRoot>,
    target: u32,
    started: u32,
    done: u32,
}

/// How a walk from the root ended.
enum Descent {
    Leaf(u32),
    Terminal(u32),
    /// Reached a leaf already waiting for evaluation.
    Collision,
}

impl Tree {
    pub fn new(pos: Position) -> Tree {
        let mut nodes = Vec::with_capacity(256);
        nodes.push(Node::new(pos, NONE, 0, pos.to_move().opponent()));
        Tree {
            nodes,
            spare: Vec::new(),
            pending: Vec::new(),
            noise: false,
            root_prepared: false,
            gumbel: None,
            target: 0,
            started: 0,
            done: 0,
        }
    }

    pub fn root_position(&self) -> &Position {
        &self.nodes[ROOT as usize].pos
    }

    /// Nodes held (for memory accounting).
    pub fn len(&self) -> usize {
        self.nodes.len()
    }
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Starts a search of `sims` simulations from the root. `noise`: Dirichlet noise (PUCT)
    /// or Gumbel samples (Gumbel) at the root, for self-play exploration.
    pub fn begin<R: Rng + ?Sized>(
        &mut self,
        params: &SearchParams,
        sims: usize,
        noise: bool,
        rng: &mut R,
    ) {
        assert!(self.pending.is_empty(), "begin while leaves are pending");
        self.target = sims.min(u32::MAX as usize) as u32;
        self.started = 0;
        self.done = 0;
        self.noise = noise;
        self.root_prepared = false;
        self.gumbel = None;
        if self.nodes[ROOT as usize].state == State::Expanded {
            self.prepare_root(params, rng);
        }
    }

    /// True when the search has run all its simulations (or the root has no move).
    pub fn is_done(&self) -> bool {
        let root = &self.nodes[ROOT as usize];
        root.state == State::Terminal
            || (root.state == State::Expanded
                && self.done >= self.target
                && self.pending.is_empty())
    }

    /// Most terminal visits in one [`Tree::select`] call (a few hundred microseconds of work).
    pub const TERMINAL_VISITS_PER_SELECT: usize = 256;

    /// Number of leaves waiting for [`Tree::apply`].
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Simulations finished in the current search.
    pub fn simulations(&self) -> u32 {
        self.done
    }

    /// True when the root's result is exact (a forced win or loss for the side to move).
    pub fn root_proven(&self) -> bool {
        self.nodes[ROOT as usize].proven.is_known()
    }

    /// Selects up to `max_leaves` leaves (more than one only with virtual loss), expanding each
    /// and appending its position and legal mask for the evaluator. Terminal and proven leaves
    /// are backed up at once and do not count against `max_leaves`; at most
    /// [`Tree::TERMINAL_VISITS_PER_SELECT`] of them per call, so that a tree whose lines are
    /// nearly all proven returns to its caller (and its clock) often. Returns the number of
    /// leaves added, which can be 0 when only terminal visits were made.
    pub fn select(
        &mut self,
        params: &SearchParams,
        max_leaves: usize,
        positions: &mut Vec<Position>,
        masks: &mut Vec<u64>,
    ) -> usize {
        let before = self.pending.len();
        let mut terminal_visits = 0;
        while self.pending.len() - before < max_leaves
            && terminal_visits < Self::TERMINAL_VISITS_PER_SELECT
        {
            match self.nodes[ROOT as usize].state {
                State::Terminal | State::Pending => break,
                State::Unexpanded => {
                    self.expand(ROOT, false, positions, masks);
                    continue;
                }
                State::Expanded => {}
            }
            if self.started >= self.target {
                break;
            }
            self.settle_gumbel(params);
            match self.descend(params) {
                Descent::Collision => break,
                Descent::Terminal(i) => {
                    terminal_visits += 1;
                    self.started += 1;
                    self.done += 1;
                    let node = &self.nodes[i as usize];
                    let v = node.proven.value().expect("terminal nodes are proven");
                    self.backup(i, node.mover, v, false);
                }
                Descent::Leaf(i) => {
                    self.started += 1;
                    self.expand(i, true, positions, masks);
                }
            }
        }
        self.pending.len() - before
    }

    /// Takes the evaluations of this tree's pending leaves, in the order `select` produced
    /// them (`policy`: `pending() * ACTIONS`, `values`: `pending()`), and backs them up.
    pub fn apply<R: Rng + ?Sized>(
        &mut self,
        params: &SearchParams,
        policy: &[f32],
        values: &[f32],
        rng: &mut R,
    ) {
        assert_eq!(
            values.len(),
            self.pending.len(),
            "one value per pending leaf"
        );
        assert_eq!(
            policy.len(),
            self.pending.len() * ACTIONS,
            "one policy per pending leaf"
        );
        let pending = std::mem::take(&mut self.pending);
        for (k, leaf) in pending.iter().enumerate() {
            let p = &policy[k * ACTIONS..(k + 1) * ACTIONS];
            let i = leaf.node as usize;
            let range = self.nodes[i].children();
            let sum: f32 = range
                .clone()
                .map(|c| p[self.nodes[c].action as usize].max(0.0))
                .sum();
            let uniform = 1.0 / range.len() as f32;
            for c in range {
                let a = self.nodes[c].action as usize;
                self.nodes[c].prior = if sum > 0.0 && sum.is_finite() {
                    p[a].max(0.0) / sum
                } else {
                    uniform
                };
            }
            self.nodes[i].state = State::Expanded;
            let side = self.nodes[i].pos.to_move();
            let v = values[k].clamp(-1.0, 1.0);
            let v = if v.is_finite() { v } else { 0.0 };
            self.backup(leaf.node, side, v, true);
            if leaf.counts {
                self.done += 1;
            }
            if leaf.node == ROOT {
                self.prepare_root(params, rng);
            }
        }
        self.pending = pending;
        self.pending.clear();
        self.settle_gumbel(params);
    }

    fn descend(&self, params: &SearchParams) -> Descent {
        let mut i = ROOT;
        loop {
            let node = &self.nodes[i as usize];
            match node.state {
                State::Terminal => return Descent::Terminal(i),
                State::Pending => return Descent::Collision,
                State::Unexpanded => return Descent::Leaf(i),
                State::Expanded => {
                    i = if i == ROOT && self.gumbel.is_some() {
                        self.gumbel_child(params)
                    } else {
                        self.puct_child(i, params)
                    };
                }
            }
        }
    }

    /// Prepares the root for a search once its children and priors exist: Dirichlet noise
    /// (PUCT) or the Gumbel candidates (Gumbel).
    fn prepare_root<R: Rng + ?Sized>(&mut self, params: &SearchParams, rng: &mut R) {
        if self.root_prepared {
            return;
        }
        self.root_prepared = true;
        match params.algorithm {
            Algorithm::Puct => self.add_root_noise(params, rng),
            Algorithm::Gumbel => self.start_gumbel(params, rng),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{After, Move, Variant};
    use rand::SeedableRng;

    /// Runs the search to its end under uniform priors, every leaf valued by `value`.
    fn run_valued(
        tree: &mut Tree,
        params: &SearchParams,
        leaves: usize,
        value: impl Fn(&Position) -> f32,
    ) {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
        let (mut positions, mut masks) = (Vec::new(), Vec::new());
        while !tree.is_done() {
            positions.clear();
            masks.clear();
            let n = tree.select(params, leaves, &mut positions, &mut masks);
            assert_eq!(n, tree.pending());
            let values: Vec<f32> = positions.iter().map(&value).collect();
            tree.apply(params, &vec![1.0; n * ACTIONS], &values, &mut rng);
        }
    }

    /// Runs the search to its end with every leaf valued 0 under uniform priors.
    fn run_uniform(tree: &mut Tree, params: &SearchParams, leaves: usize) {
        run_valued(tree, params, leaves, |_| 0.0);
    }

    /// A position (reached by playing first moves) whose side to move can win at once.
    fn position_with_a_winning_move() -> Position {
        let mut pos = Position::start(Variant::Kujifunza);
        for _ in 0..10_000 {
            let moves = pos.legal_moves();
            if moves.iter().any(|lm| matches!(lm.after, After::Won(_))) {
                return pos;
            }
            match moves.iter().next().expect("the game goes on").after {
                After::Position(p) => pos = p,
                After::Won(_) => unreachable!("checked above"),
            }
        }
        panic!("no winning move within 10000 plies");
    }

    #[test]
    fn an_immediate_win_is_proven_at_expansion_without_an_evaluation() {
        let pos = position_with_a_winning_move();
        let params = SearchParams::default();
        let mut tree = Tree::new(pos);
        let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
        tree.begin(&params, 8, false, &mut rng);
        let (mut positions, mut masks) = (Vec::new(), Vec::new());
        tree.select(&params, 1, &mut positions, &mut masks);
        assert!(positions.is_empty(), "no leaf was sent to the evaluator");
        assert!(tree.root_proven());
        let r = tree.result(&params);
        assert_eq!(r.root_proven_win, Some(true));
        assert_eq!(r.root_value, 1.0);
        let best = r.best_move.expect("a move");
        let lm = pos.legal_moves().get(best).copied().expect("legal");
        assert!(matches!(lm.after, After::Won(_)), "the proven move wins");
    }

    #[test]
    fn virtual_loss_spreads_one_call_over_distinct_leaves() {
        let params = SearchParams::default();
        let mut tree = Tree::new(Position::start(Variant::Kujifunza));
        let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
        tree.begin(&params, 64, false, &mut rng);
        let (mut positions, mut masks) = (Vec::new(), Vec::new());
        tree.select(&params, 8, &mut positions, &mut masks); // the root's own evaluation
        tree.apply(&params, &vec![1.0; ACTIONS], &[0.0], &mut rng);
        positions.clear();
        masks.clear();
        let n = tree.select(&params, 8, &mut positions, &mut masks);
        assert_eq!(n, 8);
        let distinct: std::collections::HashSet<u64> =
            positions.iter().map(|p| p.hash64()).collect();
        assert_eq!(distinct.len(), 8, "eight different leaves");
    }

    #[test]
    fn visits_add_up_and_advance_keeps_the_subtree() {
        let params = SearchParams::default();
        let mut tree = Tree::new(Position::start(Variant::Kujifunza));
        let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
        tree.begin(&params, 100, false, &mut rng);
        run_uniform(&mut tree, &params, 4);
        let r = tree.result(&params);
        assert_eq!(r.simulations, 100);
        assert_eq!(r.child_visits, 100);
        let sum: f32 = r.policy.iter().sum();
        assert!((sum - 1.0).abs() < 1e-5, "the policy target sums to {sum}");
        let best = r.best_move.expect("a move");
        let kept = r.children.iter().find(|c| c.mv == best).unwrap().visits;
        let after = match Position::start(Variant::Kujifunza)
            .legal_moves()
            .get(best)
            .unwrap()
            .after
        {
            After::Position(p) => p,
            After::Won(_) => unreachable!("no win from the start"),
        };
        assert!(tree.advance(best, Some(after)));
        assert_eq!(tree.root_position(), &after);
        assert_eq!(tree.nodes[ROOT as usize].visits, kept);
        assert_eq!(
            tree.nodes[ROOT as usize].parent, NONE,
            "the new root has no parent"
        );
    }

    /// A player keeps its whole tree until its next search; `advance_to` then finds the
    /// position after our move and the reply two plies down and keeps exactly that subtree
    /// (the same visits, values and shape as two `advance` calls give), in the arena the last
    /// move left spare.
    #[test]
    fn advance_to_keeps_a_grandchilds_subtree_as_two_advances_do() {
        let params = SearchParams::default();
        let start = Position::start(Variant::Kiswahili);
        let mut rng = rand::rngs::SmallRng::seed_from_u64(2);
        let mut tree = Tree::new(start);
        tree.begin(&params, 3000, false, &mut rng);
        run_valued(&mut tree, &params, 8, |p| {
            (p.hash64() % 200) as f32 / 100.0 - 1.0
        });
        let (ours, reply, grandchild) = {
            let root = &tree.nodes[ROOT as usize];
            let c = root
                .children()
                .max_by_key(|&c| tree.nodes[c].visits)
                .unwrap();
            let g = tree.nodes[c]
                .children()
                .filter(|&g| tree.nodes[g].state != State::Terminal)
                .max_by_key(|&g| tree.nodes[g].visits)
                .unwrap();
            let mv = |n: usize| Move::from_action(tree.nodes[n].action as usize).unwrap();
            (mv(c), mv(g), tree.nodes[g].pos)
        };
        let mut stepwise = tree.clone();
        assert!(stepwise.advance(ours, None) && stepwise.advance(reply, None));
        let capacity = tree.nodes.capacity();
        assert!(tree.advance_to(&grandchild));
        assert_eq!(tree.root_position(), &grandchild);
        assert!(
            tree.nodes[ROOT as usize].visits > 10,
            "a real subtree was kept"
        );
        let shape = |t: &Tree| {
            t.nodes
                .iter()
                .map(|n| {
                    (
                        n.pos.hash64(),
                        n.visits,
                        n.w.to_bits(),
                        n.parent,
                        n.first_child,
                    )
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(shape(&tree), shape(&stepwise));
        assert_eq!(
            tree.spare.capacity(),
            capacity,
            "the old arena is kept for the next move"
        );
        assert!(tree.advance_to(&grandchild), "already the root");
        assert!(!tree.advance_to(&start), "not below the root");
    }

    #[test]
    fn forced_playouts_visit_every_child_and_pruning_takes_them_back() {
        let params = SearchParams {
            forced_playouts: 2.0,
            ..SearchParams::default()
        };
        let mut tree = Tree::new(Position::start(Variant::Kiswahili));
        let mut rng = rand::rngs::SmallRng::seed_from_u64(3);
        tree.begin(&params, 400, true, &mut rng);
        // Values that differ from move to move, so PUCT alone would leave the poor moves
        // almost unvisited and forced playouts have work to do.
        run_valued(&mut tree, &params, 1, |p| {
            (p.hash64() % 1000) as f32 / 500.0 - 1.0
        });
        let range = tree.nodes[ROOT as usize].children();
        let n: f32 = range.clone().map(|c| tree.nodes[c].visits as f32).sum();
        for c in range.clone() {
            let owed = (2.0 * tree.nodes[c].prior * n).sqrt();
            assert!(
                tree.nodes[c].visits as f32 + 1.0 >= owed,
                "child {c}: {} visits, owed {owed}",
                tree.nodes[c].visits
            );
        }
        let r = tree.result(&params);
        let best = r.best_move.expect("a move");
        let k = r.children.iter().position(|c| c.mv == best).unwrap();
        let pruned = tree.target_visits(&params, Some(range.start + k));
        let raw: Vec<f32> = r.children.iter().map(|c| c.visits as f32).collect();
        assert_eq!(pruned[k], raw[k], "the best child keeps its visits");
        assert!(pruned.iter().zip(&raw).all(|(p, r)| p <= r));
        assert!(
            pruned.iter().sum::<f32>() < raw.iter().sum::<f32>(),
            "some forced visits were taken back"
        );
        let sum: f32 = r.policy.iter().sum();
        assert!((sum - 1.0).abs() < 1e-5);
        assert!(r.policy[r.children[k].action] >= raw[k] / n);
        // Without noise (a player's search) nothing is forced or pruned.
        let mut quiet = Tree::new(Position::start(Variant::Kiswahili));
        quiet.begin(&params, 100, false, &mut rng);
        run_uniform(&mut quiet, &params, 1);
        let r = quiet.result(&params);
        let raw: Vec<f32> = r.children.iter().map(|c| c.visits as f32).collect();
        assert_eq!(quiet.target_visits(&params, Some(0)), raw);
    }
}
