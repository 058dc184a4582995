//! Interior selection (PUCT with first-play urgency and virtual loss, as in KataGo) and the
//! Dirichlet noise a self-play root gets (AlphaZero).

use rand::Rng;
use rand_distr::{Distribution, Gamma};

use super::node::{Proven, ROOT};
use super::Tree;
use crate::search::SearchParams;

impl Tree {
    /// PUCT with first-play urgency and virtual loss.
    pub(super) fn puct_child(&self, i: u32, params: &SearchParams) -> u32 {
        let node = &self.nodes[i as usize];
        let side = node.pos.to_move();
        let n_parent = (node.visits + node.in_flight) as f32;
        let c_explore = params.c_puct
            + params.c_puct_factor
                * ((n_parent + params.c_puct_base + 1.0) / params.c_puct_base).ln();
        let sqrt_n = n_parent.max(1.0).sqrt();
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
            let score = q + c_explore * child.prior * sqrt_n / (1.0 + n as f32);
            if score > best_score {
                best_score = score;
                best = c;
            }
        }
        best as u32
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
