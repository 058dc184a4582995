//! The JSON state format (R13), in and out, with errors that name what is wrong.

use serde::{Deserialize, Serialize};

use super::notation::parse_hole;
use super::position::{Position, NYUMBA, TOTAL_SEEDS};
use super::types::{Side, Variant};
use crate::util::quote::{clip, quote, MESSAGE_CHARS};

/// One side of an R13 state. Counts are signed so that a negative count is reported as
/// such rather than as a type error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SideJson {
    pub front: Vec<i64>,
    pub back: Vec<i64>,
    pub hand: i64,
    pub nyumba: bool,
}

/// An R13 state exactly as written on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateJson {
    pub variant: String,
    pub to_move: String,
    #[serde(rename = "S")]
    pub south: SideJson,
    #[serde(rename = "N")]
    pub north: SideJson,
    /// Required like every other key (`null` when no hole is marked): R13 names exactly these.
    #[serde(deserialize_with = "required_nullable")]
    pub takasia: Option<String>,
}

/// An `Option` field that must be present (serde otherwise reads a missing one as `None`).
fn required_nullable<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d)
}

/// Why a state was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid state: {0}")]
pub struct StateError(pub String);

fn err<T>(msg: impl Into<String>) -> Result<T, StateError> {
    Err(StateError(msg.into()))
}

impl Position {
    /// Parses an R13 JSON state, rejecting anything that breaks its rules.
    pub fn from_json(text: &str) -> Result<Position, StateError> {
        let state: StateJson = serde_json::from_str(text).map_err(|e| {
            StateError(format!(
                "not an R13 state: {}",
                clip(&e.to_string(), MESSAGE_CHARS)
            ))
        })?;
        Position::from_state_json(&state)
    }

    /// Validates and converts a parsed R13 state.
    pub fn from_state_json(state: &StateJson) -> Result<Position, StateError> {
        let variant: Variant = state.variant.parse().map_err(StateError)?;
        let to_move = match Side::from_letter(&state.to_move) {
            Some(s) => s,
            None => {
                return err(format!(
                    "to_move must be \"S\" or \"N\", not \"{}\"",
                    quote(&state.to_move)
                ))
            }
        };
        let mut pos = Position::start(variant);
        pos.to_move = to_move;
        for (side, js) in [(Side::South, &state.south), (Side::North, &state.north)] {
            let i = side.index();
            for (row, values) in [("front", &js.front), ("back", &js.back)] {
                if values.len() != 8 {
                    return err(format!(
                        "{side}.{row} has {} holes, expected 8",
                        values.len()
                    ));
                }
                for (k, &v) in values.iter().enumerate() {
                    if !(0..=TOTAL_SEEDS as i64).contains(&v) {
                        return err(format!("{side}.{row}[{k}] = {v}: counts must be 0..=64"));
                    }
                    let ring = if row == "front" { k } else { 15 - k };
                    pos.holes[i][ring] = v as u8;
                }
            }
            if !(0..=TOTAL_SEEDS as i64).contains(&js.hand) {
                return err(format!("{side}.hand = {}: must be 0..=64", js.hand));
            }
            pos.hand[i] = js.hand as u8;
            pos.nyumba[i] = js.nyumba;
            if variant == Variant::Kujifunza && (js.hand != 0 || js.nyumba) {
                return err(format!(
                    "{side}: kujifunza has no seeds in hand and no nyumba"
                ));
            }
        }
        for side in Side::BOTH {
            // R8: ownership ends when the nyumba is emptied, so an owned one holds seeds.
            if pos.nyumba[side.index()] && pos.holes[side.index()][NYUMBA] == 0 {
                return err(format!(
                    "{side} owns an empty nyumba, which cannot arise: emptying it ends its ownership (R8)"
                ));
            }
        }
        // R10: a move never empties its mover's front row, and emptying the opponent's ends
        // the game, so the side to move always has seeds in front.
        if pos.front(to_move).iter().all(|&c| c == 0) {
            return err(format!(
                "{to_move} is to move with an empty front row, which cannot arise: the game ended when it was emptied (R10)"
            ));
        }
        // R10 again: a capture that empties the opponent's front row wins at once, so no state
        // to move from has an empty front row on either side.
        let waiting = to_move.opponent();
        if pos.front(waiting).iter().all(|&c| c == 0) {
            return err(format!(
                "{waiting}'s front row is empty, so the game is over: the capture that emptied it won (R10); there is no position to move from"
            ));
        }
        let total = pos.total_seeds();
        if total != TOTAL_SEEDS {
            return err(format!(
                "the state holds {total} seeds, a game holds exactly 64"
            ));
        }
        pos.takasia = match &state.takasia {
            None => None,
            Some(name) => {
                let (owner, hole) =
                    parse_hole(name).map_err(|e| StateError(format!("takasia: {e}")))?;
                let name = quote(name);
                if owner != to_move || !hole.is_front() {
                    return err(format!(
                        "takasia {name} is not a front hole of the side to move ({to_move})"
                    ));
                }
                if variant == Variant::Kujifunza {
                    return err("kujifunza has no takasia");
                }
                // R9: only a move made with an empty hand creates takasia, and never on a hole
                // of fewer than 2 seeds; the side to move has not moved since.
                let setter = to_move.opponent().index();
                if pos.hand[setter] > 0 {
                    return err(format!(
                        "takasia {name} in the namua stage: {} still has seeds in hand, and only a move made with an empty hand creates takasia (R9)",
                        to_move.opponent()
                    ));
                }
                let seeds = pos.holes[to_move.index()][hole.ring()];
                if seeds < 2 {
                    return err(format!(
                        "takasia {name} on a hole of {seeds} seed(s): takasia never marks a hole with fewer than 2 (R9)"
                    ));
                }
                // R9's other exceptions: nothing is marked on the only occupied hole of the
                // front row, on its only hole of 2 or more seeds, or on an owned nyumba.
                let front = pos.front(to_move);
                if front.iter().filter(|&&c| c > 0).count() == 1 {
                    return err(format!(
                        "takasia {name} on the only occupied hole of {to_move}'s front row: R9 marks nothing then"
                    ));
                }
                if front.iter().filter(|&&c| c >= 2).count() == 1 {
                    return err(format!(
                        "takasia {name} on the only hole of {to_move}'s front row with 2 or more seeds: R9 marks nothing then"
                    ));
                }
                if hole.ring() == NYUMBA && pos.nyumba[to_move.index()] {
                    return err(format!(
                        "takasia {name} on {to_move}'s nyumba, which {to_move} still owns: R9 marks nothing then"
                    ));
                }
                Some(hole.ring() as u8)
            }
        };
        Ok(pos)
    }

    /// This position as an R13 state.
    pub fn to_state_json(&self) -> StateJson {
        let side = |s: Side| SideJson {
            front: self.front(s).iter().map(|&c| c as i64).collect(),
            back: self.back(s).iter().map(|&c| c as i64).collect(),
            hand: self.hand(s) as i64,
            nyumba: self.nyumba_owned(s),
        };
        StateJson {
            variant: self.variant.name().to_string(),
            to_move: self.to_move.letter().to_string(),
            south: side(Side::South),
            north: side(Side::North),
            takasia: self.takasia().map(|h| h.name(self.to_move)),
        }
    }

    /// This position as one line of R13 JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(&self.to_state_json()).expect("state serializes")
    }
}
