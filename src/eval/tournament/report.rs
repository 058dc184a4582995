//! A tournament's reports: the printed tables, `results.json` and the Elo figure.

use std::path::Path;

use anyhow::Context;

use super::{Rating, SprtDecision, TournamentResult};
use crate::eval::movecost::PlayerCosts;
use crate::search::ClockKind;

/// The printed tables: per pair, then ratings (best first).
pub fn format_table(r: &TournamentResult) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let w = r.players.iter().map(|n| n.len()).max().unwrap_or(6).max(6);
    let _ = writeln!(
        s,
        "{} {} games per pair, ply cap {}, {} opening plies, seed {}, times on the {} clock ({:.1} s)",
        r.variant, r.games_per_pair, r.ply_cap, r.opening_plies, r.seed, r.clock, r.elapsed_s
    );
    let _ = writeln!(
        s,
        "\n{:<w$}  {:<w$}  {:>5} {:>5} {:>5} {:>5}  {:>6}  {:>15}",
        "A", "B", "games", "A won", "B won", "unfin", "A rate", "95% interval"
    );
    for p in &r.pairs {
        let rate = p
            .a_win_rate
            .map_or("-".into(), |x| format!("{:.1}%", 100.0 * x));
        let _ = writeln!(
            s,
            "{:<w$}  {:<w$}  {:>5} {:>5} {:>5} {:>5}  {:>6}  {:>6.1}% - {:.1}%{}",
            p.a_name,
            p.b_name,
            p.games,
            p.a_wins,
            p.b_wins,
            p.unfinished,
            rate,
            100.0 * p.a_win_rate_ci95.0,
            100.0 * p.a_win_rate_ci95.1,
            if p.forfeits > 0 {
                format!("  ({} forfeits)", p.forfeits)
            } else {
                String::new()
            }
        );
    }
    // Per opening pair (the unit of evidence: the two games of a pair are correlated) and per
    // colour (Kiswahili's first-move advantage is large).
    let _ = writeln!(
        s,
        "\n{:<w$}  {:<w$}  {:>5}  {:>22}  {:>7} {:>15}  {:>9} {:>9}",
        "A", "B", "pairs", "pairs 0-0.5-1-1.5-2", "A Elo", "95% interval", "A South", "A North"
    );
    for p in &r.pairs {
        let c = p.pentanomial.counts;
        let (elo, ci) = match &p.paired {
            Some(e) => (
                format!("{:.0}", e.elo),
                format!("{:.0} .. {:.0}", e.elo_ci95.0, e.elo_ci95.1),
            ),
            None => ("-".into(), "-".into()),
        };
        let _ = writeln!(
            s,
            "{:<w$}  {:<w$}  {:>5}  {:>22}  {:>7} {:>15}  {:>9} {:>9}",
            p.a_name,
            p.b_name,
            p.pentanomial.pairs(),
            format!("{}-{}-{}-{}-{}", c[0], c[1], c[2], c[3], c[4]),
            elo,
            ci,
            format!("{}-{}", p.a_as_south.0, p.a_as_south.1),
            format!("{}-{}", p.a_as_north.0, p.a_as_north.1),
        );
    }
    // Costs beside the ratings: a rating won with more time per move is not the same rating.
    let mut order: Vec<(&Rating, Option<&PlayerCosts>)> = r
        .ratings
        .iter()
        .enumerate()
        .map(|(i, p)| (p, r.costs.get(i)))
        .collect();
    order.sort_by(|(a, _), (b, _)| {
        b.elo
            .unwrap_or(f64::NEG_INFINITY)
            .total_cmp(&a.elo.unwrap_or(f64::NEG_INFINITY))
    });
    let _ = writeln!(
        s,
        "\n{:<w$}  {:>7}  {:>17}  {:>5} {:>5} {:>5} {:>5}  {:>8} {:>8} {:>10} {:>5}",
        "player",
        "Elo",
        "95% interval",
        "games",
        "won",
        "lost",
        "unfin",
        "ms/move",
        "max ms",
        "sims|nodes",
        "depth"
    );
    let num = |x: Option<f64>, prec: usize| x.map_or("-".into(), |v| format!("{v:.prec$}"));
    for (p, c) in order {
        let (elo, ci) = match (p.elo, p.elo_ci95) {
            (Some(e), Some((lo, hi))) => (format!("{e:.0}"), format!("{lo:.0} .. {hi:.0}")),
            (Some(e), None) => (format!("{e:.0}"), "-".into()),
            _ => ("-".into(), "-".into()),
        };
        let wall = if c.is_some_and(|c| c.clock == ClockKind::Wall) && r.clock == ClockKind::Cpu {
            " (wall)"
        } else {
            ""
        };
        let _ = writeln!(
            s,
            "{:<w$}  {:>7}  {:>17}  {:>5} {:>5} {:>5} {:>5}  {:>8} {:>8} {:>10} {:>5}{wall}",
            p.name,
            elo,
            ci,
            p.games,
            p.wins,
            p.losses,
            p.unfinished,
            num(c.and_then(|c| c.mean_ms), 1),
            num(c.and_then(|c| c.max_ms), 1),
            num(c.and_then(|c| c.nodes_per_move), 0),
            num(c.and_then(|c| c.mean_depth), 1),
        );
    }
    let _ = writeln!(
        s,
        "\nElo anchored at {} = 0{}",
        r.anchor,
        if r.elo_regularized {
            "; a perfect score needed one virtual draw per pair"
        } else {
            ""
        }
    );
    if let Some(x) = r.south_win_rate {
        let _ = writeln!(s, "South won {:.1}% of finished games", 100.0 * x);
    }
    if let Some(t) = &r.sprt {
        let _ = writeln!(
            s,
            "SPRT elo0={} elo1={} on {} opening pairs: LLR {:.2} (pentanomial; {:.2} per game) in [{:.2}, {:.2}] -> {}",
            t.elo0,
            t.elo1,
            t.pentanomial.pairs(),
            t.llr,
            t.llr_per_game,
            t.bounds.0,
            t.bounds.1,
            match t.decision {
                SprtDecision::H0 => "H0 accepted",
                SprtDecision::H1 => "H1 accepted",
                SprtDecision::Continue => "inconclusive",
            }
        );
    }
    if !r.proofs.is_empty() {
        let _ = writeln!(
            s,
            "\n{:<w$}  {:>11} {:>6} {:>8} {:>10} {:>7}",
            "proven wins", "moves from", "kept", "dropped", "unresolved", "kept %"
        );
        for p in &r.proofs {
            let c = &p.counts;
            let _ = writeln!(
                s,
                "{:<w$}  {:>11} {:>6} {:>8} {:>10} {:>7}",
                p.name,
                c.proven_wins,
                c.kept,
                c.dropped,
                c.unresolved,
                p.kept_share
                    .map_or("-".into(), |x| format!("{:.1}", 100.0 * x))
            );
        }
        let dropped: usize = r.games.iter().map(|g| g.dropped_wins.len()).sum();
        if dropped > 0 {
            let _ = writeln!(
                s,
                "{dropped} win(s) given away: position and move of each under `dropped_wins` in results.json"
            );
        }
    }
    s
}

/// Writes the results JSON (atomically, like every other file of the project).
pub fn write_json(r: &TournamentResult, path: &Path) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(r).context("serialise results")?;
    crate::dataio::atomic::write_bytes(path, text.as_bytes())
}

/// Renders the ratings with 95% error bars as an SVG (no system fonts needed).
pub fn elo_svg(r: &TournamentResult) -> anyhow::Result<String> {
    use plotters::prelude::*;
    let rated: Vec<(&str, f64, f64, f64)> = r
        .ratings
        .iter()
        .filter_map(|p| {
            let e = p.elo?;
            let (lo, hi) = p.elo_ci95.unwrap_or((e, e));
            Some((p.name.as_str(), e, lo, hi))
        })
        .collect();
    anyhow::ensure!(!rated.is_empty(), "no player has a rating to plot");
    let lo = rated.iter().map(|x| x.2).fold(f64::INFINITY, f64::min);
    let hi = rated.iter().map(|x| x.3).fold(f64::NEG_INFINITY, f64::max);
    let pad = ((hi - lo) * 0.1).max(50.0);
    let height = 120 + 40 * rated.len() as u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (800, height)).into_drawing_area();
        root.fill(&WHITE)
            .map_err(|e| anyhow::anyhow!("plot: {e}"))?;
        let n = rated.len() as i32;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!(
                    "Elo ({}, anchor {} = 0, 95% intervals)",
                    r.variant, r.anchor
                ),
                ("sans-serif", 18),
            )
            .margin(15)
            .x_label_area_size(35)
            .y_label_area_size(260)
            .build_cartesian_2d((lo - pad)..(hi + pad), -1..n)
            .map_err(|e| anyhow::anyhow!("plot: {e}"))?;
        let labels: Vec<String> = rated.iter().map(|x| x.0.to_string()).collect();
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(rated.len() + 2)
            .y_label_formatter(&|y| {
                usize::try_from(*y)
                    .ok()
                    .and_then(|i| labels.get(i))
                    .cloned()
                    .unwrap_or_default()
            })
            .x_desc("Elo")
            .draw()
            .map_err(|e| anyhow::anyhow!("plot: {e}"))?;
        for (i, &(_, e, l, h)) in rated.iter().enumerate() {
            let y = i as i32;
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(l, y), (h, y)],
                    BLUE.stroke_width(2),
                )))
                .map_err(|e| anyhow::anyhow!("plot: {e}"))?;
            chart
                .draw_series(std::iter::once(Circle::new((e, y), 5, BLUE.filled())))
                .map_err(|e| anyhow::anyhow!("plot: {e}"))?;
        }
        root.present().map_err(|e| anyhow::anyhow!("plot: {e}"))?;
    }
    Ok(svg)
}
