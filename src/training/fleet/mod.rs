//! Fleets: many self-play workers and one trainer on different machines, sharing data only
//! through object storage ([`crate::dataio::store`]). The `bao` processes know nothing of the
//! orchestrator: Ray (`scripts/ray_cluster.py`), a Slurm array or a Kubernetes Job start the
//! same command lines, restart them when they die, and the store is the source of truth.
//!
//! - [`layout`]: the run's object names and small pointer files;
//! - [`worker`]: `bao selfplay --model ROOT/models/LATEST --out ROOT`;
//! - [`trainer`]: `bao learn --data ROOT`, with [`lease`] keeping it single;
//! - [`cache`]: a worker's verified local copies of models;
//! - [`status`]: `bao run status ROOT`.

pub mod cache;
pub mod layout;
pub mod lease;
pub mod status;
pub mod trainer;
pub mod worker;

use std::path::{Path, PathBuf};

/// A private scratch directory under the system temp dir: `bao-KIND-PID-RAND`. Scratch
/// directories of processes that are gone (killed workers and trainers) are removed first.
pub fn scratch_dir(kind: &str) -> PathBuf {
    let base = std::env::temp_dir();
    remove_stale_scratch(&base, kind);
    base.join(format!(
        "bao-{kind}-{}-{:08x}",
        std::process::id(),
        rand::random::<u32>()
    ))
}

fn remove_stale_scratch(base: &Path, kind: &str) {
    if !cfg!(target_os = "linux") {
        return; // no cheap way to tell a dead pid
    }
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    let prefix = format!("bao-{kind}-");
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(pid) = name
            .strip_prefix(&prefix)
            .and_then(|r| r.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}
