//! `bao solve`: prove positions won or lost, write and check proofs, survey real games.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, ensure, Context};

use super::position::PositionArgs;
use crate::dataio::records::read_records;
use crate::eval::puzzles;
use crate::game::{After, Position};
use crate::solve::check::check;
use crate::solve::{survey, Solution, Solver, Value};

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
bao solve --variant kujifunza --proof start.jsonl      prove the start, write the strategy\n  \
bao solve --check docs/solving/kujifunza-start.jsonl   re-check a proof with the reference rules\n  \
bao solve --variant kujifunza --each-move --ms 60000   the value of every first move\n  \
bao solve --games games.jsonl --ms 1000                share of real-game positions proven, by ply\n  \
bao solve --make-puzzles p.jsonl --from A.jsonl,B.jsonl --ms 200   puzzles for `bao eval --puzzles`")]
pub struct Args {
    #[command(flatten)]
    pub at: PositionArgs,
    /// Time limit per position solved, in milliseconds of wall time.
    #[arg(long, default_value_t = 60_000)]
    pub ms: u64,
    /// Transposition table size in MiB.
    #[arg(long, default_value_t = 256)]
    pub tt_mb: usize,
    /// Write the winning strategy here (one JSON line per position of the winner); it is
    /// checked with the reference move generator before it is written.
    #[arg(long, value_name = "FILE")]
    pub proof: Option<PathBuf>,
    /// Check a proof file with the reference move generator instead of solving.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["proof", "each_move", "games"])]
    pub check: Option<PathBuf>,
    /// Solve the position after each legal move instead (the value of every move); with
    /// --proof-dir, write each move's proof there.
    #[arg(long)]
    pub each_move: bool,
    /// Where --each-move writes its proofs (`<move>.jsonl`).
    #[arg(long, value_name = "DIR", requires = "each_move")]
    pub proof_dir: Option<PathBuf>,
    /// Survey the positions of these game records (JSON lines, as `bao selfplay` writes them):
    /// the share proven won or lost within --ms, by ply.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["proof", "each_move"])]
    pub games: Option<PathBuf>,
    /// Write a puzzle file here (see `bao eval --puzzles`): the winner's positions of the
    /// proofs given by --from where some moves keep the win and others lose it, every move
    /// classified with --ms per move.
    #[arg(long, value_name = "FILE", requires = "from", conflicts_with_all = ["proof", "each_move", "games", "check"])]
    pub make_puzzles: Option<PathBuf>,
    /// With --make-puzzles: the proof files whose positions to use (comma-separated).
    #[arg(long, value_name = "PROOFS", value_delimiter = ',')]
    pub from: Vec<PathBuf>,
    /// With --games: solve every k-th ply of each game.
    #[arg(long, default_value_t = 1, requires = "games")]
    pub every: usize,
    /// Print results as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    ensure!(args.ms >= 1, "--ms must be at least 1");
    ensure!(args.every >= 1, "--every must be at least 1");
    if let Some(file) = &args.check {
        return check_file(file, args.json);
    }
    let budget = Duration::from_millis(args.ms);
    if let Some(out) = &args.make_puzzles {
        return make_puzzles(out, &args.from, budget, args.tt_mb);
    }
    if let Some(games) = &args.games {
        return survey(games, budget, args.tt_mb, args.every, args.json);
    }
    let pos = args.at.resolve()?;
    if args.each_move {
        return each_move(&pos, &args, budget);
    }
    let mut solver = Solver::new(budget, args.tt_mb).with_progress(!args.json);
    let sol = solver.solve(&pos);
    let checked = write_proof(&sol, args.proof.as_deref())?;
    if args.json {
        println!("{}", solution_json(&sol, None, checked));
    } else {
        println!("{pos}");
        print!("{}", render(&sol, checked));
    }
    Ok(())
}

/// Checks the solution's strategy with the reference generator and writes it to `path`.
/// Returns whether a strategy was checked.
fn write_proof(sol: &Solution, path: Option<&Path>) -> anyhow::Result<bool> {
    let Some(strategy) = &sol.strategy else {
        if let Some(p) = path {
            eprintln!("no proof written to {}: nothing was proven", p.display());
        }
        return Ok(false);
    };
    let verified = check(&strategy.to_jsonl())
        .context("the solver's strategy failed the reference check (please report this)")?;
    ensure!(
        Some(verified.longest_line) == sol.longest_line,
        "the reference check measured a longest line of {} plies, the solver {:?}",
        verified.longest_line,
        sol.longest_line
    );
    if let Some(p) = path {
        strategy.write(p)?;
    }
    Ok(true)
}

fn render(sol: &Solution, checked: bool) -> String {
    let me = sol.root.to_move();
    let mut out = match sol.value {
        Value::Win => format!("{me} to move wins by force\n"),
        Value::Loss => format!("{me} to move loses by force (every move loses)\n"),
        Value::Unknown => format!(
            "not proven within the limit (the root search completed {} plies)\n",
            sol.root_depth
        ),
    };
    if !sol.winning_moves.is_empty() {
        let total = sol.root.legal_moves().len();
        let unresolved = total - sol.winning_moves.len() - sol.losing_moves;
        out += &format!(
            "winning moves: {} ({} of {total} proven to lose, {unresolved} unresolved)\n",
            sol.winning_moves.join(" "),
            sol.losing_moves
        );
    }
    if let Some(plies) = sol.longest_line {
        out += &format!("longest forced line: {plies} plies\n");
    }
    if let Some(s) = &sol.strategy {
        let verdict = if checked {
            "checked with the reference generator"
        } else {
            "not checked"
        };
        out += &format!("proof: {} positions listed, {verdict}\n", s.len());
    }
    if let Some(why) = &sol.incomplete {
        out += &format!("no proof: {why}\n");
    }
    out += &format!(
        "{} nodes in {:.2} s\n",
        sol.nodes,
        sol.elapsed.as_secs_f64()
    );
    out
}

fn solution_json(sol: &Solution, mv: Option<&str>, checked: bool) -> serde_json::Value {
    serde_json::json!({
        "state": sol.root.to_state_json(),
        "move": mv,
        "value": sol.value,
        "winning_moves": sol.winning_moves,
        "losing_moves": sol.losing_moves,
        "longest_line": sol.longest_line,
        "proof_positions": sol.strategy.as_ref().map(|s| s.len()),
        "checked": checked,
        "incomplete": sol.incomplete,
        "root_depth": sol.root_depth,
        "nodes": sol.nodes,
        "seconds": sol.elapsed.as_secs_f64(),
    })
}

fn check_file(file: &Path, json: bool) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("cannot read proof {}", file.display()))?;
    let v = check(&text).with_context(|| format!("proof {} refused", file.display()))?;
    if json {
        let out = serde_json::json!({
            "state": v.root.to_state_json(),
            "winner": v.winner.letter(),
            "positions": v.positions,
            "longest_line": v.longest_line,
        });
        println!("{out}");
    } else {
        println!(
            "confirmed: {} wins by force from {} ({} positions, longest line {} plies), checked \
             with the reference move generator",
            v.winner,
            v.root.to_json(),
            v.positions,
            v.longest_line
        );
    }
    Ok(())
}

/// Puzzles from the winner's positions of proof files.
fn make_puzzles(
    out: &Path,
    from: &[PathBuf],
    per_move: Duration,
    tt_mb: usize,
) -> anyhow::Result<()> {
    let positions = puzzles::won_positions(from)?;
    let bar = crate::util::progress::bar(positions.len() as u64, "positions", true);
    let mut solver = Solver::new(per_move, tt_mb);
    let made = puzzles::make_puzzles(&positions, per_move, &mut solver, || bar.inc(1));
    bar.finish_and_clear();
    puzzles::write_puzzles(out, &made)?;
    println!(
        "{} puzzles from {} won positions ({} ms a move) written to {}",
        made.len(),
        positions.len(),
        per_move.as_millis(),
        out.display()
    );
    Ok(())
}

/// The value of every legal move: the position after it solved for the opponent.
fn each_move(pos: &Position, args: &Args, budget: Duration) -> anyhow::Result<()> {
    let me = pos.to_move();
    let moves = pos.legal_moves();
    ensure!(!moves.is_empty(), "the side to move has no legal move");
    if !args.json {
        println!("{pos}");
        println!(
            "{:<6} {:<8} {:>13} {:>8} {:>12} {:>8}",
            "move", "value", "longest line", "proof", "nodes", "seconds"
        );
    }
    for lm in moves.iter() {
        let name = lm.notation(me);
        let After::Position(child) = lm.after else {
            if args.json {
                let v = serde_json::json!({
                    "move": name,
                    "value_for_mover": Value::Win.name(),
                    "longest_line": 1
                });
                println!("{v}");
            } else {
                println!("{name:<6} {:<8} {:>13} {:>8}", Value::Win.name(), 1, 0);
            }
            continue;
        };
        let mut solver = Solver::new(budget, args.tt_mb);
        let sol = solver.solve(&child);
        let path = args
            .proof_dir
            .as_ref()
            .map(|d| d.join(format!("{name}.jsonl")));
        let checked = write_proof(&sol, path.as_deref())?;
        // The child's value is the opponent's: a loss there is a win for the mover.
        let value = sol.value.for_opponent().name();
        if args.json {
            let mut v = solution_json(&sol, Some(&name), checked);
            v["value_for_mover"] = value.into();
            println!("{v}");
        } else {
            let line = sol.longest_line.map(|d| (d + 1).to_string());
            let size = sol.strategy.as_ref().map(|s| s.len().to_string());
            println!(
                "{name:<6} {value:<8} {:>13} {:>8} {:>12} {:>8.2}",
                line.as_deref().unwrap_or("-"),
                size.as_deref().unwrap_or("-"),
                sol.nodes,
                sol.elapsed.as_secs_f64()
            );
        }
    }
    if !args.json {
        println!("(longest line counted from before the move; proof = positions the proof lists)");
    }
    Ok(())
}

/// How many positions of real games are proven within the budget, by ply.
fn survey(
    path: &Path,
    budget: Duration,
    tt_mb: usize,
    every: usize,
    json: bool,
) -> anyhow::Result<()> {
    let records = read_records(path)?;
    if records.is_empty() {
        bail!("{} holds no game records", path.display());
    }
    let positions =
        survey::positions(&records, every).with_context(|| path.display().to_string())?;
    let bar = crate::util::progress::bar(positions.len() as u64, "positions", !json);
    let rows = survey::survey(&positions, budget, tt_mb, || bar.inc(1));
    bar.finish_and_clear();
    if json {
        let out = serde_json::json!({
            "games": records.len(),
            "ms": budget.as_millis() as u64,
            "by_ply": rows,
        });
        println!("{out}");
        return Ok(());
    }
    println!(
        "{} games, {} positions, {} ms each",
        records.len(),
        positions.len(),
        budget.as_millis()
    );
    println!(
        "{:<8} {:>9} {:>7} {:>7} {:>8}",
        "plies", "positions", "won", "lost", "proven"
    );
    for r in rows {
        println!(
            "{:<8} {:>9} {:>7} {:>7} {:>7.0}%",
            r.plies,
            r.positions,
            r.proven_win,
            r.proven_loss,
            100.0 * r.share_proven
        );
    }
    Ok(())
}
