//! Self-play: many games in lockstep, one evaluator call per step, samples into shards.
//!
//! Each step (1) selects leaves in every game in flight, in parallel with rayon, finishing
//! searches, playing moves and starting new searches as they come due; (2) gathers every
//! pending leaf's position into one batch; (3) runs one evaluator call; (4) backs up every
//! tree, in parallel. Finished games hand over their samples and records and are replaced
//! by new games, so the batch stays full until the last games run out.
//!
//! Reproducible: game `i` draws every random choice from its own generator seeded with
//! [`crate::util::seeds::derive`]`(seed, i)`, and game ids are handed out in a fixed order, so a
//! seeded run writes the same data however rayon schedules it (given a deterministic
//! evaluator).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{ensure, Context};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::dataio::records::{write_records, GameRecord, GameResult, REASON_PLY_CAP};
use crate::dataio::shard::{Sample, ShardWriter};
use crate::game::{
    After, LegalMove, Outcome, Position, Side, Variant, WinReason, ACTIONS, TOTAL_SEEDS,
};
use crate::neuralnet::Precision;
use crate::search::alphabeta::leaf_ab::{LeafAlphaBeta, LeafAlphaBetaEvaluator};
use crate::search::alphabeta::AlphaBetaParams;
use crate::search::{Algorithm, Evaluator, SearchParams, Tree};
use crate::solve::{Solver, Value};

/// The `[selfplay]` section of a run config.
///
/// ```toml
/// [selfplay]
/// games_in_flight = 256      # games stepped together (one leaf each per evaluator call)
/// sims = 200                 # simulations of a full search
/// cheap_sims = 40            # simulations of a cheap search (playout cap randomization)
/// full_search_fraction = 1.0 # share of moves searched fully and recorded; 1 = cap off
/// max_plies = 400            # games longer than this stop as unfinished ("ply-cap")
/// temperature = [[0, 1.0], [20, 0.5], [40, 0.0]]  # [from ply, temperature], PUCT only
/// cheap_greedy = false       # cheap searches play their best move (no temperature; KataGo)
/// opening_plies = 0          # plies played uniformly at random first, never recorded as samples;
///                            # [lo, hi]: a count drawn uniformly from lo..=hi for each game
/// solver_depth = 0           # > 0: samples the alpha-beta solver proves within this depth get exact targets
/// leaf_ab = 0                # > 0: the search mixes a leaf_ab-ply alpha-beta into every value it reads
/// leaf_ab_weight = 0.35      # the alpha-beta's share of those values
/// precision = "f32"          # or "bf16": the network judges positions in bf16 (faster on
///                            # CPUs with bf16 units: `bao bench net --precision f32,bf16`);
///                            # "int8": the Rust pass in 8-bit integers (AVX-512 VNNI)
/// shard_size = 16384         # samples per shard file
/// seed = 0
/// generation = 0             # model generation, written into shard headers
/// ```
/// Value mixing (z with root q) is left to the trainer: shards keep both.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SelfplayConfig {
    pub games_in_flight: usize,
    pub sims: usize,
    pub cheap_sims: usize,
    pub full_search_fraction: f32,
    pub max_plies: u32,
    pub temperature: Vec<(u32, f32)>,
    /// Cheap (playout-cap) searches play their best move: their few visits make a sampled
    /// move a likely blunder, and they train nothing (KataGo plays them greedily too).
    pub cheap_greedy: bool,
    /// Opening diversity by design: each game starts with this many uniformly random plies
    /// (drawn from the game's own seed), which are in its record but never training samples.
    pub opening_plies: OpeningPlies,
    /// Exact value targets: when a game ends, each of its samples' positions is searched by
    /// the alpha-beta solver to this depth (plies; deterministic, unlike a time limit), and a
    /// proven win or loss replaces both the game result and the root value of the sample, so
    /// the target is exact whatever `q_mix` is. 0 = off. Worth it where positions are proven
    /// cheaply (Kujifunza, docs/solving.md).
    pub solver_depth: u32,
    /// Search-improved targets: every position the search judges also gets a `leaf_ab`-ply
    /// alpha-beta score, mixed into the network's value with weight `leaf_ab_weight`, as a
    /// `net:...:leaf_ab=D` player does (docs/equal-time.md, "Alpha-beta at the leaves": worth
    /// +123 Elo at 800 simulations, but a third of the simulations at equal time). Self-play
    /// pays that time so the samples' root values and visit targets come from the stronger
    /// search, and the network can learn what the mix knows. 0 = off.
    pub leaf_ab: u32,
    pub leaf_ab_weight: f32,
    /// The number format the self-play network judges positions in (see
    /// [`crate::neuralnet::Precision`]); training and checkpoints stay f32.
    pub precision: Precision,
    pub shard_size: usize,
    pub seed: u64,
    pub generation: u32,
}

impl Default for SelfplayConfig {
    fn default() -> Self {
        SelfplayConfig {
            games_in_flight: 256,
            sims: 200,
            cheap_sims: 40,
            full_search_fraction: 1.0,
            max_plies: 400,
            temperature: vec![(0, 1.0), (20, 0.5), (40, 0.0)],
            cheap_greedy: false,
            opening_plies: OpeningPlies::exactly(0),
            solver_depth: 0,
            leaf_ab: 0,
            leaf_ab_weight: LeafAlphaBeta::DEFAULT_WEIGHT,
            precision: Precision::F32,
            shard_size: 16384,
            seed: 0,
            generation: 0,
        }
    }
}

/// How many uniformly random plies open a self-play game: a fixed count (`opening_plies = 2`)
/// or, for each game, a count drawn uniformly from a range (`opening_plies = [0, 4]`).
///
/// Why a range: a fixed count never trains on the positions before it (the start position
/// included), while matches open with their own number of random plies (`bao eval
/// --opening-plies`, 4 by default): positions after a few *uniformly* random plies are ones
/// self-play with a short temperature never reaches, and a network that never saw them
/// misjudges them. A range covers both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "OpeningPliesToml", into = "OpeningPliesToml")]
pub struct OpeningPlies {
    min: u32,
    max: u32,
}

/// The TOML forms of [`OpeningPlies`]: `2` or `[0, 4]`.
#[derive(Clone, Copy, Serialize, Deserialize)]
#[serde(untagged)]
enum OpeningPliesToml {
    Exactly(u32),
    Range([u32; 2]),
}

impl OpeningPlies {
    pub const fn exactly(plies: u32) -> OpeningPlies {
        OpeningPlies {
            min: plies,
            max: plies,
        }
    }

    /// Uniformly from `min..=max`; `None` when `min > max`.
    pub fn range(min: u32, max: u32) -> Option<OpeningPlies> {
        (min <= max).then_some(OpeningPlies { min, max })
    }

    /// The count for one game (a fixed count draws nothing, so seeded runs from before ranges
    /// existed replay the same games).
    pub fn draw(self, rng: &mut impl Rng) -> u32 {
        if self.min == self.max {
            self.min
        } else {
            rng.random_range(self.min..=self.max)
        }
    }
}

impl From<u32> for OpeningPlies {
    fn from(plies: u32) -> OpeningPlies {
        OpeningPlies::exactly(plies)
    }
}

impl TryFrom<OpeningPliesToml> for OpeningPlies {
    type Error = String;
    fn try_from(t: OpeningPliesToml) -> Result<OpeningPlies, String> {
        match t {
            OpeningPliesToml::Exactly(n) => Ok(OpeningPlies::exactly(n)),
            OpeningPliesToml::Range([lo, hi]) => OpeningPlies::range(lo, hi).ok_or_else(|| {
                format!("opening_plies = [{lo}, {hi}]: the range must not run backwards")
            }),
        }
    }
}

impl From<OpeningPlies> for OpeningPliesToml {
    fn from(o: OpeningPlies) -> OpeningPliesToml {
        if o.min == o.max {
            OpeningPliesToml::Exactly(o.min)
        } else {
            OpeningPliesToml::Range([o.min, o.max])
        }
    }
}

impl SelfplayConfig {
    /// Bounds of the keys that size work or memory (see [`Self::validate`]).
    pub const MAX_GAMES_IN_FLIGHT: usize = 65_536;
    pub const MAX_SIMS: usize = 1_000_000;
    pub const MAX_PLIES: u32 = 100_000;

    /// Refuses values that cannot work or would exhaust the machine, naming the key.
    pub fn validate(&self) -> anyhow::Result<()> {
        use crate::config::check_range;
        check_range(
            "selfplay.games_in_flight",
            self.games_in_flight,
            1,
            Self::MAX_GAMES_IN_FLIGHT,
        )?;
        check_range("selfplay.sims", self.sims, 1, Self::MAX_SIMS)?;
        check_range("selfplay.cheap_sims", self.cheap_sims, 1, Self::MAX_SIMS)?;
        ensure!(
            (0.0..=1.0).contains(&self.full_search_fraction),
            "selfplay.full_search_fraction must be in [0, 1]"
        );
        check_range("selfplay.max_plies", self.max_plies, 1, Self::MAX_PLIES)?;
        // No upper bound: a shard holds what the games played, and a fleet worker asks for
        // one shard per batch of games with `usize::MAX`.
        check_range("selfplay.shard_size", self.shard_size, 1, usize::MAX)?;
        crate::config::ensure_key(
            self.solver_depth <= AlphaBetaParams::MAX_DEPTH,
            "selfplay.solver_depth",
            || {
                format!(
                    "selfplay.solver_depth must be at most {}",
                    AlphaBetaParams::MAX_DEPTH
                )
            },
        )?;
        self.leaf_alpha_beta()?;
        ensure!(
            self.temperature.windows(2).all(|w| w[0].0 < w[1].0),
            "selfplay.temperature: plies must increase, e.g. [[0, 1.0], [20, 0.5]]"
        );
        ensure!(
            self.temperature
                .iter()
                .all(|&(_, t)| t >= 0.0 && t.is_finite()),
            "selfplay.temperature: temperatures must be >= 0"
        );
        Ok(())
    }

    /// The alpha-beta the search mixes into its values (`leaf_ab`), if on; an error names a
    /// depth or weight out of range.
    pub fn leaf_alpha_beta(&self) -> anyhow::Result<Option<LeafAlphaBeta>> {
        if self.leaf_ab == 0 {
            return Ok(None);
        }
        LeafAlphaBeta::new(self.leaf_ab, Some(self.leaf_ab_weight))
            .map(Some)
            .map_err(|e| anyhow::anyhow!("selfplay.leaf_ab: {e}"))
    }

    /// The move-choice temperature at `ply` (0 before the schedule's first entry).
    pub fn temperature_at(&self, ply: u32) -> f32 {
        self.temperature
            .iter()
            .rev()
            .find(|&&(p, _)| p <= ply)
            .map_or(0.0, |&(_, t)| t)
    }

    /// The temperature a move at `ply` is chosen with after a full or a cheap search.
    pub fn move_temperature(&self, ply: u32, full_search: bool) -> f32 {
        if !full_search && self.cheap_greedy {
            0.0
        } else {
            self.temperature_at(ply)
        }
    }
}

/// What self-play reads of a run config: the variant and the `[search]` and `[selfplay]`
/// sections. Each section refuses unknown keys; the other sections of a full run config
/// (`[network]`, `[train]`, `[eval]`, ...) are ignored, so that any run config serves `bao
/// selfplay --config` as it is. `bao train` reads the whole file as a [`RunConfig`] first,
/// which refuses unknown sections.
///
/// [`RunConfig`]: crate::training::runconfig::RunConfig
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SelfplayRunConfig {
    pub variant: VariantField,
    pub search: SearchParams,
    pub selfplay: SelfplayConfig,
}

/// The variant with a default (`kiswahili`), for configs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct VariantField(pub Variant);

impl Default for VariantField {
    fn default() -> Self {
        VariantField(Variant::Kiswahili)
    }
}

impl SelfplayRunConfig {
    pub fn new(variant: Variant) -> Self {
        SelfplayRunConfig {
            variant: VariantField(variant),
            ..Default::default()
        }
    }
    pub fn variant(&self) -> Variant {
        self.variant.0
    }
    pub fn validate(&self) -> anyhow::Result<()> {
        self.search.validate()?;
        self.selfplay.validate()
    }
}

/// Figures of a self-play run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SelfplayStats {
    pub games: u64,
    /// Games stopped at the ply cap.
    pub unfinished: u64,
    pub south_wins: u64,
    pub plies: u64,
    /// Samples written.
    pub positions: u64,
    pub simulations: u64,
    /// Leaves sent to the evaluator.
    pub evaluations: u64,
    pub evaluator_calls: u64,
    /// Sum over calls of (leaves / capacity), for the average batch fill.
    pub fill_sum: f64,
    pub wall_secs: f64,
    /// Time inside `Evaluator::evaluate`.
    pub forward_secs: f64,
    pub shards: Vec<PathBuf>,
    pub record_files: Vec<PathBuf>,
    /// Samples whose value the solver proved (`solver_depth`), and of those, how many had a
    /// game result that differed from the proven value (a blunder later in the game).
    pub solver_proven: u64,
    pub solver_corrected: u64,
    /// Hashes of every game's whole move sequence: how many distinct games were played.
    #[serde(skip)]
    pub game_hashes: HashSet<u64>,
    /// Hashes of every game's first [`DIVERSITY_OPENING_PLIES`] moves.
    #[serde(skip)]
    pub opening_hashes: HashSet<u64>,
}

/// Plies that make an "opening" in the diversity figures.
pub const DIVERSITY_OPENING_PLIES: usize = 6;

/// A hash of a move sequence (stable within a run; used to count distinct games).
fn moves_hash(moves: &[String]) -> u64 {
    moves.iter().fold(0x5bd1_e995, |h, m| {
        m.bytes()
            .chain(std::iter::once(b' '))
            .fold(h, |h, b| crate::util::seeds::mix(h ^ b as u64))
    })
}

impl SelfplayStats {
    /// Distinct games (whole move sequences) played.
    pub fn distinct_games(&self) -> usize {
        self.game_hashes.len()
    }
    /// Distinct openings (first [`DIVERSITY_OPENING_PLIES`] plies) played.
    pub fn distinct_openings(&self) -> usize {
        self.opening_hashes.len()
    }
    fn count_game(&mut self, moves: &[String]) {
        self.game_hashes.insert(moves_hash(moves));
        let opening = &moves[..moves.len().min(DIVERSITY_OPENING_PLIES)];
        self.opening_hashes.insert(moves_hash(opening));
    }

    pub fn sims_per_sec(&self) -> f64 {
        self.simulations as f64 / self.wall_secs.max(1e-9)
    }
    pub fn avg_fill(&self) -> f64 {
        self.fill_sum / (self.evaluator_calls.max(1)) as f64
    }
    pub fn avg_plies(&self) -> f64 {
        self.plies as f64 / self.games.max(1) as f64
    }
    pub fn forward_share(&self) -> f64 {
        self.forward_secs / self.wall_secs.max(1e-9)
    }

    /// Adds the figures of a further run (into the same directory) to these.
    pub fn absorb(&mut self, more: SelfplayStats) {
        self.games += more.games;
        self.unfinished += more.unfinished;
        self.south_wins += more.south_wins;
        self.plies += more.plies;
        self.positions += more.positions;
        self.simulations += more.simulations;
        self.evaluations += more.evaluations;
        self.evaluator_calls += more.evaluator_calls;
        self.fill_sum += more.fill_sum;
        self.wall_secs += more.wall_secs;
        self.forward_secs += more.forward_secs;
        self.solver_proven += more.solver_proven;
        self.solver_corrected += more.solver_corrected;
        self.shards.extend(more.shards);
        self.record_files.extend(more.record_files);
        self.game_hashes.extend(more.game_hashes);
        self.opening_hashes.extend(more.opening_hashes);
    }
}

/// A game's seed margin ([`Position::seed_margin`]) for South.
#[derive(Clone, Copy, Debug)]
struct SouthMargin(i32);

impl SouthMargin {
    /// The margin in `pos`.
    fn of(pos: &Position) -> SouthMargin {
        SouthMargin(pos.seed_margin(Side::South))
    }
    /// The margin once `lm` is played from `before` (defined for a winning move too).
    fn after(before: &Position, lm: &LegalMove) -> SouthMargin {
        let m = lm.margin_after(before);
        SouthMargin(if before.to_move() == Side::South {
            m
        } else {
            -m
        })
    }
    /// The margin for `side` over the 64 seeds of the game (R1): the auxiliary target.
    fn for_side(self, side: Side) -> f32 {
        let m = if side == Side::South { self.0 } else { -self.0 };
        m as f32 / TOTAL_SEEDS as f32
    }
}

/// One game in flight.
struct Slot {
    id: u64,
    rng: ChaCha8Rng,
    tree: Tree,
    ply: u32,
    full: bool,
    record: GameRecord,
    samples: Vec<(Sample, Side)>,
    positions: Vec<Position>,
    masks: Vec<u64>,
    sims: u64,
    /// Samples proven and corrected by the solver (`solver_depth`).
    solver_proven: u64,
    solver_corrected: u64,
    done: bool,
}

impl Slot {
    fn new(
        id: u64,
        start: Position,
        seed: u64,
        params: &SearchParams,
        cfg: &SelfplayConfig,
    ) -> Slot {
        let mut record = GameRecord::new(&start);
        record.id = Some(id);
        let mut slot = Slot {
            id,
            rng: ChaCha8Rng::seed_from_u64(crate::util::seeds::derive(seed, id)),
            tree: Tree::new(start),
            ply: 0,
            full: true,
            record,
            samples: Vec::new(),
            positions: Vec::new(),
            masks: Vec::new(),
            sims: 0,
            solver_proven: 0,
            solver_corrected: 0,
            done: false,
        };
        slot.play_opening(cfg);
        if !slot.done {
            slot.start_search(params, cfg);
        }
        slot
    }

    /// Plays the configured random opening plies (in the record, never samples). A game
    /// that ends inside its opening is finished like any other.
    fn play_opening(&mut self, cfg: &SelfplayConfig) {
        for _ in 0..cfg.opening_plies.draw(&mut self.rng) {
            let pos = *self.tree.root_position();
            let moves = pos.legal_moves();
            if moves.is_empty() {
                return self.finish_without_moves(&pos, cfg);
            }
            let lm = moves.as_slice()[self.rng.random_range(0..moves.len())];
            match self.play(&pos, &lm, cfg) {
                Some(p) => self.tree = Tree::new(p),
                None => return,
            }
        }
    }

    /// The side to move at `pos` has no legal move: it has lost (R10).
    fn finish_without_moves(&mut self, pos: &Position, cfg: &SelfplayConfig) {
        let outcome = Outcome {
            winner: pos.to_move().opponent(),
            reason: WinReason::NoMove,
        };
        self.finish_game(Some(outcome), SouthMargin::of(pos), cfg);
    }

    /// Records `lm`, played at `pos`; the position it leads to, or `None` when it ended the
    /// game (a win, or the ply cap).
    fn play(&mut self, pos: &Position, lm: &LegalMove, cfg: &SelfplayConfig) -> Option<Position> {
        self.record.push(lm, pos.to_move());
        self.ply += 1;
        let margin = SouthMargin::after(pos, lm);
        match lm.after {
            After::Won(outcome) => self.finish_game(Some(outcome), margin, cfg),
            After::Position(_) if self.ply >= cfg.max_plies => self.finish_game(None, margin, cfg),
            After::Position(p) => return Some(p),
        }
        None
    }

    fn start_search(&mut self, params: &SearchParams, cfg: &SelfplayConfig) {
        let f = cfg.full_search_fraction;
        self.full = if f >= 1.0 {
            true
        } else if f <= 0.0 {
            false
        } else {
            self.rng.random::<f32>() < f
        };
        let sims = if self.full { cfg.sims } else { cfg.cheap_sims };
        self.tree.begin(params, sims, self.full, &mut self.rng);
    }

    /// Plays moves whose search is done, then selects this step's leaves.
    fn select(&mut self, params: &SearchParams, cfg: &SelfplayConfig) {
        self.positions.clear();
        self.masks.clear();
        while !self.done {
            if self.tree.is_done() {
                self.finish_move(params, cfg);
                continue;
            }
            self.tree.select(
                params,
                params.leaves_per_step,
                &mut self.positions,
                &mut self.masks,
            );
            if self.tree.pending() > 0 || !self.tree.is_done() {
                break;
            }
        }
    }

    fn finish_move(&mut self, params: &SearchParams, cfg: &SelfplayConfig) {
        let result = self.tree.result(params);
        self.sims += result.simulations as u64;
        let pos = *self.tree.root_position();
        let Some(best) = result.best_move else {
            return self.finish_without_moves(&pos, cfg);
        };
        if self.full {
            let sample = Sample {
                position: pos.to_bytes(),
                legal: result.legal_mask(),
                policy: result.policy,
                z: 0.0,
                q: result.root_value,
                game_id: self.id,
                ply: self.ply,
                full_search: true,
                reply: None,
                margin: None,
            };
            self.samples.push((sample, pos.to_move()));
        }
        let mv = match params.algorithm {
            Algorithm::Gumbel => best,
            Algorithm::Puct => result
                .sample_move(cfg.move_temperature(self.ply, self.full), &mut self.rng)
                .unwrap_or(best),
        };
        let moves = pos.legal_moves();
        let lm = *moves.get(mv).expect("search moves are legal");
        // This move is the reply to the previous ply's sample (the last or, when this ply made
        // one too, the one before it).
        let previous = self.ply.checked_sub(1);
        if let Some((s, _)) =
            (self.samples.iter_mut().rev().take(2)).find(|(s, _)| Some(s.ply) == previous)
        {
            s.reply = Some(lm.mv.action() as u8);
        }
        if let Some(p) = self.play(&pos, &lm, cfg) {
            if !(params.reuse_tree && self.tree.advance(mv, Some(p))) {
                self.tree = Tree::new(p);
            }
            self.start_search(params, cfg);
        }
    }

    /// Ends the game: results, and the final seed margin (`margin`, also for a game stopped
    /// at the ply cap: the score it stood at), into every sample.
    fn finish_game(&mut self, outcome: Option<Outcome>, margin: SouthMargin, cfg: &SelfplayConfig) {
        match outcome {
            Some(o) => self.record.finish_won(o),
            None => self.record.finish_unfinished(REASON_PLY_CAP),
        }
        let result = self.record.result;
        for (s, side) in &mut self.samples {
            s.z = result.value_for(*side);
            s.margin = Some(margin.for_side(*side));
        }
        if cfg.solver_depth > 0 {
            self.prove_targets(cfg.solver_depth);
        }
        self.done = true;
    }

    /// `solver_depth`: proven values replace the targets of the samples they cover.
    fn prove_targets(&mut self, depth: u32) {
        for (s, _) in &mut self.samples {
            let Ok(pos) = s.position() else { continue };
            // A fresh small table per position: "proven within the depth" then means the same
            // whatever was searched before (1 MiB, cleared in microseconds).
            let mut solver = Solver::new(Duration::ZERO, 1);
            let exact = match solver.solve_value_to_depth(&pos, depth) {
                Value::Win => 1.0,
                Value::Loss => -1.0,
                Value::Unknown => continue,
            };
            self.solver_proven += 1;
            self.solver_corrected += (s.z != exact) as u64;
            s.z = exact;
            s.q = exact;
        }
    }
}

/// Plays `games` self-play games with `evaluator` and writes their samples (shards
/// `selfplay-NNNNNN.shard`) and records (`selfplay-NNNNNN.games.jsonl`, the games finished
/// since the previous shard) into `out_dir`. `progress` draws a progress bar on stderr.
pub fn run_selfplay(
    config: &SelfplayRunConfig,
    evaluator: &mut dyn Evaluator,
    games: usize,
    out_dir: &Path,
    progress: bool,
) -> anyhow::Result<SelfplayStats> {
    config.validate()?;
    let params = &config.search;
    let cfg = &config.selfplay;
    let mut mixed;
    let evaluator: &mut dyn Evaluator = match cfg.leaf_alpha_beta()? {
        Some(leaf) => {
            mixed = LeafAlphaBetaEvaluator::new(evaluator, leaf);
            &mut mixed
        }
        None => evaluator,
    };
    let start = Position::start(config.variant());
    let t0 = Instant::now();
    let mut writer = ShardWriter::new(
        out_dir,
        "selfplay",
        config.variant(),
        cfg.generation,
        &evaluator.name(),
        cfg.shard_size,
    )?;
    let bar = crate::util::progress::bar(games as u64, "games", progress);
    let mut stats = SelfplayStats::default();
    let mut next_id = 0u64;
    let mut slots: Vec<Slot> = Vec::new();
    while slots.len() < cfg.games_in_flight && (next_id as usize) < games {
        slots.push(Slot::new(next_id, start, cfg.seed, params, cfg));
        next_id += 1;
    }
    let mut records: Vec<GameRecord> = Vec::new();
    let (mut positions, mut masks, mut policy, mut values) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut last_draw = Instant::now() - Duration::from_secs(1);
    while !slots.is_empty() {
        slots
            .par_iter_mut()
            .with_min_len(4)
            .for_each(|s| s.select(params, cfg));

        // Finished games: samples to shards, records beside them, new games in their place.
        // A new game can end inside its random opening plies, done before it searched at all:
        // it is counted at once and another takes its place.
        for slot in slots.iter_mut() {
            while slot.done {
                stats.games += 1;
                stats.count_game(&slot.record.moves);
                stats.plies += slot.ply as u64;
                stats.simulations += slot.sims;
                stats.solver_proven += slot.solver_proven;
                stats.solver_corrected += slot.solver_corrected;
                match slot.record.result {
                    GameResult::Unfinished => stats.unfinished += 1,
                    GameResult::SouthWon => stats.south_wins += 1,
                    GameResult::NorthWon => {}
                }
                records.push(std::mem::replace(&mut slot.record, GameRecord::new(&start)));
                for (sample, _) in slot.samples.drain(..) {
                    stats.positions += 1;
                    let index = writer.next_index();
                    if let Some(path) = writer.push(sample)? {
                        stats.shards.push(path);
                        let rpath = writer.companion_path(index, "games.jsonl");
                        write_records(&rpath, &records)?;
                        records.clear();
                        stats.record_files.push(rpath);
                    }
                }
                bar.inc(1);
                if (next_id as usize) >= games {
                    break;
                }
                *slot = Slot::new(next_id, start, cfg.seed, params, cfg);
                next_id += 1;
                slot.select(params, cfg);
            }
        }
        slots.retain(|s| !s.done);

        positions.clear();
        masks.clear();
        for s in &slots {
            positions.extend_from_slice(&s.positions);
            masks.extend_from_slice(&s.masks);
        }
        let n = masks.len();
        if n > 0 {
            policy.resize(n * ACTIONS, 0.0);
            values.resize(n, 0.0);
            let tf = Instant::now();
            evaluator
                .evaluate(&positions, &masks, &mut policy, &mut values)
                .with_context(|| format!("evaluator {} failed", evaluator.name()))?;
            stats.forward_secs += tf.elapsed().as_secs_f64();
            stats.evaluations += n as u64;
            stats.evaluator_calls += 1;
            stats.fill_sum += n as f64 / (cfg.games_in_flight * params.leaves_per_step) as f64;
            let mut offsets = Vec::with_capacity(slots.len());
            let mut at = 0;
            for s in &slots {
                offsets.push(at);
                at += s.masks.len();
            }
            let (policy, values) = (&policy, &values);
            slots
                .par_iter_mut()
                .zip(offsets)
                .with_min_len(4)
                .for_each(|(s, at)| {
                    let k = s.masks.len();
                    if k > 0 {
                        s.tree.apply(
                            params,
                            &policy[at * ACTIONS..(at + k) * ACTIONS],
                            &values[at..at + k],
                            &mut s.rng,
                        );
                    }
                });
        }
        if progress && last_draw.elapsed() > Duration::from_millis(250) {
            last_draw = Instant::now();
            let in_flight: u64 = slots
                .iter()
                .map(|s| s.sims + s.tree.simulations() as u64)
                .sum();
            let secs = t0.elapsed().as_secs_f64().max(1e-9);
            bar.set_message(format!(
                "{} positions  {:.0} sims/s  fill {:.0}%  {:.1} plies/game",
                stats.positions,
                (stats.simulations + in_flight) as f64 / secs,
                100.0 * stats.fill_sum / stats.evaluator_calls.max(1) as f64,
                stats.avg_plies(),
            ));
        }
    }
    let index = writer.next_index();
    if let Some(path) = writer.flush()? {
        stats.shards.push(path);
    }
    if !records.is_empty() {
        let rpath = writer.companion_path(index, "games.jsonl");
        write_records(&rpath, &records)?;
        stats.record_files.push(rpath);
    }
    stats.wall_secs = t0.elapsed().as_secs_f64();
    bar.finish_and_clear();
    Ok(stats)
}
