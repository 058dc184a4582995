//! Batched stepping: thousands of games at once, features and masks into one buffer.

use rayon::prelude::*;

use super::features::FEATURES;
use super::movegen::MoveList;
use super::position::Position;
use super::types::{Outcome, Variant};

/// One game of a batch, with its legal moves cached.
#[derive(Clone, Debug)]
pub struct BatchGame {
    pub position: Position,
    pub moves: MoveList,
    pub plies: u32,
}

/// What happened to one game in a [`GameBatch::step`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The game goes on.
    Continues,
    /// The game ended (and was restarted from the start position); `plies` it lasted.
    Finished { outcome: Outcome, plies: u32 },
}

/// Many games stepped together (see module docs).
pub struct GameBatch {
    variant: Variant,
    games: Vec<BatchGame>,
}

/// Games per rayon task: big enough that scheduling costs little next to move generation.
const CHUNK: usize = 64;

impl GameBatch {
    pub fn new(variant: Variant, n: usize) -> GameBatch {
        let start = Position::start(variant);
        let moves = start.legal_moves();
        GameBatch { variant, games: vec![BatchGame { position: start, moves, plies: 0 }; n] }
    }
    pub fn variant(&self) -> Variant {
        self.variant
    }
    pub fn len(&self) -> usize {
        self.games.len()
    }
    pub fn is_empty(&self) -> bool {
        self.games.is_empty()
    }
    pub fn games(&self) -> &[BatchGame] {
        &self.games
    }

    /// Writes every game's features (`len() * FEATURES` floats) and legal-action masks.
    pub fn encode(&self, features: &mut [f32], masks: &mut [u64]) {
        assert_eq!(features.len(), self.games.len() * FEATURES);
        assert_eq!(masks.len(), self.games.len());
        features
            .par_chunks_mut(FEATURES * CHUNK)
            .zip(masks.par_chunks_mut(CHUNK))
            .zip(self.games.par_chunks(CHUNK))
            .for_each(|((feat, mask), games)| {
                for ((f, m), g) in feat.chunks_mut(FEATURES).zip(mask.iter_mut()).zip(games) {
                    super::features::encode(&g.position, f);
                    *m = g.moves.mask();
                }
            });
    }

    /// Plays one action per game (it must be legal there), restarting finished games.
    pub fn step(&mut self, actions: &[usize]) -> Vec<Step> {
        todo!("{actions:?}")
    }
}
