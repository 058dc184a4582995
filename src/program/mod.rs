//! Programs built from the parts: self-play, training, players, tournaments.

pub mod analyze;
pub mod elo;
pub mod fleet;
pub mod game;
pub mod history;
pub mod label;
pub mod minibatch;
pub mod movecost;
pub mod players;
pub mod progress;
pub mod proofs;
pub mod puzzles;
pub mod random_games;
pub mod runconfig;
pub mod runlock;
pub mod schedule;
pub mod seeds;
pub mod selfplay;
pub mod serve;
pub mod solve;
pub mod sprt;
pub mod terminal;
pub mod tournament;
pub mod train;
