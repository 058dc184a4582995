//! Training: lockstep self-play ([`selfplay`]), the run config and its generation schedule
//! ([`runconfig`], [`schedule`]), minibatch steps ([`minibatch`]), the resumable loop
//! ([`train`]) and its history, labels from the solver or a teacher ([`label`]),
//! distillation into a smaller network ([`distill`]), the equal-time strength curve
//! ([`gauntlet`]) and the fleet that runs the same loop
//! over object storage ([`fleet`]); where a run's CPU time went ([`cost`]); its record kept in the repository ([`snapshot`]).

pub mod cost;
pub mod distill;
pub mod fleet;
pub mod gauntlet;
pub mod history;
pub mod label;
pub mod minibatch;
pub mod runconfig;
pub mod runlock;
pub mod schedule;
pub mod selfplay;
pub mod snapshot;
pub mod train;
