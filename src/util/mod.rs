//! Small helpers every room uses: progress bars ([`progress`]), seed derivation
//! ([`seeds`]: every random choice reproducible from one run seed) and x-y charts ([`chart`]).

pub mod chart;
pub mod progress;
pub mod seeds;
