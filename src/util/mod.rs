//! Small helpers every room uses: progress bars ([`progress`]) and seed derivation
//! ([`seeds`]), so that every random choice is reproducible from one run seed.

pub mod progress;
pub mod seeds;
