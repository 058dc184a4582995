//! Search: Monte Carlo tree search guided by an [`Evaluator`].

pub mod evaluator;

pub use evaluator::{Evaluator, UniformEvaluator};
