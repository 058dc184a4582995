//! The position options several subcommands share: `--variant`, `--position`, `--moves`.

use anyhow::{bail, Context};

use crate::game::{After, Position, Variant};

#[derive(Debug, Clone, clap::Args)]
pub struct PositionArgs {
    /// Variant (taken from --position when that is given).
    #[arg(long)]
    pub variant: Option<Variant>,
    /// The position: an R13 JSON state, or a file holding one. Default: the start position.
    #[arg(long)]
    pub position: Option<String>,
    /// Moves in R12 notation played from the position first, e.g. "A7L a5R".
    #[arg(long)]
    pub moves: Option<String>,
}

impl PositionArgs {
    /// The position asked for: `--position` (JSON text or file) or the start, then `--moves`.
    pub fn resolve(&self) -> anyhow::Result<Position> {
        let start = match &self.position {
            None => Position::start(self.variant.context("give --variant or --position")?),
            Some(p) => {
                let text = if p.trim_start().starts_with('{') {
                    p.clone()
                } else {
                    std::fs::read_to_string(p)
                        .with_context(|| format!("cannot read position file {p}"))?
                };
                let pos =
                    Position::from_json(text.trim()).with_context(|| format!("--position {p}"))?;
                if let Some(v) = self.variant.filter(|&v| v != pos.variant()) {
                    bail!("--variant {v} but the position is {}", pos.variant());
                }
                pos
            }
        };
        let moves: Vec<&str> = self
            .moves
            .as_deref()
            .map(|m| m.split_whitespace().collect())
            .unwrap_or_default();
        match start.play_line(&moves).context("--moves")? {
            After::Position(pos) => Ok(pos),
            After::Won(o) => bail!(
                "--moves: the game is over ({} wins, {})",
                o.winner,
                o.reason.name()
            ),
        }
    }
}
