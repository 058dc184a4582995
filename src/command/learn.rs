//! `bao learn --data DIR --model M --steps K`: train a checkpoint on sample shards alone
//! (self-play may run elsewhere and only share the shard directory). With `--teacher T` the
//! targets come from a frozen network (distillation), and `--network NET.toml` starts `M` as a
//! fresh network of that architecture: a smaller, faster student of a shipped model.
//!
//! `bao learn --data ROOT` (no `--model`): the trainer of a fleet run at ROOT (a directory or
//! an object-store URL), see `bao::program::fleet::trainer`.

use std::path::PathBuf;

use anyhow::Context;
use rand::SeedableRng;

use crate::dataio::store::{is_url, Store};
use crate::game::Variant;
use crate::neuralnet::{DeviceChoice, Learner, NetConfig, Network, OptimizerConfig};
use crate::program::fleet::lease::host_name;
use crate::program::fleet::trainer::{run_trainer, TrainerOptions};
use crate::program::minibatch::{load_window, train_steps, Teacher};
use crate::program::schedule::Minibatches;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Fleet trainer: `bao learn --data ROOT [--config RUN.toml]` with ROOT a \
directory or an s3://, gs://, az:// URL and no --model. The first start needs --config \
(written to ROOT/run.toml, with an optional [fleet] section) and publishes generation 0; then it \
takes new shards from ROOT/shards/, trains once fleet.samples_per_generation new samples have \
come (at most [train] reuse training samples per new sample), publishes \
ROOT/models/gen-NNNNNN.safetensors and moves ROOT/models/LATEST, until [train] generations \
(or --generations). Killed, it resumes from ROOT/trainer/; a second trainer on the same ROOT \
fails at start. Storage errors are retried, then it exits non-zero."
)]
pub struct Args {
    /// Directory of sample shards (searched one level deep too, e.g. a run's `data/`); or, with
    /// no --model, the ROOT of a fleet run (directory or URL).
    #[arg(long)]
    pub data: String,
    /// Checkpoint to start from (`.safetensors`); its optimizer state is resumed if present.
    /// Without it, `bao learn` is the trainer of the fleet run at --data.
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Fleet: run config to start the run with (must match ROOT/run.toml if it exists).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Fleet: stop after publishing this generation (default: [train] generations).
    #[arg(long)]
    pub generations: Option<u32>,
    /// Fleet: stop after this long (e.g. `30m`); a later start resumes.
    #[arg(long, value_parser = humantime::parse_duration)]
    pub max_time: Option<std::time::Duration>,
    /// Fleet: seconds between listings of new shards (default: run.toml's fleet.poll_secs).
    #[arg(long)]
    pub poll: Option<f64>,
    /// Fleet: name in the trainer lease; a restart with the same id takes over at once
    /// (default HOST-PID: a restart on the same host also does, once the old pid is gone).
    #[arg(long)]
    pub trainer_id: Option<String>,
    /// Fleet: local scratch directory (default: a temporary one).
    #[arg(long)]
    pub work_dir: Option<PathBuf>,
    /// No progress bar (fleet).
    #[arg(long)]
    pub quiet: bool,
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
    /// Device (default `auto`; in a fleet, run.toml's [train] device).
    #[arg(long)]
    pub device: Option<DeviceChoice>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Distil: a frozen checkpoint whose policy and value become the targets (blended with
    /// the samples' own by --teacher-weight). It must read the student's input features.
    #[arg(long)]
    pub teacher: Option<PathBuf>,
    /// With --teacher: the teacher's share of every target, in (0, 1].
    #[arg(long, requires = "teacher", default_value_t = 1.0)]
    pub teacher_weight: f32,
    /// Start --model as a fresh network of this architecture (a TOML file as in
    /// configs/network/; weights drawn from --seed) instead of loading it; --model must not
    /// exist yet.
    #[arg(long)]
    pub network: Option<PathBuf>,
    /// With --network: the fresh network's variant (default: the teacher's).
    #[arg(long, requires = "network")]
    pub variant: Option<Variant>,
    /// Search settings the written checkpoint records for whoever plays it (`bao eval`,
    /// `bao play`, the engine), as `KEY=VALUE` over the ones it carries (a fresh student: its
    /// teacher's), checked as a config's `[search]`; e.g. `algorithm=gumbel`. With `--steps 0`
    /// only the settings change.
    #[arg(long = "search", value_name = "KEY=VALUE")]
    pub search: Vec<String>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let Some(model) = args.model.clone() else {
        return run_fleet_trainer(args);
    };
    anyhow::ensure!(
        !is_url(&args.data),
        "--data {}: a URL is a fleet run; drop --model",
        args.data
    );
    let data = PathBuf::from(&args.data);
    crate::neuralnet::configure_threads(None);
    let device = args.device.unwrap_or_default().resolve()?;
    let config = OptimizerConfig::default();
    let teacher_net = match &args.teacher {
        Some(path) => Some(
            Network::load(path, device).with_context(|| format!("--teacher {}", path.display()))?,
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
            Err(_) => Learner::new(Network::load(&model, device)?, config)?,
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
        println!("0 steps: saved {} with its search settings", out.display());
        return Ok(());
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
    let bar = crate::program::progress::bar(args.steps as u64, "steps", true);
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
    println!(
        "{} steps on {} positions: policy loss {:.4}, value loss {:.4}; saved {}",
        args.steps,
        window.len(),
        mean.policy,
        mean.value,
        out.display()
    );
    Ok(())
}

fn run_fleet_trainer(args: Args) -> anyhow::Result<()> {
    let store = Store::open(&args.data)?;
    let opts = TrainerOptions {
        trainer_id: args
            .trainer_id
            .unwrap_or_else(|| format!("{}-{}", host_name(), std::process::id())),
        config: args.config,
        generations: args.generations,
        max_time: args.max_time,
        poll: args.poll.map(std::time::Duration::from_secs_f64),
        device: args.device,
        work_dir: args
            .work_dir
            .unwrap_or_else(|| crate::program::fleet::scratch_dir("trainer")),
        progress: !args.quiet,
    };
    let s = run_trainer(&store, &opts)?;
    println!(
        "trainer at generation {} (published {:?}), {} shards consumed; stopped: {}",
        s.generation, s.published, s.consumed, s.stopped
    );
    Ok(())
}
