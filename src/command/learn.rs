//! `bao learn --data DIR --model M --steps K`: train a checkpoint on sample shards alone, or
//! distil a teacher into it ([`crate::training::distill`]).
//!
//! `bao learn --data ROOT` (no `--model`): the trainer of a fleet run at ROOT (a directory or
//! an object-store URL), see `bao::training::fleet::trainer`.

use std::path::PathBuf;

use crate::dataio::store::{is_url, Store};
use crate::game::Variant;
use crate::neuralnet::DeviceChoice;
use crate::training::distill::{learn, LearnOptions};
use crate::training::fleet::lease::host_name;
use crate::training::fleet::trainer::{run_trainer, TrainerOptions};

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
    let done = learn(&LearnOptions {
        data: PathBuf::from(&args.data),
        model,
        out: args.out,
        steps: args.steps,
        batch_size: args.batch_size,
        window: args.window,
        learning_rate: args.learning_rate,
        device: args.device,
        seed: args.seed,
        teacher: args.teacher,
        teacher_weight: args.teacher_weight,
        network: args.network,
        variant: args.variant,
        search: args.search,
        progress: true,
    })?;
    match done.loss {
        None => println!(
            "0 steps: saved {} with its search settings",
            done.out.display()
        ),
        Some(loss) => println!(
            "{} steps on {} positions: policy loss {:.4}, value loss {:.4}; saved {}",
            done.steps,
            done.positions,
            loss.policy,
            loss.value,
            done.out.display()
        ),
    }
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
            .unwrap_or_else(|| crate::training::fleet::scratch_dir("trainer")),
        progress: !args.quiet,
    };
    let s = run_trainer(&store, &opts)?;
    println!(
        "trainer at generation {} (published {:?}), {} shards consumed; stopped: {}",
        s.generation, s.published, s.consumed, s.stopped
    );
    Ok(())
}
