//! Proven-value checks: did a player keep the wins it had? In Kujifunza alpha-beta proves most
//! positions in milliseconds (its start is a proven first-player win), so strength there means
//! never giving a proven value away. With `bao eval --proofs MS`, every move of a tournament is
//! checked outside the players' clocks: was the mover's position a proven win (alpha-beta within
//! `MS` of CPU time), and is the position after the move still a proven loss for the opponent?
//! Every win given away is listed with its position (R13 JSON) and move (R12), so the claim can
//! be checked by anyone (`bao analyze --position ...`, or any solver).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::game::json::StateJson;
use crate::game::{After, LegalMove, Position};
use crate::search::alphabeta::AlphaBetaParams;
use crate::search::alphabeta::{AlphaBeta, Proof};
use crate::search::{Clock, ClockKind};

/// One player's proven-value figures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProofCounts {
    /// Moves made from a position proven won for the mover.
    pub proven_wins: u32,
    /// Of those, moves after which the position is still proven won (or the game won).
    pub kept: u32,
    /// Moves after which the opponent has a proven win: a win given away.
    pub dropped: u32,
    /// Moves after which neither was proven within the budget.
    pub unresolved: u32,
}

impl ProofCounts {
    pub fn merge(&mut self, o: &ProofCounts) {
        self.proven_wins += o.proven_wins;
        self.kept += o.kept;
        self.dropped += o.dropped;
        self.unresolved += o.unresolved;
    }
    /// `kept / (kept + dropped)`: the share of proven wins kept where the result is known.
    pub fn kept_share(&self) -> Option<f64> {
        let known = self.kept + self.dropped;
        (known > 0).then(|| self.kept as f64 / known as f64)
    }
}

/// A proven win given away: the position, and the move that gave it away.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DroppedWin {
    pub position: StateJson,
    #[serde(rename = "move")]
    pub mv: String,
}

/// Classifies moves with an alpha-beta solver of a fixed CPU budget per position.
pub struct ProofChecker {
    solver: AlphaBeta,
    budget: Duration,
}

impl ProofChecker {
    pub fn new(budget: Duration) -> ProofChecker {
        ProofChecker {
            solver: AlphaBeta::new(AlphaBetaParams::DEFAULT_TT_MB),
            budget,
        }
    }

    /// The proof for the side to move at `pos` (a position without a move is lost).
    fn prove(&mut self, pos: &Position) -> Proof {
        let clock = Clock::start(ClockKind::Cpu, Some(self.budget), None);
        self.solver
            .search(pos, AlphaBetaParams::MAX_DEPTH, &clock)
            .map_or(Proof::Loss, |r| r.proof())
    }

    /// Adds the move `lm`, played from `pos`, to `counts`; returns it when it gave a proven
    /// win away.
    pub fn check(
        &mut self,
        pos: &Position,
        lm: &LegalMove,
        counts: &mut ProofCounts,
    ) -> Option<DroppedWin> {
        if self.prove(pos) != Proof::Win {
            return None;
        }
        counts.proven_wins += 1;
        let after = match lm.after {
            After::Won(_) => Proof::Loss,
            After::Position(p) => self.prove(&p),
        };
        match after {
            // The opponent, to move after it, has lost.
            Proof::Loss => counts.kept += 1,
            Proof::Win => {
                counts.dropped += 1;
                return Some(DroppedWin {
                    position: pos.to_state_json(),
                    mv: lm.notation(pos.to_move()),
                });
            }
            Proof::Unknown => counts.unresolved += 1,
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Variant;

    /// Plays first moves until the side to move has a proven win and a move that throws it
    /// away (one after which the opponent wins by force), then checks both kinds of move.
    #[test]
    fn a_kept_and_a_dropped_win_are_told_apart() {
        let mut checker = ProofChecker::new(Duration::from_millis(200));
        let mut pos = Position::start(Variant::Kujifunza);
        for _ in 0..400 {
            if checker.prove(&pos) == Proof::Win {
                let moves = pos.legal_moves();
                let mut kept = None;
                let mut dropped = None;
                for lm in moves.iter() {
                    let after = match lm.after {
                        After::Won(_) => Proof::Loss,
                        After::Position(p) => checker.prove(&p),
                    };
                    match after {
                        Proof::Loss => kept = kept.or(Some(*lm)),
                        Proof::Win => dropped = dropped.or(Some(*lm)),
                        Proof::Unknown => {}
                    }
                }
                if let (Some(k), Some(d)) = (kept, dropped) {
                    let mut counts = ProofCounts::default();
                    assert_eq!(checker.check(&pos, &k, &mut counts), None);
                    let lost = checker.check(&pos, &d, &mut counts).expect("a dropped win");
                    assert_eq!(lost.mv, d.notation(pos.to_move()));
                    assert_eq!(Position::from_state_json(&lost.position).unwrap(), pos);
                    assert_eq!(
                        counts,
                        ProofCounts {
                            proven_wins: 2,
                            kept: 1,
                            dropped: 1,
                            unresolved: 0
                        }
                    );
                    assert_eq!(counts.kept_share(), Some(0.5));
                    return;
                }
            }
            match pos.legal_moves().iter().next().expect("a move").after {
                After::Position(p) => pos = p,
                After::Won(_) => pos = Position::start(Variant::Kujifunza),
            }
        }
        panic!("no position with both a winning and a losing move in 400 plies");
    }
}
