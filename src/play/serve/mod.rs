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
    /// The most a client may take to send a request's headers, and again its body.
    pub read_timeout: Duration,
}

/// The state every request sees.
pub struct Server {
    pub games: games::Games,
    pub engines: engines::Engines,
    pub access: guard::Access,
    pub read_timeout: Duration,
}

impl ServeConfig {
    /// Most live games a server may be asked to hold.
    pub const MAX_GAMES: usize = 1_000_000;
    /// Most engine searches at once.
    pub const MAX_ENGINE_THREADS: usize = 1024;

    /// Refuses limits that cannot work, naming the `bao serve` option that sets each.
    pub fn validate(&self) -> anyhow::Result<()> {
        anyhow::ensure!(
            (1..=Self::MAX_GAMES).contains(&self.max_games),
            "--max-games {} is out of range 1..={}",
            self.max_games,
            Self::MAX_GAMES
        );
        anyhow::ensure!(
            (1..=Self::MAX_ENGINE_THREADS).contains(&self.engine_threads),
            "--engine-threads {} is out of range 1..={} (engine searches at once)",
            self.engine_threads,
            Self::MAX_ENGINE_THREADS
        );
        anyhow::ensure!(
            !self.engine_time.is_zero(),
            "--engine-ms must be at least 1"
        );
        anyhow::ensure!(
            !self.read_timeout.is_zero(),
            "--read-timeout must be at least 1 second"
        );
        Ok(())
    }
}

impl Server {
    /// Builds the engines (a spec that plays no variant is an error here, not at the page),
    /// after checking the config's limits.
    pub fn new(config: &ServeConfig) -> anyhow::Result<Arc<Server>> {
        config.validate()?;
        let engines =
            engines::Engines::build(&config.opponents, config.engine_time, config.engine_threads)?;
        Ok(Arc::new(Server {
            games: games::Games::new(config.max_games, config.idle),
            engines,
            access: config.access.clone(),
            read_timeout: config.read_timeout,
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
        let serving = std::pin::pin!(accept_loop(
            listener,
            api::router(server),
            config.read_timeout
        ));
        let interrupted = std::pin::pin!(tokio::signal::ctrl_c());
        match futures::future::select(serving, interrupted).await {
            futures::future::Either::Left((result, _)) => result,
            futures::future::Either::Right(_) => Ok(()),
        }
    })
}

/// Accepts connections for ever, each served on its own task. A client gets `read_timeout`
/// to send a request's headers (the first request's, and each next one's on a kept-alive
/// connection), else it is disconnected; the gate in front of the routes bounds the body's
/// time the same way ([`guard::guard`]).
async fn accept_loop(
    listener: tokio::net::TcpListener,
    app: axum::Router,
    read_timeout: Duration,
) -> anyhow::Result<()> {
    use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
    // HTTP/1 only: telling HTTP/2 apart would first wait for bytes with no timeout.
    let mut builder =
        hyper_util::server::conn::auto::Builder::new(TokioExecutor::new()).http1_only();
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(read_timeout);
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of file descriptors and the like: wait a moment rather than spin.
                tracing::warn!("cannot accept a connection: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        let builder = builder.clone();
        tokio::spawn(async move {
            let _ = builder
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
