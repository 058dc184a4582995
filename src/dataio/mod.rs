//! Files: training-sample shards, game records, model checkpoints.

pub mod atomic;
pub mod records;
pub mod shard;
pub mod store;
