//! `bao eval`: a tournament between players; prints tables, writes results JSON and an Elo plot.

use std::path::PathBuf;

use anyhow::Context;

use crate::eval::sprt::Sprt;
use crate::eval::sweep::{self, Grid};
use crate::eval::tournament::{self, Format, TournamentConfig};
use crate::game::Variant;
use crate::play::players::spec::parse_list;
use crate::search::ClockKind;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Game variant: kiswahili or kujifunza.
    #[arg(long)]
    pub variant: Variant,
    /// Comma-separated player specs, e.g. `random,greedy,alphabeta:depth=4,ext:"bao engine greedy"`.
    #[arg(long)]
    pub players: String,
    /// Games per pair (each random opening is played twice, colours swapped).
    #[arg(long, default_value_t = 100)]
    pub games: u32,
    /// Round robin (every pair) or gauntlet (the first player against each other one).
    #[arg(long, value_enum, default_value_t = Format::RoundRobin)]
    pub format: Format,
    /// Plies after which a game is unfinished (reported, never a win).
    #[arg(long, default_value_t = TournamentConfig::DEFAULT_PLY_CAP)]
    pub ply_cap: u32,
    /// Random plies of each opening.
    #[arg(long, default_value_t = TournamentConfig::DEFAULT_OPENING_PLIES)]
    pub opening_plies: u32,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Openings not to play, one a line (its moves separated by spaces, e.g. `A7L a5R B3L
    /// b4R`): the seed's openings are read past them. `bao tune` writes the openings it
    /// played as such a file for its gate.
    #[arg(long, value_name = "FILE")]
    pub avoid_openings: Option<PathBuf>,
    /// Games played in parallel (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Stop a two-player match early by an SPRT of elo0 against elo1, e.g. `0,50`.
    #[arg(long)]
    pub sprt: Option<String>,
    /// Thinking time per move, in milliseconds, for every searching player whose spec sets no
    /// limit of its own (`sims=`, `depth=` or `ms=`): the way to compare players at equal time.
    #[arg(long, value_name = "MS")]
    pub movetime: Option<u64>,
    /// The clock time budgets are measured on: `cpu` (the searching thread's CPU time, so
    /// games played in parallel or a busy machine do not bias one side) or `wall`.
    #[arg(long, default_value_t = ClockKind::Cpu)]
    pub clock: ClockKind,
    /// Check every move with an alpha-beta solver of MS milliseconds of CPU time per
    /// position (outside the players' clocks): per player, how many proven wins it kept and
    /// gave away; every win given away is listed in results.json with its position and move.
    #[arg(long, value_name = "MS")]
    pub proofs: Option<u64>,
    /// Instead of games: score each player on these puzzles (`bao solve --make-puzzles`), the
    /// share of proven-won positions where its move keeps the win; writes `puzzles.json`.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["proofs", "sprt"])]
    pub puzzles: Option<PathBuf>,
    /// Sweep a parameter: `--players PLAYER,REFERENCE --sweep KEY=V1,V2,...` plays PLAYER with
    /// each value of KEY (a `[search]` key of a network player, `c` or `sims` of mcts, `depth`
    /// of alphabeta) against REFERENCE on the same paired openings, and writes the Elo of each
    /// value (from the opening pairs, 95% intervals) to `sweep.csv`, `sweep.json` and
    /// `sweep.svg`.
    #[arg(long, value_name = "KEY=V1,V2,...", conflicts_with_all = ["puzzles", "sprt", "format"])]
    pub sweep: Option<String>,
    /// Folder for `results.json`, `elo.svg` and `games.jsonl` (every game's moves).
    #[arg(long, default_value = "eval-results")]
    pub out: PathBuf,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let mut players = parse_list(&args.players)?;
    if let Some(ms) = args.movetime {
        anyhow::ensure!(ms >= 1, "--movetime must be at least 1 ms");
        players = players
            .iter()
            .map(|p| p.with_default_movetime(ms))
            .collect();
    }
    if let Some(file) = &args.puzzles {
        return puzzles(file, &players, &args);
    }
    let grid = match &args.sweep {
        Some(text) => {
            let grid: Grid = text.parse()?;
            let [player, reference] = players.as_slice() else {
                anyhow::bail!(
                    "--sweep plays one player against one reference: --players PLAYER,REFERENCE (got {} players)",
                    players.len()
                );
            };
            players = grid.players(player, reference)?;
            Some(grid)
        }
        None => None,
    };
    let mut config = TournamentConfig::new(args.variant, players, args.games);
    config.format = if grid.is_some() {
        Format::Gauntlet
    } else {
        args.format
    };
    config.ply_cap = args.ply_cap;
    config.opening_plies = args.opening_plies;
    config.seed = args.seed;
    config.clock = args.clock;
    if let Some(file) = &args.avoid_openings {
        config.avoid_openings =
            std::sync::Arc::new(read_openings(file, args.variant, args.opening_plies)?);
    }
    if let Some(ms) = args.proofs {
        anyhow::ensure!(ms >= 1, "--proofs must be at least 1 ms");
        config.proofs = Some(std::time::Duration::from_millis(ms));
    }
    if let Some(t) = args.threads {
        anyhow::ensure!(t >= 1, "--threads must be at least 1");
        config.threads = t;
    }
    config.sprt = args.sprt.as_deref().map(Sprt::parse).transpose()?;
    config.progress = true;
    let result = tournament::run_tournament(&config)?;
    print!("{}", tournament::format_table(&result));
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let json = args.out.join("results.json");
    tournament::write_json(&result, &json)?;
    let svg = args.out.join("elo.svg");
    crate::dataio::atomic::write_bytes(&svg, tournament::elo_svg(&result)?.as_bytes())?;
    let games = args.out.join("games.jsonl");
    let records: Vec<_> = result.games.iter().map(|g| g.record.clone()).collect();
    crate::dataio::records::write_records(&games, &records)?;
    println!(
        "wrote {}, {} and {} (every game's moves: `bao replay --game N` shows one)",
        json.display(),
        svg.display(),
        games.display()
    );
    if let Some(grid) = &grid {
        let points = sweep::points(grid, &result);
        let reference_ms = result.costs.first().and_then(|c| c.mean_ms);
        let table = sweep::write(&args.out, grid, &result.players[0], reference_ms, &points)?;
        print!("\n{table}");
        println!(
            "wrote {}/sweep.csv, sweep.json and sweep.svg",
            args.out.display()
        );
    }
    Ok(())
}

/// `--puzzles`: every player on the same puzzles, one after the other (each on its own CPU
/// clock), a table and `OUT/puzzles.json`.
fn puzzles(
    file: &std::path::Path,
    players: &[crate::play::players::PlayerSpec],
    args: &Args,
) -> anyhow::Result<()> {
    use crate::eval::puzzles::{read_puzzles, score};
    let set = read_puzzles(file)?;
    let mut scores = Vec::new();
    println!(
        "{:<48} {:>8} {:>9} {:>16} {:>9}",
        "player", "kept", "accuracy", "95% interval", "ms/move"
    );
    for spec in players {
        let s = score(spec, args.variant, &set, args.seed)?;
        println!(
            "{:<48} {:>8} {:>8.1}% {:>7.1}-{:>5.1}% {:>9.1}",
            s.player,
            format!("{}/{}", s.kept, s.puzzles),
            100.0 * s.accuracy,
            100.0 * s.accuracy_ci95.0,
            100.0 * s.accuracy_ci95.1,
            s.mean_ms
        );
        scores.push(s);
    }
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let json = args.out.join("puzzles.json");
    let body = serde_json::json!({"puzzles": file.display().to_string(), "scores": scores});
    crate::dataio::atomic::write_bytes(&json, format!("{body:#}\n").as_bytes())?;
    println!("wrote {}", json.display());
    Ok(())
}

/// Reads an `--avoid-openings` file: every line an opening of `plies` legal moves from the
/// start (blank lines skipped), refused with its line otherwise, before any game.
fn read_openings(
    file: &std::path::Path,
    variant: Variant,
    plies: u32,
) -> anyhow::Result<std::collections::HashSet<Vec<String>>> {
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("--avoid-openings: cannot read {}", file.display()))?;
    let mut out = std::collections::HashSet::new();
    for (i, line) in text.lines().enumerate() {
        let moves: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        if moves.is_empty() {
            continue;
        }
        let at = || format!("--avoid-openings {} line {}", file.display(), i + 1);
        anyhow::ensure!(
            moves.len() == plies as usize,
            "{}: {} moves, but openings have {plies} plies (--opening-plies)",
            at(),
            moves.len()
        );
        let mut pos = crate::game::Position::start(variant);
        let mut opening = Vec::with_capacity(moves.len());
        for m in &moves {
            let lm = pos
                .parse_move(m)
                .with_context(|| format!("{}: `{}`", at(), crate::util::quote::quote(m)))?;
            // As the tournament writes it, so that `A7L` and `A7L+` name one opening.
            opening.push(lm.notation(pos.to_move()));
            match lm.after {
                crate::game::After::Position(p) => pos = p,
                crate::game::After::Won(_) => {
                    anyhow::bail!(
                        "{}: `{}` ends the game; an opening cannot",
                        at(),
                        crate::util::quote::quote(m)
                    )
                }
            }
        }
        out.insert(opening);
    }
    Ok(out)
}
