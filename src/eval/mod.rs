//! Measuring strength: tournaments with paired openings ([`tournament`]), Elo and its
//! interval ([`elo`]), sequential tests ([`sprt`]), per-move costs ([`movecost`]), proven
//! wins kept or given away ([`proofs`]) and accuracy on proven puzzles ([`puzzles`]).

pub mod elo;
pub mod movecost;
pub mod pentanomial;
pub mod proofs;
pub mod puzzles;
pub mod sprt;
pub mod sweep;
pub mod tournament;
pub mod tune;
