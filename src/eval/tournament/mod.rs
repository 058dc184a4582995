//! Tournaments: round robins and gauntlets played in parallel, with paired openings, a ply
//! cap, per-pair results, Elo ratings and an optional SPRT. Reports (table, JSON, SVG) are in
//! [`report`].
//!
//! Fairness: every random opening (a few uniformly random plies from the start, the same set
//! for every pair) is played twice with colours swapped, so neither the opening nor the first
//! move's advantage favours either player. A game still going at the ply cap is *unfinished*:
//! reported, never counted as a win, left out of the Elo fit (R10).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use serde::Serialize;

mod report;

/// Tournaments draw their openings here (re-exported: tests and tools name it so).
pub use crate::game::random_games::opening;
pub use report::{elo_svg, format_table, write_json};

use crate::dataio::records::{GameRecord, REASON_PLY_CAP};
use crate::eval::elo::{self, PairCounts, Z95};
use crate::eval::movecost::{MoveCosts, MoveTime, MoveTimer, PlayerCosts};
use crate::eval::pentanomial::{PairedEstimate, Pentanomial};
use crate::eval::proofs::{DroppedWin, ProofChecker, ProofCounts};
use crate::eval::sprt::{Sprt, SprtDecision};
use crate::game::{After, Outcome, Position, Side, Variant, WinReason};
use crate::play::players::external::is_engine_failure;
use crate::play::players::{self, ChosenMove, Limits, Player, PlayerSpec};
use crate::search::ClockKind;
use crate::util::seeds::mix;

/// Who plays whom.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// Every pair of players.
    RoundRobin,
    /// The first player against each of the others.
    Gauntlet,
}

/// Everything that defines a tournament; equal configs give equal results (for players that
/// are reproducible: all but time-limited and external ones).
#[derive(Clone, Debug)]
pub struct TournamentConfig {
    pub variant: Variant,
    pub players: Vec<PlayerSpec>,
    pub format: Format,
    /// Games per pair (an odd count plays the last opening once).
    pub games_per_pair: u32,
    /// Plies (from the start, opening included) after which a game is unfinished.
    pub ply_cap: u32,
    /// Random plies of each opening.
    pub opening_plies: u32,
    pub seed: u64,
    /// Worker threads (games in parallel).
    pub threads: usize,
    /// Stop a two-player match early by this test.
    pub sprt: Option<Sprt>,
    /// Show a progress bar.
    pub progress: bool,
    /// The clock time budgets are measured on, and per-move times reported on.
    pub clock: ClockKind,
    /// Check every move against an alpha-beta solver with this CPU budget per position
    /// (outside the players' clocks): proven wins kept and given away, per player.
    pub proofs: Option<std::time::Duration>,
    /// Openings (their move lists) not to play: the seed's stream of openings is read past
    /// them (`bao eval --avoid-openings`; a tuning's gate avoids what the tuning played).
    pub avoid_openings: std::sync::Arc<std::collections::HashSet<Vec<String>>>,
}

impl TournamentConfig {
    pub const DEFAULT_PLY_CAP: u32 = 400;
    pub const DEFAULT_OPENING_PLIES: u32 = 4;

    pub fn new(
        variant: Variant,
        players: Vec<PlayerSpec>,
        games_per_pair: u32,
    ) -> TournamentConfig {
        TournamentConfig {
            variant,
            players,
            format: Format::RoundRobin,
            games_per_pair,
            ply_cap: Self::DEFAULT_PLY_CAP,
            opening_plies: Self::DEFAULT_OPENING_PLIES,
            seed: 1,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            sprt: None,
            progress: false,
            clock: ClockKind::Cpu,
            proofs: None,
            avoid_openings: Default::default(),
        }
    }

    /// The pairs `(a, b)` that play, as indices into `players`.
    pub fn pairs(&self) -> Vec<(usize, usize)> {
        let n = self.players.len();
        match self.format {
            Format::RoundRobin => (0..n)
                .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
                .collect(),
            Format::Gauntlet => (1..n).map(|b| (0, b)).collect(),
        }
    }
}

/// How one game ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum GameEnd {
    /// Won on the board (R10).
    Win { winner: Side, reason: WinReason },
    /// Still going at the ply cap.
    Unfinished,
    /// A player failed (error, illegal move, crashed engine) and lost.
    Forfeit { loser: Side, reason: String },
}

impl GameEnd {
    pub fn winner(&self) -> Option<Side> {
        match self {
            GameEnd::Win { winner, .. } => Some(*winner),
            GameEnd::Forfeit { loser, .. } => Some(loser.opponent()),
            GameEnd::Unfinished => None,
        }
    }
}

/// One played game.
#[derive(Clone, Debug, Serialize)]
pub struct GameSummary {
    /// Index into [`TournamentResult::pairs`].
    pub pair: usize,
    /// Game number within the pair.
    pub game: u32,
    /// Player indices of South and North.
    pub south: usize,
    pub north: usize,
    /// The opening's number and moves.
    pub opening: u32,
    pub opening_moves: Vec<String>,
    pub end: GameEnd,
    /// Plies from the start, opening included.
    pub plies: u32,
    /// What South and North spent on their moves (summed per player in the results).
    #[serde(skip)]
    pub costs: [MoveCosts; 2],
    /// South's and North's proven-value figures, with `proofs` on.
    #[serde(skip)]
    pub proofs: [ProofCounts; 2],
    /// Proven wins given away in this game (with `proofs` on), for anyone to check.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dropped_wins: Vec<DroppedWin>,
    /// Every move of the game, opening included, for `bao replay` and for finding where a
    /// game was lost (`bao eval --out` writes them to `games.jsonl`).
    #[serde(skip)]
    pub record: GameRecord,
}

/// One player's proven-value figures over the tournament.
#[derive(Clone, Debug, Serialize)]
pub struct PlayerProofs {
    pub name: String,
    #[serde(flatten)]
    pub counts: ProofCounts,
    /// Proven wins kept among those whose outcome after the move is known.
    pub kept_share: Option<f64>,
}

impl GameSummary {
    /// The winning player's index, if any.
    pub fn winner(&self) -> Option<usize> {
        self.end.winner().map(|s| {
            if s == Side::South {
                self.south
            } else {
                self.north
            }
        })
    }
}

/// The results of one pair, from `a`'s side.
#[derive(Clone, Debug, Serialize)]
pub struct PairResult {
    pub a: usize,
    pub b: usize,
    pub a_name: String,
    pub b_name: String,
    pub games: u32,
    pub a_wins: u32,
    pub b_wins: u32,
    pub unfinished: u32,
    /// Games lost by forfeit (included in the wins above).
    pub forfeits: u32,
    /// `a_wins / (a_wins + b_wins)`: unfinished games do not count.
    pub a_win_rate: Option<f64>,
    /// Wilson 95% interval of `a_win_rate` (per game: kept for comparison; the games of an
    /// opening pair are correlated, so `paired` is the figure to read).
    pub a_win_rate_ci95: (f64, f64),
    /// `a`'s score in each complete opening pair (both colours played), as pentanomial counts.
    pub pentanomial: Pentanomial,
    /// `a`'s score, Elo and 95% intervals from those pairs.
    pub paired: Option<PairedEstimate>,
    /// `a`'s wins and losses as South and as North (the first-move advantage shows here).
    pub a_as_south: (u32, u32),
    pub a_as_north: (u32, u32),
}

/// One player's rating.
#[derive(Clone, Debug, Serialize)]
pub struct Rating {
    pub name: String,
    pub elo: Option<f64>,
    pub elo_ci95: Option<(f64, f64)>,
    pub games: u32,
    pub wins: u32,
    pub losses: u32,
    pub unfinished: u32,
}

/// The state of an SPRT at the end.
#[derive(Clone, Debug, Serialize)]
pub struct SprtReport {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
    /// The pentanomial (generalised) log-likelihood ratio the decision is taken on.
    pub llr: f64,
    /// The per-game (trinomial) ratio, for comparison with older results.
    pub llr_per_game: f64,
    /// The first player's complete opening pairs.
    pub pentanomial: Pentanomial,
    pub bounds: (f64, f64),
    pub decision: SprtDecision,
}

/// Everything a tournament produced; serialised as the results JSON.
#[derive(Clone, Debug, Serialize)]
pub struct TournamentResult {
    pub variant: Variant,
    pub format: Format,
    pub players: Vec<String>,
    pub games_per_pair: u32,
    pub ply_cap: u32,
    pub opening_plies: u32,
    pub seed: u64,
    /// The clock budgets and the per-move times in `costs` are on.
    pub clock: ClockKind,
    /// The player fixed at Elo 0.
    pub anchor: String,
    /// Whether the Elo fit needed its virtual-draw prior (a perfect score somewhere).
    pub elo_regularized: bool,
    pub pairs: Vec<PairResult>,
    pub ratings: Vec<Rating>,
    /// South's share of the finished games (the first-move advantage).
    pub south_win_rate: Option<f64>,
    pub sprt: Option<SprtReport>,
    pub elapsed_s: f64,
    /// Per player (same order as `players`): time, simulations or nodes, depth and batch fill
    /// per move, so that a match played at unequal cost shows it.
    pub costs: Vec<PlayerCosts>,
    /// Per player, with `proofs` on: proven wins kept and given away.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub proofs: Vec<PlayerProofs>,
    pub games: Vec<GameSummary>,
}

/// A two-player match from `a`'s side, for the training loop's strength checks.
#[derive(Clone, Debug, Serialize)]
pub struct MatchResult {
    pub a_wins: u32,
    pub b_wins: u32,
    pub unfinished: u32,
    pub forfeits: u32,
    /// `a`'s share of the finished games.
    pub score: Option<f64>,
    /// `a`'s Elo over `b` with its 95% interval (virtual-draw prior on perfect scores).
    pub elo: Option<f64>,
    pub elo_ci95: Option<(f64, f64)>,
    pub sprt: Option<SprtReport>,
    /// With proofs checked: `a`'s proven wins kept and given away.
    pub proofs: Option<ProofCounts>,
}

/// How a match is played beyond its two players.
#[derive(Clone, Debug)]
pub struct MatchOptions {
    pub games: u32,
    pub ply_cap: u32,
    pub seed: u64,
    pub progress: bool,
    /// Check every move with a solver of this budget per position (see `bao eval --proofs`).
    pub proofs: Option<std::time::Duration>,
}

/// Plays `games` games between `a` and `b` (paired openings, colours alternated).
pub fn run_match(
    variant: Variant,
    a: &PlayerSpec,
    b: &PlayerSpec,
    options: &MatchOptions,
) -> anyhow::Result<MatchResult> {
    let mut config = TournamentConfig::new(variant, vec![a.clone(), b.clone()], options.games);
    config.ply_cap = options.ply_cap;
    config.seed = options.seed;
    config.progress = options.progress;
    config.proofs = options.proofs;
    let r = run_tournament(&config)?;
    Ok(match_summary(&r))
}

/// The two-player view of a finished tournament of two.
pub fn match_summary(r: &TournamentResult) -> MatchResult {
    let p = &r.pairs[0];
    let fit = elo::fit(
        2,
        1,
        &[PairCounts {
            i: 0,
            j: 1,
            wins_i: p.a_wins as f64,
            wins_j: p.b_wins as f64,
        }],
    );
    MatchResult {
        a_wins: p.a_wins,
        b_wins: p.b_wins,
        unfinished: p.unfinished,
        forfeits: p.forfeits,
        score: p.a_win_rate,
        elo: fit.ratings[0],
        elo_ci95: fit.interval95(0),
        sprt: r.sprt.clone(),
        proofs: r.proofs.first().map(|p| p.counts),
    }
}

/// Plays one game from `start` (reached after `start_plies` plies), showing each move to
/// `on_move` with the position it was played from and its time on `limits.clock` (what the
/// caller does there, such as checking proofs, is outside the clock).
pub fn play_game(
    south: &mut dyn Player,
    north: &mut dyn Player,
    start: Position,
    start_plies: u32,
    ply_cap: u32,
    limits: &Limits,
    mut on_move: impl FnMut(&Position, &ChosenMove, MoveTime),
) -> (GameEnd, u32) {
    let mut pos = start;
    let mut plies = start_plies;
    loop {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            return (
                GameEnd::Win {
                    winner: pos.to_move().opponent(),
                    reason: WinReason::NoMove,
                },
                plies,
            );
        }
        if plies >= ply_cap {
            return (GameEnd::Unfinished, plies);
        }
        let me = pos.to_move();
        let player: &mut dyn Player = if me == Side::South {
            &mut *south
        } else {
            &mut *north
        };
        let timer = MoveTimer::start(limits.clock, player.thinks_on_this_thread());
        let chosen = match players::choose_legal(player, &pos, limits) {
            Ok(c) => {
                on_move(&pos, &c, timer.stop());
                c
            }
            Err(e) => {
                return (
                    GameEnd::Forfeit {
                        loser: me,
                        reason: format!("{e:#}"),
                    },
                    plies,
                )
            }
        };
        plies += 1;
        match chosen.mv.after {
            After::Won(o) => {
                return (
                    GameEnd::Win {
                        winner: o.winner,
                        reason: o.reason,
                    },
                    plies,
                )
            }
            After::Position(p) => pos = p,
        }
    }
}

/// One scheduled game.
#[derive(Clone, Copy)]
struct Job {
    pair: usize,
    game: u32,
    a: usize,
    b: usize,
}

/// Most openings drawn for one that is not avoided before the draw gives up.
const AVOID_DRAWS: u32 = 10_000;

/// The first `count` openings of the config's seed that it does not avoid, in order.
pub fn openings(
    config: &TournamentConfig,
    count: u32,
) -> anyhow::Result<Vec<(Position, Vec<String>)>> {
    let mut out = Vec::with_capacity(count as usize);
    let mut k = 0u32;
    while out.len() < count as usize {
        let mut misses = 0;
        loop {
            let o = opening(config.variant, config.opening_plies, config.seed, k);
            k += 1;
            if !config.avoid_openings.contains(&o.1) {
                out.push(o);
                break;
            }
            misses += 1;
            anyhow::ensure!(
                misses < AVOID_DRAWS,
                "{AVOID_DRAWS} openings of {} plies in a row were among the {} to avoid: too \
                 few others exist; use more opening plies",
                config.opening_plies,
                config.avoid_openings.len()
            );
        }
    }
    Ok(out)
}

/// Plays a whole tournament (see module docs).
pub fn run_tournament(config: &TournamentConfig) -> anyhow::Result<TournamentResult> {
    let started = Instant::now();
    let n = config.players.len();
    anyhow::ensure!(n >= 2, "a tournament needs at least two players (got {n})");
    anyhow::ensure!(config.games_per_pair >= 1, "--games must be at least 1");
    anyhow::ensure!(
        config.ply_cap > config.opening_plies,
        "the ply cap must exceed the opening plies"
    );
    if config.sprt.is_some() {
        anyhow::ensure!(n == 2, "--sprt needs exactly two players (got {n})");
    }
    // Build each player once up front so that a bad spec fails before any game is played. An
    // external engine that starts but fails its handshake is not a bad spec: it forfeits the
    // games it cannot play.
    for spec in &config.players {
        match players::build(spec, config.variant, 0) {
            Ok(_) => {}
            Err(e) if is_engine_failure(&e) => {
                tracing::warn!("{spec}: {e:#}; each of its games starts it again or forfeits")
            }
            Err(e) => return Err(e.context(format!("cannot build player `{spec}`"))),
        }
    }
    let names: Vec<String> = config.players.iter().map(|s| s.display_name()).collect();
    let pairs = config.pairs();
    // Interleave pairs so that a stopped or interrupted run is balanced.
    let jobs: Vec<Job> = (0..config.games_per_pair)
        .flat_map(|g| {
            pairs.iter().enumerate().map(move |(p, &(a, b))| Job {
                pair: p,
                game: g,
                a,
                b,
            })
        })
        .collect();
    let openings = openings(config, config.games_per_pair.div_ceil(2))?;

    let bar = crate::util::progress::bar(jobs.len() as u64, "games", config.progress);

    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let threads = config.threads.clamp(1, jobs.len());
    // Bounded, so that workers never run far ahead of the SPRT that may stop them.
    let (tx, rx) = mpsc::sync_channel::<anyhow::Result<GameSummary>>(threads);
    let mut games: Vec<GameSummary> = Vec::with_capacity(jobs.len());
    let mut sprt_state = config.sprt.map(|s| (s, SprtDecision::Continue));
    let mut failure = None;
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let tx = tx.clone();
            let (jobs, openings, next, stop) = (&jobs, &openings, &next, &stop);
            scope.spawn(move || {
                let mut cache: Vec<Option<Box<dyn Player>>> = (0..n).map(|_| None).collect();
                let mut checker = config.proofs.map(ProofChecker::new);
                loop {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&job) = jobs.get(i) else { break };
                    let opening = &openings[(job.game / 2) as usize];
                    let result = run_job(config, job, opening, &mut cache, &mut checker);
                    if tx.send(result).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for result in rx {
            match result {
                Ok(g) => {
                    // Games still in flight when an SPRT decided are left out, so that the
                    // report is the one the decision was taken on.
                    if sprt_state.is_some_and(|(_, d)| d != SprtDecision::Continue) {
                        continue;
                    }
                    games.push(g);
                    bar.inc(1);
                    if let Some((sprt, decision)) = &mut sprt_state {
                        let (w, l) = a_wins_losses(&games);
                        let pairs = pentanomial_of(&games, 0, 0);
                        *decision = sprt.decide_pairs(&pairs);
                        bar.set_message(format!(
                            "{w}-{l}  pairs {:?}  LLR {:.2}",
                            pairs.counts,
                            sprt.llr_pairs(&pairs)
                        ));
                        if *decision != SprtDecision::Continue {
                            stop.store(true, Ordering::Relaxed);
                        }
                    } else if n == 2 {
                        let (w, l) = a_wins_losses(&games);
                        bar.set_message(format!("{w}-{l}"));
                    }
                }
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    failure.get_or_insert(e);
                }
            }
        }
    });
    bar.finish_and_clear();
    if let Some(e) = failure {
        return Err(e);
    }
    games.sort_by_key(|g| (g.pair, g.game));
    Ok(summarise(
        config,
        &names,
        &pairs,
        games,
        sprt_state.map(|s| s.0),
        started.elapsed().as_secs_f64(),
    ))
}

/// Player `a`'s scores in the complete opening pairs of pair `pair` (games `2k` and `2k + 1`
/// share opening `k`, colours swapped). An unfinished game counts half a point; a pair whose
/// second game is missing (an SPRT stopped, an odd game count) is left out.
fn pentanomial_of(games: &[GameSummary], pair: usize, a: usize) -> Pentanomial {
    let mut halves: std::collections::BTreeMap<u32, (u32, u32)> = Default::default();
    for g in games.iter().filter(|g| g.pair == pair) {
        let points = match g.winner() {
            Some(w) if w == a => 2,
            Some(_) => 0,
            None => 1,
        };
        let e = halves.entry(g.game / 2).or_default();
        e.0 += 1;
        e.1 += points;
    }
    let mut p = Pentanomial::default();
    for (played, points) in halves.into_values() {
        if played == 2 {
            p.add(points);
        }
    }
    p
}

/// Wins and losses of player 0 (a two-player match).
fn a_wins_losses(games: &[GameSummary]) -> (u32, u32) {
    games.iter().fold((0, 0), |(w, l), g| match g.winner() {
        Some(0) => (w + 1, l),
        Some(_) => (w, l + 1),
        None => (w, l),
    })
}

fn run_job(
    config: &TournamentConfig,
    job: Job,
    (start, moves): &(Position, Vec<String>),
    cache: &mut [Option<Box<dyn Player>>],
    checker: &mut Option<ProofChecker>,
) -> anyhow::Result<GameSummary> {
    // Even games give `a` South, odd games give it North: each opening twice, colours swapped.
    let (south, north) = if job.game.is_multiple_of(2) {
        (job.a, job.b)
    } else {
        (job.b, job.a)
    };
    let game_seed = mix(config.seed ^ mix((job.pair as u64) << 32 | job.game as u64));
    // A player that cannot start (an external engine failing its handshake) forfeits.
    let mut unready: Option<(Side, String)> = None;
    for (k, &who) in [south, north].iter().enumerate() {
        if cache[who].is_none() {
            let spec = &config.players[who];
            match players::build(spec, config.variant, game_seed) {
                Ok(p) => cache[who] = Some(p),
                Err(e) if is_engine_failure(&e) => {
                    let side = if k == 0 { Side::South } else { Side::North };
                    unready.get_or_insert((side, format!("{e:#}")));
                    continue;
                }
                Err(e) => return Err(e.context(format!("cannot build player `{spec}`"))),
            }
        }
        cache[who]
            .as_mut()
            .expect("built")
            .new_game(mix(game_seed ^ k as u64));
    }
    let limits = Limits {
        clock: config.clock,
        ..Limits::default()
    };
    let mut costs = [MoveCosts::default(), MoveCosts::default()];
    let mut proofs = [ProofCounts::default(); 2];
    let mut dropped_wins = Vec::new();
    let mut record = GameRecord::new(&Position::start(config.variant));
    record.moves.clone_from(moves);
    let (end, plies) = match unready {
        Some((loser, reason)) => (GameEnd::Forfeit { loser, reason }, moves.len() as u32),
        None => {
            let (ps, pn) = if south < north {
                let (lo, hi) = cache.split_at_mut(north);
                (lo[south].as_deref_mut(), hi[0].as_deref_mut())
            } else {
                let (lo, hi) = cache.split_at_mut(south);
                (hi[0].as_deref_mut(), lo[north].as_deref_mut())
            };
            let (ps, pn) = (ps.expect("built"), pn.expect("built"));
            play_game(
                ps,
                pn,
                *start,
                moves.len() as u32,
                config.ply_cap,
                &limits,
                |pos, chosen, time| {
                    let me = pos.to_move().index();
                    record.push(&chosen.mv, pos.to_move());
                    costs[me].record(time, &chosen.analysis);
                    if let Some(checker) = checker.as_mut() {
                        dropped_wins.extend(checker.check(pos, &chosen.mv, &mut proofs[me]));
                    }
                },
            )
        }
    };
    if let GameEnd::Forfeit { loser, reason } = &end {
        let who = if *loser == Side::South { south } else { north };
        tracing::warn!(
            "{} forfeits game {} of pair {}: {reason}",
            config.players[who],
            job.game,
            job.pair
        );
        // A player that failed is not trusted with another game: the next one builds it
        // afresh (for an external engine, dropping it ends the process that hung or erred).
        cache[who] = None;
    }
    match &end {
        GameEnd::Win { winner, reason } => record.finish_won(Outcome {
            winner: *winner,
            reason: *reason,
        }),
        GameEnd::Unfinished => record.finish_unfinished(REASON_PLY_CAP),
        // Not a result on the board: the record says so and stays replayable.
        GameEnd::Forfeit { loser, reason } => {
            record.finish_unfinished(&format!("forfeit by {loser}: {reason}"))
        }
    }
    record.id = Some(job.pair as u64 * config.games_per_pair as u64 + job.game as u64);
    record.meta.extend([
        ("south".to_string(), config.players[south].to_string()),
        ("north".to_string(), config.players[north].to_string()),
        ("opening".to_string(), (job.game / 2).to_string()),
    ]);
    Ok(GameSummary {
        pair: job.pair,
        game: job.game,
        south,
        north,
        opening: job.game / 2,
        opening_moves: moves.clone(),
        end,
        plies,
        costs,
        proofs,
        dropped_wins,
        record,
    })
}

fn summarise(
    config: &TournamentConfig,
    names: &[String],
    pairs: &[(usize, usize)],
    games: Vec<GameSummary>,
    sprt: Option<Sprt>,
    elapsed_s: f64,
) -> TournamentResult {
    let n = names.len();
    let pair_results: Vec<PairResult> = pairs
        .iter()
        .enumerate()
        .map(|(p, &(a, b))| {
            let mine: Vec<&GameSummary> = games.iter().filter(|g| g.pair == p).collect();
            let a_wins = mine.iter().filter(|g| g.winner() == Some(a)).count() as u32;
            let b_wins = mine.iter().filter(|g| g.winner() == Some(b)).count() as u32;
            let unfinished = mine.iter().filter(|g| g.end == GameEnd::Unfinished).count() as u32;
            let forfeits = mine
                .iter()
                .filter(|g| matches!(g.end, GameEnd::Forfeit { .. }))
                .count() as u32;
            let finished = (a_wins + b_wins) as f64;
            let pentanomial = pentanomial_of(&games, p, a);
            let colour = |south: bool| {
                let as_colour = mine.iter().filter(|g| (g.south == a) == south);
                let won = as_colour.clone().filter(|g| g.winner() == Some(a)).count() as u32;
                let lost = as_colour.filter(|g| g.winner() == Some(b)).count() as u32;
                (won, lost)
            };
            PairResult {
                a,
                b,
                a_name: names[a].clone(),
                b_name: names[b].clone(),
                games: mine.len() as u32,
                a_wins,
                b_wins,
                unfinished,
                forfeits,
                a_win_rate: (finished > 0.0).then(|| a_wins as f64 / finished),
                a_win_rate_ci95: elo::wilson_interval(a_wins as f64, finished, Z95),
                paired: pentanomial.estimate(),
                pentanomial,
                a_as_south: colour(true),
                a_as_north: colour(false),
            }
        })
        .collect();
    let anchor = config
        .players
        .iter()
        .position(|s| s.is_random())
        .unwrap_or(0);
    let counts: Vec<PairCounts> = pair_results
        .iter()
        .map(|p| PairCounts {
            i: p.a,
            j: p.b,
            wins_i: p.a_wins as f64,
            wins_j: p.b_wins as f64,
        })
        .collect();
    let fit = elo::fit(n, anchor, &counts);
    let ratings = (0..n)
        .map(|i| {
            let mine = games.iter().filter(|g| g.south == i || g.north == i);
            let (mut wins, mut losses, mut unfinished, mut total) = (0, 0, 0, 0);
            for g in mine {
                total += 1;
                match g.winner() {
                    Some(w) if w == i => wins += 1,
                    Some(_) => losses += 1,
                    None => unfinished += 1,
                }
            }
            Rating {
                name: names[i].clone(),
                elo: fit.ratings[i],
                elo_ci95: fit.interval95(i),
                games: total,
                wins,
                losses,
                unfinished,
            }
        })
        .collect();
    let finished: Vec<&GameSummary> = games.iter().filter(|g| g.end.winner().is_some()).collect();
    let south_wins = finished
        .iter()
        .filter(|g| g.end.winner() == Some(Side::South))
        .count();
    let sprt = sprt.map(|s| {
        let (w, l) = a_wins_losses(&games);
        let pairs = pentanomial_of(&games, 0, 0);
        SprtReport {
            elo0: s.elo0,
            elo1: s.elo1,
            alpha: s.alpha,
            beta: s.beta,
            llr: s.llr_pairs(&pairs),
            llr_per_game: s.llr(w as f64, l as f64),
            pentanomial: pairs,
            bounds: s.bounds(),
            decision: s.decide_pairs(&pairs),
        }
    });
    TournamentResult {
        variant: config.variant,
        format: config.format,
        players: names.to_vec(),
        games_per_pair: config.games_per_pair,
        ply_cap: config.ply_cap,
        opening_plies: config.opening_plies,
        seed: config.seed,
        clock: config.clock,
        anchor: names[anchor].clone(),
        elo_regularized: fit.regularized,
        pairs: pair_results,
        ratings,
        south_win_rate: (!finished.is_empty()).then(|| south_wins as f64 / finished.len() as f64),
        sprt,
        elapsed_s,
        costs: player_costs(config, names, &games),
        proofs: if config.proofs.is_some() {
            player_proofs(names, &games)
        } else {
            Vec::new()
        },
        games,
    }
}

/// Each player's proven-value figures summed over its games.
fn player_proofs(names: &[String], games: &[GameSummary]) -> Vec<PlayerProofs> {
    let mut sums = vec![ProofCounts::default(); names.len()];
    for g in games {
        sums[g.south].merge(&g.proofs[Side::South.index()]);
        sums[g.north].merge(&g.proofs[Side::North.index()]);
    }
    sums.into_iter()
        .zip(names)
        .map(|(counts, name)| PlayerProofs {
            name: name.clone(),
            counts,
            kept_share: counts.kept_share(),
        })
        .collect()
}

/// Each player's move costs summed over its games.
fn player_costs(
    config: &TournamentConfig,
    names: &[String],
    games: &[GameSummary],
) -> Vec<PlayerCosts> {
    let mut sums = vec![MoveCosts::default(); names.len()];
    for g in games {
        sums[g.south].merge(&g.costs[Side::South.index()]);
        sums[g.north].merge(&g.costs[Side::North.index()]);
    }
    sums.iter()
        .zip(names)
        .map(|(c, n)| c.report(n, config.clock))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(s: &str) -> PlayerSpec {
        s.parse().unwrap()
    }

    #[test]
    fn paired_openings_really_swap_colours() {
        let mut config =
            TournamentConfig::new(Variant::Kujifunza, vec![spec("random"), spec("greedy")], 8);
        config.threads = 2;
        config.ply_cap = 60;
        let r = run_tournament(&config).unwrap();
        assert_eq!(r.games.len(), 8);
        for k in 0..4 {
            let pair: Vec<&GameSummary> = r.games.iter().filter(|g| g.opening == k).collect();
            assert_eq!(pair.len(), 2, "opening {k} is played twice");
            assert_eq!(pair[0].opening_moves, pair[1].opening_moves);
            assert_eq!(
                pair[0].opening_moves.len(),
                TournamentConfig::DEFAULT_OPENING_PLIES as usize
            );
            assert_eq!(
                (pair[0].south, pair[0].north),
                (pair[1].north, pair[1].south),
                "colours swapped"
            );
        }
        // Different openings differ (the seed is used).
        let firsts: std::collections::HashSet<_> =
            r.games.iter().map(|g| g.opening_moves.clone()).collect();
        assert!(firsts.len() >= 3, "{firsts:?}");
    }

    #[test]
    fn ply_cap_makes_games_unfinished_and_never_wins() {
        let mut config =
            TournamentConfig::new(Variant::Kujifunza, vec![spec("random"), spec("random")], 4);
        config.ply_cap = 5;
        config.threads = 1;
        let r = run_tournament(&config).unwrap();
        for g in &r.games {
            match g.end {
                GameEnd::Unfinished => assert_eq!(g.plies, 5, "{g:?}"),
                _ => assert!(g.plies <= 5, "{g:?}"),
            }
        }
        let p = &r.pairs[0];
        assert_eq!(p.a_wins + p.b_wins + p.unfinished, 4);
        assert!(
            p.unfinished >= 3,
            "5 plies rarely finish a random game: {p:?}"
        );
    }

    #[test]
    fn same_seed_same_results() {
        let mut config =
            TournamentConfig::new(Variant::Kujifunza, vec![spec("random"), spec("greedy")], 4);
        config.ply_cap = 80;
        config.threads = 2;
        let a = run_tournament(&config).unwrap();
        let b = run_tournament(&config).unwrap();
        let key = |r: &TournamentResult| {
            r.games
                .iter()
                .map(|g| (g.plies, g.winner()))
                .collect::<Vec<_>>()
        };
        assert_eq!(key(&a), key(&b));
    }
}
