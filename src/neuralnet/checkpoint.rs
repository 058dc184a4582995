//! Checkpoint files: `NAME.safetensors` (weights) + `NAME.json` (this metadata sidecar).
//!
//! The sidecar holds everything needed to rebuild the network (architecture, variant, feature
//! encoding version), so any command loads a checkpoint from its path alone, and it can be read
//! without touching the weights ([`CheckpointMeta::read`]). Files are written under a `.tmp`
//! name and renamed; the sidecar is renamed last, so a present sidecar marks a complete
//! checkpoint for anyone watching a directory.
//!
//! A [`super::Learner`] also writes `NAME.optim.safetensors` + `NAME.optim.json` (optimizer
//! moments and counters, see [`super::learner`]) for exact resumption; evaluation never needs
//! them.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use super::config::NetConfig;
use crate::game::features::Encoding;
use crate::game::Variant;

/// Version of the sidecar layout itself (not of the features; see `encoding_version`).
pub const CHECKPOINT_FORMAT: u32 = 1;

/// Where a checkpoint sits in a training run. Given to [`super::Network::save`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lineage {
    /// Optimizer steps taken to produce these weights.
    pub step: u64,
    /// Self-play generation (training iteration) the weights belong to.
    pub generation: u64,
    /// File name (or path) of the checkpoint training started from, if any.
    pub parent: Option<String>,
}

/// The JSON sidecar of a checkpoint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointMeta {
    /// [`CHECKPOINT_FORMAT`] of the writer.
    pub format: u32,
    /// The game the network was trained for.
    pub variant: Variant,
    /// [`Encoding::version`] of the input planes the network reads (1: the board; 2: the
    /// board and the move features; 3: those and the opponent's threats); it must agree with
    /// `config.move_features` and `config.threat_features`.
    pub encoding_version: u32,
    /// The architecture (resolved; never a bare preset name).
    pub config: NetConfig,
    /// Optimizer steps taken to produce these weights (see [`Lineage`]).
    pub step: u64,
    /// Self-play generation the weights belong to.
    pub generation: u64,
    /// The checkpoint training started from, if any.
    pub parent: Option<String>,
    /// Seconds since the Unix epoch when written.
    pub created_unix: u64,
    /// Number of weights (scalars) in the `.safetensors` file, for a quick sanity check.
    pub parameters: u64,
    /// Version of bao-zero that wrote the file.
    pub writer: String,
    /// The `[search]` settings of the run that trained these weights: network players search
    /// with them unless their spec overrides a key (absent in checkpoints written before they
    /// were recorded, and in networks not made by a training run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<crate::search::SearchParams>,
    /// SHA-256 (hex) of the `.safetensors` file written with this sidecar. Both variants'
    /// networks have the same tensor shapes, so without it the weights of one game behind
    /// the sidecar of the other (or of another run) would load and play nonsense; loading
    /// refuses weights whose digest differs. Absent in checkpoints written before it was
    /// recorded, which load unchecked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights_sha256: Option<String>,
}

impl CheckpointMeta {
    /// Step, generation and parent.
    pub fn lineage(&self) -> Lineage {
        Lineage {
            step: self.step,
            generation: self.generation,
            parent: self.parent.clone(),
        }
    }

    /// Reads the sidecar of the checkpoint at `path` (the `.safetensors` or the `.json`).
    /// Refuses sidecars of an unknown format; variant and encoding are checked by
    /// [`Self::check_compatible`].
    pub fn read(path: &Path) -> anyhow::Result<CheckpointMeta> {
        let sidecar = sidecar_path(path)?;
        let text = std::fs::read_to_string(&sidecar).with_context(|| {
            format!(
                "cannot read checkpoint metadata {} (every checkpoint has one)",
                sidecar.display()
            )
        })?;
        let meta: CheckpointMeta = serde_json::from_str(&text)
            .with_context(|| format!("checkpoint metadata {} is malformed", sidecar.display()))?;
        anyhow::ensure!(
            meta.format == CHECKPOINT_FORMAT,
            "checkpoint metadata {} has format {} but this build reads format {}",
            sidecar.display(),
            meta.format,
            CHECKPOINT_FORMAT
        );
        // Checked here, so that a bad value is blamed on the sidecar that holds it rather than
        // on whatever override is applied over it later.
        if let Some(search) = &meta.search {
            search.validate().with_context(|| {
                format!(
                    "checkpoint metadata {} records search settings that cannot be used",
                    sidecar.display()
                )
            })?;
        }
        Ok(meta)
    }

    /// Fails unless this build knows the checkpoint's feature encoding and it is the one
    /// its architecture reads.
    pub fn check_encoding(&self, path: &Path) -> anyhow::Result<()> {
        let known = Encoding::from_version(self.encoding_version);
        anyhow::ensure!(
            known.is_some(),
            "checkpoint {} uses feature encoding version {}, which this build does not know; \
             retrain or use a matching bao-zero version",
            path.display(),
            self.encoding_version
        );
        anyhow::ensure!(
            known == Some(self.config.encoding()),
            "checkpoint {}: feature encoding version {} does not match its architecture \
             (move_features = {}, threat_features = {}, version {})",
            path.display(),
            self.encoding_version,
            self.config.move_features,
            self.config.threat_features,
            self.config.encoding().version()
        );
        Ok(())
    }

    /// Fails unless the checkpoint plays `variant` with this build's feature encoding.
    pub fn check_compatible(&self, path: &Path, variant: Variant) -> anyhow::Result<()> {
        anyhow::ensure!(
            self.variant == variant,
            "checkpoint {} was trained for bao la {} but bao la {} is being played",
            path.display(),
            self.variant,
            variant
        );
        self.check_encoding(path)
    }

    /// Fails unless `weights` (the bytes of the `.safetensors` file at `path`) are the ones
    /// this sidecar was written with (see [`Self::weights_sha256`]).
    /// Without a recorded digest (a checkpoint written before digests were), the weights load
    /// unchecked, with a warning.
    pub fn check_weights(&self, path: &Path, weights: &[u8]) -> anyhow::Result<()> {
        if self.weights_sha256.is_none() {
            tracing::warn!(
                "checkpoint metadata {} records no weights_sha256: its weights {} load \
                 unchecked (a weights file of another checkpoint behind it would go unnoticed; \
                 saving the checkpoint again records the digest)",
                sidecar_path(path)?.display(),
                path.display()
            );
        }
        if let Some(expected) = &self.weights_sha256 {
            let actual = crate::dataio::store::sha256_hex(weights);
            anyhow::ensure!(
                &actual == expected,
                "checkpoint weights {} do not belong to their sidecar {}: its sha256 is {actual} \
                 but the sidecar was written for {expected} (a weights file of another \
                 checkpoint or variant copied over it, or a damaged file); keep each \
                 `.safetensors` with the `.json` written beside it",
                path.display(),
                sidecar_path(path)?.display()
            );
        }
        Ok(())
    }

    pub(crate) fn write(&self, path: &Path) -> anyhow::Result<()> {
        let sidecar = sidecar_path(path)?;
        let text = serde_json::to_string_pretty(self).context("cannot serialise metadata")?;
        crate::dataio::atomic::write_with(&sidecar, |tmp| Ok(std::fs::write(tmp, text + "\n")?))
    }
}

/// Checks that `path` names the weights file (`*.safetensors`).
pub fn weights_path(path: &Path) -> anyhow::Result<PathBuf> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("safetensors") => Ok(path.to_path_buf()),
        Some("json") => Ok(path.with_extension("safetensors")),
        _ => anyhow::bail!(
            "checkpoint path {} must end in `.safetensors` (its sidecar is the `.json` beside it)",
            path.display()
        ),
    }
}

/// The sidecar (`NAME.json`) of the checkpoint `NAME.safetensors` (or `NAME.json` itself).
pub fn sidecar_path(path: &Path) -> anyhow::Result<PathBuf> {
    Ok(weights_path(path)?.with_extension("json"))
}

/// `NAME.optim.safetensors` and `NAME.optim.json` beside the checkpoint `NAME.safetensors`.
pub fn optimizer_paths(path: &Path) -> anyhow::Result<(PathBuf, PathBuf)> {
    let w = weights_path(path)?;
    Ok((
        w.with_extension("optim.safetensors"),
        w.with_extension("optim.json"),
    ))
}

pub(crate) fn now_unix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}
