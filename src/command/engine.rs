//! `bao engine <player spec>`: the engine protocol ([`crate::play::engine`]) on stdin and
//! stdout.

use anyhow::Context;

use crate::game::Variant;
use crate::play::engine::{serve_stdio, EngineSession};
use crate::play::players::PlayerSpec;
use crate::search::ClockKind;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The player that answers `go`, e.g. `alphabeta:ms=200`.
    pub player: String,
    /// The variant until a `variant` or `position json` command says otherwise (default: the
    /// checkpoint's variant for a `net:` player, else kiswahili).
    #[arg(long)]
    pub variant: Option<Variant>,
    /// The clock `go movetime` and a spec's `ms=` are measured on: `cpu` or `wall`.
    #[arg(long, default_value_t = ClockKind::Cpu)]
    pub clock: ClockKind,
    /// Seed of random players.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// The variant a session starts in: `--variant`, else a network's own (from its sidecar), else
/// Kiswahili.
fn start_variant(args: &Args, spec: &PlayerSpec) -> anyhow::Result<Variant> {
    if let Some(v) = args.variant {
        return Ok(v);
    }
    if let PlayerSpec::Net(p) = spec {
        let meta = crate::neuralnet::CheckpointMeta::read(&p.path)
            .with_context(|| format!("cannot read network {}", p.path.display()))?;
        return Ok(meta.variant);
    }
    Ok(Variant::Kiswahili)
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let spec: PlayerSpec = args.player.parse()?;
    let variant = start_variant(&args, &spec)?;
    let mut session = EngineSession::new(spec, variant, args.seed)?;
    session.set_clock(args.clock);
    serve_stdio(session)
}
