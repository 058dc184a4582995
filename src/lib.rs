//! bao-zero: self-play reinforcement learning for Bao.
//!
//! Data flows one way: [`game`] (rules) -> [`search`] (MCTS, alpha-beta) and [`neuralnet`]
//! (the network behind search's `Evaluator`) -> [`play`] (players and front ends) ->
//! [`solve`] and [`eval`] (proofs, tournaments) -> [`training`] (self-play, trainer, fleet)
//! -> [`command`] (the `bao` subcommands). [`dataio`] holds the file formats; [`setup`] is
//! the one place commands build evaluators and load run configs; [`util`] holds progress
//! bars and seeds.

pub mod command;
pub mod config;
pub mod dataio;
pub mod eval;
pub mod game;
pub mod neuralnet;
pub mod play;
pub mod search;
pub mod setup;
pub mod solve;
pub mod training;
pub mod util;
