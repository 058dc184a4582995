//! The Gumbel root (Danihelka et al., "Policy improvement by planning with Gumbel", 2022):
//! Gumbel-top-m candidates, sequential halving of the simulation budget among them, and the
//! completed-Q improved policy used as the training target.

use rand::Rng;
use rand_distr::{Distribution, Gumbel};

use super::node::{Proven, ROOT};
use super::Tree;
use crate::game::ACTIONS;
use crate::search::SearchParams;

/// Root state of a Gumbel search (sequential halving over the candidates).
#[derive(Clone, Debug)]
pub(super) struct GumbelRoot {
    /// Per root child (same order as the children): Gumbel sample + log prior.
    pub(super) base_score: Vec<f32>,
    /// Visits each child had when this search began (trees are reused).
    start_visits: Vec<u32>,
    /// Still-competing children, as offsets from the first child.
    pub(super) remaining: Vec<usize>,
    /// Visits this search that every remaining candidate should reach in this phase.
    target: u32,
    phases: u32,
    budget: u32,
}

/// Sequential halving's step: keeps the better half of `remaining` (by `scores`) and returns
/// how many more visits each survivor gets in the next phase (`budget / (phases * left)`).
fn halve(remaining: &mut Vec<usize>, scores: &[f32], budget: u32, phases: u32) -> u32 {
    remaining.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
    remaining.truncate(remaining.len().div_ceil(2));
    (budget / (phases * remaining.len() as u32)).max(1)
}

impl Tree {
    /// Draws the candidates once the root's priors exist: the `gumbel_m` children with the
    /// best Gumbel sample + log prior (no sample without noise), `ceil(log2 m)` phases.
    pub(super) fn start_gumbel<R: Rng + ?Sized>(&mut self, params: &SearchParams, rng: &mut R) {
        let range = self.nodes[ROOT as usize].children();
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

    /// Visits candidate `k` received in this search (in flight included).
    fn search_visits(&self, g: &GumbelRoot, k: usize) -> u32 {
        let n = &self.nodes[self.nodes[ROOT as usize].first_child as usize + k];
        n.visits + n.in_flight - g.start_visits[k]
    }

    /// Sequential halving: the remaining candidate furthest below this phase's visit target;
    /// when all have reached it, the better half goes on with a higher target.
    pub(super) fn gumbel_child(&self, params: &SearchParams) -> u32 {
        let g = self.gumbel.as_ref().expect("gumbel root prepared");
        let first = self.nodes[ROOT as usize].first_child as usize;
        // Proven wins end the competition.
        if let Some(&k) = g
            .remaining
            .iter()
            .find(|&&k| self.nodes[first + k].proven == Proven::Won)
        {
            return (first + k) as u32;
        }
        let mut remaining = g.remaining.clone();
        let mut target = g.target;
        loop {
            let below = remaining
                .iter()
                .copied()
                .filter(|&k| self.search_visits(g, k) < target)
                .min_by_key(|&k| self.search_visits(g, k));
            if let Some(k) = below {
                return (first + k) as u32;
            }
            if remaining.len() == 1 {
                return (first + remaining[0]) as u32;
            }
            // Halve on the fly: selection is read-only; `settle_gumbel` records it.
            target += halve(
                &mut remaining,
                &self.gumbel_scores(params),
                g.budget,
                g.phases,
            );
        }
    }

    /// Records phase changes of sequential halving so later selections start from them.
    pub(super) fn settle_gumbel(&mut self, params: &SearchParams) {
        let Some(g) = self.gumbel.as_ref() else {
            return;
        };
        if g.remaining.len() > 1
            && g.remaining
                .iter()
                .all(|&k| self.search_visits(g, k) >= g.target)
        {
            let scores = self.gumbel_scores(params);
            let g = self.gumbel.as_mut().expect("checked above");
            g.target += halve(&mut g.remaining, &scores, g.budget, g.phases);
        }
    }

    /// Completed Q of every root child for the side to move, mapped to [0, 1]: the child's
    /// mean when visited, else the mixed value estimate (Danihelka et al., eq. 33, with the
    /// root's search value standing in for the raw network value).
    fn completed_q(&self) -> Vec<f32> {
        let root = &self.nodes[ROOT as usize];
        let range = root.children();
        let v_root = root.q_for(root.pos.to_move()).unwrap_or(0.0);
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
                let q = ch.proven.value().or(ch.q()).unwrap_or(v_mix);
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

    /// Base score + sigma(completed q) of every root child: what halving ranks by.
    pub(super) fn gumbel_scores(&self, params: &SearchParams) -> Vec<f32> {
        let g = self.gumbel.as_ref().expect("gumbel root prepared");
        self.sigma_q(params)
            .into_iter()
            .zip(&g.base_score)
            .map(|(s, b)| s + b)
            .collect()
    }

    /// The improved policy: softmax(log prior + sigma(completed q)) over the root's moves,
    /// indexed by action.
    pub(super) fn improved_policy(&self, params: &SearchParams) -> [f32; ACTIONS] {
        let range = self.nodes[ROOT as usize].children();
        let logits: Vec<f32> = range
            .clone()
            .zip(self.sigma_q(params))
            .map(|(c, s)| self.nodes[c].prior.max(1e-30).ln() + s)
            .collect();
        let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let exps: Vec<f32> = logits.iter().map(|l| (l - max).exp()).collect();
        let sum: f32 = exps.iter().sum();
        let mut policy = [0.0f32; ACTIONS];
        for (c, e) in range.zip(exps) {
            policy[self.nodes[c].action as usize] = e / sum;
        }
        policy
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Position, Variant};
    use crate::search::Algorithm;

    #[test]
    fn halving_keeps_the_better_half_and_splits_the_budget() {
        let scores = [0.1, 0.9, 0.5, 0.7];
        let mut remaining = vec![0, 1, 2, 3];
        assert_eq!(halve(&mut remaining, &scores, 16, 2), 4);
        assert_eq!(remaining, vec![1, 3]);
        assert_eq!(halve(&mut remaining, &scores, 16, 2), 8);
        assert_eq!(remaining, vec![1]);
        // Never less than one visit a phase.
        let mut remaining = vec![0, 1, 2, 3];
        assert_eq!(halve(&mut remaining, &scores, 1, 2), 1);
    }

    /// With equal priors and values, 16 simulations over m = 4 candidates give two phases:
    /// 2 visits each, then the first two go on to 6 (16 / (2 * 4) = 2, then + 16 / (2 * 2)).
    #[test]
    fn sequential_halving_follows_its_schedule() {
        let params = SearchParams {
            algorithm: Algorithm::Gumbel,
            gumbel_m: 4,
            ..SearchParams::default()
        };
        let mut tree = Tree::new(Position::start(Variant::Kujifunza));
        let mut rng = <rand::rngs::SmallRng as rand::SeedableRng>::seed_from_u64(0);
        tree.begin(&params, 16, false, &mut rng);
        let (mut positions, mut masks) = (Vec::new(), Vec::new());
        while !tree.is_done() {
            positions.clear();
            masks.clear();
            let n = tree.select(&params, 1, &mut positions, &mut masks);
            let uniform = vec![1.0; n * ACTIONS];
            tree.apply(&params, &uniform, &vec![0.0; n], &mut rng);
        }
        let mut visits: Vec<u32> = tree
            .result(&params)
            .children
            .iter()
            .map(|c| c.visits)
            .filter(|&v| v > 0)
            .collect();
        visits.sort_unstable();
        assert_eq!(visits, vec![2, 2, 6, 6]);
    }
}
