//! `bao learn --data DIR --model M --steps K`: train a checkpoint on sample shards alone
//! (self-play may run elsewhere and only share the shard directory).

use std::path::PathBuf;

use anyhow::Context;
use rand::SeedableRng;

use crate::neuralnet::{DeviceChoice, Learner, Network, OptimizerConfig};
use crate::program::train::{load_window, train_steps};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Directory of sample shards (searched one level deep too, e.g. a run's `data/`).
    #[arg(long)]
    pub data: PathBuf,
    /// Checkpoint to start from (`.safetensors`); its optimizer state is resumed if present.
    #[arg(long)]
    pub model: PathBuf,
    #[arg(long, default_value_t = 100)]
    pub steps: usize,
    /// Where to write the trained checkpoint (default: overwrite `--model`, atomically).
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[arg(long, default_value_t = 256)]
    pub batch_size: usize,
    /// Newest positions to sample from.
    #[arg(long, default_value_t = 250_000)]
    pub window: usize,
    #[arg(long)]
    pub learning_rate: Option<f64>,
    #[arg(long, default_value = "auto")]
    pub device: DeviceChoice,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    crate::neuralnet::configure_threads(None);
    let device = args.device.resolve()?;
    let config = OptimizerConfig::default();
    let mut learner = match Learner::resume(&args.model, device, config.clone()) {
        Ok(l) => l,
        Err(_) => Learner::new(Network::load(&args.model, device)?, config)?,
    };
    if let Some(lr) = args.learning_rate {
        learner.set_learning_rate(lr)?;
    }
    let mut dirs: Vec<PathBuf> = vec![args.data.clone()];
    let mut subdirs: Vec<PathBuf> = std::fs::read_dir(&args.data)
        .with_context(|| format!("cannot list {}", args.data.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    subdirs.sort();
    subdirs.reverse(); // gen-NNNNNN names sort oldest first
    dirs.extend(subdirs);
    let window = load_window(&dirs, args.window)?;
    anyhow::ensure!(!window.is_empty(), "no sample shards under {}", args.data.display());
    let variant = learner.network().variant();
    let mut rng = rand::rngs::SmallRng::seed_from_u64(args.seed);
    let bar = indicatif::ProgressBar::new(args.steps as u64);
    let mirror = variant == crate::game::Variant::Kujifunza;
    let mean = train_steps(&mut learner, &window, args.steps, args.batch_size, mirror, 0.0, &mut rng, |_| {
        bar.inc(1);
        Ok(())
    })?;
    bar.finish_and_clear();
    let out = args.out.unwrap_or(args.model);
    learner.save(&out)?;
    println!(
        "{} steps on {} positions: policy loss {:.4}, value loss {:.4}; saved {}",
        args.steps, window.len(), mean.policy, mean.value, out.display()
    );
    Ok(())
}
