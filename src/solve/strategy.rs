//! The proof file: a winning strategy written so that anyone can check it.
//!
//! One JSON object a line, `{"state": <R13 state>, "move": "<R12 move>"}`, for every position
//! of the strategy where the winner is to move: the strategy's move there. The first line is
//! the root. When the root's side to move is the *loser*, the first line has no `"move"`: every
//! move of the loser must then lead to a listed position (or lose at once). Every legal reply
//! of the loser to a listed move must lead to a listed position or to the winner's win; the
//! checker ([`super::check`]) holds a file to exactly that.
//!
//! Positions are listed once each (transpositions share one line), in depth-first order from
//! the root, so a reader can follow a line of play down the file.

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::game::json::StateJson;
use crate::game::Position;

/// One line of a proof file, as written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProofLine {
    pub state: StateJson,
    /// The winner's move here (R12); absent only on a first line whose mover loses.
    #[serde(rename = "move", default, skip_serializing_if = "Option::is_none")]
    pub mv: Option<String>,
}

/// A strategy: its lines, root first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Strategy {
    pub lines: Vec<ProofLine>,
}

impl Strategy {
    /// Adds a line: `mv` is the winner's move at `pos`, or `None` for a lost root.
    pub fn push(&mut self, pos: &Position, mv: Option<String>) {
        self.lines.push(ProofLine {
            state: pos.to_state_json(),
            mv,
        });
    }

    /// Positions listed.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// The file's text: one JSON object a line.
    pub fn to_jsonl(&self) -> String {
        let mut out = String::new();
        for line in &self.lines {
            out += &serde_json::to_string(line).expect("proof lines serialize");
            out.push('\n');
        }
        out
    }

    /// Writes the file atomically (a crash leaves the old file or the new one).
    pub fn write(&self, path: &Path) -> anyhow::Result<()> {
        crate::dataio::atomic::write_with(path, |tmp| {
            let mut f = std::io::BufWriter::new(std::fs::File::create(tmp)?);
            f.write_all(self.to_jsonl().as_bytes())?;
            f.flush()?;
            Ok(())
        })
        .with_context(|| format!("cannot write proof {}", path.display()))
    }
}
