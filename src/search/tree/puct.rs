//! Interior selection (PUCT with first-play urgency and virtual loss, as in KataGo), the
//! Dirichlet noise a self-play root gets (AlphaZero), and KataGo's forced playouts with
//! policy target pruning.

use rand::Rng;
use rand_distr::{Distribution, Gamma};

use super::node::{Proven, ROOT};
use super::Tree;
use crate::search::{Algorithm, SearchParams};

impl Tree {
    /// The exploration factor of node `i`'s children: `c_explore * sqrt(N)` of the PUCT
    /// formula `Q + c_explore * P * sqrt(N) / (1 + n)`.
    fn exploration(&self, i: u32, params: &SearchParams) -> f32 {
        let node = &self.nodes[i as usize];
        let n_parent = (node.visits + node.in_flight) as f32;
        let c_explore = params.c_puct
            + params.c_puct_factor
                * ((n_parent + params.c_puct_base + 1.0) / params.c_puct_base).ln();
        c_explore * n_parent.max(1.0).sqrt()
    }

    /// PUCT with first-play urgency and virtual loss; forced playouts first at a forcing root.
    pub(super) fn puct_child(&self, i: u32, params: &SearchParams) -> u32 {
        if i == ROOT && self.forcing(params) {
            if let Some(c) = self.forced_child(params) {
                return c;
            }
        }
        let node = &self.nodes[i as usize];
        let side = node.pos.to_move();
        let explore = self.exploration(i, params);
        let parent_q = node.q_for(side).unwrap_or(0.0);
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
            if child.proven == Proven::Won {
                return c as u32;
            }
            let n = child.visits + child.in_flight;
            let q = if child.proven == Proven::Lost {
                -1.0
            } else if n == 0 {
                fpu
            } else {
                (child.w - params.virtual_loss * child.in_flight as f32) / n as f32
            };
            let score = q + explore * child.prior / (1.0 + n as f32);
            if score > best_score {
                best_score = score;
                best = c;
            }
        }
        best as u32
    }

    /// True when forced playouts apply: a PUCT root searched with noise (self-play's full
    /// searches), `forced_playouts` > 0.
    pub(super) fn forcing(&self, params: &SearchParams) -> bool {
        self.noise && params.forced_playouts > 0.0 && params.algorithm == Algorithm::Puct
    }

    /// The visits root child `c` is owed when the root's children have `n` in all:
    /// `sqrt(k * prior * n)`.
    fn forced_visits(&self, params: &SearchParams, c: usize, n: f32) -> f32 {
        (params.forced_playouts * self.nodes[c].prior * n).sqrt()
    }

    /// The root child furthest below its forced visits, if any (none once a child is a
    /// proven win, which PUCT plays at once; proven losses are never forced).
    fn forced_child(&self, params: &SearchParams) -> Option<u32> {
        let range = self.nodes[ROOT as usize].children();
        if range.clone().any(|c| self.nodes[c].proven == Proven::Won) {
            return None;
        }
        let taken = |c: usize| (self.nodes[c].visits + self.nodes[c].in_flight) as f32;
        let n: f32 = range.clone().map(taken).sum();
        range
            .filter(|&c| self.nodes[c].proven != Proven::Lost)
            .map(|c| (c, self.forced_visits(params, c, n) - taken(c)))
            .filter(|&(_, owed)| owed > 0.0)
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(c, _)| c as u32)
    }

    /// Policy target pruning (KataGo): the root children's visits with forced visits taken
    /// back from every child but `best` (arena index), as far as PUCT would not have given
    /// them; a child left with one visit or less gets none. Raw visits when not forcing.
    pub(super) fn target_visits(&self, params: &SearchParams, best: Option<usize>) -> Vec<f32> {
        let range = self.nodes[ROOT as usize].children();
        let raw: Vec<f32> = range.clone().map(|c| self.nodes[c].visits as f32).collect();
        let Some(b) = best.filter(|_| self.forcing(params)) else {
            return raw;
        };
        let side = self.nodes[ROOT as usize].pos.to_move();
        let explore = self.exploration(ROOT, params);
        let n: f32 = raw.iter().sum();
        let puct = |c: usize, visits: f32| {
            self.nodes[c].q_for(side).unwrap_or(0.0)
                + explore * self.nodes[c].prior / (1.0 + visits)
        };
        let best_score = puct(b, self.nodes[b].visits as f32);
        range
            .zip(raw)
            .map(|(c, visits)| {
                let q = self.nodes[c].q_for(side).unwrap_or(0.0);
                if c == b || visits == 0.0 || q >= best_score {
                    return visits;
                }
                // The fewest visits at which PUCT would still not prefer `c` to `best`.
                let needed = explore * self.nodes[c].prior / (best_score - q) - 1.0;
                let kept = (visits - self.forced_visits(params, c, n))
                    .max(needed)
                    .min(visits);
                if kept <= 1.0 {
                    0.0
                } else {
                    kept.ceil().min(visits)
                }
            })
            .collect()
    }

    /// Mixes Dirichlet noise into the root's priors (self-play searches only).
    pub(super) fn add_root_noise<R: Rng + ?Sized>(&mut self, params: &SearchParams, rng: &mut R) {
        let range = self.nodes[ROOT as usize].children();
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
}
