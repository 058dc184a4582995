//! How much of real play the solver proves: positions of game records solved within a budget
//! each, counted by ply (`bao solve --games`).

use std::time::Duration;

use anyhow::Context;
use serde::Serialize;

use super::{Solver, Value};
use crate::dataio::records::GameRecord;
use crate::game::Position;

/// Plies per row of the survey.
pub const BUCKET: usize = 10;

/// One row: the positions of plies `from..from + BUCKET`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PlyRow {
    pub plies: String,
    pub positions: u32,
    pub proven_win: u32,
    pub proven_loss: u32,
    pub share_proven: f64,
}

/// The positions of `records` (every `every`-th ply, games over excluded) with their ply.
pub fn positions(records: &[GameRecord], every: usize) -> anyhow::Result<Vec<(usize, Position)>> {
    let mut out = Vec::new();
    for (g, rec) in records.iter().enumerate() {
        let (line, _) = rec.replay().with_context(|| format!("game {}", g + 1))?;
        for (ply, p) in line.iter().enumerate().step_by(every.max(1)) {
            if !p.legal_moves().is_empty() {
                out.push((ply, *p));
            }
        }
    }
    Ok(out)
}

/// Solves each position within `budget` (one warm table); `tick` is called after each.
pub fn survey(
    positions: &[(usize, Position)],
    budget: Duration,
    tt_mb: usize,
    mut tick: impl FnMut(),
) -> Vec<PlyRow> {
    let mut rows: Vec<PlyRow> = Vec::new();
    let mut solver = Solver::new(budget, tt_mb);
    for (ply, p) in positions {
        let b = ply / BUCKET;
        if rows.len() <= b {
            rows.resize(b + 1, PlyRow::default());
        }
        let row = &mut rows[b];
        row.positions += 1;
        match solver.solve_value(p) {
            Value::Win => row.proven_win += 1,
            Value::Loss => row.proven_loss += 1,
            Value::Unknown => {}
        }
        tick();
    }
    for (b, row) in rows.iter_mut().enumerate() {
        row.plies = format!("{}-{}", b * BUCKET, b * BUCKET + BUCKET - 1);
        row.share_proven = (row.proven_win + row.proven_loss) as f64 / row.positions.max(1) as f64;
    }
    rows.retain(|r| r.positions > 0);
    rows
}
