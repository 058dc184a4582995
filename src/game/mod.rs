//! The rules core: both Bao variants exactly as `docs/RULES.md` defines them.
//!
//! Depends on nothing but `std`, `serde` (JSON, R13), `thiserror` and `rayon` (batched
//! stepping). It knows nothing of search or networks; they see it through [`Position`],
//! [`MoveList`], the action space ([`action`]) and the feature encoding ([`features`]).

pub mod action;
pub mod batch;
pub mod display;
pub mod features;
pub mod json;
mod movegen;
pub mod notation;
mod position;
pub mod random_games;
pub mod reference;
mod ring;
pub mod trace;
mod types;

pub use action::{mirror_action, ACTIONS};
pub use movegen::{After, IllegalMove, LegalMove, MoveList};
pub use position::{facing, Position, Stage, NYUMBA, PACKED_LEN, TOTAL_SEEDS};
pub use types::{Dir, Hole, Move, MoveKind, Outcome, Side, Variant, WinReason};
