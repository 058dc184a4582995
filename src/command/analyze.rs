//! `bao analyze`: search one position with a network and print every move's visits, prior
//! and value, the position's value and the expected line.

use std::path::PathBuf;

use anyhow::Context;

use super::position::PositionArgs;

use crate::game::Position;
use crate::neuralnet::DeviceChoice;
use crate::search::analyze::{analyze, Report};

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
bao analyze --variant kiswahili --moves \"A7L a5R\" --model models/kiswahili.safetensors\n  \
bao analyze --position state.json --model models/kujifunza.safetensors --sims 2000 --json\n  \
bao analyze --position '{\"variant\":\"kujifunza\",...}' --model M --set c_puct=2.0")]
pub struct Args {
    #[command(flatten)]
    pub at: PositionArgs,
    /// Network checkpoint (`.safetensors`) guiding the search.
    #[arg(long)]
    pub model: PathBuf,
    /// Simulations of the search.
    #[arg(long, default_value_t = 800)]
    pub sims: usize,
    /// Search parameter override KEY=VALUE (TOML value) over the checkpoint's own search
    /// settings, e.g. c_puct=2.0 or algorithm=gumbel; checked as a config's [search] is.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Moves to list (all with --json).
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
    #[arg(long, default_value = "auto")]
    pub device: DeviceChoice,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let pos = args.at.resolve()?;
    let choice = crate::setup::NetChoice {
        device: args.device,
        ..Default::default()
    };
    let mut evaluator = crate::setup::evaluator(&args.model, Some(pos.variant()), &choice)
        .with_context(|| format!("cannot load network {}", args.model.display()))?;
    let trained_with = evaluator
        .network()
        .search_params()
        .cloned()
        .unwrap_or_default();
    let params = trained_with.with_assignments("--set", &args.set)?;
    let report = analyze(&pos, &mut evaluator, params, args.sims, args.seed)?;
    if args.json {
        let v = serde_json::json!({"state": pos.to_state_json(), "analysis": report});
        println!("{v}");
    } else {
        println!("{pos}");
        print!("{}", render(&pos, &report, args.top));
    }
    Ok(())
}

/// The report as a table for the terminal.
fn render(pos: &Position, r: &Report, top: usize) -> String {
    let verdict = match r.proven_win {
        Some(true) => "  forced win".to_string(),
        Some(false) => "  forced loss".to_string(),
        None => String::new(),
    };
    let mut out = format!(
        "{} to move: value {:+.3} (win probability {:.0}%) after {} simulations{verdict}\n",
        pos.to_move(),
        r.value,
        100.0 * r.win_probability(),
        r.simulations
    );
    out += &format!(
        "{:<6} {:>7} {:>6} {:>7} {:>7}\n",
        "move", "visits", "share", "prior", "value"
    );
    let total = r.moves.iter().map(|m| m.visits).sum::<u32>().max(1) as f32;
    for m in r.moves.iter().take(top) {
        let value = match (m.proven_win, m.value) {
            (Some(true), _) => "win".to_string(),
            (Some(false), _) => "loss".to_string(),
            (None, Some(v)) => format!("{v:+.3}"),
            (None, None) => "-".to_string(),
        };
        out += &format!(
            "{:<6} {:>7} {:>5.1}% {:>6.1}% {:>7}\n",
            m.notation,
            m.visits,
            100.0 * m.visits as f32 / total,
            100.0 * m.prior,
            value
        );
    }
    if r.moves.len() > top {
        out += &format!("({} more moves)\n", r.moves.len() - top);
    }
    out += &format!("principal variation: {}\n", r.pv.join(" "));
    out
}
