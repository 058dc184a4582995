//! Shared by the fleet tests: a tiny run config and the checks of a finished run.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use bao::dataio::shard::decode_shard;
use bao::dataio::store::Store;
use bao::program::fleet::layout::{self, Latest, ShardName};
use bao::program::fleet::trainer::TrainerState;

/// A run small enough for seconds on one core: tiny network, short games, a generation every
/// ~40 new samples.
pub const RUN_TOML: &str = r#"
variant = "kujifunza"
[network]
preset = "tiny"
[selfplay]
games_in_flight = 4
sims = 8
cheap_sims = 4
max_plies = 40
[train]
generations = 2
window_min = 400
window_growth = 0
window_max = 400
batch_size = 16
reuse = 1.0
max_steps_per_generation = 4
device = "cpu"
[fleet]
samples_per_generation = 40
games_per_shard = 4
poll_secs = 0.05
lease_secs = 30
"#;

pub fn write_config(dir: &Path) -> PathBuf {
    let p = dir.join("run.toml");
    std::fs::write(&p, RUN_TOML).unwrap();
    p
}

/// Checks a finished run: LATEST at `generation`, every listed shard whole and in the right
/// place, every consumed shard listed, none consumed twice.
pub fn check_run(store: &Store, generation: u32) -> TrainerState {
    let latest = Latest::parse(&store.get(layout::LATEST).unwrap(), "LATEST").unwrap();
    assert_eq!(latest.generation, generation);
    assert!(latest.finished);
    for g in 0..=generation {
        assert!(store.exists(&layout::model_key(g)).unwrap(), "model {g}");
        assert!(
            store.exists(&layout::sidecar_key(g)).unwrap(),
            "sidecar {g}"
        );
    }
    let listed: BTreeSet<String> = store
        .list(layout::SHARDS)
        .unwrap()
        .into_iter()
        .map(|e| e.key)
        .collect();
    assert!(!listed.is_empty());
    for key in &listed {
        let name = ShardName::parse(key).unwrap_or_else(|| panic!("stray object {key}"));
        let shard = decode_shard(&store.get(key).unwrap(), key).unwrap();
        assert_eq!(shard.header.generation, name.generation, "{key}");
        assert!(store.exists(&name.games_key()).unwrap(), "records of {key}");
    }
    let state = TrainerState::read(store).unwrap().unwrap();
    assert_eq!(state.generation, generation);
    let consumed: Vec<&String> = state.consumed.iter().map(|c| &c.key).collect();
    let unique: BTreeSet<&String> = consumed.iter().copied().collect();
    assert_eq!(unique.len(), consumed.len(), "a shard was consumed twice");
    assert!(unique.iter().all(|k| listed.contains(*k)));
    assert!(state.rejected.is_empty(), "{:?}", state.rejected);
    state
}
