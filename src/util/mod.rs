//! Small helpers every room uses: progress bars ([`progress`]), seed derivation
//! ([`seeds`]), so that every random choice is reproducible from one run seed, and the one
//! way errors quote user input ([`quote`]).

pub mod progress;
pub mod quote;
pub mod seeds;
