//! The greedy player: takes the most seeds this move (a move that wins at once is best);
//! ties are broken at random (seeded), so greedy-vs-greedy games differ.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::{ChosenMove, Limits, Player};
use crate::game::{After, LegalMove, Position};
use crate::search::no_legal_move;

pub struct GreedyPlayer {
    name: String,
    rng: SmallRng,
}

impl GreedyPlayer {
    pub fn new(name: String, seed: u64) -> GreedyPlayer {
        GreedyPlayer {
            name,
            rng: SmallRng::seed_from_u64(seed),
        }
    }
}

/// The greedy score of a move: seeds captured, or more than any capture for a winning move.
pub fn greedy_score(lm: &LegalMove) -> u32 {
    match lm.after {
        After::Won(_) => u32::MAX,
        After::Position(_) => lm.captured as u32,
    }
}

impl Player for GreedyPlayer {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn choose(&mut self, pos: &Position, _limits: &Limits) -> anyhow::Result<ChosenMove> {
        let moves = pos.legal_moves();
        let best = moves
            .iter()
            .map(greedy_score)
            .max()
            .ok_or_else(|| no_legal_move(pos))?;
        let ties: Vec<&LegalMove> = moves.iter().filter(|lm| greedy_score(lm) == best).collect();
        Ok(ChosenMove::bare(
            *ties[self.rng.random_range(0..ties.len())],
        ))
    }

    fn new_game(&mut self, seed: u64) {
        self.rng = SmallRng::seed_from_u64(seed);
    }
}
