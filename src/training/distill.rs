//! Training a checkpoint on sample shards alone (`bao learn --model`): self-play may run
//! elsewhere and only share the shard directory. With a teacher the targets come from a frozen
//! network (distillation, [`Teacher`]), and a network architecture starts the model as a fresh
//! network of that size: a smaller, faster student of a trained model.

use std::path::PathBuf;

use anyhow::Context;
use rand::SeedableRng;
use serde::{Deserialize, Serialize};

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
            Learner::new(net, config)?
        }
        None => match Learner::resume_saved(&model, device, config.clone()).with_context(|| {
            format!(
                "--model {}: the optimizer state beside it cannot be resumed (move its \
                 .optim.* files aside to start a fresh optimizer)",
                model.display()
            )
        })? {
            Some(l) => l,
            None => {
                eprintln!(
                    "(no optimizer state beside {}: the optimizer starts fresh)",
                    model.display()
                );
                Learner::new(crate::setup::network(&model, None, device)?, config)?
            }
        },
    };
    if let Some(path) = &args.teacher {
        // A distilled checkpoint's lineage names the teacher it learned from, whether it
        // started fresh or from an earlier student (as the run's `[distill]` stage records).
        let generation = learner.network().lineage().generation;
        learner.set_lineage(generation, Some(path.display().to_string()));
    }
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

/// `[distill]`: a stage of the run that distils a trained generation (the teacher) into a
/// smaller network (the student) on the run's own self-play. A smaller network searches more
/// positions in the same time; at equal time that has been worth more than the teacher's
/// finer judgement (docs/training.md#distillation). With `every`, a student is made every
/// `every` generations (each from the one before, so that the run's player follows its
/// teacher at a fraction of the first student's cost); always one after the last generation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DistillConfig {
    /// Make a student after every this many generations too (absent: after the last only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<u32>,
    /// The student's architecture (the keys of `[network]`); its input features must be the
    /// teacher's.
    pub network: NetConfig,
    /// Newest self-play positions of the run, up to the teacher's generation, to learn from.
    pub window: usize,
    /// `[[steps, learning_rate], ...]`: minibatch steps at each rate, in order (one optimizer
    /// throughout; phase `i` draws its minibatches from `seed + i`), for the first student.
    pub phases: Vec<(usize, f64)>,
    /// The phases of each later student, which starts from the student before it (default:
    /// `phases`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warm_phases: Option<Vec<(usize, f64)>>,
    /// Search settings `KEY=VALUE` the student records to be played with, over its teacher's
    /// (`[search]`), as `bao learn --search` does: e.g. `["algorithm=gumbel"]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub search: Vec<String>,
    #[serde(default = "DistillConfig::default_batch_size")]
    pub batch_size: usize,
    /// The teacher's share of every target, in (0, 1] (the rest: the samples' own).
    #[serde(default = "DistillConfig::default_teacher_weight")]
    pub teacher_weight: f32,
    /// Seeds the student's initial weights and its minibatches.
    #[serde(default = "DistillConfig::default_seed")]
    pub seed: u64,
}

impl DistillConfig {
    fn default_batch_size() -> usize {
        256
    }
    fn default_teacher_weight() -> f32 {
        1.0
    }
    fn default_seed() -> u64 {
        1
    }

    /// The phases of a student: `warm_phases` (default `phases`) for one that starts from an
    /// earlier student, `phases` for one from fresh weights.
    pub fn phases_for(&self, warm: bool) -> &[(usize, f64)] {
        match &self.warm_phases {
            Some(w) if warm => w,
            _ => &self.phases,
        }
    }

    /// Checks that the stage can run in a run whose network is `teacher`, before any work:
    /// errors name the `[distill]` key.
    pub fn validate(&self, teacher: &NetConfig) -> anyhow::Result<()> {
        // `every` past the run's last generation makes just the last student: a short look
        // at a long config (`--set train.generations=N`) keeps its stage.
        if let Some(every) = self.every {
            crate::config::check_range("distill.every", every, 1, u32::MAX)?;
        }
        self.network
            .validate()
            .map_err(|e| anyhow::anyhow!("[distill.network]: {e:#}"))?;
        anyhow::ensure!(
            self.network.encoding() == teacher.encoding(),
            "[distill.network] move_features = {}, threat_features = {} differ from [network]'s \
             ({}, {}): a student must read its teacher's input features",
            self.network.move_features,
            self.network.threat_features,
            teacher.move_features,
            teacher.threat_features
        );
        anyhow::ensure!(
            self.window > 0 && self.batch_size > 0,
            "[distill] window and batch_size must be > 0"
        );
        for (key, phases) in [
            ("phases", Some(&self.phases)),
            ("warm_phases", self.warm_phases.as_ref()),
        ] {
            let Some(phases) = phases else { continue };
            crate::config::ensure_key(
                !phases.is_empty()
                    && phases
                        .iter()
                        .all(|&(steps, rate)| steps > 0 && rate > 0.0 && rate.is_finite()),
                &format!("distill.{key}"),
                || {
                    format!("[distill] {key}: [[steps, learning_rate], ...] with steps > 0 and rates > 0, e.g. [[18000, 0.002], [6000, 0.0002]]")
                },
            )?;
        }
        if let Err(e) = crate::search::SearchParams::default()
            .with_assignments("[distill] search", &self.search)
        {
            return Err(crate::config::key_error("distill.search", format!("{e:#}")));
        }
        anyhow::ensure!(
            self.teacher_weight > 0.0 && self.teacher_weight <= 1.0,
            "[distill] teacher_weight must be in (0, 1]"
        );
        Ok(())
    }
}

/// Where a run's distillation stage keeps its inputs' record and its output.
pub struct StudentDir(pub PathBuf);

impl StudentDir {
    /// The student checkpoint (with its sidecar): the run's player.
    pub fn model(&self) -> PathBuf {
        self.0.join("student.safetensors")
    }
    /// Written last: the stage is done (what it learned from, and its losses).
    pub fn done(&self) -> PathBuf {
        self.0.join("done.json")
    }
    /// The student's network shape, the stage's first write.
    pub fn network_file(&self) -> PathBuf {
        self.0.join("network.toml")
    }
    /// Every file the stage writes, in the order it writes them (`done.json` last).
    pub fn files(&self) -> [PathBuf; 4] {
        let model = self.model();
        [
            self.network_file(),
            model.with_extension("json"),
            model,
            self.done(),
        ]
    }
    /// The stage's record, once it is done.
    pub fn record(&self) -> anyhow::Result<Option<StudentRecord>> {
        match std::fs::read_to_string(self.done()) {
            Ok(text) => {
                Ok(Some(serde_json::from_str(&text).with_context(|| {
                    format!("corrupt {}", self.done().display())
                })?))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).context(format!("cannot read {}", self.done().display())),
        }
    }
}

/// What the stage wrote into `done.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StudentRecord {
    pub teacher: String,
    pub positions: usize,
    pub steps: usize,
    pub policy_loss: f32,
    pub value_loss: f32,
    pub secs: f64,
    /// CPU seconds the stage took (0 in records written before they were counted).
    #[serde(default)]
    pub cpu_secs: f64,
    /// The student it started from, if not fresh weights.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warm_from: Option<String>,
}

/// Runs the stage into `student` unless it is done: the teacher is `teacher`, the data the
/// generation directories `data` (newest first), the start fresh weights or, with
/// `warm_from`, that earlier student (then in `warm_phases`). A kill anywhere leaves no
/// `done.json`, and the stage then runs again from its start: its seed fixes the student's
/// initial weights and every minibatch, so the checkpoint is the one an uninterrupted run
/// writes.
pub fn run_stage(
    config: &DistillConfig,
    device: DeviceChoice,
    teacher: &std::path::Path,
    data: &[PathBuf],
    student: &StudentDir,
    warm_from: Option<&std::path::Path>,
    progress: bool,
) -> anyhow::Result<StudentRecord> {
    if let Some(record) = student.record()? {
        return Ok(record);
    }
    let started = std::time::Instant::now();
    let cpu = crate::util::cputime::process_secs();
    std::fs::create_dir_all(&student.0)
        .with_context(|| format!("cannot create {}", student.0.display()))?;
    // A student left by a killed stage is started afresh.
    for stale in [student.model(), student.model().with_extension("json")] {
        if stale.exists() {
            std::fs::remove_file(&stale)?;
        }
    }
    let net_file = student.network_file();
    crate::dataio::atomic::write_bytes(&net_file, toml::to_string(&config.network)?.as_bytes())?;
    let device = device.resolve()?;
    let teacher_net = crate::setup::network(teacher, None, device)
        .with_context(|| format!("teacher {}", teacher.display()))?;
    let phases = config.phases_for(warm_from.is_some());
    let mut net = match warm_from {
        None => Network::new_seeded(&config.network, teacher_net.variant(), device, config.seed)?,
        Some(earlier) => crate::setup::network(earlier, Some(teacher_net.variant()), device)
            .with_context(|| format!("earlier student {}", earlier.display()))?,
    };
    let search = teacher_net.search_params().cloned().unwrap_or_default();
    net.set_search_params(Some(
        search.with_assignments("[distill] search", &config.search)?,
    ));
    let mut learner = Learner::new(net, OptimizerConfig::default())?;
    learner.set_lineage(0, Some(teacher.display().to_string()));
    let teacher_path = teacher;
    let teacher = Teacher::new(teacher_net, config.teacher_weight, learner.network())?;
    let window = load_window(data, config.window)?;
    anyhow::ensure!(
        !window.is_empty(),
        "[distill]: the run has no self-play positions"
    );
    let total: usize = phases.iter().map(|p| p.0).sum();
    let bar = crate::util::progress::bar(total as u64, "distillation steps", progress);
    let mut mean = None;
    for (i, &(steps, rate)) in phases.iter().enumerate() {
        learner.set_learning_rate(rate)?;
        let mut plan = Minibatches {
            steps,
            batch_size: config.batch_size,
            labels_fraction: 0.0,
            mirror: learner.network().variant() == Variant::Kujifunza,
            q_mix: 0.0,
            rng: rand::rngs::SmallRng::seed_from_u64(config.seed + i as u64),
        };
        mean = Some(train_steps(
            &mut learner,
            &window,
            &[],
            Some(&teacher),
            &mut plan,
            |_| {
                bar.inc(1);
                Ok(())
            },
        )?);
    }
    bar.finish_and_clear();
    let mean = mean.expect("validate() refuses a stage without phases");
    learner.save(&student.model())?;
    let record = StudentRecord {
        teacher: teacher_path.display().to_string(),
        positions: window.len(),
        steps: total,
        policy_loss: mean.policy,
        value_loss: mean.value,
        secs: started.elapsed().as_secs_f64(),
        cpu_secs: crate::util::cputime::process_secs() - cpu,
        warm_from: warm_from.map(|p| p.display().to_string()),
    };
    crate::dataio::atomic::write_bytes(
        &student.done(),
        serde_json::to_string_pretty(&record)?.as_bytes(),
    )?;
    Ok(record)
}
