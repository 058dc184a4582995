//! Batched stepping: thousands of games at once, features and masks into one buffer.

use rayon::prelude::*;

use super::features::Encoding;
use super::movegen::{After, MoveList};
use super::position::Position;
use super::types::{Outcome, Variant, WinReason};

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
    /// The game ended (and was restarted from the start position) after `plies` plies;
    /// `outcome` is `None` when it hit the ply cap unfinished (R10).
    Finished {
        outcome: Option<Outcome>,
        plies: u32,
    },
}

/// Many games stepped together (see module docs).
pub struct GameBatch {
    variant: Variant,
    games: Vec<BatchGame>,
    max_plies: Option<u32>,
    start: BatchGame,
}

/// Games per rayon task: big enough that scheduling costs little next to move generation.
const CHUNK: usize = 64;

impl GameBatch {
    pub fn new(variant: Variant, n: usize) -> GameBatch {
        let position = Position::start(variant);
        let start = BatchGame {
            position,
            moves: position.legal_moves(),
            plies: 0,
        };
        GameBatch {
            variant,
            games: vec![start.clone(); n],
            max_plies: None,
            start,
        }
    }

    /// Games longer than this many plies end unfinished (R10 adjudication).
    pub fn with_max_plies(mut self, max_plies: u32) -> GameBatch {
        self.max_plies = Some(max_plies);
        self
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

    /// Writes every game's features (`len() * encoding.features()` floats; move features
    /// from the cached legal moves) and legal-action masks.
    pub fn encode(&self, encoding: Encoding, features: &mut [f32], masks: &mut [u64]) {
        let per = encoding.features();
        assert_eq!(features.len(), self.games.len() * per);
        assert_eq!(masks.len(), self.games.len());
        features
            .par_chunks_mut(per * CHUNK)
            .zip(masks.par_chunks_mut(CHUNK))
            .zip(self.games.par_chunks(CHUNK))
            .for_each(|((feat, mask), games)| {
                for ((f, m), g) in feat.chunks_mut(per).zip(mask.iter_mut()).zip(games) {
                    encoding.encode_with_moves(&g.position, &g.moves, f);
                    *m = g.moves.mask();
                }
            });
    }

    /// Plays one action per game, restarting finished games. Panics if an action is not
    /// legal in its game: callers choose actions from the masks [`GameBatch::encode`] wrote.
    pub fn step(&mut self, actions: &[usize]) -> Vec<Step> {
        assert_eq!(actions.len(), self.games.len(), "one action per game");
        let mut steps = vec![Step::Continues; self.games.len()];
        let (start, max_plies) = (&self.start, self.max_plies);
        self.games
            .par_chunks_mut(CHUNK)
            .zip(actions.par_chunks(CHUNK))
            .zip(steps.par_chunks_mut(CHUNK))
            .for_each(|((games, acts), out)| {
                for ((g, &a), o) in games.iter_mut().zip(acts).zip(out) {
                    *o = g.advance(a, max_plies);
                    if *o != Step::Continues {
                        *g = start.clone();
                    }
                }
            });
        steps
    }
}

impl BatchGame {
    /// Plays `action`, keeping the move list of the new position cached.
    fn advance(&mut self, action: usize, max_plies: Option<u32>) -> Step {
        let lm = match self.moves.by_action(action) {
            Some(lm) => *lm,
            None => panic!(
                "action {action} is not legal in game position {}",
                self.position.to_json()
            ),
        };
        self.plies += 1;
        let plies = self.plies;
        match lm.after {
            After::Won(outcome) => Step::Finished {
                outcome: Some(outcome),
                plies,
            },
            After::Position(next) => {
                self.position = next;
                next.legal_moves_into(&mut self.moves);
                if self.moves.is_empty() {
                    let winner = next.to_move().opponent();
                    Step::Finished {
                        outcome: Some(Outcome {
                            winner,
                            reason: WinReason::NoMove,
                        }),
                        plies,
                    }
                } else if max_plies.is_some_and(|m| plies >= m) {
                    Step::Finished {
                        outcome: None,
                        plies,
                    }
                } else {
                    Step::Continues
                }
            }
        }
    }
}
