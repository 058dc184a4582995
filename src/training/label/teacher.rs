//! Teacher games (`bao label --teacher SPEC`): the positions of games a fixed, stronger player
//! plays against itself, labelled with its move and the game's result.
//!
//! Why: in Kiswahili the solver proves almost nothing early, so [`super::label_positions`]
//! has nothing to teach there, while the project's alpha-beta, searching 12-14 plies in tens
//! of milliseconds, still outplays a network whose own search makes only a few thousand
//! simulations a move. Its moves are better policy targets than a 64-simulation self-play
//! search gives, and the results of its games are value targets from play far stronger than
//! the network's self-play. This is AlphaGo's supervised stage, or expert iteration with a
//! fixed expert, mixed into self-play training at a fixed share (`[train] labels`) rather than
//! replacing it.
//!
//! What is labelled: each game starts from an opening of uniformly random plies (drawn as a
//! match draws its openings: [`opening`]); every position from there on where the teacher
//! moved becomes a sample with the teacher's move as a one-hot policy target and the game's
//! result for the side to move (1 won, -1 lost, 0 unfinished at the ply cap) as both value
//! targets. A position already labelled (in the directory, or earlier in the run) is not
//! written again. Openings of excluded `bao eval` seeds are never played, and positions of
//! theirs never labelled.

use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use anyhow::{bail, ensure, Context};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use serde::Serialize;

use super::{append_run, LabelRun};
use crate::dataio::shard::Sample;
use crate::eval::tournament::{play_game, GameEnd};
use crate::game::random_games::opening;
use crate::game::{LegalMove, Position, Side, Variant, ACTIONS, PACKED_LEN};
use crate::play::players::{self, Limits, PlayerSpec};
use crate::training::selfplay::OpeningPlies;
use crate::util::seeds::mix;

/// What `bao label --teacher` plays.
#[derive(Clone, Debug)]
pub struct TeacherConfig {
    pub variant: Variant,
    /// The player whose games are labelled (both sides), e.g. `alphabeta:ms=50`.
    pub teacher: PlayerSpec,
    /// Games to play.
    pub games: usize,
    /// Random plies before the teacher takes over (a count drawn per game).
    pub plies: OpeningPlies,
    /// A game still going after this many plies is labelled as unfinished (value 0).
    pub ply_cap: u32,
    pub threads: usize,
    pub seed: u64,
    /// As [`super::LabelConfig::exclude_eval_seeds`].
    pub exclude_eval_seeds: Vec<u64>,
}

/// What one teacher run did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TeacherStats {
    pub games: usize,
    pub south_wins: usize,
    pub north_wins: usize,
    pub unfinished: usize,
    /// Samples written.
    pub positions: usize,
    /// Teacher positions not written because they were labelled already.
    pub repeats: usize,
    /// Openings drawn that were an excluded match's (or repeated an opening of this run), and
    /// not played; and teacher positions of excluded openings, not written.
    pub excluded: usize,
    /// Seconds the teacher thought, summed over both sides and threads.
    pub teacher_secs: f64,
    pub secs: f64,
}

/// One game a worker played: its opening's index (the labels' game id), the teacher's
/// positions with their plies and moves, how it ended, the teacher's seconds.
type PlayedGame = (usize, Vec<(Position, u32, LegalMove)>, GameEnd, f64);

/// Plays `config.games` teacher games on `config.threads` threads and appends their labels to
/// `dir` as label shards (read back with [`super::read_labels`], like the solver's).
pub fn label_teacher_games(
    config: &TeacherConfig,
    dir: &Path,
    progress: bool,
) -> anyhow::Result<TeacherStats> {
    ensure!(config.threads >= 1, "at least one thread is needed");
    ensure!(config.games >= 1, "at least one game is needed");
    // Fail on a bad teacher (a missing network file, say) before anything is written.
    players::build(&config.teacher, config.variant, config.seed)
        .with_context(|| format!("cannot build the teacher {}", config.teacher))?;
    let t0 = Instant::now();
    let source = &format!("teacher:{}", config.teacher);
    let mut run = LabelRun::open(dir, config.variant, &config.exclude_eval_seeds, source)?;
    let mut stats = TeacherStats::default();
    let openings = draw_openings(config, &run.excluded, &mut stats);
    let bar = crate::util::progress::bar(openings.len() as u64, "games", progress);
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<anyhow::Result<PlayedGame>>();
    std::thread::scope(|scope| -> anyhow::Result<()> {
        for t in 0..config.threads {
            let (tx, openings, next) = (tx.clone(), &openings, &next);
            scope.spawn(move || {
                let result = play_openings(config, t as u64, openings, next, &tx);
                if let Err(e) = result {
                    let _ = tx.send(Err(e));
                }
            });
        }
        drop(tx);
        for played in rx {
            let (game, steps, end, secs) = played?;
            stats.games += 1;
            stats.teacher_secs += secs;
            let winner = match &end {
                GameEnd::Win { winner, .. } => Some(*winner),
                GameEnd::Unfinished => None,
                GameEnd::Forfeit { loser, reason } => {
                    bail!("the teacher lost a game by forfeit as {loser}: {reason}")
                }
            };
            match winner {
                Some(Side::South) => stats.south_wins += 1,
                Some(Side::North) => stats.north_wins += 1,
                None => stats.unfinished += 1,
            }
            for (pos, ply, lm) in steps {
                let key = pos.to_bytes();
                if run.excluded.contains(&key) {
                    stats.excluded += 1;
                } else if !run.seen.insert(key) {
                    stats.repeats += 1;
                } else {
                    run.writer
                        .push(teacher_sample(&pos, ply, lm, winner, game as u64))?;
                    stats.positions += 1;
                }
            }
            bar.inc(1);
            bar.set_message(format!(
                "{} labels; S {} N {} unfinished {}",
                stats.positions, stats.south_wins, stats.north_wins, stats.unfinished
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

/// The sample of one teacher move: see the module docs for the targets.
pub fn teacher_sample(
    pos: &Position,
    ply: u32,
    teacher_move: LegalMove,
    winner: Option<Side>,
    game_id: u64,
) -> Sample {
    let z = match winner {
        Some(w) if w == pos.to_move() => 1.0,
        Some(_) => -1.0,
        None => 0.0,
    };
    let mut policy = [0f32; ACTIONS];
    policy[teacher_move.mv.action()] = 1.0;
    Sample {
        position: pos.to_bytes(),
        legal: pos.legal_moves().mask(),
        policy,
        z,
        q: z,
        game_id,
        ply,
        full_search: true,
        reply: None,
        margin: None,
    }
}

/// One worker: plays openings (taken in turn from `next`) with two teacher instances and sends
/// each game back.
fn play_openings(
    config: &TeacherConfig,
    thread: u64,
    openings: &[(Position, u32)],
    next: &AtomicUsize,
    tx: &mpsc::Sender<anyhow::Result<PlayedGame>>,
) -> anyhow::Result<()> {
    let seed = mix(config.seed ^ thread << 32);
    let mut south = players::build(&config.teacher, config.variant, seed)?;
    let mut north = players::build(&config.teacher, config.variant, mix(seed))?;
    let limits = Limits::default();
    loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some((start, plies)) = openings.get(i) else {
            return Ok(());
        };
        south.new_game(mix(seed ^ i as u64));
        north.new_game(mix(seed ^ i as u64 ^ 1));
        let mut steps = Vec::new();
        let mut secs = 0.0;
        let (end, _) = play_game(
            &mut *south,
            &mut *north,
            *start,
            *plies,
            config.ply_cap,
            &limits,
            |pos, chosen, time| {
                steps.push((*pos, *plies + steps.len() as u32, chosen.mv));
                secs += time.clock.as_secs_f64();
            },
        );
        if tx.send(Ok((i, steps, end, secs))).is_err() {
            return Ok(()); // the writer stopped on an error
        }
    }
}

/// The games' openings: game `k` starts after `k`'s drawn number of random plies
/// ([`opening`], salted apart from `bao eval`'s and the solver labels' draws); an opening that
/// is an excluded match's position, or repeats one drawn before, is skipped (counted).
fn draw_openings(
    config: &TeacherConfig,
    excluded: &HashSet<[u8; PACKED_LEN]>,
    stats: &mut TeacherStats,
) -> Vec<(Position, u32)> {
    let seed = mix(config.seed ^ 0x0074_6561_6368_6572);
    let mut drawn = HashSet::new();
    let mut out = Vec::with_capacity(config.games);
    let mut k = 0u32;
    while out.len() < config.games && (k as usize) < 100 * config.games + 10_000 {
        let mut rng = SmallRng::seed_from_u64(mix(seed ^ k as u64));
        let plies = config.plies.draw(&mut rng);
        let (pos, _) = opening(config.variant, plies, seed, k);
        k += 1;
        let key = pos.to_bytes();
        if excluded.contains(&key) || !drawn.insert(key) {
            stats.excluded += 1;
        } else {
            out.push((pos, plies));
        }
    }
    out
}

/// Appends a teacher run's settings and results to `dir`'s [`super::RUNS_FILE`].
fn record_run(config: &TeacherConfig, stats: &TeacherStats, dir: &Path) -> anyhow::Result<()> {
    #[derive(Serialize)]
    struct Run<'a> {
        variant: Variant,
        teacher: String,
        plies: OpeningPlies,
        ply_cap: u32,
        seed: u64,
        exclude_eval_seeds: &'a [u64],
        threads: usize,
        #[serde(flatten)]
        stats: &'a TeacherStats,
    }
    append_run(
        dir,
        &Run {
            variant: config.variant,
            teacher: config.teacher.to_string(),
            plies: config.plies,
            ply_cap: config.ply_cap,
            seed: config.seed,
            exclude_eval_seeds: &config.exclude_eval_seeds,
            threads: config.threads,
            stats,
        },
    )
}
