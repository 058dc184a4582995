//! Programs built from the parts: self-play, training, players, tournaments.

pub mod elo;
pub mod fleet;
pub mod players;
pub mod random_games;
pub mod selfplay;
pub mod sprt;
pub mod train;
pub mod tournament;
