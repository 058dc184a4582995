//! Analysis of one position: a search guided by an evaluator, reported move by move.
//!
//! This is what `bao analyze` prints and what a front end shows beside the board: each legal
//! move with its visits, prior and value, the position's value, and the principal variation.

use serde::Serialize;

use crate::game::{After, Move, Position};
use crate::search::{Evaluator, Mcts, SearchParams};

/// One legal move as the search saw it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MoveLine {
    /// R12 notation for the side to move.
    pub notation: String,
    pub visits: u32,
    /// The network's prior for the move (no root noise: analysis is deterministic).
    pub prior: f32,
    /// Mean value of the move for the side to move, in `[-1, 1]`; `None` when unvisited.
    pub value: Option<f32>,
    /// `Some(true)`: the move wins by force; `Some(false)`: it loses by force.
    pub proven_win: Option<bool>,
}

/// What a search of one position found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    pub simulations: u32,
    /// Expected result for the side to move, in `[-1, 1]`.
    pub value: f32,
    pub proven_win: Option<bool>,
    /// Every legal move, best first: forced wins, then by visits (then prior), forced losses last.
    pub moves: Vec<MoveLine>,
    /// The expected line of play from the position, in R12 notation.
    pub pv: Vec<String>,
}

impl Report {
    /// The side to move's chance of winning, from the value.
    pub fn win_probability(&self) -> f32 {
        ((self.value + 1.0) / 2.0).clamp(0.0, 1.0)
    }
}

/// Searches `pos` with `sims` simulations and reports every legal move. Fails on a position
/// without legal moves (the game is over there) or when the evaluator fails.
pub fn analyze(
    pos: &Position,
    evaluator: &mut dyn Evaluator,
    params: SearchParams,
    sims: usize,
    seed: u64,
) -> anyhow::Result<Report> {
    let legal = pos.legal_moves();
    anyhow::ensure!(
        !legal.is_empty(),
        "the game is over in this position: nothing to analyse"
    );
    let mut mcts = Mcts::new(params, seed);
    let result = mcts.search(pos, sims.max(1), evaluator)?;
    let mover = pos.to_move();
    let mut moves: Vec<MoveLine> = result
        .children
        .iter()
        .filter_map(|c| {
            let lm = legal.get(c.mv)?;
            Some(MoveLine {
                notation: lm.notation(mover),
                visits: c.visits,
                prior: c.prior,
                value: match c.proven_win {
                    Some(true) => Some(1.0),
                    Some(false) => Some(-1.0),
                    None => c.q,
                },
                proven_win: c.proven_win,
            })
        })
        .collect();
    let rank = |m: &MoveLine| match m.proven_win {
        Some(true) => 0,
        None => 1,
        Some(false) => 2,
    };
    moves.sort_by(|a, b| {
        rank(a)
            .cmp(&rank(b))
            .then(b.visits.cmp(&a.visits))
            .then(b.prior.total_cmp(&a.prior))
    });
    Ok(Report {
        simulations: result.simulations,
        value: result.root_value.clamp(-1.0, 1.0),
        proven_win: result.root_proven_win,
        moves,
        pv: line_notation(pos, &result.pv),
    })
}

/// A line of moves in R12 notation, played out from `pos` while the moves are legal.
pub fn line_notation(pos: &Position, line: &[Move]) -> Vec<String> {
    let mut out = Vec::new();
    let mut p = *pos;
    for &mv in line {
        let Some(lm) = p.legal_moves().get(mv).copied() else {
            break;
        };
        out.push(lm.notation(p.to_move()));
        match lm.after {
            After::Position(next) => p = next,
            After::Won(_) => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Variant;
    use crate::search::UniformEvaluator;

    #[test]
    fn reports_every_legal_move_with_visits_summing_to_the_search() {
        let pos = Position::start(Variant::Kujifunza);
        let r = analyze(&pos, &mut UniformEvaluator, SearchParams::default(), 200, 1).unwrap();
        assert_eq!(r.moves.len(), pos.legal_moves().len());
        let visits: u32 = r.moves.iter().map(|m| m.visits).sum();
        assert_eq!(visits, r.simulations);
        assert!(r
            .moves
            .windows(2)
            .all(|w| w[0].visits >= w[1].visits || w[0].proven_win == Some(true)));
        assert_eq!(r.pv.first(), Some(&r.moves[0].notation));
        assert!((-1.0..=1.0).contains(&r.value));
    }
}
