//! `bao serve`: play Bao in the browser (see `play::serve` and docs/play.md#playing-in-the-browser-bao-serve).

use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use crate::play::players::PlayerSpec;
use crate::play::serve::guard::Access;
use crate::play::serve::{run as serve, ServeConfig};

/// Serve a page to play either variant against engines, or two people at one page, with the
/// JSON API behind it. Listens on localhost unless told otherwise.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Address to listen on (port 0: any free port; the address is printed).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub addr: SocketAddr,
    /// An opponent to offer (player spec, as for `bao play`); repeat for several, the first is
    /// the default. Default: the shipped networks found under models/ and alpha-beta, each
    /// thinking 1000 ms a move, then greedy and random.
    #[arg(long = "opponent")]
    pub opponents: Vec<String>,
    /// Most live games; when full, the game idle longest (over --idle-minutes) is closed.
    #[arg(long, default_value_t = 64)]
    pub max_games: usize,
    /// Minutes a game must be idle before a new game may replace it.
    #[arg(long, default_value_t = 30)]
    pub idle_minutes: u64,
    /// Engine time for one request, in milliseconds (a move or a hint).
    #[arg(long, default_value_t = 5000)]
    pub engine_ms: u64,
    /// Most engine searches at once.
    #[arg(long, default_value_t = 1)]
    pub engine_threads: usize,
    /// A further Host name the server answers (besides localhost, 127.0.0.1, [::1] and the
    /// --addr IP), e.g. the machine's name when listening on 0.0.0.0; repeat for several.
    /// Requests naming any other Host get 403, which defeats DNS rebinding.
    #[arg(long = "allow-host")]
    pub allow_hosts: Vec<String>,
    /// A further origin (`http://name:port`) whose pages may call the API; repeat for several.
    /// The page's own origin is always allowed; any other gets 403.
    #[arg(long = "allow-origin")]
    pub allow_origins: Vec<String>,
    /// Seconds a client may take to send a request's headers, and again its body; a slower
    /// one is disconnected (headers) or answered 408 (body).
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    pub read_timeout: u64,
}

/// The opponents offered when none is named.
fn default_opponents() -> Vec<String> {
    let mut specs: Vec<String> = [
        "models/kiswahili.safetensors",
        "models/kujifunza.safetensors",
    ]
    .into_iter()
    .filter(|p| Path::new(p).is_file())
    .map(|p| format!("net:{p}:ms=1000"))
    .collect();
    specs.extend(["alphabeta:ms=1000", "greedy", "random"].map(String::from));
    specs
}

pub fn run(args: Args) -> anyhow::Result<()> {
    for origin in &args.allow_origins {
        crate::play::serve::guard::check_origin(origin)?;
    }
    let texts = if args.opponents.is_empty() {
        default_opponents()
    } else {
        args.opponents
    };
    let opponents = texts
        .iter()
        .map(|t| t.parse::<PlayerSpec>())
        .collect::<Result<Vec<_>, _>>()?;
    let config = ServeConfig {
        opponents,
        max_games: args.max_games,
        idle: Duration::from_secs(args.idle_minutes * 60),
        engine_time: Duration::from_millis(args.engine_ms),
        engine_threads: args.engine_threads,
        access: Access::new(Some(args.addr), &args.allow_hosts, &args.allow_origins),
        read_timeout: Duration::from_secs(args.read_timeout),
    };
    serve(args.addr, &config, |addr| {
        if !addr.ip().is_loopback() {
            eprintln!("note: listening on {addr}, reachable from other machines; the API has no authentication");
        }
        // Scripts and tests read this line for the port.
        println!("bao serve: listening on http://{addr}/");
        let _ = std::io::stdout().flush();
    })
}
