//! A self-play worker of a fleet: play a shard's worth of games with the newest model, upload
//! it, look at `LATEST` again, repeat.
//!
//! Workers share nothing but the store. A shard is played into a private local directory and
//! uploaded in one put under a content-hashed name, so a worker killed mid-shard leaves
//! nothing visible and a retried upload of the same bytes is not a duplicate. Models come
//! through a [`ModelCache`]; the worker switches models only between shards, and the shard's
//! path and header carry the generation that played it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context;

use super::cache::ModelCache;
use super::layout::{self, Latest, RunFile, ShardName};
use crate::dataio::shard::list_shards;
use crate::dataio::store::{sha256_hex, Store};
use crate::neuralnet::{DeviceChoice, NetEvaluator};
use crate::training::schedule::generation_name;
use crate::training::selfplay::run_selfplay;
use crate::util::seeds;

/// How a worker runs; the run's settings come from its `run.toml`.
#[derive(Clone, Debug)]
pub struct WorkerOptions {
    /// Goes into shard names (see [`layout::valid_worker_id`]); [`auto_worker_id`] picks one.
    pub worker_id: String,
    pub cache_dir: PathBuf,
    pub device: DeviceChoice,
    /// Stop starting shards after this long (the shard in progress is finished).
    pub max_time: Option<Duration>,
    /// Stop after uploading this many shards.
    pub max_shards: Option<u64>,
    /// Override `fleet.poll_secs`.
    pub poll: Option<Duration>,
    /// Override `selfplay.games_in_flight` (the one setting that rightly differs per machine:
    /// a GPU worker wants bigger batches).
    pub games_in_flight: Option<usize>,
    pub progress: bool,
}

/// What a worker did.
#[derive(Clone, Debug, Default)]
pub struct WorkerStats {
    pub shards: u64,
    pub games: u64,
    pub samples: u64,
    pub simulations: u64,
    pub generations: Vec<u32>,
    pub secs: f64,
    /// Why it stopped.
    pub stopped: String,
}

/// A worker id from the environment: Slurm array task, Kubernetes Indexed Job completion
/// index, `BAO_WORKER_ID`, else `HOST-PID`.
pub fn auto_worker_id() -> String {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let id = if let Some(id) = var("BAO_WORKER_ID") {
        id
    } else if let (Some(job), Some(task)) = (var("SLURM_ARRAY_JOB_ID"), var("SLURM_ARRAY_TASK_ID"))
    {
        format!("slurm-{job}-{task}")
    } else if let (Some(job), Some(proc_id)) = (var("SLURM_JOB_ID"), var("SLURM_PROCID")) {
        format!("slurm-{job}-{proc_id}")
    } else if let Some(index) = var("JOB_COMPLETION_INDEX") {
        format!("k8s-{index}")
    } else {
        format!("{}-{}", super::lease::host_name(), std::process::id())
    };
    let clean: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    clean.chars().take(100).collect()
}

/// Reads `run.toml`, waiting for the trainer to create it (up to `deadline`).
pub fn wait_for_run(
    store: &Store,
    poll: Duration,
    deadline: Option<Instant>,
) -> anyhow::Result<Option<RunFile>> {
    loop {
        if let Some(bytes) = store.get_opt(layout::RUN_TOML)? {
            let text = String::from_utf8(bytes).context("run.toml is not UTF-8")?;
            return RunFile::parse(&text, &store.describe(layout::RUN_TOML)).map(Some);
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Ok(None);
        }
        tracing::info!("waiting for {}", store.describe(layout::RUN_TOML));
        std::thread::sleep(poll);
    }
}

/// What `LATEST` says now, if the trainer has published anything.
pub fn read_latest(store: &Store) -> anyhow::Result<Option<Latest>> {
    match store.get_opt(layout::LATEST)? {
        Some(b) => Latest::parse(&b, &store.describe(layout::LATEST)).map(Some),
        None => Ok(None),
    }
}

/// The next sequence number for `worker` in generation `g` (after any shard it uploaded in an
/// earlier life), so a restarted worker does not replay the same seeds.
fn next_seq(store: &Store, g: u32, worker: &str) -> anyhow::Result<u64> {
    let prefix = format!("{}/{}", layout::SHARDS, generation_name(g));
    Ok(store
        .list(&prefix)?
        .iter()
        .filter_map(|e| ShardName::parse(&e.key))
        .filter(|n| n.worker == worker)
        .map(|n| n.seq + 1)
        .max()
        .unwrap_or(0))
}

fn worker_seed(worker: &str, g: u32, seq: u64) -> u64 {
    let h = sha256_hex(worker.as_bytes());
    let w = u64::from_str_radix(&h[..16], 16).expect("hex");
    seeds::derive(w, (g as u64) << 40 ^ seq)
}

/// Runs a worker on `store` until `LATEST` says the run is finished, or a limit is reached.
pub fn run_worker(store: &Store, opts: &WorkerOptions) -> anyhow::Result<WorkerStats> {
    anyhow::ensure!(
        layout::valid_worker_id(&opts.worker_id),
        "worker id `{}`: use letters, digits, `.`, `_` and `-` only (at most 100)",
        opts.worker_id
    );
    let t0 = Instant::now();
    let deadline = opts.max_time.map(|d| t0 + d);
    let first_poll = opts.poll.unwrap_or(Duration::from_secs(5));
    let mut stats = WorkerStats::default();
    let Some(run) = wait_for_run(store, first_poll, deadline)? else {
        stats.stopped = "time limit (no run.toml yet)".into();
        return Ok(stats);
    };
    let poll = opts
        .poll
        .unwrap_or(Duration::from_secs_f64(run.fleet.poll_secs));
    let cache = ModelCache::new(&opts.cache_dir)?;
    // Private to this worker, even beside others in one process (tests).
    let scratch = super::scratch_dir("worker");
    let mut sp = run.selfplay_config();
    if let Some(n) = opts.games_in_flight {
        sp.selfplay.games_in_flight = n;
    }
    sp.selfplay.shard_size = usize::MAX; // one shard per batch of games
    let games = run.games_per_shard();
    let mut current: Option<(Latest, NetEvaluator, u64)> = None;
    let result: anyhow::Result<String> = loop {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            break Ok("time limit".to_string());
        }
        if opts.max_shards.is_some_and(|m| stats.shards >= m) {
            break Ok("shard limit".to_string());
        }
        let Some(latest) = read_latest(store)? else {
            tracing::info!("waiting for {}", store.describe(layout::LATEST));
            std::thread::sleep(poll);
            continue;
        };
        if latest.finished {
            break Ok(format!("run finished at generation {}", latest.generation));
        }
        if current
            .as_ref()
            .is_none_or(|(l, _, _)| l.generation != latest.generation || l.sha256 != latest.sha256)
        {
            let path = cache.fetch(store, &latest)?;
            let ev = crate::setup::evaluator(
                &path,
                Some(run.config.variant),
                &crate::setup::NetChoice {
                    device: opts.device,
                    precision: run.config.selfplay.precision,
                    ..Default::default()
                },
            )?;
            let seq = next_seq(store, latest.generation, &opts.worker_id)?;
            tracing::info!(
                "worker {} plays generation {} from shard {seq}",
                opts.worker_id,
                latest.generation
            );
            stats.generations.push(latest.generation);
            current = Some((latest, ev, seq));
        }
        let (latest, ev, seq) = current.as_mut().expect("set above");
        // The games of generation G's network train generation G + 1.
        (sp.selfplay.sims, sp.selfplay.cheap_sims) =
            crate::training::schedule::Schedule::new(&run.config)
                .selfplay_sims(latest.generation + 1);
        sp.selfplay.generation = latest.generation;
        sp.selfplay.seed = worker_seed(&opts.worker_id, latest.generation, *seq);
        let r = play_and_upload(
            store,
            &sp,
            ev,
            games,
            &scratch,
            &opts.worker_id,
            latest.generation,
            *seq,
            opts.progress,
        );
        let _ = std::fs::remove_dir_all(&scratch);
        let (name, s) = r?;
        stats.games += s.games;
        stats.samples += s.positions;
        stats.simulations += s.simulations;
        if let Some(name) = name {
            stats.shards += 1;
            tracing::info!(
                "uploaded {} ({} samples)",
                store.describe(&name.key()),
                s.positions
            );
        }
        *seq += 1;
    };
    stats.secs = t0.elapsed().as_secs_f64();
    stats.stopped = result?;
    Ok(stats)
}

/// Plays one shard into `scratch` and uploads its records, then the shard itself.
#[allow(clippy::too_many_arguments)]
fn play_and_upload(
    store: &Store,
    sp: &crate::training::selfplay::SelfplayRunConfig,
    ev: &mut NetEvaluator,
    games: usize,
    scratch: &Path,
    worker: &str,
    generation: u32,
    seq: u64,
    progress: bool,
) -> anyhow::Result<(Option<ShardName>, crate::training::selfplay::SelfplayStats)> {
    let _ = std::fs::remove_dir_all(scratch);
    std::fs::create_dir_all(scratch)
        .with_context(|| format!("cannot create {}", scratch.display()))?;
    let stats = run_selfplay(sp, ev, games, scratch, progress)?;
    let shards = list_shards(scratch)?;
    anyhow::ensure!(
        shards.len() <= 1,
        "expected one shard per batch of games, got {}",
        shards.len()
    );
    let Some(shard) = shards.first() else {
        return Ok((None, stats));
    };
    let bytes = std::fs::read(shard).with_context(|| format!("cannot read {}", shard.display()))?;
    let mut records = Vec::new();
    for path in &stats.record_files {
        records.extend(
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?,
        );
    }
    let name = ShardName {
        generation,
        worker: worker.to_string(),
        seq,
        hash: sha256_hex(&bytes)[..16].to_string(),
    };
    // Records first: a visible shard always has its games beside it.
    store.put_immutable(&name.games_key(), &records)?;
    store.put_immutable(&name.key(), &bytes)?;
    Ok((Some(name), stats))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_ids_are_valid_names() {
        assert!(layout::valid_worker_id(&auto_worker_id()));
    }

    #[test]
    fn seeds_differ_by_worker_generation_and_sequence() {
        let s = worker_seed("w", 1, 0);
        assert_ne!(s, worker_seed("v", 1, 0));
        assert_ne!(s, worker_seed("w", 2, 0));
        assert_ne!(s, worker_seed("w", 1, 1));
        assert_eq!(s, worker_seed("w", 1, 0));
    }
}
