//! Programs built from the parts: self-play, training, players, tournaments.

pub mod selfplay;
