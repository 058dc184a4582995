//! bao-zero: self-play reinforcement learning for Bao.
//!
//! Data flows one way: [`game`] (rules) -> [`search`] -> [`program`] (self-play) ->
//! [`dataio`] (files) -> trainer -> checkpoints ([`neuralnet`]) -> evaluation.

pub mod command;
pub mod config;
pub mod dataio;
pub mod game;
pub mod neuralnet;
pub mod program;
pub mod search;
