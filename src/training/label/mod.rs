//! Solver-labelled training positions (`bao label`): exact targets for the positions that
//! self-play cannot teach.
//!
//! Why: in Kujifunza the network's remaining losses against alpha-beta are decided at the
//! first move after a match's random opening, in positions whose only winning move starts a
//! 20-30-ply forced line (docs/journal.md, "Kujifunza phase 4: solver labels"). Self-play at a few dozen simulations never finds
//! such lines, so its game results teach the wrong value there; the solver proves them in a
//! fraction of a second each. Like Leela Chess Zero's rescoring of training data with endgame
//! tablebases, the proven value (and a proven winning move) becomes the target.
//!
//! What is labelled: positions after a uniformly random number of uniformly random plies
//! (drawn as a match draws its openings: [`opening`]), distinct, each searched by the
//! solver for `budget` of wall time. A proven win becomes a sample with value 1 and the
//! solver's winning move as its policy target; a proven loss a sample with value -1 and no
//! policy target (every move loses, so none is worth teaching; an all-zero policy row adds
//! nothing to the cross-entropy); an unproven position is dropped. The trainer mixes these
//! into every minibatch at a fixed share (`[train] labels`, `labels_fraction`).

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{ensure, Context};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use serde::Serialize;

use crate::dataio::shard::{list_shards, read_shard, Sample, ShardWriter};
use crate::eval::tournament::TournamentConfig;
use crate::game::random_games::opening;
use crate::game::{After, LegalMove, Position, Variant, ACTIONS, PACKED_LEN};
use crate::search::Evaluator;
use crate::solve::{Solver, Value};
use crate::training::selfplay::OpeningPlies;
use crate::util::seeds::mix;

pub mod teacher;

/// File name prefix of label shards (`labels-NNNNNN.shard`).
pub const PREFIX: &str = "labels";
/// Samples per shard: a run stopped early keeps all but the last few hundred.
const SHARD_SIZE: usize = 500;

/// What `bao label` draws and how long it may think.
#[derive(Clone, Debug)]
pub struct LabelConfig {
    pub variant: Variant,
    /// Random plies before each position (a count drawn per position).
    pub plies: OpeningPlies,
    /// Distinct new positions to draw (some are dropped unproven).
    pub positions: usize,
    /// Solver wall time per position.
    pub budget: Duration,
    /// Transposition table per solver thread, MiB.
    pub tt_mb: usize,
    pub threads: usize,
    pub seed: u64,
    /// `bao eval --seed` values whose openings must stay unseen: the first
    /// [`EXCLUDED_OPENINGS`] openings of each (at the default opening plies), and every
    /// position one move after them (the opponent's first decision), are never labelled, so
    /// a match on those seeds measures what the network learned, not what it was told.
    pub exclude_eval_seeds: Vec<u64>,
}

/// Openings per excluded `bao eval` seed (a match of up to 1,000 games).
pub const EXCLUDED_OPENINGS: u32 = 500;

/// What one `bao label` run did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LabelStats {
    /// Positions solved (distinct, and new to the directory).
    pub positions: usize,
    pub won: usize,
    pub lost: usize,
    pub unknown: usize,
    /// Positions drawn that were already labelled (in the directory or earlier in this run).
    pub repeats: usize,
    /// Positions drawn that belong to an excluded match's openings (and were skipped).
    pub excluded: usize,
    /// Per number of random plies: `[positions, proven]`.
    pub by_plies: Vec<[usize; 2]>,
    pub secs: f64,
}

/// The training sample of a proven position (`None` when `value` is unknown): see the module
/// docs for the targets.
pub fn labelled_sample(
    pos: &Position,
    plies: u32,
    id: u64,
    value: Value,
    winning: Option<LegalMove>,
) -> Option<Sample> {
    let z = match value {
        Value::Win => 1.0,
        Value::Loss => -1.0,
        Value::Unknown => return None,
    };
    let mut policy = [0f32; ACTIONS];
    if let Some(lm) = winning {
        policy[lm.mv.action()] = 1.0;
    }
    Some(Sample {
        position: pos.to_bytes(),
        legal: pos.legal_moves().mask(),
        policy,
        z,
        q: z,
        game_id: id,
        ply: plies,
        full_search: true,
        reply: None,
        margin: None,
    })
}

/// Every label in `dir` (all its shards), checked to be of `variant`; empty when `dir` does
/// not exist yet.
pub fn read_labels(dir: &Path, variant: Variant) -> anyhow::Result<Vec<Sample>> {
    if !dir.exists() {
        return Ok(Vec::new());
    }
    let mut samples = Vec::new();
    for path in list_shards(dir)? {
        let shard = read_shard(&path)?;
        ensure!(
            shard.header.variant == variant,
            "{} holds {} positions, not {}",
            path.display(),
            shard.header.variant,
            variant
        );
        samples.extend(shard.samples);
    }
    Ok(samples)
}

/// What every label run starts from.
struct LabelRun {
    /// Positions already labelled in the directory: never written again.
    seen: HashSet<[u8; PACKED_LEN]>,
    /// Positions of the excluded matches' openings ([`excluded_positions`]).
    excluded: HashSet<[u8; PACKED_LEN]>,
    /// Appends new label shards to the directory.
    writer: ShardWriter,
}

impl LabelRun {
    /// Reads what `dir` holds (checked to be `variant`'s) and opens it for more labels, made
    /// by `source` (recorded in each shard's header).
    fn open(
        dir: &Path,
        variant: Variant,
        exclude_eval_seeds: &[u64],
        source: &str,
    ) -> anyhow::Result<LabelRun> {
        let seen = read_labels(dir, variant)
            .with_context(|| format!("cannot read the labels already in {}", dir.display()))?
            .iter()
            .map(|s| s.position)
            .collect();
        Ok(LabelRun {
            seen,
            excluded: excluded_positions(variant, exclude_eval_seeds),
            writer: ShardWriter::new(dir, PREFIX, variant, 0, source, SHARD_SIZE)?,
        })
    }
}

/// Draws `config.positions` distinct positions not yet in `dir`, solves them on
/// `config.threads` threads and appends the proven ones to `dir` as label shards.
pub fn label_positions(
    config: &LabelConfig,
    dir: &Path,
    progress: bool,
) -> anyhow::Result<LabelStats> {
    ensure!(config.threads >= 1, "at least one solver thread is needed");
    ensure!(!config.budget.is_zero(), "the solver needs a time budget");
    let t0 = Instant::now();
    let source = &format!("solver:ms={}", config.budget.as_millis());
    let mut run = LabelRun::open(dir, config.variant, &config.exclude_eval_seeds, source)?;
    let mut stats = LabelStats::default();
    let todo = draw(config, &mut run.seen, &run.excluded, &mut stats);
    let bar = crate::util::progress::bar(todo.len() as u64, "positions", progress);
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<(usize, Value, Option<LegalMove>)>();
    std::thread::scope(|scope| -> anyhow::Result<()> {
        for _ in 0..config.threads {
            let (tx, todo, next) = (tx.clone(), &todo, &next);
            scope.spawn(move || {
                let mut solver = Solver::new(config.budget, config.tt_mb);
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((pos, _)) = todo.get(i) else { break };
                    let (value, mv) = solver.solve_with_move(pos);
                    if tx.send((i, value, mv)).is_err() {
                        break; // the writer stopped on an error
                    }
                }
            });
        }
        drop(tx);
        for (i, value, mv) in rx {
            let (pos, plies) = &todo[i];
            let row = *plies as usize;
            if stats.by_plies.len() <= row {
                stats.by_plies.resize(row + 1, [0, 0]);
            }
            stats.by_plies[row][0] += 1;
            stats.positions += 1;
            match value {
                Value::Win => stats.won += 1,
                Value::Loss => stats.lost += 1,
                Value::Unknown => stats.unknown += 1,
            }
            if let Some(sample) = labelled_sample(pos, *plies, i as u64, value, mv) {
                stats.by_plies[row][1] += 1;
                run.writer.push(sample)?;
            }
            bar.inc(1);
            bar.set_message(format!(
                "won {} lost {} unproven {}",
                stats.won, stats.lost, stats.unknown
            ));
        }
        Ok(())
    })?;
    run.writer.flush()?;
    bar.finish_and_clear();
    stats.secs = t0.elapsed().as_secs_f64();
    record_run(config, &stats, dir)?;
    Ok(stats)
}

/// File in a label directory with one JSON line per `bao label` run: how its labels were
/// made (the solver's time limit makes a rerun prove nearly, not exactly, the same set).
pub const RUNS_FILE: &str = "runs.jsonl";

/// Appends a solver run's settings and results to `dir`'s [`RUNS_FILE`].
fn record_run(config: &LabelConfig, stats: &LabelStats, dir: &Path) -> anyhow::Result<()> {
    #[derive(Serialize)]
    struct Run<'a> {
        variant: Variant,
        plies: OpeningPlies,
        ms: u128,
        seed: u64,
        exclude_eval_seeds: &'a [u64],
        threads: usize,
        #[serde(flatten)]
        stats: &'a LabelStats,
    }
    append_run(
        dir,
        &Run {
            variant: config.variant,
            plies: config.plies,
            ms: config.budget.as_millis(),
            seed: config.seed,
            exclude_eval_seeds: &config.exclude_eval_seeds,
            threads: config.threads,
            stats,
        },
    )
}

/// Appends one run's JSON line to `dir`'s [`RUNS_FILE`].
fn append_run(dir: &Path, run: &impl Serialize) -> anyhow::Result<()> {
    let line = serde_json::to_string(run)?;
    let path = dir.join(RUNS_FILE);
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    writeln!(file, "{line}").with_context(|| format!("cannot write {}", path.display()))
}

/// The positions of the openings of `bao eval --seed S` for each of `seeds`, and one move
/// after them (see [`LabelConfig::exclude_eval_seeds`]).
fn excluded_positions(variant: Variant, seeds: &[u64]) -> HashSet<[u8; PACKED_LEN]> {
    let mut out = HashSet::new();
    for &seed in seeds {
        for k in 0..EXCLUDED_OPENINGS {
            let plies = TournamentConfig::DEFAULT_OPENING_PLIES;
            let (pos, _) = opening(variant, plies, seed, k);
            out.insert(pos.to_bytes());
            for lm in pos.legal_moves().iter() {
                if let After::Position(next) = lm.after {
                    out.insert(next.to_bytes());
                }
            }
        }
    }
    out
}

/// The positions to solve: draw `k` is `k` random plies ([`opening`]) with `k` from
/// `config.plies`, skipping any already `seen` or `excluded` (counted in `stats`); gives up
/// after many skips in a row (a small ply range holds few positions). Returns the positions
/// with their ply counts.
fn draw(
    config: &LabelConfig,
    seen: &mut HashSet<[u8; PACKED_LEN]>,
    excluded: &HashSet<[u8; PACKED_LEN]>,
    stats: &mut LabelStats,
) -> Vec<(Position, u32)> {
    let mut todo = Vec::with_capacity(config.positions);
    let mut in_a_row = 0;
    // Salted, so that `--seed 1` draws other positions than the openings of `bao eval
    // --seed 1`: labels must not be the gauge's own answers.
    let seed = mix(config.seed ^ 0x6c61_6265_6c73);
    let mut k = 0u32;
    while todo.len() < config.positions && in_a_row < 10_000 {
        let mut rng = SmallRng::seed_from_u64(mix(seed ^ k as u64));
        let plies = config.plies.draw(&mut rng);
        let (pos, _) = opening(config.variant, plies, seed, k);
        k += 1;
        let key = pos.to_bytes();
        if excluded.contains(&key) {
            stats.excluded += 1;
            in_a_row += 1;
        } else if seen.insert(key) {
            todo.push((pos, plies));
            in_a_row = 0;
        } else {
            stats.repeats += 1;
            in_a_row += 1;
        }
    }
    todo
}

/// How a network's raw outputs (no search) agree with labels of one ply count.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LabelScore {
    pub plies: u32,
    pub labels: usize,
    /// Labels whose value the network gets the sign of.
    pub value_right: usize,
    /// The sum over labels of the squared error of the network's value against the label's
    /// (mean squared error = this / `labels`).
    pub value_sq_error: f64,
    /// Labels with a move to play (a solver label's winning move, a teacher's move), and
    /// those where the network's most likely move is that move (another winning move counts
    /// as a miss: this understates).
    pub with_move: usize,
    pub move_right: usize,
}

/// Scores `evaluator` on `labels`, one row per ply count (`bao label --score`): whether the
/// network learned the labels it trained on, and whether it gets labels it never saw right.
pub fn score_labels(
    labels: &[Sample],
    evaluator: &mut dyn Evaluator,
) -> anyhow::Result<Vec<LabelScore>> {
    let mut rows: Vec<LabelScore> = Vec::new();
    for chunk in labels.chunks(256) {
        let positions = chunk
            .iter()
            .map(Sample::position)
            .collect::<anyhow::Result<Vec<_>>>()?;
        let masks: Vec<u64> = chunk.iter().map(|s| s.legal).collect();
        let mut policy = vec![0f32; chunk.len() * ACTIONS];
        let mut values = vec![0f32; chunk.len()];
        evaluator.evaluate(&positions, &masks, &mut policy, &mut values)?;
        for (i, s) in chunk.iter().enumerate() {
            let row = s.ply as usize;
            if rows.len() <= row {
                rows.resize_with(row + 1, LabelScore::default);
            }
            let r = &mut rows[row];
            r.plies = s.ply;
            r.labels += 1;
            r.value_right += ((values[i] > 0.0) == (s.z > 0.0)) as usize;
            r.value_sq_error += f64::from(values[i] - s.z).powi(2);
            if s.policy.iter().any(|&p| p > 0.0) {
                r.with_move += 1;
                let p = &policy[i * ACTIONS..(i + 1) * ACTIONS];
                let top = (0..ACTIONS)
                    .filter(|&a| s.legal >> a & 1 == 1)
                    .max_by(|&a, &b| p[a].total_cmp(&p[b]));
                r.move_right += top.is_some_and(|a| s.policy[a] > 0.0) as usize;
            }
        }
    }
    rows.retain(|r| r.labels > 0);
    Ok(rows)
}
