//! The `alphabeta` player: [`crate::search::alphabeta`] behind the [`Player`] trait.

use std::time::Duration;

use super::{Analysis, ChosenMove, Limits, MoveScore, Player};
use crate::game::Position;
use crate::search::alphabeta::{score_to_value, AlphaBeta, AlphaBetaParams, SearchReport};

/// The `alphabeta` player.
pub struct AlphaBetaPlayer {
    name: String,
    params: AlphaBetaParams,
    search: AlphaBeta,
}

impl AlphaBetaPlayer {
    pub fn new(name: String, params: AlphaBetaParams) -> AlphaBetaPlayer {
        let search = AlphaBeta::new(params.tt_mb.unwrap_or(AlphaBetaParams::DEFAULT_TT_MB));
        AlphaBetaPlayer {
            name,
            params,
            search,
        }
    }

    /// The depth and time of one move: explicit limits replace the spec's.
    fn budget(&self, limits: &Limits) -> (u32, Option<Duration>) {
        let (depth, ms) = if limits.overrides() {
            (limits.depth, limits.movetime)
        } else {
            (self.params.depth, self.params.ms.map(Duration::from_millis))
        };
        match (depth, ms) {
            (None, None) => (AlphaBetaParams::DEFAULT_DEPTH, None),
            (Some(d), t) => (d.min(AlphaBetaParams::MAX_DEPTH), t),
            (None, t) => (AlphaBetaParams::MAX_DEPTH, t),
        }
    }
}

impl Player for AlphaBetaPlayer {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn choose(&mut self, pos: &Position, limits: &Limits) -> anyhow::Result<ChosenMove> {
        let (depth, time) = self.budget(limits);
        let r = self.search.search(pos, depth, &limits.clock_for(time))?;
        Ok(chosen_move(pos, &r))
    }

    fn new_game(&mut self, _seed: u64) {
        self.search.clear();
    }
}

/// The move a search of `pos` chose, with what it saw (also the network player's move when
/// its proof-first search proves a win).
pub fn chosen_move(pos: &Position, r: &SearchReport) -> ChosenMove {
    let mut mover = pos.to_move();
    let pv =
        r.pv.iter()
            .map(|lm| {
                let s = lm.notation(mover);
                mover = mover.opponent();
                s
            })
            .collect();
    let value = score_to_value(r.score);
    ChosenMove {
        mv: r.best,
        analysis: Analysis {
            value: Some(value),
            top: vec![MoveScore {
                notation: r.best.notation(pos.to_move()),
                visits: None,
                score: Some(value),
            }],
            pv,
            nodes: Some(r.nodes),
            depth: Some(r.depth),
            batch_fill: None,
        },
    }
}
