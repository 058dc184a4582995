//! Search: Monte Carlo tree search guided by an [`Evaluator`].
//!
//! [`Tree`] is one search tree driven in select / evaluate / apply halves, so the lockstep
//! self-play driver ([`crate::program::selfplay`]) can batch leaves of many trees into one
//! evaluator call; [`Mcts`] runs one tree for players and analysis.

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
