//! A run config (`configs/*.toml`, a run directory's `config.toml`, a fleet's `run.toml`):
//! the game, the network, search and self-play settings, the training schedule's knobs and
//! the end-of-generation evaluation. Parsed strictly: unknown keys are refused, naming the
//! file and line.

use std::path::Path;

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::game::Variant;
use crate::neuralnet::{DeviceChoice, NetConfig, OptimizerConfig};
use crate::program::players::PlayerSpec;
use crate::program::selfplay::{SelfplayConfig, SelfplayRunConfig, VariantField};
use crate::search::SearchParams;

/// `[train]`: the loop and the sample window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrainConfig {
    /// Generations to run (the run stops after this many; raise it and rerun to go on).
    pub generations: u32,
    /// Self-play games per generation.
    pub games_per_generation: usize,
    /// Window of the newest positions trained on: `window_min` at first, growing by
    /// `window_growth` per generation up to `window_max` (KataGo-style). A run started from a
    /// checkpoint (`--init`) also plays generation 1 until it holds `window_min` positions.
    pub window_min: usize,
    pub window_growth: usize,
    pub window_max: usize,
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
    /// Left-right mirror augmentation (kujifunza only: its rules are symmetric).
    pub mirror: bool,
    pub seed: u64,
    pub device: DeviceChoice,
}

impl Default for TrainConfig {
    fn default() -> TrainConfig {
        TrainConfig {
            generations: 10,
            games_per_generation: 200,
            window_min: 20_000,
            window_growth: 10_000,
            window_max: 250_000,
            batch_size: 256,
            reuse: 4.0,
            max_steps_per_generation: 500,
            q_mix: 0.0,
            lr_drop_generation: u32::MAX,
            lr_drop: 0.1,
            mirror: true,
            seed: 1,
            device: DeviceChoice::Auto,
        }
    }
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
}

impl RunConfig {
    pub fn load(path: &Path) -> anyhow::Result<RunConfig> {
        let c: RunConfig = crate::config::load_toml(path)?;
        c.validate()
            .with_context(|| format!("invalid config {}", path.display()))?;
        Ok(c)
    }

    pub fn validate(&self) -> anyhow::Result<()> {
        self.network.validate()?;
        self.optimizer.validate()?;
        self.selfplay_config().validate()?;
        let t = &self.train;
        anyhow::ensure!(
            t.batch_size > 0 && t.games_per_generation > 0,
            "[train] batch_size and games_per_generation must be > 0"
        );
        anyhow::ensure!(
            t.window_min > 0 && t.window_max >= t.window_min,
            "[train] needs 0 < window_min <= window_max"
        );
        anyhow::ensure!(
            (0.0..=1.0).contains(&t.q_mix),
            "[train] q_mix must be in [0, 1]"
        );
        anyhow::ensure!(t.reuse > 0.0, "[train] reuse must be > 0");
        Ok(())
    }

    /// The self-play settings of this run (its variant, `[search]`, `[selfplay]`); seeds
    /// and generation are the schedule's to set ([`super::schedule::Schedule::selfplay`]).
    pub fn selfplay_config(&self) -> SelfplayRunConfig {
        SelfplayRunConfig {
            variant: VariantField(self.variant),
            search: self.search.clone(),
            selfplay: self.selfplay.clone(),
            ..Default::default()
        }
    }
}
