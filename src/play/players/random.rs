//! The uniform random player: the Elo anchor (rating 0).

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::{ChosenMove, Limits, Player};
use crate::game::Position;
use crate::search::no_legal_move;

pub struct RandomPlayer {
    name: String,
    rng: SmallRng,
}

impl RandomPlayer {
    pub fn new(name: String, seed: u64) -> RandomPlayer {
        RandomPlayer {
            name,
            rng: SmallRng::seed_from_u64(seed),
        }
    }
}

impl Player for RandomPlayer {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn choose(&mut self, pos: &Position, _limits: &Limits) -> anyhow::Result<ChosenMove> {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            return Err(no_legal_move(pos));
        }
        Ok(ChosenMove::bare(
            moves.as_slice()[self.rng.random_range(0..moves.len())],
        ))
    }

    fn new_game(&mut self, seed: u64) {
        self.rng = SmallRng::seed_from_u64(seed);
    }
}
