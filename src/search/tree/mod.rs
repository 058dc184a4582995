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

use rand::Rng;
use rand_distr::{Distribution, Gamma, Gumbel};

use super::params::{Algorithm, SearchParams};
use crate::game::{After, Move, Position, Side, ACTIONS};

const ROOT: u32 = 0;
const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Children not generated yet.
    Unexpanded,
    /// Children generated, waiting for the evaluator's priors and value.
    Pending,
    Expanded,
    /// The game is over here (a winning capture into it, or no legal move in it).
    Terminal,
}

#[derive(Clone, Copy, Debug)]
struct Node {
    /// The position at this node; for a terminal "won" child, a copy of the parent's.
    pos: Position,
    parent: u32,
    first_child: u32,
    n_children: u8,
    action: u8,
    state: State,
    /// Exact result for `mover`: 1 won, -1 lost, 0 unknown.
    proven: i8,
    /// The side that played the move into this node.
    mover: Side,
    visits: u32,
    in_flight: u32,
    /// Sum of backed-up values, from `mover`'s point of view.
    w: f32,
    prior: f32,
}

impl Node {
    fn new(pos: Position, parent: u32, action: u8, mover: Side) -> Node {
        Node {
            pos,
            parent,
            first_child: NONE,
            n_children: 0,
            action,
            state: State::Unexpanded,
            proven: 0,
            mover,
            visits: 0,
            in_flight: 0,
            w: 0.0,
            prior: 0.0,
        }
    }
    fn children(&self) -> std::ops::Range<usize> {
        if self.first_child == NONE {
            0..0
        } else {
            self.first_child as usize..self.first_child as usize + self.n_children as usize
        }
    }
    /// Mean value for `mover`, if visited.
    fn q(&self) -> Option<f32> {
        (self.visits > 0).then(|| self.w / self.visits as f32)
    }
}

/// Root state of a Gumbel search (sequential halving over the candidates).
#[derive(Clone, Debug)]
struct GumbelRoot {
    /// Per root child (same order as the children): Gumbel sample + log prior.
    base_score: Vec<f32>,
    /// Visits each child had when this search began (trees are reused).
    start_visits: Vec<u32>,
    /// Still-competing children, as offsets from the first child.
    remaining: Vec<usize>,
    /// Visits this search that every remaining candidate should reach in this phase.
    target: u32,
    phases: u32,
    budget: u32,
}

/// Statistics of one root child after a search.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChildInfo {
    pub mv: Move,
    pub action: usize,
    pub visits: u32,
    /// Prior after root noise, if any.
    pub prior: f32,
    /// Mean value for the side to move at the root, if visited.
    pub q: Option<f32>,
    /// Exact result of this move for the side to move at the root, when proven.
    pub proven_win: Option<bool>,
}

/// What a search found.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchResult {
    /// The move to play (proven win first, then most visits or the Gumbel winner); `None`
    /// when the side to move has no legal move.
    pub best_move: Option<Move>,
    /// Expected result for the side to move at the root, in `[-1, 1]` (exact when proven).
    pub root_value: f32,
    /// `Some(true)` when the side to move has a forced win, `Some(false)` a forced loss.
    pub root_proven_win: Option<bool>,
    /// Root children in move-list order.
    pub children: Vec<ChildInfo>,
    /// The policy training target: visit distribution (PUCT) or completed-Q improved policy
    /// (Gumbel), indexed by action, zero on illegal actions.
    pub policy: [f32; ACTIONS],
    /// Principal variation: most visited moves from the root down.
    pub pv: Vec<Move>,
    /// Simulations run by this search (not counting the root's own evaluation).
    pub simulations: u32,
    /// Visits of the root child subtrees, tree reuse included.
    pub child_visits: u32,
}

impl SearchResult {
    /// Legal-action mask of the root.
    pub fn legal_mask(&self) -> u64 {
        self.children.iter().fold(0, |m, c| m | 1u64 << c.action)
    }

    /// Samples a move with probability proportional to `visits^(1/temperature)`;
    /// temperature 0 (or no visits) gives [`SearchResult::best_move`].
    pub fn sample_move<R: Rng + ?Sized>(&self, temperature: f32, rng: &mut R) -> Option<Move> {
        let total: u32 = self.children.iter().map(|c| c.visits).sum();
        if temperature <= 1e-3 || total == 0 || self.root_proven_win == Some(true) {
            return self.best_move;
        }
        let max = self.children.iter().map(|c| c.visits).max().unwrap_or(0) as f64;
        let weights: Vec<f64> = self
            .children
            .iter()
            .map(|c| (c.visits as f64 / max).powf(1.0 / temperature as f64))
            .collect();
        let sum: f64 = weights.iter().sum();
        let mut x = rng.random::<f64>() * sum;
        for (c, w) in self.children.iter().zip(&weights) {
            if x < *w {
                return Some(c.mv);
            }
            x -= w;
        }
        self.best_move
    }
}

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
        self.nodes[ROOT as usize].proven != 0
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
                    let v = node.proven as f32;
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

    /// Generates a leaf's children and queues it for evaluation, or settles it at once when
    /// the side to move has no move (lost) or a move that wins now (won: no evaluation).
    fn expand(
        &mut self,
        i: u32,
        counts: bool,
        positions: &mut Vec<Position>,
        masks: &mut Vec<u64>,
    ) {
        let pos = self.nodes[i as usize].pos;
        let moves = pos.legal_moves();
        if moves.is_empty() {
            // The side to move has lost: an exact win for the node's mover.
            let node = &mut self.nodes[i as usize];
            node.state = State::Terminal;
            node.proven = 1;
            let mover = node.mover;
            if counts {
                self.done += 1;
            }
            self.backup(i, mover, 1.0, false);
            return;
        }
        let first = self.nodes.len() as u32;
        let me = pos.to_move();
        for lm in moves.iter() {
            let mut child = Node::new(pos, i, lm.mv.action() as u8, me);
            match lm.after {
                After::Position(p) => child.pos = p,
                After::Won(_) => {
                    child.state = State::Terminal;
                    child.proven = 1;
                }
            }
            self.nodes.push(child);
        }
        let node = &mut self.nodes[i as usize];
        node.first_child = first;
        node.n_children = moves.len() as u8;
        let wins = moves
            .iter()
            .filter(|lm| matches!(lm.after, After::Won(_)))
            .count();
        if wins > 0 {
            // Won for the side to move: the winning moves share the prior (so a principal
            // variation and a policy target point at them), and the exact value goes up.
            for c in first as usize..first as usize + moves.len() {
                self.nodes[c].prior = if self.nodes[c].proven == 1 {
                    1.0 / wins as f32
                } else {
                    0.0
                };
            }
            let node = &mut self.nodes[i as usize];
            node.state = State::Expanded;
            node.proven = -1;
            if counts {
                self.done += 1;
            }
            self.backup(i, me, 1.0, false);
            return;
        }
        node.state = State::Pending;
        positions.push(pos);
        masks.push(moves.mask());
        self.add_in_flight(i);
        self.pending.push(PendingLeaf { node: i, counts });
    }

    fn add_in_flight(&mut self, mut i: u32) {
        loop {
            self.nodes[i as usize].in_flight += 1;
            if i == ROOT {
                break;
            }
            i = self.nodes[i as usize].parent;
        }
    }

    /// Adds value `v` (for `side`) to every node from `i` up to the root, and propagates
    /// proven results.
    fn backup(&mut self, mut i: u32, side: Side, v: f32, in_flight: bool) {
        let mut check = self.nodes[i as usize].proven != 0;
        loop {
            let node = &mut self.nodes[i as usize];
            node.visits += 1;
            node.w += if node.mover == side { v } else { -v };
            if in_flight {
                node.in_flight -= 1;
            }
            if check {
                check = self.settle(i);
            }
            if i == ROOT {
                break;
            }
            i = self.nodes[i as usize].parent;
        }
    }

    /// Recomputes a node's proven result from its children; true when it is now proven.
    fn settle(&mut self, i: u32) -> bool {
        let node = &self.nodes[i as usize];
        if node.proven != 0 {
            return true;
        }
        if node.state != State::Expanded {
            return false;
        }
        let range = node.children();
        let mut all_lost = true;
        for c in range {
            match self.nodes[c].proven {
                1 => {
                    self.nodes[i as usize].proven = -1;
                    return true;
                }
                -1 => {}
                _ => all_lost = false,
            }
        }
        if all_lost {
            self.nodes[i as usize].proven = 1;
        }
        all_lost
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

    /// PUCT with first-play urgency and virtual loss.
    fn puct_child(&self, i: u32, params: &SearchParams) -> u32 {
        let node = &self.nodes[i as usize];
        let side = node.pos.to_move();
        let n_parent = (node.visits + node.in_flight) as f32;
        let c_explore = params.c_puct
            + params.c_puct_factor
                * ((n_parent + params.c_puct_base + 1.0) / params.c_puct_base).ln();
        let sqrt_n = n_parent.max(1.0).sqrt();
        let parent_q = node
            .q()
            .map_or(0.0, |q| if node.mover == side { q } else { -q });
        let range = node.children();
        let visited_prior: f32 = range
            .clone()
            .filter(|&c| self.nodes[c].visits + self.nodes[c].in_flight > 0)
            .map(|c| self.nodes[c].prior)
            .sum();
        let reduction = if i == ROOT {
            params.fpu_reduction_root
        } else {
            params.fpu_reduction
        };
        let fpu = parent_q - reduction * visited_prior.sqrt();
        let mut best = range.start;
        let mut best_score = f32::NEG_INFINITY;
        for c in range {
            let child = &self.nodes[c];
            if child.proven == 1 {
                return c as u32;
            }
            let n = child.visits + child.in_flight;
            let q = if child.proven == -1 {
                -1.0
            } else if n == 0 {
                fpu
            } else {
                (child.w - params.virtual_loss * child.in_flight as f32) / n as f32
            };
            let score = q + c_explore * child.prior * sqrt_n / (1.0 + n as f32);
            if score > best_score {
                best_score = score;
                best = c;
            }
        }
        best as u32
    }

    /// Prepares the root for a search once its children and priors exist: Dirichlet noise
    /// (PUCT) or the Gumbel candidates (Gumbel).
    fn prepare_root<R: Rng + ?Sized>(&mut self, params: &SearchParams, rng: &mut R) {
        if self.root_prepared {
            return;
        }
        self.root_prepared = true;
        let range = self.nodes[ROOT as usize].children();
        match params.algorithm {
            Algorithm::Puct => {
                if !self.noise || params.dirichlet_fraction <= 0.0 || range.len() < 2 {
                    return;
                }
                let gamma = Gamma::new(params.dirichlet_alpha, 1.0).expect("alpha validated > 0");
                let noise: Vec<f32> = range.clone().map(|_| gamma.sample(rng)).collect();
                let sum: f32 = noise.iter().sum();
                if !(sum > 0.0 && sum.is_finite()) {
                    return;
                }
                let f = params.dirichlet_fraction;
                for (c, n) in range.zip(noise) {
                    let prior = &mut self.nodes[c].prior;
                    *prior = (1.0 - f) * *prior + f * n / sum;
                }
            }
            Algorithm::Gumbel => {
                let gumbel = Gumbel::new(0.0f32, 1.0).expect("valid Gumbel");
                let base_score: Vec<f32> = range
                    .clone()
                    .map(|c| {
                        let g = if self.noise { gumbel.sample(rng) } else { 0.0 };
                        g + self.nodes[c].prior.max(1e-30).ln()
                    })
                    .collect();
                let start_visits: Vec<u32> = range.map(|c| self.nodes[c].visits).collect();
                let mut order: Vec<usize> = (0..base_score.len()).collect();
                order.sort_by(|&a, &b| base_score[b].total_cmp(&base_score[a]));
                let m = params.gumbel_m.min(order.len()).max(1);
                order.truncate(m);
                let phases = (m as f32).log2().ceil().max(1.0) as u32;
                let budget = self.target;
                let target = (budget / (phases * m as u32)).max(1);
                self.gumbel = Some(GumbelRoot {
                    base_score,
                    start_visits,
                    remaining: order,
                    target,
                    phases,
                    budget,
                });
            }
        }
    }

    /// Sequential halving: the remaining candidate furthest below this phase's visit target;
    /// when all have reached it, the better half goes on with a higher target.
    fn gumbel_child(&self, params: &SearchParams) -> u32 {
        let g = self.gumbel.as_ref().expect("gumbel root prepared");
        let first = self.nodes[ROOT as usize].first_child as usize;
        let visits = |k: usize| {
            let n = &self.nodes[first + k];
            n.visits + n.in_flight - g.start_visits[k]
        };
        // Proven wins end the competition.
        if let Some(&k) = g
            .remaining
            .iter()
            .find(|&&k| self.nodes[first + k].proven == 1)
        {
            return (first + k) as u32;
        }
        let mut remaining = g.remaining.clone();
        let mut target = g.target;
        loop {
            let below = remaining
                .iter()
                .copied()
                .filter(|&k| visits(k) < target)
                .min_by_key(|&k| visits(k));
            if let Some(k) = below {
                return (first + k) as u32;
            }
            if remaining.len() == 1 {
                return (first + remaining[0]) as u32;
            }
            // Halve (computed on the fly: selection is read-only; `advance_gumbel` records it).
            let scores = self.gumbel_scores(params);
            remaining.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
            remaining.truncate(remaining.len().div_ceil(2));
            target += (g.budget / (g.phases * remaining.len() as u32)).max(1);
        }
    }

    /// Records phase changes of sequential halving so later selections start from them.
    fn settle_gumbel(&mut self, params: &SearchParams) {
        let Some(g) = self.gumbel.as_ref() else {
            return;
        };
        let first = self.nodes[ROOT as usize].first_child as usize;
        let visits = |k: usize| {
            let n = &self.nodes[first + k];
            n.visits + n.in_flight - g.start_visits[k]
        };
        if g.remaining.len() > 1 && g.remaining.iter().all(|&k| visits(k) >= g.target) {
            let scores = self.gumbel_scores(params);
            let g = self.gumbel.as_mut().expect("checked above");
            g.remaining
                .sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
            g.remaining.truncate(g.remaining.len().div_ceil(2));
            g.target += (g.budget / (g.phases * g.remaining.len() as u32)).max(1);
        }
    }

    /// Completed Q of every root child for the side to move, mapped to [0, 1]: the child's
    /// mean when visited, else the mixed value estimate (Danihelka et al., eq. 33, with the
    /// root's search value standing in for the raw network value).
    fn completed_q(&self) -> Vec<f32> {
        let root = &self.nodes[ROOT as usize];
        let range = root.children();
        let side = root.pos.to_move();
        let v_root = root
            .q()
            .map_or(0.0, |q| if root.mover == side { q } else { -q });
        let (mut pq, mut p, mut n) = (0.0f32, 0.0f32, 0u32);
        for c in range.clone() {
            let ch = &self.nodes[c];
            if let Some(q) = ch.q() {
                pq += ch.prior * q;
                p += ch.prior;
                n += ch.visits;
            }
        }
        let v_mix = if p > 0.0 {
            (v_root + n as f32 * pq / p) / (1.0 + n as f32)
        } else {
            v_root
        };
        range
            .map(|c| {
                let ch = &self.nodes[c];
                let q = match ch.proven {
                    1 => 1.0,
                    -1 => -1.0,
                    _ => ch.q().unwrap_or(v_mix),
                };
                (q + 1.0) / 2.0
            })
            .collect()
    }

    /// sigma(completed q) = (c_visit + max visits) * c_scale * q, per root child.
    fn sigma_q(&self, params: &SearchParams) -> Vec<f32> {
        let range = self.nodes[ROOT as usize].children();
        let max_n = range.map(|c| self.nodes[c].visits).max().unwrap_or(0) as f32;
        let scale = (params.gumbel_c_visit + max_n) * params.gumbel_c_scale;
        self.completed_q().into_iter().map(|q| scale * q).collect()
    }

    fn gumbel_scores(&self, params: &SearchParams) -> Vec<f32> {
        let g = self.gumbel.as_ref().expect("gumbel root prepared");
        self.sigma_q(params)
            .into_iter()
            .zip(&g.base_score)
            .map(|(s, b)| s + b)
            .collect()
    }

    /// The result of the current search.
    pub fn result(&self, params: &SearchParams) -> SearchResult {
        let root = &self.nodes[ROOT as usize];
        let side = root.pos.to_move();
        let range = root.children();
        let first = range.start;
        let children: Vec<ChildInfo> = range
            .clone()
            .map(|c| {
                let ch = &self.nodes[c];
                ChildInfo {
                    mv: Move::from_action(ch.action as usize).expect("stored action in range"),
                    action: ch.action as usize,
                    visits: ch.visits,
                    prior: ch.prior,
                    q: ch.q(),
                    proven_win: match ch.proven {
                        1 => Some(true),
                        -1 => Some(false),
                        _ => None,
                    },
                }
            })
            .collect();
        let root_proven_win = match root.proven {
            1 => Some(false),
            -1 => Some(true),
            _ => None,
        };
        let root_value = match root_proven_win {
            Some(true) => 1.0,
            Some(false) => -1.0,
            None => root
                .q()
                .map_or(0.0, |q| if root.mover == side { q } else { -q }),
        };
        let mut policy = [0.0f32; ACTIONS];
        let child_visits: u32 = children.iter().map(|c| c.visits).sum();
        // A proven win is played; a proven loss is never chosen while another move exists.
        let lost = |k: usize| children[k].proven_win == Some(false);
        let all_lost = (0..children.len()).all(lost);
        let best = if children.is_empty() {
            None
        } else if let Some(k) = children.iter().position(|c| c.proven_win == Some(true)) {
            Some(k)
        } else if let (Some(g), Algorithm::Gumbel, false) =
            (&self.gumbel, params.algorithm, all_lost)
        {
            let scores = self.gumbel_scores(params);
            g.remaining
                .iter()
                .copied()
                .filter(|&k| !lost(k))
                .max_by(|&a, &b| scores[a].total_cmp(&scores[b]).then(b.cmp(&a)))
                .or_else(|| {
                    self.most_visited_where(ROOT, |c| !lost(c - first))
                        .map(|c| c - first)
                })
        } else {
            self.most_visited_where(ROOT, |c| all_lost || !lost(c - first))
                .map(|c| c - first)
        };
        match (&self.gumbel, params.algorithm) {
            (Some(_), Algorithm::Gumbel) => {
                // Improved policy: softmax(log prior + sigma(completed q)) over legal moves.
                let sigma = self.sigma_q(params);
                let logits: Vec<f32> = range
                    .clone()
                    .zip(&sigma)
                    .map(|(c, s)| self.nodes[c].prior.max(1e-30).ln() + s)
                    .collect();
                let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                let exps: Vec<f32> = logits.iter().map(|l| (l - max).exp()).collect();
                let sum: f32 = exps.iter().sum();
                for (ch, e) in children.iter().zip(exps) {
                    policy[ch.action] = e / sum;
                }
            }
            _ => {
                for ch in &children {
                    policy[ch.action] = if child_visits > 0 {
                        ch.visits as f32 / child_visits as f32
                    } else {
                        ch.prior
                    };
                }
            }
        }
        let mut pv = Vec::new();
        if let Some(k) = best {
            pv.push(children[k].mv);
            let mut i = first + k;
            while let Some(c) = self.most_visited(i as u32) {
                pv.push(Move::from_action(self.nodes[c].action as usize).expect("action in range"));
                i = c;
            }
        }
        SearchResult {
            best_move: best.map(|k| children[k].mv),
            root_value,
            root_proven_win,
            children,
            policy,
            pv,
            simulations: self.done,
            child_visits,
        }
    }

    /// The child to follow for a principal variation: a proven win, else most visits (ties:
    /// better mean, then move order); `None` for a node without visited children.
    fn most_visited(&self, i: u32) -> Option<usize> {
        self.most_visited_where(i, |_| true)
    }

    /// [`Self::most_visited`] among the children (arena indices) that `allowed` accepts.
    fn most_visited_where(&self, i: u32, allowed: impl Fn(usize) -> bool) -> Option<usize> {
        let node = &self.nodes[i as usize];
        if node.state != State::Expanded {
            return None;
        }
        let range = node.children();
        if let Some(c) = range.clone().find(|&c| self.nodes[c].proven == 1) {
            return Some(c);
        }
        let range = range.filter(|&c| allowed(c));
        let key = |c: usize| {
            let n = &self.nodes[c];
            (n.visits, n.q().unwrap_or(-2.0))
        };
        let best = range.reduce(|a, b| {
            let (ka, kb) = (key(a), key(b));
            if kb.0 > ka.0 || (kb.0 == ka.0 && kb.1 > ka.1) {
                b
            } else {
                a
            }
        })?;
        (self.nodes[best].visits > 0 || i == ROOT).then_some(best)
    }

    /// The move from the root to a child whose position is `pos` (the opponent's reply after
    /// tree reuse kept our move's subtree), if the tree has one.
    pub fn move_to(&self, pos: &Position) -> Option<Move> {
        let root = &self.nodes[ROOT as usize];
        root.children()
            .find(|&c| self.nodes[c].state != State::Terminal && self.nodes[c].pos == *pos)
            .and_then(|c| Move::from_action(self.nodes[c].action as usize))
    }

    /// Makes the child reached by `mv` the new root, keeping its subtree (tree reuse).
    /// Returns false (and starts a fresh tree at the given position) when `mv` is not a
    /// child or the child is a finished game.
    pub fn advance(&mut self, mv: Move, after: Option<Position>) -> bool {
        assert!(self.pending.is_empty(), "advance while leaves are pending");
        let root = &self.nodes[ROOT as usize];
        let found = root
            .children()
            .find(|&c| self.nodes[c].action as usize == mv.action());
        let Some(c) = found else {
            if let Some(p) = after {
                *self = Tree::new(p);
            }
            return false;
        };
        if self.nodes[c].state == State::Terminal {
            if let Some(p) = after {
                *self = Tree::new(p);
            }
            return false;
        }
        // Breadth-first copy of the subtree into a fresh arena; children stay contiguous.
        let mut nodes = Vec::with_capacity(self.nodes.len() / 2 + 16);
        let mut top = self.nodes[c];
        top.parent = NONE;
        top.in_flight = 0;
        nodes.push(top);
        let mut k = 0;
        while k < nodes.len() {
            let old = nodes[k];
            if old.first_child != NONE {
                let first = nodes.len() as u32;
                for oc in old.children() {
                    let mut ch = self.nodes[oc];
                    ch.parent = k as u32;
                    nodes.push(ch);
                }
                nodes[k].first_child = first;
            }
            k += 1;
        }
        self.nodes = nodes;
        self.gumbel = None;
        self.root_prepared = false;
        self.target = 0;
        self.started = 0;
        self.done = 0;
        true
    }
}
