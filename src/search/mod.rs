//! Search: Monte Carlo tree search guided by an [`Evaluator`].
//!
//! [`Tree`] is one search tree driven in select / evaluate / apply halves, so the lockstep
//! self-play driver ([`crate::training::selfplay`]) can batch leaves of many trees into one
//! evaluator call; [`Mcts`] runs one tree for players and analysis.

pub mod alphabeta;
pub mod analyze;
pub mod clock;
pub mod evaluator;
mod mcts;
pub mod params;
mod tree;

pub use clock::{Clock, ClockKind, StopSignal};
pub use evaluator::{Evaluator, UniformEvaluator};
pub use mcts::{Mcts, SearchStats};
pub use params::{Algorithm, SearchParams};
pub use tree::{ChildInfo, SearchResult, Tree};

/// The error every search and player returns on a finished position (R10: the side to move
/// has lost, so there is nothing to choose).
pub fn no_legal_move(pos: &crate::game::Position) -> anyhow::Error {
    anyhow::anyhow!(
        "no legal move: the game is over ({} to move has lost)",
        pos.to_move()
    )
}
