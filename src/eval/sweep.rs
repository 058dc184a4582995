//! Parameter sweeps (`bao eval --sweep KEY=V1,V2,...`): one player with each value of a
//! parameter, each against the same reference on the same paired openings at the same time
//! control, Elo per value from the opening pairs ([`crate::eval::pentanomial`]).
//!
//! It is one gauntlet: the reference first, then the player once per value, so every value
//! meets the same openings and the games of all values share the cores.

use std::path::Path;
use std::str::FromStr;

use serde::Serialize;

use crate::eval::pentanomial::{PairedEstimate, Pentanomial};
use crate::eval::tournament::TournamentResult;
use crate::play::players::PlayerSpec;

/// A parameter and its values (`c_puct=1,1.5,2,3`).
#[derive(Clone, Debug, PartialEq)]
pub struct Grid {
    pub key: String,
    pub values: Vec<String>,
}

impl FromStr for Grid {
    type Err = anyhow::Error;

    fn from_str(text: &str) -> anyhow::Result<Grid> {
        let (key, values) = text
            .split_once('=')
            .ok_or_else(|| anyhow::anyhow!("--sweep {text}: expected KEY=V1,V2,..."))?;
        let key = key.trim();
        anyhow::ensure!(
            !key.is_empty(),
            "--sweep {text}: the parameter name is empty"
        );
        let values: Vec<String> = values.split(',').map(|v| v.trim().to_string()).collect();
        anyhow::ensure!(
            values.iter().all(|v| !v.is_empty()),
            "--sweep {text}: an empty value"
        );
        let mut sorted = values.clone();
        sorted.sort();
        sorted.dedup();
        anyhow::ensure!(
            sorted.len() == values.len(),
            "--sweep {text}: a value is repeated"
        );
        Ok(Grid {
            key: key.to_string(),
            values,
        })
    }
}

impl Grid {
    /// The players of the sweep's gauntlet: `reference`, then `player` with each value (each
    /// checked, so a bad value or a player without the parameter fails before any game).
    pub fn players(
        &self,
        player: &PlayerSpec,
        reference: &PlayerSpec,
    ) -> anyhow::Result<Vec<PlayerSpec>> {
        let mut out = vec![reference.clone()];
        for v in &self.values {
            out.push(player.with_parameter(&self.key, v)?);
        }
        Ok(out)
    }
}

/// One value's result against the reference.
#[derive(Clone, Debug, Serialize)]
pub struct SweepPoint {
    pub value: String,
    pub player: String,
    /// The player's complete opening pairs against the reference.
    pub pentanomial: Pentanomial,
    /// Score and Elo relative to the reference, from the pairs.
    pub paired: Option<PairedEstimate>,
    pub wins: u32,
    pub losses: u32,
    /// Wins and losses as South and as North.
    pub as_south: (u32, u32),
    pub as_north: (u32, u32),
    /// Measured thinking time per move of the player and of the reference in these games.
    pub ms_per_move: Option<f64>,
}

/// The points of a sweep from its gauntlet's result (pair `i` is the reference against the
/// value `i`).
pub fn points(grid: &Grid, result: &TournamentResult) -> Vec<SweepPoint> {
    result
        .pairs
        .iter()
        .zip(&grid.values)
        .map(|(p, value)| {
            // The pairs are the reference's (`a`); the sweep reports the player's side.
            let pentanomial = p.pentanomial.flipped();
            SweepPoint {
                value: value.clone(),
                player: p.b_name.clone(),
                paired: pentanomial.estimate(),
                pentanomial,
                wins: p.b_wins,
                losses: p.a_wins,
                as_south: (p.a_as_north.1, p.a_as_north.0),
                as_north: (p.a_as_south.1, p.a_as_south.0),
                ms_per_move: result.costs.get(p.b).and_then(|c| c.mean_ms),
            }
        })
        .collect()
}

/// Writes `sweep.csv`, `sweep.json` and `sweep.svg` (Elo against the value, 95% intervals)
/// into `dir`; returns the table printed for people.
pub fn write(
    dir: &Path,
    grid: &Grid,
    reference: &str,
    reference_ms: Option<f64>,
    points: &[SweepPoint],
) -> anyhow::Result<String> {
    use std::fmt::Write;
    let mut csv = String::from(
        "value,elo,elo_lo95,elo_hi95,score,pairs,p0,p0.5,p1,p1.5,p2,wins,losses,south_wins,south_losses,north_wins,north_losses,ms_per_move\n",
    );
    let mut table = format!(
        "{:<12} {:>7} {:>15} {:>7} {:>22} {:>9} {:>9} {:>8}\n",
        grid.key,
        "Elo",
        "95% interval",
        "pairs",
        "pairs 0-0.5-1-1.5-2",
        "South",
        "North",
        "ms/move"
    );
    let f = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v:.1}"));
    for p in points {
        let c = p.pentanomial.counts;
        let e = p.paired.as_ref();
        let _ = writeln!(
            csv,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            p.value,
            f(e.map(|e| e.elo)),
            f(e.map(|e| e.elo_ci95.0)),
            f(e.map(|e| e.elo_ci95.1)),
            e.map_or(String::new(), |e| format!("{:.4}", e.score)),
            p.pentanomial.pairs(),
            c[0],
            c[1],
            c[2],
            c[3],
            c[4],
            p.wins,
            p.losses,
            p.as_south.0,
            p.as_south.1,
            p.as_north.0,
            p.as_north.1,
            f(p.ms_per_move),
        );
        let _ = writeln!(
            table,
            "{:<12} {:>7} {:>15} {:>7} {:>22} {:>9} {:>9} {:>8}",
            p.value,
            e.map_or("-".into(), |e| format!("{:.0}", e.elo)),
            e.map_or("-".into(), |e| format!(
                "{:.0} .. {:.0}",
                e.elo_ci95.0, e.elo_ci95.1
            )),
            p.pentanomial.pairs(),
            format!("{}-{}-{}-{}-{}", c[0], c[1], c[2], c[3], c[4]),
            format!("{}-{}", p.as_south.0, p.as_south.1),
            format!("{}-{}", p.as_north.0, p.as_north.1),
            f(p.ms_per_move),
        );
    }
    let _ = writeln!(
        table,
        "Elo against {reference} (its {} ms a move), from complete opening pairs",
        f(reference_ms)
    );
    std::fs::create_dir_all(dir)?;
    crate::dataio::atomic::write_bytes(&dir.join("sweep.csv"), csv.as_bytes())?;
    let json = serde_json::json!({
        "parameter": grid.key,
        "reference": reference,
        "reference_ms_per_move": reference_ms,
        "points": points,
    });
    crate::dataio::atomic::write_bytes(&dir.join("sweep.json"), format!("{json:#}\n").as_bytes())?;
    // Numeric values on their own axis; other values (`algorithm=puct,gumbel`) by position.
    let numeric: Option<Vec<f64>> = points.iter().map(|p| p.value.parse().ok()).collect();
    let chart: Vec<crate::util::chart::Point> = points
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let e = p.paired?;
            Some(crate::util::chart::Point {
                x: numeric.as_ref().map_or(i as f64, |xs| xs[i]),
                y: e.elo,
                interval: Some(e.elo_ci95),
            })
        })
        .collect();
    if !chart.is_empty() {
        let svg = crate::util::chart::xy_svg(
            &format!("Elo against {reference} by {}", grid.key),
            &grid.key,
            "Elo (95% interval)",
            &chart,
        )?;
        crate::dataio::atomic::write_bytes(&dir.join("sweep.svg"), svg.as_bytes())?;
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_parse_and_refuse_what_they_cannot_play() {
        let g: Grid = "c_puct=1, 1.5,2".parse().unwrap();
        assert_eq!(g.key, "c_puct");
        assert_eq!(g.values, ["1", "1.5", "2"]);
        for bad in ["c_puct", "=1,2", "c_puct=1,,2", "c_puct=1,1"] {
            assert!(bad.parse::<Grid>().is_err(), "{bad}");
        }
        let player: PlayerSpec = "net:models/k.safetensors:ms=200".parse().unwrap();
        let reference: PlayerSpec = "alphabeta:ms=200".parse().unwrap();
        let players = g.players(&player, &reference).unwrap();
        assert_eq!(players.len(), 4);
        assert_eq!(
            players[2].to_string(),
            "net:models/k.safetensors:ms=200:c_puct=1.5"
        );
        let err = "c_pucct=1"
            .parse::<Grid>()
            .unwrap()
            .players(&player, &reference);
        assert!(format!("{:#}", err.unwrap_err()).contains("c_pucct"));
        let err = "c_puct=-1"
            .parse::<Grid>()
            .unwrap()
            .players(&player, &reference);
        assert!(format!("{:#}", err.unwrap_err()).contains("c_puct"));
        let err = "c_puct=2"
            .parse::<Grid>()
            .unwrap()
            .players(&reference, &player);
        assert!(format!("{:#}", err.unwrap_err()).contains("no parameter `c_puct`"));
    }
}
