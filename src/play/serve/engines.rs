//! The engines a served page may play against: the operator's player specs, built per variant,
//! shared by all games, with a cap on concurrent thinking and on the time of one request.
//!
//! Clients name an engine only by one of the offered spec texts; they can never pass a spec
//! of their own (an `ext:` spec runs a command, a `net:` spec reads a file).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::Context;
use tokio::sync::Semaphore;

use crate::game::{Position, Variant};
use crate::play::players::{self, ChosenMove, Limits, Player, PlayerSpec};
use crate::search::alphabeta::AlphaBetaParams;

/// Extra wall time a request waits beyond the engine time, for the search to return its move.
const GRACE: Duration = Duration::from_millis(1500);

/// Why an engine gave no move.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("no engine `{name}` for {variant}; offered: {offered}")]
    Unknown {
        name: String,
        variant: Variant,
        offered: String,
    },
    #[error("the engine did not answer within {0} ms (engines busy, or its spec asks for more work than --engine-ms allows)")]
    TimedOut(u128),
    #[error("the engine failed: {0:#}")]
    Failed(anyhow::Error),
}

/// Idle instances of one spec for one variant; more are built when all are busy (at most as
/// many as there are thinking permits).
struct Pool {
    variant: Variant,
    spec: PlayerSpec,
    name: String,
    limits: Limits,
    idle: Mutex<Vec<Box<dyn Player>>>,
}

/// Every offered engine of every variant.
pub struct Engines {
    pools: Vec<Arc<Pool>>,
    thinking: Arc<Semaphore>,
    engine_time: Duration,
}

impl Engines {
    /// Builds one instance of every spec for every variant it can play (a network plays only
    /// the variant it was trained for). Fails when a spec plays neither variant, naming why.
    pub fn build(
        specs: &[PlayerSpec],
        engine_time: Duration,
        threads: usize,
    ) -> anyhow::Result<Engines> {
        let mut pools = Vec::new();
        for spec in specs {
            let mut errors = Vec::new();
            for variant in Variant::ALL {
                match players::build(spec, variant, rand::random()) {
                    Ok(mut player) => {
                        // A network's first search pays libtorch's start-up; pay it here,
                        // not in the first request's time.
                        if matches!(spec, PlayerSpec::Net(_)) {
                            let warm = Limits {
                                sims: Some(1),
                                ..Limits::default()
                            };
                            player
                                .choose(&Position::start(variant), &warm)
                                .with_context(|| format!("warming up `{spec}`"))?;
                        }
                        pools.push(Arc::new(Pool {
                            variant,
                            spec: spec.clone(),
                            name: spec.to_string(),
                            limits: limits_for(spec, engine_time),
                            idle: Mutex::new(vec![player]),
                        }));
                    }
                    Err(e) => errors.push(format!("{variant}: {e:#}")),
                }
            }
            anyhow::ensure!(
                errors.len() < Variant::ALL.len(),
                "opponent `{spec}` plays no variant: {}",
                errors.join("; ")
            );
            for e in errors {
                tracing::info!("opponent `{spec}` not offered for {e}");
            }
        }
        Ok(Engines {
            pools,
            thinking: Arc::new(Semaphore::new(threads.max(1))),
            engine_time,
        })
    }

    /// The engine names offered for a variant, in the operator's order (the first is the default).
    pub fn offered(&self, variant: Variant) -> Vec<String> {
        self.pools
            .iter()
            .filter(|p| p.variant == variant)
            .map(|p| p.name.clone())
            .collect()
    }

    pub fn engine_time(&self) -> Duration {
        self.engine_time
    }

    fn pool(&self, variant: Variant, name: &str) -> Result<Arc<Pool>, EngineError> {
        self.pools
            .iter()
            .find(|p| p.variant == variant && p.name == name)
            .cloned()
            .ok_or_else(|| EngineError::Unknown {
                name: name.chars().take(200).collect(),
                variant,
                offered: self.offered(variant).join(", "),
            })
    }

    /// Checks that `name` is offered for `variant`.
    pub fn check(&self, variant: Variant, name: &str) -> Result<(), EngineError> {
        self.pool(variant, name).map(|_| ())
    }

    /// Asks engine `name` for a move of `pos`, waiting at most the engine time (plus a little
    /// to return). A search that overruns keeps its thinking permit until it ends, so the cap
    /// on concurrent thinking holds even then.
    pub async fn choose(
        &self,
        variant: Variant,
        name: &str,
        pos: Position,
    ) -> Result<ChosenMove, EngineError> {
        let pool = self.pool(variant, name)?;
        let budget = self.engine_time + GRACE;
        let thinking = self.thinking.clone();
        let work = async move {
            let permit = thinking
                .acquire_owned()
                .await
                .map_err(|e| EngineError::Failed(e.into()))?;
            let task = tokio::task::spawn_blocking(move || {
                let _permit = permit;
                let taken = pool
                    .idle
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .pop();
                let mut player = match taken {
                    Some(p) => p,
                    None => players::build(&pool.spec, pool.variant, rand::random())
                        .with_context(|| format!("building engine `{}`", pool.name))?,
                };
                let chosen = player.choose(&pos, &pool.limits);
                // A player that failed may be broken (a dead external engine): drop it.
                if chosen.is_ok() {
                    pool.idle
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(player);
                }
                chosen
            });
            match task.await {
                Ok(result) => result.map_err(EngineError::Failed),
                Err(join) => Err(EngineError::Failed(anyhow::anyhow!(
                    "engine task ended abnormally: {join}"
                ))),
            }
        };
        tokio::time::timeout(budget, work)
            .await
            .unwrap_or(Err(EngineError::TimedOut(self.engine_time.as_millis())))
    }
}

/// The per-move limits of a spec under the server's engine time: the spec's own limits where
/// they are smaller, the engine time as a time limit wherever the player honours one (a search
/// given a count and no time keeps its count, bounded by the engine time).
fn limits_for(spec: &PlayerSpec, engine_time: Duration) -> Limits {
    let cap = |ms: Option<u64>| {
        Some(ms.map_or(engine_time, |m| Duration::from_millis(m).min(engine_time)))
    };
    let timed = |sims, depth, ms| Limits {
        sims,
        depth,
        movetime: cap(ms),
        ..Limits::default()
    };
    match spec {
        PlayerSpec::Random { .. } | PlayerSpec::Greedy { .. } => Limits::default(),
        PlayerSpec::AlphaBeta(p) => timed(
            p.depth
                .or(p.ms.is_none().then_some(AlphaBetaParams::DEFAULT_DEPTH)),
            None,
            p.ms,
        ),
        PlayerSpec::Mcts(p) => timed(p.sims.or(p.ms.is_none().then(|| p.sims())), None, p.ms),
        PlayerSpec::Net(p) => timed(p.sims.or(p.ms.is_none().then(|| p.sims())), None, p.ms),
        PlayerSpec::Ext(p) => timed(p.sims, p.depth, p.ms),
    }
}
