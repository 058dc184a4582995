//! One trainer per run: a lease taken with create-only writes.
//!
//! Taking the lease creates `trainer/lease-NNNNNN.json` for the next epoch with
//! `PutMode::Create`, which exactly one contender wins on every store (local files, S3, GCS,
//! Azure, memory). The holder then writes `trainer/heartbeat.json` every `ttl / 4`. A new
//! trainer refuses to start (fails fast) while the current epoch's heartbeat is fresh, unless
//! the holder is provably gone: same owner id (an orchestrator restarting the same trainer) or
//! same host with a dead pid. A holder that finds a newer epoch on renewal has been replaced and
//! stops. Publishing a generation is itself create-only, a second guard should two trainers
//! ever overlap.

use std::time::{Duration, Instant};

use anyhow::bail;
use serde::{Deserialize, Serialize};

use crate::dataio::store::{Put, Store};

const HEARTBEAT: &str = "trainer/heartbeat.json";

fn lease_key(epoch: u64) -> String {
    format!("trainer/lease-{epoch:06}.json")
}

/// Who holds (or held) the run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    pub epoch: u64,
    pub owner: String,
    pub host: String,
    pub pid: u32,
    /// Seconds since the Unix epoch (taken, or last heartbeat).
    pub unix: u64,
}

/// A held lease. Call [`Lease::renew`] often (it writes at most every `ttl / 4`).
#[derive(Debug)]
pub struct Lease {
    me: Holder,
    ttl: Duration,
    last_beat: Instant,
}

/// This machine's host name (for telling a dead local holder from a live remote one).
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown-host".into())
}

fn pid_alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        std::path::Path::new(&format!("/proc/{pid}")).exists()
    } else {
        true // cannot tell: assume alive and wait for the lease to expire
    }
}

fn now_unix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The newest epoch's holder and its last heartbeat, if any trainer ever ran.
pub fn current(store: &Store) -> anyhow::Result<Option<(Holder, Option<Holder>)>> {
    let mut epochs: Vec<u64> = store
        .list("trainer")?
        .iter()
        .filter_map(|e| {
            e.key
                .strip_prefix("trainer/lease-")?
                .strip_suffix(".json")?
                .parse()
                .ok()
        })
        .collect();
    epochs.sort();
    let Some(&epoch) = epochs.last() else {
        return Ok(None);
    };
    let holder: Holder = serde_json::from_slice(&store.get(&lease_key(epoch))?)?;
    let beat = match store.get_opt(HEARTBEAT)? {
        Some(b) => serde_json::from_slice::<Holder>(&b)
            .ok()
            .filter(|h| h.epoch == epoch),
        None => None,
    };
    Ok(Some((holder, beat)))
}

impl Lease {
    /// Takes the run for `owner`, or fails saying who holds it.
    pub fn acquire(store: &Store, owner: &str, ttl: Duration) -> anyhow::Result<Lease> {
        let host = host_name();
        let mut epoch = 1;
        if let Some((holder, beat)) = current(store)? {
            epoch = holder.epoch + 1;
            let last = beat.as_ref().map_or(holder.unix, |b| b.unix);
            let age = now_unix().saturating_sub(last);
            let gone = holder.owner == owner || (holder.host == host && !pid_alive(holder.pid));
            if beat.is_some() && age < ttl.as_secs() && !gone {
                bail!(
                    "another trainer holds {} (`{}` on {}, pid {}, heartbeat {age}s ago): only one `bao learn` \
                     may train a run; stop it first, or wait {}s after it died",
                    store.url(),
                    holder.owner,
                    holder.host,
                    holder.pid,
                    ttl.as_secs()
                );
            }
        }
        let me = Holder {
            epoch,
            owner: owner.to_string(),
            host,
            pid: std::process::id(),
            unix: now_unix(),
        };
        if store.put_create(&lease_key(epoch), &serde_json::to_vec_pretty(&me)?)?
            == Put::AlreadyThere
        {
            bail!(
                "another trainer took {} at the same moment (lease epoch {epoch})",
                store.url()
            );
        }
        let mut lease = Lease {
            me,
            ttl,
            last_beat: Instant::now(),
        };
        lease.beat(store)?;
        Ok(lease)
    }

    pub fn holder(&self) -> &Holder {
        &self.me
    }

    fn beat(&mut self, store: &Store) -> anyhow::Result<()> {
        self.me.unix = now_unix();
        store.put(HEARTBEAT, &serde_json::to_vec_pretty(&self.me)?)?;
        self.last_beat = Instant::now();
        Ok(())
    }

    /// Writes a heartbeat when due; fails if another trainer has taken over.
    pub fn renew(&mut self, store: &Store) -> anyhow::Result<()> {
        if self.last_beat.elapsed() < self.ttl / 4 {
            return Ok(());
        }
        self.ensure_held(store)?;
        self.beat(store)
    }

    /// Fails if another trainer has taken over (checked before every commit, so a trainer
    /// that stalled past its lease cannot commit over its successor).
    pub fn ensure_held(&self, store: &Store) -> anyhow::Result<()> {
        if store.exists(&lease_key(self.me.epoch + 1))? {
            bail!(
                "this trainer lost {} to another one (lease epoch {} was taken); stopping",
                store.url(),
                self.me.epoch + 1
            );
        }
        Ok(())
    }

    /// Gives the run up (clean exit): the next trainer may start at once.
    pub fn release(self, store: &Store) -> anyhow::Result<()> {
        store.delete(HEARTBEAT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_trainer_fails_fast_and_a_released_or_same_owner_lease_is_taken() {
        let s = Store::open(&format!("memory://lease-{}", std::process::id())).unwrap();
        let ttl = Duration::from_secs(60);
        let a = Lease::acquire(&s, "a", ttl).unwrap();
        let e = Lease::acquire(&s, "b", ttl).unwrap_err().to_string();
        assert!(
            e.contains("another trainer holds") && e.contains("`a`"),
            "{e}"
        );
        // The same owner (an orchestrator's restart) takes over; the old holder then stops.
        let mut a2 = Lease::acquire(&s, "a", ttl).unwrap();
        assert_eq!(a2.holder().epoch, 2);
        let mut old = a;
        old.last_beat -= ttl;
        let e = old.renew(&s).unwrap_err().to_string();
        assert!(e.contains("lost"), "{e}");
        a2.last_beat -= ttl;
        a2.renew(&s).unwrap();
        a2.release(&s).unwrap();
        let b = Lease::acquire(&s, "b", ttl).unwrap();
        assert_eq!(b.holder().epoch, 3);
    }

    #[test]
    fn a_dead_local_holder_is_replaced_at_once() {
        let s = Store::open(&format!("memory://lease-dead-{}", std::process::id())).unwrap();
        let dead = Holder {
            epoch: 1,
            owner: "x".into(),
            host: host_name(),
            pid: u32::MAX - 1,
            unix: now_unix(),
        };
        s.put(&lease_key(1), &serde_json::to_vec(&dead).unwrap())
            .unwrap();
        s.put(HEARTBEAT, &serde_json::to_vec(&dead).unwrap())
            .unwrap();
        assert_eq!(
            Lease::acquire(&s, "y", Duration::from_secs(60))
                .unwrap()
                .holder()
                .epoch,
            2
        );
    }
}
