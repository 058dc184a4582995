//! Files: training-sample shards, game records, model checkpoints.
