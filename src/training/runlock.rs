//! One process per run directory: `bao train` holds an OS lock on `RUN/lock` for its whole life.
//!
//! Two trainers on one directory would delete each other's data and interleave generations.
//! An advisory `flock` is the right tool for one machine: the kernel drops it when the holder
//! exits, even by `kill -9`, so a crash never leaves a stale lock behind (the fleet, whose
//! processes share a directory across machines, uses leases instead: `fleet::lease`). The
//! holder writes its pid and host into the file, so a refused second process can name it.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::Path;

use anyhow::Context;

/// The held lock; dropping it (or exiting) releases it.
#[derive(Debug)]
pub struct RunLock {
    _file: File,
}

impl RunLock {
    /// Takes the lock of `dir` (created if missing), or fails naming the process holding it.
    pub fn acquire(dir: &Path) -> anyhow::Result<RunLock> {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let path = dir.join("lock");
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        if !try_lock(&file) {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            let holder = holder.trim();
            anyhow::bail!(
                "run directory {} is in use by another process ({}); wait for it to finish or use another --run directory",
                dir.display(),
                if holder.is_empty() { "holder unknown" } else { holder }
            );
        }
        file.set_len(0)?;
        file.rewind()?;
        writeln!(
            file,
            "pid {} on {}",
            std::process::id(),
            crate::training::fleet::lease::host_name()
        )
        .and_then(|_| file.flush())
        .with_context(|| format!("cannot write {}", path.display()))?;
        Ok(RunLock { _file: file })
    }
}

/// An exclusive, non-blocking advisory lock on `file`.
#[cfg(unix)]
fn try_lock(file: &File) -> bool {
    use std::os::unix::io::AsRawFd;
    // SAFETY: `flock` on a descriptor this process owns for the life of `file`.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

/// Without `flock`, only one process per directory is assumed (no check).
#[cfg(not(unix))]
fn try_lock(_file: &File) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_naming_the_first_and_a_release_frees_it() {
        let dir = tempfile::tempdir().unwrap();
        let first = RunLock::acquire(dir.path()).unwrap();
        // flock locks belong to the open file description: a second open is a second holder.
        let e = format!("{:#}", RunLock::acquire(dir.path()).unwrap_err());
        assert!(e.contains("in use by another process"), "{e}");
        assert!(e.contains(&format!("pid {}", std::process::id())), "{e}");
        drop(first);
        assert!(RunLock::acquire(dir.path()).is_ok());
    }
}
