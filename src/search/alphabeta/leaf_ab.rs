//! `leaf_ab=D`: a network player whose every judged position also gets a D-ply alpha-beta
//! score, mixed into the network's value: an MCTS-minimax hybrid (Baier and Winands, "MCTS-Minimax
//! Hybrids", 2015; Lanctot et al. 2014 found heuristic values mixed into MCTS helping in Kalah,
//! another mancala game).
//!
//! Why: relay sowings and captures are what a small convolutional network reads worst and a
//! shallow search reads exactly. Mixed with a 6-ply search, the shipped Kiswahili network's
//! value predicts held-out results better (mean squared error 0.437 against 0.491; `bao label
//! --score --leaf-ab`), and at 800 simulations a move the mix beat the plain player 134-66.
//! At equal time it did not gain (docs/equal-time.md, "Alpha-beta at the leaves"): the search
//! costs a third of the simulations. The search itself is unchanged: it sees one evaluator
//! ([`crate::search::Evaluator`]), and the evaluation cache in front of this one keeps the mixed
//! values.

use super::{score_to_value, AlphaBeta, AlphaBetaParams, Proof};
use crate::game::Position;
use crate::search::evaluator::batch_size;
use crate::search::{Clock, Evaluator};

/// The alpha-beta of each leaf: its depth and its share of the value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LeafAlphaBeta {
    /// Plies of the search (iterative deepening to it; the quiet end of a relay sowing is part
    /// of the move, so no quiescence search is needed).
    pub depth: u32,
    /// The value is `(1 - weight) * network + weight * alpha-beta`, except where the search
    /// proves the result: then the proven value alone.
    pub weight: f32,
}

impl LeafAlphaBeta {
    /// The weight when the spec names only a depth: at 4 plies, among 0.2, 0.35 and 0.5, the
    /// mix that predicted results best in the measurement above.
    pub const DEFAULT_WEIGHT: f32 = 0.35;
    /// A search costs about twice as much a ply deeper, and 6 plies already take a third of a
    /// timed search's simulations: past 8 a search would spend its time there.
    pub const MAX_DEPTH: u32 = 8;

    /// A depth and weight checked: depth 1 to [`Self::MAX_DEPTH`], weight strictly between 0
    /// and 1 ([`Self::DEFAULT_WEIGHT`] when none). The error says which is wrong.
    pub fn new(depth: u32, weight: Option<f32>) -> Result<LeafAlphaBeta, String> {
        if !(1..=Self::MAX_DEPTH).contains(&depth) {
            return Err(format!(
                "leaf alpha-beta depth {depth}: expected 1 to {} plies (a deeper search at every leaf costs more than the network)",
                Self::MAX_DEPTH
            ));
        }
        let weight = weight.unwrap_or(Self::DEFAULT_WEIGHT);
        if !(weight > 0.0 && weight < 1.0) {
            return Err(format!(
                "leaf alpha-beta weight {weight}: expected a share of the value between 0 and 1, e.g. 0.35"
            ));
        }
        Ok(LeafAlphaBeta { depth, weight })
    }

    /// `value` (the network's, for the side to move) mixed with the alpha-beta `score`.
    pub fn mix(&self, value: f32, score: i32, proof: Proof) -> f32 {
        match proof {
            Proof::Win => 1.0,
            Proof::Loss => -1.0,
            Proof::Unknown => (1.0 - self.weight) * value + self.weight * score_to_value(score),
        }
    }
}

/// An evaluator whose values are mixed with a shallow alpha-beta's (see the module docs).
pub struct LeafAlphaBetaEvaluator<E> {
    inner: E,
    leaf: LeafAlphaBeta,
    /// One searcher for all leaves: its transposition table carries over between the leaves of
    /// a tree, which share most of their subtrees.
    search: AlphaBeta,
}

impl<E: Evaluator> LeafAlphaBetaEvaluator<E> {
    pub fn new(inner: E, leaf: LeafAlphaBeta) -> LeafAlphaBetaEvaluator<E> {
        LeafAlphaBetaEvaluator {
            inner,
            leaf,
            search: AlphaBeta::new(AlphaBetaParams::DEFAULT_TT_MB),
        }
    }
}

impl<E: Evaluator> Evaluator for LeafAlphaBetaEvaluator<E> {
    fn evaluate(
        &mut self,
        positions: &[Position],
        masks: &[u64],
        policy: &mut [f32],
        values: &mut [f32],
    ) -> anyhow::Result<()> {
        batch_size(positions, masks, policy, values)?;
        self.inner.evaluate(positions, masks, policy, values)?;
        // No budget: a fixed depth finishes in well under a millisecond, on the searching
        // thread, so a timed move's clock counts it.
        let unlimited = Clock::unlimited();
        for ((pos, &mask), value) in positions.iter().zip(masks).zip(values.iter_mut()) {
            if mask == 0 {
                // A finished position: the network's value stands (search settles these
                // itself before asking).
                continue;
            }
            let r = self.search.search(pos, self.leaf.depth, &unlimited)?;
            *value = self.leaf.mix(*value, r.score, r.proof());
        }
        Ok(())
    }

    fn name(&self) -> String {
        format!(
            "{} + alpha-beta {} plies at {}",
            self.inner.name(),
            self.leaf.depth,
            self.leaf.weight
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Variant, ACTIONS};
    use crate::search::UniformEvaluator;

    fn judge(leaf: LeafAlphaBeta, pos: &Position) -> (Vec<f32>, f32) {
        let mut e = LeafAlphaBetaEvaluator::new(UniformEvaluator, leaf);
        let mut policy = vec![0.0; ACTIONS];
        let mut value = [0.0f32];
        e.evaluate(
            &[*pos],
            &[pos.legal_moves().mask()],
            &mut policy,
            &mut value,
        )
        .unwrap();
        (policy, value[0])
    }

    #[test]
    fn the_value_is_the_stated_mix_and_the_policy_the_networks() {
        let pos = Position::start(Variant::Kiswahili)
            .play_line(&["A7L", "a5R", "A6L"])
            .unwrap();
        let crate::game::After::Position(pos) = pos else {
            panic!("the line goes on")
        };
        let leaf = LeafAlphaBeta {
            depth: 3,
            weight: 0.4,
        };
        let (policy, value) = judge(leaf, &pos);
        let r = AlphaBeta::new(1)
            .search(&pos, 3, &Clock::unlimited())
            .unwrap();
        assert_eq!(r.proof(), Proof::Unknown);
        assert_ne!(r.score, 0, "a score that moves the value");
        // The uniform evaluator's value is 0, so the mix is the search's share alone.
        assert!(
            (value - 0.4 * score_to_value(r.score)).abs() < 1e-6,
            "{value}"
        );
        let (uniform, _) = judge(
            LeafAlphaBeta {
                depth: 1,
                weight: 0.9,
            },
            &pos,
        );
        assert_eq!(policy, uniform, "the policy is the inner evaluator's");
    }

    #[test]
    fn a_proven_result_replaces_the_value() {
        let leaf = LeafAlphaBeta {
            depth: 4,
            weight: 0.3,
        };
        assert_eq!(leaf.mix(-0.9, 5, Proof::Win), 1.0);
        assert_eq!(leaf.mix(0.9, 5, Proof::Loss), -1.0);
        assert!((leaf.mix(0.5, 0, Proof::Unknown) - 0.35).abs() < 1e-6);
    }
}
