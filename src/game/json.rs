//! The JSON state format (R13), in and out, with errors that name what is wrong.

use serde::{Deserialize, Serialize};

use super::position::Position;

/// One side of an R13 state.
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
    pub takasia: Option<String>,
}

/// Why a state was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid state: {0}")]
pub struct StateError(pub String);

impl Position {
    /// Parses an R13 JSON state, rejecting anything that breaks its rules.
    pub fn from_json(text: &str) -> Result<Position, StateError> {
        todo!("{text}")
    }
    /// Validates and converts a parsed R13 state.
    pub fn from_state_json(state: &StateJson) -> Result<Position, StateError> {
        todo!("{state:?}")
    }
    /// This position as an R13 state.
    pub fn to_state_json(&self) -> StateJson {
        todo!()
    }
    /// This position as one line of R13 JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(&self.to_state_json()).expect("state serializes")
    }
}
