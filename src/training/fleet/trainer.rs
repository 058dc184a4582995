//! The trainer of a fleet: take new shards from the store into a window, train once enough
//! new samples have come, publish a generation, repeat; resume from `trainer/` after a kill.
//!
//! Commit protocol for generation `g` (the order matters):
//! 1. weights and sidecar go to `models/gen-g.*` with create-only puts (a second trainer
//!    that somehow got this far fails here), then the optimizer state to `trainer/optim/`;
//! 2. `trainer/state.json` records `g` and the shards it consumed: the commit point;
//! 3. `models/LATEST` moves to `g`, and workers pick it up.
//!
//! A trainer killed between 1 and 2 leaves a `gen-g` no worker ever saw; the next trainer
//! deletes it before training `g` again. A shard is in the state's consumed list once, and
//! listed shards already there are skipped, so no shard is ever trained on as new twice.
//!
//! Training steps per generation are capped by `[train] reuse` training samples per new
//! sample, so a dead or slow fleet slows training down instead of overfitting the window.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};

use super::layout::{self, Latest, RunFile, ShardName};
use super::lease::Lease;
use crate::dataio::shard::{decode_shard, Sample};
use crate::dataio::store::{sha256_hex, Store};
use crate::game::Variant;
use crate::neuralnet::{DeviceChoice, Learner, Network};
use crate::training::minibatch::train_steps;
use crate::training::schedule::{generation_name, Schedule};

/// How a trainer runs; the run's settings come from its `run.toml`.
#[derive(Clone, Debug)]
pub struct TrainerOptions {
    /// Names this trainer in its lease; a restart with the same id takes over at once.
    pub trainer_id: String,
    /// A run config to start the run with (must equal `run.toml` if the run exists; only
    /// `[train] generations` may differ).
    pub config: Option<PathBuf>,
    /// Stop after publishing this generation (default: `[train] generations`).
    pub generations: Option<u32>,
    /// Stop (cleanly, resumable) after this long.
    pub max_time: Option<Duration>,
    /// Override `fleet.poll_secs`.
    pub poll: Option<Duration>,
    pub device: Option<DeviceChoice>,
    /// Local scratch directory for checkpoints being written or read.
    pub work_dir: PathBuf,
    pub progress: bool,
}

/// One shard the trainer took, in the order taken.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Consumed {
    pub key: String,
    /// Model generation that played it.
    pub played_by: u32,
    /// Fully searched samples it contributed.
    pub samples: u64,
    /// Generation whose training first used it.
    pub trained_in: u32,
}

/// `trainer/state.json`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainerState {
    /// Last committed generation.
    pub generation: u32,
    /// Optimizer steps taken in all.
    pub steps: u64,
    pub consumed: Vec<Consumed>,
    /// Shards that could not be read (corrupt, wrong variant), with the reason.
    pub rejected: Vec<(String, String)>,
}

impl TrainerState {
    pub fn read(store: &Store) -> anyhow::Result<Option<TrainerState>> {
        match store.get_opt(layout::TRAINER_STATE)? {
            Some(b) => serde_json::from_slice(&b)
                .with_context(|| {
                    format!(
                        "corrupt trainer state {}",
                        store.describe(layout::TRAINER_STATE)
                    )
                })
                .map(Some),
            None => Ok(None),
        }
    }
}

/// What a trainer did.
#[derive(Clone, Debug, Default)]
pub struct TrainerSummary {
    pub generation: u32,
    pub published: Vec<u32>,
    pub consumed: usize,
    pub stopped: String,
}

/// Reads `run.toml`, creating it from `config` for a new run; a given config must match.
pub fn init_or_check_run(store: &Store, config: Option<&Path>) -> anyhow::Result<RunFile> {
    let given = match config {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read config {}", p.display()))?;
            Some((RunFile::parse(&text, &p.display().to_string())?, text))
        }
        None => None,
    };
    let what = store.describe(layout::RUN_TOML);
    let existing = match store.get_opt(layout::RUN_TOML)? {
        Some(b) => Some(RunFile::parse(
            std::str::from_utf8(&b).with_context(|| format!("{what} is not UTF-8"))?,
            &what,
        )?),
        None => match &given {
            Some((_, text)) => {
                store.put_create(layout::RUN_TOML, text.as_bytes())?;
                let b = store.get(layout::RUN_TOML)?;
                Some(RunFile::parse(
                    std::str::from_utf8(&b).with_context(|| format!("{what} is not UTF-8"))?,
                    &what,
                )?)
            }
            None => None,
        },
    };
    let Some(run) = existing else {
        bail!(
            "{} has no run.toml: start the run with `bao learn --data {} --config RUN.toml`",
            store.url(),
            store.url()
        );
    };
    if let Some((mut g, _)) = given {
        g.config.train.generations = run.config.train.generations;
        if g != run {
            bail!("{what} differs from the given --config (only [train] generations may change); use another root");
        }
    }
    Ok(run)
}

/// Runs the trainer until the target generation is published or time runs out.
pub fn run_trainer(store: &Store, opts: &TrainerOptions) -> anyhow::Result<TrainerSummary> {
    let t0 = Instant::now();
    let run = init_or_check_run(store, opts.config.as_deref())?;
    let target = opts.generations.unwrap_or(run.config.train.generations);
    let poll = opts
        .poll
        .unwrap_or(Duration::from_secs_f64(run.fleet.poll_secs));
    let mut lease = Lease::acquire(
        store,
        &opts.trainer_id,
        Duration::from_secs(run.fleet.lease_secs),
    )?;
    std::fs::create_dir_all(&opts.work_dir)
        .with_context(|| format!("cannot create {}", opts.work_dir.display()))?;
    crate::setup::torch_threads(None);
    let device = opts.device.unwrap_or(run.config.train.device).resolve()?;
    let mut t = Trainer {
        store,
        run: &run,
        opts,
        device,
        state: TrainerState::default(),
        window: Vec::new(),
        labels: crate::training::minibatch::load_labels(&run.config)?,
    };
    let mut learner = t.start()?;
    learner.set_search_params(run.config.search.clone());
    // LATEST may lag the state (a trainer died between the two writes), or say `finished`
    // for a run whose target was raised.
    let g = t.state.generation;
    if g < target
        && super::worker::read_latest(store)?.is_none_or(|l| l.generation != g || l.finished)
    {
        store.put(layout::LATEST, &t.latest_of(g)?.to_bytes())?;
    }
    let mut summary = TrainerSummary::default();
    let mut pending: Vec<Consumed> = Vec::new();
    let mut pending_samples = 0u64;
    let mut seen: HashSet<String> = t.state.consumed.iter().map(|c| c.key.clone()).collect();
    seen.extend(t.state.rejected.iter().map(|(k, _)| k.clone()));
    let stopped = loop {
        lease.renew(store)?;
        if t.state.generation >= target {
            let mut latest = t.latest_of(t.state.generation)?;
            latest.finished = true;
            store.put(layout::LATEST, &latest.to_bytes())?;
            break format!("reached generation {target}");
        }
        let mut rejected = false;
        for entry in store.list(layout::SHARDS)? {
            if seen.contains(&entry.key) {
                continue;
            }
            let Some(name) = ShardName::parse(&entry.key) else {
                continue;
            };
            seen.insert(entry.key.clone());
            // Storage errors end the trainer (its orchestrator restarts it); a shard that
            // cannot be decoded is recorded as rejected and never read again.
            let bytes = store.get(&entry.key)?;
            match t.take_shard(&entry.key, &bytes) {
                Ok(samples) => {
                    pending_samples += samples;
                    pending.push(Consumed {
                        key: entry.key,
                        played_by: name.generation,
                        samples,
                        trained_in: 0,
                    });
                }
                Err(e) => {
                    tracing::warn!("skipping shard {}: {e:#}", store.describe(&entry.key));
                    t.state.rejected.push((entry.key, format!("{e:#}")));
                    rejected = true;
                }
            }
            lease.renew(store)?;
        }
        if pending_samples >= run.fleet.samples_per_generation as u64 {
            let g = t.state.generation + 1;
            t.train_generation(
                &mut learner,
                &mut lease,
                g,
                pending_samples,
                std::mem::take(&mut pending),
            )?;
            pending_samples = 0;
            summary.published.push(g);
            println!(
                "generation {g}: {} shards consumed in all, window {} samples, {} steps in all",
                t.state.consumed.len(),
                t.window.len(),
                t.state.steps
            );
        } else {
            if rejected {
                t.commit_state()?;
            }
            // Checked after a look at the shards, so even a trainer that took its whole time
            // to start reads what is there once (what a test of a short run relies on).
            if opts.max_time.is_some_and(|m| t0.elapsed() >= m) {
                break "time limit".to_string();
            }
            std::thread::sleep(poll);
        }
    };
    lease.release(store)?;
    let _ = std::fs::remove_dir_all(&opts.work_dir);
    summary.generation = t.state.generation;
    summary.consumed = t.state.consumed.len();
    summary.stopped = stopped;
    Ok(summary)
}

struct Trainer<'a> {
    store: &'a Store,
    run: &'a RunFile,
    opts: &'a TrainerOptions,
    device: tch::Device,
    state: TrainerState,
    /// Fully searched samples, oldest first.
    window: Vec<Sample>,
    /// Solver labels mixed into every minibatch (`[train] labels`), read once at the start.
    labels: Vec<Sample>,
}

impl Trainer<'_> {
    fn variant(&self) -> Variant {
        self.run.config.variant
    }

    fn local(&self, g: u32) -> PathBuf {
        self.opts
            .work_dir
            .join(format!("{}.safetensors", generation_name(g)))
    }

    /// Generation 0 for a new run, or the committed state and window of an old one.
    fn start(&mut self) -> anyhow::Result<Learner> {
        let store = self.store;
        let config = &self.run.config;
        match TrainerState::read(store)? {
            None => {
                self.drop_orphan(0)?;
                let seed = Schedule::new(config).torch_seed();
                let net = Network::new_seeded(&config.network, config.variant, self.device, seed)?;
                let mut learner = Learner::new(net, config.optimizer.clone())?;
                learner.set_lineage(0, None);
                let latest = self.upload(&learner, 0)?;
                self.commit_state()?;
                store.put(layout::LATEST, &latest.to_bytes())?;
                eprintln!("started run {} at generation 0", store.url());
                Ok(learner)
            }
            Some(state) => {
                self.state = state;
                let g = self.state.generation;
                self.drop_orphan(g + 1)?;
                let local = self.local(g);
                let [optim_w, optim_j] = layout::optim_keys(g);
                for (key, path) in [
                    (layout::model_key(g), local.clone()),
                    (layout::sidecar_key(g), local.with_extension("json")),
                    (optim_w, local.with_extension("optim.safetensors")),
                    (optim_j, local.with_extension("optim.json")),
                ] {
                    crate::dataio::atomic::write_bytes(&path, &store.get(&key)?)?;
                }
                let learner = Learner::resume(&local, self.device, config.optimizer.clone())
                    .with_context(|| format!("cannot resume {} at generation {g}", store.url()))?;
                learner.network().ensure_variant(config.variant)?;
                self.reload_window()?;
                eprintln!(
                    "resumed {} at generation {g}: {} shards consumed, window {} samples",
                    store.url(),
                    self.state.consumed.len(),
                    self.window.len()
                );
                Ok(learner)
            }
        }
    }

    /// Removes generation `g`'s model if it was uploaded but never committed.
    fn drop_orphan(&self, g: u32) -> anyhow::Result<()> {
        for key in [layout::model_key(g), layout::sidecar_key(g)] {
            if self.store.exists(&key)? {
                tracing::warn!(
                    "removing {}: uploaded but never committed",
                    self.store.describe(&key)
                );
                self.store.delete(&key)?;
            }
        }
        Ok(())
    }

    /// The window of generation `g`; a sublinear one grows with the samples of the shards
    /// consumed so far (committed generations: the count lags the window by one generation).
    fn window_size(&self, g: u32) -> usize {
        let played = self.state.consumed.iter().map(|c| c.samples).sum();
        Schedule::new(&self.run.config).window_size(g, played)
    }

    /// Reads the newest consumed shards back until the next generation's window is full.
    fn reload_window(&mut self) -> anyhow::Result<()> {
        let size = self.window_size(self.state.generation + 1);
        let mut parts: Vec<Vec<Sample>> = Vec::new();
        let mut total = 0;
        for c in self.state.consumed.iter().rev() {
            if total >= size {
                break;
            }
            let s = self.read_shard(&c.key)?;
            total += s.len();
            parts.push(s);
        }
        self.window = parts.into_iter().rev().flatten().collect();
        self.trim_window(size);
        Ok(())
    }

    fn trim_window(&mut self, size: usize) {
        if self.window.len() > size {
            let extra = self.window.len() - size;
            self.window.drain(..extra);
        }
    }

    fn read_shard(&self, key: &str) -> anyhow::Result<Vec<Sample>> {
        self.decode(key, &self.store.get(key)?)
    }

    fn decode(&self, key: &str, bytes: &[u8]) -> anyhow::Result<Vec<Sample>> {
        let shard = decode_shard(bytes, &self.store.describe(key))?;
        anyhow::ensure!(
            shard.header.variant == self.variant(),
            "shard is bao la {}, the run plays bao la {}",
            shard.header.variant,
            self.variant()
        );
        Ok(shard
            .samples
            .into_iter()
            .filter(|s| s.full_search)
            .collect())
    }

    /// Reads a new shard into the window; returns its number of training samples.
    fn take_shard(&mut self, key: &str, bytes: &[u8]) -> anyhow::Result<u64> {
        let samples = self.decode(key, bytes)?;
        let n = samples.len() as u64;
        self.window.extend(samples);
        self.trim_window(self.window_size(self.state.generation + 1));
        Ok(n)
    }

    fn latest_of(&self, g: u32) -> anyhow::Result<Latest> {
        let bytes = self.store.get(&layout::model_key(g))?;
        Ok(Latest {
            generation: g,
            key: layout::model_key(g),
            sidecar: layout::sidecar_key(g),
            sha256: sha256_hex(&bytes),
            finished: false,
        })
    }

    /// Saves the learner locally and uploads generation `g` (step 1 of the commit protocol).
    fn upload(&self, learner: &Learner, g: u32) -> anyhow::Result<Latest> {
        let local = self.local(g);
        learner.save(&local)?;
        let read =
            |p: PathBuf| std::fs::read(&p).with_context(|| format!("cannot read {}", p.display()));
        let weights = read(local.clone())?;
        let [optim_w, optim_j] = layout::optim_keys(g);
        let sidecar = read(local.with_extension("json"))?;
        let published = |r: anyhow::Result<_>| {
            r.with_context(|| {
                format!(
                    "cannot publish generation {g}: has another trainer written to {}?",
                    self.store.url()
                )
            })
        };
        published(self.store.put_immutable(&layout::sidecar_key(g), &sidecar))?;
        published(self.store.put_immutable(&layout::model_key(g), &weights))?;
        self.store
            .put(&optim_w, &read(local.with_extension("optim.safetensors"))?)?;
        self.store
            .put(&optim_j, &read(local.with_extension("optim.json"))?)?;
        if g >= 1 {
            let old = self.local(g - 1);
            for ext in ["safetensors", "json", "optim.safetensors", "optim.json"] {
                let _ = std::fs::remove_file(old.with_extension(ext));
            }
        }
        Ok(Latest {
            generation: g,
            key: layout::model_key(g),
            sidecar: layout::sidecar_key(g),
            sha256: sha256_hex(&weights),
            finished: false,
        })
    }

    fn commit_state(&self) -> anyhow::Result<()> {
        let mut bytes = serde_json::to_vec_pretty(&self.state)?;
        bytes.push(b'\n');
        self.store.put(layout::TRAINER_STATE, &bytes)
    }

    fn train_generation(
        &mut self,
        learner: &mut Learner,
        lease: &mut Lease,
        g: u32,
        new_samples: u64,
        mut taken: Vec<Consumed>,
    ) -> anyhow::Result<()> {
        let schedule = Schedule::new(&self.run.config);
        let mut plan = schedule.minibatches(g, new_samples);
        let steps = plan.steps;
        learner.set_learning_rate(schedule.learning_rate(g))?;
        let bar = crate::util::progress::bar(steps as u64, "steps", self.opts.progress);
        bar.set_message(format!("generation {g}"));
        let store = self.store;
        train_steps(learner, &self.window, &self.labels, None, &mut plan, |_| {
            bar.inc(1);
            lease.renew(store)
        })?;
        bar.finish_and_clear();
        learner.set_lineage(
            g as u64,
            Some(format!("{}.safetensors", generation_name(g - 1))),
        );
        lease.ensure_held(store)?;
        let latest = self.upload(learner, g)?;
        lease.ensure_held(store)?;
        for c in &mut taken {
            c.trained_in = g;
        }
        self.state.generation = g;
        self.state.steps += steps as u64;
        self.state.consumed.extend(taken);
        self.commit_state()?;
        store.put(layout::LATEST, &latest.to_bytes())?;
        if g >= 2 {
            for key in layout::optim_keys(g - 2) {
                store.delete(&key)?;
            }
        }
        self.trim_window(self.window_size(g + 1));
        Ok(())
    }
}
