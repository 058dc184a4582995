//! `bao label`: solver-labelled positions, or a teacher's games, for `[train] labels`.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, ensure, Context};

use crate::game::Variant;
use crate::play::players::PlayerSpec;
use crate::search::alphabeta::leaf_ab::{LeafAlphaBeta, LeafAlphaBetaEvaluator};
use crate::training::label::teacher::{label_teacher_games, TeacherConfig};
use crate::training::label::{label_positions, read_labels, score_labels, LabelConfig, LabelScore};
use crate::training::selfplay::OpeningPlies;

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
bao label --variant kujifunza --out labels/kujifunza --plies 2-8 --positions 5000 --ms 1000 \\\n      --exclude-eval-seeds 1,2,3,4\n  \
bao label --variant kujifunza --out labels/kujifunza --seed 2 ...   add more (new positions only)\n  \
bao label --variant kiswahili --out labels/kiswahili --teacher alphabeta:ms=50 --games 2000 \\\n      --exclude-eval-seeds 1,2   alpha-beta's games instead of proofs")]
pub struct Args {
    /// Game variant: kiswahili or kujifunza.
    #[arg(long)]
    pub variant: Variant,
    /// Directory of label shards (created; labels already there are kept and not drawn again;
    /// unproven positions are not kept, so a later run may try them with more time).
    #[arg(long)]
    pub out: PathBuf,
    /// Distinct new positions to solve.
    #[arg(long, default_value_t = 1000)]
    pub positions: usize,
    /// Instead of solving positions: label the games this player plays against itself (its
    /// move as the policy target, the game's result as the value), e.g. `alphabeta:ms=50`.
    #[arg(long, value_name = "SPEC", conflicts_with_all = ["positions", "ms", "tt_mb"])]
    pub teacher: Option<PlayerSpec>,
    /// With --teacher: games to play.
    #[arg(long, requires = "teacher", default_value_t = 1000)]
    pub games: usize,
    /// With --teacher: a game still going after this many plies counts as unfinished (value 0).
    #[arg(long, requires = "teacher", default_value_t = 400)]
    pub ply_cap: u32,
    /// Uniformly random plies before each position (with --teacher: before the teacher takes
    /// over): `N`, or a range `A-B` drawn per position.
    #[arg(long, default_value = "2-8")]
    pub plies: String,
    /// Solver wall time per position, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    pub ms: u64,
    /// Transposition table per solver thread, in MiB.
    #[arg(long, default_value_t = 64)]
    pub tt_mb: usize,
    /// Solver threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Which positions are drawn (another seed, other positions).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Never label the openings of `bao eval --seed S` for these seeds (comma-separated), nor
    /// any position one move after them: matches on those seeds then test what the network
    /// learned rather than what it was told.
    #[arg(long, value_delimiter = ',', value_name = "SEEDS")]
    pub exclude_eval_seeds: Vec<u64>,
    /// Instead of labelling: how this network's raw outputs agree with the labels in --out
    /// (value sign, most likely move), by ply count.
    #[arg(long, value_name = "MODEL")]
    pub score: Option<PathBuf>,
    /// With --score: mix a D-ply alpha-beta score into the network's values, as a
    /// `net:...:leaf_ab=D` player does at every leaf it judges.
    #[arg(long, value_name = "D", requires = "score")]
    pub leaf_ab: Option<u32>,
    /// With --leaf-ab: the alpha-beta's share of the mixed value (default 0.35).
    #[arg(long, value_name = "W", requires = "leaf_ab")]
    pub leaf_ab_weight: Option<f32>,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if let Some(model) = &args.score {
        return score(model, &args);
    }
    if let Some(teacher) = &args.teacher {
        return teach(teacher.clone(), &args);
    }
    ensure!(args.ms >= 1, "--ms must be at least 1");
    ensure!(args.positions >= 1, "--positions must be at least 1");
    let config = LabelConfig {
        variant: args.variant,
        plies: parse_plies(&args.plies)?,
        positions: args.positions,
        budget: Duration::from_millis(args.ms),
        tt_mb: args.tt_mb,
        threads: threads(&args),
        seed: args.seed,
        exclude_eval_seeds: args.exclude_eval_seeds.clone(),
    };
    let stats = label_positions(&config, &args.out, true)
        .with_context(|| format!("labelling into {}", args.out.display()))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&stats)?);
        return Ok(());
    }
    println!(
        "{} positions in {:.0} s ({} ms each): {} won, {} lost, {} unproven (dropped); skipped {} repeats and {} excluded",
        stats.positions,
        stats.secs,
        args.ms,
        stats.won,
        stats.lost,
        stats.unknown,
        stats.repeats,
        stats.excluded
    );
    println!("random plies  positions  proven");
    for (plies, [n, proven]) in stats.by_plies.iter().enumerate() {
        if *n > 0 {
            println!("{plies:>12}  {n:>9}  {proven:>6}");
        }
    }
    println!("written to {}", args.out.display());
    Ok(())
}

/// `--teacher SPEC`: label the teacher's games.
fn teach(teacher: PlayerSpec, args: &Args) -> anyhow::Result<()> {
    ensure!(args.games >= 1, "--games must be at least 1");
    ensure!(args.ply_cap >= 1, "--ply-cap must be at least 1");
    let config = TeacherConfig {
        variant: args.variant,
        teacher,
        games: args.games,
        plies: parse_plies(&args.plies)?,
        ply_cap: args.ply_cap,
        threads: threads(args),
        seed: args.seed,
        exclude_eval_seeds: args.exclude_eval_seeds.clone(),
    };
    let stats = label_teacher_games(&config, &args.out, true).with_context(|| {
        format!(
            "labelling {}'s games into {}",
            config.teacher,
            args.out.display()
        )
    })?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&stats)?);
        return Ok(());
    }
    println!(
        "{} games of {} in {:.0} s (South won {}, North {}, unfinished {}): {} positions labelled; skipped {} repeats and {} excluded",
        stats.games,
        config.teacher,
        stats.secs,
        stats.south_wins,
        stats.north_wins,
        stats.unfinished,
        stats.positions,
        stats.repeats,
        stats.excluded
    );
    println!("written to {}", args.out.display());
    Ok(())
}

/// `--threads`, else every core.
fn threads(args: &Args) -> usize {
    args.threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// `N` or `A-B` (A <= B).
fn parse_plies(s: &str) -> anyhow::Result<OpeningPlies> {
    let parse = |t: &str| {
        t.trim()
            .parse::<u32>()
            .with_context(|| format!("--plies {s:?}: {t:?} is not a ply count"))
    };
    match s.split_once('-') {
        None => Ok(OpeningPlies::exactly(parse(s)?)),
        Some((a, b)) => match OpeningPlies::range(parse(a)?, parse(b)?) {
            Some(r) => Ok(r),
            None => bail!("--plies {s:?}: the range must not run backwards"),
        },
    }
}

/// `--score MODEL`: the network's agreement with the labels in `--out`.
fn score(model: &std::path::Path, args: &Args) -> anyhow::Result<()> {
    let labels = read_labels(&args.out, args.variant)?;
    ensure!(!labels.is_empty(), "no labels in {}", args.out.display());
    let mut net = crate::setup::evaluator(model, Some(args.variant), &Default::default())
        .with_context(|| format!("cannot load {}", model.display()))?;
    let rows = match args.leaf_ab {
        Some(depth) => {
            let leaf =
                LeafAlphaBeta::new(depth, args.leaf_ab_weight).map_err(anyhow::Error::msg)?;
            score_labels(&labels, &mut LeafAlphaBetaEvaluator::new(&mut net, leaf))?
        }
        None => score_labels(&labels, &mut net)?,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(());
    }
    let pct = |a: usize, b: usize| 100.0 * a as f64 / b.max(1) as f64;
    // Solver labels hold a move for won positions only (the solver's winning move); teacher
    // labels for every position (the teacher's move). A teacher label's ply is the game's.
    let mse = |e: f64, n: usize| e / n.max(1) as f64;
    println!("        ply  labels  value right  value MSE  with a move  that move first");
    for r in &rows {
        println!(
            "{:>11}  {:>6}  {:>10.1}%  {:>9.4}  {:>11}  {:>14.1}%",
            r.plies,
            r.labels,
            pct(r.value_right, r.labels),
            mse(r.value_sq_error, r.labels),
            r.with_move,
            pct(r.move_right, r.with_move)
        );
    }
    let sum = |f: fn(&LabelScore) -> usize| rows.iter().map(f).sum::<usize>();
    println!(
        "{:>11}  {:>6}  {:>10.1}%  {:>9.4}  {:>11}  {:>14.1}%",
        "all",
        sum(|r| r.labels),
        pct(sum(|r| r.value_right), sum(|r| r.labels)),
        mse(
            rows.iter().map(|r| r.value_sq_error).sum(),
            sum(|r| r.labels)
        ),
        sum(|r| r.with_move),
        pct(sum(|r| r.move_right), sum(|r| r.with_move))
    );
    Ok(())
}
