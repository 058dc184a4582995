//! `[gauntlet]`: the run's player against fixed opponents at equal time per move, on paired
//! openings: the run's own strength curve, Elo against CPU-hours (`RUN/gauntlet.csv`,
//! `RUN/gauntlet.svg`, one JSON per point in `RUN/gauntlet/`).
//!
//! Why equal time: a network that is only rated at a fixed number of simulations looks
//! stronger the bigger it gets, while at play it is the time a move that is fixed; the
//! strength that counts is the one at the clock the player will have. Why paired openings and
//! pentanomial Elo: in Kiswahili South wins most games whoever plays it, so the two games of an
//! opening are correlated; each pair plays both colours, the first-move advantage cancels
//! within it, and the interval comes from the spread of pair scores
//! ([`crate::eval::pentanomial`]). Every point plays the same openings (`seed`), so the curve's
//! steps are not opening noise; a player *chosen* by this curve is measured again on fresh
//! openings before its figure is reported.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::dataio::atomic::write_bytes;
use crate::eval::tournament::{run_tournament, TournamentConfig};
use crate::game::Variant;
use crate::play::players::spec::NetParams;
use crate::play::players::PlayerSpec;
use crate::training::schedule::generation_name;
use crate::util::chart::{xy_svg_series, Point};

/// The `[gauntlet]` section.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GauntletConfig {
    /// The opponents' player specs; each plays at `movetime` unless its spec sets a limit.
    pub opponents: Vec<PlayerSpec>,
    /// CPU milliseconds a move for every side.
    pub movetime: u64,
    /// Opening pairs per opponent (each opening played with both colours).
    pub pairs: u32,
    /// The openings' seed: the same openings at every point of the curve.
    #[serde(default = "GauntletConfig::default_seed")]
    pub seed: u64,
    /// Without `[distill]`: play the gauntlet every this many generations (and after the
    /// last). With `[distill]` it plays each student when it is made, and this key is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<u32>,
    #[serde(default = "GauntletConfig::default_ply_cap")]
    pub ply_cap: u32,
}

impl GauntletConfig {
    fn default_seed() -> u64 {
        101
    }
    fn default_ply_cap() -> u32 {
        TournamentConfig::DEFAULT_PLY_CAP
    }

    /// Checks the section against the run (`distilled`: whether it has `[distill]`), before
    /// any work; errors name the key.
    pub fn validate(&self, distilled: bool) -> anyhow::Result<()> {
        use crate::config::{check_range, ensure_key};
        ensure_key(!self.opponents.is_empty(), "gauntlet.opponents", || {
            "[gauntlet] opponents: name at least one player spec, e.g. [\"alphabeta\"]".into()
        })?;
        check_range("gauntlet.movetime", self.movetime, 1, 3_600_000)?;
        check_range("gauntlet.pairs", self.pairs, 1, 100_000)?;
        check_range(
            "gauntlet.ply_cap",
            self.ply_cap,
            TournamentConfig::DEFAULT_OPENING_PLIES + 1,
            super::runconfig::limits::PLY_CAP,
        )?;
        match (self.every, distilled) {
            (Some(_), true) => ensure_key(false, "gauntlet.every", || {
                "[gauntlet] every: with [distill] the gauntlet plays each student when it is \
                 made ([distill] every); remove the key"
                    .into()
            }),
            (Some(e), false) => check_range("gauntlet.every", e, 1, u32::MAX),
            (None, _) => Ok(()),
        }
    }

    /// Builds every opponent once, so that a missing checkpoint or a bad engine is refused
    /// before the run does any work (a config check cannot: it does not open files).
    pub fn check_opponents(&self, variant: Variant) -> anyhow::Result<()> {
        for spec in self.opponents() {
            crate::play::players::build(&spec, variant, 0)
                .with_context(|| format!("[gauntlet] opponents: cannot build `{spec}`"))?;
        }
        Ok(())
    }

    /// The opponents as they play: at `movetime` unless their spec sets a limit.
    fn opponents(&self) -> Vec<PlayerSpec> {
        self.opponents
            .iter()
            .map(|s| s.with_default_movetime(self.movetime))
            .collect()
    }
}

/// One point of the curve against one opponent: a line of `gauntlet.csv`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GauntletRow {
    pub generation: u32,
    /// CPU-hours the run had spent making the player (self-play, training, distillation;
    /// the gauntlets' own time is not counted).
    pub cpu_hours: f64,
    pub player: String,
    pub opponent: String,
    pub wins: u32,
    pub losses: u32,
    pub unfinished: u32,
    /// The player's pair scores 0, 0.5, 1, 1.5, 2 (counts).
    pub pentanomial: [u32; 5],
    /// The player's score and Elo from the pairs, with 95% intervals (`None` without pairs).
    pub score: Option<f64>,
    pub elo: Option<f64>,
    pub elo_lo: Option<f64>,
    pub elo_hi: Option<f64>,
    /// The player's wins and losses as South (who moves first) and as North.
    pub south_wins: u32,
    pub south_losses: u32,
    pub north_wins: u32,
    pub north_losses: u32,
    /// Measured CPU ms a move of each side, and the player's simulations a move.
    pub player_ms: Option<f64>,
    pub opponent_ms: Option<f64>,
    pub player_sims: Option<f64>,
    /// CPU seconds the match took.
    pub cpu_secs: f64,
}

/// Plays the gauntlet of the checkpoint `player` (made after `cpu_hours`) for generation `g`
/// into `RUN/gauntlet/gen-NNNNNN.json`, unless that file exists; then redraws the curve.
pub fn play(
    config: &GauntletConfig,
    variant: Variant,
    run: &Path,
    g: u32,
    player: &Path,
    cpu_hours: f64,
) -> anyhow::Result<Vec<GauntletRow>> {
    let file = point_file(run, g);
    if let Ok(text) = std::fs::read_to_string(&file) {
        return serde_json::from_str(&text).with_context(|| format!("corrupt {}", file.display()));
    }
    let me = PlayerSpec::Net(NetParams {
        path: player.to_path_buf(),
        ms: Some(config.movetime),
        ..NetParams::default()
    });
    let mut rows = Vec::new();
    for opponent in config.opponents() {
        eprintln!(
            "  gauntlet of generation {g}: {} pairs against {opponent} at {} ms a move",
            config.pairs, config.movetime
        );
        let cpu = crate::util::cputime::process_secs();
        let mut t = TournamentConfig::new(
            variant,
            vec![me.clone(), opponent.clone()],
            2 * config.pairs,
        );
        t.seed = config.seed;
        t.ply_cap = config.ply_cap;
        t.progress = true;
        let r = run_tournament(&t)?;
        let p = &r.pairs[0];
        let paired = p.paired;
        rows.push(GauntletRow {
            generation: g,
            cpu_hours,
            player: player.display().to_string(),
            opponent: opponent.to_string(),
            wins: p.a_wins,
            losses: p.b_wins,
            unfinished: p.unfinished,
            pentanomial: p.pentanomial.counts,
            score: paired.map(|e| e.score),
            elo: paired.map(|e| e.elo),
            elo_lo: paired.map(|e| e.elo_ci95.0),
            elo_hi: paired.map(|e| e.elo_ci95.1),
            south_wins: p.a_as_south.0,
            south_losses: p.a_as_south.1,
            north_wins: p.a_as_north.0,
            north_losses: p.a_as_north.1,
            player_ms: r.costs[0].mean_ms,
            opponent_ms: r.costs[1].mean_ms,
            player_sims: r.costs[0].nodes_per_move,
            cpu_secs: crate::util::cputime::process_secs() - cpu,
        });
        let last = rows.last().expect("just pushed");
        eprintln!("  {}", describe(last));
    }
    std::fs::create_dir_all(file.parent().expect("in RUN/gauntlet"))?;
    write_bytes(&file, serde_json::to_string_pretty(&rows)?.as_bytes())?;
    redraw(run)?;
    Ok(rows)
}

/// One line on a point: score, Elo, per colour, both sides' time.
pub fn describe(r: &GauntletRow) -> String {
    let ms = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.1}"));
    format!(
        "{} against {}: {}-{}{}, Elo {} ({} .. {}), as South {}-{}, as North {}-{}; ms a move {} against {}",
        r.player,
        r.opponent,
        r.wins,
        r.losses,
        if r.unfinished > 0 { format!(" ({} unfinished)", r.unfinished) } else { String::new() },
        r.elo.map_or("-".into(), |e| format!("{e:+.0}")),
        r.elo_lo.map_or("-".into(), |e| format!("{e:+.0}")),
        r.elo_hi.map_or("-".into(), |e| format!("{e:+.0}")),
        r.south_wins,
        r.south_losses,
        r.north_wins,
        r.north_losses,
        ms(r.player_ms),
        ms(r.opponent_ms),
    )
}

fn point_file(run: &Path, g: u32) -> PathBuf {
    run.join("gauntlet")
        .join(format!("{}.json", generation_name(g)))
}

/// Every point the run has played, oldest first.
pub fn read_points(run: &Path) -> anyhow::Result<Vec<GauntletRow>> {
    let dir = run.join("gauntlet");
    let mut files: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).context(format!("cannot list {}", dir.display())),
    };
    files.sort();
    let mut rows = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f)?;
        let point: Vec<GauntletRow> =
            serde_json::from_str(&text).with_context(|| format!("corrupt {}", f.display()))?;
        rows.extend(point);
    }
    Ok(rows)
}

/// Rewrites `gauntlet.csv` and `gauntlet.svg` (Elo against CPU-hours, a line per opponent)
/// from the points in `RUN/gauntlet/`.
pub fn redraw(run: &Path) -> anyhow::Result<()> {
    let rows = read_points(run)?;
    if rows.is_empty() {
        return Ok(());
    }
    let mut csv = String::from(
        "generation,cpu_hours,player,opponent,wins,losses,unfinished,pairs_0,pairs_0.5,pairs_1,pairs_1.5,pairs_2,score,elo,elo_lo,elo_hi,south_wins,south_losses,north_wins,north_losses,player_ms,opponent_ms,player_sims,cpu_secs\n",
    );
    let opt = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.4}"));
    for r in &rows {
        let p = r.pentanomial;
        csv.push_str(&format!(
            "{},{:.4},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.1}\n",
            r.generation,
            r.cpu_hours,
            crate::util::quote::csv_field(&r.player),
            crate::util::quote::csv_field(&r.opponent),
            r.wins,
            r.losses,
            r.unfinished,
            p[0],
            p[1],
            p[2],
            p[3],
            p[4],
            opt(r.score),
            opt(r.elo),
            opt(r.elo_lo),
            opt(r.elo_hi),
            r.south_wins,
            r.south_losses,
            r.north_wins,
            r.north_losses,
            opt(r.player_ms),
            opt(r.opponent_ms),
            opt(r.player_sims),
            r.cpu_secs,
        ));
    }
    write_bytes(&run.join("gauntlet.csv"), csv.as_bytes())?;
    let mut opponents: Vec<&str> = Vec::new();
    for r in &rows {
        if !opponents.contains(&r.opponent.as_str()) {
            opponents.push(&r.opponent);
        }
    }
    let series: Vec<(&str, Vec<Point>)> = opponents
        .iter()
        .map(|o| {
            let points = rows
                .iter()
                .filter(|r| r.opponent == *o)
                .filter_map(|r| {
                    // A perfect score has an infinite Elo (JSON null): drawn at the finite
                    // end of its interval, the least it says.
                    let finite = |v: Option<f64>| v.filter(|v| v.is_finite());
                    let y = finite(r.elo)
                        .or_else(|| finite(r.elo_lo).filter(|_| r.score == Some(1.0)))
                        .or_else(|| finite(r.elo_hi).filter(|_| r.score == Some(0.0)))?;
                    Some(Point {
                        x: r.cpu_hours,
                        y,
                        interval: finite(r.elo_lo).zip(finite(r.elo_hi)),
                    })
                })
                .collect();
            (*o, points)
        })
        .collect();
    if series.iter().all(|(_, p)| p.is_empty()) {
        return Ok(());
    }
    let svg = xy_svg_series(
        "the run's player at equal time: Elo over each opponent (paired openings, 95%; a perfect score at its bound)",
        "CPU-hours of the run (self-play, training, distillation)",
        "Elo",
        &series,
    )?;
    write_bytes(&run.join("gauntlet.svg"), svg.as_bytes())?;
    Ok(())
}
