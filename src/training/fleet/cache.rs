//! A worker's local copy of models, named by content (`SHA256.safetensors` + `SHA256.json`).
//!
//! Content names make the cache safe to share between runs and between workers on one
//! machine: files are written under a unique temporary name and renamed, and a weights file
//! is only renamed into place after its SHA-256 matched what `LATEST` promised.

use std::path::{Path, PathBuf};

use anyhow::{ensure, Context};

use super::layout::Latest;
use crate::dataio::store::{sha256_hex, Store};

#[derive(Clone, Debug)]
pub struct ModelCache {
    dir: PathBuf,
}

/// The default cache directory: `$BAO_CACHE_DIR`, else `$XDG_CACHE_HOME/bao-zero/models`,
/// else `~/.cache/bao-zero/models`, else a directory under the system temp dir.
pub fn default_cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("BAO_CACHE_DIR") {
        return PathBuf::from(d);
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("bao-zero").join("models")
}

fn write_unique(dir: &Path, name: &str, bytes: &[u8]) -> anyhow::Result<()> {
    let tmp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        rand::random::<u32>()
    ));
    std::fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, dir.join(name))
        .with_context(|| format!("cannot rename {} into place", tmp.display()))
}

impl ModelCache {
    pub fn new(dir: &Path) -> anyhow::Result<ModelCache> {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create model cache {}", dir.display()))?;
        Ok(ModelCache {
            dir: dir.to_path_buf(),
        })
    }

    /// The local checkpoint path of `latest`, downloading and verifying it if needed.
    pub fn fetch(&self, store: &Store, latest: &Latest) -> anyhow::Result<PathBuf> {
        ensure!(
            latest.sha256.len() == 64 && latest.sha256.chars().all(|c| c.is_ascii_hexdigit()),
            "LATEST of {} has an invalid sha256 `{}`",
            store.url(),
            latest.sha256
        );
        let weights = self.dir.join(format!("{}.safetensors", latest.sha256));
        let sidecar = weights.with_extension("json");
        if weights.exists() && sidecar.exists() {
            let bytes = std::fs::read(&weights)
                .with_context(|| format!("cannot read {}", weights.display()))?;
            if sha256_hex(&bytes) == latest.sha256 {
                return Ok(weights);
            }
            tracing::warn!(
                "cached model {} is corrupt; downloading it again",
                weights.display()
            );
        }
        let meta = store.get(&latest.sidecar)?;
        let bytes = store.get(&latest.key)?;
        let got = sha256_hex(&bytes);
        ensure!(
            got == latest.sha256,
            "{} has sha256 {got} but LATEST promises {} (corrupt or replaced object)",
            store.describe(&latest.key),
            latest.sha256
        );
        // Sidecar first: a weights file in place always has its sidecar beside it.
        write_unique(&self.dir, &format!("{}.json", latest.sha256), &meta)?;
        write_unique(&self.dir, &format!("{}.safetensors", latest.sha256), &bytes)?;
        Ok(weights)
    }
}
