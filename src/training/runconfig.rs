//! A run config (`configs/*.toml`, a run directory's `config.toml`, a fleet's `run.toml`):
//! the game, the network, search and self-play settings, the training schedule's knobs and
//! the end-of-generation evaluation. Parsed strictly: unknown keys are refused, naming the
//! file and line.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::game::Variant;
use crate::neuralnet::{DeviceChoice, NetConfig, OptimizerConfig};
use crate::play::players::PlayerSpec;
use crate::search::SearchParams;
use crate::training::selfplay::{SelfplayConfig, SelfplayRunConfig, VariantField};

/// `[train]`: the loop and the sample window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrainConfig {
    /// Generations to run (the run stops after this many; raise it and rerun to go on).
    pub generations: u32,
    /// Self-play games per generation.
    pub games_per_generation: usize,
    /// Window of the newest positions trained on, at most `window_max`. `linear`:
    /// `window_min` at first, growing by `window_growth` per generation. `sublinear`
    /// (KataGo): every sample until `window_min` (= c) have been played, then
    /// `c * (1 + beta * ((n / c)^alpha - 1) / alpha)` of the `n` played so far, so old
    /// games leave the window as the network outgrows them. A run started from a checkpoint
    /// (`--init`) also plays generation 1 until it holds `window_min` positions.
    pub window: WindowShape,
    pub window_min: usize,
    pub window_growth: usize,
    pub window_max: usize,
    pub window_alpha: f64,
    pub window_beta: f64,
    pub batch_size: usize,
    /// Average times each new sample is used for training (caps steps per generation).
    pub reuse: f64,
    /// At most this many optimizer steps per generation.
    pub max_steps_per_generation: usize,
    /// Value target = (1 - q_mix) * game result + q_mix * root search value.
    pub q_mix: f32,
    /// Learning rate per generation: `lr` until `lr_drop_generation`, then `lr * lr_drop`.
    pub lr_drop_generation: u32,
    pub lr_drop: f64,
    /// A schedule with several steps instead: `[[from generation, rate], ...]` (generations
    /// increasing, the first from 1), e.g. `[[1, 0.002], [30, 0.0006], [60, 0.0002]]`.
    /// When given, it replaces `[optimizer] learning_rate` and the single drop above.
    pub lr_schedule: Vec<(u32, f64)>,
    /// Self-play's search budget by generation: `[[from generation, sims, cheap_sims], ...]`
    /// (generations increasing), replacing `[selfplay] sims` and `cheap_sims` from each step
    /// on (before the first, they hold). A network that has outgrown a small search learns
    /// little more from its targets: the Kiswahili run's teacher stopped gaining at 64
    /// simulations and gained again at 128 (docs/training.md).
    pub sims_schedule: Vec<(u32, usize, usize)>,
    /// Solver-labelled positions mixed into every minibatch: a directory of label shards
    /// written by `bao label` (relative to where `bao train` runs), or none. Read when a run
    /// starts or resumes: adding labels to it mid-run changes what the rest of the run draws.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub labels: Option<PathBuf>,
    /// Share of each minibatch drawn from `labels` (rounded to whole samples); the rest
    /// comes from the self-play window.
    pub labels_fraction: f32,
    /// Left-right mirror augmentation (kujifunza only: its rules are symmetric).
    pub mirror: bool,
    /// Overlap self-play and training: generation `g + 1`'s self-play runs while generation
    /// `g` trains, so both cores work; its games are then played by the network of
    /// generation `g - 1`, one generation older than without the overlap.
    pub pipeline: bool,
    pub seed: u64,
    pub device: DeviceChoice,
}

impl Default for TrainConfig {
    fn default() -> TrainConfig {
        TrainConfig {
            generations: 10,
            games_per_generation: 200,
            window: WindowShape::Linear,
            window_min: 20_000,
            window_growth: 10_000,
            window_max: 250_000,
            window_alpha: 0.75,
            window_beta: 0.4,
            batch_size: 256,
            reuse: 4.0,
            max_steps_per_generation: 500,
            q_mix: 0.0,
            lr_drop_generation: u32::MAX,
            lr_drop: 0.1,
            lr_schedule: Vec::new(),
            sims_schedule: Vec::new(),
            labels: None,
            labels_fraction: 0.0,
            mirror: true,
            pipeline: false,
            seed: 1,
            device: DeviceChoice::Auto,
        }
    }
}

/// How the sample window grows (see [`TrainConfig::window`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WindowShape {
    Linear,
    Sublinear,
}

/// `[eval]`: strength measured at the end of each generation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EvalConfig {
    /// Baseline player specs the network plays.
    pub baselines: Vec<PlayerSpec>,
    /// Games per baseline (even: openings are paired).
    pub games: u32,
    /// Simulations per move of the network player.
    pub sims: u32,
    pub ply_cap: u32,
    /// Play the matches every this many generations (and always in the first and the last),
    /// so evaluation does not take the machine's time from training every generation.
    pub every: u32,
    /// Check every move of the matches with an alpha-beta solver of this many ms per
    /// position (outside the clocks) and record the network's proven wins kept and given
    /// away (`bao eval --proofs`): the measure of strength in Kujifunza, where alpha-beta
    /// proves most positions. Off when absent.
    pub proofs_ms: Option<u64>,
}

impl Default for EvalConfig {
    fn default() -> EvalConfig {
        EvalConfig {
            baselines: vec![
                PlayerSpec::Random { seed: None },
                PlayerSpec::Greedy { seed: None },
            ],
            games: 40,
            sims: 32,
            ply_cap: 300,
            every: 1,
            proofs_ms: None,
        }
    }
}

/// A whole run config (`configs/*.toml`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    pub variant: Variant,
    pub network: NetConfig,
    #[serde(default)]
    pub search: SearchParams,
    #[serde(default)]
    pub selfplay: SelfplayConfig,
    #[serde(default)]
    pub train: TrainConfig,
    #[serde(default)]
    pub optimizer: OptimizerConfig,
    #[serde(default)]
    pub eval: EvalConfig,
    /// A stage after the last generation (and every `every`): the trained network distilled
    /// into a smaller one, the run's player.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distill: Option<crate::training::distill::DistillConfig>,
    /// The run's player against fixed opponents at equal time: its strength curve.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gauntlet: Option<crate::training::gauntlet::GauntletConfig>,
}

/// Bounds of the `[train]` and `[eval]` keys that size work or memory: far beyond any run
/// this project makes, and low enough that a typo fails at once instead of after hours (or in
/// an out-of-memory abort).
pub mod limits {
    pub const GENERATIONS: u32 = 1_000_000;
    pub const GAMES_PER_GENERATION: usize = 1_000_000;
    /// Samples a window may hold (each is a few hundred bytes in memory).
    pub const WINDOW: usize = 50_000_000;
    pub const BATCH_SIZE: usize = 16_384;
    pub const STEPS_PER_GENERATION: usize = 10_000_000;
    pub const REUSE: f64 = 1_000.0;
    pub const EVAL_GAMES: u32 = 100_000;
    pub const EVAL_SIMS: u32 = 1_000_000;
    pub const PLY_CAP: u32 = 100_000;
    /// An hour of solver time per position.
    pub const PROOFS_MS: u64 = 3_600_000;
}

impl RunConfig {
    /// Reads and checks the run config at `path`: errors name the file, and the line of the
    /// key they are about.
    pub fn load(path: &Path) -> anyhow::Result<RunConfig> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read config {}", path.display()))?;
        let what = path.display().to_string();
        let c: RunConfig =
            crate::config::parse_toml(&text).map_err(|e| crate::config::locate(e, &what, &text))?;
        c.validate()
            .map_err(|e| crate::config::locate(e, &what, &text))?;
        Ok(c)
    }

    /// [`Self::load`] with command-line overrides `SECTION.KEY=VALUE` (`bao train --set`)
    /// applied to the file's values, each checked like a key of the file.
    pub fn load_with_overrides(path: &Path, overrides: &[String]) -> anyhow::Result<RunConfig> {
        if overrides.is_empty() {
            return RunConfig::load(path);
        }
        let c: RunConfig = crate::setup::load_config(path, overrides)?;
        c.validate().with_context(|| {
            format!(
                "invalid config {} with --set {}",
                path.display(),
                overrides.join(" ")
            )
        })?;
        Ok(c)
    }

    /// Refuses values that cannot work or would exhaust the machine, naming the key
    /// ([`crate::config::KeyError`]).
    pub fn validate(&self) -> anyhow::Result<()> {
        use crate::config::{check_range, ensure_key};
        self.network.validate()?;
        self.optimizer.validate()?;
        if let Some(d) = &self.distill {
            d.validate(&self.network)?;
        }
        if let Some(g) = &self.gauntlet {
            g.validate(self.distill.is_some())?;
        }
        self.selfplay_config().validate()?;
        let t = &self.train;
        check_range("train.generations", t.generations, 1, limits::GENERATIONS)?;
        check_range(
            "train.games_per_generation",
            t.games_per_generation,
            1,
            limits::GAMES_PER_GENERATION,
        )?;
        check_range("train.window_min", t.window_min, 1, limits::WINDOW)?;
        check_range("train.window_max", t.window_max, 1, limits::WINDOW)?;
        check_range("train.window_growth", t.window_growth, 0, limits::WINDOW)?;
        ensure_key(t.window_max >= t.window_min, "train.window_max", || {
            "[train] needs 0 < window_min <= window_max".into()
        })?;
        check_range("train.batch_size", t.batch_size, 1, limits::BATCH_SIZE)?;
        check_range(
            "train.max_steps_per_generation",
            t.max_steps_per_generation,
            1,
            limits::STEPS_PER_GENERATION,
        )?;
        ensure_key(
            t.reuse > 0.0 && t.reuse <= limits::REUSE,
            "train.reuse",
            || {
                format!(
                    "[train] `reuse` = {} must be > 0 and at most {}",
                    t.reuse,
                    limits::REUSE
                )
            },
        )?;
        ensure_key((0.0..=1.0).contains(&t.q_mix), "train.q_mix", || {
            "[train] q_mix must be in [0, 1]".into()
        })?;
        ensure_key(
            (0.0..1.0).contains(&t.labels_fraction),
            "train.labels_fraction",
            || "[train] labels_fraction must be in [0, 1)".into(),
        )?;
        ensure_key(
            t.labels.is_some() == (t.labels_fraction > 0.0),
            if t.labels.is_some() {
                "train.labels"
            } else {
                "train.labels_fraction"
            },
            || {
                "[train] labels and labels_fraction go together: a directory of `bao label` shards and the share of each minibatch (> 0) drawn from it".into()
            },
        )?;
        let e = &self.eval;
        ensure_key(e.every >= 1, "eval.every", || {
            "[eval] every must be >= 1".into()
        })?;
        check_range("eval.games", e.games, 1, limits::EVAL_GAMES)?;
        check_range("eval.sims", e.sims, 0, limits::EVAL_SIMS)?;
        check_range(
            "eval.ply_cap",
            e.ply_cap,
            crate::eval::tournament::TournamentConfig::DEFAULT_OPENING_PLIES + 1,
            limits::PLY_CAP,
        )?;
        ensure_key(
            e.proofs_ms
                .is_none_or(|ms| (1..=limits::PROOFS_MS).contains(&ms)),
            "eval.proofs_ms",
            || {
                format!(
                    "[eval] proofs_ms must be 1..={} (ms of solver time per position), or absent",
                    limits::PROOFS_MS
                )
            },
        )?;
        if let Some(&(first, _)) = t.lr_schedule.first() {
            ensure_key(
                first <= 1 && t.lr_schedule.windows(2).all(|w| w[0].0 < w[1].0),
                "train.lr_schedule",
                || {
                    "[train] lr_schedule: generations must increase from 1, e.g. [[1, 0.002], [30, 0.0006]]".into()
                },
            )?;
            ensure_key(
                t.lr_schedule.iter().all(|&(_, r)| r > 0.0 && r.is_finite()),
                "train.lr_schedule",
                || "[train] lr_schedule: rates must be > 0".into(),
            )?;
        }
        ensure_key(
            t.sims_schedule.first().is_none_or(|s| s.0 >= 1)
                && t.sims_schedule.windows(2).all(|w| w[0].0 < w[1].0),
            "train.sims_schedule",
            || {
                "[train] sims_schedule: generations must increase from 1 on, e.g. [[200, 128, 32]]"
                    .into()
            },
        )?;
        for &(_, sims, cheap) in &t.sims_schedule {
            check_range("train.sims_schedule", sims, 1, SelfplayConfig::MAX_SIMS)?;
            check_range("train.sims_schedule", cheap, 1, SelfplayConfig::MAX_SIMS)?;
        }
        ensure_key(
            t.window_alpha > 0.0 && t.window_alpha <= 1.0 && t.window_beta > 0.0,
            "train.window_alpha",
            || "[train] needs 0 < window_alpha <= 1 and window_beta > 0".into(),
        )?;
        Ok(())
    }

    /// The self-play settings of this run (its variant, `[search]`, `[selfplay]`); seeds
    /// and generation are the schedule's to set ([`crate::training::schedule::Schedule::selfplay`]).
    pub fn selfplay_config(&self) -> SelfplayRunConfig {
        SelfplayRunConfig {
            variant: VariantField(self.variant),
            search: self.search.clone(),
            selfplay: self.selfplay.clone(),
        }
    }
}
