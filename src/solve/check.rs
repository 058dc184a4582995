//! The independent proof checker: replays a proof file (see [`super::strategy`]) with the
//! plain seed-by-seed reference generator ([`crate::game::reference`]), not the fast core
//! the solver searched with, and either confirms the claimed win or names the first listed
//! position where it fails.
//!
//! What a confirmed proof shows: from the root, the winner's listed moves win against every
//! legal reply. Each listed move must be legal; each reply of the loser must lead to a listed
//! position, to the loser's position without a move, or to the winner's win mid-move (R5,
//! R10), never to a win of the loser; and the listed positions must not reach themselves
//! (a cycle would let the loser play for ever, and RULES.md has no repetition rule to end it),
//! so every line of play ends in the winner's win within the longest line reported. Lines the
//! root does not reach are refused, so the size reported is the strategy's own.

use std::collections::HashMap;

use crate::game::reference::Board;
use crate::game::{After, LegalMove, Position, Side, PACKED_LEN};

use super::strategy::ProofLine;

/// Why a proof file was refused. Lines are counted from 1; positions are written as R13 JSON.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    #[error("the proof is empty")]
    Empty,
    #[error("line {line}: {reason}")]
    Malformed { line: usize, reason: String },
    #[error("line {line} lists the position of line {first} again: {state}")]
    Duplicate {
        line: usize,
        first: usize,
        state: String,
    },
    #[error("line {line} has no move; only a first line (a lost root) may go without one")]
    MissingMove { line: usize },
    #[error("line {line}: {winner} is the winner, but {to_move} is to move in {state}")]
    WrongMover {
        line: usize,
        winner: Side,
        to_move: Side,
        state: String,
    },
    #[error("line {line}: `{mv}` is not a legal move in {state}; legal: {legal}")]
    IllegalMove {
        line: usize,
        mv: String,
        state: String,
        legal: String,
    },
    #[error("line {line}: after `{mv}`, the loser's reply `{reply}` wins in {state}")]
    LoserWins {
        line: usize,
        mv: String,
        reply: String,
        state: String,
    },
    #[error(
        "line {line}: `{via}` from {state} reaches a position the proof does not list: {missing}"
    )]
    Unlisted {
        line: usize,
        via: String,
        state: String,
        missing: String,
    },
    #[error("line {line} is reached again from its own strategy (a cycle): {state}")]
    Cycle { line: usize, state: String },
    #[error("line {line} is not reached from the root: {state}")]
    Unreachable { line: usize, state: String },
}

impl CheckError {
    /// The listed position where the check failed (the line named in the message), if any.
    pub fn line(&self) -> Option<usize> {
        match self {
            CheckError::Empty => None,
            CheckError::Malformed { line, .. }
            | CheckError::Duplicate { line, .. }
            | CheckError::MissingMove { line }
            | CheckError::WrongMover { line, .. }
            | CheckError::IllegalMove { line, .. }
            | CheckError::LoserWins { line, .. }
            | CheckError::Unlisted { line, .. }
            | CheckError::Cycle { line, .. }
            | CheckError::Unreachable { line, .. } => Some(*line),
        }
    }
}

/// What a confirmed proof establishes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verified {
    pub root: Position,
    /// The side that wins from the root by force.
    pub winner: Side,
    /// Positions listed (where the winner is to move, plus a lost root).
    pub positions: usize,
    /// The longest line of play from the root to the winner's win, in plies.
    pub longest_line: u32,
    /// The listed positions where the winner is to move, in file order: each is proven won
    /// for its side to move (what `bao solve --make-puzzles` builds on).
    pub won: Vec<Position>,
}

type Key = [u8; PACKED_LEN];

struct Listed {
    /// Line of the file (from 1; blank lines count), the number every error names.
    line: usize,
    pos: Position,
    mv: Option<String>,
}

/// Checks a proof file's text.
pub fn check(text: &str) -> Result<Verified, CheckError> {
    let (listed, index) = parse(text)?;
    let root = &listed[0];
    let winner = match root.mv {
        Some(_) => root.pos.to_move(),
        None => root.pos.to_move().opponent(),
    };
    // Each line's successors among the listed lines, checked in file order so that the first
    // failing line is the one named.
    let mut edges: Vec<Vec<usize>> = Vec::with_capacity(listed.len());
    for (i, l) in listed.iter().enumerate() {
        let line = l.line;
        if l.mv.is_none() && i > 0 {
            return Err(CheckError::MissingMove { line });
        }
        let expected_mover = if l.mv.is_some() {
            winner
        } else {
            winner.opponent()
        };
        if l.pos.to_move() != expected_mover {
            return Err(CheckError::WrongMover {
                line,
                winner,
                to_move: l.pos.to_move(),
                state: l.pos.to_json(),
            });
        }
        edges.push(successors(line, l, &index)?);
    }
    let longest_line = longest_line(&listed, &edges)?;
    Ok(Verified {
        root: root.pos,
        winner,
        positions: listed.len(),
        longest_line,
        won: listed
            .iter()
            .filter(|l| l.mv.is_some())
            .map(|l| l.pos)
            .collect(),
    })
}

/// The listed positions, and where each stands in that list by its packed bytes.
fn parse(text: &str) -> Result<(Vec<Listed>, HashMap<Key, usize>), CheckError> {
    let mut listed: Vec<Listed> = Vec::new();
    let mut index: HashMap<Key, usize> = HashMap::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let malformed = |reason: String| CheckError::Malformed { line, reason };
        let pl: ProofLine = serde_json::from_str(raw).map_err(|e| {
            malformed(format!(
                "not a proof line {{\"state\": <R13 state>, \"move\": \"<R12 move>\"}}: {e}"
            ))
        })?;
        let pos = Position::from_state_json(&pl.state).map_err(|e| malformed(e.to_string()))?;
        if let Some(&first) = index.get(&pos.to_bytes()) {
            return Err(CheckError::Duplicate {
                line,
                first: listed[first].line,
                state: pos.to_json(),
            });
        }
        index.insert(pos.to_bytes(), listed.len());
        listed.push(Listed {
            line,
            pos,
            mv: pl.mv,
        });
    }
    if listed.is_empty() {
        return Err(CheckError::Empty);
    }
    Ok((listed, index))
}

/// The listed lines that line `line` leads to, by the reference generator: after the
/// winner's move and each reply, or (a lost root) after each of the loser's moves.
fn successors(
    line: usize,
    l: &Listed,
    index: &HashMap<Key, usize>,
) -> Result<Vec<usize>, CheckError> {
    let mover = l.pos.to_move();
    let moves = Board::of(&l.pos).legal_moves();
    let state = || l.pos.to_json();
    // The positions where the winner is to move next, each with the moves that reach it.
    let mut reached: Vec<(Position, String)> = Vec::new();
    match &l.mv {
        Some(text) => {
            let chosen = moves
                .iter()
                .find(|lm| lm.notation(mover) == *text)
                .ok_or_else(|| CheckError::IllegalMove {
                    line,
                    mv: text.clone(),
                    state: state(),
                    legal: notations(&moves, mover),
                })?;
            let After::Position(q) = chosen.after else {
                return Ok(Vec::new()); // won mid-move (R5)
            };
            let loser = q.to_move();
            for reply in Board::of(&q).legal_moves() {
                let r = reply.notation(loser);
                match reply.after {
                    After::Won(_) => {
                        return Err(CheckError::LoserWins {
                            line,
                            mv: text.clone(),
                            reply: r,
                            state: state(),
                        })
                    }
                    After::Position(p) => reached.push((p, format!("{text} {r}"))),
                }
            }
        }
        None => {
            for lm in &moves {
                let m = lm.notation(mover);
                match lm.after {
                    // The loser's move wins: the root is not lost.
                    After::Won(_) => {
                        return Err(CheckError::LoserWins {
                            line,
                            mv: "(none: lost root)".into(),
                            reply: m,
                            state: state(),
                        })
                    }
                    After::Position(p) => reached.push((p, m)),
                }
            }
        }
    }
    reached
        .into_iter()
        .map(|(p, via)| {
            index
                .get(&p.to_bytes())
                .copied()
                .ok_or_else(|| CheckError::Unlisted {
                    line,
                    via,
                    state: state(),
                    missing: p.to_json(),
                })
        })
        .collect()
}

fn notations(moves: &[LegalMove], mover: Side) -> String {
    let all: Vec<String> = moves.iter().map(|lm| lm.notation(mover)).collect();
    if all.is_empty() {
        "none".into()
    } else {
        all.join(" ")
    }
}

/// The longest line of play from the root in plies, refusing cycles and lines the root does
/// not reach. A winner's line counts its move and the reply (1 when the move wins or leaves
/// the loser without a move); a lost root counts the loser's move.
fn longest_line(listed: &[Listed], edges: &[Vec<usize>]) -> Result<u32, CheckError> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done(u32),
    }
    let mut mark = vec![Mark::New; listed.len()];
    // Iterative depth-first search: (node, next edge to follow).
    let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
    mark[0] = Mark::Open;
    while let Some(top) = stack.last_mut() {
        let node = top.0;
        if let Some(&child) = edges[node].get(top.1) {
            top.1 += 1;
            match mark[child] {
                Mark::Open => {
                    return Err(CheckError::Cycle {
                        line: listed[child].line,
                        state: listed[child].pos.to_json(),
                    })
                }
                Mark::New => {
                    mark[child] = Mark::Open;
                    stack.push((child, 0));
                }
                Mark::Done(_) => {}
            }
            continue;
        }
        let step = if listed[node].mv.is_some() { 2 } else { 1 };
        let below = edges[node]
            .iter()
            .map(|&c| match mark[c] {
                Mark::Done(d) => d + step,
                _ => unreachable!("children finish before their parent"),
            })
            .max();
        let own = below.unwrap_or(if listed[node].mv.is_some() { 1 } else { 0 });
        mark[node] = Mark::Done(own);
        stack.pop();
    }
    if let Some(i) = mark.iter().position(|m| *m == Mark::New) {
        return Err(CheckError::Unreachable {
            line: listed[i].line,
            state: listed[i].pos.to_json(),
        });
    }
    match mark[0] {
        Mark::Done(d) => Ok(d),
        _ => unreachable!("the root finishes last"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Variant;

    fn listed(n: usize) -> Vec<Listed> {
        (0..n)
            .map(|i| Listed {
                line: i + 1,
                pos: Position::start(Variant::Kujifunza),
                mv: Some("A3R".into()),
            })
            .collect()
    }

    /// A strategy that reaches its own position again never forces the end (no repetition
    /// rule ends it), so it proves nothing.
    #[test]
    fn a_cycle_is_refused() {
        let err = longest_line(&listed(3), &[vec![1], vec![2], vec![1]]).unwrap_err();
        assert!(matches!(err, CheckError::Cycle { line: 2, .. }), "{err}");
    }

    #[test]
    fn longest_line_counts_move_and_reply_and_refuses_unreached_lines() {
        // 1 -> {2, 3}, 3 -> 2; 2 wins at once: 1 + 2 + 2 plies along 1, 3, 2.
        assert_eq!(
            longest_line(&listed(3), &[vec![1, 2], vec![], vec![1]]),
            Ok(5)
        );
        let err = longest_line(&listed(2), &[vec![], vec![]]).unwrap_err();
        assert!(
            matches!(err, CheckError::Unreachable { line: 2, .. }),
            "{err}"
        );
    }
}
