//! Accuracy on proven positions: a strength gauge for Bao la Kujifunza that separates players.
//!
//! Why: in Kujifunza alpha-beta proves most positions of a game in milliseconds, so a match
//! against it splits every paired opening and proven wins are kept by every trained network
//! (measured: docs/journal.md, "Kujifunza: solved puzzles, exact value targets"). What separates players is the positions where
//! keeping the win is hard. A *puzzle* is a position proven won for the side to move in which
//! some moves keep the win and others are proven to throw it away; `bao solve --make-puzzles`
//! collects them from the winner's positions of proof files, and `bao eval --puzzles` scores
//! each player by the share of puzzles where its move (at the stated time) keeps the win.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, ensure, Context};
use serde::{Deserialize, Serialize};

use crate::eval::elo::wilson_interval;
use crate::game::json::StateJson;
use crate::game::{Position, Variant};
use crate::play::players::{self, Limits, PlayerSpec};
use crate::search::ClockKind;
use crate::solve::check::check;
use crate::solve::{Solver, Value};

/// One puzzle: a position won for the side to move, and its moves split by the solver.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Puzzle {
    pub state: StateJson,
    /// Moves (R12) after which the win is still proven.
    pub keep: Vec<String>,
    /// Moves after which the opponent has a proven win.
    pub lose: Vec<String>,
}

/// Builds puzzles from won positions: every legal move is classified by the solver with
/// `per_move` of wall time; a position becomes a puzzle when some moves keep the win, some
/// lose it, and none is left unresolved (so every answer can be judged).
pub fn make_puzzles(
    positions: &[Position],
    per_move: Duration,
    solver: &mut Solver,
    mut tick: impl FnMut(),
) -> Vec<Puzzle> {
    let mut out = Vec::new();
    for pos in positions {
        tick();
        let me = pos.to_move();
        let (mut keep, mut lose) = (Vec::new(), Vec::new());
        let mut resolved = true;
        for (lm, value) in solver.move_values(pos, per_move) {
            match value {
                // The value for the mover after the move.
                Value::Win => keep.push(lm.notation(me)),
                Value::Loss => lose.push(lm.notation(me)),
                Value::Unknown => resolved = false,
            }
        }
        if resolved && !keep.is_empty() && !lose.is_empty() {
            out.push(Puzzle {
                state: pos.to_state_json(),
                keep,
                lose,
            });
        }
    }
    out
}

/// The winner's positions of proof files (each proven won for its side to move), each once;
/// every file is checked first, so only checked proofs contribute.
pub fn won_positions(proofs: &[PathBuf]) -> anyhow::Result<Vec<Position>> {
    let mut positions = Vec::new();
    let mut seen = HashSet::new();
    for file in proofs {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("cannot read proof {}", file.display()))?;
        let verified = check(&text).with_context(|| format!("proof {} refused", file.display()))?;
        positions.extend(
            verified
                .won
                .into_iter()
                .filter(|p| seen.insert(p.to_bytes())),
        );
    }
    Ok(positions)
}

/// Writes puzzles, one JSON line each, atomically.
pub fn write_puzzles(path: &Path, puzzles: &[Puzzle]) -> anyhow::Result<()> {
    let mut text = String::new();
    for p in puzzles {
        text += &serde_json::to_string(p)?;
        text.push('\n');
    }
    crate::dataio::atomic::write_bytes(path, text.as_bytes())
}

/// Reads a puzzle file (one JSON puzzle a line), checking every position and move.
pub fn read_puzzles(path: &Path) -> anyhow::Result<Vec<(Position, Puzzle)>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read puzzles {}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let at = || format!("{} line {}", path.display(), i + 1);
        let p: Puzzle = serde_json::from_str(line).with_context(at)?;
        let pos = Position::from_state_json(&p.state).with_context(at)?;
        for m in p.keep.iter().chain(&p.lose) {
            pos.parse_move(m).with_context(at)?;
        }
        ensure!(
            !p.keep.is_empty() && !p.lose.is_empty(),
            "{}: a puzzle needs moves that keep and moves that lose",
            at()
        );
        out.push((pos, p));
    }
    if out.is_empty() {
        bail!("{} holds no puzzles", path.display());
    }
    Ok(out)
}

/// One player's result on a puzzle set.
#[derive(Clone, Debug, Serialize)]
pub struct PuzzleScore {
    pub player: String,
    pub puzzles: u32,
    /// Puzzles where the player's move kept the win.
    pub kept: u32,
    pub accuracy: f64,
    pub accuracy_ci95: (f64, f64),
    /// Mean thinking time per puzzle (the player's clock).
    pub mean_ms: f64,
}

/// Scores `spec` on `puzzles`, one move each on the thread's CPU clock.
pub fn score(
    spec: &PlayerSpec,
    variant: Variant,
    puzzles: &[(Position, Puzzle)],
    seed: u64,
) -> anyhow::Result<PuzzleScore> {
    let mut player = players::build(spec, variant, seed)?;
    let limits = Limits {
        clock: ClockKind::Cpu,
        ..Limits::default()
    };
    let (mut kept, mut spent) = (0u32, Duration::ZERO);
    for (i, (pos, p)) in puzzles.iter().enumerate() {
        ensure!(
            pos.variant() == variant,
            "puzzle {} is not {variant}",
            i + 1
        );
        player.new_game(seed.wrapping_add(i as u64));
        let start = crate::search::clock::thread_cpu_time();
        let c = players::choose_legal(player.as_mut(), pos, &limits)
            .with_context(|| format!("{} on puzzle {}", player.name(), i + 1))?;
        spent += crate::search::clock::thread_cpu_time().saturating_sub(start);
        let mv = c.mv.notation(pos.to_move());
        if p.keep.contains(&mv) {
            kept += 1;
        } else {
            ensure!(
                p.lose.contains(&mv),
                "puzzle {}: move {mv} is not classified",
                i + 1
            );
        }
    }
    let n = puzzles.len() as u32;
    Ok(PuzzleScore {
        player: player.name(),
        puzzles: n,
        kept,
        accuracy: kept as f64 / n.max(1) as f64,
        accuracy_ci95: wilson_interval(kept as f64, n as f64, 1.96),
        mean_ms: 1000.0 * spent.as_secs_f64() / n.max(1) as f64,
    })
}
