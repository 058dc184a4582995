//! Where everything of a fleet run lives under its root URL, and the small files that say
//! what is current.
//!
//! ```text
//! ROOT/run.toml                                   run config (created once; see RunFile)
//! ROOT/models/gen-NNNNNN.safetensors, .json       weights + sidecar, immutable
//! ROOT/models/LATEST                              JSON Latest: generation, key, sha256 (trainer writes)
//! ROOT/shards/gen-NNNNNN/WORKER-SEQ-HASH.shard    samples played by generation NNNNNN, immutable
//! ROOT/games/gen-NNNNNN/WORKER-SEQ-HASH.jsonl     the game records of that shard, immutable
//! ROOT/trainer/state.json                         consumed shards, steps (the trainer's commit point;
//!                                                 minibatches are seeded by (seed, generation), so
//!                                                 no RNG state is needed to resume)
//! ROOT/trainer/optim/gen-NNNNNN.optim.*           optimizer state for resuming
//! ROOT/trainer/lease-NNNNNN.json, heartbeat.json  which trainer owns the run
//! ```
//!
//! `HASH` is the first 16 hex digits of the shard's SHA-256, so a re-upload of the same bytes
//! lands on the same name (not a duplicate) and different bytes never share one.

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::training::runconfig::RunConfig;
use crate::training::schedule::generation_name;

pub const RUN_TOML: &str = "run.toml";
pub const LATEST: &str = "models/LATEST";
pub const SHARDS: &str = "shards";
pub const GAMES: &str = "games";
pub const TRAINER_STATE: &str = "trainer/state.json";

pub fn model_key(g: u32) -> String {
    format!("models/{}.safetensors", generation_name(g))
}

pub fn sidecar_key(g: u32) -> String {
    format!("models/{}.json", generation_name(g))
}

/// The optimizer files of generation `g`, named like the files a [`crate::neuralnet::Learner`]
/// saves beside a checkpoint (`.optim.safetensors`, `.optim.json`).
pub fn optim_keys(g: u32) -> [String; 2] {
    let base = format!("trainer/optim/{}", generation_name(g));
    [
        format!("{base}.optim.safetensors"),
        format!("{base}.optim.json"),
    ]
}

/// A shard's name parts.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ShardName {
    pub generation: u32,
    pub worker: String,
    pub seq: u64,
    pub hash: String,
}

impl ShardName {
    pub fn key(&self) -> String {
        format!(
            "{SHARDS}/{}/{}.shard",
            generation_name(self.generation),
            self.stem()
        )
    }
    pub fn games_key(&self) -> String {
        format!(
            "{GAMES}/{}/{}.jsonl",
            generation_name(self.generation),
            self.stem()
        )
    }
    fn stem(&self) -> String {
        format!("{}-{:06}-{}", self.worker, self.seq, self.hash)
    }

    /// Parses `shards/gen-NNNNNN/WORKER-SEQ-HASH.shard`; `None` for anything else (stray
    /// objects are ignored, not fatal).
    pub fn parse(key: &str) -> Option<ShardName> {
        let rest = key.strip_prefix(SHARDS)?.strip_prefix('/')?;
        let (dir, file) = rest.split_once('/')?;
        let generation = dir.strip_prefix("gen-")?.parse().ok()?;
        let stem = file.strip_suffix(".shard")?;
        let mut parts = stem.rsplitn(3, '-');
        let hash = parts.next()?;
        let seq = parts.next()?.parse().ok()?;
        let worker = parts.next()?;
        if hash.len() != 16
            || !hash.chars().all(|c| c.is_ascii_hexdigit())
            || !valid_worker_id(worker)
        {
            return None;
        }
        Some(ShardName {
            generation,
            worker: worker.to_string(),
            seq,
            hash: hash.to_string(),
        })
    }
}

/// Worker ids go into object names: letters, digits, `.`, `_` and `-` only.
pub fn valid_worker_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 100
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// What `models/LATEST` says: the generation workers should play with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Latest {
    pub generation: u32,
    /// Key of the weights under the root.
    pub key: String,
    /// Key of the JSON sidecar.
    pub sidecar: String,
    /// SHA-256 of the weights, lowercase hex: workers verify their download against it.
    pub sha256: String,
    /// Set when the trainer has reached its last generation: workers exit.
    #[serde(default)]
    pub finished: bool,
}

impl Latest {
    pub fn parse(bytes: &[u8], what: &str) -> anyhow::Result<Latest> {
        serde_json::from_slice(bytes)
            .with_context(|| format!("{what} is not a valid LATEST pointer"))
    }
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = serde_json::to_vec_pretty(self).expect("LATEST serializes");
        v.push(b'\n');
        v
    }
}

/// The `[fleet]` section of `run.toml`: what only a fleet needs.
///
/// ```toml
/// [fleet]
/// samples_per_generation = 4096 # new (fully searched) samples that trigger a generation
/// games_per_shard = 0           # games a worker plays per shard; 0 = 2 x games_in_flight
/// poll_secs = 5.0               # how often workers read LATEST and the trainer lists shards
/// lease_secs = 60               # a trainer silent this long may be replaced
/// ```
/// Training steps per generation come from `[train]`: `reuse` training samples per new
/// sample at most (`steps = ceil(new * reuse / batch_size)`, capped by
/// `max_steps_per_generation`), so a fleet that stops producing stops training too.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FleetConfig {
    pub samples_per_generation: usize,
    pub games_per_shard: usize,
    pub poll_secs: f64,
    pub lease_secs: u64,
}

impl Default for FleetConfig {
    fn default() -> FleetConfig {
        FleetConfig {
            samples_per_generation: 4096,
            games_per_shard: 0,
            poll_secs: 5.0,
            lease_secs: 60,
        }
    }
}

/// `run.toml`: a whole run config (as `bao train` reads) plus an optional `[fleet]` section.
#[derive(Clone, Debug, PartialEq)]
pub struct RunFile {
    pub config: RunConfig,
    pub fleet: FleetConfig,
}

impl RunFile {
    pub fn parse(text: &str, what: &str) -> anyhow::Result<RunFile> {
        let mut table: toml::Table =
            crate::config::parse_toml(text).with_context(|| format!("invalid {what}"))?;
        let fleet = match table.remove("fleet") {
            Some(v) => v
                .try_into::<FleetConfig>()
                .map_err(|e| anyhow::anyhow!("invalid {what}: [fleet]: {e}"))?,
            None => FleetConfig::default(),
        };
        let rest = toml::to_string(&table).context("cannot re-serialize config")?;
        let config: RunConfig =
            crate::config::parse_toml(&rest).with_context(|| format!("invalid {what}"))?;
        config
            .validate()
            .with_context(|| format!("invalid {what}"))?;
        anyhow::ensure!(
            fleet.samples_per_generation >= 1,
            "invalid {what}: fleet.samples_per_generation must be >= 1"
        );
        anyhow::ensure!(
            fleet.poll_secs > 0.0 && fleet.poll_secs.is_finite(),
            "invalid {what}: fleet.poll_secs must be > 0"
        );
        anyhow::ensure!(
            fleet.lease_secs >= 1,
            "invalid {what}: fleet.lease_secs must be >= 1"
        );
        Ok(RunFile { config, fleet })
    }

    /// Games per shard after resolving `0` (2 x games in flight: the lockstep batch stays
    /// full for most of a shard).
    pub fn games_per_shard(&self) -> usize {
        match self.fleet.games_per_shard {
            0 => 2 * self.config.selfplay.games_in_flight,
            n => n,
        }
    }

    /// The self-play settings workers use (the run's variant, `[search]`, `[selfplay]`).
    pub fn selfplay_config(&self) -> crate::training::selfplay::SelfplayRunConfig {
        self.config.selfplay_config()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_names_round_trip_and_strays_are_ignored() {
        let n = ShardName {
            generation: 3,
            worker: "slurm-17-2".into(),
            seq: 41,
            hash: "0123456789abcdef".into(),
        };
        assert_eq!(
            n.key(),
            "shards/gen-000003/slurm-17-2-000041-0123456789abcdef.shard"
        );
        assert_eq!(
            n.games_key(),
            "games/gen-000003/slurm-17-2-000041-0123456789abcdef.jsonl"
        );
        assert_eq!(ShardName::parse(&n.key()), Some(n));
        for stray in [
            "shards/gen-000003/x.shard",
            "shards/gen-00000x/w-000001-0123456789abcdef.shard",
            "shards/gen-000003/w-000001-0123456789abcdef.tmp",
            "shards/gen-000003/w-000001-0123456789abcdeg.shard",
            "shards/gen-000003/-000001-0123456789abcdef.shard",
            "games/gen-000003/w-000001-0123456789abcdef.shard",
        ] {
            assert_eq!(ShardName::parse(stray), None, "{stray}");
        }
    }

    #[test]
    fn run_file_reads_a_fleet_section_and_refuses_typos() {
        let base = "variant = \"kujifunza\"\n[network]\npreset = \"tiny\"\n";
        let r = RunFile::parse(base, "run.toml").unwrap();
        assert_eq!(r.fleet, FleetConfig::default());
        assert_eq!(r.games_per_shard(), 2 * r.config.selfplay.games_in_flight);
        let r = RunFile::parse(
            &format!("{base}[fleet]\nsamples_per_generation = 10\ngames_per_shard = 3\n"),
            "run.toml",
        )
        .unwrap();
        assert_eq!(
            (r.fleet.samples_per_generation, r.games_per_shard()),
            (10, 3)
        );
        let e = format!(
            "{:#}",
            RunFile::parse(
                &format!("{base}[fleet]\nsamples_per_gen = 10\n"),
                "run.toml"
            )
            .unwrap_err()
        );
        assert!(e.contains("samples_per_gen"), "{e}");
    }

    #[test]
    fn latest_round_trips() {
        let l = Latest {
            generation: 2,
            key: model_key(2),
            sidecar: sidecar_key(2),
            sha256: "ab".into(),
            finished: false,
        };
        assert_eq!(Latest::parse(&l.to_bytes(), "LATEST").unwrap(), l);
        assert!(Latest::parse(b"{}", "LATEST").is_err());
    }
}
