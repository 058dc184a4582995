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
