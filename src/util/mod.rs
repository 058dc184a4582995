//! Small helpers every room uses: progress bars ([`progress`]), seed derivation
//! ([`seeds`]: every random choice reproducible from one run seed), x-y charts ([`chart`]),
//! CPU time ([`cputime`]), phase timers ([`profile`]), and the one way errors quote user input
//! ([`quote`]).

pub mod chart;
pub mod cputime;
pub mod profile;
pub mod progress;
pub mod quote;
pub mod seeds;
