//! `bao serve`: a web page to play Bao in the browser, and the JSON API behind it.
//!
//! - [`api`]: the routes and their JSON (documented in docs/play.md);
//! - [`error`]: the API's errors and body limit;
//! - [`games`]: live games, each behind its own lock, capped in number;
//! - [`engines`]: the offered opponents, shared, capped in concurrent thinking and time;
//! - [`view`]: what a game looks like on the wire (board, legal moves, steps of a move);
//! - [`guard`]: who may call (same origin, local Host names, JSON bodies);
//! - [`assets`]: the page itself (`web/`), compiled in.

pub mod api;
pub mod assets;
pub mod engines;
pub mod error;
pub mod games;
pub mod guard;
pub mod view;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;

use crate::play::players::PlayerSpec;

/// What a server serves and its limits.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    /// The opponents offered, the first per variant being the default.
    pub opponents: Vec<PlayerSpec>,
    /// At most this many live games.
    pub max_games: usize,
    /// A game idle this long may be closed to make room for a new one.
    pub idle: Duration,
    /// The engine's time for one request.
    pub engine_time: Duration,
    /// At most this many engine searches at once (the rest wait, within their time).
    pub engine_threads: usize,
    /// The Host names and origins answered (others get 403).
    pub access: guard::Access,
}

/// The state every request sees.
pub struct Server {
    pub games: games::Games,
    pub engines: engines::Engines,
    pub access: guard::Access,
}

impl Server {
    /// Builds the engines (a spec that plays no variant is an error here, not at the page).
    pub fn new(config: &ServeConfig) -> anyhow::Result<Arc<Server>> {
        let engines =
            engines::Engines::build(&config.opponents, config.engine_time, config.engine_threads)?;
        Ok(Arc::new(Server {
            games: games::Games::new(config.max_games, config.idle),
            engines,
            access: config.access.clone(),
        }))
    }
}

/// Serves until the process ends. `on_listening` gets the bound address (port 0 picks one).
pub fn run(
    addr: SocketAddr,
    config: &ServeConfig,
    on_listening: impl FnOnce(SocketAddr),
) -> anyhow::Result<()> {
    let server = Server::new(config)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("cannot listen on {addr}"))?;
        on_listening(listener.local_addr()?);
        axum::serve(listener, api::router(server))
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await
            .context("server failed")
    })
}
