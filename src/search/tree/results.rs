//! What a search found: the move to play, the root's value and proof, per-move statistics,
//! the policy training target and the principal variation.

use rand::Rng;

use super::node::{Proven, State, ROOT};
use super::Tree;
use crate::game::{Move, ACTIONS};
use crate::search::{Algorithm, SearchParams};

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

impl Tree {
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
                    proven_win: ch.proven.mover_wins(),
                }
            })
            .collect();
        // The root's mover is the side that is not to move there.
        let root_proven_win = root.proven.mover_wins().map(|mover_wins| !mover_wins);
        let root_value = match root_proven_win {
            Some(true) => 1.0,
            Some(false) => -1.0,
            None => root.q_for(side).unwrap_or(0.0),
        };
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
        let policy = match (&self.gumbel, params.algorithm) {
            (Some(_), Algorithm::Gumbel) => self.improved_policy(params),
            _ => {
                // Visits, less the forced ones where forced playouts were on.
                let visits = self.target_visits(params, best.map(|k| first + k));
                let total: f32 = visits.iter().sum();
                let mut policy = [0.0f32; ACTIONS];
                for (ch, v) in children.iter().zip(visits) {
                    policy[ch.action] = if total > 0.0 { v / total } else { ch.prior };
                }
                policy
            }
        };
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
        if let Some(c) = range.clone().find(|&c| self.nodes[c].proven == Proven::Won) {
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
}
