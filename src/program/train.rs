//! The AlphaZero loop: self-play with the current network, train on a window of the newest
//! samples, checkpoint, measure against fixed baselines, repeat — resumable at every
//! generation boundary.
//!
//! Run directory:
//!
//! ```text
//! RUN/config.toml                   the config the run was started with (resume checks it)
//! RUN/state.json                    last finished generation and optimizer steps
//! RUN/models/gen-NNNNNN.safetensors checkpoints (+ .json sidecar, optimizer state)
//! RUN/data/gen-NNNNNN/              that generation's self-play shards and game records
//! RUN/metrics.jsonl, metrics.csv    one line per generation
//! RUN/steps.csv                     one line per training step
//! RUN/curve.svg                     Elo and losses over generations
//! ```
//!
//! A generation is committed by writing `state.json` last; a crash or Ctrl-C loses at most
//! the generation in progress, whose leftovers are cleared on resume. Minibatch sampling is
//! seeded by `(seed, generation)`, so a resumed run draws what the uninterrupted run would.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use crate::dataio::shard::{list_shards, read_shard, write_atomic, Sample};
use crate::game::features::{encode, FEATURES};
use crate::game::{mirror_action, Variant, ACTIONS};
use crate::neuralnet::{
    DeviceChoice, Learner, Losses, NetConfig, NetEvaluator, Network, OptimizerConfig,
};
use crate::program::players::PlayerSpec;
use crate::program::selfplay::{run_selfplay, SelfplayConfig, SelfplayRunConfig, VariantField};
use crate::program::tournament::run_match;
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
    pub baselines: Vec<String>,
    /// Games per baseline (even: openings are paired).
    pub games: u32,
    /// Simulations per move of the network player.
    pub sims: u32,
    pub ply_cap: u32,
}

impl Default for EvalConfig {
    fn default() -> EvalConfig {
        EvalConfig {
            baselines: vec!["random".into(), "greedy".into()],
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

/// What `state.json` holds.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RunState {
    generation: u32,
    steps: u64,
    elapsed_secs: f64,
    /// The checkpoint generation 0 was copied from (`bao train --init`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    init: Option<String>,
}

/// One generation's summary (a line of metrics.jsonl / metrics.csv).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GenerationMetrics {
    pub generation: u32,
    pub steps: u64,
    pub elapsed_secs: f64,
    pub selfplay_games: u64,
    pub selfplay_positions: u64,
    pub games_per_sec: f64,
    pub avg_plies: f64,
    pub window: usize,
    pub train_steps: usize,
    pub samples_per_sec: f64,
    pub learning_rate: f64,
    pub policy_loss: f32,
    pub value_loss: f32,
    pub policy_entropy: f32,
    pub value_accuracy: f32,
    /// Per baseline: (name, score of the network, Elo over the baseline).
    pub vs: Vec<(String, f64, Option<f64>)>,
    /// Per baseline, in the order of `vs`: the games behind the score.
    #[serde(default)]
    pub vs_games: Vec<BaselineGames>,
}

/// The games of one end-of-generation match against a baseline.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct BaselineGames {
    pub wins: u32,
    pub losses: u32,
    /// Games that hit the ply cap: reported, never counted as a result.
    pub unfinished: u32,
    /// 95% interval of the network's Elo over the baseline.
    pub elo_ci95: Option<(f64, f64)>,
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
        for b in &self.eval.baselines {
            b.parse::<PlayerSpec>()
                .map_err(|e| anyhow::anyhow!("[eval] baselines: {e}"))?;
        }
        Ok(())
    }

    fn selfplay_config(&self) -> SelfplayRunConfig {
        SelfplayRunConfig {
            variant: VariantField(self.variant),
            search: self.search.clone(),
            selfplay: self.selfplay.clone(),
            ..Default::default()
        }
    }
}

fn gen_name(g: u32) -> String {
    format!("gen-{g:06}")
}

/// The paths of a run directory.
struct RunDir(PathBuf);

impl RunDir {
    fn model(&self, g: u32) -> PathBuf {
        self.0
            .join("models")
            .join(format!("{}.safetensors", gen_name(g)))
    }
    fn data(&self, g: u32) -> PathBuf {
        self.0.join("data").join(gen_name(g))
    }
    fn state(&self) -> PathBuf {
        self.0.join("state.json")
    }
}

/// Runs (or resumes) the loop in `run_dir`. Returns every generation's metrics.
///
/// A new run starts from a randomly initialised network, or from the checkpoint `init` (its
/// weights, and its optimizer state when saved beside it): that is how a run goes on from a
/// shipped model in a fresh checkout. `init` must match the config's variant and network.
pub fn train(
    config_path: &Path,
    run_dir: &Path,
    init: Option<&Path>,
) -> anyhow::Result<Vec<GenerationMetrics>> {
    let config = RunConfig::load(config_path)?;
    let config_text = std::fs::read_to_string(config_path)?;
    let dir = RunDir(run_dir.to_path_buf());
    let device = config.train.device.resolve()?;
    // A directory that is not a run is refused before the lock file would be written into it.
    if !dir.state().exists() && holds_foreign_files(&dir.0)? {
        bail!(
            "{} exists, is not empty and has no state.json: not a bao run directory (or one whose first generation never finished); remove it or pick another --run",
            dir.0.display()
        );
    }
    // Before anything in the directory is read or changed, and held to the end.
    let _lock = super::runlock::RunLock::acquire(&dir.0)?;
    crate::neuralnet::configure_threads(None);

    let (mut state, learner) = if dir.state().exists() {
        let saved_config = dir.0.join("config.toml");
        let saved: RunConfig = crate::config::load_toml(&saved_config)
            .with_context(|| format!("{} is not a readable bao run directory", dir.0.display()))?;
        // Only the generation count may change between runs: raising it continues the run.
        let mut same = saved.clone();
        same.train.generations = config.train.generations;
        if same != config {
            bail!(
                "run directory {} was started with a different config (see {}); use another --run directory",
                dir.0.display(),
                saved_config.display()
            );
        }
        let text = std::fs::read_to_string(dir.state())?;
        let state: RunState = serde_json::from_str(&text)
            .with_context(|| format!("corrupt run state {}", dir.state().display()))?;
        let learner = Learner::resume(
            &dir.model(state.generation),
            device,
            config.optimizer.clone(),
        )
        .with_context(|| format!("cannot resume from generation {}", state.generation))?;
        learner.network().ensure_variant(config.variant)?;
        eprintln!(
            "resuming {} at generation {}",
            dir.0.display(),
            state.generation
        );
        if init.is_some() {
            eprintln!("(--init is ignored: the run exists and resumes from its own checkpoints)");
        }
        (state, learner)
    } else {
        std::fs::create_dir_all(dir.0.join("models"))?;
        write_atomic(&dir.0.join("config.toml"), config_text.as_bytes())?;
        let learner = initial_learner(&config, device, init)?;
        learner.save(&dir.model(0))?;
        let state = RunState {
            init: init.map(|p| p.display().to_string()),
            ..RunState::default()
        };
        write_atomic(
            &dir.state(),
            serde_json::to_string_pretty(&state)?.as_bytes(),
        )?;
        (state, learner)
    };
    let mut learner = learner;
    learner.set_search_params(config.search.clone());

    reconcile_history(&dir.0, state.generation)?;
    let mut history = read_metrics(&dir.0)?;
    while state.generation < config.train.generations {
        let started = Instant::now();
        let g = state.generation + 1;
        let metrics = generation(&config, &dir, g, &mut learner, &mut state)?;
        state.generation = g;
        state.elapsed_secs += started.elapsed().as_secs_f64();
        let mut metrics = metrics;
        metrics.elapsed_secs = state.elapsed_secs;
        metrics.steps = state.steps;
        append_metrics(&dir.0, &metrics)?;
        history.push(metrics.clone());
        plot_curve(&dir.0.join("curve.svg"), &history)?;
        // Commit point: everything of generation g is on disk before state.json says so.
        write_atomic(
            &dir.state(),
            serde_json::to_string_pretty(&state)?.as_bytes(),
        )?;
        println!("{}", summary(&metrics));
    }
    Ok(history)
}

/// Generation 0 of a new run: a fresh network, or the checkpoint `init`.
fn initial_learner(
    config: &RunConfig,
    device: tch::Device,
    init: Option<&Path>,
) -> anyhow::Result<Learner> {
    let Some(path) = init else {
        let net = Network::new(&config.network, config.variant, device)?;
        let mut learner = Learner::new(net, config.optimizer.clone())?;
        learner.set_lineage(0, None);
        learner.set_search_params(config.search.clone());
        return Ok(learner);
    };
    let what = || format!("--init {}", path.display());
    let net = Network::load_for(path, config.variant, device).with_context(what)?;
    anyhow::ensure!(
        net.config() == &config.network,
        "--init {}: its network {:?} differs from the config's [network] {:?}",
        path.display(),
        net.config(),
        config.network
    );
    drop(net);
    // Keep the optimizer's moments when they were saved beside the checkpoint.
    let mut learner = match Learner::resume(path, device, config.optimizer.clone()) {
        Ok(l) => l,
        Err(_) => Learner::new(
            Network::load_for(path, config.variant, device).with_context(what)?,
            config.optimizer.clone(),
        )?,
    };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    learner.set_lineage(0, name);
    Ok(learner)
}

/// One generation: self-play, training, checkpoint, evaluation.
fn generation(
    config: &RunConfig,
    dir: &RunDir,
    g: u32,
    learner: &mut Learner,
    state: &mut RunState,
) -> anyhow::Result<GenerationMetrics> {
    let data = dir.data(g);
    if data.exists() {
        std::fs::remove_dir_all(&data)?; // leftovers of an interrupted generation
    }
    std::fs::create_dir_all(&data)?;
    let mut sp = config.selfplay_config();
    sp.selfplay.seed = config
        .train
        .seed
        .wrapping_mul(1_000_003)
        .wrapping_add(g as u64);
    sp.selfplay.generation = g;
    let mut evaluator =
        NetEvaluator::load_for(&dir.model(g - 1), config.variant, config.train.device)?;
    let t = Instant::now();
    let mut stats = run_selfplay(
        &sp,
        &mut evaluator,
        config.train.games_per_generation,
        &data,
        true,
    )?;
    // A run started from a trained network (`--init`) has no window yet. Trained on one
    // generation's few thousand positions it overfits them and gets weaker (measured with the
    // Kiswahili model: -176 Elo in 11 generations), so its first generation plays on until it
    // holds `window_min` positions. A random network has nothing to lose and starts at once.
    if g == 1 && state.init.is_some() {
        while (stats.positions as usize) < config.train.window_min {
            eprintln!(
                "  generation 1 of a run from --init: {} of window_min = {} positions, playing on",
                stats.positions, config.train.window_min
            );
            sp.selfplay.seed = sp.selfplay.seed.wrapping_add(0x9e37_79b9);
            let more = run_selfplay(
                &sp,
                &mut evaluator,
                config.train.games_per_generation,
                &data,
                true,
            )?;
            anyhow::ensure!(
                more.positions > 0,
                "self-play of generation {g} wrote no training samples"
            );
            stats.absorb(more);
        }
    }
    let selfplay_secs = t.elapsed().as_secs_f64();

    // Window of the newest positions, newest generations first.
    let t = &config.train;
    let window_size = (t.window_min + t.window_growth * (g as usize - 1)).min(t.window_max);
    let dirs: Vec<PathBuf> = (1..=g)
        .rev()
        .map(|k| dir.data(k))
        .filter(|d| d.exists())
        .collect();
    let window = load_window(&dirs, window_size)?;
    anyhow::ensure!(
        !window.is_empty(),
        "self-play of generation {g} wrote no training samples"
    );
    let steps = ((stats.positions as f64 * t.reuse / t.batch_size as f64).ceil() as usize)
        .clamp(1, t.max_steps_per_generation);
    let lr = if g >= t.lr_drop_generation {
        config.optimizer.learning_rate * t.lr_drop
    } else {
        config.optimizer.learning_rate
    };
    learner.set_learning_rate(lr)?;
    let mirror = t.mirror && config.variant == Variant::Kujifunza;
    let mut rng = SmallRng::seed_from_u64(t.seed ^ (g as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let bar = indicatif::ProgressBar::new(steps as u64).with_style(
        indicatif::ProgressStyle::with_template("  train  [{bar:30}] {pos}/{len} steps {msg}")
            .expect("template"),
    );
    let tt = Instant::now();
    let mut steps_log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.0.join("steps.csv"))?;
    let mean = train_steps(
        learner,
        &window,
        steps,
        t.batch_size,
        mirror,
        t.q_mix,
        &mut rng,
        |l| {
            state.steps += 1;
            writeln!(
                steps_log,
                "{},{},{:.5},{:.5},{:.4},{:.4},{}",
                g, state.steps, l.policy, l.value, l.policy_entropy, l.value_accuracy, lr
            )?;
            bar.set_message(format!("policy {:.3} value {:.3}", l.policy, l.value));
            bar.inc(1);
            Ok(())
        },
    )?;
    bar.finish_and_clear();
    let train_secs = tt.elapsed().as_secs_f64();
    learner.set_lineage(g as u64, Some(format!("{}.safetensors", gen_name(g - 1))));
    learner.save(&dir.model(g))?;

    // Strength against the fixed baselines.
    let me: PlayerSpec = format!("net:{}:sims={}", dir.model(g).display(), config.eval.sims)
        .parse()
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut vs = Vec::new();
    let mut vs_games = Vec::new();
    for b in &config.eval.baselines {
        let spec: PlayerSpec = b.parse().map_err(|e| anyhow::anyhow!("{e}"))?;
        let r = run_match(
            config.variant,
            &me,
            &spec,
            config.eval.games,
            config.eval.ply_cap,
            t.seed + g as u64,
            false,
        )?;
        vs.push((b.clone(), r.score.unwrap_or(0.0), r.elo));
        vs_games.push(BaselineGames {
            wins: r.a_wins,
            losses: r.b_wins,
            unfinished: r.unfinished,
            elo_ci95: r.elo_ci95,
        });
    }
    Ok(GenerationMetrics {
        generation: g,
        steps: state.steps,
        elapsed_secs: 0.0,
        selfplay_games: stats.games,
        selfplay_positions: stats.positions,
        games_per_sec: stats.games as f64 / selfplay_secs.max(1e-9),
        avg_plies: stats.avg_plies(),
        window: window.len(),
        train_steps: steps,
        samples_per_sec: (steps * t.batch_size) as f64 / train_secs.max(1e-9),
        learning_rate: lr,
        policy_loss: mean.policy,
        value_loss: mean.value,
        policy_entropy: mean.policy_entropy,
        value_accuracy: mean.value_accuracy,
        vs,
        vs_games,
    })
}

/// The newest `size` fully searched samples from `dirs`, given newest first.
pub fn load_window(dirs: &[PathBuf], size: usize) -> anyhow::Result<Vec<Sample>> {
    let mut window: Vec<Sample> = Vec::new();
    for d in dirs {
        if window.len() >= size {
            break;
        }
        let mut shards = list_shards(d)?;
        shards.reverse();
        for shard in shards {
            window.extend(
                read_shard(&shard)?
                    .samples
                    .into_iter()
                    .filter(|s| s.full_search),
            );
        }
    }
    window.truncate(size);
    Ok(window)
}

/// True when `dir` exists and holds anything but a run lock file.
fn holds_foreign_files(dir: &Path) -> anyhow::Result<bool> {
    if !dir.exists() {
        return Ok(false);
    }
    Ok(std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(Result::ok)
        .any(|e| e.file_name() != "lock"))
}

/// Trains `steps` minibatches drawn uniformly from `window`; returns the mean losses.
// The minibatch settings travel loose until one module owns the training schedule (the
// local loop and the fleet trainer both call this; issue 17 joins them).
#[allow(clippy::too_many_arguments)]
pub fn train_steps(
    learner: &mut Learner,
    window: &[Sample],
    steps: usize,
    batch_size: usize,
    mirror: bool,
    q_mix: f32,
    rng: &mut SmallRng,
    mut on_step: impl FnMut(&Losses) -> anyhow::Result<()>,
) -> anyhow::Result<Losses> {
    anyhow::ensure!(!window.is_empty(), "no training samples");
    let mut batch = Batch::new(batch_size);
    let mut sums = [0f64; 4];
    for _ in 0..steps {
        batch.fill(window, rng, mirror, q_mix)?;
        let l = learner.train_step(&batch.features, &batch.masks, &batch.policy, &batch.value)?;
        on_step(&l)?;
        for (s, v) in sums
            .iter_mut()
            .zip([l.policy, l.value, l.policy_entropy, l.value_accuracy])
        {
            *s += v as f64;
        }
    }
    let n = steps.max(1) as f64;
    let (policy, value) = ((sums[0] / n) as f32, (sums[1] / n) as f32);
    Ok(Losses {
        policy,
        value,
        total: policy + learner.config().value_loss_weight as f32 * value,
        policy_entropy: (sums[2] / n) as f32,
        value_accuracy: (sums[3] / n) as f32,
    })
}

/// A training minibatch, refilled in place.
struct Batch {
    n: usize,
    features: Vec<f32>,
    masks: Vec<u64>,
    policy: Vec<f32>,
    value: Vec<f32>,
}

impl Batch {
    fn new(n: usize) -> Batch {
        Batch {
            n,
            features: vec![0.0; n * FEATURES],
            masks: vec![0; n],
            policy: vec![0.0; n * ACTIONS],
            value: vec![0.0; n],
        }
    }

    /// Draws `n` samples uniformly from the window (mirrored at random when `mirror`).
    fn fill(
        &mut self,
        window: &[Sample],
        rng: &mut SmallRng,
        mirror: bool,
        q_mix: f32,
    ) -> anyhow::Result<()> {
        for i in 0..self.n {
            let s = &window[rng.random_range(0..window.len())];
            let mut pos = s.position()?;
            let policy = &mut self.policy[i * ACTIONS..(i + 1) * ACTIONS];
            if mirror && rng.random_bool(0.5) {
                pos = pos.mirrored();
                policy.fill(0.0);
                for a in 0..ACTIONS {
                    policy[mirror_action(a)] = s.policy[a];
                }
                self.masks[i] = (0..ACTIONS)
                    .filter(|&a| s.legal >> a & 1 == 1)
                    .fold(0, |m, a| m | 1 << mirror_action(a));
            } else {
                policy.copy_from_slice(&s.policy);
                self.masks[i] = s.legal;
            }
            encode(&pos, &mut self.features[i * FEATURES..(i + 1) * FEATURES]);
            self.value[i] = (1.0 - q_mix) * s.z + q_mix * s.q;
        }
        Ok(())
    }
}

fn read_metrics(dir: &Path) -> anyhow::Result<Vec<GenerationMetrics>> {
    let path = dir.join("metrics.jsonl");
    if !path.exists() {
        return Ok(Vec::new());
    }
    let text = std::fs::read_to_string(&path)?;
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l).with_context(|| format!("{} line {}", path.display(), i + 1))
        })
        .collect()
}

/// Makes the history files say exactly what the committed `state.json` says. Metrics and step
/// rows are appended before the state commits, so a crash in between leaves rows of a
/// generation that will be played again, and a crash mid-write leaves a torn last line: on
/// resume both go, generations `1..=committed` are kept once each (in order), and
/// `metrics.csv` is rewritten from what is kept.
fn reconcile_history(dir: &Path, committed: u32) -> anyhow::Result<()> {
    let jsonl = dir.join("metrics.jsonl");
    if jsonl.exists() {
        let text = std::fs::read_to_string(&jsonl)
            .with_context(|| format!("cannot read {}", jsonl.display()))?;
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        // Kept lines as written (re-serialising floats need not give the same text).
        let mut kept: Vec<(GenerationMetrics, &str)> = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            let torn = !line.ends_with('\n');
            match serde_json::from_str::<GenerationMetrics>(line.trim_end()) {
                Ok(m) if !torn => {
                    if m.generation <= committed && m.generation as usize == kept.len() + 1 {
                        kept.push((m, line));
                    }
                }
                // The last line of an interrupted write: lost with the crash.
                _ if i + 1 == lines.len() => {}
                Ok(_) => {}
                Err(e) => {
                    return Err(e).with_context(|| format!("{} line {}", jsonl.display(), i + 1))
                }
            }
        }
        let body: String = kept.iter().map(|(_, line)| *line).collect();
        write_atomic(&jsonl, body.as_bytes())?;
        let csv = dir.join("metrics.csv");
        if csv.exists() {
            std::fs::remove_file(&csv)
                .with_context(|| format!("cannot rewrite {}", csv.display()))?;
        }
        for (m, _) in &kept {
            append_csv(dir, m)?;
        }
    }
    let steps = dir.join("steps.csv");
    if steps.exists() {
        let text = std::fs::read_to_string(&steps)
            .with_context(|| format!("cannot read {}", steps.display()))?;
        let body: String = text
            .split_inclusive('\n')
            .filter(|l| {
                l.ends_with('\n')
                    && l.split(',')
                        .next()
                        .and_then(|g| g.parse::<u32>().ok())
                        .is_some_and(|g| g <= committed)
            })
            .collect();
        write_atomic(&steps, body.as_bytes())?;
    }
    Ok(())
}

fn append_metrics(dir: &Path, m: &GenerationMetrics) -> anyhow::Result<()> {
    let mut jsonl = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("metrics.jsonl"))?;
    writeln!(jsonl, "{}", serde_json::to_string(m)?)?;
    append_csv(dir, m)
}

/// Appends `m` to `metrics.csv` (with the header when the file is new).
fn append_csv(dir: &Path, m: &GenerationMetrics) -> anyhow::Result<()> {
    let csv_path = dir.join("metrics.csv");
    let new = !csv_path.exists();
    let mut csv = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&csv_path)?;
    if new {
        let vs: Vec<String> =
            m.vs.iter()
                .flat_map(|(b, _, _)| [format!("score_vs_{b}"), format!("elo_vs_{b}")])
                .collect();
        writeln!(csv, "generation,steps,elapsed_secs,selfplay_games,selfplay_positions,games_per_sec,avg_plies,window,train_steps,samples_per_sec,learning_rate,policy_loss,value_loss,policy_entropy,value_accuracy,{}", vs.join(","))?;
    }
    let vs: Vec<String> =
        m.vs.iter()
            .flat_map(|(_, s, e)| {
                [
                    format!("{s:.4}"),
                    e.map_or(String::new(), |e| format!("{e:.1}")),
                ]
            })
            .collect();
    writeln!(
        csv,
        "{},{},{:.1},{},{},{:.3},{:.2},{},{},{:.1},{},{:.5},{:.5},{:.4},{:.4},{}",
        m.generation,
        m.steps,
        m.elapsed_secs,
        m.selfplay_games,
        m.selfplay_positions,
        m.games_per_sec,
        m.avg_plies,
        m.window,
        m.train_steps,
        m.samples_per_sec,
        m.learning_rate,
        m.policy_loss,
        m.value_loss,
        m.policy_entropy,
        m.value_accuracy,
        vs.join(",")
    )?;
    Ok(())
}

/// One line per generation for the terminal.
pub fn summary(m: &GenerationMetrics) -> String {
    let vs: Vec<String> =
        m.vs.iter()
            .map(|(b, s, _)| format!("vs {b} {:.0}%", 100.0 * s))
            .collect();
    format!(
        "gen {:>3}  {:>6.0}s  {} games {:.1} plies  window {}  {} steps  policy {:.3} value {:.3}  {}",
        m.generation, m.elapsed_secs, m.selfplay_games, m.avg_plies, m.window, m.train_steps, m.policy_loss, m.value_loss, vs.join("  ")
    )
}

/// The final table: the last generation's network against each baseline, with the games
/// behind each score and the 95% interval of the Elo difference.
pub fn results_table(history: &[GenerationMetrics]) -> String {
    let Some(last) = history.last() else {
        return "no generation finished yet\n".into();
    };
    let mut out = format!(
        "{:<28} {:>12} {:>8} {:>10} {:>18}\n",
        "opponent", "won-lost-unf", "score", "Elo diff", "95% interval"
    );
    for (i, (b, s, e)) in last.vs.iter().enumerate() {
        let games = last.vs_games.get(i);
        let wlu = games.map_or("-".into(), |g| {
            format!("{}-{}-{}", g.wins, g.losses, g.unfinished)
        });
        let ci = games
            .and_then(|g| g.elo_ci95)
            .map_or("-".into(), |(lo, hi)| format!("[{lo:+.0}, {hi:+.0}]"));
        let elo = e.map_or("-".into(), |e| format!("{e:+.0}"));
        out += &format!(
            "{:<28} {:>12} {:>7.1}% {:>10} {:>18}\n",
            b,
            wlu,
            100.0 * s,
            elo,
            ci
        );
    }
    out
}

/// Elo over each baseline and the losses, by generation, as an SVG.
fn plot_curve(path: &Path, history: &[GenerationMetrics]) -> anyhow::Result<()> {
    use plotters::prelude::*;
    let err = |e: &dyn std::fmt::Display| anyhow::anyhow!("plot: {e}");
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 700)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let (top, bottom) = root.split_vertically(350);
        let gens = history.last().map_or(1, |m| m.generation).max(1) as f64;
        let elos: Vec<f64> = history
            .iter()
            .flat_map(|m| m.vs.iter().filter_map(|v| v.2))
            .collect();
        let (lo, hi) = elos
            .iter()
            .fold((-100.0f64, 100.0f64), |(a, b), &e| (a.min(e), b.max(e)));
        let mut chart = ChartBuilder::on(&top)
            .caption("Elo of the network over each baseline", ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(50)
            .build_cartesian_2d(0.0..gens, (lo - 50.0)..(hi + 50.0))
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_desc("generation")
            .y_desc("Elo")
            .draw()
            .map_err(|e| err(&e))?;
        let names: Vec<String> = history
            .last()
            .map(|m| m.vs.iter().map(|v| v.0.clone()).collect())
            .unwrap_or_default();
        for (k, name) in names.iter().enumerate() {
            let color = Palette99::pick(k).to_rgba();
            let pts: Vec<(f64, f64)> = history
                .iter()
                .filter_map(|m| Some((m.generation as f64, m.vs.get(k)?.2?)))
                .collect();
            chart
                .draw_series(LineSeries::new(pts, color.stroke_width(2)))
                .map_err(|e| err(&e))?
                .label(name.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE)
            .border_style(BLACK)
            .draw()
            .map_err(|e| err(&e))?;
        let lmax = history
            .iter()
            .map(|m| m.policy_loss.max(m.value_loss) as f64)
            .fold(0.1, f64::max);
        let mut chart = ChartBuilder::on(&bottom)
            .caption("training losses", ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(50)
            .build_cartesian_2d(0.0..gens, 0.0..lmax * 1.1)
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_desc("generation")
            .y_desc("loss")
            .draw()
            .map_err(|e| err(&e))?;
        for (k, (name, f)) in [
            (
                "policy",
                (|m: &GenerationMetrics| m.policy_loss) as fn(&GenerationMetrics) -> f32,
            ),
            ("value", |m| m.value_loss),
        ]
        .into_iter()
        .enumerate()
        {
            let color = Palette99::pick(k + 5).to_rgba();
            let pts: Vec<(f64, f64)> = history
                .iter()
                .map(|m| (m.generation as f64, f(m) as f64))
                .collect();
            chart
                .draw_series(LineSeries::new(pts, color.stroke_width(2)))
                .map_err(|e| err(&e))?
                .label(name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE)
            .border_style(BLACK)
            .draw()
            .map_err(|e| err(&e))?;
        root.present().map_err(|e| err(&e))?;
    }
    write_atomic(path, svg.as_bytes())
}
