//! Programs built from the parts: self-play, training, players, tournaments.

pub mod random_games;
pub mod selfplay;
