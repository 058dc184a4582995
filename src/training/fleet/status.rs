//! `bao run status ROOT`: what a fleet run holds, read from the store alone.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use super::layout::{self, Latest, ShardName};
use super::lease::{self, Holder};
use super::trainer::TrainerState;
use crate::dataio::shard::{header_count, HEADER_LEN};
use crate::dataio::store::Store;

/// Shards played by one model generation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GenerationStatus {
    pub model: bool,
    pub shards: u64,
    /// Samples in those shards (all, as their headers say).
    pub samples: u64,
    /// Of those shards, how many the trainer has consumed.
    pub consumed: u64,
    pub workers: BTreeSet<String>,
}

/// A worker as seen through its shards.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkerSeen {
    pub shards: u64,
    pub last_upload_unix: i64,
    pub last_generation: u32,
}

#[derive(Clone, Debug, Default)]
pub struct RunStatus {
    pub url: String,
    pub variant: Option<String>,
    pub latest: Option<Latest>,
    pub trainer: Option<TrainerState>,
    /// Lease holder and its last heartbeat.
    pub holder: Option<(Holder, Option<Holder>)>,
    pub generations: BTreeMap<u32, GenerationStatus>,
    pub workers: BTreeMap<String, WorkerSeen>,
    pub stray_objects: u64,
}

/// Reads the status of the run at `store`.
pub fn run_status(store: &Store) -> anyhow::Result<RunStatus> {
    let mut st = RunStatus {
        url: store.url().to_string(),
        ..Default::default()
    };
    if let Some(b) = store.get_opt(layout::RUN_TOML)? {
        let run = layout::RunFile::parse(
            &String::from_utf8_lossy(&b),
            &store.describe(layout::RUN_TOML),
        )?;
        st.variant = Some(run.config.variant.to_string());
    }
    st.latest = super::worker::read_latest(store)?;
    st.trainer = TrainerState::read(store)?;
    st.holder = lease::current(store)?;
    let consumed: BTreeSet<&str> = st
        .trainer
        .iter()
        .flat_map(|t| t.consumed.iter().map(|c| c.key.as_str()))
        .collect();
    for e in store.list("models")? {
        if let Some(g) = e
            .key
            .strip_prefix("models/gen-")
            .and_then(|r| r.strip_suffix(".safetensors"))
            .and_then(|g| g.parse().ok())
        {
            st.generations.entry(g).or_default().model = true;
        }
    }
    for e in store.list(layout::SHARDS)? {
        let Some(name) = ShardName::parse(&e.key) else {
            st.stray_objects += 1;
            continue;
        };
        let header = store.get_range(&e.key, 0..HEADER_LEN as u64)?;
        // An object under a shard's name that is no shard is stray, not a reason to stop the report.
        let Some(count) = header_count(&header) else {
            st.stray_objects += 1;
            continue;
        };
        let g = st.generations.entry(name.generation).or_default();
        g.shards += 1;
        g.samples += count;
        g.consumed += consumed.contains(e.key.as_str()) as u64;
        g.workers.insert(name.worker.clone());
        let w = st.workers.entry(name.worker).or_default();
        w.shards += 1;
        if e.modified_unix >= w.last_upload_unix {
            w.last_upload_unix = e.modified_unix;
            w.last_generation = name.generation;
        }
    }
    Ok(st)
}

fn ago(unix: i64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    format!("{}s ago", (now - unix).max(0))
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut s = String::new();
        writeln!(
            s,
            "run {} ({})",
            self.url,
            self.variant.as_deref().unwrap_or("no run.toml yet")
        )?;
        match &self.latest {
            Some(l) => writeln!(
                s,
                "LATEST: generation {} sha256 {}{}",
                l.generation,
                &l.sha256[..l.sha256.len().min(16)],
                if l.finished { " (finished)" } else { "" }
            )?,
            None => writeln!(s, "LATEST: none yet")?,
        }
        if let Some(t) = &self.trainer {
            writeln!(
                s,
                "trainer: generation {}, {} steps, {} shards consumed, {} rejected",
                t.generation,
                t.steps,
                t.consumed.len(),
                t.rejected.len()
            )?;
        }
        if let Some((h, beat)) = &self.holder {
            match beat {
                Some(b) => writeln!(
                    s,
                    "lease: `{}` on {} pid {} (epoch {}), heartbeat {}",
                    h.owner,
                    h.host,
                    h.pid,
                    h.epoch,
                    ago(b.unix as i64)
                )?,
                None => writeln!(
                    s,
                    "lease: released (last holder `{}` on {})",
                    h.owner, h.host
                )?,
            }
        }
        writeln!(
            s,
            "{:>10} {:>6} {:>7} {:>9} {:>9} {:>8}",
            "generation", "model", "shards", "samples", "consumed", "workers"
        )?;
        for (g, st) in &self.generations {
            writeln!(
                s,
                "{g:>10} {:>6} {:>7} {:>9} {:>9} {:>8}",
                if st.model { "yes" } else { "-" },
                st.shards,
                st.samples,
                st.consumed,
                st.workers.len()
            )?;
        }
        writeln!(s, "workers seen: {}", self.workers.len())?;
        for (w, seen) in &self.workers {
            writeln!(
                s,
                "  {w}: {} shards, last upload {} (generation {})",
                seen.shards,
                ago(seen.last_upload_unix),
                seen.last_generation
            )?;
        }
        if self.stray_objects > 0 {
            writeln!(
                s,
                "{} objects under shards/ that are not shards (ignored)",
                self.stray_objects
            )?;
        }
        f.write_str(&s)
    }
}
