//! Training a checkpoint on sample shards alone (`bao learn --model`): self-play may run
//! elsewhere and only share the shard directory. With a teacher the targets come from a frozen
//! network (distillation, [`Teacher`]), and a network architecture starts the model as a fresh
//! network of that size: a smaller, faster student of a trained model.

use std::path::PathBuf;

use anyhow::Context;
use rand::SeedableRng;

use crate::game::Variant;
use crate::neuralnet::{DeviceChoice, Learner, Losses, NetConfig, Network, OptimizerConfig};
use crate::training::minibatch::{load_window, train_steps, Teacher};
use crate::training::schedule::Minibatches;

/// What to train, on what, and how (the `bao learn` flags).
#[derive(Clone, Debug)]
pub struct LearnOptions {
    /// Directory of sample shards (searched one level deep too, e.g. a run's `data/`).
    pub data: PathBuf,
    /// Checkpoint to start from (its optimizer state is resumed if present), or, with
    /// `network`, where the fresh network goes (it must not exist yet).
    pub model: PathBuf,
    /// Where to write the trained checkpoint (default: overwrite `model`, atomically).
    pub out: Option<PathBuf>,
    pub steps: usize,
    pub batch_size: usize,
    /// Newest positions to sample from.
    pub window: usize,
    pub learning_rate: Option<f64>,
    pub device: Option<DeviceChoice>,
    pub seed: u64,
    /// A frozen checkpoint whose policy and value become the targets, blended with the
    /// samples' own by `teacher_weight` (in (0, 1]).
    pub teacher: Option<PathBuf>,
    pub teacher_weight: f32,
    /// Start `model` as a fresh network of this architecture (a TOML file as in
    /// `configs/network/`; weights drawn from `seed`).
    pub network: Option<PathBuf>,
    /// The fresh network's variant (default: the teacher's).
    pub variant: Option<Variant>,
    /// Search settings `KEY=VALUE` the written checkpoint records over the ones it carries.
    pub search: Vec<String>,
    pub progress: bool,
}

/// What [`learn`] did.
#[derive(Clone, Debug)]
pub struct Learned {
    pub steps: usize,
    /// Positions in the window it sampled from.
    pub positions: usize,
    /// Mean policy and value loss over the steps (none for 0 steps).
    pub loss: Option<Losses>,
    pub out: PathBuf,
}

/// Trains (or distils) as `args` say and writes the checkpoint; every input is checked before
/// anything is written.
pub fn learn(args: &LearnOptions) -> anyhow::Result<Learned> {
    let model = args.model.clone();
    let data = args.data.clone();
    let device = args.device.unwrap_or_default().resolve()?;
    let config = OptimizerConfig::default();
    let teacher_net = match &args.teacher {
        Some(path) => Some(
            crate::setup::network(path, None, device)
                .with_context(|| format!("--teacher {}", path.display()))?,
        ),
        None => None,
    };
    let mut learner = match &args.network {
        Some(arch) => {
            anyhow::ensure!(
                !model.exists(),
                "--network starts a fresh network, but --model {} exists (drop --network to \
                 train it on)",
                model.display()
            );
            let net_config: NetConfig = crate::config::load_toml(arch)?;
            let variant = args
                .variant
                .or(teacher_net.as_ref().map(Network::variant))
                .context("--network needs --variant (or a --teacher to take it from)")?;
            let mut net = Network::new_seeded(&net_config, variant, device, args.seed)
                .with_context(|| format!("--network {}", arch.display()))?;
            // A student plays with the search settings its teacher was trained with.
            net.set_search_params(
                teacher_net
                    .as_ref()
                    .and_then(|t| t.search_params().cloned()),
            );
            let mut learner = Learner::new(net, config)?;
            // Its lineage names the teacher: the checkpoint it learned from.
            learner.set_lineage(0, args.teacher.as_ref().map(|t| t.display().to_string()));
            learner
        }
        None => match Learner::resume(&model, device, config.clone()) {
            Ok(l) => l,
            Err(_) => Learner::new(crate::setup::network(&model, None, device)?, config)?,
        },
    };
    let teacher = match teacher_net {
        Some(net) => Some(Teacher::new(net, args.teacher_weight, learner.network())?),
        None => None,
    };
    if let Some(lr) = args.learning_rate {
        learner.set_learning_rate(lr)?;
    }
    if !args.search.is_empty() {
        let carried = learner
            .network()
            .search_params()
            .cloned()
            .unwrap_or_default();
        learner.set_search_params(carried.with_assignments("--search", &args.search)?);
    }
    let out = args.out.clone().unwrap_or_else(|| model.clone());
    if args.steps == 0 {
        learner.save(&out)?;
        return Ok(Learned {
            steps: 0,
            positions: 0,
            loss: None,
            out,
        });
    }
    let mut dirs: Vec<PathBuf> = vec![data.clone()];
    let mut subdirs: Vec<PathBuf> = std::fs::read_dir(&data)
        .with_context(|| format!("cannot list {}", data.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    subdirs.sort();
    subdirs.reverse(); // gen-NNNNNN names sort oldest first
    dirs.extend(subdirs);
    let window = load_window(&dirs, args.window)?;
    anyhow::ensure!(
        !window.is_empty(),
        "no sample shards under {}",
        data.display()
    );
    let mut plan = Minibatches {
        steps: args.steps,
        batch_size: args.batch_size,
        labels_fraction: 0.0,
        // Left-right mirroring holds for Kujifunza's rules only (as in a run's schedule).
        mirror: learner.network().variant() == crate::game::Variant::Kujifunza,
        q_mix: 0.0,
        rng: rand::rngs::SmallRng::seed_from_u64(args.seed),
    };
    let bar = crate::util::progress::bar(args.steps as u64, "steps", args.progress);
    let mean = train_steps(
        &mut learner,
        &window,
        &[],
        teacher.as_ref(),
        &mut plan,
        |_| {
            bar.inc(1);
            Ok(())
        },
    )?;
    bar.finish_and_clear();
    learner.save(&out)?;
    Ok(Learned {
        steps: args.steps,
        positions: window.len(),
        loss: Some(mean),
        out,
    })
}
