//! Programs built from the parts: self-play, training, players, tournaments.

pub mod analyze;
pub mod elo;
pub mod fleet;
pub mod game;
pub mod movecost;
pub mod players;
pub mod random_games;
pub mod runlock;
pub mod selfplay;
pub mod serve;
pub mod sprt;
pub mod tournament;
pub mod train;
