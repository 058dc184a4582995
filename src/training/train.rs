//! The AlphaZero loop: self-play with the current network, train on a window of the newest
//! samples, checkpoint, measure against fixed baselines, repeat — resumable at every
//! generation boundary.
//!
//! Run directory:
//!
//! ```text
//! RUN/config.toml                   the config the run was started with (resume checks it)
//! RUN/overrides.json                its `--set SECTION.KEY=VALUE` overrides, if any (kept on
//!                                   resume; a different set is refused)
//! RUN/state.json                    last finished generation and optimizer steps
//! RUN/models/gen-NNNNNN.safetensors checkpoints (+ .json sidecar, optimizer state)
//! RUN/data/gen-NNNNNN/              that generation's self-play shards and game records
//! RUN/metrics.jsonl, metrics.csv    one line per generation
//! RUN/steps.csv                     one line per training step
//! RUN/curve.svg                     Elo and losses over generations
//! RUN/students/gen-NNNNNN/          with `[distill]`: that generation's student:
//!                                   student.safetensors (the run's player), network.toml,
//!                                   done.json (written last)
//! RUN/gauntlet/gen-NNNNNN.json      with `[gauntlet]`: the player of that generation against
//!                                   each opponent at equal time
//! RUN/gauntlet.csv, gauntlet.svg    those points: Elo against CPU-hours
//! ```
//!
//! Cost is counted in CPU time (`state.json`'s `cpu_secs`, each generation's metrics, each
//! stage's record), kept across resumes: the work of a generation that was killed and played
//! again counts once.
//!
//! A generation is committed by writing `state.json` last; a crash or Ctrl-C loses at most
//! the generation in progress, whose leftovers are cleared on resume. What each generation
//! plays, trains and draws comes from the run's [`Schedule`], every random stream seeded by
//! `(seed, generation)`: a resumed run writes exactly what the uninterrupted run would have
//! written (same shards, same weights, same metrics but for timings).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};

use crate::dataio::atomic::write_bytes;
use crate::dataio::shard::Sample;
use crate::eval::tournament::{run_match, MatchOptions};
use crate::neuralnet::{Learner, Network};
use crate::play::players::spec::NetParams;
use crate::play::players::PlayerSpec;
use crate::training::distill::{run_stage, StudentDir};
use crate::training::gauntlet;
use crate::training::history::{
    append_metrics, plot_curve, read_metrics, reconcile_history, summary, BaselineGames,
    BaselineResult, GenerationMetrics,
};
use crate::training::minibatch::{load_labels, load_window, train_steps};
use crate::training::runconfig::RunConfig;
use crate::training::schedule::{generation_name, Schedule};
use crate::training::selfplay::{run_selfplay, SelfplayStats};
use crate::util::cputime;

/// What `state.json` holds.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RunState {
    generation: u32,
    steps: u64,
    elapsed_secs: f64,
    /// Training samples self-play has written in all (what a sublinear window grows with;
    /// absent in older runs, whose history gives it on resume).
    #[serde(default)]
    samples: u64,
    /// The checkpoint generation 0 was copied from (`bao train --init`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    init: Option<String>,
    /// CPU seconds of the committed work, all invocations of `bao train` together (0 in
    /// older runs).
    #[serde(default)]
    cpu_secs: f64,
}

/// The paths of a run directory.
pub(crate) struct RunDir(pub(crate) PathBuf);

impl RunDir {
    pub(crate) fn model(&self, g: u32) -> PathBuf {
        self.0
            .join("models")
            .join(format!("{}.safetensors", generation_name(g)))
    }
    fn data(&self, g: u32) -> PathBuf {
        self.0.join("data").join(generation_name(g))
    }
    /// The self-play data of generations `g` down to 1, newest first, where present (a run
    /// resumed from a snapshot lacks the generations before it).
    fn data_newest_first(&self, g: u32) -> Vec<PathBuf> {
        (1..=g)
            .rev()
            .map(|k| self.data(k))
            .filter(|d| d.exists())
            .collect()
    }
    pub(crate) fn state(&self) -> PathBuf {
        self.0.join("state.json")
    }
    fn overrides(&self) -> PathBuf {
        self.0.join("overrides.json")
    }
    fn student(&self, g: u32) -> StudentDir {
        StudentDir(self.0.join("students").join(generation_name(g)))
    }
}

/// Whether a stage (a student, a gauntlet) follows generation `g`: with `[distill]`, every
/// `[distill] every` generations; else, with `[gauntlet]`, every `[gauntlet] every`; and
/// after the last generation.
fn stage_due(config: &RunConfig, g: u32) -> bool {
    let every = match (&config.distill, &config.gauntlet) {
        (Some(d), _) => d.every,
        (None, Some(gauntlet)) => gauntlet.every,
        (None, None) => return false,
    };
    g == config.train.generations || every.is_some_and(|e| g.is_multiple_of(e))
}

/// The first committed generation whose `[distill]` student is due but not finished (its
/// stage runs, or was killed): resuming makes it from the run's self-play data.
pub fn unfinished_student(run: &Path, config: &RunConfig, committed: u32) -> Option<u32> {
    let dir = RunDir(run.to_path_buf());
    config.distill.as_ref()?;
    (1..=committed).find(|&g| stage_due(config, g) && !dir.student(g).done().exists())
}

/// The newest finished student of a generation before `g`, the start of the next.
fn earlier_student(dir: &RunDir, g: u32) -> anyhow::Result<Option<PathBuf>> {
    for k in (1..g).rev() {
        let s = dir.student(k);
        if s.done().exists() {
            return Ok(Some(s.model()));
        }
    }
    Ok(None)
}

/// The stages after generation `g`, each skipped where its output exists: the student
/// (`[distill]`), then the gauntlet of the run's player (the student, else generation `g`).
/// Nothing else runs meanwhile, so the gauntlet's clocks are not shared. `cpu_secs`: the run's
/// CPU seconds so far, recorded in `state` and `state.json` after each stage, so that a kill
/// during the gauntlet keeps the student's CPU time in the run's count (on resume a finished
/// student is not made again, so its time could not be counted again).
fn stages(
    config: &RunConfig,
    dir: &RunDir,
    g: u32,
    state: &mut RunState,
    cpu_secs: impl Fn() -> f64,
) -> anyhow::Result<()> {
    let mut player = dir.model(g);
    if let Some(d) = &config.distill {
        let student = dir.student(g);
        player = student.model();
        if !student.done().exists() {
            let warm = earlier_student(dir, g)?;
            let phases = d.phases_for(warm.is_some());
            eprintln!(
                "distilling generation {g} into the [distill.network] student ({} steps, from {})",
                phases.iter().map(|p| p.0).sum::<usize>(),
                warm.as_ref()
                    .map_or("fresh weights".to_string(), |w| w.display().to_string())
            );
            let data = dir.data_newest_first(g);
            let record = run_stage(
                d,
                config.train.device,
                &dir.model(g),
                &data,
                &student,
                warm.as_deref(),
                true,
            )?;
            println!(
                "student of generation {g}: {} steps on {} positions, policy loss {:.4}, value loss {:.4} ({:.0} s, {:.0} CPU s): {}",
                record.steps,
                record.positions,
                record.policy_loss,
                record.value_loss,
                record.secs,
                record.cpu_secs,
                student.model().display()
            );
            state.cpu_secs = cpu_secs();
            write_state(dir, state)?;
        }
    }
    if let Some(gc) = &config.gauntlet {
        let spent = cpu_secs() - gauntlet_cpu_secs(&dir.0)?;
        gauntlet::play(gc, config.variant, &dir.0, g, &player, spent / 3600.0)?;
        state.cpu_secs = cpu_secs();
        write_state(dir, state)?;
    }
    Ok(())
}

/// Writes `state.json`, the run's commit point (atomically, as every run file is written).
fn write_state(dir: &RunDir, state: &RunState) -> anyhow::Result<()> {
    write_bytes(
        &dir.state(),
        serde_json::to_string_pretty(state)?.as_bytes(),
    )
}

/// CPU seconds the run's gauntlets took (its strength measurements, not its training).
fn gauntlet_cpu_secs(run: &Path) -> anyhow::Result<f64> {
    Ok(gauntlet::read_points(run)?.iter().map(|r| r.cpu_secs).sum())
}

/// Overrides a resumed run may change, as it may change these keys in its config file: the
/// generation count (raising it continues the run) and the self-play network's number format.
const RESUMABLE_KEYS: [&str; 2] = ["train.generations", "selfplay.precision"];

/// The overrides a run is played with: those recorded when it started (a resume may repeat
/// them or leave them out), else `given`. A resume that names other overrides is refused, but
/// for [`RESUMABLE_KEYS`], which it may set anew.
fn run_overrides(dir: &RunDir, given: &[String]) -> anyhow::Result<Vec<String>> {
    if !dir.state().exists() {
        return Ok(given.to_vec());
    }
    let recorded: Vec<String> = match std::fs::read_to_string(dir.overrides()) {
        Ok(text) => serde_json::from_str(&text)
            .with_context(|| format!("corrupt {}", dir.overrides().display()))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e).context(format!("cannot read {}", dir.overrides().display())),
    };
    let resumable = |set: &String| {
        let key = set.split_once('=').map_or(set.as_str(), |(k, _)| k).trim();
        RESUMABLE_KEYS.contains(&key)
    };
    let fixed = |sets: &[String]| -> Vec<String> {
        sets.iter().filter(|s| !resumable(s)).cloned().collect()
    };
    if given.is_empty() {
        return Ok(recorded);
    }
    if fixed(given) != fixed(&recorded) {
        bail!(
            "run directory {} was started with {}; --set {} differs (a resumed run keeps its \
             overrides: repeat them or leave --set out, or use another --run directory)",
            dir.0.display(),
            if recorded.is_empty() {
                "no --set".to_string()
            } else {
                format!("--set {}", recorded.join(" "))
            },
            given.join(" ")
        );
    }
    Ok(given.to_vec())
}

/// The config the run in `run_dir` plays: its saved `config.toml` with the overrides it was
/// started with.
pub fn run_config(run_dir: &Path) -> anyhow::Result<RunConfig> {
    let dir = RunDir(run_dir.to_path_buf());
    anyhow::ensure!(
        dir.state().exists(),
        "{} is not a bao run directory (no state.json)",
        run_dir.display()
    );
    let overrides = run_overrides(&dir, &[])?;
    RunConfig::load_with_overrides(&dir.0.join("config.toml"), &overrides)
        .with_context(|| format!("{} is not a readable bao run directory", run_dir.display()))
}

/// CPU seconds of the run in `run_dir`'s committed work (its generations and the stages after
/// them), all invocations together: `state.json`'s count.
pub fn committed_cpu_secs(run_dir: &Path) -> anyhow::Result<f64> {
    Ok(read_state(&RunDir(run_dir.to_path_buf()))?.cpu_secs)
}

/// The committed generation of a run whose `state.json` holds `bytes`.
pub fn read_generation(bytes: &[u8]) -> anyhow::Result<u32> {
    Ok(serde_json::from_slice::<RunState>(bytes)?.generation)
}

fn read_state(dir: &RunDir) -> anyhow::Result<RunState> {
    let text = std::fs::read_to_string(dir.state())
        .with_context(|| format!("cannot read {}", dir.state().display()))?;
    serde_json::from_str(&text)
        .with_context(|| format!("corrupt run state {}", dir.state().display()))
}

/// Runs (or resumes) the loop in `run_dir`. Returns every generation's metrics.
///
/// A new run starts from a randomly initialised network, or from the checkpoint `init` (its
/// weights, and its optimizer state when saved beside it): that is how a run goes on from a
/// shipped model in a fresh checkout. `init` must match the config's variant and network, up to
/// the additions [`Network::grown_to`] makes.
pub fn train(
    config_path: &Path,
    run_dir: &Path,
    init: Option<&Path>,
) -> anyhow::Result<Vec<GenerationMetrics>> {
    train_with(config_path, &[], run_dir, init)
}

/// [`train`] with `overrides` (`bao train --set SECTION.KEY=VALUE`) of the config's values;
/// they are recorded in the run directory, so that a resumed run keeps them without repeating
/// them, and a resume with other overrides is refused like a different config.
pub fn train_with(
    config_path: &Path,
    overrides: &[String],
    run_dir: &Path,
    init: Option<&Path>,
) -> anyhow::Result<Vec<GenerationMetrics>> {
    let dir = RunDir(run_dir.to_path_buf());
    let overrides = run_overrides(&dir, overrides)?;
    let config = RunConfig::load_with_overrides(config_path, &overrides)?;
    let config_text = std::fs::read_to_string(config_path)?;
    let device = config.train.device.resolve()?;
    // Read before the run directory is touched, so a missing label set leaves nothing behind.
    let labels = load_labels(&config)?;
    if let Some(g) = &config.gauntlet {
        g.check_opponents(config.variant)
            .with_context(|| format!("config {}", config_path.display()))?;
    }
    // A directory that is not a run is refused before the lock file would be written into it.
    if !dir.state().exists() && holds_foreign_files(&dir.0)? {
        bail!(
            "{} exists, is not empty and has no state.json: not a bao run directory (or one whose first generation never finished); remove it or pick another --run",
            dir.0.display()
        );
    }
    // Before anything in the directory is read or changed, and held to the end.
    let _lock = crate::training::runlock::RunLock::acquire(&dir.0)?;
    crate::setup::torch_threads(None);

    let (mut state, learner) = if dir.state().exists() {
        let saved_config = dir.0.join("config.toml");
        let saved = RunConfig::load_with_overrides(&saved_config, &overrides)
            .with_context(|| format!("{} is not a readable bao run directory", dir.0.display()))?;
        // Only the generation count may change between runs (raising it continues the run),
        // and the self-play network's number format, which changes how fast, not what, it
        // plays (to bf16's resolution).
        let mut same = saved.clone();
        same.train.generations = config.train.generations;
        same.selfplay.precision = config.selfplay.precision;
        if same != config {
            bail!(
                "run directory {} was started with a different config (see {}); use another --run directory",
                dir.0.display(),
                saved_config.display()
            );
        }
        let state = read_state(&dir)?;
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
        if state.generation > 0 && !dir.data(state.generation).exists() {
            eprintln!(
                "  no self-play data of generation {} here (a copy of a snapshot, `bao run \
                 snapshot`?): the replay windows refill from the generations played from now on",
                state.generation
            );
        }
        if init.is_some() {
            eprintln!("(--init is ignored: the run exists and resumes from its own checkpoints)");
        }
        (state, learner)
    } else {
        std::fs::create_dir_all(dir.0.join("models"))?;
        write_bytes(&dir.0.join("config.toml"), config_text.as_bytes())?;
        if !overrides.is_empty() {
            write_bytes(
                &dir.overrides(),
                serde_json::to_string_pretty(&overrides)?.as_bytes(),
            )?;
        }
        let learner = initial_learner(&config, device, init)?;
        learner.save(&dir.model(0))?;
        let state = RunState {
            init: init.map(|p| p.display().to_string()),
            ..RunState::default()
        };
        write_state(&dir, &state)?;
        (state, learner)
    };
    let mut learner = learner;
    learner.set_search_params(config.search.clone());

    reconcile_history(&dir.0, state.generation)?;
    let mut history = read_metrics(&dir.0)?;
    if state.samples == 0 {
        // A state written before it counted samples: its history has them.
        state.samples = history.iter().map(|m| m.selfplay_positions).sum();
    }
    // CPU seconds of the run: the earlier invocations' committed work, and this process's
    // since now.
    let cpu_base = state.cpu_secs - cputime::process_secs();
    let cpu_now = || cpu_base + cputime::process_secs();
    // Stages a killed invocation left unfinished (their outputs are written last).
    for g in (1..=state.generation).filter(|&g| stage_due(&config, g)) {
        stages(&config, &dir, g, &mut state, cpu_now)?;
    }
    let target = config.train.generations;
    std::thread::scope(|scope| -> anyhow::Result<()> {
        // With `[train] pipeline`, the next generation's self-play, running beside training
        // (or, once joined early, its result).
        let mut ahead: Option<std::thread::ScopedJoinHandle<'_, anyhow::Result<SelfplayStats>>> =
            None;
        let mut ready: Option<SelfplayStats> = None;
        while state.generation < target {
            let started = Instant::now();
            let cpu_start = cpu_now();
            let g = state.generation + 1;
            let stats = match (ready.take(), ahead.take()) {
                (Some(stats), _) => stats,
                (None, Some(h)) => h
                    .join()
                    .map_err(|_| anyhow::anyhow!("self-play of generation {g} panicked"))??,
                (None, None) => play(&config, &dir, g, state.init.is_some(), true)?,
            };
            // Not before a stage: the student and the gauntlet run alone.
            if config.train.pipeline && g < target && !stage_due(&config, g) {
                let (config, dir) = (&config, &dir);
                eprintln!("  self-play of generation {} runs beside training", g + 1);
                ahead = Some(scope.spawn(move || {
                    crate::setup::torch_threads(None);
                    play(config, dir, g + 1, false, false)
                }));
            }
            let train_cpu = cputime::thread_secs();
            let mut metrics = learn(&config, &dir, g, stats, &labels, &mut learner, &mut state)?;
            metrics.train_cpu_secs = cputime::thread_secs() - train_cpu;
            if evaluated(&config, g) {
                // The fixed-budget checks run alone too, so that their cost is their own.
                if let Some(h) = ahead.take() {
                    ready = Some(h.join().map_err(|_| {
                        anyhow::anyhow!("self-play of generation {} panicked", g + 1)
                    })??);
                }
                let eval_cpu = cputime::process_secs();
                metrics.vs = baseline_matches(&config, &dir, g)?;
                metrics.eval_cpu_secs = cputime::process_secs() - eval_cpu;
            }
            state.generation = g;
            state.elapsed_secs += started.elapsed().as_secs_f64();
            state.cpu_secs = cpu_now();
            metrics.elapsed_secs = state.elapsed_secs;
            metrics.steps = state.steps;
            metrics.cpu_secs = state.cpu_secs;
            metrics.selfplay_cpu_secs =
                (state.cpu_secs - cpu_start - metrics.train_cpu_secs - metrics.eval_cpu_secs)
                    .max(0.0);
            append_metrics(&dir.0, &metrics)?;
            history.push(metrics.clone());
            plot_curve(&dir.0.join("curve.svg"), &history)?;
            // Commit point: everything of generation g is on disk before state.json says so.
            write_state(&dir, &state)?;
            println!("{}", summary(&metrics));
            if stage_due(&config, g) {
                // The stages' time counts too.
                stages(&config, &dir, g, &mut state, cpu_now)?;
            }
        }
        Ok(())
    })?;
    if config.distill.is_some() {
        if let Some(player) = latest_student(&dir.0)? {
            println!("the run's player: {}", player.display());
        }
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
        let seed = Schedule::new(config).torch_seed();
        let net = Network::new_seeded(&config.network, config.variant, device, seed)?;
        let mut learner = Learner::new(net, config.optimizer.clone())?;
        learner.set_lineage(0, None);
        learner.set_search_params(config.search.clone());
        return Ok(learner);
    };
    let what = || format!("--init {}", path.display());
    let net = crate::setup::network(path, Some(config.variant), device).with_context(what)?;
    let mut learner = if net.config() != &config.network {
        // Move features, auxiliary heads or blocks added to a trained model: grow it (its
        // function unchanged); the optimizer's moments do not fit the new shapes.
        let grown = net.grown_to(&config.network).with_context(what)?;
        eprintln!(
            "--init {}: grown into the config's [network] (new input planes start at zero \
             weight, new blocks as identities); the optimizer starts afresh",
            path.display()
        );
        Learner::new(grown, config.optimizer.clone())?
    } else {
        drop(net);
        // Keep the optimizer's moments when they were saved beside the checkpoint.
        match Learner::resume(path, device, config.optimizer.clone()) {
            Ok(l) => l,
            Err(_) => Learner::new(
                crate::setup::network(path, Some(config.variant), device).with_context(what)?,
                config.optimizer.clone(),
            )?,
        }
    };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    learner.set_lineage(0, name);
    Ok(learner)
}

/// Generation `g`'s self-play into its data directory, by the network of generation
/// [`Schedule::played_by`]`(g)`. A run started from a trained network (`--init`) has no
/// window yet; trained on one generation's few thousand positions it overfits them and gets
/// weaker (measured with the Kiswahili model: -176 Elo in 11 generations), so its first
/// generation plays on until it holds `window_min` positions. A random network has nothing
/// to lose and starts at once.
fn play(
    config: &RunConfig,
    dir: &RunDir,
    g: u32,
    from_init: bool,
    progress: bool,
) -> anyhow::Result<SelfplayStats> {
    let schedule = Schedule::new(config);
    let data = dir.data(g);
    if data.exists() {
        std::fs::remove_dir_all(&data)?; // leftovers of an interrupted generation
    }
    std::fs::create_dir_all(&data)?;
    let model = dir.model(schedule.played_by(g));
    let mut evaluator = crate::setup::evaluator(
        &model,
        Some(config.variant),
        &crate::setup::NetChoice {
            device: config.train.device,
            precision: config.selfplay.precision,
            ..Default::default()
        },
    )?;
    let games = config.train.games_per_generation;
    let mut stats = run_selfplay(
        &schedule.selfplay(g, 0),
        &mut evaluator,
        games,
        &data,
        progress,
    )?;
    let mut round = 0;
    if g == 1 && from_init {
        while (stats.positions as usize) < config.train.window_min {
            eprintln!(
                "  generation 1 of a run from --init: {} of window_min = {} positions, playing on",
                stats.positions, config.train.window_min
            );
            round += 1;
            let more = run_selfplay(
                &schedule.selfplay(g, round),
                &mut evaluator,
                games,
                &data,
                progress,
            )?;
            anyhow::ensure!(
                more.positions > 0,
                "self-play of generation {g} wrote no training samples"
            );
            stats.absorb(more);
        }
    }
    Ok(stats)
}

/// Generation `g` after its self-play (`stats`): training on the window, checkpoint,
/// matches against the baselines.
fn learn(
    config: &RunConfig,
    dir: &RunDir,
    g: u32,
    stats: SelfplayStats,
    labels: &[Sample],
    learner: &mut Learner,
    state: &mut RunState,
) -> anyhow::Result<GenerationMetrics> {
    let schedule = Schedule::new(config);
    let selfplay_secs = stats.wall_secs;

    // Window of the newest positions, newest generations first.
    let dirs = dir.data_newest_first(g);
    state.samples += stats.positions;
    let window = load_window(&dirs, schedule.window_size(g, state.samples))?;
    anyhow::ensure!(
        !window.is_empty(),
        "self-play of generation {g} wrote no training samples"
    );
    let mut plan = schedule.minibatches(g, stats.positions);
    let (steps, batch_size) = (plan.steps, plan.batch_size);
    let lr = schedule.learning_rate(g);
    learner.set_learning_rate(lr)?;
    let bar = crate::util::progress::bar(steps as u64, "steps", true);
    let tt = Instant::now();
    let mut steps_log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.0.join("steps.csv"))?;
    let mean = train_steps(learner, &window, labels, None, &mut plan, |l| {
        state.steps += 1;
        writeln!(
            steps_log,
            "{},{},{:.5},{:.5},{:.4},{:.4},{}",
            g, state.steps, l.policy, l.value, l.policy_entropy, l.value_accuracy, lr
        )?;
        bar.set_message(format!("policy {:.3} value {:.3}", l.policy, l.value));
        bar.inc(1);
        Ok(())
    })?;
    bar.finish_and_clear();
    let train_secs = tt.elapsed().as_secs_f64();
    learner.set_lineage(
        g as u64,
        Some(format!("{}.safetensors", generation_name(g - 1))),
    );
    learner.save(&dir.model(g))?;

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
        samples_per_sec: (steps * batch_size) as f64 / train_secs.max(1e-9),
        learning_rate: lr,
        policy_loss: mean.policy,
        value_loss: mean.value,
        margin_loss: mean.margin,
        reply_loss: mean.reply,
        policy_entropy: mean.policy_entropy,
        value_accuracy: mean.value_accuracy,
        distinct_games: stats.distinct_games() as u64,
        distinct_openings: stats.distinct_openings() as u64,
        solver_proven: stats.solver_proven,
        solver_corrected: stats.solver_corrected,
        vs: Vec::new(),
        cpu_secs: 0.0,
        selfplay_cpu_secs: 0.0,
        train_cpu_secs: 0.0,
        eval_cpu_secs: 0.0,
    })
}

/// Whether generation `g` plays the `[eval]` matches: the first, every `every`, the last.
fn evaluated(config: &RunConfig, g: u32) -> bool {
    g == 1 || g.is_multiple_of(config.eval.every) || g == config.train.generations
}

/// Generation `g`'s fixed-budget matches against the `[eval]` baselines.
fn baseline_matches(
    config: &RunConfig,
    dir: &RunDir,
    g: u32,
) -> anyhow::Result<Vec<BaselineResult>> {
    let schedule = Schedule::new(config);
    let me = PlayerSpec::Net(NetParams {
        path: dir.model(g),
        sims: Some(config.eval.sims),
        ..NetParams::default()
    });
    let mut vs = Vec::new();
    for baseline in &config.eval.baselines {
        let options = MatchOptions {
            games: config.eval.games,
            ply_cap: config.eval.ply_cap,
            seed: schedule.eval_seed(g),
            progress: false,
            proofs: config.eval.proofs_ms.map(std::time::Duration::from_millis),
        };
        let r = run_match(config.variant, &me, baseline, &options)?;
        vs.push(BaselineResult {
            baseline: baseline.to_string(),
            score: r.score.unwrap_or(0.0),
            elo: r.elo,
            games: BaselineGames {
                wins: r.a_wins,
                losses: r.b_wins,
                unfinished: r.unfinished,
                elo_ci95: r.elo_ci95,
            },
            proofs: r.proofs,
        });
    }
    Ok(vs)
}

/// The finished students of the run in `run` (those whose stage wrote `done.json`), oldest
/// first.
pub fn finished_students(run: &Path) -> anyhow::Result<Vec<StudentDir>> {
    let dir = run.join("students");
    let mut done: Vec<StudentDir> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| StudentDir(e.path())))
            .filter(|s| s.done().exists())
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).context(format!("cannot list {}", dir.display())),
    };
    done.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(done)
}

/// The newest finished student of the run in `run` (the run's player), if any.
pub fn latest_student(run: &Path) -> anyhow::Result<Option<PathBuf>> {
    Ok(finished_students(run)?.pop().map(|s| s.model()))
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
