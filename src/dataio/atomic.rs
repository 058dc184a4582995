//! Atomic file replacement: write `PATH.tmp`, flush it to disk, rename it over `PATH`. A
//! reader, or a crash at any point, sees the old file or the new one, never part of either;
//! every file a run commits (shards, checkpoints, state, records) is written this way.

use std::path::{Path, PathBuf};

use anyhow::Context;

/// Runs `write` on `PATH.tmp` (creating `path`'s directory if needed), syncs it, then renames
/// it to `path`.
pub fn write_with(
    path: &Path,
    write: impl FnOnce(&Path) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create directory {}", dir.display()))?;
    }
    write(&tmp).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::File::open(&tmp)
        .and_then(|f| f.sync_all())
        .with_context(|| format!("cannot flush {} to disk", tmp.display()))?;
    std::fs::rename(&tmp, path)
        .with_context(|| format!("cannot rename {} to {}", tmp.display(), path.display()))
}

/// Replaces `path` by `bytes` atomically (see [`write_with`]).
pub fn write_bytes(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    write_with(path, |tmp| Ok(std::fs::write(tmp, bytes)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("f.txt");
        write_bytes(&path, b"one").unwrap();
        write_bytes(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert!(!dir.path().join("sub").join("f.txt.tmp").exists());
        // A failed write leaves the old file in place.
        let e = write_with(&path, |_| anyhow::bail!("disk full")).unwrap_err();
        assert!(format!("{e:#}").contains("disk full"), "{e:#}");
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
    }
}
