//! Players: everything that can choose a move, behind one trait and one spec syntax.
//!
//! `eval`, `play` and `engine` all name players the same way (see [`PlayerSpec`]), so a
//! player that did well in a tournament can be played against or served as an engine with
//! exactly the same text.

use std::time::Duration;

use crate::game::{LegalMove, Position, Variant};
use crate::search::clock::{Clock, ClockKind, StopSignal};

pub mod alphabeta;
pub mod external;
pub mod greedy;
pub mod net;
pub mod random;
pub mod rollout;
pub mod spec;

pub use spec::PlayerSpec;

/// Per-move limits asked for by the caller (engine `go`). When any of `sims`, `depth` or
/// `movetime` is set they replace the spec's own limits for this move; with none set, the
/// spec's limits apply. Players ignore limits that mean nothing to them. (A default time for
/// players whose spec sets no limit is a spec matter: [`PlayerSpec::with_default_movetime`].)
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Limits {
    /// Search simulations (MCTS players).
    pub sims: Option<u32>,
    /// Search depth in plies (alpha-beta).
    pub depth: Option<u32>,
    /// Thinking time for this move.
    pub movetime: Option<Duration>,
    /// The clock `movetime` and a spec's `ms=` are measured on.
    pub clock: ClockKind,
    /// Raised by another thread to end the search now (engine `stop`).
    pub stop: Option<StopSignal>,
}

impl Limits {
    /// True when the caller set a limit of its own for this move.
    pub fn overrides(&self) -> bool {
        self.sims.is_some() || self.depth.is_some() || self.movetime.is_some()
    }

    /// The clock of one move with budget `budget` (or none).
    pub fn clock_for(&self, budget: Option<Duration>) -> Clock {
        Clock::start(self.clock, budget, self.stop.clone())
    }
}

/// One candidate move as the player judged it, for display.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct MoveScore {
    /// R12 notation for the side to move.
    pub notation: String,
    /// MCTS visits, if the player searched by visits.
    pub visits: Option<u32>,
    /// Score for the side to move in `[-1, 1]` (or the network's prior for raw policy).
    pub score: Option<f32>,
}

/// What a player learned while choosing; everything optional, as players differ.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Analysis {
    /// Expected result for the side to move in `[-1, 1]` (win = 1).
    pub value: Option<f32>,
    /// Best candidates first.
    pub top: Vec<MoveScore>,
    /// Expected line, in R12 notation, starting with the chosen move.
    pub pv: Vec<String>,
    /// Nodes (alpha-beta) or simulations (MCTS) spent.
    pub nodes: Option<u64>,
    /// Completed search depth (alpha-beta).
    pub depth: Option<u32>,
    /// Mean share of the evaluator's batch that was filled (network MCTS with leaf batching).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch_fill: Option<f32>,
}

impl Analysis {
    /// The value as the side to move's win probability (`(v + 1) / 2`).
    pub fn win_probability(&self) -> Option<f32> {
        self.value.map(|v| ((v + 1.0) / 2.0).clamp(0.0, 1.0))
    }
}

/// A player's decision: a legal move of the position it was given, plus analysis.
#[derive(Clone, Debug)]
pub struct ChosenMove {
    pub mv: LegalMove,
    pub analysis: Analysis,
}

impl ChosenMove {
    pub fn bare(mv: LegalMove) -> ChosenMove {
        ChosenMove {
            mv,
            analysis: Analysis::default(),
        }
    }
}

/// Anything that chooses moves. `Send` so that tournaments can run players on worker threads.
pub trait Player: Send {
    /// A short name for tables and logs (the canonical spec text).
    fn name(&self) -> String;

    /// Chooses a legal move of `pos`. Errors when `pos` has no legal move or the player fails
    /// (an external engine died, a network could not run).
    fn choose(&mut self, pos: &Position, limits: &Limits) -> anyhow::Result<ChosenMove>;

    /// A new game starts; random players reseed from `seed` so that every game of a
    /// tournament is reproducible whatever thread plays it.
    fn new_game(&mut self, _seed: u64) {}

    /// False for players that think in another process (external engines): their time cannot
    /// be read from this thread's CPU clock, so tournaments time them on the wall.
    fn thinks_on_this_thread(&self) -> bool {
        true
    }
}

/// Builds a player from its spec for a variant. `seed` seeds random players (a `seed=` in the
/// spec wins over it).
pub fn build(spec: &PlayerSpec, variant: Variant, seed: u64) -> anyhow::Result<Box<dyn Player>> {
    let name = spec.to_string();
    Ok(match spec {
        PlayerSpec::Random { seed: s } => {
            Box::new(random::RandomPlayer::new(name, s.unwrap_or(seed)))
        }
        PlayerSpec::Greedy { seed: s } => {
            Box::new(greedy::GreedyPlayer::new(name, s.unwrap_or(seed)))
        }
        PlayerSpec::AlphaBeta(p) => Box::new(alphabeta::AlphaBetaPlayer::new(name, p.clone())),
        PlayerSpec::Mcts(p) => Box::new(rollout::RolloutMctsPlayer::new(
            name,
            p.clone(),
            p.seed.unwrap_or(seed),
        )),
        PlayerSpec::Net(p) => net::build(name, p, variant, seed)?,
        PlayerSpec::Ext(p) => Box::new(external::ExternalPlayer::spawn(name, p, variant)?),
    })
}

/// Parses and builds in one step (for callers that hold spec text).
pub fn build_str(spec: &str, variant: Variant, seed: u64) -> anyhow::Result<Box<dyn Player>> {
    let spec: PlayerSpec = spec.parse()?;
    build(&spec, variant, seed)
}

/// `player`'s move in `pos`, checked to be one of the position's legal moves: the one rule of
/// what counts as a forfeit, for tournaments (`bao eval`) and `bao play` alike.
pub fn choose_legal(
    player: &mut dyn Player,
    pos: &Position,
    limits: &Limits,
) -> anyhow::Result<ChosenMove> {
    let c = player.choose(pos, limits)?;
    anyhow::ensure!(
        pos.legal_moves().get(c.mv.mv) == Some(&c.mv),
        "illegal move {:?}",
        c.mv.mv
    );
    Ok(c)
}
