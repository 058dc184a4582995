//! A run's history: `metrics.jsonl` and `metrics.csv` (a line per generation), `steps.csv`
//! (a line per optimizer step), `curve.svg`, and the tables printed from them. Written by
//! the training loop ([`crate::training::train`]), kept equal to what its committed state says.

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::dataio::atomic::write_bytes;
use crate::eval::proofs::ProofCounts;

/// One generation's summary (a line of metrics.jsonl / metrics.csv).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GenerationMetrics {
    pub generation: u32,
    pub steps: u64,
    pub elapsed_secs: f64,
    pub selfplay_games: u64,
    pub selfplay_positions: u64,
    pub games_per_sec: f64,
    pub avg_plies: f64,
    pub window: usize,
    pub train_steps: usize,
    pub samples_per_sec: f64,
    pub learning_rate: f64,
    pub policy_loss: f32,
    pub value_loss: f32,
    pub policy_entropy: f32,
    pub value_accuracy: f32,
    /// The auxiliary heads' losses (`[network] aux_heads`; 0 without them and in older
    /// lines). In metrics.jsonl only, so a run's metrics.csv keeps its columns.
    #[serde(default)]
    pub margin_loss: f32,
    #[serde(default)]
    pub reply_loss: f32,
    /// Distinct games (move sequences) among the generation's self-play games, and distinct
    /// openings (their first `selfplay::DIVERSITY_OPENING_PLIES` plies): repeated games teach
    /// little (0 in lines written before they were counted).
    #[serde(default)]
    pub distinct_games: u64,
    #[serde(default)]
    pub distinct_openings: u64,
    /// With `[selfplay] solver_depth`: samples whose value target the solver proved, and how
    /// many of those had a game result that disagreed (0 when off or in older lines).
    #[serde(default)]
    pub solver_proven: u64,
    #[serde(default)]
    pub solver_corrected: u64,
    /// The network against each baseline, in the config's order.
    pub vs: Vec<BaselineResult>,
    /// CPU seconds of the run once this generation was committed (all its invocations), and this
    /// generation's: self-play (whichever generation's ran meanwhile), training steps, the
    /// `[eval]` matches. 0 in lines written before they were counted; in metrics.jsonl only.
    #[serde(default)]
    pub cpu_secs: f64,
    #[serde(default)]
    pub selfplay_cpu_secs: f64,
    #[serde(default)]
    pub train_cpu_secs: f64,
    #[serde(default)]
    pub eval_cpu_secs: f64,
}

/// One end-of-generation match of the network against a baseline.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BaselineResult {
    /// The baseline's player spec.
    pub baseline: String,
    /// The network's share of the finished games.
    pub score: f64,
    /// The network's Elo over the baseline.
    pub elo: Option<f64>,
    /// The games behind the score.
    #[serde(flatten)]
    pub games: BaselineGames,
    /// With `[eval] proofs_ms`: the network's proven wins kept and given away.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proofs: Option<ProofCounts>,
}

/// The games of one end-of-generation match against a baseline.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct BaselineGames {
    pub wins: u32,
    pub losses: u32,
    /// Games that hit the ply cap: reported, never counted as a result.
    pub unfinished: u32,
    /// 95% interval of the network's Elo over the baseline.
    pub elo_ci95: Option<(f64, f64)>,
}

/// Parses one line of `metrics.jsonl`. Lines written before baselines were typed hold `vs`
/// as `[name, score, elo]` triples beside a `vs_games` list; they are read into the same
/// [`BaselineResult`]s.
fn parse_line(line: &str) -> anyhow::Result<GenerationMetrics> {
    let mut v: serde_json::Value = serde_json::from_str(line)?;
    if let Some(m) = v.as_object_mut() {
        let games = m.remove("vs_games");
        if let Some(serde_json::Value::Array(vs)) = m.get_mut("vs") {
            for (k, entry) in vs.iter_mut().enumerate() {
                if let serde_json::Value::Array(triple) = entry {
                    let mut upgraded = games
                        .as_ref()
                        .and_then(|g| g.get(k))
                        .cloned()
                        .unwrap_or_else(|| serde_json::json!({"wins": 0, "losses": 0, "unfinished": 0, "elo_ci95": null}));
                    upgraded["baseline"] = triple.first().cloned().unwrap_or_default();
                    upgraded["score"] = triple.get(1).cloned().unwrap_or_default();
                    upgraded["elo"] = triple.get(2).cloned().unwrap_or_default();
                    *entry = upgraded;
                }
            }
        }
    }
    Ok(serde_json::from_value(v)?)
}

/// The generations `metrics.jsonl` in `dir` records (none without the file).
pub fn read_metrics(dir: &Path) -> anyhow::Result<Vec<GenerationMetrics>> {
    let path = dir.join("metrics.jsonl");
    if !path.exists() {
        return Ok(Vec::new());
    }
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    text.lines()
        .enumerate()
        .map(|(i, l)| parse_line(l).with_context(|| format!("{} line {}", path.display(), i + 1)))
        .collect()
}

/// Makes the history files say exactly what the committed `state.json` says. Metrics and step
/// rows are appended before the state commits, so a crash in between leaves rows of a
/// generation that will be played again, and a crash mid-write leaves a torn last line: on
/// resume both go, generations `1..=committed` are kept once each (in order), and
/// `metrics.csv` is rewritten from what is kept.
pub fn reconcile_history(dir: &Path, committed: u32) -> anyhow::Result<()> {
    let jsonl = dir.join("metrics.jsonl");
    if jsonl.exists() {
        let text = std::fs::read_to_string(&jsonl)
            .with_context(|| format!("cannot read {}", jsonl.display()))?;
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        // Kept lines as written (re-serialising floats need not give the same text).
        let mut kept: Vec<(GenerationMetrics, &str)> = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            let torn = !line.ends_with('\n');
            match parse_line(line.trim_end()) {
                Ok(m) if !torn => {
                    if m.generation <= committed && m.generation as usize == kept.len() + 1 {
                        kept.push((m, line));
                    }
                }
                // The last line of an interrupted write: lost with the crash.
                _ if i + 1 == lines.len() => {}
                Ok(_) => {}
                Err(e) => {
                    return Err(e).with_context(|| format!("{} line {}", jsonl.display(), i + 1))
                }
            }
        }
        let body: String = kept.iter().map(|(_, line)| *line).collect();
        write_bytes(&jsonl, body.as_bytes())?;
        let csv = dir.join("metrics.csv");
        if csv.exists() {
            std::fs::remove_file(&csv)
                .with_context(|| format!("cannot rewrite {}", csv.display()))?;
        }
        for (m, _) in &kept {
            append_csv(dir, m)?;
        }
    }
    let steps = dir.join("steps.csv");
    if steps.exists() {
        let text = std::fs::read_to_string(&steps)
            .with_context(|| format!("cannot read {}", steps.display()))?;
        let body: String = text
            .split_inclusive('\n')
            .filter(|l| {
                l.ends_with('\n')
                    && l.split(',')
                        .next()
                        .and_then(|g| g.parse::<u32>().ok())
                        .is_some_and(|g| g <= committed)
            })
            .collect();
        write_bytes(&steps, body.as_bytes())?;
    }
    Ok(())
}

/// Appends generation `m` to `metrics.jsonl` and `metrics.csv` (before the state commits it).
pub fn append_metrics(dir: &Path, m: &GenerationMetrics) -> anyhow::Result<()> {
    let mut jsonl = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("metrics.jsonl"))?;
    writeln!(jsonl, "{}", serde_json::to_string(m)?)?;
    append_csv(dir, m)
}

/// Appends `m` to `metrics.csv` (with the header when the file is new).
/// Columns of `metrics.csv` before the per-baseline ones.
const CSV_FIXED_COLUMNS: usize = 17;

fn append_csv(dir: &Path, m: &GenerationMetrics) -> anyhow::Result<()> {
    let csv_path = dir.join("metrics.csv");
    let new = !csv_path.exists();
    let mut csv = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&csv_path)?;
    if new {
        let vs: Vec<String> =
            m.vs.iter()
                .flat_map(|r| {
                    [
                        format!("score_vs_{}", r.baseline),
                        format!("elo_vs_{}", r.baseline),
                    ]
                })
                .collect();
        writeln!(csv, "generation,steps,elapsed_secs,selfplay_games,selfplay_positions,games_per_sec,avg_plies,window,train_steps,samples_per_sec,learning_rate,policy_loss,value_loss,policy_entropy,value_accuracy,distinct_games,distinct_openings,{}", vs.join(","))?;
    }
    let mut vs: Vec<String> =
        m.vs.iter()
            .flat_map(|r| {
                [
                    format!("{:.4}", r.score),
                    r.elo.map_or(String::new(), |e| format!("{e:.1}")),
                ]
            })
            .collect();
    if m.vs.is_empty() && !new {
        // A generation without matches (`[eval] every`): empty cells under the header's.
        let header = std::fs::read_to_string(&csv_path)?;
        let columns = header.lines().next().unwrap_or("").split(',').count();
        vs = vec![String::new(); columns.saturating_sub(CSV_FIXED_COLUMNS)];
    }
    writeln!(
        csv,
        "{},{},{:.1},{},{},{:.3},{:.2},{},{},{:.1},{},{:.5},{:.5},{:.4},{:.4},{},{},{}",
        m.generation,
        m.steps,
        m.elapsed_secs,
        m.selfplay_games,
        m.selfplay_positions,
        m.games_per_sec,
        m.avg_plies,
        m.window,
        m.train_steps,
        m.samples_per_sec,
        m.learning_rate,
        m.policy_loss,
        m.value_loss,
        m.policy_entropy,
        m.value_accuracy,
        m.distinct_games,
        m.distinct_openings,
        vs.join(",")
    )?;
    Ok(())
}

/// One line per generation for the terminal.
pub fn summary(m: &GenerationMetrics) -> String {
    let vs: Vec<String> =
        m.vs.iter()
            .map(|r| {
                let kept = r
                    .proofs
                    .and_then(|p| p.kept_share())
                    .map_or(String::new(), |k| {
                        format!(" (kept {:.1}% of proven wins)", 100.0 * k)
                    });
                format!("vs {} {:.0}%{kept}", r.baseline, 100.0 * r.score)
            })
            .collect();
    format!(
        "gen {:>3}  {:>6.0}s  {} games ({} distinct, {} openings) {:.1} plies  window {}  {} steps  policy {:.3} value {:.3}  {}",
        m.generation, m.elapsed_secs, m.selfplay_games, m.distinct_games, m.distinct_openings, m.avg_plies, m.window, m.train_steps, m.policy_loss, m.value_loss, vs.join("  ")
    )
}

/// The final table: the last generation's network against each baseline, with the games
/// behind each score and the 95% interval of the Elo difference.
pub fn results_table(history: &[GenerationMetrics]) -> String {
    let Some(last) = history.last() else {
        return "no generation finished yet\n".into();
    };
    let mut out = format!(
        "{:<28} {:>12} {:>8} {:>10} {:>18}\n",
        "opponent", "won-lost-unf", "score", "Elo diff", "95% interval"
    );
    for r in &last.vs {
        let g = &r.games;
        let wlu = format!("{}-{}-{}", g.wins, g.losses, g.unfinished);
        let ci = g
            .elo_ci95
            .map_or("-".into(), |(lo, hi)| format!("[{lo:+.0}, {hi:+.0}]"));
        let elo = r.elo.map_or("-".into(), |e| format!("{e:+.0}"));
        out += &format!(
            "{:<28} {:>12} {:>7.1}% {:>10} {:>18}\n",
            r.baseline,
            wlu,
            100.0 * r.score,
            elo,
            ci
        );
    }
    out
}

/// A chart of [`plot_curve`]: generations across, f64 values up.
type Chart<'a, 'b> = plotters::chart::ChartContext<
    'a,
    plotters::backend::SVGBackend<'b>,
    plotters::coord::cartesian::Cartesian2d<
        plotters::coord::types::RangedCoordf64,
        plotters::coord::types::RangedCoordf64,
    >,
>;

/// Draws one line per `(name, points)` (colours from `first_colour` on) and the legend.
fn draw_lines<'a, 'b: 'a>(
    chart: &mut Chart<'a, 'b>,
    lines: Vec<(String, Vec<(f64, f64)>)>,
    first_colour: usize,
) -> anyhow::Result<()> {
    use plotters::prelude::*;
    let err = |e: &dyn std::fmt::Display| anyhow::anyhow!("plot: {e}");
    for (k, (name, pts)) in lines.into_iter().enumerate() {
        let color = Palette99::pick(first_colour + k).to_rgba();
        chart
            .draw_series(LineSeries::new(pts, color.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE)
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(&e))?;
    Ok(())
}

/// Elo over each baseline and the losses, by generation, as an SVG.
pub fn plot_curve(path: &Path, history: &[GenerationMetrics]) -> anyhow::Result<()> {
    use plotters::prelude::*;
    let err = |e: &dyn std::fmt::Display| anyhow::anyhow!("plot: {e}");
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 700)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let (top, bottom) = root.split_vertically(350);
        let gens = history.last().map_or(1, |m| m.generation).max(1) as f64;
        let elos: Vec<f64> = history
            .iter()
            .flat_map(|m| m.vs.iter().filter_map(|r| r.elo))
            .collect();
        let (lo, hi) = elos
            .iter()
            .fold((-100.0f64, 100.0f64), |(a, b), &e| (a.min(e), b.max(e)));
        let mut chart = ChartBuilder::on(&top)
            .caption("Elo of the network over each baseline", ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(50)
            .build_cartesian_2d(0.0..gens, (lo - 50.0)..(hi + 50.0))
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_desc("generation")
            .y_desc("Elo")
            .draw()
            .map_err(|e| err(&e))?;
        let names: Vec<String> = history
            .last()
            .map(|m| m.vs.iter().map(|r| r.baseline.clone()).collect())
            .unwrap_or_default();
        let elo_lines = names
            .iter()
            .enumerate()
            .map(|(k, name)| {
                let pts = history
                    .iter()
                    .filter_map(|m| Some((m.generation as f64, m.vs.get(k)?.elo?)))
                    .collect();
                (name.clone(), pts)
            })
            .collect();
        draw_lines(&mut chart, elo_lines, 0)?;
        let lmax = history
            .iter()
            .map(|m| m.policy_loss.max(m.value_loss) as f64)
            .fold(0.1, f64::max);
        let mut chart = ChartBuilder::on(&bottom)
            .caption("training losses", ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(50)
            .build_cartesian_2d(0.0..gens, 0.0..lmax * 1.1)
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_desc("generation")
            .y_desc("loss")
            .draw()
            .map_err(|e| err(&e))?;
        let loss = |f: fn(&GenerationMetrics) -> f32| -> Vec<(f64, f64)> {
            history
                .iter()
                .map(|m| (m.generation as f64, f(m) as f64))
                .collect()
        };
        let loss_lines = vec![
            ("policy".to_string(), loss(|m| m.policy_loss)),
            ("value".to_string(), loss(|m| m.value_loss)),
        ];
        draw_lines(&mut chart, loss_lines, 5)?;
        root.present().map_err(|e| err(&e))?;
    }
    write_bytes(path, svg.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEGACY: &str = r#"{"generation":1,"steps":36,"elapsed_secs":877.0,"selfplay_games":256,"selfplay_positions":2259,"games_per_sec":0.45,"avg_plies":18.0,"window":2259,"train_steps":36,"samples_per_sec":77.3,"learning_rate":0.002,"policy_loss":1.16,"value_loss":0.73,"policy_entropy":1.13,"value_accuracy":0.72,"vs":[["random",0.95,500.0],["greedy",0.75,null]],"vs_games":[{"wins":19,"losses":1,"unfinished":0,"elo_ci95":[300.0,700.0]}]}"#;

    #[test]
    fn lines_written_before_typed_baselines_still_read() {
        let m = parse_line(LEGACY).unwrap();
        assert_eq!(m.vs.len(), 2);
        assert_eq!(m.vs[0].baseline, "random");
        assert_eq!(m.vs[0].score, 0.95);
        assert_eq!(m.vs[0].elo, Some(500.0));
        assert_eq!(m.vs[0].games.wins, 19);
        assert_eq!(m.vs[0].games.elo_ci95, Some((300.0, 700.0)));
        // No games recorded for the second: zero games, the score kept.
        assert_eq!(m.vs[1].baseline, "greedy");
        assert_eq!(m.vs[1].elo, None);
        assert_eq!(m.vs[1].games.wins + m.vs[1].games.losses, 0);
        // Written back in the typed form, it reads the same.
        let again = parse_line(&serde_json::to_string(&m).unwrap()).unwrap();
        assert_eq!(again.vs[0].games.wins, 19);
        assert_eq!(again.vs[1].score, 0.75);
        let text = serde_json::to_string(&m).unwrap();
        assert!(text.contains(r#""baseline":"random""#), "{text}");
        assert!(!text.contains("vs_games"), "{text}");
    }

    /// Every run committed under `models/` (the runs of the first shipped models)
    /// keeps a history this code still reads: generations in order, matches recorded.
    #[test]
    fn every_committed_runs_metrics_read() {
        let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
        let mut runs = Vec::new();
        for entry in std::fs::read_dir(&models).unwrap() {
            let dir = entry.unwrap().path();
            if dir.join("metrics.jsonl").exists() {
                let history = read_metrics(&dir).unwrap();
                let name = dir.display();
                assert!(!history.is_empty(), "{name}");
                assert!(
                    history
                        .windows(2)
                        .all(|w| w[0].generation < w[1].generation),
                    "{name}: generations out of order"
                );
                assert!(history.iter().any(|m| !m.vs.is_empty()), "{name}");
                runs.push(dir.file_name().unwrap().to_string_lossy().into_owned());
            }
        }
        for shipped_line in ["kiswahili-original", "kujifunza-original"] {
            assert!(runs.iter().any(|r| r == shipped_line), "{runs:?}");
        }
    }
}
